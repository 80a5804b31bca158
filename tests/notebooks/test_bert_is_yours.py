"""The tiny BERT that notebook 09 pre-trains is built from the notebook's own answer cell.

The solution's code cells run, in quick mode, up to the cell that pre-trains the tiny BERT
(test cells left out: they grade, they build nothing), in one namespace. Then the trained
model's class must be the notebook's own, its forward pass must be the notebook's
``encoder_logits`` and agree with PyTorch's own encoder layers holding the same weights
(the oracle here, which students do not receive), and pre-training again with a broken
``encoder_logits`` (a causal one) must give other losses, where pre-training again with the
answer as it is gives the same: what the student writes is what trains.
"""

import copy

import pytest
import torch

from tests.course_utils.checks.test_checks_pretraining import pytorch_encoder
from tests.support.notebook_namespace import quick, run_until

pytestmark = pytest.mark.notebook

ASSIGNMENT = "09_bert_and_gpt"
BUILD_CELLS = ("bert-build", "bert-measure", "bert-train")   # the model, its first loss, training

CAUSAL = """
def encoder_logits(ids, model):
    E = model.token_embedding.weight
    h = E[ids] * math.sqrt(E.shape[1]) + model.positions[: ids.shape[-1]]
    for block in model.blocks:
        h = block(h, causal=True)
    return model.norm(h) @ E[:-1].T
"""


@pytest.fixture(scope="module")
def namespace():
    """The notebook's globals after its cells up to and including the tiny BERT's training,
    and the sources of the cells that build and train it."""
    return run_until(ASSIGNMENT, BUILD_CELLS)


def trained_again(ns, build, answer=None):
    """The losses of building and pre-training the tiny BERT again, with ``answer`` (the
    source of an encoder_logits) in place of the notebook's if given."""
    again = copy.copy(ns)
    if answer is not None:
        exec(compile(answer, "broken", "exec"), again)  # noqa: S102
    with quick():
        for cell in BUILD_CELLS:
            exec(compile(build[cell], cell, "exec"), again)  # noqa: S102
    return again["bert_losses"]


def test_the_trained_model_is_a_class_of_the_notebook(namespace):
    ns, _ = namespace
    model = ns["tiny_bert"]
    assert type(model) is ns["YourBERT"]
    assert type(model).forward.__module__ == "notebook"   # defined in the notebook, not imported
    assert ns["bert_losses"] and ns["bert_losses"][-1] < ns["bert_losses"][0]


def test_its_scores_are_the_answer_cells_and_pytorchs_encoder(namespace):
    ns, _ = namespace
    model = ns["tiny_bert"].eval()
    ids = ns["ids"][:24][None].clone()
    ids[0, 5] = ns["words"].mask_id
    with torch.no_grad():
        scores = model(ids)
        assert torch.equal(scores, ns["encoder_logits"](ids, model))
        assert torch.allclose(scores, pytorch_encoder(ids, model), atol=1e-4)
    assert scores.shape == (1, 24, ns["words"].n_vocab)


def test_a_broken_answer_changes_what_trains(namespace):
    ns, build = namespace
    trained = ns["bert_losses"]
    assert trained_again(ns, build) == trained                # the run repeats exactly
    broken = trained_again(ns, build, CAUSAL)
    assert broken != trained
    assert broken[0] == pytest.approx(trained[0], abs=0.5)     # same start, other model
