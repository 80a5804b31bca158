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
        ours = best_time(lambda: attention(q, k, v, causal=True), device=device)
        sdpa = best_time(
            lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), device=device
        )
        task = f"causal attention, 8x8 heads, n={n}, d=64"
        rows.append(
            Row(task, "course_utils.attention", ours * 1e3, "ms", f"{ours / sdpa:.1f}x SDPA")
        )
        rows.append(Row(task, "torch SDPA (fused)", sdpa * 1e3, "ms"))
    return rows
