"""The class report's figures: matplotlib's Agg renderer, embedded as PNG data: URIs, so
that the page runs no JavaScript and fetches nothing."""

import base64
import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter


def png(figure: Figure) -> str:
    """``figure`` as a data: URI of a PNG drawn by Agg."""
    buffer = io.BytesIO()
    FigureCanvasAgg(figure).print_png(buffer)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def score_figure(fractions: dict[str, list[float]]) -> Figure:
    """One histogram per assignment of the graded scores, as fractions of the maximum."""
    columns = min(4, len(fractions))
    rows = -(-len(fractions) // columns)
    figure = Figure(figsize=(3.4 * columns, 2.6 * rows), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    bins = [i / 10 for i in range(11)]
    for ax, (assignment, values) in zip(axes, fractions.items(), strict=False):
        ax.hist(values, bins=bins, color="tab:blue", edgecolor="white")
        ax.set_title(f"{assignment}\n{len(values)} graded", fontsize=9)
        ax.set_xlim(0, 1)
        ax.xaxis.set_major_formatter(PercentFormatter(1.0))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("score", fontsize=8)
        ax.tick_params(labelsize=8)
    for ax in axes[len(fractions):]:
        ax.set_axis_off()
    axes[0].set_ylabel("submissions", fontsize=8)
    return figure


def pass_rate_figure(order: dict[str, list[str]], rates: dict) -> Figure:
    """Horizontal bars of each exercise's pass rate, one panel per assignment."""
    sizes = [len(cells) for cells in order.values()]
    figure = Figure(figsize=(8, 0.9 * len(order) + 0.3 * sum(sizes)), layout="constrained")
    axes = figure.subplots(len(order), 1, squeeze=False, height_ratios=sizes).ravel()
    for ax, (assignment, cells) in zip(axes, order.items(), strict=True):
        shares = [rates[(assignment, cell)][0] / rates[(assignment, cell)][1] for cell in cells]
        bars = ax.barh(cells, shares, color="tab:green")
        ax.bar_label(bars, labels=[f"{share:.0%}" for share in shares], fontsize=8, padding=2)
        ax.set_xlim(0, 1.1)
        ax.invert_yaxis()
        ax.xaxis.set_major_formatter(PercentFormatter(1.0))
        ax.set_title(assignment, fontsize=9, loc="left")
        ax.tick_params(labelsize=8)
    axes[-1].set_xlabel("graded submissions with full points", fontsize=8)
    return figure
