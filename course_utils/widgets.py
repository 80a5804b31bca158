"""Interactive widgets an instructor can move live."""

import math

import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch

from .validation import float_tensor


def softmax_scale_slider(dot_products, labels, d_k: int):
    """A slider for the factor c in softmax(c · q·k), with c = 1/√d_k marked.

    ``dot_products`` are the raw q_i · k_j of one query (shape (n,)); ``labels`` name
    the keys. Moving c up sharpens the softmax toward one key; moving it toward 0
    flattens it toward uniform weights. Returns the ipywidgets ``interactive``.
    """
    dot_products = float_tensor("dot_products", torch.as_tensor(dot_products, dtype=torch.float32))
    if dot_products.dim() != 1 or len(labels) != dot_products.numel():
        raise ValueError(
            f"dot_products must be 1-D with one entry per label; got shape "
            f"{tuple(dot_products.shape)} and {len(labels)} labels"
        )
    standard = 1.0 / math.sqrt(d_k)

    def draw(c: float):
        weights = torch.softmax(dot_products * c, dim=-1)
        fig, ax = plt.subplots(figsize=(5, 3))
        ax.bar(list(labels), weights.tolist(), color="tab:blue")
        ax.set_ylim(0, 1.15)  # room for the label of a weight near 1, under the title
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1])
        ax.set_ylabel("weight α")
        marker = "  (= 1/√d_k)" if abs(c - standard) < 1e-3 else ""
        ax.set_title(f"softmax(c · q·k) with c = {c:.2f}{marker}")
        for x, w in enumerate(weights.tolist()):
            ax.text(x, w + 0.02, f"{w:.2f}", ha="center")
        plt.show()

    slider = widgets.FloatSlider(
        value=round(standard, 3), min=0.0, max=3.0, step=0.05, description="c", readout_format=".2f"
    )
    return widgets.interactive(draw, c=slider)
