"""The tiny GPT of ``course_utils.models.gpt`` with linear or FMMformer attention, to train.

Linear attention and FMMformer are meant to be trained with the attention they use: the
queries and keys learn to work with the kernel φ(q)ᵀφ(k), and FMMformer learns its blend
weights with them. ``AttentionGPT(config, attention, linear_attention=f)`` is
``TinyGPT`` with every block's self-attention computed one of three ways, from the same
parameters W_Q, W_K, W_V, W_O (those of ``MultiHeadAttention``), so that the three models
differ in the attention alone, or left out, as a control:

    "softmax"  head = softmax(Q Kᵀ / √d_h) V, causal            (TinyGPT itself)
    "linear"   head = f(q, k, v, elu_feature_map): the caller's linear attention, causal
               for a causal model (notebook 07: the student's own causal_linear_attention),
               φ = elu + 1, no 1/√d_h scale
    "fmm"      head = w₁ B V + Σ_l w₂,l · f(q, k, v, φ_l)
               B: causal banded softmax, keys i − bandwidth … i (``banded_attention``);
               φ_l: FMMformer's three maps (``FMM_FEATURE_MAPS``); w₁ and the w₂,l are
               learned per head, kept > 0 as softplus of a free parameter
    "none"     no attention: the blocks' attention adds 0, so each position's prediction
               comes from its own token and position alone (what the feed-forward
               layers make of them): what the others gain over it, attention earned

(``fmm_attention`` computes the blend). Attention-weight dropout does not apply: no
N × N matrix of weights is ever formed.
"""

import torch
import torch.nn.functional as F
from torch import nn

from course_utils.validation import integer

from .attention import MultiHeadAttention
from .gpt import GPTConfig, TinyGPT
from .linear_attention import FMM_FEATURE_MAPS, elu_feature_map, fmm_attention

ATTENTIONS = ("softmax", "linear", "fmm", "none")


def _inverse_softplus(y: float) -> float:
    """The x with softplus(x) = log(1 + eˣ) = y, for y > 0."""
    return float(torch.log(torch.expm1(torch.tensor(y))))


class KernelSelfAttention(MultiHeadAttention):
    """Multi-head self-attention whose heads use linear or FMMformer attention.

    ``kind`` is "linear" or "fmm"; ``linear_attention(q, k, v, feature_map)`` is the
    caller's linear attention, which the heads run as it is: causal if the caller's
    ``forward`` calls are (a decoder's), non-causal otherwise. ``bandwidth`` is the near
    field's reach for "fmm" (query i sees the keys i − bandwidth … i exactly when causal).
    The blend weights of "fmm" start at w₁ = 1/2 and w₂,l = 1/(2m) for the m maps.
    ``forward`` takes no mask: the only pattern it knows is ``causal``.
    """

    def __init__(self, embed_dim: int, num_heads: int, kind: str, linear_attention,
                 bandwidth: int = 8):
        super().__init__(embed_dim, num_heads)
        if kind not in ("linear", "fmm"):
            raise ValueError(f"kind must be 'linear' or 'fmm'; got {kind!r}")
        if not callable(linear_attention):
            raise TypeError(
                f"linear_attention must be callable; got {type(linear_attention).__name__}")
        self.kind = kind
        self.linear_attention = linear_attention
        self.bandwidth = integer("bandwidth", bandwidth, minimum=0)
        if kind == "fmm":
            maps = len(FMM_FEATURE_MAPS)
            self.near_weight = nn.Parameter(
                torch.full((num_heads, 1, 1), _inverse_softplus(0.5)))
            self.far_weights = nn.Parameter(
                torch.full((maps, num_heads, 1, 1), _inverse_softplus(0.5 / maps)))

    def extra_repr(self) -> str:
        reach = f", bandwidth={self.bandwidth}" if self.kind == "fmm" else ""
        return f"{super().extra_repr()}, kind={self.kind!r}{reach}"

    def attend(self, q, k, v, mask=None, causal=False):
        """The heads by linear or FMM attention: (batch, heads, n_q, d_h)."""
        if mask is not None:
            raise ValueError(f"{self.kind} attention takes no mask, only causal=True or False")
        attend = self.linear_attention
        if self.kind == "linear":
            return torch.as_tensor(attend(q, k, v, elu_feature_map)).to(v)
        return fmm_attention(
            q, k, v, self.bandwidth, attend, w_near=F.softplus(self.near_weight),
            w_far=list(F.softplus(self.far_weights)), feature_maps=FMM_FEATURE_MAPS,
            causal=causal,
        )  # fmt: skip

    def forward(self, query, key=None, value=None, mask=None, causal=False, need_weights=False):
        if need_weights:
            raise ValueError(f"{self.kind} attention forms no matrix of weights to return")
        return super().forward(query, key, value, mask=mask, causal=causal)


class NoAttention(nn.Module):
    """A stand-in for a block's ``self_attn`` that attends to nothing: its output is 0."""

    def __init__(self, embed_dim: int):
        super().__init__()
        self.embed_dim = embed_dim

    def forward(self, query, key=None, value=None, mask=None, causal=False, need_weights=False):
        return torch.zeros_like(query), None


class AttentionGPT(TinyGPT):
    """``TinyGPT`` whose blocks use ``attention``: "softmax", "linear", "fmm" or "none".

    "softmax" is ``TinyGPT`` unchanged. For "linear" and "fmm" each block's ``self_attn``
    is a ``KernelSelfAttention`` of the same size (and, for "fmm", ``bandwidth``) that
    runs ``linear_attention`` (required for those two: causal when ``config.causal`` is);
    for "none" it is a ``NoAttention``. Built under
    the same ``torch.manual_seed``, the three models start from the same embeddings and
    the same W_Q, W_K, W_V, W_O: each block draws them as ``TinyGPT``'s does, and the
    attention that replaces its ``self_attn`` takes them over without drawing anything.
    """

    def __init__(self, config: GPTConfig, attention: str = "softmax", bandwidth: int = 8,
                 linear_attention=None):
        if attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {ATTENTIONS}; got {attention!r}")
        if attention in ("linear", "fmm") and linear_attention is None:
            raise ValueError(f"attention={attention!r} runs a linear attention: pass "
                             "linear_attention(q, k, v, feature_map)")
        self.attention = attention
        self.linear_attention = linear_attention
        self.bandwidth = integer("bandwidth", bandwidth, minimum=0)
        super().__init__(config)

    def _make_block(self) -> nn.Module:
        block = super()._make_block()
        if self.attention == "none":
            block.self_attn = NoAttention(self.config.d_model)
        elif self.attention != "softmax":
            c = self.config
            with torch.random.fork_rng(devices=[]):  # its own draws are overwritten: no draw
                kernel = KernelSelfAttention(c.d_model, c.n_heads, self.attention,
                                             self.linear_attention, self.bandwidth)
            kernel.load_state_dict(block.self_attn.state_dict(), strict=False)
            block.self_attn = kernel
        return block
