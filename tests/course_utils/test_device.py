"""Device choice, its override, seeding, the quick-size switch, and the helpers' tensors on
their inputs' device."""

import random
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._device import _device_constructors
from torch.utils._pytree import tree_flatten

import course_utils
import course_utils.models.attention
from course_utils import device as device_module
from course_utils.device import cpu_threads, get_device, set_seed
from course_utils.models.attention import MultiHeadAttention, attention_weights
from course_utils.models.gpt import (
    GPTConfig,
    generate,
    next_token_loss,
    random_batch,
    train_language_model,
)
from course_utils.models.linear_attention import (
    FMM_FEATURE_MAPS,
    band_mask,
    banded_attention,
    fmm_attention,
)
from course_utils.models.minilm import MiniLMConfig, MiniLMEncoder
from course_utils.models.transformer import (
    DecoderBlock,
    TransformerBlock,
    rotary_embedding,
    sinusoidal_positions,
)
from course_utils.quick import is_quick, quick_or_full
from course_utils.words.skipgram import keep_probability
from course_utils.words.skipgram_training import noise_table
from tests.support.linear_attention import (
    causal_linear_attention,
    linear_attention,
    recurrent_linear_attention,
)
from tests.support.peers import AssembledGPT


def test_override_to_cpu(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "CPU")
    assert get_device() == torch.device("cpu")


def test_automatic_choice_prefers_cuda_then_mps_then_cpu(monkeypatch):
    monkeypatch.delenv("COURSE_DEVICE", raising=False)
    present = set()
    monkeypatch.setattr(device_module, "_available", lambda name: name == "cpu" or name in present)
    assert get_device().type == "cpu"
    present.add("mps")
    assert get_device().type == "mps"
    present.add("cuda")
    assert get_device().type == "cuda"


def test_unknown_device_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "tpu")
    with pytest.raises(ValueError, match="must be one of cpu, cuda, mps; got 'tpu'"):
        get_device()


def test_missing_device_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "cuda")
    monkeypatch.setattr(device_module, "_available", lambda name: name == "cpu")
    with pytest.raises(ValueError, match="no cuda device is available"):
        get_device()


def test_set_seed_repeats_python_numpy_and_torch():
    def draw():
        return random.random(), np.random.rand(), torch.rand(1).item()

    set_seed(7)
    first = draw()
    set_seed(7)
    assert draw() == first
    set_seed(8)
    assert draw() != first


@pytest.mark.parametrize(("seed", "error"), [(1.5, TypeError), (True, TypeError), (-1, ValueError)])
def test_bad_seed(seed, error):
    with pytest.raises(error, match="seed"):
        set_seed(seed)


@pytest.mark.parametrize(
    ("env", "quick"),
    [
        ({}, False),
        ({"COURSE_QUICK": "1"}, True),
        ({"COURSE_QUICK": "0"}, False),
        ({"COURSE_QUICK": ""}, False),
        ({"NBGRADER_EXECUTION": "autograde"}, True),
        ({"NBGRADER_EXECUTION": "validate", "COURSE_QUICK": "0"}, True),
    ],
)
def test_quick_sizes(monkeypatch, env, quick):
    for name in ("COURSE_QUICK", "NBGRADER_EXECUTION"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert is_quick() is quick
    assert quick_or_full(quick="small", full="big") == ("small" if quick else "big")


def test_cpu_threads_is_restored_even_after_an_error():
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError), cpu_threads(1):
        assert torch.get_num_threads() == 1
        raise RuntimeError("inside")
    assert torch.get_num_threads() == before
    with cpu_threads(None):
        assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads must be >= 1"), cpu_threads(0):
        pass


# -- tensors created inside the helpers land on the inputs' device, in their dtype ------------
#
# A helper that calls torch.zeros(n) (or arange, tensor, randn, …) without device= gets a
# tensor on torch's default device, the CPU: on a GPU it then fails, or silently computes
# on the CPU. To see this without a GPU, ``CreatedTensors`` moves the default device of the
# calls that course_utils itself makes to the meta device, and records every tensor those
# calls return: run on CPU inputs, everything must stay on the CPU. Inputs in float64 catch
# a float32 default dtype the same way. Run on meta inputs (where a helper needs no values),
# it also catches a device="cpu" or a .cpu() written into a helper.

COURSE_UTILS = str(Path(course_utils.__file__).parent)
# the functions that place their result on torch's default device (torch.set_default_device's list)
DEFAULT_DEVICE_CONSTRUCTORS = _device_constructors()
# given a tensor, these two keep its device (where torch.set_default_device would move it)
CONVERSIONS = {torch.as_tensor, torch.asarray}


class CreatedTensors(TorchFunctionMode):
    """Inside ``with CreatedTensors() as probe:``, the torch calls written in course_utils
    that would use the default device use the meta device instead, and ``probe.created``
    lists ``(where, device, dtype)`` for every tensor such a call returns."""

    def __init__(self):
        super().__init__()
        self.created: list[tuple[str, torch.device, torch.dtype]] = []

    def __enter__(self):
        super().__enter__()
        return self

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        caller = sys._getframe(1).f_code
        if not caller.co_filename.startswith(COURSE_UTILS):
            return func(*args, **kwargs)
        converts_a_tensor = func in CONVERSIONS and isinstance(args[0], torch.Tensor)
        if func in DEFAULT_DEVICE_CONSTRUCTORS and kwargs.get("device") is None:
            kwargs["device"] = args[0].device if converts_a_tensor else "meta"
        result = func(*args, **kwargs)
        where = f"{Path(caller.co_filename).name}:{caller.co_name}: {func.__name__}"
        for value in tree_flatten(result)[0]:
            if isinstance(value, torch.Tensor):
                self.created.append((where, value.device, value.dtype))
        return result


def strays(call, device: str, dtype: torch.dtype | None = None) -> list[str]:
    """The tensors that ``call()`` creates in course_utils off ``device`` or, if floating-point,
    not in ``dtype`` (when given): empty when all is well."""
    with CreatedTensors() as probe:
        try:
            call()
        except Exception as error:  # a stray tensor often makes the helper fail: show both
            found = [f"{w} on {d}, {t}" for w, d, t in probe.created if d.type != device]
            if not found:
                raise
            raise AssertionError(f"{error!r} after tensors created off {device}: {found}") from None
    assert probe.created, "the probe saw no tensor created in course_utils"
    return [
        f"{where} on {on}, {kind}"
        for where, on, kind in probe.created
        if on.type != device or (dtype and kind.is_floating_point and kind != dtype)
    ]


def seeded(*shape, device, dtype, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator, dtype=dtype).to(device)


def attention_functions(device, dtype):
    q, k, v = (seeded(2, 5, 4, device=device, dtype=dtype, seed=s) for s in range(3))
    allowed = torch.ones(5, 5, dtype=torch.bool, device=device)
    return lambda: (
        attention_weights(q, k, mask=allowed, causal=True),
        attention_weights(q, k[:, :3], causal=True, scale=1.0),
    )


def multi_head_attention(device, dtype):
    module = MultiHeadAttention(8, 2).to(device, dtype)
    x, memory = (
        seeded(2, 5, 8, device=device, dtype=dtype),
        seeded(2, 3, 8, device=device, dtype=dtype, seed=1),
    )
    keys = torch.ones(2, 1, 1, 3, dtype=torch.bool, device=device)
    return lambda: [
        module(x, causal=True, need_weights=need) + module(x, memory, mask=keys, need_weights=need)
        for need in (False, True)
    ]


def transformer_pieces(device, dtype):
    x = seeded(2, 6, 8, device=device, dtype=dtype)
    return lambda: (
        sinusoidal_positions(6, 8, device=device, dtype=dtype),
        rotary_embedding(x),
        rotary_embedding(x, positions=[0, 2, 4, 6, 8, 10]),
    )


def blocks(device, dtype):
    torch.manual_seed(0)
    encoder = TransformerBlock(8, 2, 16, norm_first=True).to(device, dtype).train()
    decoder = DecoderBlock(8, 2, 16).to(device, dtype).eval()
    x, memory = (
        seeded(2, 5, 8, device=device, dtype=dtype),
        seeded(2, 3, 8, device=device, dtype=dtype, seed=1),
    )
    real = torch.ones(2, 1, 1, 3, dtype=torch.bool, device=device)
    return lambda: (encoder(x, causal=True), decoder(x, memory, memory_mask=real))


def banded(device, dtype):
    q, k, v = (seeded(2, 70, 4, device=device, dtype=dtype, seed=s) for s in range(3))
    return lambda: (
        banded_attention(q, k, v, bandwidth=3, causal=True),
        band_mask(6, 2, causal=True, device=device),
        [phi(q) for phi in FMM_FEATURE_MAPS],
    )


def minilm(device, dtype):
    config = MiniLMConfig(vocab_size=30, hidden_size=8, num_hidden_layers=2,
                          num_attention_heads=2, intermediate_size=16)  # fmt: skip
    model = MiniLMEncoder(config).to(device, dtype).eval()
    ids = torch.randint(30, (2, 5), generator=torch.Generator().manual_seed(0)).to(device)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], device=device)
    return lambda: (model(ids, mask), model.attention_maps(ids, mask))


def gpt(device, dtype):
    torch.manual_seed(0)
    config = GPTConfig(vocab_size=20, block_size=8, d_model=16, n_heads=2, dim_feedforward=32)
    model = AssembledGPT(config).to(device, dtype)
    ids = torch.randint(20, (60,), generator=torch.Generator().manual_seed(0)).to(device)
    return lambda: (
        train_language_model(model, ids, steps=2, batch_size=3, progress=False),
        next_token_loss(model, random_batch(ids, 8, 2)),
        generate(model, ids[:4], 3, generator=torch.Generator(device).manual_seed(0)),
    )


def linear_attention_forms(device, dtype):
    q, k, v = (seeded(2, 9, 4, device=device, dtype=dtype, seed=s) for s in range(3))
    w = seeded(4, 6, device=device, dtype=dtype, seed=3)

    def positive(x):  # 6 positive features of 4 numbers (r ≠ D)
        return torch.exp(x @ w - (x * x).sum(-1, keepdim=True) / 2)

    return lambda: (
        linear_attention(q, k, v),
        linear_attention(q, k, v, positive, causal=True, chunk_size=4),
        recurrent_linear_attention(q, k, v),
        fmm_attention(
            q,
            k,
            v,
            2,
            causal_linear_attention,
            w_near=torch.tensor(0.5, device=device, dtype=dtype),
            feature_maps=FMM_FEATURE_MAPS,
            causal=True,
        ),  # fmt: skip
    )


def skipgram_tables(device, dtype):
    counts = torch.tensor([5.0, 3.0, 1.0], dtype=dtype, device=device)
    return lambda: (
        keep_probability(counts, 0),
        keep_probability(counts),
        noise_table(counts, size=10),
    )


CASES = [attention_functions, multi_head_attention, transformer_pieces, blocks, banded, minilm,
         gpt, linear_attention_forms]  # fmt: skip
# the helpers that need no value of their inputs (no check on the values, no .item(); not
# rotary_embedding, whose table is as long as the largest position)
RUN_ON_META = [attention_functions, multi_head_attention, blocks, banded]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__)
def test_helpers_create_their_tensors_on_the_inputs_device_and_dtype(case):
    assert strays(case("cpu", torch.float64), "cpu", torch.float64) == []


@pytest.mark.parametrize("case", RUN_ON_META, ids=lambda case: case.__name__)
def test_helpers_on_meta_inputs_create_nothing_elsewhere(case):
    assert strays(case("meta", torch.float32), "meta") == []  # float64 steps are intended


def test_skipgram_tables_stay_on_the_counts_device():
    """Subsampling and the noise table (float32 and int64 by design: no dtype check)."""
    assert strays(skipgram_tables("cpu", torch.float64), "cpu") == []


def test_the_probe_catches_a_helper_that_creates_a_tensor_without_device():
    """A helper broken on purpose (torch.zeros without device=) is caught."""

    def careless(x):
        return x + 1, torch.zeros(len(x))

    # as if it were written in course_utils/models/attention.py
    careless.__code__ = careless.__code__.replace(
        co_filename=course_utils.models.attention.__file__)
    x = torch.ones(3, dtype=torch.float64)
    assert strays(lambda: careless(x), "cpu", torch.float64) == [
        "attention.py:careless: zeros on meta, torch.float32"
    ]
