"""L28 (+ L19) · DDP's gradient buckets: assignment, the backward/communication timeline, a bucketed reducer.

Lecture 28 (05_大模型分布式训练/28_DDP分布式数据并行与通信计算重叠.md) §2.2–2.3 and §3.3, lecture 19
(02_GPU硬件与集群互联/19_Compute_Communication_Overlap_Stream_Bucket_Chunk_WarpSpec.md) §2.3–2.4.

The backward produces gradients from the last layer to the first, so DDP fills its buckets in REVERSE
registration order: the bucket holding the last layers is complete first and its all-reduce runs while
the earlier layers are still being differentiated. Buckets hold whole tensors (never a split one); a
bucket closes as soon as it reaches its cap, and DDP's first bucket has a smaller cap (1 MiB by default)
so that communication starts early. The cap trades latency (many small all-reduces, 2(P−1)·α each)
against overlap (one big all-reduce that can only start when the backward ends).

One ring all-reduce of b bytes on P ranks: 2(P−1)·α + 2(P−1)/P · b / β seconds.

Conventions: exact int bytes; times in seconds (floats); invalid arguments raise ValueError naming the
argument. The reducer uses the default process group (gloo on a laptop, NCCL on GPUs).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import torch
import torch.distributed as dist

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

MiB = 1024 * 1024


def _check_sizes(param_bytes: Sequence[int]) -> list[int]:
    if isinstance(param_bytes, str) or not isinstance(param_bytes, Sequence):
        raise ValueError(f"param_bytes must be a sequence of ints (bytes per parameter), got {param_bytes!r}")
    return [check_int(f"param_bytes[{i}]", b) for i, b in enumerate(param_bytes)]


def _check_caps(cap_bytes: int, first_cap_bytes: int | None) -> tuple[int, int]:
    cap = check_int("cap_bytes", cap_bytes, 1)
    first = cap if first_cap_bytes is None else check_int("first_cap_bytes", first_cap_bytes, 1)
    return cap, first


# ---------------------------------------------------------------------------------------------
# 1. Bucket assignment
# ---------------------------------------------------------------------------------------------


def assign_buckets(param_bytes: Sequence[int], cap_bytes: int, first_cap_bytes: int | None = None) -> list[list[int]]:
    """DDP's buckets: lists of parameter indices, in the order their gradients become ready.

    Walk i = n−1 … 0, append i to the open bucket, close it as soon as its bytes reach its cap (the
    first bucket's cap is ``first_cap_bytes``, default ``cap_bytes``); keep a trailing non-full bucket.
    Whole tensors only. Sizes 1, 5, 1, 8, 1, 6 MiB with cap 10 MiB → [[5, 4, 3], [2, 1, 0]].
    """
    # TODO: validate; walk the parameters from the last to the first, close a bucket once it reaches its cap.
    raise NotImplementedError('TODO: validate; walk the parameters from the last to the first, close a bucket once it reaches its cap.')


# ---------------------------------------------------------------------------------------------
# 2. The backward/communication timeline
# ---------------------------------------------------------------------------------------------


def allreduce_seconds(n_bytes: int, world_size: int, alpha_s: float, bytes_per_s: float) -> float:
    """One ring all-reduce: 2(P−1)·α + 2(P−1)/P · bytes / β (0 for one rank)."""
    if world_size == 1:
        return 0.0
    return 2 * (world_size - 1) * alpha_s + 2 * (world_size - 1) / world_size * n_bytes / bytes_per_s


def _check_timeline(grad_ready_s: Sequence[float], n: int, alpha_s: float, bytes_per_s: float) -> list[float]:
    if isinstance(grad_ready_s, str) or not isinstance(grad_ready_s, Sequence) or len(grad_ready_s) != n:
        raise ValueError(f"grad_ready_s must hold one time per parameter ({n}), got {grad_ready_s!r}")
    times = []
    for i, t in enumerate(grad_ready_s):
        if isinstance(t, bool) or not isinstance(t, int | float) or not t >= 0:
            raise ValueError(f"grad_ready_s[{i}] must be a time >= 0 in seconds, got {t!r}")
        times.append(float(t))
    if isinstance(alpha_s, bool) or not isinstance(alpha_s, int | float) or not alpha_s >= 0:
        raise ValueError(f"alpha_s must be a latency >= 0 in seconds, got {alpha_s!r}")
    if isinstance(bytes_per_s, bool) or not isinstance(bytes_per_s, int | float) or not bytes_per_s > 0:
        raise ValueError(f"bytes_per_s must be a bandwidth > 0 in B/s, got {bytes_per_s!r}")
    return times


def ddp_backward_timeline(
    grad_ready_s: Sequence[float],
    param_bytes: Sequence[int],
    cap_bytes: int,
    world_size: int,
    alpha_s: float,
    bytes_per_s: float,
    first_cap_bytes: int | None = None,
) -> dict[str, object]:
    """When each bucket's all-reduce runs during the backward, and how much of it the backward cannot hide.

    Bucket b is ready when its last gradient is (the max of its parameters' ``grad_ready_s``); the
    all-reduces run one at a time in bucket order: start_b = max(ready_b, end_{b−1}), each lasting
    2(P−1)·α + 2(P−1)/P · bytes_b / β. Returns {"buckets", "bucket_bytes", "ready_s", "start_s", "end_s",
    "backward_s" (the last gradient), "exposed_s" = max(0, end_last − backward_s), "step_s"}.
    Four one-parameter buckets ready at 10/20/30/40 ms, 12 ms each: ends 22, 34, 46, 58 ms, exposed 18 ms.
    """
    # TODO: the buckets, each one's ready time, then a single stream: start after ready and after the previous end.
    raise NotImplementedError("TODO: the buckets, each one's ready time, then a single stream: start after ready and after the previous end.")


# ---------------------------------------------------------------------------------------------
# 3. A bucketed reducer on gradient hooks (per rank, default process group)
# ---------------------------------------------------------------------------------------------


class BucketedReducer:
    """Average gradients over the ranks bucket by bucket, each all-reduce launched during the backward.

    ``buckets`` = assign_buckets of the trainable parameters' byte sizes (indices into ``params``).
    Usage per step: ``loss.backward(); reducer.finish()``; micro-batches under ``with reducer.no_sync():``
    accumulate locally and the next backward outside it all-reduces the accumulated gradients.
    """

    def __init__(
        self, params: Sequence[torch.nn.Parameter], cap_bytes: int, first_cap_bytes: int | None = None
    ) -> None:
        # TODO: the buckets (trainable parameters only, indices into params); a post-accumulate-grad hook on each
        #  trainable parameter that marks it ready and launches every complete bucket, in bucket order, async.
        raise NotImplementedError('TODO: the buckets (trainable parameters only, indices into params); a post-accumulate-grad hook on each trainable parameter that marks it ready and launches every complete bucket, in bucket order, async.')

    def finish(self) -> None:
        """Wait for the all-reduces, write the averages into ``.grad``; RuntimeError naming unused parameters."""
        # TODO: nothing to do under no_sync; otherwise reset the step's state, name the parameters whose gradient
        #  never arrived, else wait for each bucket, divide by the world size and copy the slices back into .grad.
        raise NotImplementedError("TODO: nothing to do under no_sync; otherwise reset the step's state, name the parameters whose gradient never arrived, else wait for each bucket, divide by the world size and copy the slices back into .grad.")

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside: the hooks do nothing, gradients accumulate locally in ``.grad``."""
        # TODO: switch the hooks off for the block, back on after it (even if it raises).
        raise NotImplementedError('TODO: switch the hooks off for the block, back on after it (even if it raises).')
