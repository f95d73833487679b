"""Another correct is_contiguous: compare each dim of size > 1 with the product of the sizes to its right."""

MODULE = "layout"
ACCEPTED = ["is_contiguous"]


def is_contiguous(shape, strides):
    sizes, steps = _check_layout(shape, strides)
    if math.prod(sizes) == 0:
        return True
    return all(steps[d] == math.prod(sizes[d + 1:]) for d in range(len(sizes)) if sizes[d] != 1)
