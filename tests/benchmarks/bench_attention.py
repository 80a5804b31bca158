"""Causal attention: the step-by-step reference beside PyTorch's fused SDPA kernel."""

import torch
import torch.nn.functional as F

from course_utils.attention import attention
from course_utils.device import get_device
from tests.benchmarks.timing import Row, best_time


def run() -> list[Row]:
    device = get_device()
    rows = []
    for n in (128, 1024):
        q, k, v = (torch.randn(8, 8, n, 64, device=device) for _ in range(3))

        def ours(q=q, k=k, v=v):
            return attention(q, k, v, causal=True)

        def fused(q=q, k=k, v=v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

        ours_s, fused_s = best_time(ours, device=device), best_time(fused, device=device)
        task = f"causal attention, 8x8 heads, n={n}, d=64"
        note = f"{ours_s / fused_s:.1f}x SDPA's time"
        rows.append(Row(task, "course_utils.attention", ours_s * 1e3, "ms", note))
        rows.append(Row(task, "torch SDPA (fused)", fused_s * 1e3, "ms"))
    return rows
