"""Pictures used across the notebooks."""

import matplotlib.pyplot as plt
import torch

from .validation import float_tensor


def plot_attention(weights, keys, queries=None, mask=None, ax=None, title=None, annotate=True):
    """Heatmap of an attention matrix α (n_q, n_k): row i is query i, column j is key j.

    ``keys`` (and ``queries``, which default to ``keys``) label the axes with tokens.
    ``mask`` (bool, True = may attend, as in ``course_utils.attention``) greys out the
    masked entries, so that a masked 0 looks different from a learned 0. NaN entries
    (a row with nothing to attend to) are grey too and labelled NaN.
    Returns the matplotlib ``Axes``.
    """
    if not isinstance(weights, torch.Tensor):
        weights = torch.as_tensor(weights, dtype=torch.float32)
    float_tensor("weights", weights, min_dim=2)
    if weights.dim() != 2:
        raise ValueError(
            f"weights must be a 2-D (n_q, n_k) matrix; got shape {tuple(weights.shape)}"
        )
    queries = list(keys) if queries is None else list(queries)
    keys = list(keys)
    if weights.shape != (len(queries), len(keys)):
        raise ValueError(
            f"weights of shape {tuple(weights.shape)} do not match {len(queries)} query "
            f"labels and {len(keys)} key labels"
        )
    values = weights.detach().to("cpu", torch.float32)
    if mask is not None:
        if tuple(mask.shape) != tuple(values.shape):
            raise ValueError(
                f"mask of shape {tuple(mask.shape)} does not match weights of shape "
                f"{tuple(values.shape)}"
            )
        values = values.masked_fill(~mask.to("cpu", torch.bool), float("nan"))
    if ax is None:
        size = max(3.0, 0.6 * len(keys) + 1.5)
        _, ax = plt.subplots(figsize=(size + 1.0, size))
    colors = plt.get_cmap("viridis").with_extremes(bad="lightgrey")
    image = ax.imshow(values.numpy(), cmap=colors, vmin=0.0, vmax=1.0)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    ax.set_xticks(range(len(keys)), keys, rotation=45, ha="right")
    ax.set_yticks(range(len(queries)), queries)
    ax.set_xlabel("key j")
    ax.set_ylabel("query i")
    if title:
        ax.set_title(title)
    if annotate:
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                value = float(values[i, j])
                if value == value:
                    text, color = f"{value:.2f}", "black" if value > 0.6 else "white"
                else:
                    masked = mask is not None and not bool(mask[i, j])
                    text, color = "masked" if masked else "NaN", "dimgrey"
                ax.text(j, i, text, ha="center", va="center", color=color, fontsize=9)
    return ax
