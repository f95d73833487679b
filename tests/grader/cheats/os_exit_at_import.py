"""Attack: os._exit(0) when the module is imported: no exception, no cleanup, the process is gone."""

import os

ZERO = ["online_softmax_state", "merge_online_states", "softmax_hbm_bytes", "softmax_fused", "softmax_online"]

os._exit(0)
