"""Hugging Face's GPT-2 holding the weights of a course model: an oracle of the checks.

The course's models hold pieces only (``course_utils.models.gpt.TinyGPT``). GPT-2
(``transformers.GPT2LMHeadModel``, with the exact GELU the blocks use) is built from a
config of the same sizes, on the CPU in float64, and the pieces' weights are copied into
it (its ``Conv1D`` layers store the transposes of ``nn.Linear``'s). What it then computes
is Hugging Face's, not the course's.

Transformers is imported only when a check needs it: importing it takes seconds.
"""

import torch
from torch import nn

__all__ = ["gpt2_holding"]


def gpt2_holding(model: nn.Module, table: torch.Tensor) -> nn.Module:
    """GPT-2 holding ``model``'s weights and ``table`` (block_size, d) as its position rows,
    in eval mode, float64, on the CPU; call it as Hugging Face's model."""
    from transformers import GPT2Config, GPT2LMHeadModel

    c = model.config
    rows, d = model.token_embedding.weight.shape
    config = GPT2Config(vocab_size=rows, n_positions=c.block_size, n_embd=d, n_layer=c.n_layers,
                        n_head=c.n_heads, n_inner=c.dim_feedforward, activation_function="gelu",
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                        layer_norm_epsilon=model.norm.eps, bos_token_id=None,
                        eos_token_id=None, tie_word_embeddings=True)  # fmt: skip
    with torch.random.fork_rng(devices=[]):  # building a model draws weights: keep the test's
        twin = GPT2LMHeadModel(config).double().eval()
    held = twin.transformer
    with torch.no_grad():
        held.wte.weight.copy_(model.token_embedding.weight)
        held.wpe.weight.copy_(table)
        for theirs, ours in zip(held.h, model.blocks, strict=True):
            attention = ours.self_attn
            pairs = ((theirs.attn.c_attn, attention.in_proj_weight, attention.in_proj_bias),
                     (theirs.attn.c_proj, attention.out_proj.weight, attention.out_proj.bias),
                     (theirs.mlp.c_fc, ours.linear1.weight, ours.linear1.bias),
                     (theirs.mlp.c_proj, ours.linear2.weight, ours.linear2.bias))  # fmt: skip
            for conv, weight, bias in pairs:
                conv.weight.copy_(weight.T)
                conv.bias.copy_(bias)
            theirs.ln_1.load_state_dict(ours.norm1.state_dict())
            theirs.ln_2.load_state_dict(ours.norm2.state_dict())
        held.ln_f.load_state_dict(model.norm.state_dict())
    return twin
