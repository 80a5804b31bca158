"""Transformer pieces: sinusoidal positions, rotary position embeddings, layer
normalisation, the encoder block and the decoder block.

Row vectors as in the lectures: a sequence of n tokens is X of shape (n, d_model), a
batch is (batch, n, d_model), and every position-wise layer acts on each row (token)
on its own. Everything runs on the device of its inputs.

The blocks are ``nn.TransformerEncoderLayer`` and ``nn.TransformerDecoderLayer`` (with
``batch_first=True``) written out with the course's ``MultiHeadAttention``: the same
parameters under the same names, so either loads the other's ``state_dict``. Masks
follow the rest of ``course_utils`` (boolean, True = MAY attend), the opposite of
PyTorch's layers' ``src_mask``, ``tgt_mask`` and ``*_key_padding_mask`` (True = blocked).
"""

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from course_utils.validation import float_tensor, integer, number, positive_int

from .attention import MultiHeadAttention

ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {"relu": F.relu, "gelu": F.gelu}


def sinusoidal_positions(
    n_positions: int, d_model: int, device=None, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """The sinusoidal positional encodings of "Attention is all you need", (n_positions, d_model).

        PE(pos, 2i)     = sin(pos / 10000^(2i / d_model))
        PE(pos, 2i + 1) = cos(pos / 10000^(2i / d_model))

    Row ``pos`` (0, 1, …, n_positions − 1) is added to the embedding of the token at that
    position. Column pair (2i, 2i + 1) is a point turning on the unit circle at the
    angular frequency ω_i = 10000^(−2i/d_model), from one turn per 2π positions (i = 0)
    down to one per 2π·10000. So PE(pos + k) is a linear function of PE(pos), the same
    for every pos: each pair is rotated by the angle k ω_i. With an odd d_model the last
    column is a sine. Computed in float64, returned in ``dtype`` on ``device``.
    """
    integer("n_positions", n_positions, minimum=1)
    positive_int("d_model", d_model)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point torch.dtype; got {dtype!r}")
    position = torch.arange(n_positions, dtype=torch.float64, device=device)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64, device=device)
    angle = position / 10000.0 ** (two_i / d_model)  # (n_positions, ceil(d_model / 2))
    pe = torch.empty(n_positions, d_model, dtype=torch.float64, device=device)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe.to(dtype)


def rotary_embedding(x: torch.Tensor, positions=None, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding (RoPE, Su et al. 2021): x's feature pairs turned by angles
    that grow with the position. x is (..., n, d) with an even d (queries or keys, one row
    per token); returns a tensor of the same shape and dtype.

    Pair i = (x_2i, x_2i+1) of the token at position p turns by the angle p ω_i, with the
    frequencies ω_i = base^(−2i/d) of ``sinusoidal_positions``:

        y_2i     = x_2i cos(p ω_i) − x_2i+1 sin(p ω_i)
        y_2i+1   = x_2i sin(p ω_i) + x_2i+1 cos(p ω_i)

    that is y_2i + i·y_2i+1 = (x_2i + i·x_2i+1) e^{i p ω_i}. With row vectors, y = x R(p)
    for a block-diagonal rotation R(p), and R(m) R(n)ᵀ = R(m − n), so the score of a
    query rotated to position m and a key rotated to position n, ⟨q R(m), k R(n)⟩ =
    q R(m − n) kᵀ, depends on the positions only through m − n.

    ``positions``: the n positions of the rows (a 1-D tensor or sequence of numbers; None:
    0, 1, …, n − 1). Pairs are neighbouring features, as in Su et al. and GPT-J; GPT-NeoX
    and Hugging Face's LLaMA pair feature i with i + d/2 instead (the same rotations on
    permuted features). Angles are computed in float64.
    """
    float_tensor("x", x, min_dim=2)
    n, d = x.shape[-2:]
    if d % 2:
        raise ValueError(f"x must have an even number of features d (pairs rotate); got shape "
                         f"{tuple(x.shape)}")
    if not number("base", base) > 0:
        raise ValueError(f"base must be a positive number; got {base!r}")
    if positions is None:
        positions = torch.arange(n, dtype=torch.float64, device=x.device)
    positions = torch.as_tensor(positions, device=x.device)
    if positions.dtype == torch.bool or positions.is_complex() or positions.shape != (n,):
        raise ValueError(
            f"positions must hold one real number per row of x, shape ({n},); got "
            f"{positions.dtype} of shape {tuple(positions.shape)}"
        )
    two_i = torch.arange(0, d, 2, dtype=torch.float64, device=x.device)
    angle = positions.double()[:, None] / base ** (two_i / d)  # (n, d/2)
    cos, sin = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def layer_norm(
    x: torch.Tensor,
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    eps: float = 1e-5,
) -> torch.Tensor:
    """Layer normalisation over the features of each token, from its formula.

    For each row x (one token, d features; x is (..., d)):

        μ = (1/d) Σ_k x_k,   σ² = (1/d) Σ_k (x_k − μ)²       (the biased variance)
        LN(x) = γ ⊙ (x − μ) / √(σ² + eps) + β

    with γ = ``weight`` and β = ``bias`` of shape (d,) (1 and 0 when None). Each token is
    normalised on its own, whatever the other tokens or sequences of the batch hold;
    batch normalisation instead normalises each feature across tokens. Equals
    ``F.layer_norm(x, (d,), weight, bias, eps)`` and ``nn.LayerNorm(d, eps)``.
    """
    float_tensor("x", x)
    d = x.shape[-1]
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None:
            float_tensor(name, p)
            if p.shape != (d,):
                raise ValueError(
                    f"{name} must have shape (d,) = ({d},), one value per feature of x "
                    f"of shape {tuple(x.shape)}; got shape {tuple(p.shape)}"
                )
    if not number("eps", eps) >= 0:
        raise ValueError(f"eps must be a non-negative number; got {eps!r}")
    mean = x.mean(dim=-1, keepdim=True)
    variance = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    y = (x - mean) / torch.sqrt(variance + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


class TransformerBlock(nn.Module):
    """One transformer encoder block: self-attention and a feed-forward layer, each with
    a residual connection and layer normalisation; batch-first.

    With X of shape (batch, n, d_model) (or (n, d_model)), SA(X) = MultiHead(X, X) (see
    ``course_utils.models.attention.MultiHeadAttention``, here ``self_attn``) and the
    position-wise feed-forward layer FF(X) = act(X W_1 + b_1) W_2 + b_2 (``linear1``:
    d_model → dim_feedforward, ``linear2``: back to d_model), the block computes

        post-LN (``norm_first=False``; the original paper, BERT):
            H = LN_1(X + SA(X)),      Y = LN_2(H + FF(H))
        pre-LN (``norm_first=True``; GPT-2):
            H = X + SA(LN_1(X)),      Y = H + FF(LN_2(H))

    with LN_1 = ``norm1`` and LN_2 = ``norm2`` (``nn.LayerNorm``, the function
    ``layer_norm`` of this module as a layer). In training, dropout is applied to the
    attention weights, after the activation, and to SA and FF before each residual sum,
    as in PyTorch.

    Arguments and parameters are those of ``nn.TransformerEncoderLayer(d_model, nhead,
    dim_feedforward, dropout, activation, layer_norm_eps, batch_first=True,
    norm_first=norm_first)``; ``activation`` is "relu", "gelu" (exact, erf-based) or a
    function. ``forward(x, mask=None, causal=False)``: ``mask`` is boolean, True where
    token i MAY attend to token j, broadcastable to (batch, nhead, n, n), e.g.
    ``real[:, None, None, :]`` for a (batch, n) padding mask ``real`` (True at real
    tokens); ``causal=True`` also keeps j ≤ i only (a decoder-only block). Returns
    (batch, n, d_model).
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
        super().__init__()
        positive_int("d_model", d_model)
        positive_int("nhead", nhead)
        positive_int("dim_feedforward", dim_feedforward)
        if isinstance(activation, str):
            if activation not in ACTIVATIONS:
                raise ValueError(
                    f"activation must be one of {sorted(ACTIVATIONS)} or a function; "
                    f"got {activation!r}"
                )
            activation = ACTIVATIONS[activation]
        elif not callable(activation):
            raise TypeError(f"activation must be a str or a function; got {activation!r}")
        if not isinstance(norm_first, bool):
            raise TypeError(f"norm_first must be a bool; got {norm_first!r}")
        if not number("layer_norm_eps", layer_norm_eps) > 0:
            raise ValueError(f"layer_norm_eps must be a positive number; got {layer_norm_eps!r}")
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout=dropout)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm_first = norm_first
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.activation = activation

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}"

    def _check_input(self, name: str, x: torch.Tensor) -> None:
        float_tensor(name, x, min_dim=2)
        d_model = self.self_attn.embed_dim
        if x.dim() > 3 or x.shape[-1] != d_model:
            raise ValueError(
                f"{name} must be (batch, n, d_model) or (n, d_model) with d_model={d_model}; "
                f"got shape {tuple(x.shape)}"
            )

    def _sa_block(self, x, mask, causal):
        return self.dropout1(self.self_attn(x, mask=mask, causal=causal)[0])

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, causal: bool = False
    ) -> torch.Tensor:
        self._check_input("x", x)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), mask, causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, mask, causal))
        return self.norm2(x + self._ff_block(x))


class DecoderBlock(TransformerBlock):
    """One block of the encoder–decoder transformer's decoder: causal self-attention,
    cross-attention to the encoder's output, and the feed-forward layer; batch-first.

    With the decoder's input X (batch, n, d_model) and the encoder's output M, the
    *memory* (batch, m, d_model), SA(X) = MultiHead(X, X, X) with the causal mask (here
    ``self_attn``) and the cross-attention CA(H, M) = MultiHead(H, M, M) (here
    ``multihead_attn``): the queries come from the decoder, keys and values from the
    encoder, so every decoder position may look at every source token. The block computes

        post-LN (``norm_first=False``):
            H = LN_1(X + SA(X)),   G = LN_2(H + CA(H, M)),   Y = LN_3(G + FF(G))
        pre-LN (``norm_first=True``):
            H = X + SA(LN_1(X)),   G = H + CA(LN_2(H), M),   Y = G + FF(LN_3(G))

    Arguments, parameters and their names are those of ``nn.TransformerDecoderLayer(...,
    batch_first=True)``, so either loads the other's ``state_dict``; the feed-forward
    layer is the encoder block's, with ``dropout3`` after it as in PyTorch.
    ``forward(x, memory, mask=None, memory_mask=None, causal=True)``: ``mask`` (for the
    self-attention, broadcastable to (batch, nhead, n, n)) and ``memory_mask`` (for the
    cross-attention, broadcastable to (batch, nhead, n, m), e.g. ``source_real[:, None,
    None, :]`` to skip the source's padding) are boolean, True = MAY attend. Returns
    (batch, n, d_model).
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", norm_first: bool = False,
                 layer_norm_eps: float = 1e-5):  # fmt: skip
        super().__init__(
            d_model, nhead, dim_feedforward, dropout, activation, norm_first, layer_norm_eps
        )
        self.multihead_attn = MultiHeadAttention(d_model, nhead, dropout=dropout)
        self.norm3 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout3 = nn.Dropout(dropout)

    def _ca_block(self, x, memory, memory_mask):
        return self.dropout2(self.multihead_attn(x, memory, memory, mask=memory_mask)[0])

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
        causal: bool = True,
    ) -> torch.Tensor:
        self._check_input("x", x)
        self._check_input("memory", memory)
        if (x.dim() == 3) != (memory.dim() == 3) or (x.dim() == 3 and len(x) != len(memory)):
            raise ValueError(
                "x and memory must both be batched with the same batch size, or both "
                f"unbatched; got shapes {tuple(x.shape)} and {tuple(memory.shape)}"
            )
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), mask, causal)
            x = x + self._ca_block(self.norm2(x), memory, memory_mask)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, mask, causal))
        x = self.norm2(x + self._ca_block(x, memory, memory_mask))
        return self.norm3(x + self._ff_block(x))
