"""The tiny BERT, the tiny GPT and the reader that notebook 09 trains are built from the
notebook's own answer cell.

The solution's code cells run, in quick mode, up to the cell that fine-tunes the reader (test
cells left out: they grade, they build nothing), in one namespace. Then each trained model's
class must be the notebook's own, its forward pass must be the notebook's ``encoder_logits``
(the GPT's on a view whose blocks are causal) and agree with PyTorch's own encoder layers
holding the same weights (the oracle here, which students do not receive; with the causal
mask for the GPT), and training again with a broken ``encoder_logits`` must give other
losses, where training again with the answer as it is gives the same: what the student
writes is what trains. An ``encoder_logits`` that is always causal trains another BERT, and
one that ignores ``causal`` another GPT: the GPT is the answer called with causal=True. The
reader is the tiny BERT, a row of E more for each question word, and fine-tuning it runs the
answer too, with its padding.
"""

import copy

import pytest
import torch

from tests.course_utils.checks.test_checks_pretraining import pytorch_encoder
from tests.support.notebook_namespace import quick, run_until

pytestmark = pytest.mark.notebook

ASSIGNMENT = "09_bert_and_gpt"
BERT_CELLS = ("bert-build", "bert-measure", "bert-train")   # the model, its first loss, training
GPT_CELLS = ("gpt-build", "gpt-train")                      # the GPT, its training and samples
READER_CELLS = ("cell-022",)                  # the tiny BERT fine-tuned with a span head, read


def encoder_with(block="block(h, mask=keys, causal=causal)", lift="math.sqrt(E.shape[1])"):
    """The source of an encoder_logits, the answer's with a block call or H_0's lift changed."""
    return f"""
def encoder_logits(ids, model, causal=False, padding=None):
    E = model.token_embedding.weight
    h = E[ids] * {lift} + model.positions[: ids.shape[-1]]
    keys = None if padding is None else ~padding[:, None, None, :]
    for block in model.blocks:
        h = {block}
    scores = model.norm(h) @ E[:-1].T
    return scores if padding is None else scores.masked_fill(padding[..., None], 0.0)
"""


CAUSAL = encoder_with("block(h, mask=keys, causal=True)")
NEVER_CAUSAL = encoder_with("block(h, mask=keys)")
READS_PADDING = encoder_with("block(h, causal=causal)")


@pytest.fixture(scope="module")
def namespace():
    """The notebook's globals after its cells up to and including the reader's fine-tuning,
    and the sources of the cells that build and train the three models."""
    return run_until(ASSIGNMENT, BERT_CELLS + GPT_CELLS + READER_CELLS)


def same(losses, tolerance=1e-5):
    """Losses equal to ``losses`` to ``tolerance``: training again repeats them but for the
    last bits, which a CPU's threads may round otherwise."""
    return pytest.approx(losses, abs=tolerance)


def trained_again(ns, build, cells, losses, answer=None):
    """The losses (the name ``losses``) of running ``cells`` again, with ``answer`` (the
    source of an encoder_logits) in place of the notebook's if given."""
    again = copy.copy(ns)
    if answer is not None:
        exec(compile(answer, "broken", "exec"), again)  # noqa: S102
    with quick():
        for cell in cells:
            exec(compile(build[cell], cell, "exec"), again)  # noqa: S102
    return again[losses]


@pytest.mark.parametrize(("model", "cls", "losses"), [("tiny_bert", "YourBERT", "bert_losses"),
                                                      ("tiny_gpt", "YourGPT", "gpt_losses")])
def test_the_trained_model_is_a_class_of_the_notebook(namespace, model, cls, losses):
    ns, _ = namespace
    assert type(ns[model]) is ns[cls]
    assert type(ns[model]).forward.__module__ == "notebook"   # defined in the notebook
    assert ns[losses] and ns[losses][-1] < ns[losses][0]


def test_the_gpt_is_the_bert_made_causal(namespace):
    ns, _ = namespace
    assert issubclass(ns["YourGPT"], ns["YourBERT"])
    assert ns["tiny_gpt"].token_embedding.num_embeddings == ns["words"].n_vocab + 1


@pytest.mark.parametrize(("model", "causal"), [("tiny_bert", False), ("tiny_gpt", True)])
def test_its_scores_are_the_answer_cells_and_pytorchs_encoder(namespace, model, causal):
    ns, _ = namespace
    model = ns[model].eval()
    ids = ns["ids"][:24][None].clone()
    if not causal:
        ids[0, 5] = ns["words"].mask_id
    with torch.no_grad():
        scores = model(ids)
        assert torch.equal(scores, ns["encoder_logits"](ids, model, causal=causal))
        assert torch.allclose(scores, pytorch_encoder(ids, model, causal), atol=1e-4)
    assert scores.shape == (1, 24, ns["words"].n_vocab)


def test_a_broken_answer_changes_what_trains(namespace):
    ns, build = namespace
    trained = ns["bert_losses"]
    assert trained_again(ns, build, BERT_CELLS, "bert_losses") == same(trained)   # it repeats
    broken = trained_again(ns, build, BERT_CELLS, "bert_losses", CAUSAL)
    assert broken != same(trained, 1e-3)
    assert broken[0] == pytest.approx(trained[0], abs=0.5)     # same start, other model


def test_the_gpt_trains_the_answer_with_every_block_causal(namespace):
    ns, build = namespace
    trained = ns["gpt_losses"]
    assert trained_again(ns, build, GPT_CELLS, "gpt_losses") == same(trained)   # it repeats
    assert trained_again(ns, build, GPT_CELLS, "gpt_losses", CAUSAL) == same(trained)
    never = trained_again(ns, build, GPT_CELLS, "gpt_losses", NEVER_CAUSAL)
    assert never != same(trained, 1e-3)          # the GPT is the answer's causal
    no_lift = trained_again(ns, build, GPT_CELLS, "gpt_losses", encoder_with(lift="1.0"))
    assert no_lift != same(trained, 1e-3)
    assert no_lift[0] == pytest.approx(trained[0], abs=0.5)   # same start, other model


def test_the_reader_is_the_tiny_bert_fine_tuned_through_the_answer(namespace):
    ns, build = namespace
    reader, words = ns["reader"], ns["words"]
    assert type(reader) is ns["YourBERT"]
    assert reader.token_embedding.num_embeddings == words.n_vocab + 1 + len(ns["QUESTION_WORDS"])
    trained = ns["span_losses"]
    assert trained_again(ns, build, READER_CELLS, "span_losses") == same(trained)   # it repeats
    for broken in (CAUSAL, READS_PADDING):
        assert trained_again(ns, build, READER_CELLS, "span_losses", broken) != same(trained, 1e-3)
