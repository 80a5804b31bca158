ASSIGNMENT = "04_alpha3_by_hand"

NO_SQRT = """
def scores(q, k):
    return q @ k.T
"""

# Right on the visible example (d_k = 4, so sqrt(d_k) = 2) but not in general:
# only the hidden tests, restored by nbgrader at grading time, can catch it.
HARD_CODED_TWO = """
def scores(q, k):
    return q @ k.T / 2
"""

MASKS_DIAGONAL = """
def causal_softmax(s):
    n = s.shape[-1]
    keep = torch.ones(n, n, dtype=torch.bool, device=s.device).tril(diagonal=-1)
    return torch.softmax(s.masked_fill(~keep, float("-inf")), dim=-1)
"""

SOFTMAX_OVER_QUERIES = """
def causal_softmax(s):
    n = s.shape[-1]
    keep = torch.ones(n, n, dtype=torch.bool, device=s.device).tril()
    return torch.softmax(s.masked_fill(~keep, float("-inf")), dim=0)
"""

WRONG = {
    "forgets_sqrt_dk": {
        "scores": NO_SQRT,
        "scores_3_by_hand": "scores_3_by_hand = [-1.0, -4.0, 2.0]",
        "alpha_3_by_hand": "alpha_3_by_hand = [0.047, 0.002, 0.950]",
    },
    "hard_codes_two": {"scores": HARD_CODED_TWO},
    "masks_diagonal": {
        "causal_softmax": MASKS_DIAGONAL,
        "impossible_entries": "impossible_entries = {(1, 1), (2, 2), (3, 3), (1, 2), (1, 3), (2, 3)}",  # noqa: E501
    },
    "softmax_over_queries": {"causal_softmax": SOFTMAX_OVER_QUERIES},
}

CORRECT: dict[str, dict[str, str]] = {}
