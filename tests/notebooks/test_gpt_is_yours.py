"""The GPT that notebook 06 trains is built from the notebook's own answer cells.

The solution's code cells run, in quick mode, up to the cell that trains the GPT (test cells
left out: they grade, they build nothing), in one namespace. Then the trained model's class
must be the notebook's own, its forward pass must go through the notebook's ``gpt_logits``,
``transformer_block``, ``my_attention`` (the student's attention of notebook 05, with rotary
positions), ``rope`` and, for every layer norm, ``layer_norm``; training it again with a broken
``transformer_block`` (one that skips the block), a broken ``my_attention`` (one that attends
to nothing), a broken ``rope`` (one that turns nothing) or a broken ``layer_norm`` (one that
normalises nothing) must give other losses: what the student writes is what trains. And every
token the notebook writes with it is drawn by the notebook's ``sample_next``.
"""

import copy

import pytest
import torch

from tests.support.notebook_namespace import quick, run_until

pytestmark = pytest.mark.notebook

ASSIGNMENT = "06_transformer_blocks"
BUILD_CELL, SAMPLE_CELL = "gpt-build", "gpt-sample"


@pytest.fixture(scope="module")
def namespace():
    """The notebook's globals after its cells up to and including the samples of the trained
    GPT, and the source of the cell that builds and trains it."""
    ns, cells = run_until(ASSIGNMENT, (BUILD_CELL, SAMPLE_CELL))
    return ns, cells[BUILD_CELL]


def spied(ns, name, calls):
    """A stand-in for the answer ``name`` of ``ns`` that notes each call's arguments and
    result in ``calls``, then returns what the answer returns."""
    answer = ns[name]

    def spy(*args, **kwargs):
        result = answer(*args, **kwargs)
        calls.append((args, result))
        return result

    return answer, spy


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
        mine = ns["gpt_logits"](ids, model, lambda h, block: ns["transformer_block"](
            h, block, lambda h, attention, causal: ns["my_attention"](h, attention, ns["rope"],
                                                                      causal), True))
    assert torch.equal(logits, mine)
    assert not model.position_embedding.weight.any()      # its positions are the rotations


def retrained(namespace, name, broken_answer):
    """The losses of the GPT trained again with the answer ``name`` replaced, and as trained."""
    ns, build = namespace
    broken = copy.copy(ns)
    broken[name] = broken_answer
    with quick():
        exec(compile(build, BUILD_CELL, "exec"), broken)  # noqa: S102
    return broken["losses"], ns["losses"]


def test_a_broken_block_answer_changes_what_trains(namespace):
    broken, trained = retrained(namespace, "transformer_block",
                                lambda x, block, attention, causal=False: x)   # does nothing
    assert broken != trained
    assert broken[0] == pytest.approx(trained[0], abs=0.5)   # same start, other model


def test_a_broken_attention_answer_changes_what_trains(namespace):
    broken, trained = retrained(namespace, "my_attention",
                                lambda h, self_attn, rotate, causal=False: torch.zeros_like(h))
    assert broken != trained
    assert broken[0] == pytest.approx(trained[0], abs=0.5)


def test_a_broken_rope_answer_changes_what_trains(namespace):
    broken, trained = retrained(namespace, "rope", lambda x, positions: x)   # turns nothing
    assert broken != trained
    assert broken[0] == pytest.approx(trained[0], abs=0.5)


def test_every_layer_norm_of_the_model_is_the_answer_cell(namespace):
    ns, _ = namespace
    model, calls = ns["gpt"].eval(), []
    answer, ns["layer_norm"] = spied(ns, "layer_norm", calls)
    try:
        with torch.no_grad():
            model(ns["ids"][:20][None])
    finally:
        ns["layer_norm"] = answer
    assert len(calls) == 2 * len(model.blocks) + 1                  # two per block, and the last
    assert all(args[1] is not None and args[2] is not None for args, _ in calls)   # γ and β


def test_a_broken_layer_norm_answer_changes_what_trains(namespace):
    broken, trained = retrained(namespace, "layer_norm",
                                lambda x, gamma, beta, eps=1e-5: x)     # normalises nothing
    assert broken != trained
    assert broken[0] == pytest.approx(trained[0], abs=0.5)


def test_every_token_written_is_drawn_by_the_answer_cell(namespace):
    ns, _ = namespace
    calls = []
    answer, ns["sample_next"] = spied(ns, "sample_next", calls)
    try:
        written = ns["sample"](1.5, tokens=6)
    finally:
        ns["sample_next"] = answer
    assert [result.item() for _, result in calls] == written[-6:].tolist()
    assert [args[1] for args, _ in calls] == [1.5] * 6                   # the temperature asked
