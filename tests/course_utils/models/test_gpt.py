"""course_utils.models.gpt against PyTorch's own layers, hand computations and the data itself.

The course's ``TinyGPT`` holds pieces and computes nothing (the students write its forward
pass); the tests run the course's blocks, loss, training loop and sampling in
``AssembledGPT``, the tests' own assembly, and check it against PyTorch's layers."""

import copy
import dataclasses
import math

import pytest
import torch
import torch.nn.functional as F

from course_utils.device import get_device
from course_utils.models.gpt import (
    GPTConfig,
    TinyGPT,
    generate,
    next_token_loss,
    random_batch,
    train_language_model,
    uniform_loss,
)
from course_utils.models.transformer import sinusoidal_positions
from course_utils.tokens.byte_bpe import train_byte_bpe
from tests.support.peers import AssembledGPT, TorchLayersGPT

DEVICE = get_device()
SMALL = GPTConfig(vocab_size=50, block_size=16, d_model=32, n_layers=2, n_heads=4,
                  dim_feedforward=64)  # fmt: skip
TEXT = "the cat sat on the mat. the dog sat on the log. " * 20


def model_with(config=SMALL, seed=0, cls=AssembledGPT):
    torch.manual_seed(seed)
    return cls(config).to(DEVICE)


def random_ids(*shape, high=SMALL.vocab_size, seed=0):
    return torch.randint(high, shape, generator=torch.Generator().manual_seed(seed)).to(DEVICE)


@pytest.fixture(scope="module")
def text_ids():
    """TEXT in a byte-level BPE of 10 merges, and that tokenizer."""
    tokenizer = train_byte_bpe(TEXT, 10)
    return torch.tensor(tokenizer.encode_ordinary(TEXT), device=DEVICE), tokenizer


@pytest.fixture(scope="module")
def trained(text_ids):
    """A tiny model trained on TEXT until it knows it well (eval mode)."""
    ids, tokenizer = text_ids
    config = GPTConfig(tokenizer.n_vocab, block_size=16, d_model=32, n_layers=1,
                       dim_feedforward=64)  # fmt: skip
    model = model_with(config)
    train_language_model(model, ids, 60, batch_size=16, lr=1e-2, progress=False)
    return model.eval()


# -- the course's blocks in a GPT ----------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "seed", "n"),
    [
        (SMALL, 0, 16),
        (SMALL, 1, 5),
        (GPTConfig(97, block_size=24, d_model=48, n_layers=3, n_heads=6, dim_feedforward=8), 2, 24),
        (GPTConfig(vocab_size=10, block_size=8, d_model=8, n_layers=1, n_heads=1), 3, 1),
        (GPTConfig(40, block_size=12, d_model=16, n_layers=3, norm_first=False), 4, 12),
    ],
)
def test_logits_equal_the_same_model_built_from_pytorch_layers(config, seed, n):
    ours = model_with(config, seed).eval()
    theirs = model_with(config, seed + 100, cls=TorchLayersGPT).eval()
    assert list(theirs.state_dict()) == list(ours.state_dict())
    theirs.load_state_dict(ours.state_dict())
    ids = random_ids(3, n, high=config.vocab_size, seed=seed)
    with torch.no_grad():
        got, expected = ours(ids), theirs(ids)
        assert got.shape == (3, n, config.vocab_size)
        torch.testing.assert_close(got, expected, atol=1e-5, rtol=0)
        torch.testing.assert_close(ours(ids[1]), expected[1], atol=1e-5, rtol=0)  # unbatched


def test_gradients_equal_those_of_the_pytorch_layers_in_training():
    ours = model_with(SMALL, 4)
    theirs = model_with(SMALL, 5, cls=TorchLayersGPT)
    theirs.load_state_dict(ours.state_dict())
    ids = random_ids(4, SMALL.block_size + 1, seed=4)
    for model in (ours, theirs):
        next_token_loss(model, ids).backward()
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        torch.testing.assert_close(p.grad, q.grad, atol=1e-5, rtol=1e-4, msg=name)


def test_logits_follow_the_formula_with_tied_weights_and_sinusoidal_positions():
    model = model_with(SMALL, 6).eval()
    ids = random_ids(2, 9, seed=6)
    E = model.token_embedding.weight
    with torch.no_grad():
        h = E[ids] * math.sqrt(SMALL.d_model) + sinusoidal_positions(9, SMALL.d_model).to(DEVICE)
        for block in model.blocks:
            h = block(h, causal=True)
        expected = F.layer_norm(h, (SMALL.d_model,), model.norm.weight, model.norm.bias) @ E.T
        torch.testing.assert_close(model(ids), expected, atol=1e-5, rtol=0)
    assert "positions" not in model.state_dict()  # fixed, not learned, not saved
    n_params = sum(p.numel() for p in model.parameters())
    per_block = sum(p.numel() for p in model.blocks[0].parameters())
    assert n_params == 50 * 32 + 2 * per_block + 2 * 32  # no separate output matrix


def test_a_token_changes_the_logits_of_its_position_and_later_ones_only():
    model = model_with(SMALL, 7).eval()
    ids = random_ids(12, seed=7)
    with torch.no_grad():
        before = model(ids)
        for t in (0, 5, 11):
            changed = ids.clone()
            changed[t] = (ids[t] + 1) % SMALL.vocab_size
            after = model(changed)
            assert torch.equal(after[:t], before[:t])
            assert (after[t:] - before[t:]).abs().amax(dim=-1).min() > 1e-4


def test_a_bidirectional_model_lets_every_token_change_every_position():
    config = dataclasses.replace(SMALL, causal=False)
    model = model_with(config, 7).eval()
    ids = random_ids(12, seed=7)
    with torch.no_grad():
        before = model(ids)
        changed = ids.clone()
        changed[11] = (ids[11] + 1) % SMALL.vocab_size
        assert (model(changed) - before).abs().amax(dim=-1).min() > 1e-4  # the first row too


@pytest.mark.parametrize("norm_first", [True, False])
def test_a_bidirectional_model_equals_pytorch_layers_without_a_mask(norm_first):
    config = GPTConfig(40, block_size=12, d_model=16, n_layers=2, norm_first=norm_first,
                       causal=False)  # fmt: skip
    ours = model_with(config, 9).eval()
    theirs = model_with(config, 10, cls=TorchLayersGPT).eval()
    theirs.load_state_dict(ours.state_dict())
    ids = random_ids(2, 12, high=40, seed=9)
    with torch.no_grad():
        torch.testing.assert_close(ours(ids), theirs(ids), atol=1e-5, rtol=0)


# -- the loss ---------------------------------------------------------------------------


def test_the_loss_at_initialisation_is_near_the_uniform_guess():
    model = model_with(SMALL, 8)
    loss = next_token_loss(model, random_ids(8, 17, seed=8)).item()
    assert uniform_loss(50) == math.log(50)
    assert abs(loss - math.log(50)) < 0.1


def test_next_token_loss_is_the_cross_entropy_of_the_shifted_ids():
    model = model_with(SMALL, 9)
    ids = random_ids(3, 11, seed=9)
    log_p = torch.log_softmax(model(ids[:, :-1]), dim=-1)  # (3, 10, V)
    expected = -sum(log_p[b, t, ids[b, t + 1]] for b in range(3) for t in range(10)) / 30
    torch.testing.assert_close(next_token_loss(model, ids), expected)
    unbatched = -log_p[0, range(10), ids[0, 1:]].mean()
    torch.testing.assert_close(next_token_loss(model, ids[0]), unbatched)


# -- batches and training ---------------------------------------------------------------


def test_random_batch_takes_windows_of_consecutive_tokens():
    ids = torch.arange(100, 200, device=DEVICE)
    batch = random_batch(ids, 8, 5, torch.Generator().manual_seed(0))
    assert batch.shape == (5, 9) and batch.device.type == DEVICE.type
    assert torch.equal(batch - batch[:, :1], torch.arange(9, device=DEVICE).expand(5, 9))
    assert batch.min() >= 100 and batch.max() < 200
    again = random_batch(ids, 8, 5, torch.Generator().manual_seed(0))
    assert torch.equal(batch, again)
    starts = {random_batch(ids, 8, 1)[0, 0].item() for _ in range(200)}
    assert min(starts) == 100 and max(starts) == 191  # every window fits, first and last drawn


def test_training_lowers_the_loss_far_below_the_uniform_guess(text_ids):
    ids, tokenizer = text_ids
    config = GPTConfig(tokenizer.n_vocab, block_size=16, d_model=32, n_layers=1,
                       dim_feedforward=64)  # fmt: skip
    model = model_with(config).eval()
    losses = train_language_model(model, ids, 40, batch_size=16, lr=1e-2, progress=False)
    assert len(losses) == 40 and all(isinstance(x, float) for x in losses)
    assert abs(losses[0] - uniform_loss(tokenizer.n_vocab)) < 0.2
    assert sum(losses[-5:]) / 5 < 0.4 * uniform_loss(tokenizer.n_vocab)
    assert not model.training  # the mode it came in
    windows = random_batch(ids, config.block_size, 64, torch.Generator().manual_seed(1))
    assert next_token_loss(model, windows) < 0.4 * uniform_loss(tokenizer.n_vocab)


def test_training_is_deterministic_for_a_seed(text_ids):
    ids, tokenizer = text_ids
    config = GPTConfig(tokenizer.n_vocab, block_size=8, d_model=16, n_layers=1)
    runs = [
        train_language_model(model_with(config), ids, 5, batch_size=4, seed=seed, progress=False)
        for seed in (3, 3, 4)
    ]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]



def test_on_step_sees_the_model_as_a_shorter_run_leaves_it(text_ids):
    """A copy kept at step 3 of a 6-step run has the weights of a separate 3-step run."""
    ids, tokenizer = text_ids
    config = GPTConfig(tokenizer.n_vocab, block_size=8, d_model=16, n_layers=1)
    kept, steps_seen = {}, []

    def keep(steps_taken, model):
        steps_seen.append(steps_taken)
        if steps_taken == 3:
            kept["model"] = copy.deepcopy(model)

    train_language_model(model_with(config), ids, 6, batch_size=4, progress=False, on_step=keep)
    shorter = model_with(config)
    train_language_model(shorter, ids, 3, batch_size=4, progress=False)
    assert steps_seen == [1, 2, 3, 4, 5, 6]
    for (name, got), expected in zip(kept["model"].state_dict().items(),
                                     shorter.state_dict().values(), strict=True):
        torch.testing.assert_close(got, expected, atol=0, rtol=0, msg=name)
    with pytest.raises(TypeError, match="on_step must be callable or None; got int"):
        train_language_model(shorter, ids, 1, on_step=3)


# -- generation -------------------------------------------------------------------------


def test_generate_keeps_the_prompt_and_gives_valid_ids_reproducibly():
    model = model_with(SMALL, 10)
    prompt = random_ids(2, 3, seed=10)

    def sample(seed):
        return generate(model, prompt, 20, generator=torch.Generator(DEVICE).manual_seed(seed))

    out = sample(0)
    assert out.shape == (2, 23) and out.dtype == torch.long
    assert torch.equal(out[:, :3], prompt)
    assert out.min() >= 0 and out.max() < SMALL.vocab_size
    assert torch.equal(out, sample(0))
    assert not torch.equal(out, sample(1))
    assert generate(model, prompt[0], 4).shape == (7,)
    assert generate(model, random_ids(2, 40), 4).shape == (2, 44)  # longer than block_size
    assert torch.equal(generate(model, prompt, 0), prompt)


def test_an_argmax_draw_gives_the_greedy_continuation(trained, text_ids):
    _, tokenizer = text_ids
    prompt = torch.tensor(tokenizer.encode_ordinary("the dog sat"), device=DEVICE)
    expected = prompt
    with torch.no_grad():
        for _ in range(40):  # past block_size = 16: the context must be cropped
            next_id = trained(expected[-16:])[-1].argmax()
            expected = torch.cat([expected, next_id[None]])
    got = generate(trained, prompt, 40, draw=lambda logits: logits.argmax(-1))
    assert torch.equal(got, expected)
    assert TEXT.startswith(tokenizer.decode(got.tolist())[:30], TEXT.index("the dog"))


def test_generate_runs_in_eval_mode_without_autograd_and_restores_the_mode():
    config = GPTConfig(50, block_size=16, d_model=32, n_layers=2, dropout=0.5)
    model = model_with(config, 11)
    grad_enabled = []
    model.register_forward_hook(lambda *_: grad_enabled.append(torch.is_grad_enabled()))
    prompt = random_ids(4, seed=11)

    def sample():
        return generate(model, prompt, 10, generator=torch.Generator(DEVICE).manual_seed(0))

    in_training = sample()
    assert model.training and grad_enabled == [False] * 10
    model.eval()
    assert torch.equal(sample(), in_training)  # no dropout while generating
    assert not model.training


def test_generate_rejects_a_draw_that_is_not_callable():
    with pytest.raises(TypeError, match="draw must be callable or None; got float"):
        generate(model_with(SMALL), random_ids(4), 2, draw=0.5)


# -- bad input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "error", "match"),
    [
        ({"vocab_size": 0}, ValueError, "vocab_size must be >= 1"),
        ({"block_size": 2.0}, TypeError, "block_size must be an int"),
        ({"n_layers": True}, TypeError, "n_layers must be an int"),
        ({"d_model": 30}, ValueError, "divisible by n_heads; got d_model=30 and n_heads=4"),
        ({"dropout": 1.0}, ValueError, r"dropout must be in \[0, 1\)"),
        ({"dropout": "0.1"}, TypeError, "dropout must be a number"),
        ({"norm_first": 0}, TypeError, "norm_first must be a bool"),
        ({"causal": "no"}, TypeError, "causal must be a bool; got 'no'"),
        ({"positions": "rotary"}, ValueError, "positions must be \"sinusoidal\" or \"learned\""),
    ],
)
def test_config_rejects_bad_sizes(changes, error, match):
    sizes = {"vocab_size": 50, "d_model": 32, "n_heads": 4} | changes
    with pytest.raises(error, match=match):
        GPTConfig(**sizes)


def test_the_course_model_holds_pieces_and_leaves_every_forward_pass_to_a_subclass(text_ids):
    ids, tokenizer = text_ids
    config = dataclasses.replace(SMALL, vocab_size=tokenizer.n_vocab, positions="learned")
    model = TinyGPT(config).to(DEVICE)
    assert model.position_embedding.weight.shape == (config.block_size, config.d_model)
    assert not hasattr(model, "positions")
    for pieces in (model, TinyGPT(dataclasses.replace(config, positions="sinusoidal"))):
        with pytest.raises(NotImplementedError, match="a subclass supplies the forward pass"):
            pieces.to(DEVICE)(ids[:5])

    class Learned(TinyGPT):       # one assembly a subclass may choose: the training loop runs it
        def forward(self, ids):
            E = self.token_embedding.weight
            h = E[ids] + self.position_embedding.weight[: ids.shape[-1]]
            for block in self.blocks:
                h = block(h, causal=True)
            return self.norm(h) @ E.T

    losses = train_language_model(Learned(config).to(DEVICE), ids, steps=3, progress=False)
    assert len(losses) == 3


def test_the_model_wants_a_config():
    with pytest.raises(TypeError, match="config must be a GPTConfig; got dict"):
        TinyGPT({"vocab_size": 50})


@pytest.mark.parametrize(
    ("ids", "error", "match"),
    [
        (torch.zeros(2, 4), TypeError, "integer dtype.*got torch.float32"),
        (torch.zeros(2, 4, dtype=torch.bool), TypeError, "integer dtype.*got torch.bool"),
        ([1, 2, 3], TypeError, "torch.Tensor.*got a list"),
        (torch.tensor([[1, -1, 3]]), ValueError, "0 … vocab_size − 1 = 49; got values from -1"),
        (torch.tensor([1, 50]), ValueError, "0 … vocab_size − 1 = 49; got values from 1 to 50"),
        (torch.zeros(2, 17, dtype=torch.long), ValueError, "at most block_size=16.*\\(2, 17\\)"),
        (torch.zeros(1, 2, 3, dtype=torch.long), ValueError, r"\(batch, n\) or \(n,\)"),
        (torch.zeros(2, 0, dtype=torch.long), ValueError, r"n >= 1; got shape \(2, 0\)"),
    ],
)
def test_bad_ids_get_clear_errors(ids, error, match):
    model = model_with(SMALL)
    if isinstance(ids, torch.Tensor):
        ids = ids.to(DEVICE)
    with pytest.raises(error, match=match):
        model(ids)
    if "block_size" not in match:  # generate crops a long prompt to its last block_size ids
        with pytest.raises(error, match=match):
            generate(model, ids, 1)


def test_bad_arguments_of_the_helpers_get_clear_errors(text_ids):
    model, ids = model_with(SMALL), random_ids(40)
    with pytest.raises(ValueError, match="at least 2 tokens"):
        next_token_loss(model, ids[:1])
    with pytest.raises(TypeError, match="model must be a TinyGPT; got Linear"):
        next_token_loss(torch.nn.Linear(2, 2), ids)
    with pytest.raises(ValueError, match="at least block_size \\+ 1 = 17 tokens; got 10"):
        random_batch(ids[:10], 16, 2)
    with pytest.raises(ValueError, match="1-D"):
        random_batch(ids.view(4, 10), 4, 2)
    with pytest.raises(ValueError, match="lr must be a positive number"):
        train_language_model(model, ids, 1, lr=0)
    with pytest.raises(TypeError, match="steps must be an int"):
        train_language_model(model, ids, 2.5)
    with pytest.raises(ValueError, match="max_new_tokens must be >= 0"):
        generate(model, ids[:3], -1)
