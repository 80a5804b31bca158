"""The GPT that notebook 06 trains is built from the notebook's own answer cells.

The solution's code cells run, in quick mode, up to the cell that trains the GPT (test cells
left out: they grade, they build nothing), in one namespace. Then the trained model's class
must be the notebook's own, its forward pass must go through the notebook's ``gpt_logits``
and ``transformer_block``, and training it again with a broken ``transformer_block`` (one
that skips the block) must give other losses: what the student writes is what trains.
"""

import copy
import os

import matplotlib
import nbformat
import pytest
import torch

from tests.conftest import REPO

pytestmark = pytest.mark.notebook

ASSIGNMENT = "06_transformer_blocks"
BUILD_CELL = "gpt-build"


@pytest.fixture(scope="module")
def namespace():
    """The notebook's globals after its cells up to and including the GPT's training."""
    matplotlib.use("Agg")
    saved = os.environ.get("COURSE_QUICK")
    os.environ["COURSE_QUICK"] = "1"
    source = nbformat.read(REPO / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    ns = {"__name__": "notebook"}
    try:
        for cell in source.cells:
            if cell.cell_type != "code" or cell.metadata.get("nbgrader", {}).get("grade"):
                continue
            exec(compile(cell.source, cell.get("id", "cell"), "exec"), ns)  # noqa: S102
            if cell.get("id") == BUILD_CELL:
                return ns, cell.source
    finally:
        if saved is None:
            os.environ.pop("COURSE_QUICK", None)
        else:
            os.environ["COURSE_QUICK"] = saved
    raise AssertionError(f"{ASSIGNMENT} has no cell {BUILD_CELL!r}")


def test_the_trained_model_is_a_class_of_the_notebook(namespace):
    ns, _ = namespace
    model = ns["gpt"]
    assert type(model) is ns["YourGPT"]
    assert type(model).forward.__module__ == "notebook"   # defined in the notebook, not imported
    assert ns["losses"] and ns["losses"][-1] < ns["losses"][0]


def test_its_logits_are_the_answer_cells(namespace):
    ns, _ = namespace
    model = ns["gpt"].eval()
    ids = ns["ids"][:20][None]
    with torch.no_grad():
        logits = model(ids)
        mine = ns["gpt_logits"](ids, model, lambda h, block: ns["transformer_block"](h, block, True))
    assert torch.equal(logits, mine)


def test_a_broken_block_answer_changes_what_trains(namespace):
    ns, build = namespace
    trained = ns["losses"]
    broken = copy.copy(ns)
    broken["transformer_block"] = lambda x, block, causal=False: x   # a block that does nothing
    exec(compile(build, BUILD_CELL, "exec"), broken)  # noqa: S102
    assert broken["losses"] != trained
    assert broken["losses"][0] == pytest.approx(trained[0], abs=0.5)   # same start, other model
