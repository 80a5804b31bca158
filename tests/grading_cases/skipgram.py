ASSIGNMENT = "02_skipgram"

INCLUDES_CENTER = """
def window_pairs(words, c):
    return [(words[t], words[t + j]) for t in range(len(words))
            for j in range(-c, c + 1) if 0 <= t + j < len(words)]
"""

# Right on the visible example (c = 2) but not in general: only the hidden tests catch it.
IGNORES_C = """
def window_pairs(words, c):
    return [(words[t], words[t + j]) for t in range(len(words))
            for j in (-2, -1, 1, 2) if 0 <= t + j < len(words)]
"""

NO_LOG_SUM_EXP = """
def window_loss(W, ids, t, c):
    context = [t + j for j in range(-c, c + 1) if j != 0 and 0 <= t + j < len(ids)]
    return -(W[ids[context]] @ W[ids[t]]).sum()
"""

# Python's negative indices wrap to the end of the text instead of being skipped.
WRAPS_AROUND = """
def window_loss(W, ids, t, c):
    log_p = torch.log_softmax(W @ W[ids[t]], dim=-1)
    context = [t + j for j in range(-c, c + 1) if j != 0 and t + j < len(ids)]
    return -log_p[ids[context]].sum()
"""

NEGATIVES_WRONG_SIGN = """
def negative_sampling_loss(v_center, u_context, u_negatives):
    positive = F.logsigmoid((u_context * v_center).sum(dim=-1))
    negative = F.logsigmoid((u_negatives @ v_center.unsqueeze(-1)).squeeze(-1))
    return -(positive + negative.sum(dim=-1)).mean()
"""

SUMS_OVER_BATCH = """
def negative_sampling_loss(v_center, u_context, u_negatives):
    positive = F.logsigmoid((u_context * v_center).sum(dim=-1))
    negative = F.logsigmoid(-(u_negatives @ v_center.unsqueeze(-1)).squeeze(-1))
    return -(positive + negative.sum(dim=-1)).sum()
"""

WRONG = {
    "includes_center": {"window_pairs": INCLUDES_CENTER},
    "ignores_c": {"window_pairs": IGNORES_C},
    "no_log_sum_exp": {"window_loss": NO_LOG_SUM_EXP},
    "wraps_around": {"window_loss": WRAPS_AROUND},
    "negatives_wrong_sign": {"negative_sampling_loss": NEGATIVES_WRONG_SIGN},
    "sums_over_batch": {"negative_sampling_loss": SUMS_OVER_BATCH},
}

CORRECT: dict[str, dict[str, str]] = {}
