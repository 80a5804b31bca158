"""Pictures used across the notebooks."""

import matplotlib.pyplot as plt
import torch
from matplotlib.colors import to_rgb

from .validation import float_tensor, integer

# WCAG 2.1's relative luminance at which black and white text contrast alike with the
# background (4.58:1): on a lighter background black text is the more readable, on a darker
# one white, and either way the contrast is at least 4.58:1 (AA asks 4.5:1).
EQUAL_CONTRAST_LUMINANCE = 0.179
MASKED_TEXT = "#404040"  # on lightgrey, 6.9:1


def relative_luminance(color) -> float:
    """WCAG 2.1's relative luminance of a matplotlib colour (0 for black, 1 for white)."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(color)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def text_color_on(background) -> str:
    """Black or white, whichever reads better on ``background`` (4.58:1 at least)."""
    return "black" if relative_luminance(background) > EQUAL_CONTRAST_LUMINANCE else "white"


def plot_attention(weights, keys, queries=None, mask=None, ax=None, title=None, annotate=True):
    """Heatmap of an attention matrix α (n_q, n_k): row i is query i, column j is key j.

    ``keys`` (and ``queries``, which default to ``keys``) label the axes with tokens.
    ``mask`` (bool, True = may attend, as in ``course_utils.models.attention``) greys out the
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
                    text, color = f"{value:.2f}", text_color_on(colors(value))
                else:
                    masked = mask is not None and not bool(mask[i, j])
                    text, color = "masked" if masked else "NaN", MASKED_TEXT
                ax.text(j, i, text, ha="center", va="center", color=color, fontsize=9)
    return ax


def plot_attention_graph(tokens, i: int, scores=None, alpha=None, ax=None):
    """The computation graph of one weight row α_i and output a_i (causal attention).

    Drawn left to right, one lane per key j ≤ i:
    x_j → k_j, v_j;  x_i → q_i;  q_i · k_j / √d_k → score_ij (9.11);  the scores
    together → softmax → α_ij (9.12);  α_ij v_j summed over j ≤ i → a_i (9.13).
    Tokens after i are drawn grey: a causal decoder does not look at them.

    ``tokens`` label the positions 1..n; ``i`` counts from 1. ``scores`` and ``alpha``
    (i numbers each, for j = 1..i) are written into their nodes when given.
    Returns the matplotlib ``Axes``.
    """
    tokens = list(tokens)
    n = len(tokens)
    integer(f"i (a position among the {n} tokens, from 1)", i, minimum=1, maximum=n)
    numbers = {}
    for label, values in (("scores", scores), ("alpha", alpha)):
        if values is not None:
            values = [float(v) for v in torch.as_tensor(values).flatten().tolist()]
            if len(values) != i:
                raise ValueError(
                    f"{label} must hold i = {i} numbers (j = 1..{i}); got {len(values)}"
                )
            numbers[label] = values
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 1.6 + 1.5 * n))
    lane = {j: 2.0 * (n - j) for j in range(1, n + 1)}
    top = lane[1] + 1.6
    middle = (lane[1] + lane[i]) / 2
    x_at = {"x": 0.0, "kv": 2.4, "score": 4.8, "softmax": 7.0, "alpha": 9.2, "times": 11.0,
            "sum": 12.6, "a": 14.2}
    half = {"x": 0.8, "kv": 0.45, "score": 0.75, "softmax": 0.75, "alpha": 0.65, "times": 0.25,
            "sum": 0.4, "a": 0.45}

    def node(key, y, text, color, height=0.55, grey=False):
        ax.add_patch(plt.Rectangle((x_at[key] - half[key], y - height / 2), 2 * half[key], height,
                                   facecolor="whitesmoke" if grey else color,
                                   edgecolor="lightgrey" if grey else "black", zorder=2))
        ax.text(x_at[key], y, text, ha="center", va="center", fontsize=10, zorder=3,
                color="darkgrey" if grey else "black")

    def arrow(start, y0, end, y1, color="dimgrey", style="-"):
        ax.annotate("", xy=(x_at[end] - half[end], y1), xytext=(x_at[start] + half[start], y0),
                    zorder=1, arrowprops=dict(arrowstyle="->", color=color, linestyle=style,
                                              shrinkA=0, shrinkB=0))

    for j in range(1, n + 1):
        node("x", lane[j], f"$\\mathbf{{x}}_{j}$  {tokens[j - 1]}", "lavender", grey=j > i)
        if j > i:
            ax.text(x_at["x"] + half["x"] + 0.2, lane[j], "after the query: masked",
                    va="center", fontsize=9, color="darkgrey")
    node("kv", top, f"$\\mathbf{{q}}_{i}$", "mistyrose")
    arrow("x", lane[i], "kv", top)
    node("softmax", middle, "softmax\nover\n$j \\leq i$\ntogether", "lightyellow",
         height=lane[1] - lane[i] + 0.9)
    node("sum", middle, "$\\Sigma$", "honeydew")
    node("a", middle, f"$\\mathbf{{a}}_{i}$", "honeydew")
    arrow("sum", middle, "a", middle)
    for j in range(1, i + 1):
        y = lane[j]
        node("kv", y + 0.45, f"$\\mathbf{{k}}_{j}$", "aliceblue", height=0.4)
        node("kv", y - 0.5, f"$\\mathbf{{v}}_{j}$", "honeydew", height=0.4)
        arrow("x", y, "kv", y + 0.45)
        arrow("x", y, "kv", y - 0.5)
        score = f"score$_{{{i}{j}}}$"
        if "scores" in numbers:
            score += f"\n= {numbers['scores'][j - 1]:.2f}"
        node("score", y, score, "white", height=0.7)
        arrow("kv", top, "score", y + 0.15)
        arrow("kv", y + 0.45, "score", y + 0.1)
        arrow("score", y, "softmax", y)
        weight = f"$\\alpha_{{{i}{j}}}$"
        if "alpha" in numbers:
            weight += f"\n= {numbers['alpha'][j - 1]:.3f}"
        node("alpha", y, weight, "mistyrose", height=0.7)
        arrow("softmax", y, "alpha", y)
        node("times", y, "×", "white", height=0.5)
        arrow("alpha", y, "times", y)
        # v_j skips the scores and the softmax: it is only weighted at the end (dashed).
        ax.plot([x_at["kv"] + half["kv"], x_at["times"]], [y - 0.5, y - 0.5], color="seagreen",
                linestyle="--", linewidth=1, zorder=1)
        ax.annotate("", xy=(x_at["times"], y - 0.25), xytext=(x_at["times"], y - 0.5), zorder=1,
                    arrowprops=dict(arrowstyle="->", color="seagreen", shrinkA=0, shrinkB=0))
        arrow("times", y, "sum", middle)
    heads = {"kv": "project\n$\\mathbf{x}W$", "score": "(9.11)", "softmax": "(9.12)",
             "alpha": "weights", "sum": "(9.13)\nweighted sum"}
    for key, text in heads.items():
        ax.text(x_at[key], top + 0.6, text, ha="center", va="bottom", fontsize=9, color="dimgrey")
    ax.set_xlim(-1.0, 15.0)
    ax.set_ylim(lane[n] - 1.0, top + 1.5)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"How $\\alpha_{i}$ and $\\mathbf{{a}}_{i}$ are computed for "
                 f"\u201c{tokens[i - 1]}\u201d (query {i})")
    return ax
