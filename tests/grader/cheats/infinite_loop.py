"""Attack: an endless busy loop inside softmax_online."""

ZERO = ["softmax_online"]


def softmax_online(x, block_n=128):
    n = 0
    while True:
        n += 1
