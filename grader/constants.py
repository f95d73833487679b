"""Shared hardware and model constants: one place, each with its source, used by every unit.

Exercises, solutions and tests import these (``from grader.constants import GPUS, MODELS``) rather
than re-typing numbers. Peaks are dense (no sparsity). Bytes are bytes, bandwidths bytes/s, FLOPs
FLOP/s: never GB or GiB floats (convert with :func:`gb` / :func:`gib` in messages only).
"""

from __future__ import annotations

from dataclasses import dataclass

GB = 10**9  # the course's "GB" in bandwidths and decimal sizes
GiB = 2**30  # memory capacities; tests check GiB and GB separately (CONVENTIONS.md)
TB = 10**12
TFLOPS = 10**12


def gb(n_bytes: int | float) -> float:
    return n_bytes / GB


def gib(n_bytes: int | float) -> float:
    return n_bytes / GiB


@dataclass(frozen=True)
class GPU:
    """Peak numbers of one accelerator (dense)."""

    name: str
    bf16_flops: float  # FLOP/s, Tensor Core, dense
    fp32_flops: float  # FLOP/s, non-Tensor-Core
    hbm_bytes_per_s: float
    hbm_bytes: int  # capacity
    nvlink_bytes_per_s: float  # bidirectional aggregate per GPU
    sms: int
    source: str
    # per-SM limits for occupancy calculators (CUDA C Programming Guide, compute capability table)
    max_threads_per_sm: int = 2048
    max_blocks_per_sm: int = 32
    registers_per_sm: int = 65536
    smem_per_sm: int = 0
    # allocation rules of the CUDA Occupancy Calculator for compute capability 8.x-10.x: registers
    # go to a warp in units of 256, shared memory to a block in units of 128 B plus 1 KB the
    # runtime reserves per block (CUDA C Programming Guide, "Shared Memory" of cc 8.x/9.x)
    reg_alloc_unit: int = 256
    smem_alloc_unit: int = 128
    smem_reserved_per_block: int = 1024
    max_threads_per_block: int = 1024
    max_regs_per_thread: int = 255


GPUS: dict[str, GPU] = {
    "A100-80G": GPU(
        "A100-80G", bf16_flops=312 * TFLOPS, fp32_flops=19.5 * TFLOPS, hbm_bytes_per_s=2.039 * TB,
        hbm_bytes=80 * GiB, nvlink_bytes_per_s=600 * GB, sms=108, smem_per_sm=164 * 1024,
        source="NVIDIA A100 datasheet (SXM4 80GB); the course also uses 2.0 TB/s (erratum #23, CONVENTIONS.md)",
    ),
    "H100-SXM": GPU(
        "H100-SXM", bf16_flops=989 * TFLOPS, fp32_flops=67 * TFLOPS, hbm_bytes_per_s=3.35 * TB,
        hbm_bytes=80 * GiB, nvlink_bytes_per_s=900 * GB, sms=132, smem_per_sm=228 * 1024,
        source="NVIDIA H100 datasheet (SXM5)",
    ),
    "H200": GPU(
        "H200", bf16_flops=989 * TFLOPS, fp32_flops=67 * TFLOPS, hbm_bytes_per_s=4.8 * TB,
        hbm_bytes=141 * GB, nvlink_bytes_per_s=900 * GB, sms=132, smem_per_sm=228 * 1024,
        source="NVIDIA H200 datasheet (SXM): H100 compute, 141 GB HBM3e at 4.8 TB/s",
    ),
    "B200": GPU(
        "B200", bf16_flops=2250 * TFLOPS, fp32_flops=80 * TFLOPS, hbm_bytes_per_s=8 * TB,
        hbm_bytes=192 * GB, nvlink_bytes_per_s=1800 * GB, sms=148, smem_per_sm=228 * 1024,
        source="course GPU table (L21) and NVIDIA DGX B200 datasheet; dense BF16",
    ),
}


@dataclass(frozen=True)
class Model:
    """A decoder-only transformer's shape (LLaMA family: SwiGLU FFN, RMSNorm, RoPE, untied by default)."""

    name: str
    n_layers: int
    hidden: int
    n_heads: int
    n_kv_heads: int
    ffn_hidden: int
    vocab: int
    n_params: int  # exact, as released (checked by l08's llama_params)
    tied_embeddings: bool = False
    source: str = ""

    @property
    def head_dim(self) -> int:
        return self.hidden // self.n_heads


MODELS: dict[str, Model] = {
    "llama-2-7b": Model("LLaMA-2-7B", 32, 4096, 32, 32, 11008, 32000, 6_738_415_616,
                        source="Llama 2 paper / HF config"),
    "llama-3-8b": Model("LLaMA-3-8B", 32, 4096, 32, 8, 14336, 128256, 8_030_261_248,
                        source="Meta Llama 3 HF config"),
    "llama-3-70b": Model("LLaMA-3-70B", 80, 8192, 64, 8, 28672, 128256, 70_553_706_496,
                         source="Meta Llama 3 HF config"),
}


# ---- Network links (per direction), for the communication ledgers (L09, L13, L18) --------------
NIC_400G_BYTES_PER_S = 400 * 10**9 / 8  # 400 Gb/s NIC (InfiniBand NDR, RoCE): 50 GB/s raw; L09
NIC_400G_EFFECTIVE_BYTES_PER_S = 45 * GB  # the course's effective rate after protocol overhead; L09, L13
