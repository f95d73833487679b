// Dripstone CPU executor: everything is in dripstone_cuda.h (force-included).
#pragma once
