"""System-design answers against a rubric: the grader checks numbers and keywords; the candidate scores the rest."""

from __future__ import annotations

import re
import unicodedata

from grader.drill import quantities
from grader.drill.template import Point

_NUMBER_WITH_UNIT = re.compile(
    r"(?<![A-Za-z0-9_.])(\$?[-+]?(?:\d[\d,_]*(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?(?:\s*[x×*]\s*10\s*\^\s*[-+]?\d+)?)"
    r"(?:\s*([A-Za-zµμ%$][\w/%$]*))?")


def numbers_in(text: str, dimension: str) -> list[float]:
    """Every number in ``text`` read with the unit after it (base units), plus the bare numbers as typed."""
    found: list[float] = []
    text = unicodedata.normalize("NFKC", text)  # full-width digits and letters (a Chinese input method's)
    for m in _NUMBER_WITH_UNIT.finditer(text):
        number, unit = m.group(1).rstrip(","), m.group(2)
        q = quantities.parse(f"{number} {unit}", dimension) if unit else None
        if q is not None and q.dimension in (dimension, None):
            found.append(q.value)
        bare = quantities.parse(number, dimension)
        if bare is not None:
            found.append(bare.value)
    return found


# the course's Chinese words for the rubric's keywords (GLOSSARY.md): an answer written in Chinese names the same
# point; technical names (NCCL_DEBUG, Xid, ZeRO-3, vLLM) are typed as they are in either language
ZH_SYNONYMS: dict[str, tuple[str, ...]] = {
    "stack dump": ("调用栈", "堆栈"), "call stack": ("调用栈",),
    "same call site": ("同一调用位置", "同一个调用位置", "相同调用位置", "同一位置", "同一行", "同一个集合通信"),
    "divergence": ("分叉", "不同调用位置", "不同的调用位置", "不同位置", "不同的代码", "控制流不一致"),
    "median absolute": ("中位数绝对偏差",), "modified z": ("修正 z", "修正z"), "robust z": ("稳健 z",),
    "robust": ("稳健", "鲁棒"), "congestion": ("拥塞",),
    "isolate": ("隔离",), "evict": ("驱逐",), "drain": ("排空",),
    "checkpoint": ("检查点",), "resume": ("恢复", "续训"), "restart": ("重启",),
    "flight recorder": ("飞行记录",),
    "separate network": ("独立网络", "网络分离", "分离的网络"), "storage network": ("存储网络",), "rail": ("轨道",),
    "all or nothing": ("全有或全无", "成组调度"), "topology": ("拓扑",), "autoscal": ("自动扩缩", "扩缩容"),
    "prefix": ("前缀",), "object": ("对象存储",), "parallel file": ("并行文件系统",),
    "distributed file": ("分布式文件系统",), "async": ("异步",), "asynchronous": ("异步",),
    "length": ("长度",), "long sequence": ("长序列",), "padding": ("填充",), "fragment": ("碎片",),
    "graph": ("计算图",), "first step": ("第一步",), "lazy": ("延迟分配", "惰性"), "optimizer state": ("优化器状态",),
    "snapshot": ("快照",), "head of line": ("队头阻塞",), "long request": ("长请求",), "output length": ("输出长度",),
    "preempt": ("抢占",), "swap": ("换出", "交换"), "recompute": ("重计算", "重算"),
    "chunked prefill": ("分块预填充",), "continuous batching": ("连续批处理",), "iteration-level": ("迭代级",),
    "backpressure": ("背压",), "admission": ("准入",), "rate limit": ("限流",), "load shed": ("降级", "丢弃负载"),
    "fat tree": ("胖树",), "same index": ("同序号", "相同序号", "同一序号"), "latency": ("延迟",),
    "reduce-scatter": ("规约散射", "归约散射"), "all-gather": ("全收集",), "tree": ("树",), "hierarch": ("分层",),
    "micro-batch": ("微批",), "interleav": ("交错",), "virtual": ("虚拟",), "telemetry": ("遥测",),
    "SM clock": ("SM 时钟",), "wait": ("等待",), "spare": ("备用", "热备"), "replace": ("替换",),
    "utilization": ("利用率",), "capacity": ("容量",), "load balanc": ("负载均衡",), "within a node": ("节点内",),
    "pool": ("池",), "burn rate": ("消耗速率", "燃烧率"), "budget": ("预算",),
    "two windows": ("多窗口", "双窗口", "两个窗口"), "short window": ("短窗口",), "long window": ("长窗口",),
    "pinned": ("锁页",), "background": ("后台",), "shard": ("分片",), "distributed checkpoint": ("分布式检查点",),
    "atomic": ("原子",), "rename": ("重命名",), "compute-bound": ("计算受限", "计算密集"), "batch": ("批",),
    "block table": ("块表",), "page table": ("页表",), "paged": ("分页",), "waste": ("浪费",),
    "copy on write": ("写时复制",), "reference count": ("引用计数",), "token budget": ("token 预算",),
    "full shard": ("全分片", "完全分片"), "per layer": ("按层", "每层"), "online softmax": ("在线 softmax",),
    "running max": ("运行最大值", "最大值"), "tile": ("分块",), "shared memory": ("共享内存",),
    "memory-bound": ("访存受限", "带宽受限"), "statistics": ("统计量",), "double buffer": ("双缓冲",),
    "pipelin": ("流水",), "bank conflict": ("bank 冲突",), "quota": ("配额",), "borrow": ("借用",),
    "reclaim": ("收回", "回收"), "generation": ("生成",), "order": ("顺序",), "peak": ("峰值",),
    "factor": ("系数", "因子"), "reward": ("奖励模型",), "reference": ("参考模型",),
}


def _synonyms(group: tuple[str, ...]) -> tuple[str, ...]:
    return group + tuple(z for k in group for z in ZH_SYNONYMS.get(k, ()))


def check(point: Point, text: str) -> bool | None:
    """Whether the answer covers a checkable point (in English or Chinese); None for a self-scored one."""
    if not point.checkable:
        return None
    low = text.lower()
    keywords_ok = all(any(k.lower() in low for k in _synonyms(group)) for group in point.keywords)
    return keywords_ok and all(_has_number(point, v, text) for v in point.numbers)


def _has_number(point: Point, value: float, text: str) -> bool:
    dim = quantities.CANONICAL[point.unit_of_answer]
    want = value * quantities.factor(point.unit_of_answer)
    scales = [1.0] + [quantities.factor(u) for u in point.accept]  # a bare "30" next to "GB" elsewhere counts
    return any(quantities.close(q * s, want, point.rtol) for q in numbers_in(text, dim) for s in scales)
