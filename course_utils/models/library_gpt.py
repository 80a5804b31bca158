"""Hugging Face's GPT-2 holding the weights of a course model: an oracle of the checks.

The course's models hold pieces only (``course_utils.models.gpt.TinyGPT``). GPT-2
(``transformers.GPT2LMHeadModel``, with the exact GELU the blocks use) is built from a
config of the same sizes, on the CPU in float64, and the pieces' weights are copied into
it (its ``Conv1D`` layers store the transposes of ``nn.Linear``'s). What it then computes
is Hugging Face's, not the course's.

Transformers is imported only when a check needs it: importing it takes seconds.
"""

import copy

import torch
from torch import nn

__all__ = ["gpt2_holding", "gpt2_logits"]


class _Handed(nn.Module):
    """In a GPT-2 block's place: ``run_block(h, block)`` on one of a course model's blocks."""

    def __init__(self, run_block, block: nn.Module):
        super().__init__()
        self.run_block, self.block = run_block, block

    def forward(self, hidden_states, *args, **kwargs):
        return self.run_block(hidden_states, self.block)


def gpt2_holding(model: nn.Module, table: torch.Tensor, run_block=None) -> nn.Module:
    """GPT-2 holding ``model``'s weights and ``table`` (block_size, d) as its position rows,
    in eval mode, float64, on the CPU; call it as Hugging Face's model. With ``run_block``,
    each of its blocks is ``run_block(h, block)`` on a float64 copy of the model's block
    instead: GPT-2's embeddings, final norm and tied output layer around them."""
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
    if run_block is not None:
        blocks = copy.deepcopy(model.blocks).double().cpu()
        held.h = nn.ModuleList(_Handed(run_block, block) for block in blocks)
    return twin


def gpt2_logits(model: nn.Module, ids: torch.Tensor, run_block=None, positions=True,
                 lifted=False, final_norm=True) -> torch.Tensor:
    """The logits (batch, n, V), float64, of Hugging Face's GPT-2 holding ``model``'s weights,
    its blocks run by ``run_block`` (GPT-2's own without it): its positions P (none without
    ``positions``), the token rows lifted by √d with ``lifted``, no final norm unless
    ``final_norm``."""
    table = model.position_embedding.weight
    twin = gpt2_holding(model, table if positions else torch.zeros_like(table), run_block)
    if not final_norm:
        twin.transformer.ln_f = nn.Identity()
    ids = torch.as_tensor(ids).long().cpu()
    with torch.no_grad():
        if lifted:
            rows = twin.transformer.wte(ids) * model.config.d_model ** 0.5
            return twin(inputs_embeds=rows).logits
        return twin(input_ids=ids).logits
