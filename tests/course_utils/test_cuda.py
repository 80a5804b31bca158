"""The CUDA path: on a GPU the helpers give the CPU's results, to float32 tolerance.

Every test here carries the ``cuda`` marker and is skipped without a CUDA device; ``make
test-gpu`` runs them, beside the unit tests that compare with PyTorch's own modules on the
notebooks' device (``COURSE_DEVICE=cuda``). The oracle is the same helper run on the CPU
from the same weights and inputs, in float32 (and, where the CPU tests compare with them,
PyTorch's own modules on the GPU). Each case is a function ``(device, dtype) → {name:
tensor}`` that builds its weights and inputs on the CPU from fixed seeds and moves them.

Tolerances: float32 on two devices adds and multiplies in different orders, so results
differ by rounding, as float32 differs from float64 on the CPU. ``CASES`` gives each case
about 10× the largest float32-vs-float64 difference measured on the CPU (in the comments);
TF32 stays off, as PyTorch leaves it for float32 matrix products by default.
"""

import copy

import pytest
import torch

from course_utils.device import get_device
from course_utils.models.attention import MultiHeadAttention
from course_utils.models.gpt import GPTConfig, generate, random_batch, train_language_model
from course_utils.models.linear_attention import (
    FMM_FEATURE_MAPS,
    banded_attention,
    fmm_attention,
)
from course_utils.models.minilm import minilm_encoder
from course_utils.models.transformer import DecoderBlock, TransformerBlock
from tests.support.linear_attention import (
    causal_linear_attention,
    linear_attention,
    recurrent_linear_attention,
)
from tests.support.peers import AssembledGPT

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

CPU, CUDA = torch.device("cpu"), torch.device("cuda")


def seeded(*shape, seed=0, device=CPU, dtype=torch.float32):
    """Standard normal values drawn on the CPU (the same on every device), then moved."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator, dtype=torch.float64).to(device, dtype)


def gradients(module, x, loss) -> dict[str, torch.Tensor]:
    """The gradients of ``loss`` with respect to x and every parameter of ``module``."""
    x.grad = None
    module.zero_grad()
    loss.backward()
    return {"grad x": x.grad, **{f"grad {n}": p.grad for n, p in module.named_parameters()}}


# -- the cases ------------------------------------------------------------------------------


def multi_head_attention(device, dtype):
    torch.manual_seed(0)
    module = MultiHeadAttention(32, 4)
    with torch.no_grad():  # biases start at zero: give them values so that they are compared
        module.in_proj_bias.normal_()
        module.out_proj.bias.normal_()
    module = module.to(device, dtype)
    x = seeded(3, 9, 32, device=device, dtype=dtype).requires_grad_()
    memory = seeded(3, 5, 32, seed=1, device=device, dtype=dtype)
    real = torch.arange(5, device=device) < torch.tensor([5, 3, 1], device=device)[:, None]
    out = {
        "fused, causal": module(x, causal=True)[0],
        "cross, padded": module(x, memory, mask=real[:, None, None, :])[0],
    }
    out["steps, causal"], out["weights, causal"] = module(x, causal=True, need_weights=True)
    out.update(gradients(module, x, (out["fused, causal"] ** 2).sum()))
    return out


def encoder_blocks(device, dtype):
    out = {}
    for norm_first in (False, True):
        torch.manual_seed(1)
        block = TransformerBlock(32, 4, 64, dropout=0.0, activation="gelu",
                                 norm_first=norm_first).to(device, dtype)  # fmt: skip
        x = seeded(2, 12, 32, seed=2, device=device, dtype=dtype).requires_grad_()
        y = block(x, causal=True)
        out[f"norm_first={norm_first}"] = y
        grads = gradients(block, x, (y**2).sum())
        out.update({f"norm_first={norm_first}, {name}": g for name, g in grads.items()})
    return out


def decoder_block(device, dtype):
    torch.manual_seed(2)
    block = DecoderBlock(32, 4, 64, dropout=0.0).to(device, dtype)
    x, memory = seeded(2, 7, 32, seed=3, device=device, dtype=dtype), seeded(2, 10, 32, seed=4)
    memory = memory.to(device, dtype)
    real = torch.arange(10, device=device) < torch.tensor([10, 6], device=device)[:, None]
    return {"output": block(x, memory, memory_mask=real[:, None, None, :])}


def tiny_gpt_training(device, dtype):
    """Five AdamW steps from the same weights on the same windows (a CPU generator draws
    them): the losses, the weights after them, and the logits of the trained model."""
    config = GPTConfig(vocab_size=40, block_size=16, d_model=32, n_layers=2, n_heads=4,
                       dim_feedforward=64)  # fmt: skip
    torch.manual_seed(3)
    model = AssembledGPT(config).to(device, dtype)
    generator = torch.Generator().manual_seed(4)
    ids = torch.randint(config.vocab_size, (500,), generator=generator).to(device)
    losses = train_language_model(model, ids, steps=5, batch_size=8, lr=3e-3, progress=False)
    with torch.no_grad():
        logits = model(ids[:16])
    return {
        "losses": torch.tensor(losses, dtype=torch.float64),
        "logits after training": logits,
        "embedding after training": model.token_embedding.weight.detach(),
    }


def linear_attention_forms(device, dtype):
    q, k, v = (seeded(2, 4, 150, 16, seed=s, device=device, dtype=dtype) for s in (5, 6, 7))
    q, k = q / 2, k / 2  # features of moderate size (the positive random features' variance)
    w = seeded(16, 32, seed=8, device=device, dtype=dtype)

    def positive(x):  # 32 positive features of 16 numbers
        return torch.exp(x @ w - (x * x).sum(-1, keepdim=True) / 2)

    return {
        "non-causal": linear_attention(q, k, v),
        "causal, chunks of 16": linear_attention(q, k, v, causal=True, chunk_size=16),
        "recurrent": recurrent_linear_attention(q[..., :20, :], k[..., :20, :], v[..., :20, :]),
        "positive features": linear_attention(q, k, v, positive, causal=True),
        "banded": banded_attention(q, k, v, bandwidth=5, causal=True),
        "FMMformer": fmm_attention(q, k, v, 5, causal_linear_attention,
                                   feature_maps=FMM_FEATURE_MAPS, causal=True),
    }


# (case, absolute tolerance): about 10× the largest |float32 − float64| over the case's
# outputs measured on the CPU (in the comment; MHA's is a gradient of a sum of squares)
CASES = [
    (multi_head_attention, 4e-4),  # 3.6e-5
    (encoder_blocks, 1e-4),  # 9.7e-6
    (decoder_block, 4e-6),  # 3.8e-7
    (tiny_gpt_training, 1e-5),  # 3.8e-7, more margin: five optimiser steps
    (linear_attention_forms, 1e-5),  # 9.9e-7
]


@pytest.mark.parametrize(("case", "atol"), CASES, ids=[case.__name__ for case, _ in CASES])
def test_cuda_gives_the_cpus_results(case, atol):
    on_cuda, on_cpu = case(CUDA, torch.float32), case(CPU, torch.float32)
    assert on_cuda.keys() == on_cpu.keys()
    for name, got in on_cuda.items():
        if name != "losses":  # Python floats, gathered in a CPU tensor by the case
            assert got.device.type == "cuda", f"{case.__name__}: {name} came back on {got.device}"
        torch.testing.assert_close(
            got.cpu(), on_cpu[name], atol=atol, rtol=1e-5,
            msg=lambda message, name=name: f"{case.__name__}, {name}: {message}",
        )  # fmt: skip


def test_multi_head_attention_on_cuda_equals_pytorchs_module_there():
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(32, 4, batch_first=True).to(CUDA)
    ours = MultiHeadAttention(32, 4).to(CUDA)
    ours.load_state_dict(theirs.state_dict())
    x = seeded(3, 9, 32, device=CUDA)
    blocked = torch.ones(9, 9, dtype=torch.bool, device=CUDA).triu(1)  # nn: True = blocked
    expected, expected_weights = theirs(x, x, x, attn_mask=blocked, average_attn_weights=False)
    for need_weights in (False, True):
        got, weights = ours(x, causal=True, need_weights=need_weights)
        torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(weights, expected_weights, atol=1e-5, rtol=1e-5)


def test_blocks_on_cuda_equal_pytorchs_layers_there():
    torch.manual_seed(1)
    encoder = torch.nn.TransformerEncoderLayer(32, 4, 64, 0.0, "gelu", batch_first=True)
    decoder = torch.nn.TransformerDecoderLayer(32, 4, 64, 0.0, batch_first=True)
    with torch.no_grad():  # give every parameter a non-default value (biases start at 0)
        for p in [*encoder.parameters(), *decoder.parameters()]:
            p.add_(torch.randn_like(p) * 0.3)
    ours_encoder = TransformerBlock(32, 4, 64, 0.0, "gelu")
    ours_decoder = DecoderBlock(32, 4, 64, 0.0)
    ours_encoder.load_state_dict(encoder.state_dict())
    ours_decoder.load_state_dict(decoder.state_dict())
    for module in (encoder, decoder, ours_encoder, ours_decoder):
        module.to(CUDA).eval()
    x, memory = seeded(2, 7, 32, seed=1, device=CUDA), seeded(2, 10, 32, seed=2, device=CUDA)
    future = torch.ones(7, 7, dtype=torch.bool, device=CUDA).triu(1)  # nn: True = blocked
    torch.testing.assert_close(
        ours_encoder(x, causal=True), encoder(x, src_mask=future), atol=1e-5, rtol=1e-5
    )
    torch.testing.assert_close(
        ours_decoder(x, memory), decoder(x, memory, tgt_mask=future), atol=1e-5, rtol=1e-5
    )


def test_gpt_windows_are_the_cpus_and_generation_repeats_with_a_cuda_generator():
    ids = torch.randint(40, (300,), generator=torch.Generator().manual_seed(0))
    windows = [random_batch(x, 16, 8, torch.Generator().manual_seed(1)) for x in (ids, ids.cuda())]
    assert windows[1].device.type == "cuda"
    assert torch.equal(windows[1].cpu(), windows[0])
    torch.manual_seed(2)
    model = AssembledGPT(GPTConfig(vocab_size=40, block_size=16, d_model=32)).to(CUDA)
    runs = [generate(model, ids[:5].cuda(), 20, generator=torch.Generator(CUDA).manual_seed(3))
            for _ in range(2)]  # fmt: skip
    assert runs[0].device.type == "cuda" and runs[0].shape == (25,)
    assert torch.equal(runs[0], runs[1])


def test_minilm_on_cuda_gives_the_cpus_and_berts_hidden_states(oracle):
    tokenizer, bert = oracle
    sentences = ["The dog barked.", "Attention lets every token look at every other token."]
    batch = tokenizer(sentences, padding=True, return_tensors="pt")
    ids, mask = batch["input_ids"], batch["attention_mask"]
    with torch.no_grad():
        on_cpu = minilm_encoder("cpu")(ids, mask)
        on_cuda = minilm_encoder("cuda")(ids.to(CUDA), mask.to(CUDA))
        bert_on_cuda = copy.deepcopy(bert).to(CUDA)(input_ids=ids.to(CUDA),
                                                      attention_mask=mask.to(CUDA))  # fmt: skip
    assert on_cuda.device.type == "cuda"
    # 1e-4: the bound tests/course_utils/models/test_minilm.py holds the CPU to against BertModel
    # (float32 is
    # 4e-6 from float64 on the CPU for these sentences)
    torch.testing.assert_close(on_cuda.cpu(), on_cpu, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(on_cuda, bert_on_cuda.last_hidden_state, atol=1e-4, rtol=1e-4)


def test_the_notebooks_device_is_cuda_when_asked(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "cuda")
    assert get_device() == CUDA
    assert minilm_encoder().word_embeddings.weight.device.type == "cuda"
