"""Other libraries' implementations, set up the same way for the tests and the benchmarks."""

import math

import torch
import torch.nn.functional as F
from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
from torch import nn

from course_utils.models.gpt import TinyGPT, check_ids
from course_utils.tokens.pre_tokenizer import CL100K_PATTERN


def train_hugging_face_bpe(text: str, k: int) -> Tokenizer:
    """Hugging Face `tokenizers` byte-level BPE with k merges and cl100k's pre-tokenizer."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(CL100K_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=256 + k,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator([text], trainer=trainer)
    return tokenizer


class AssembledGPT(TinyGPT):
    """``TinyGPT`` with a forward pass, for the tests and the benchmarks (the course ships
    none: notebooks 06 and 09 ask for it): H_0 = √d E[x] + PE, the blocks (causal unless the
    config says ``causal=False``), the final layer norm, and the tied output layer
    H_L Eᵀ. ids (batch, n) or (n,) give logits (batch, n, V) or (n, V)."""

    def _run_block(self, block: nn.Module, h: torch.Tensor) -> torch.Tensor:
        return block(h, causal=self.config.causal)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        ids = check_ids(ids, self.config.vocab_size)
        if ids.shape[-1] > self.config.block_size:
            raise ValueError(f"ids must have at most block_size={self.config.block_size} "
                             f"positions; got shape {tuple(ids.shape)}")
        unbatched = ids.dim() == 1
        ids = ids.unsqueeze(0) if unbatched else ids
        n = ids.shape[-1]
        h = self.token_embedding(ids) * math.sqrt(self.config.d_model) + self.positions[:n]
        for block in self.blocks:
            h = self._run_block(block, h)
        logits = F.linear(self.norm(h), self.token_embedding.weight)
        return logits.squeeze(0) if unbatched else logits


class TorchLayersGPT(AssembledGPT):
    """``TinyGPT`` with PyTorch's ``nn.TransformerEncoderLayer`` (pre-LN, GELU) as its blocks,
    called with a causal mask (True = blocked above the diagonal) unless the config says
    ``causal=False``: the same model, whose ``state_dict`` has the same keys, so it loads a
    ``TinyGPT``'s weights."""

    def _make_block(self) -> nn.Module:
        c = self.config
        return nn.TransformerEncoderLayer(
            c.d_model, c.n_heads, c.dim_feedforward, c.dropout,
            activation="gelu", batch_first=True, norm_first=c.norm_first,
        )  # fmt: skip

    def _run_block(self, block: nn.Module, h: torch.Tensor) -> torch.Tensor:
        if not self.config.causal:
            return block(h)
        n = h.shape[1]
        blocked = torch.ones(n, n, dtype=torch.bool, device=h.device).triu(diagonal=1)
        return block(h, src_mask=blocked, is_causal=True)
