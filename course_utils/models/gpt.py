"""A tiny GPT's pieces, and what trains and samples a model built from them.

``TinyGPT`` holds the pieces of a decoder-only language model and computes nothing: E, the
V × d token embedding (entries of standard deviation 0.05 at the start), a position table
(the fixed sinusoids PE of ``course_utils.models.transformer.sinusoidal_positions``, or a
table P learned with the rest), L pre-LN blocks and a layer norm. How they assemble into a
forward pass is the students' to write: notebook 06's ``YourGPT`` and notebook 09's
``YourBERT`` are subclasses whose ``forward`` is an answer cell. ``GPTConfig(causal=False)``
records that a model's blocks should run without the causal mask (06 trains such a model
to show the leak); the forward pass reads it.

A forward pass maps n token ids x_1 … x_n (n ≤ ``block_size``) to n rows of logits, one
score per vocabulary entry. When every block is causal, row t depends on x_1 … x_t only, and
softmax(logits_t) is the model's p(x_{t+1} | x_≤t). Training minimises the next-token loss
on windows of n + 1 tokens x_1 … x_{n+1}: the model reads x_1 … x_n, and position t is
scored on x_{t+1} (the last one on the window's extra token x_{n+1}), the cross-entropy

    loss = −(1/n) Σ_{t=1}^{n} log p(x_{t+1} | x_≤t)

averaged over the positions (and the batch). A uniform guess p = 1/V scores ln V
(``uniform_loss``), the baseline a model has to beat. ``generate`` samples new tokens
one at a time from the last position's logits, by a ``draw`` function it is given.

Everything runs on the device of the model; ids passed in must be on that device.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import trange

from course_utils.validation import (
    integer,
    number,
    positive_int,
)

from .transformer import TransformerBlock, sinusoidal_positions


@dataclass(frozen=True)
class GPTConfig:
    """The sizes of a ``TinyGPT``.

    ``vocab_size`` V (token ids 0 … V − 1), ``block_size`` (the longest context, in
    tokens), ``d_model`` d, ``n_layers`` L blocks of ``n_heads`` heads each (d must be
    divisible by it), ``dim_feedforward`` (the width of each block's feed-forward layer)
    and ``dropout`` (in [0, 1), inside the blocks, in training only). ``positions`` is
    "sinusoidal" (the fixed table PE) or "learned" (a table P learned with the rest).
    ``norm_first=False`` builds post-LN blocks instead of GPT's pre-LN ones, for the
    comparison of notebook 06 (the norm stays). ``causal=False`` asks the forward pass to
    leave the causal mask out of every block: every position attends to every position.
    """

    vocab_size: int
    block_size: int = 64
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    dim_feedforward: int = 256
    dropout: float = 0.0
    norm_first: bool = True
    causal: bool = True
    positions: str = "sinusoidal"

    def __post_init__(self):
        for name in ("vocab_size", "block_size", "d_model", "n_layers", "n_heads",
                     "dim_feedforward"):  # fmt: skip
            positive_int(name, getattr(self, name))
        if self.d_model % self.n_heads:
            raise ValueError(
                f"d_model must be divisible by n_heads; got d_model={self.d_model} and "
                f"n_heads={self.n_heads}"
            )
        if not 0.0 <= number("dropout", self.dropout) < 1.0:
            raise ValueError(f"dropout must be in [0, 1); got {self.dropout}")
        if self.positions not in ("sinusoidal", "learned"):
            raise ValueError(
                f'positions must be "sinusoidal" or "learned"; got {self.positions!r}'
            )
        for name in ("norm_first", "causal"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool; got {getattr(self, name)!r}")


class TinyGPT(nn.Module):
    """The pieces of a decoder-only language model; a subclass's ``forward(ids)`` gives the
    next-token logits.

    Layers: ``token_embedding`` E (V × d, initialised N(0, 0.05²)), the non-persistent
    buffer ``positions`` (PE, block_size × d, not saved in the ``state_dict``), ``blocks``
    (L ``TransformerBlock``s, pre-LN with GELU: ``block(h, causal=...)`` runs one on h of
    shape (batch, n, d)) and ``norm`` (a layer norm). With ``positions="learned"`` the
    buffer is replaced by ``position_embedding`` (P, an ``nn.Embedding`` of block_size rows,
    initialised N(0, 0.05²)).

    A subclass's ``forward(ids)`` takes an integer tensor of shape (batch, n) or (n,) with
    1 ≤ n ≤ block_size and 0 ≤ ids < vocab_size and returns the logits, (batch, n, V) or
    (n, V); ``train_language_model`` and ``generate`` call it.
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        if not isinstance(config, GPTConfig):
            raise TypeError(f"config must be a GPTConfig; got {type(config).__name__}")
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.d_model)
        nn.init.normal_(self.token_embedding.weight, std=0.05)
        if config.positions == "learned":
            self.position_embedding = nn.Embedding(config.block_size, config.d_model)
            nn.init.normal_(self.position_embedding.weight, std=0.05)
        else:
            positions = sinusoidal_positions(config.block_size, config.d_model)
            self.register_buffer("positions", positions, persistent=False)
        self.blocks = nn.ModuleList(self._make_block() for _ in range(config.n_layers))
        self.norm = nn.LayerNorm(config.d_model)

    def _make_block(self) -> nn.Module:
        """One block: a ``TransformerBlock`` with GELU, pre-LN unless the config says not."""
        c = self.config
        return TransformerBlock(c.d_model, c.n_heads, c.dim_feedforward, c.dropout,
                                activation="gelu", norm_first=c.norm_first)  # fmt: skip

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError(
            "TinyGPT holds the pieces only: a subclass supplies the forward pass (notebook 06's "
            "YourGPT, notebook 09's YourBERT)"
        )


def check_ids(ids, vocab_size: int) -> torch.Tensor:
    """Require token ids: an integer tensor of shape (batch, n) or (n,), n ≥ 1, with
    0 ≤ ids < vocab_size. Returns them as int64 (what ``nn.Embedding`` looks up)."""
    if not isinstance(ids, torch.Tensor):
        raise TypeError(f"ids must be a torch.Tensor of token ids; got a {type(ids).__name__}")
    if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
        raise TypeError(
            f"ids must have an integer dtype (token ids, e.g. torch.long); got {ids.dtype}"
        )
    if ids.dim() not in (1, 2) or ids.numel() == 0:
        raise ValueError(
            f"ids must have shape (batch, n) or (n,) with n >= 1; got shape {tuple(ids.shape)}"
        )
    low, high = ids.min().item(), ids.max().item()
    if low < 0 or high >= vocab_size:
        raise ValueError(
            f"ids must lie in 0 … vocab_size − 1 = {vocab_size - 1}; got values from "
            f"{low} to {high}"
        )
    return ids.long()


def _check_model(model) -> None:
    if not isinstance(model, TinyGPT):
        raise TypeError(f"model must be a TinyGPT; got {type(model).__name__}")


def uniform_loss(vocab_size: int) -> float:
    """ln V: the next-token loss of a uniform guess p = 1/V, the baseline to beat."""
    return math.log(positive_int("vocab_size", vocab_size))


def next_token_loss(model: TinyGPT, ids: torch.Tensor) -> torch.Tensor:
    """The mean cross-entropy of predicting ids[:, 1:] from ids[:, :-1], a 0-dim tensor.

    ids is (batch, n + 1) or (n + 1,) with 1 ≤ n ≤ block_size: the model reads the first
    n tokens of each row, and position t is scored on the true token t + 1,
    −(1/(batch·n)) Σ log p(x_{t+1} | x_≤t).
    """
    _check_model(model)
    ids = check_ids(ids, model.config.vocab_size)
    if ids.shape[-1] < 2:
        raise ValueError(
            f"ids must hold at least 2 tokens per sequence (an input and its next token); "
            f"got shape {tuple(ids.shape)}"
        )
    logits = model(ids[..., :-1])  # (batch, n, V)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[..., 1:].reshape(-1))


def random_batch(
    ids: torch.Tensor, block_size: int, batch_size: int, generator: torch.Generator | None = None
) -> torch.Tensor:
    """``batch_size`` windows of block_size + 1 consecutive tokens from the 1-D ``ids``.

    Each window starts at a position drawn uniformly (with ``generator``, a CPU
    ``torch.Generator``, for reproducible draws: the same windows on every device).
    Returns (batch_size, block_size + 1) on the device of ids: inputs are [:, :-1],
    targets [:, 1:].
    """
    positive_int("block_size", block_size)
    positive_int("batch_size", batch_size)
    if not isinstance(ids, torch.Tensor):
        raise TypeError(f"ids must be a torch.Tensor of token ids; got a {type(ids).__name__}")
    if ids.dim() != 1:
        raise ValueError(
            f"ids must be 1-D, the token ids of the whole text; got shape {tuple(ids.shape)}"
        )
    if len(ids) < block_size + 1:
        raise ValueError(
            f"ids must hold at least block_size + 1 = {block_size + 1} tokens; got {len(ids)}"
        )
    # The starts are drawn on the generator's device (the CPU without one), so that a seed
    # picks the same windows whatever the device of ids; the windows are built on that device.
    draw_device = generator.device if generator is not None else torch.device("cpu")
    starts = torch.randint(len(ids) - block_size, (batch_size,), generator=generator,
                           device=draw_device).to(ids.device)  # fmt: skip
    offsets = torch.arange(block_size + 1, device=ids.device)
    return ids[starts[:, None] + offsets]  # (batch_size, block_size + 1)


def train_language_model(
    model: TinyGPT,
    ids: torch.Tensor,
    steps: int,
    batch_size: int = 32,
    lr: float = 3e-3,
    seed: int = 0,
    progress: bool = True,
    on_step: Callable[[int, TinyGPT], None] | None = None,
) -> list[float]:
    """Train ``model`` on the 1-D token ids of a text with AdamW; the loss of every step.

    Each step draws ``batch_size`` random windows of block_size + 1 tokens
    (``random_batch``), computes ``next_token_loss``, back-propagates and takes one
    AdamW step with learning rate ``lr``. The windows are drawn from a generator seeded
    with ``seed``, so two runs from the same initial weights give the same losses (with
    dropout > 0, dropout draws from torch's global generator: seed it with
    ``course_utils.device.set_seed``). ``progress`` shows a tqdm bar with the loss.
    ``on_step(steps_taken, model)``, if given, is called after each step (steps_taken
    counts from 1), e.g. to keep a copy of the model part of the way through.
    The model's train/eval mode is restored afterwards.
    """
    _check_model(model)
    integer("steps", steps, minimum=0)
    positive_int("batch_size", batch_size)
    integer("seed", seed, minimum=0)
    if not number("lr", lr) > 0:
        raise ValueError(f"lr must be a positive number; got {lr!r}")
    if on_step is not None and not callable(on_step):
        raise TypeError(f"on_step must be callable or None; got {type(on_step).__name__}")
    ids = check_ids(ids, model.config.vocab_size).to(model.token_embedding.weight.device)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    was_training = model.training
    model.train()
    losses = []
    bar = trange(steps, desc="training", disable=not progress)
    try:
        for _ in bar:
            batch = random_batch(ids, model.config.block_size, batch_size, generator)
            loss = next_token_loss(model, batch)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if on_step is not None:
                on_step(len(losses), model)
            bar.set_postfix(loss=f"{losses[-1]:.3f}", refresh=False)
    finally:
        model.train(was_training)
    return losses


@torch.no_grad()
def generate(
    model: TinyGPT,
    ids: torch.Tensor,
    max_new_tokens: int,
    draw: Callable[[torch.Tensor], torch.Tensor] | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Continue ``ids`` by ``max_new_tokens`` tokens chosen one at a time.

    At each step the model reads the last block_size tokens (at most), and ``draw`` turns
    the last position's logits (batch, V) into the next ids (batch,). Without ``draw`` the
    next token is sampled from the model's own p(x_{t+1} | x_≤t); ``generator`` (a
    ``torch.Generator`` on the model's device) makes those draws reproducible. ids is
    (batch, n) or (n,); returns (batch, n + max_new_tokens) or (n + max_new_tokens,),
    prompt included. Runs in eval mode without autograd; the model's mode is restored
    afterwards.
    """
    _check_model(model)
    ids = check_ids(ids, model.config.vocab_size)
    integer("max_new_tokens", max_new_tokens, minimum=0)
    if draw is not None and not callable(draw):
        raise TypeError(f"draw must be callable or None; got {type(draw).__name__}")
    unbatched = ids.dim() == 1
    if unbatched:
        ids = ids.unsqueeze(0)
    was_training = model.training
    model.eval()
    try:
        for _ in range(max_new_tokens):
            logits = model(ids[:, -model.config.block_size :])[:, -1]  # (batch, V)
            if draw is None:
                next_ids = torch.multinomial(logits.softmax(-1), 1, generator=generator)
            else:
                next_ids = torch.as_tensor(draw(logits), device=ids.device).reshape(-1, 1)
            ids = torch.cat([ids, next_ids], dim=1)
    finally:
        model.train(was_training)
    return ids.squeeze(0) if unbatched else ids
