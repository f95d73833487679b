"""Attack (refused names reached indirectly): ``operator.attrgetter`` spells the way to torch's C module as data
(no ``torch._C`` attribute in the source, no getattr), whose DisableTorchFunction switches the guard off; then
torch.softmax."""

import operator

ZERO = ["softmax_fused"]
MESSAGE = "attribute access by computed name"

def softmax_fused(x):
    reach = operator.attrgetter(".".join(["_C", "DisableTorchFunction"]))
    with reach(torch)():
        return torch.softmax(x.float(), dim=-1).to(x.dtype)
