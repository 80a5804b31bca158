"""peak_memory against hand-counted bytes: what is alive at once, not what is allocated in all."""

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

from course_utils.measure import peak_memory

MIB = 2**20
FLOATS_PER_MIB = MIB // 4  # float32


def test_a_freed_tensor_no_longer_counts():
    def one_after_the_other():
        a = torch.empty(FLOATS_PER_MIB)
        del a
        return torch.empty(2 * FLOATS_PER_MIB)

    assert peak_memory(one_after_the_other) == 2 * MIB


def test_tensors_alive_together_add_up():
    def together():
        a = torch.empty(FLOATS_PER_MIB)
        b = torch.empty(2 * FLOATS_PER_MIB)
        return a, b

    assert peak_memory(together) == 3 * MIB


def test_the_inputs_do_not_count_and_the_output_does():
    x = torch.ones(FLOATS_PER_MIB)
    assert MIB <= peak_memory(lambda: x * 2) < MIB + 64  # (+ the scalar 2 as a tensor)
    assert peak_memory(lambda: x.view(-1)) == 0  # a view allocates nothing


def test_softmax_attention_holds_two_n_by_n_matrices_at_its_peak():
    # QKᵀ (N × N), then its scaled copy while QKᵀ is still alive: 2 · 4N² bytes, then the
    # softmax replaces one of them; the output N × D is small beside them
    n, d = 512, 8
    q = torch.randn(n, d)
    peak = peak_memory(lambda: torch.softmax(q @ q.T / 3.0, dim=-1) @ q)
    assert 2 * 4 * n * n <= peak <= 2 * 4 * n * n + 4 * n * d


def test_a_temporary_inside_one_operator_is_found():
    # scaled_dot_product_attention's math path on CPU makes N × N scores and weights inside
    # the one call; the profiler's public per-operator net changes miss that peak
    n, d = 512, 32
    x = torch.randn(1, n, d)

    def attention():
        return torch.nn.functional.scaled_dot_product_attention(x, x, x)

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        attention()
    largest_net = max(event.cpu_memory_usage for event in prof.events())
    assert peak_memory(attention) >= 2 * 4 * n * n > largest_net


def test_something_not_callable_is_refused():
    with pytest.raises(TypeError, match="callable"):
        peak_memory(torch.ones(3))
