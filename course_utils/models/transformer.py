"""Transformer pieces built on the libraries' own: the sinusoidal positions and rotary
position embeddings of Hugging Face's model files, and PyTorch's encoder and decoder layers
with the course's attention.

Row vectors as in the lectures: a sequence of n tokens is X of shape (n, d_model), a
batch is (batch, n, d_model). Everything runs on the device of its inputs.

Notebook 06 asks for each of these as an exercise; the course holds no version of its
own. ``sinusoidal_positions`` is the table of DistilBERT's model file,
``rotary_embedding`` GPT-J's rotation, and the blocks are ``nn.TransformerEncoderLayer``
and ``nn.TransformerDecoderLayer`` (``batch_first=True``): PyTorch's forward passes, with
the course's ``MultiHeadAttention`` as their attention. The parameters keep PyTorch's
names, so a block and PyTorch's layer load each other's ``state_dict``. Masks follow the
rest of ``course_utils`` (boolean, True = MAY attend), the opposite of PyTorch's layers'
``src_mask``, ``tgt_mask`` and ``*_key_padding_mask`` (True = blocked).
"""

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from course_utils.validation import bool_tensor, float_tensor, integer, number, positive_int

from .attention import MultiHeadAttention

ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {"relu": F.relu, "gelu": F.gelu}


def sinusoidal_positions(
    n_positions: int, d_model: int, device=None, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """The sinusoidal positional encodings of "Attention is all you need", (n_positions,
    d_model): row pos is PE(pos), positions 0 … n_positions − 1.

    Hugging Face's table (``create_sinusoidal_embeddings`` of DistilBERT's model file),
    which holds float32 values (exact to about 1e-7), returned in ``dtype`` on ``device``.
    """
    from transformers.models.distilbert.modeling_distilbert import create_sinusoidal_embeddings

    integer("n_positions", n_positions, minimum=1)
    positive_int("d_model", d_model)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point torch.dtype; got {dtype!r}")
    table = torch.empty(n_positions, d_model, device=device, dtype=dtype)  # filled by NumPy
    return create_sinusoidal_embeddings(n_positions, d_model, table)


def rotary_embedding(x: torch.Tensor, positions=None) -> torch.Tensor:
    """Rotary position embedding (RoPE, Su et al. 2021) of x (..., n, d), d even: queries
    or keys, one row per token, row j turned to the position ``positions[j]`` (a 1-D
    sequence or tensor of n non-negative integers; None: 0, 1, …, n − 1). Returns a tensor
    of x's shape and dtype.

    Hugging Face's GPT-J rotation (``apply_rotary_pos_emb``, which turns neighbouring
    features together), with the sines and cosines of ``sinusoidal_positions``' table (so
    exact to about 1e-7).
    """
    from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb

    float_tensor("x", x, min_dim=2)
    n, d = x.shape[-2:]
    if d % 2:
        raise ValueError(f"x must have an even number of features d (pairs rotate); got shape "
                         f"{tuple(x.shape)}")
    positions = torch.arange(n, device=x.device) if positions is None else torch.as_tensor(
        positions, device=x.device)
    if positions.shape != (n,) or positions.dtype.is_floating_point or positions.is_complex() \
            or positions.dtype == torch.bool or (n and positions.min() < 0):
        raise ValueError(
            f"positions must hold one non-negative integer per row of x, shape ({n},); got "
            f"{positions.dtype} of shape {tuple(positions.shape)}"
        )
    table = sinusoidal_positions(int(positions.max()) + 1, d, device=x.device, dtype=x.dtype)
    sin, cos = table[positions, 0::2], table[positions, 1::2]          # (n, d/2) each
    rows = x.reshape(-1, n, 1, d)            # GPT-J's (batch, n, heads, d), with one head
    return apply_rotary_pos_emb(rows, sin[None], cos[None]).reshape(x.shape)


def _check_sequence(name: str, x: torch.Tensor, d_model: int) -> None:
    float_tensor(name, x, min_dim=2)
    if x.dim() > 3 or x.shape[-1] != d_model:
        raise ValueError(
            f"{name} must be (batch, n, d_model) or (n, d_model) with d_model={d_model}; "
            f"got shape {tuple(x.shape)}"
        )


def _blocked(mask: torch.Tensor | None) -> torch.Tensor | None:
    """The course's mask (True = may attend) in PyTorch's convention (True = blocked)."""
    return None if mask is None else ~bool_tensor("mask", mask)


def _allowed(blocked: torch.Tensor | None) -> torch.Tensor | None:
    """A mask as PyTorch's layers hand it to their attention (True, or −∞ where a float
    mask is added to the scores, = blocked) in the course's convention (True = may attend)."""
    return None if blocked is None else blocked == 0


def _arguments(dim_feedforward, activation, norm_first, layer_norm_eps):
    """Check the arguments PyTorch's layers take less strictly; the activation as a function."""
    positive_int("dim_feedforward", dim_feedforward)
    if isinstance(activation, str):
        if activation not in ACTIVATIONS:
            raise ValueError(
                f"activation must be one of {sorted(ACTIVATIONS)} or a function; got {activation!r}"
            )
        activation = ACTIVATIONS[activation]
    elif not callable(activation):
        raise TypeError(f"activation must be a str or a function; got {activation!r}")
    if not isinstance(norm_first, bool):
        raise TypeError(f"norm_first must be a bool; got {norm_first!r}")
    if not number("layer_norm_eps", layer_norm_eps) > 0:
        raise ValueError(f"layer_norm_eps must be a positive number; got {layer_norm_eps!r}")
    return activation


class TransformerBlock(nn.TransformerEncoderLayer):
    """One transformer encoder block: ``nn.TransformerEncoderLayer(d_model, nhead,
    dim_feedforward, dropout, activation, layer_norm_eps, batch_first=True,
    norm_first=norm_first)`` with the course's ``MultiHeadAttention`` as ``self_attn``.

    Its parts are PyTorch's: ``self_attn`` (called as ``self_attn(h, mask=..., causal=...)``,
    notebook 05's), ``linear1``, ``activation``, ``linear2``, ``norm1``, ``norm2`` and
    ``norm_first`` (post-LN when False, as BERT; pre-LN when True, as GPT-2), and its
    forward is PyTorch's; ``activation`` is "relu", "gelu" (exact, erf-based) or a function.
    ``forward(x, mask=None, causal=False)``: x is (batch, n, d_model) or (n, d_model);
    ``mask`` is boolean, True where token i MAY attend to token j, broadcastable to (batch,
    nhead, n, n); ``causal=True`` also keeps j ≤ i only (a decoder-only block).
    Returns x's shape.
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[torch.Tensor], torch.Tensor] = "relu",
        norm_first: bool = False,
        layer_norm_eps: float = 1e-5,
    ):
        attention = MultiHeadAttention(d_model, nhead, dropout=dropout)  # checks those three
        activation = _arguments(dim_feedforward, activation, norm_first, layer_norm_eps)
        # PyTorch's layer draws weights for an attention of its own: those draws are undone,
        # so that a seed gives the weights it always gave (attention, linear1, linear2).
        with torch.random.fork_rng(devices=[]):
            super().__init__(d_model, nhead, dim_feedforward, dropout, activation,
                             layer_norm_eps, batch_first=True, norm_first=norm_first)
        self.self_attn = attention
        self.linear1.reset_parameters()
        self.linear2.reset_parameters()

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}"

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        """PyTorch's self-attention step, with the course's attention and mask."""
        return self.dropout1(self.self_attn(x, mask=_allowed(attn_mask), causal=is_causal)[0])

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, causal: bool = False
    ) -> torch.Tensor:
        _check_sequence("x", x, self.self_attn.embed_dim)
        # PyTorch's fused inference kernel reads nn.MultiheadAttention's internals; its plain
        # path calls _sa_block, whatever the block's self_attn is (notebook 07 swaps it).
        enabled = torch.backends.mha.get_fastpath_enabled()
        torch.backends.mha.set_fastpath_enabled(False)
        try:
            return super().forward(x, src_mask=_blocked(mask), is_causal=causal)
        finally:
            torch.backends.mha.set_fastpath_enabled(enabled)


class DecoderBlock(nn.TransformerDecoderLayer):
    """One block of the encoder–decoder transformer's decoder: ``nn.TransformerDecoderLayer
    (..., batch_first=True)`` with the course's ``MultiHeadAttention`` as its causal
    self-attention ``self_attn`` and its cross-attention ``multihead_attn``, whose queries
    come from the decoder and keys and values from the encoder's output, the *memory*.

    Arguments, parts and forward are PyTorch's, as for :class:`TransformerBlock`.
    ``forward(x, memory, mask=None, memory_mask=None, causal=True)``: x is (batch, n,
    d_model), memory (batch, m, d_model) (or both without the batch axis); ``mask`` (for
    the self-attention, broadcastable to (batch, nhead, n, n)) and ``memory_mask`` (for the
    cross-attention, broadcastable to (batch, nhead, n, m)) are boolean, True = MAY attend.
    Returns
    (batch, n, d_model).
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", norm_first: bool = False,
                 layer_norm_eps: float = 1e-5):  # fmt: skip
        attention = MultiHeadAttention(d_model, nhead, dropout=dropout)
        activation = _arguments(dim_feedforward, activation, norm_first, layer_norm_eps)
        with torch.random.fork_rng(devices=[]):  # as in TransformerBlock, then the cross-attention
            super().__init__(d_model, nhead, dim_feedforward, dropout, activation,
                             layer_norm_eps, batch_first=True, norm_first=norm_first)
        self.self_attn = attention
        self.linear1.reset_parameters()
        self.linear2.reset_parameters()
        self.multihead_attn = MultiHeadAttention(d_model, nhead, dropout=dropout)

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}"

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        """PyTorch's self-attention step, with the course's attention and mask."""
        return self.dropout1(self.self_attn(x, mask=_allowed(attn_mask), causal=is_causal)[0])

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        """PyTorch's cross-attention step, with the course's attention and mask."""
        return self.dropout2(self.multihead_attn(x, mem, mem, mask=_allowed(attn_mask))[0])

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
        causal: bool = True,
    ) -> torch.Tensor:
        d_model = self.self_attn.embed_dim
        _check_sequence("x", x, d_model)
        _check_sequence("memory", memory, d_model)
        if (x.dim() == 3) != (memory.dim() == 3) or (x.dim() == 3 and len(x) != len(memory)):
            raise ValueError(
                "x and memory must both be batched with the same batch size, or both "
                f"unbatched; got shapes {tuple(x.shape)} and {tuple(memory.shape)}"
            )
        if not isinstance(causal, bool):
            raise TypeError(f"causal must be a bool; got {causal!r}")
        return super().forward(x, memory, tgt_mask=_blocked(mask),
                               memory_mask=_blocked(memory_mask), tgt_is_causal=causal)
