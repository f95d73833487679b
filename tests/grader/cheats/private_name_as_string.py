"""Attack (refused names reached indirectly): the private names live in string constants and reach
the attribute through `hasattr`/`getattr` handed to `map` as values (no `getattr(obj, name)` call)."""

ZERO = ["softmax_online"]
MESSAGE = "may not use"


def softmax_online(x, block_n=128):
    names = ("_C", "DisableTorchFunction")
    c = next(map(getattr, [torch], names[:1]))
    off = next(map(getattr, [c], names[1:]))
    with off():
        return torch.softmax(x.float(), dim=-1).to(x.dtype)
