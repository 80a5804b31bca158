"""Linear attention against PyTorch's fused softmax attention as N doubles: batch 1, 4 heads,
head size 32, N = 512 … 8192, float32, without autograd.

Causal: the reference ``linear_attention(causal=True)`` of the tests (chunks of 64) beside
``scaled_dot_product_attention(is_causal=True)``; non-causal: the regrouped form beside
``scaled_dot_product_attention``. Each pair is timed in alternating rounds (one call of
each per round, so load on the machine slows both alike; the best round counts; more
rounds for the short sequences, whose calls take milliseconds).

Peak memory is the largest total of the tensors alive during one call, as recorded by
``torch.profiler`` (every allocation and free of the CPU allocator, inputs excluded, the
output included). For scale: an explicit N × N score matrix for 4 heads would take
16 N² bytes (1 GiB at N = 8192); on CPU the fused kernel never builds it (it works
block by block), so its memory grows linearly too. On a GPU (the same rows, "[cuda]", when
there is one) the peak is what the CUDA allocator held on top of the inputs
(``torch.cuda.max_memory_allocated``).

On CPU every comparison runs with 1 and with 2 torch threads in turn
(``LINEAR_ATTENTION_BENCH_THREADS``, default "1,2"): linear attention is a chain of small
operations, each of which waits for every thread, so when other programs share the 2 cores
the 2-thread runs slow it down far more than the one fused SDPA call.

Targets: causal linear attention at least as fast as SDPA by N = 2048 and ≥ 5× faster
at N = 8192. The crossover N is the smallest N of the grid from which linear attention
is at least as fast at every larger N.
"""

import os

import torch
import torch.nn.functional as F

from course_utils.measure import peak_memory
from tests.benchmarks.timing import Row, best_times, cuda_peak_memory, on_each_device
from tests.support.linear_attention import linear_attention

SIZES = (512, 1024, 2048, 4096, 8192)
HEADS, HEAD_SIZE = 4, 32


def rounds(n: int) -> int:
    """40 rounds at N = 512, fewer as N grows, never under 5."""
    return max(5, 20_480 // n)


def crossover(sizes, ours, theirs) -> int | None:
    """The smallest N from which ours is at least as fast at every larger N, else None."""
    found = None
    for n, ours_s, theirs_s in zip(reversed(sizes), reversed(ours), reversed(theirs), strict=True):
        if ours_s > theirs_s:
            break
        found = n
    return found


def compare(device, causal: bool) -> list[Row]:
    kind = "causal" if causal else "non-causal"
    threads = f", {torch.get_num_threads()} thr" if device.type == "cpu" else ""
    short = "causal" if causal else "full"
    rows, ours, theirs = [], [], []
    for n in SIZES:
        generator = torch.Generator().manual_seed(n)
        q, k, v = (
            torch.randn(1, HEADS, n, HEAD_SIZE, generator=generator).to(device) for _ in range(3)
        )

        @torch.no_grad()
        def linear(q=q, k=k, v=v):
            return linear_attention(q, k, v, causal=causal)

        @torch.no_grad()
        def softmax(q=q, k=k, v=v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

        linear_s, softmax_s = best_times([linear, softmax], device, rounds(n))
        ours.append(linear_s)
        theirs.append(softmax_s)
        task = f"{short}, {HEADS} heads, d={HEAD_SIZE}, N={n}{threads}"
        note = f"{softmax_s / linear_s:.2f}x faster than SDPA"
        peak = {"cpu": peak_memory, "cuda": cuda_peak_memory}.get(device.type)
        if peak is not None:
            peaks = [peak(function) / 2**20 for function in (linear, softmax)]
            note += "; peak {:.1f} MiB vs {:.1f} MiB".format(*peaks)
        rows.append(Row(task, f"linear_attention ({kind})", linear_s * 1e3, "ms", note))
        rows.append(Row(task, "torch SDPA (fused softmax)", softmax_s * 1e3, "ms"))
    speedup = theirs[-1] / ours[-1]
    first = crossover(SIZES, ours, theirs)
    targets = " (targets: N <= 2048, >= 5x at 8192)" if causal else ""
    note = f"crossover N = {first}; {speedup:.1f}x faster at N = {SIZES[-1]}{targets}"
    task = f"{short}: linear vs softmax{threads}"
    rows.append(Row(task, f"speed-up at N={SIZES[-1]}", speedup, "x", note))
    return rows


def rows_on(device: torch.device) -> list[Row]:
    if device.type != "cpu":
        return compare(device, causal=True) + compare(device, causal=False)
    default, rows = torch.get_num_threads(), []
    for threads in os.environ.get("LINEAR_ATTENTION_BENCH_THREADS", "1,2").split(","):
        torch.set_num_threads(int(threads))
        try:
            rows += compare(device, causal=True) + compare(device, causal=False)
        finally:
            torch.set_num_threads(default)
    return rows


def run() -> list[Row]:
    return on_each_device(rows_on)
