"""Shared pieces of the bank modules: lecture links, model shapes and GPU peaks to draw from, a short constructor.

Not a bank module itself (it declares no TEMPLATES): the unit files import it. Answers still come from the
graded solution functions; only the parameters and the derivation text live here.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from grader.constants import GPUS, MODELS
from grader.drill.template import Params, Step, Template, lecture

_PATHS = {
    2: "01_性能工程与系统前置/02_AI_Infra数学基础.md",
    3: "01_性能工程与系统前置/03_计算机体系结构前置_CPU存储层次_CacheLine与NUMA架构.md",
    4: "01_性能工程与系统前置/04_Linux系统基线与性能分析核心工具箱.md",
    5: "01_性能工程与系统前置/05_PyTorch底层系统机制_Tensor内存布局_Stride与Contiguous.md",
    6: "01_性能工程与系统前置/06_PyTorch计算图与Autograd显存生命周期.md",
    8: "01_性能工程与系统前置/08_Transformer系统全景与算子执行图深度拆解.md",
    9: "01_性能工程与系统前置/09_网络通信基础与集合通信Collective原语直觉.md",
    10: "01_性能工程与系统前置/10_AI_Infra性能工程方法论与三账本_FLOPs_显存_通信.md",
    11: "01_性能工程与系统前置/11_PyTorch_Profiler实战_手把手带你做一次性能体检.md",
    12: "02_GPU硬件与集群互联/12_GPU执行与存储体系_SM_Warp_TensorCore_HBM_Roofline.md",
    13: "02_GPU硬件与集群互联/13_通信第一性原理与性能模型_AlphaBeta_Latency_Bandwidth.md",
    14: "02_GPU硬件与集群互联/14_GPU节点与集群硬件拓扑_PCIe_NVLink_NVSwitch_Clos_Rail.md",
    18: "02_GPU硬件与集群互联/18_NCCL通信库与Collective算子_Ring_Tree_NVLS_NVSHMEM.md",
    19: "02_GPU硬件与集群互联/19_Compute_Communication_Overlap_Stream_Bucket_Chunk_WarpSpec.md",
    20: "02_GPU硬件与集群互联/20_Benchmark_监控与AI集群故障诊断_Xid_SlowNode_NCCL_Hang.md",
    22: "03_CUDA与算子性能优化/22_CUDA编程模型与内存层次_Thread_Block_Coalescing.md",
    23: "03_CUDA与算子性能优化/23_经典算子优化_Reduce与Softmax_OnlineSoftmax_Fused.md",
    24: "03_CUDA与算子性能优化/24_矩阵乘法核心_GEMM优化与TensorCore思维.md",
    25: "03_CUDA与算子性能优化/25_注意力算子深度优化_TiledAttention_FlashAttention_Triton.md",
    26: "04_大模型架构与显存建模/26_Decoder_only架构深度拆解_MHA_MQA_GQA_RoPE_SwiGLU.md",
    27: "04_大模型架构与显存建模/27_训练与推理显存账本_FLOPs推导与KV_Cache容量规划.md",
    28: "05_大模型分布式训练/28_DDP分布式数据并行与通信计算重叠.md",
    29: "05_大模型分布式训练/29_显存分片技术_ZeRO_1_2_3与PyTorch_FSDP深度剖析.md",
    30: "05_大模型分布式训练/30_模型并行技术_TP_PP_SP_CP与硬件拓扑映射.md",
    31: "05_大模型分布式训练/31_3D混合并行_MoE专家并行与大规模训练故障排查.md",
    32: "06_LLM推理系统与性能工程/32_LLM推理两阶段_Prefill_Decode与核心SLO指标.md",
    33: "06_LLM推理系统与性能工程/33_KV_Cache管理演进_PagedAttention与ContinuousBatching.md",
    34: "06_LLM推理系统与性能工程/34_vLLM系统架构剖析与高阶加速技术.md",
    35: "06_LLM推理系统与性能工程/35_分布式推理与PD分离架构_Prefill_Decode_Disaggregation.md",
    36: "06_LLM推理系统与性能工程/36_在线推理容量规划_SLO治理与生产故障诊断.md",
    38: "07_云原生AI平台与生产工程/38_AI任务调度与多租户隔离_Gang_Kueue_HAMi_GPUSharing.md",
    39: "07_云原生AI平台与生产工程/39_生产级AI_Serving高可用_可观测与SLO治理.md",
    40: "07_云原生AI平台与生产工程/40_大模型分布式存储_Checkpoint与缓存体系架构.md",
    41: "08_Post-Training与相邻Infra/41_SFT_LoRA与RLHF系统负载与资源评估.md",
    44: "08_Post-Training与相邻Infra/44_AI_Infra大厂全真面试演练与系统设计题库.md",
    101: "09_Capstone综合实战项目/01_Capstone_分布式训练Scaling_Study实战.md",
    102: "09_Capstone综合实战项目/02_Capstone_生产级LLM_Serving吞吐与延迟优化实战.md",
}
LECTURE = {n: lecture(p) for n, p in _PATHS.items()}

# decoder shapes to draw from: (name, layers, hidden, heads, kv heads, ffn, vocab); the first three are
# grader.constants.MODELS, the others public configs (HF config.json)
SHAPES = [(m.name, m.n_layers, m.hidden, m.n_heads, m.n_kv_heads, m.ffn_hidden, m.vocab) for m in MODELS.values()] + [
    ("LLaMA-2-13B", 40, 5120, 40, 40, 13824, 32000),
    ("Mistral-7B", 32, 4096, 32, 8, 14336, 32000),
    ("Qwen2.5-72B", 80, 8192, 64, 8, 29568, 152064),
    ("LLaMA-3.1-405B", 126, 16384, 128, 8, 53248, 128256),
]
PEAKS = {
    name: (g.bf16_flops, g.hbm_bytes_per_s) for name, g in GPUS.items() if name in ("A100-80G", "H100-SXM", "H200")
}
BILLIONS = [1, 3, 7, 8, 13, 34, 70, 175, 405]
GB, GiB, MiB = 10**9, 2**30, 2**20

__all__ = ["BILLIONS", "GB", "GiB", "LECTURE", "MiB", "PEAKS", "SHAPES", "Params", "Step", "T", "shape", "gpu"]


def shape(rng: random.Random, p: Params | None = None) -> Params:
    """A model shape, as display and ints: name, layers, hidden, heads, kv, ffn, vocab, head_dim."""
    name, layers, hidden, heads, kv, ffn, vocab = rng.choice(SHAPES)
    out = {
        "model": name,
        "layers": layers,
        "hidden": hidden,
        "heads": heads,
        "kv": kv,
        "ffn": ffn,
        "vocab": vocab,
        "head_dim": hidden // heads,
    }
    return {**(p or {}), **out}


def gpu(rng: random.Random, p: Params | None = None) -> Params:
    """A GPU: its name, dense bf16 peak (FLOP/s, and TFLOP/s for display), HBM bandwidth (B/s, and TB/s)."""
    name = rng.choice(sorted(PEAKS))
    peak, bw = PEAKS[name]
    return {**(p or {}), "gpu": name, "peak": peak, "peak_t": peak / 1e12, "bw": bw, "bw_t": bw / 1e12}


def T(
    id: str,
    solution: tuple[str, str, str],
    topic: str,
    difficulty: int,
    lec: int,
    prompt: str | Callable,
    params: Callable[[random.Random], Params],
    answer: Callable[[Params, Callable[..., Any]], Any],
    steps: Callable[[Params], list[Step]],
    unit: str = "1",
    accept: tuple[str, ...] = (),
    rtol: float = 0.01,
    source: str = "",
    kind: str = "numeric",
    options: Callable[[Params], list[str]] | None = None,
) -> Template:
    """A Template of unit ``solution[0]`` with the lecture ``lec``'s link (the bank's short form)."""
    return Template(
        id=id,
        unit=solution[0],
        topic=topic,
        difficulty=difficulty,
        lecture=LECTURE[lec],
        prompt=prompt,
        params=params,
        solution=solution,
        answer=answer,
        derivation=steps,
        kind=kind,
        unit_of_answer=unit,
        accept=accept,
        rtol=rtol,
        options=options,
        source=source,
    )
