"""The linear attention that notebook 07 races and trains is the notebook's own answer.

The solution's code cells run, in quick mode, up to the cell that trains the recall models
(test cells left out: they grade, they build nothing), in one namespace. Then the race of
section 6 must time the notebook's ``kernel_attention`` and ``causal_linear_attention``
(FMM's far field included), and the linear models of section 7 must be the notebook's
``RecallModel`` attending through the notebook's ``causal_linear_attention``: trained again
with it, they train to the same losses, and with a broken one (one that attends to
nothing) to others: what the student writes is what races and what trains.
"""

import pytest
import torch

from tests.support.notebook_namespace import run_until

pytestmark = pytest.mark.notebook

ASSIGNMENT = "07_linear_attention"
RACE_CELL, RECALL_CELL = "cell-050", "cell-056"


@pytest.fixture(scope="module")
def ns():
    """The notebook's globals after its cells up to and including the recall models' training."""
    return run_until(ASSIGNMENT, (RACE_CELL, RECALL_CELL))[0]


class Spy:
    """Stands in for the answer ``name`` of ``ns`` inside a ``with``: each call is recorded,
    then answered by ``answer`` (the notebook's own by default)."""

    def __init__(self, ns: dict, name: str, answer=None):
        self.ns, self.name, self.calls = ns, name, []
        self.answer = answer or ns[name]

    def __call__(self, *args, **kwargs):
        self.calls.append(args)
        return self.answer(*args, **kwargs)

    def __enter__(self):
        self.saved = self.ns[self.name]
        self.ns[self.name] = self
        return self

    def __exit__(self, *exc):
        self.ns[self.name] = self.saved


def test_the_race_times_the_answer_cells(ns):
    q, k, v = torch.randn(3, 1, 4, 16, 32).unbind(0)
    for method, answer in (("linear", "kernel_attention"),
                           ("linear causal", "causal_linear_attention"),
                           ("FMM (band 16)", "kernel_attention")):
        with Spy(ns, answer) as spy:
            ns["methods"][method](q, k, v)
        assert spy.calls, f"the race's {method!r} does not call the notebook's {answer}"


def retrained(ns, name: str, answer=None):
    """The recall model ``name`` trained again, with the notebook's ``causal_linear_attention``
    replaced by a spy on ``answer``: the model, its losses and the spy."""
    models, build = [], ns["RecallModel"]

    def keep(*args, **kwargs):
        models.append(build(*args, **kwargs))
        return models[-1]

    losses = ns["recall_loss"][name], ns["recall_accuracy"][name]
    ns["RecallModel"] = keep
    try:
        with Spy(ns, "causal_linear_attention", answer) as spy, ns["cpu_threads"](1):
            ns["train_recall"](name)
        return models[-1], ns["recall_loss"][name], spy
    finally:
        ns["RecallModel"] = build
        ns["recall_loss"][name], ns["recall_accuracy"][name] = losses


@pytest.mark.parametrize("name", ["linear", "linear 2×16"])
def test_the_recall_models_attend_with_the_answer_cell(ns, name):
    trained = ns["recall_loss"][name]
    model, losses, spy = retrained(ns, name)
    assert type(model) is ns["RecallModel"]
    assert type(model).forward.__module__ == "notebook"   # defined in the notebook, not imported
    assert spy.calls and all(call[4] == 16 for call in spy.calls)   # chunks of 16
    assert losses == pytest.approx(trained)                # the same model, the same training


def test_a_broken_answer_changes_what_trains(ns):
    trained = ns["recall_loss"]["linear"]
    _, broken, _ = retrained(ns, "linear", lambda q, k, v, feature_map, chunk: torch.zeros_like(v))
    assert broken[0] == pytest.approx(trained[0], abs=0.5)  # same start, other model
    assert broken != pytest.approx(trained, abs=1e-3)
