"""Attention: the matrix of weights (``attention_weights``: SDPA with the identity as
values) beside PyTorch's fused SDPA kernel's outputs, and ``MultiHeadAttention`` beside
``nn.MultiheadAttention`` (forward and backward), on the CPU and on the GPU when there is one."""

import torch
import torch.nn.functional as F

from course_utils.models.attention import MultiHeadAttention, attention_weights
from tests.benchmarks.timing import Row, best_time, on_each_device


def causal_rows(device: torch.device) -> list[Row]:
    rows = []
    for n in (128, 1024):
        q, k, v = (torch.randn(8, 8, n, 64, device=device) for _ in range(3))

        def ours(q=q, k=k, v=v):
            return attention_weights(q, k, causal=True)

        def fused(q=q, k=k, v=v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

        ours_s, fused_s = best_time(ours, device=device), best_time(fused, device=device)
        task = f"causal attention, 8x8 heads, n={n}, d=64 (ours: the weights)"
        note = f"{ours_s / fused_s:.1f}x SDPA's time"
        rows.append(Row(task, "course_utils.models.attention", ours_s * 1e3, "ms", note))
        rows.append(Row(task, "torch SDPA (fused)", fused_s * 1e3, "ms"))
    return rows


def multi_head_rows(device: torch.device, batch=4, n=1024, embed_dim=512, heads=8) -> list[Row]:
    """Self-attention forward + backward (need_weights=False), same weights, timed in
    alternation so both see the same machine load."""
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(embed_dim, heads, batch_first=True).to(device)
    ours = MultiHeadAttention(embed_dim, heads).to(device)
    ours.load_state_dict(theirs.state_dict())
    x = torch.randn(batch, n, embed_dim, device=device, requires_grad=True)

    def ours_step():
        ours(x)[0].sum().backward()

    def theirs_step():
        theirs(x, x, x, need_weights=False)[0].sum().backward()

    ours_s, theirs_s = float("inf"), float("inf")
    for _ in range(3):
        ours_s = min(ours_s, best_time(ours_step, repeat=3, device=device))
        theirs_s = min(theirs_s, best_time(theirs_step, repeat=3, device=device))
    task = f"MHA fwd+bwd, batch {batch}, n={n}, d={embed_dim}, {heads} heads"
    note = f"{ours_s / theirs_s:.2f}x nn.MultiheadAttention's time (target <= 1.2x)"
    return [
        Row(task, "course_utils MultiHeadAttention", ours_s * 1e3, "ms", note),
        Row(task, "nn.MultiheadAttention", theirs_s * 1e3, "ms"),
    ]


def run() -> list[Row]:
    return on_each_device(lambda device: causal_rows(device) + multi_head_rows(device))
