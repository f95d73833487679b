"""System-design questions the course poses (L44's three, its appendix, and the design questions of other lectures).

Each rubric names concrete points: the numbers that must appear (checked within their tolerance, in any accepted
unit), the terms that must be named (groups of synonyms), and the rest for the candidate to score after reading
the rubric. Numbers are the course's own worked results, recomputed with the units' graded functions where one
exists (the tests of those units pin them).
"""

from __future__ import annotations

from grader.drill.bank._kit import LECTURE
from grader.drill.template import Design, Point
from grader.i18n import N_

L44 = LECTURE[44]


def kw(*groups: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple(groups)


PYSPY = ("py-spy", "pyspy", "stack dump", "stack trace", "call stack")
RESTART = ("checkpoint", "resume", "restart")
CORDON = ("cordon", "taint", "drain", "isolate", "quarantine", "evict")

DESIGNS = [
    Design(
        id="l44.nccl_watchdog_triage",
        unit="l44_interview",
        topic="operations",
        lecture=L44,
        minutes=10,
        prompt=N_(
            "A 1024-GPU pre-training job hangs at a random step: `NCCL WARN Watchdog caught "
            "collective operation timeout: work timeout 1800000ms`. No OOM, every GPU shows 100 % "
            "utilization, the loss stopped. Dozens of engineers are waiting. Give your triage "
            "tree, from software to hardware, and how you find the slow GPU, link or switch."
        ),
        points=(
            Point(N_("dump every rank's Python stack (py-spy dump) first"), keywords=kw(PYSPY)),
            Point(
                N_(
                    "same collective at the same call site everywhere → straggler or network; different "
                    "call sites → control-flow divergence (e.g. rank 0 evaluating)"
                ),
                keywords=kw(
                    ("same collective", "same call site", "same line", "same all_reduce", "all ranks in"),
                    ("diverge", "divergence", "different code", "different call site", "different line"),
                ),
            ),
            Point(
                N_("NCCL_DEBUG=INFO (COLL subsystem) to see which rank entered last or sends nothing"),
                keywords=kw(
                    ("NCCL_DEBUG",),
                ),
            ),
            Point(
                N_("robust statistics for the straggler: median and MAD of per-rank step time, not mean and std"),
                keywords=kw(
                    ("MAD", "median absolute", "robust z", "modified z"),
                ),
            ),
            Point(
                N_(
                    "GPU health: clocks/thermal/power throttling, Xid in dmesg, NVLink errors (nvidia-smi "
                    "-q, nvidia-smi nvlink -e, DCGM)"
                ),
                keywords=kw(
                    ("Xid", "dmesg", "nvidia-smi", "DCGM", "dcgmi"),
                ),
            ),
            Point(
                N_(
                    "network: NIC counters (ethtool -S drops/errors/pause), optics power, PFC storms or "
                    "deadlock on the RoCE switches"
                ),
                keywords=kw(
                    ("PFC", "pause", "ethtool", "RoCE", "ECN", "congestion"),
                ),
            ),
            Point(N_("host: D-state processes, checkpoint writes saturating NVMe / page cache")),
            Point(
                N_(
                    "remediation: cordon or taint the node, replace it from a spare pool, resume from the "
                    "last checkpoint"
                ),
                keywords=kw(CORDON, RESTART),
            ),
            Point(
                N_(
                    "fail fast next time: a shorter watchdog timeout, and the NCCL flight recorder "
                    "(TORCH_NCCL_TRACE_BUFFER_SIZE) to see which collective each rank last entered"
                ),
                keywords=kw(
                    ("flight recorder", "TORCH_NCCL_TRACE_BUFFER_SIZE", "TRACE_BUFFER"),
                ),
            ),
        ),
    ),
    Design(
        id="l44.platform_rfc_10k",
        unit="l44_interview",
        topic="platform",
        lecture=L44,
        minutes=20,
        prompt=N_(
            "Design a unified AI platform for 10,000 GPUs (H100/H800 and domestic NPUs) serving "
            "three workloads: thousand-GPU pre-training and SFT (weeks-long, MFU > 40 %), "
            "long-context LLM serving at tens of thousands of concurrent users (P99 TTFT < 500 "
            "ms), and RAG retrieval plus multi-tenant agent code sandboxes. Give the network "
            "topology, storage tiers, scheduling and the HA/SLA design."
        ),
        points=(
            Point(
                N_("split the fleet by workload (e.g. ~8000 GPUs training, ~2000 serving) rather than one shared pool"),
                numbers=(8000.0, 2000.0),
                rtol=0.3,
            ),
            Point(
                N_(
                    "separate compute fabric (8 × 400 Gb/s RDMA per 8-GPU node, rail-optimized, lossless "
                    "RoCE or IB) from the storage/management network"
                ),
                keywords=kw(
                    ("rail", "dual-rail", "dual rail", "separate network", "storage network"),
                    ("RoCE", "InfiniBand", "RDMA", "IB"),
                ),
            ),
            Point(
                N_("gang scheduling and topology-aware placement for training (Kueue / Volcano)"),
                keywords=kw(("gang", "all-or-nothing", "all or nothing"), ("topology",)),
            ),
            Point(
                N_("serving autoscaling on queue depth / KV usage, prefix caching, PD disaggregation"),
                keywords=kw(("autoscal", "KEDA", "HPA"), ("prefix", "radix", "KV")),
            ),
            Point(
                N_(
                    "storage tiers: HBM → local NVMe (checkpoint staging) → parallel FS (datasets, "
                    "weights) → object store (archive)"
                ),
                keywords=kw(
                    ("NVMe",), ("object", "S3"), ("parallel file", "3FS", "Lustre", "GPFS", "distributed file")
                ),
            ),
            Point(
                N_("sandbox isolation for agents: gVisor or Firecracker micro-VMs, egress policy"),
                keywords=kw(
                    ("gVisor", "Firecracker", "microVM", "micro-VM", "Kata"),
                ),
            ),
            Point(
                N_(
                    "failure handling: health DaemonSet on Xid / NIC errors, automatic cordon and hot "
                    "spares, MTTR of minutes; asynchronous checkpoints"
                ),
                keywords=kw(CORDON, ("async", "asynchronous")),
            ),
            Point(N_("multi-tenancy: quotas with borrowing and preemption; GPU sharing (MIG / HAMi) for small jobs")),
            Point(N_("SLOs and cost: error budgets, utilization targets, a capacity plan per workload")),
        ),
    ),
    Design(
        id="l44.oom_after_hundreds_of_steps",
        unit="l44_interview",
        topic="memory",
        lecture=L44,
        minutes=8,
        prompt=N_(
            "A fine-tuning job runs step 1 fine, then dies with CUDA OOM after a few hundred "
            "steps. Name the hidden memory killers and how you would prove which one it is."
        ),
        points=(
            Point(
                N_(
                    "a long batch arrives late: variable sequence lengths (activation memory grows with "
                    "length; sort or cap, test the worst batch first)"
                ),
                keywords=kw(
                    ("sequence length", "long sequence", "length", "padding"),
                ),
            ),
            Point(
                N_("allocator fragmentation: reserved ≫ allocated; expandable_segments, empty_cache is not a fix"),
                keywords=kw(("fragment",), ("reserved", "expandable_segments", "memory_summary", "caching allocator")),
            ),
            Point(
                N_("graph retention: appending a loss tensor (not .item()/.detach()) to a list keeps every graph"),
                keywords=kw(
                    ("detach", ".item()", "item()", "graph"),
                ),
            ),
            Point(
                N_("optimizer states allocated lazily at the first step (Adam's m and v)"),
                keywords=kw(
                    ("lazy", "first step", "optimizer state", "exp_avg"),
                ),
            ),
            Point(
                N_("evidence: torch.cuda.memory_snapshot / memory_summary over steps, max_memory_allocated per step"),
                keywords=kw(
                    ("memory_snapshot", "memory_summary", "max_memory_allocated", "snapshot"),
                ),
            ),
        ),
    ),
    Design(
        id="l44.p99_serving",
        unit="l44_interview",
        topic="serving",
        lecture=L44,
        minutes=8,
        prompt=N_(
            "Why is P99 latency of LLM serving ten times harder to control than the average, and "
            "which engineering levers keep it inside the SLO?"
        ),
        points=(
            Point(
                N_("output lengths vary widely: long requests hold batch slots and KV blocks (head-of-line blocking)"),
                keywords=kw(
                    ("head-of-line", "head of line", "long request", "output length"),
                ),
            ),
            Point(
                N_("KV cache exhaustion → preemption, swap or recompute; PCIe saturation"),
                keywords=kw(
                    ("preempt", "swap", "recompute"),
                ),
            ),
            Point(
                N_("chunked prefill with continuous batching so prefills do not stall decodes"),
                keywords=kw(("chunked prefill", "chunked-prefill"), ("continuous batching", "iteration-level")),
            ),
            Point(
                N_("prefix (radix) caching skips shared prompt prefill"),
                keywords=kw(
                    ("prefix", "radix"),
                ),
            ),
            Point(
                N_("admission control and backpressure: priorities, 429s, max tokens"),
                keywords=kw(
                    ("429", "backpressure", "admission", "load shed", "rate limit"),
                ),
            ),
            Point(N_("measure percentiles correctly (nearest rank, per SLO window) and alert on burn rate")),
        ),
    ),
    Design(
        id="l44.fat_tree_vs_rail",
        unit="l44_interview",
        topic="communication",
        lecture=L44,
        minutes=8,
        prompt=N_(
            "Draw the network of a 10,000-GPU cluster. Compare a non-blocking fat tree with a "
            "rail-optimized design: structure, cost, and which traffic each serves well."
        ),
        points=(
            Point(
                N_("fat tree: leaf–spine(–core), 1:1 non-blocking, any-to-any bandwidth, costly optics and switches"),
                keywords=kw(("fat tree", "fat-tree", "Clos"), ("non-blocking", "1:1")),
            ),
            Point(
                N_(
                    "rail-optimized: GPU i of every node on rail (leaf) i, so DP/PP traffic between "
                    "same-index GPUs stays on one leaf"
                ),
                keywords=kw(("rail",), ("same index", "same GPU index", "same rank", "GPU 0", "local rank")),
            ),
            Point(
                N_("TP stays inside the node on NVLink; only DP/PP/EP cross the fabric"),
                keywords=kw(
                    ("NVLink", "NVSwitch"),
                ),
            ),
            Point(
                N_("all-to-all (MoE) crosses rails: goes through the spine; PXN (NVLink hop then same rail)"),
                keywords=kw(
                    ("all-to-all", "alltoall", "MoE", "PXN"),
                ),
            ),
            Point(N_("ECMP hash collisions; adaptive routing / packet spraying")),
        ),
    ),
    Design(
        id="l44.ring_allreduce_proof",
        unit="l44_interview",
        topic="communication",
        lecture=L44,
        minutes=6,
        prompt=N_(
            "On the whiteboard: derive the time of a ring all-reduce of S bytes over N GPUs and "
            "explain why the bandwidth term barely depends on N. What does grow with N?"
        ),
        points=(
            Point(
                N_("reduce-scatter then all-gather, N−1 steps each, S/N per step"),
                keywords=kw(("reduce-scatter", "reduce scatter"), ("all-gather", "allgather", "all gather")),
            ),
            Point(
                N_("each GPU sends 2(N−1)/N · S bytes → time 2(N−1)/N · S/B, → 2S/B as N grows"),
                keywords=kw(
                    ("2(N-1)/N", "2(N−1)/N", "2 (N-1)/N", "2*(N-1)/N", "2(n-1)/n"),
                ),
            ),
            Point(
                N_(
                    "the latency term 2(N−1)·α grows linearly: small messages and huge N favour trees / "
                    "hierarchical all-reduce"
                ),
                keywords=kw(("latency", "alpha", "α"), ("tree", "hierarch")),
            ),
            Point(N_("bandwidth-optimal among all-reduce algorithms (Patarasuk & Yuan)")),
        ),
    ),
    Design(
        id="l44.pipeline_bubble_405b",
        unit="l30_model_parallel",
        topic="parallelism",
        lecture=L44,
        minutes=6,
        prompt=N_(
            "For the 405B plan with PP = 8 and 64 micro-batches per step (1F1B), estimate the "
            "pipeline bubble and say how you would reduce it."
        ),
        points=(
            Point(
                N_("bubble share of wall time (p−1)/(m+p−1) = 7/71 ≈ 9.9 %"),
                numbers=(7 / 71,),
                unit_of_answer="ratio",
                accept=("%",),
                rtol=0.03,
            ),
            Point(
                N_("more micro-batches (bigger global batch or smaller micro-batch) shrink it"),
                keywords=kw(
                    ("micro-batch", "microbatch", "micro batch"),
                ),
            ),
            Point(
                N_("interleaved (virtual) stages divide it by v, at the cost of more PP communication"),
                keywords=kw(
                    ("interleav", "virtual"),
                ),
            ),
            Point(N_("zero-bubble / ZB-H1 schedules split the backward into input and weight gradients")),
        ),
    ),
    Design(
        id="l44.straggler_watchdog_10k",
        unit="l20_fault_diagnosis",
        topic="operations",
        lecture=LECTURE[20],
        minutes=10,
        prompt=N_(
            "Design a watchdog that detects and isolates a slow node (straggler) within seconds "
            "in a 10,000-GPU cluster without false alarms."
        ),
        points=(
            Point(
                N_(
                    "per-rank step or collective timings and DCGM telemetry (SM clock, power, "
                    "temperature, NVLink/NIC counters)"
                ),
                keywords=kw(
                    ("DCGM", "dcgmi", "telemetry", "SM clock", "SMCLK"),
                ),
            ),
            Point(
                N_("robust outlier test: median and MAD (modified z > 3.5), one-sided (slow only)"),
                keywords=kw(
                    ("MAD", "median absolute", "modified z", "robust"),
                ),
            ),
            Point(
                N_("the inversion: the culprit computes longest and waits least; the victims wait"),
                keywords=kw(
                    ("wait",),
                ),
            ),
            Point(N_("confirm over several windows before acting (hysteresis) to avoid flapping")),
            Point(
                N_("action: cordon/taint, drain, swap in a hot spare, restart from checkpoint"),
                keywords=kw(CORDON, ("spare", "replace")),
            ),
        ),
    ),
    Design(
        id="l44.budget_100m",
        unit="l44_interview",
        topic="platform",
        lecture=L44,
        minutes=8,
        prompt=N_(
            "You own a 100 M (RMB) yearly budget for an AI cluster. How do you split capital "
            "between GPUs, network and storage, and how do you justify the split?"
        ),
        points=(
            Point(
                N_("GPUs dominate (roughly two thirds or more), but a starved network wastes them: MFU is the metric"),
                keywords=kw(
                    ("MFU", "utilization"),
                ),
            ),
            Point(
                N_("network sized for the workload: rail-optimized RDMA for training, cheaper Ethernet for serving"),
                keywords=kw(
                    ("RDMA", "InfiniBand", "RoCE", "rail"),
                ),
            ),
            Point(
                N_("storage for checkpoints and data: bandwidth per GPU, NVMe staging, object store for cold data"),
                keywords=kw(("checkpoint",), ("NVMe", "parallel file", "object")),
            ),
            Point(N_("opex: power and cooling, spares, people; buy vs rent for peaks")),
            Point(N_("a capacity model: workloads × GPU-hours × MFU → GPU count, then the ratios")),
        ),
    ),
    Design(
        id="l44.moe_expert_placement",
        unit="l31_pipeline_moe",
        topic="parallelism",
        lecture=LECTURE[31],
        minutes=8,
        prompt=N_(
            "Training a DeepSeek-V3-like MoE (hidden 7168, top-8 routing) with expert parallelism "
            "across nodes: how much all-to-all traffic does a token cause per MoE layer, and how "
            "do you place experts on a heterogeneous network?"
        ),
        points=(
            Point(
                N_(
                    "per token per MoE layer: dispatch + combine, forward + backward: 8 · K · h · 2 B = "
                    "917,504 B at K = 8, h = 7168, bf16"
                ),
                numbers=(917_504.0,),
                unit_of_answer="B",
                accept=("KB", "KiB", "MB", "B"),
                rtol=0.02,
            ),
            Point(
                N_("traffic grows linearly with top-k and hidden size"),
                keywords=kw(
                    ("top-k", "topk", "top k"),
                ),
            ),
            Point(
                N_("keep experts inside a node (NVLink) where possible, node-limited routing, hierarchical all-to-all"),
                keywords=kw(
                    ("node-limited", "intra-node", "within a node", "NVLink", "hierarch"),
                ),
            ),
            Point(
                N_("load balance: auxiliary loss or bias-based balancing, capacity factor and dropped tokens"),
                keywords=kw(
                    ("capacity", "load balanc", "aux"),
                ),
            ),
            Point(N_("overlap all-to-all with computation (dual micro-batch)")),
        ),
    ),
    Design(
        id="l36.capacity_plan_72b",
        unit="l36_capacity_planning",
        topic="serving",
        lecture=LECTURE[36],
        minutes=10,
        prompt=N_(
            "Size the GPU fleet for a Qwen2.5-72B chat service on 8×H800 nodes: 40 QPS, 400 "
            "generated tokens per request, TTFT 0.6 s, TPOT 30 ms, one node sustains 1600 "
            "tokens/s; keep 25 % burst headroom and 15 % redundancy. Show both the throughput and "
            "the memory side."
        ),
        points=(
            Point(
                N_("request lifetime TTFT + S_gen·TPOT = 12.6 s"),
                numbers=(12.6,),
                unit_of_answer="s",
                accept=("s",),
                rtol=0.02,
            ),
            Point(N_("Little's law: 40 × 12.6 = 504 requests in flight"), numbers=(504.0,), rtol=0.02),
            Point(
                N_("throughput: 16,000 tokens/s / 1600 = 10 nodes, × 1.25 × 1.15 = 14.375 → 15 nodes"),
                numbers=(15.0,),
                rtol=0.01,
            ),
            Point(N_("120 GPUs"), numbers=(120.0,), rtol=0.01),
            Point(
                N_(
                    "memory side: KV per token per GPU at TP8 (40,960 B), the KV pool, B_max per node vs 504 concurrent"
                ),
                keywords=kw(
                    ("B_max", "KV", "pool"),
                ),
            ),
            Point(N_("the larger requirement wins; re-check the SLO under burst")),
        ),
    ),
    Design(
        id="l39.slo_alerting",
        unit="l39_slo_queueing",
        topic="operations",
        lecture=LECTURE[39],
        minutes=8,
        prompt=N_(
            "Design alerting for a 99.9 % availability SLO of an LLM API so that a fast outage "
            "pages within minutes and a slow leak opens a ticket, with few false pages."
        ),
        points=(
            Point(
                N_("error budget 0.1 % over 30 days; burn rate = error ratio / budget"),
                keywords=kw(("burn rate", "burn-rate"), ("error budget", "budget")),
            ),
            Point(
                N_("page at burn 14.4 over 1 h (2 % of the budget), confirmed by a 5 min window"),
                numbers=(14.4,),
                rtol=0.01,
            ),
            Point(N_("page (or ticket) at burn 6 over 6 h (5 % of the budget)"), numbers=(6.0,), rtol=0.01),
            Point(
                N_("multi-window: both the long and the short window must exceed the threshold"),
                keywords=kw(
                    ("multi-window", "multiwindow", "two windows", "short window", "long window"),
                ),
            ),
            Point(N_("SLIs measured at the gateway: success, TTFT and TPOT percentiles")),
        ),
    ),
    Design(
        id="l40.checkpoint_strategy_70b",
        unit="l40_checkpointing",
        topic="operations",
        lecture=LECTURE[40],
        minutes=10,
        prompt=N_(
            "A 70B model trains on 64 GPUs. Design its checkpointing: what is saved, how often, "
            "how the stall is kept under a second, and how a crash mid-save is survived."
        ),
        points=(
            Point(
                N_(
                    "the training state at 16 B/param (bf16 weights and gradients, fp32 master weights, "
                    "Adam m and v) = 1.12 TB"
                ),
                numbers=(1.12e12,),
                unit_of_answer="B",
                accept=("TB", "GB", "TiB"),
                rtol=0.03,
            ),
            Point(
                N_(
                    "async: stage each rank's shard to pinned host memory (≈ 17.5 GB at ~50 GB/s ≈ 0.35 "
                    "s), write in the background"
                ),
                keywords=kw(
                    ("async", "asynchronous", "pinned", "background"),
                ),
            ),
            Point(
                N_("interval from Young/Daly: √(2·C·MTBF)"),
                keywords=kw(
                    ("Young", "Daly", "√(2", "sqrt(2"),
                ),
            ),
            Point(
                N_("sharded (distributed) checkpoint, resharding on load"),
                keywords=kw(
                    ("shard", "DCP", "distributed checkpoint"),
                ),
            ),
            Point(
                N_(
                    "atomic and durable: write to a temporary name, fsync, rename, fsync the directory; keep the last k"
                ),
                keywords=kw(
                    ("fsync", "atomic", "rename"),
                ),
            ),
        ),
    ),
    Design(
        id="l32.decode_memory_bound",
        unit="l32_prefill_decode",
        topic="serving",
        lecture=LECTURE[32],
        minutes=6,
        prompt=N_(
            "Explain why LLM decode is memory-bound and prefill compute-bound on an H100, with "
            "numbers, and what batching does to decode."
        ),
        points=(
            Point(
                N_("decode at batch 1: ~2 FLOPs per weight byte pair → intensity ≈ 1 FLOP/B vs ridge 295 FLOP/B"),
                numbers=(295.2,),
                rtol=0.01,
            ),
            Point(
                N_("bf16 8B model: 16 GB of weights / 3.35 TB/s ≈ 4.8 ms per token floor"),
                numbers=(4.8e-3,),
                unit_of_answer="s",
                accept=("ms", "s"),
                rtol=0.03,
            ),
            Point(
                N_("prefill of S tokens reuses each weight S times: intensity ≈ S, compute-bound"),
                keywords=kw(
                    ("compute-bound", "compute bound"),
                ),
            ),
            Point(
                N_("batching B sequences raises decode intensity ≈ B until the KV cache reads dominate"),
                keywords=kw(("batch",), ("KV",)),
            ),
        ),
    ),
    Design(
        id="l33.kv_cache_manager",
        unit="l33_paged_kv",
        topic="serving",
        lecture=LECTURE[33],
        minutes=10,
        prompt=N_(
            "Design the KV-cache manager of an inference engine: allocation, sharing between "
            "requests, what happens when memory runs out, and how the scheduler uses it."
        ),
        points=(
            Point(
                N_("paged blocks (e.g. 16 tokens) with a per-sequence block table, like virtual memory pages"),
                keywords=kw(
                    ("block table", "page table", "paged", "PagedAttention"),
                ),
            ),
            Point(
                N_("waste only in the last block; pre-allocation to max length wastes most of the memory"),
                keywords=kw(
                    ("fragment", "waste"),
                ),
            ),
            Point(
                N_("sharing: reference counts and copy-on-write for forks (parallel sampling, beam) and prefixes"),
                keywords=kw(("copy-on-write", "copy on write", "CoW"), ("ref", "reference count")),
            ),
            Point(
                N_("out of blocks: preempt by swapping to CPU or recomputing"),
                keywords=kw(("preempt",), ("swap", "recompute")),
            ),
            Point(
                N_("continuous batching with a token budget: decodes first, then prefill chunks"),
                keywords=kw(
                    ("continuous batching", "iteration-level", "token budget"),
                ),
            ),
        ),
    ),
    Design(
        id="l29.zero_or_fsdp_70b",
        unit="l29_zero_fsdp",
        topic="memory",
        lecture=LECTURE[29],
        minutes=8,
        prompt=N_(
            "Fine-tune a 70B model with full parameters on 64 × 80 GB GPUs. Which ZeRO stage or "
            "FSDP setting, what memory per GPU, and what does it cost in communication?"
        ),
        points=(
            Point(
                N_("ZeRO-3 / FSDP FULL_SHARD: 16 B × 70e9 / 64 = 17.5 GB static per GPU"),
                numbers=(17.5e9,),
                unit_of_answer="B",
                accept=("GB", "GiB"),
                rtol=0.03,
            ),
            Point(
                N_("ZeRO-1 would keep 2 + 2 B/param replicated = 280 GB: does not fit"),
                keywords=kw(
                    ("ZeRO-3", "ZeRO 3", "FULL_SHARD", "full shard", "FSDP"),
                ),
            ),
            Point(
                N_("communication 3Ψ instead of 2Ψ per step (an extra all-gather of weights in the backward)"),
                keywords=kw(
                    ("all-gather", "allgather", "all gather"),
                ),
            ),
            Point(
                N_("wrap per decoder layer, prefetch the next unit; activation checkpointing for long sequences"),
                keywords=kw(
                    ("wrap", "auto_wrap", "per layer", "per-layer"),
                ),
            ),
            Point(N_("HSDP (shard inside a node, replicate across) when the network is the bottleneck")),
        ),
    ),
    Design(
        id="l25.why_flash_attention",
        unit="l25_flash_attention",
        topic="kernels",
        lecture=LECTURE[25],
        minutes=8,
        prompt=N_(
            "Explain to an interviewer why FlashAttention is faster than standard attention "
            "although it does more FLOPs in the backward, with the HBM traffic of both for N = "
            "4096, d = 128, fp16."
        ),
        points=(
            Point(
                N_("standard attention writes and reads S and P: 8N² + 8Nd bytes = 138,412,032 B"),
                numbers=(138_412_032.0,),
                unit_of_answer="B",
                accept=("MB", "MiB", "B"),
                rtol=0.03,
            ),
            Point(
                N_("tiling with online softmax: S and P never leave SRAM"),
                keywords=kw(("online softmax", "running max"), ("tile", "tiling", "SRAM", "shared memory")),
            ),
            Point(
                N_("IO-aware: attention is memory-bound; fewer HBM bytes beats fewer FLOPs"),
                keywords=kw(
                    ("memory-bound", "memory bound", "IO-aware", "HBM"),
                ),
            ),
            Point(
                N_("backward recomputes S and P from Q, K and the saved logsumexp instead of storing N² values"),
                keywords=kw(("recompute",), ("logsumexp", "lse", "statistics")),
            ),
        ),
    ),
    Design(
        id="l24.gemm_optimization",
        unit="l24_gemm",
        topic="kernels",
        lecture=LECTURE[24],
        minutes=10,
        prompt=N_(
            "Walk from a naive CUDA GEMM to one near cuBLAS speed: each optimization, what it "
            "fixes, and the arithmetic intensity of a 128 × 128 fp16 tile."
        ),
        points=(
            Point(
                N_("tile intensity 2·BM·BN / ((BM + BN)·2 B) = 64 FLOP/B for 128 × 128 fp16"),
                numbers=(64.0,),
                rtol=0.01,
            ),
            Point(
                N_("shared-memory tiling for reuse; coalesced global loads"),
                keywords=kw(
                    ("shared memory", "smem", "tiling", "tile"),
                ),
            ),
            Point(
                N_("register tiling / thread coarsening; Tensor Cores (mma / wgmma)"),
                keywords=kw(
                    ("Tensor Core", "tensor core", "mma", "wgmma"),
                ),
            ),
            Point(
                N_("double buffering / software pipelining (cp.async, TMA) to hide load latency"),
                keywords=kw(
                    ("double buffer", "pipelin", "cp.async", "TMA"),
                ),
            ),
            Point(
                N_("bank-conflict-free layouts (padding or swizzle); L2-friendly tile order (grouped / swizzled)"),
                keywords=kw(
                    ("bank conflict", "swizzl", "padding"),
                ),
            ),
        ),
    ),
    Design(
        id="l38.multi_tenant_gpu_sharing",
        unit="l38_scheduling",
        topic="platform",
        lecture=LECTURE[38],
        minutes=10,
        prompt=N_(
            "Several teams share one GPU cluster: big training jobs, notebooks and small "
            "inference services. Design the scheduling and isolation: quotas, fairness, gang "
            "jobs, GPU sharing."
        ),
        points=(
            Point(
                N_("gang scheduling so partial jobs never hold GPUs (deadlock)"),
                keywords=kw(
                    ("gang", "all-or-nothing", "all or nothing"),
                ),
            ),
            Point(
                N_("queues with quotas, cohorts that borrow idle quota and reclaim it by preemption (Kueue)"),
                keywords=kw(("quota",), ("borrow", "reclaim", "cohort")),
            ),
            Point(
                N_("GPU sharing for small workloads: MIG (hardware isolation), MPS, time-slicing, HAMi memory limits"),
                keywords=kw(
                    ("MIG", "MPS", "time-slic", "HAMi", "vGPU"),
                ),
            ),
            Point(
                N_("topology-aware placement (same node / NVLink island for TP)"),
                keywords=kw(
                    ("topology",),
                ),
            ),
            Point(N_("priorities and preemption with checkpointing so preempted jobs lose little")),
        ),
    ),
    Design(
        id="l41.rlhf_resources_70b",
        unit="l41_post_training",
        topic="memory",
        lecture=LECTURE[41],
        minutes=10,
        prompt=N_(
            "Plan PPO-based RLHF for a 70B policy: which models are resident, how much static "
            "memory they take, and how you would lay them out on a cluster."
        ),
        points=(
            Point(
                N_("four models: actor and critic trained (16 B/param each), reward and reference frozen (2 B/param)"),
                keywords=kw(("actor",), ("critic",), ("reward",), ("reference",)),
            ),
            Point(
                N_("static memory 2.52 TB for 70B"),
                numbers=(2.52e12,),
                unit_of_answer="B",
                accept=("TB", "GB", "TiB"),
                rtol=0.03,
            ),
            Point(
                N_("rollout (generation) dominates time: a serving engine (vLLM / SGLang) for the actor's samples"),
                keywords=kw(
                    ("vLLM", "SGLang", "rollout", "generation"),
                ),
            ),
            Point(
                N_("GRPO drops the critic (group-relative advantages); DPO needs no rollout"),
                keywords=kw(
                    ("GRPO",),
                ),
            ),
            Point(N_("colocate vs separate placement, weight sync from trainer to rollout engine")),
        ),
    ),
    Design(
        id="l14.cluster_fabric_1024",
        unit="l14_topology",
        topic="communication",
        lecture=LECTURE[14],
        minutes=8,
        prompt=N_(
            "Map a TP8 · PP8 · DP16 job onto 128 nodes of 8 H100 (NVSwitch inside, 8 × 400 Gb/s "
            "NICs per node). Which groups cross which links, and how many ordered flows does an "
            "all-to-all over 16 nodes send across rails?"
        ),
        points=(
            Point(
                N_("TP groups inside a node (NVLink 900 GB/s); PP and DP across nodes over the NICs"),
                keywords=kw(("NVLink", "NVSwitch"), ("TP",)),
            ),
            Point(
                N_("400 Gb/s = 50 GB/s per NIC (≈ 45 GB/s effective): ~20× slower than NVLink"),
                numbers=(50e9,),
                unit_of_answer="B/s",
                accept=("GB/s", "Gb/s"),
                rtol=0.1,
            ),
            Point(
                N_("rank order TP fastest so TP neighbours share a node"),
                keywords=kw(
                    ("rank", "order"),
                ),
            ),
            Point(
                N_("all-to-all over 16 nodes of 8: 16·15·8·7 = 13,440 cross-rail flows"),
                numbers=(13_440.0,),
                rtol=0.001,
            ),
        ),
    ),
    Design(
        id="l18.nccl_busbw_debug",
        unit="l18_nccl",
        topic="communication",
        lecture=LECTURE[18],
        minutes=6,
        prompt=N_(
            "nccl-tests all_reduce_perf on 8 H100s reports 380 GB/s algbw for 512 MiB. Is that "
            "good? Explain algbw vs busbw and what you compare busbw with."
        ),
        points=(
            Point(
                N_("busbw = algbw × 2(N−1)/N = 380 × 1.75 = 665 GB/s"),
                numbers=(665e9,),
                unit_of_answer="B/s",
                accept=("GB/s",),
                rtol=0.02,
            ),
            Point(
                N_(
                    "busbw is comparable with the per-GPU link peak (NVLink4 450 GB/s per direction, NVLS "
                    "can exceed it)"
                ),
                keywords=kw(
                    ("NVLink", "NVLS", "peak"),
                ),
            ),
            Point(
                N_("algbw depends on N; busbw removes the collective's factor"),
                keywords=kw(
                    ("factor",),
                ),
            ),
            Point(N_("check message-size sweep: small sizes are latency-bound (LL/LL128 protocols)")),
        ),
    ),
]
