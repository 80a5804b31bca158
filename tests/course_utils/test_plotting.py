"""The attention heatmap and the scale slider."""

import math

import matplotlib.pyplot as plt
import numpy.ma as ma
import pytest
import torch
from matplotlib.colors import to_rgb

from course_utils.models.attention import attention_weights
from course_utils.plotting import plot_attention
from course_utils.widgets import softmax_scale_slider

TOKENS = ["I", "am", "good"]


def test_heatmap_labels_axes_with_tokens_and_marks_masked_entries():
    alpha = attention_weights(torch.randn(3, 4), torch.randn(3, 4), causal=True)
    past = torch.ones(3, 3, dtype=torch.bool).tril()
    ax = plot_attention(alpha, TOKENS, mask=past, title="causal")
    assert [t.get_text() for t in ax.get_xticklabels()] == TOKENS
    assert [t.get_text() for t in ax.get_yticklabels()] == TOKENS
    texts = [t.get_text() for t in ax.texts]
    assert texts.count("masked") == 3 and texts[0] == "1.00"
    assert ax.get_title() == "causal"
    plt.close("all")


def wcag_contrast(first, second) -> float:
    """WCAG 2.1's contrast ratio, (L1 + 0.05) / (L2 + 0.05), from its definition."""
    def luminance(color):
        channels = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
                    for c in to_rgb(color)]
        return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]
    lighter, darker = sorted((luminance(first), luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def test_wcag_contrast_matches_hand_worked_values():
    assert wcag_contrast("black", "white") == pytest.approx(21.0)
    assert wcag_contrast("#767676", "white") == pytest.approx(4.54, abs=0.01)  # AA's grey


def test_heatmap_numbers_and_marks_meet_wcag_aa_contrast_on_their_cells():
    weights = torch.linspace(0, 1, 21).reshape(3, 7)
    mask = torch.ones(3, 7, dtype=torch.bool)
    mask[0, 1] = False
    ax = plot_attention(weights, list("abcdefg"), queries=list("xyz"), mask=mask)
    image = ax.images[0]
    for text in ax.texts:
        x, y = (round(c) for c in text.get_position())
        value = image.get_array()[y, x]
        cell = image.cmap.get_bad() if value is ma.masked else image.cmap(image.norm(value))
        assert wcag_contrast(text.get_color(), cell) >= 4.5, (text.get_text(), cell)
    plt.close("all")


def test_heatmap_shows_nan_rows():
    weights = torch.tensor([[float("nan"), float("nan")], [1.0, 0.0]])
    ax = plot_attention(weights, ["a", "b"])
    assert [t.get_text() for t in ax.texts] == ["NaN", "NaN", "1.00", "0.00"]
    plt.close("all")


@pytest.mark.parametrize(
    ("weights", "tokens", "error", "words"),
    [
        (torch.ones(2, 3), TOKENS, ValueError, "do not match"),
        (torch.ones(2, 3, 3), TOKENS, ValueError, "2-D"),
        (torch.ones(3, 3, dtype=torch.long), TOKENS, TypeError, "floating-point"),
    ],
)
def test_heatmap_bad_input(weights, tokens, error, words):
    with pytest.raises(error, match=words):
        plot_attention(weights, tokens)


def test_slider_starts_at_one_over_sqrt_dk():
    widget = softmax_scale_slider([-1.0, -4.0, 2.0], TOKENS, d_k=4)
    slider = widget.children[0]
    assert slider.value == pytest.approx(1 / math.sqrt(4))
    plt.close("all")


def test_slider_labels_stay_inside_the_axes_when_one_weight_takes_all():
    widget = softmax_scale_slider([-1.0, -4.0, 2.0], TOKENS, d_k=4)
    widget.children[0].value = 3.0  # softmax(3 · q·k): the last weight is ~1
    ax = plt.gcf().axes[0]
    renderer = ax.figure.canvas.get_renderer()
    frame, title = ax.get_window_extent(renderer), ax.title.get_window_extent(renderer)
    assert max(float(t.get_text()) for t in ax.texts) > 0.99
    for label in ax.texts:
        box = label.get_window_extent(renderer)
        assert box.y1 <= frame.y1 and not box.overlaps(title), label.get_text()
    plt.close("all")


def test_slider_bad_input():
    with pytest.raises(ValueError, match="one entry per label"):
        softmax_scale_slider([1.0, 2.0], TOKENS, d_k=4)


def test_alpha_graph_draws_every_node_of_the_row():
    from course_utils.plotting import plot_attention_graph

    ax = plot_attention_graph(TOKENS, i=3)
    texts = " ".join(t.get_text() for t in ax.texts)
    for node in ("mathbf{q}_3", "mathbf{k}_1", "mathbf{v}_3", "score$_{31}$", "alpha_{33}",
                 "softmax", "mathbf{a}_3", "(9.11)", "(9.12)", "(9.13)"):
        assert node in texts, node
    assert "= " not in texts  # no numbers before the exercises
    plt.close("all")


def test_alpha_graph_writes_numbers_and_greys_out_later_tokens():
    from course_utils.plotting import plot_attention_graph

    ax = plot_attention_graph(TOKENS + ["today"], i=2, scores=[0.5, -1.0], alpha=[0.8, 0.2])
    texts = [t.get_text() for t in ax.texts]
    assert "score$_{21}$\n= 0.50" in texts and "$\\alpha_{22}$\n= 0.200" in texts
    assert texts.count("after the query: masked") == 2
    assert not any("k}_3" in t for t in texts)
    plt.close("all")


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        (dict(i=0), "3 tokens, from 1\\) must be >= 1; got 0"),
        (dict(i=4), "must be <= 3; got 4"),
        (dict(i=2, alpha=[1.0]), "2 numbers"),
    ],
)
def test_alpha_graph_bad_input(kwargs, words):
    from course_utils.plotting import plot_attention_graph

    with pytest.raises(ValueError, match=words):
        plot_attention_graph(TOKENS, **kwargs)
