"""07's rules by cost (course_utils.checks.guards.cost): an answer whose work grows with N² is
refused in whatever form it does the N × N products; every linear answer passes; a causal
answer that works position by position, or keeps a state per position, is refused, every
chunked one passes.

The oracle is each answer's known cost: the forms below are linear or quadratic by
construction (a loop over the rows of N_k keys is N_q · N_k work whatever it keeps).
"""

import numpy as np
import pytest
import torch

from course_utils.checks import RuleBroken
from course_utils.checks.guards.cost import CHUNKED_FROM, check_cost
from course_utils.models.linear_attention import elu_feature_map
from tests.grading_cases import linear_attention as cases

GENERATOR = torch.Generator().manual_seed(0)

SOLUTION_KERNEL = """
def kernel_attention(q, k, v, feature_map):
    phi_q, phi_k = feature_map(q), feature_map(k)
    kv = phi_k.transpose(-2, -1) @ v
    z = phi_k.sum(dim=-2, keepdim=True)
    return (phi_q @ kv) / (phi_q * z).sum(dim=-1, keepdim=True)
"""

SOLUTION_CAUSAL = cases.causal_with()   # the chunked form, as the solution writes it

LINEAR = {
    "solution kernel_attention": SOLUTION_KERNEL,
    "solution causal_linear_attention": SOLUTION_CAUSAL,
    **{f"{student} {exercise}": code
       for student, answers in cases.CORRECT.items() for exercise, code in answers.items()
       if exercise in ("kernel_attention", "causal_linear_attention")},
}

QUADRATIC = {
    "the N × N matrix": """
def kernel_attention(q, k, v, feature_map):
    weights = feature_map(q) @ feature_map(k).transpose(-2, -1)
    return weights @ v / weights.sum(-1, keepdim=True)
""",
    "a loop over the rows": """
def kernel_attention(q, k, v, feature_map):
    phi_q, phi_k = feature_map(q), feature_map(k)
    rows = []
    for i in range(q.shape[-2]):
        weights = phi_k @ phi_q[..., i, :, None]
        rows.append((weights * v).sum(-2) / weights.sum(-2))
    return torch.stack(rows, -2)
""",
    "a loop over the pairs": """
def kernel_attention(q, k, v, feature_map):
    phi_q, phi_k = feature_map(q), feature_map(k)
    rows = []
    for i in range(q.shape[-2]):
        numerator, denominator = 0, 0
        for j in range(k.shape[-2]):
            weight = phi_q[..., i, :] @ phi_k[..., j, :]
            numerator, denominator = numerator + weight * v[..., j, :], denominator + weight
        rows.append(numerator / denominator)
    return torch.stack(rows, -2)
""",
    "an einsum that reduces at once": """
def kernel_attention(q, k, v, feature_map):
    phi_q, phi_k = feature_map(q), feature_map(k)
    numerator = torch.einsum("...ir,...jr,...jd->...id", phi_q, phi_k, v)
    return numerator / torch.einsum("...ir,...jr->...i", phi_q, phi_k)[..., None]
""",
    "four blocks of queries against four of keys": """
def kernel_attention(q, k, v, feature_map):
    phi_q, phi_k = feature_map(q), feature_map(k)
    rows = []
    for block_q in phi_q.chunk(4, dim=-2):
        numerator, denominator = 0, 0
        for block_k, block_v in zip(phi_k.chunk(4, dim=-2), v.chunk(4, dim=-2)):
            weights = block_q @ block_k.transpose(-2, -1)
            numerator = numerator + weights @ block_v
            denominator = denominator + weights.sum(-1, keepdim=True)
        rows.append(numerator / denominator)
    return torch.cat(rows, -2)
""",
    "a matrix of Python floats": """
def kernel_attention(q, k, v, feature_map):
    phi_q, phi_k, values = feature_map(q).tolist(), feature_map(k).tolist(), v.tolist()
    weights = [[sum(a * b for a, b in zip(x, y)) for y in phi_k] for x in phi_q]
    return [[sum(w * row[d] for w, row in zip(ws, values)) / sum(ws) for d in range(len(values[0]))]
            for ws in weights]
""",
    "a NumPy matrix": """
def kernel_attention(q, k, v, feature_map):
    phi_q, phi_k = np.asarray(feature_map(q)), np.asarray(feature_map(k))
    weights = phi_q @ np.swapaxes(phi_k, -1, -2)
    return weights @ np.asarray(v) / weights.sum(-1, keepdims=True)
""",
    "the causal mask over N × N": """
def causal_linear_attention(q, k, v, feature_map, chunk_size):
    weights = (feature_map(q) @ feature_map(k).transpose(-2, -1)).tril()
    return weights @ v / weights.sum(-1, keepdim=True)
""",
    "the prefix sums made again for every row": """
def causal_linear_attention(q, k, v, feature_map, chunk_size):
    phi_q, phi_k = feature_map(q), feature_map(k)
    rows = []
    for i in range(q.shape[-2]):
        S = phi_k[..., :i + 1, :].transpose(-2, -1) @ v[..., :i + 1, :]
        z = phi_k[..., :i + 1, :].sum(-2)
        numerator = (phi_q[..., i, :, None] * S).sum(-2)
        rows.append(numerator / (phi_q[..., i, :] * z).sum(-1, keepdim=True))
    return torch.stack(rows, -2)
""",
}

NOT_CHUNKED = {  # right values, the work linear, but not chunk by chunk
    "a loop over the positions": (cases.WRONG["loops_over_the_step"]["causal_linear_attention"],
                                  "works position by position"),
    "a state per position": (cases.WRONG["a_state_per_position"]["causal_linear_attention"],
                             "one state per chunk"),
}


def answer(code: str):
    """The one function ``code`` defines, and the exercise it answers."""
    namespace = {"torch": torch, "np": np}
    exec(code, namespace)  # noqa: S102 (the test's own answers)
    exercise = next(name for name in ("kernel_attention", "causal_linear_attention")
                    if name in namespace)
    return exercise, namespace[exercise]


def inputs(batch=(), n_q=6, n_k=6, dtype=torch.float32, exercise="kernel_attention", d=4):
    """The test's arguments: a causal answer also gets a chunk size, the smallest measured."""
    q = torch.randn(*batch, n_q, d, generator=GENERATOR, dtype=dtype)
    k = torch.randn(*batch, n_k, d, generator=GENERATOR, dtype=dtype)
    v = torch.randn(*batch, n_k, 3, generator=GENERATOR, dtype=dtype)
    chunk = (CHUNKED_FROM,) if exercise == "causal_linear_attention" else ()
    return q, k, v, elu_feature_map, *chunk


@pytest.mark.parametrize("batch, dtype", [((), torch.float32), ((2, 3), torch.float64)])
@pytest.mark.parametrize("name", LINEAR)
def test_a_linear_answer_passes(name, batch, dtype):
    exercise, function = answer(LINEAR[name])
    check_cost(exercise, function, inputs(batch, dtype=dtype, exercise=exercise), {})


@pytest.mark.parametrize("name", QUADRATIC)
def test_quadratic_work_is_refused_whatever_its_form(name):
    exercise, function = answer(QUADRATIC[name])
    with pytest.raises(RuleBroken,
                       match=f"{exercise} does work that grows with N².*every pair of a query"):
        check_cost(exercise, function, inputs(n_q=5, n_k=9, exercise=exercise), {})


@pytest.mark.parametrize("name", NOT_CHUNKED)
def test_a_causal_answer_that_is_not_chunked_is_refused(name):
    code, refusal = NOT_CHUNKED[name]
    exercise, function = answer(code)
    arguments = inputs(n_q=40, n_k=40, exercise=exercise, d=32)
    with pytest.raises(RuleBroken, match=refusal):
        check_cost(exercise, function, arguments, {})
    check_cost(exercise, function, (*arguments[:4], CHUNKED_FROM // 2), {})   # not measured


def test_a_quadratic_answer_that_catches_the_refusal_is_refused_all_the_same():
    exercise, quadratic = answer(QUADRATIC["a loop over the rows"])

    def kernel_attention(*args):
        try:
            return quadratic(*args)
        except AssertionError:
            return None

    with pytest.raises(RuleBroken, match="grows with N²"):
        check_cost(exercise, kernel_attention, inputs(), {})


def test_the_refusal_names_the_rule_not_the_answer():
    exercise, function = answer(QUADRATIC["the N × N matrix"])
    with pytest.raises(RuleBroken) as refusal:
        check_cost(exercise, function, inputs(), {})
    assert "transpose" not in str(refusal.value) and "@" not in str(refusal.value)


def test_only_the_linear_exercises_are_measured():
    def recurrent_step(*args):
        raise AssertionError("a step is not run on longer inputs")

    check_cost("recurrent_step", recurrent_step, inputs(), {})


def test_an_answer_that_fails_on_the_longer_inputs_says_where():
    def kernel_attention(q, k, v, feature_map):
        if q.shape[-2] > 50:
            raise ValueError("too long")
        return q

    with pytest.raises(ValueError, match="too long") as failure:
        check_cost("kernel_attention", kernel_attention, inputs(), {})
    assert "to see how its work grows" in "\n".join(failure.value.__notes__)
