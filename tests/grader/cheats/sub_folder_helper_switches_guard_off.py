"""Attack (R3.3, a file the audit never read): softmax_fused only turns its module into a package whose path is the
unit's folder (``__path__``, ``__package__``: no import machinery named) and imports ``helpers/tools.py`` by a plain
relative import; that file, which the old audit never opened (it read the unit folder's top-level
files only), switches the guard off through torch's C module and computes torch.softmax, laundered through a
Triton copy kernel. The audit now reads every file the graded module imports, sub-folders included, and refuses
setting the names the import machinery reads."""

ZERO = ["softmax_fused"]
MESSAGE = "may not use"
UNIT_FILES = {
    "helpers/tools.py": (
        "import torch\n"
        "import triton\n"
        "import triton.language as tl\n"
        "\n"
        "\n"
        "@triton.jit\n"
        "def _launder(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)\n"
        "\n"
        "\n"
        "def fused(x):\n"
        "    with torch._C.DisableTorchFunction():\n"
        "        y = torch.softmax(x.float(), dim=-1).to(x.dtype)\n"
        "    out = torch.empty_like(x)\n"
        "    _launder[(triton.cdiv(x.numel(), 1024),)](y, out, x.numel(), BLOCK=1024)\n"
        "    return out\n"
    ),
}

def softmax_fused(x):
    global __path__, __package__
    __path__ = [__file__.rsplit("/", 1)[0]]
    __package__ = __name__
    from .helpers import tools

    return tools.fused(x)
