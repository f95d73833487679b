"""L37 · GPUs in containers and Kubernetes: what a node can still take, a driver mismatch, a CDI spec.

Lecture 37 (07_云原生AI平台与生产工程_M6/37_GPU容器化与Kubernetes_Device_Plugin_DRA.md).

Kubernetes sees a GPU only as an integer extended resource, ``nvidia.com/gpu: 8``, that the device
plugin advertises through ListAndWatch. The kubelet turns the healthy devices into the node's
Allocatable; the scheduler subtracts the Requests of the pods bound there. What a node can still
take is Allocatable − Allocated, never Capacity: a GPU that the plugin marked Unhealthy stays in
Capacity and leaves Allocatable.

Inside a container a GPU is a set of character devices: ``/dev/nvidiaN`` (major 195, minor N),
``/dev/nvidiactl`` (195:255), and ``/dev/nvidia-uvm`` / ``/dev/nvidia-uvm-tools`` whose major is
allocated dynamically at module load. The user-space driver (``libcuda.so``, ``libnvidia-ml.so``,
injected from the host) must be the same version as the kernel module; when it is not, the kernel
module refuses it and says so in the kernel log (``NVRM: API mismatch ...``). CDI (Container Device
Interface) makes the device list a declarative JSON/YAML spec instead of a hook's side effects.

Invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

NVIDIA_MAJOR = 195  # Linux Documentation/admin-guide/devices.txt: char major 195 = NVIDIA graphics devices
NVIDIACTL_MINOR = 255  # /dev/nvidiactl, the control device every CUDA/NVML client opens first
NVIDIA_MODESET_MINOR = 254  # /dev/nvidia-modeset: the highest GPU minor is therefore 253
MAX_GPU_MINOR = NVIDIA_MODESET_MINOR - 1
CDI_VERSION = "0.5.0"  # CDI specification version of the spec cdi_spec writes (as nvidia-ctk did)

UUID_RE = re.compile(r"GPU-[0-9A-Fa-f-]{36}")  # nvidia-smi -L: GPU-<8-4-4-4-12 hex>
KIND_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*")  # CDI kind: vendor/class
RESOURCE_RE = re.compile(r"[^\s:]+")  # a resource name as kubectl prints it: no blanks, no colon

# A wrapped kernel message: the line break, then the next line's prefix (timestamp, syslog header,
# the spaces newer dmesg prints instead of a repeated timestamp) up to and including "NVRM:".
_WRAP = r"(?:[ \t]*\r?\n[^\n]*?NVRM:[ \t]*|[ \t]+)"
_VERSION = r"(\d+(?:\.\d+)*)"
_CLIENT = rf"(?:[^\n]*?{_WRAP})??"  # recent drivers: "'nvidia-smi' (pid 80412)" before "has the version"
MISMATCH_RE = re.compile(
    _WRAP.join(["API", "mismatch:", "the", "client", _CLIENT + "has", "the", "version", _VERSION + ",", "but"])
    + _WRAP
    + _WRAP.join(["this", "kernel", "module", "has", "the", "version", _VERSION]),
    re.DOTALL,
)


# ---------------------------------------------------------------------------------------------
# Argument checks (given)
# ---------------------------------------------------------------------------------------------


def _check_text(name: str, text: str) -> str:
    if not isinstance(text, str):
        raise ValueError(f"{name} must be a str (the tool's output), got {type(text).__name__}")
    return text


def _check_resource(resource: str) -> str:
    if not isinstance(resource, str) or not RESOURCE_RE.fullmatch(resource):
        raise ValueError(f"resource must be a resource name such as 'nvidia.com/gpu', got {resource!r}")
    return resource


def _count(text_name: str, section: str, line: str, token: str) -> int:
    """An extended resource's count as kubectl prints it: a plain decimal int, else a clear error."""
    if not token.isdigit():
        raise ValueError(
            f"{text_name}: under {section} the line {line.strip()!r} has {token!r}, expected a whole count "
            "(extended resources such as nvidia.com/gpu are integers)"
        )
    return int(token)


def _check_cdi_args(uuids: Sequence[str], minors: Sequence[int], kind: str) -> tuple[list[str], list[int]]:
    if isinstance(uuids, (str, bytes)) or not isinstance(uuids, Sequence) or len(uuids) == 0:
        raise ValueError(f"uuids must be a non-empty sequence of GPU UUIDs, got {uuids!r}")
    if isinstance(minors, (str, bytes)) or not isinstance(minors, Sequence) or len(minors) != len(uuids):
        raise ValueError(f"minors must be a sequence of {len(uuids)} device minors (one per uuid), got {minors!r}")
    if not isinstance(kind, str) or not KIND_RE.fullmatch(kind):
        raise ValueError(f"kind must be a CDI kind 'vendor/class' such as 'nvidia.com/gpu', got {kind!r}")
    seen_uuid: set[str] = set()
    seen_minor: set[int] = set()
    for i, (u, m) in enumerate(zip(uuids, minors, strict=True)):
        if not isinstance(u, str) or not UUID_RE.fullmatch(u):
            raise ValueError(f"uuids[{i}] must look like 'GPU-' + 36 hex/dash characters, got {u!r}")
        if u in seen_uuid:
            raise ValueError(f"uuids[{i}] = {u!r} appears twice")
        seen_uuid.add(u)
        check_int(f"minors[{i}]", m)
        if m > MAX_GPU_MINOR:
            raise ValueError(
                f"minors[{i}] = {m}: GPU minors are 0..{MAX_GPU_MINOR} "
                f"(195:{NVIDIA_MODESET_MINOR} is nvidia-modeset, 195:{NVIDIACTL_MINOR} nvidiactl)"
            )
        if m in seen_minor:
            raise ValueError(f"minors[{i}] = {m} appears twice: each GPU has its own /dev/nvidia<minor>")
        seen_minor.add(m)
    return list(uuids), list(minors)


# ---------------------------------------------------------------------------------------------
# 1. kubectl describe node
# ---------------------------------------------------------------------------------------------


def parse_describe_node(text: str, resource: str = "nvidia.com/gpu") -> dict[str, int]:
    """What one node can still take of ``resource``, read from ``kubectl describe node <name>``.

    The output is a list of sections: a line that does not start with a blank starts one
    (``Capacity:``, ``Allocatable:``, ``Allocated resources:``, ``Events:`` ...). Read

    * ``capacity``: the ``  <resource>:  N`` row under ``Capacity:``;
    * ``allocatable``: the same row under ``Allocatable:`` (unhealthy devices are left out);
    * ``allocated``: the first number (the Requests column) of the ``  <resource>  N  N`` row under
      ``Allocated resources:``; no such row (no pod on the node asked for it) means 0;
    * ``free = allocatable − allocated`` (negative when devices failed under running pods).

    Lines of other sections (labels such as ``nvidia.com/gpu.count=8``, the pods table, events) and
    rows of other resources are skipped. Counts are exact ints.

    Example: a DGX H100 with one GPU marked Unhealthy and a 4-GPU pod,
    Capacity 8, Allocatable 7, Requests 4 → ``{"capacity": 8, "allocatable": 7, "allocated": 4,
    "free": 3}``.

    Raises ValueError naming ``text``: not a str, no ``resource`` row under Capacity or under
    Allocatable, a section printed twice (two nodes described at once), a count that is not a whole
    number. ValueError naming ``resource``: not a resource name.
    """
    _check_text("text", text)
    _check_resource(resource)
    # TODO: walk the lines, track the section; read the resource's row in three of them.
    raise NotImplementedError("TODO: walk the lines, track the section; read the resource's row in three of them.")


# ---------------------------------------------------------------------------------------------
# 2. dmesg: user-space driver vs kernel module
# ---------------------------------------------------------------------------------------------


def driver_mismatch(dmesg: str) -> tuple[str, str] | None:
    """The (client, kernel module) driver versions of the last ``NVRM: API mismatch`` message, or None.

    The kernel module prints one message over several kernel-log lines, each with its own prefix::

        [  812.001122] NVRM: API mismatch: the client has the version 535.129.03, but
        [  812.001122] NVRM: this kernel module has the version 525.85.12.  Please
        [  812.001122] NVRM: make sure that this kernel module and all NVIDIA driver
        [  812.001122] NVRM: components have the same version.

    Recent drivers name the client first (``the client 'nvidia-smi' (pid 80412)`` then ``has the
    version X, but this kernel module has`` / ``the version Y.``); some tools print the message on
    one line. A line break may fall between any two words; the next line's prefix (timestamp,
    ``host kernel:``, the blanks newer ``dmesg`` prints) and its ``NVRM:`` are skipped. Versions are
    dotted digits (``\\d+(\\.\\d+)*``) without the sentence's final period.

    Example: the four lines above → ``("535.129.03", "525.85.12")``; a log without the message →
    ``None``; several messages → the last one's versions.

    Raises ValueError naming ``dmesg`` when it is not a str.
    """
    _check_text("dmesg", dmesg)
    # TODO: find every match of the wrapped message (MISMATCH_RE) and keep the last one.
    raise NotImplementedError('TODO: find every match of the wrapped message (MISMATCH_RE) and keep the last one.')


# ---------------------------------------------------------------------------------------------
# 3. CDI spec
# ---------------------------------------------------------------------------------------------


def cdi_spec(uuids: Sequence[str], minors: Sequence[int], kind: str = "nvidia.com/gpu") -> dict:
    """A CDI spec (as a dict ready for ``json.dump``) that names each GPU by index, by UUID, and "all".

    Shape (CDI specification 0.5.0; names as ``nvidia-ctk cdi generate`` gives them)::

        {"cdiVersion": "0.5.0", "kind": kind,
         "devices": [{"name": "0", "containerEdits": {"deviceNodes": [<node of GPU 0>]}},
                     {"name": uuids[0], "containerEdits": {"deviceNodes": [<node of GPU 0>]}},
                     ... the same two entries for GPU 1, 2, ...,
                     {"name": "all", "containerEdits": {"deviceNodes": [<every GPU node, in order>]}}],
         "containerEdits": {"deviceNodes": [
             {"path": "/dev/nvidiactl", "type": "c", "major": 195, "minor": 255},
             {"path": "/dev/nvidia-uvm"}, {"path": "/dev/nvidia-uvm-tools"}]}}

    where the node of GPU i is ``{"path": f"/dev/nvidia{minors[i]}", "type": "c", "major": 195,
    "minor": minors[i]}``. The index name is the position i in ``uuids`` (as ``nvidia-smi`` numbers
    the GPUs), the device file the GPU's minor. The shared nodes sit in the spec-wide
    ``containerEdits``, applied whichever device is asked for; the UVM nodes carry no major because
    it is allocated at module load (the runtime reads it from the host).

    Example: ``cdi_spec(["GPU-0f…", "GPU-9a…"], [0, 3])`` → devices "0" (/dev/nvidia0, 195:0),
    "GPU-0f…" (195:0), "1" (/dev/nvidia3, 195:3), "GPU-9a…" (195:3), "all" (both nodes).

    Raises ValueError naming the argument: ``uuids`` empty or not a sequence; ``uuids[i]`` not
    ``GPU-`` + 36 hex/dash characters, or repeated; ``minors`` not a sequence of the same length;
    ``minors[i]`` not an exact int in 0..253 (254 is nvidia-modeset, 255 nvidiactl), or repeated;
    ``kind`` not ``vendor/class``.
    """
    uuids, minors = _check_cdi_args(uuids, minors, kind)

    # TODO: per GPU a node and two devices (index, UUID); then "all"; the shared nodes.
    raise NotImplementedError('TODO: per GPU a node and two devices (index, UUID); then "all"; the shared nodes.')
