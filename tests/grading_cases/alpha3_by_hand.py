import math
import re
from pathlib import Path

import nbformat

from course_utils.by_hand import OwnSentence, sentence_of
from tests.grading_cases import Cheat

ASSIGNMENT = "04_alpha3_by_hand"
# The by-hand answers are worked for the student's own id: each case is its own student.
PER_STUDENT = True
RELEASE = Path(__file__).resolve().parents[2] / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"


def filled_skeleton(grade_id: str, values: str) -> str:
    """The release's answer cell ``grade_id`` with its skeleton's ``...`` replaced by ``values``.

    Everything else stays as released, the stub ``raise NotImplementedError()`` included:
    it stops that cell only, after the answer is assigned, so the answer still counts.
    """
    release = nbformat.read(RELEASE, as_version=4)
    cell = next(c for c in release.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    skeleton = re.compile(rf"^{grade_id} = \[\.\.\.(, \.\.\.)*\]", re.M)
    assert skeleton.search(cell.source), f"the release of {grade_id} lost its skeleton line"
    return skeleton.sub(f"{grade_id} = [{values}]", cell.source)


# --- numbers worked by hand: each student's own sentence (course_utils.by_hand) ----------

def by_hand_answers(sentence: OwnSentence, scale: float = 1 / math.sqrt(4),
                    weighted: str = "values") -> dict[str, list[float]]:
    """The by-hand answers of ``sentence``, worked as a student would in plain arithmetic:
    the scores to 2 decimals, α₃ to 3 from them, a₃ to 2 from those. A wrong ``scale``
    (1: √d_k forgotten) or ``weighted="keys"`` gives a typical mistake's."""
    dots = [sum(q * k for q, k in zip(sentence.q_3, key, strict=True)) for key in sentence.keys]
    scores = [round(dot * scale, 2) for dot in dots]
    exponentials = [math.exp(score) for score in scores]
    alpha = [round(e / sum(exponentials), 3) for e in exponentials]
    mixed = getattr(sentence, weighted)
    output = [round(sum(a * vector[i] for a, vector in zip(alpha, mixed, strict=True)), 2)
              for i in range(len(mixed[0]))]
    return {"scores_3_by_hand": scores, "alpha_3_by_hand": alpha, "a_3_by_hand": output}


def written(numbers: dict[str, list[float]], *grade_ids: str) -> dict[str, str]:
    """Answer cells that assign ``numbers`` as literals: {grade_id: code}."""
    return {grade_id: f"{grade_id} = {numbers[grade_id]!r}" for grade_id in grade_ids}


BY_HAND = ("scores_3_by_hand", "alpha_3_by_hand", "a_3_by_hand")
# The solution's student hands in numbers right for their own sentence, computed from the
# id the kernel sees; this is what a classmate would copy from them.
COPIED = by_hand_answers(sentence_of("solution"))


# --- wrong answers: each loses its own test cell's points, and no others -------------
# (the warm-up's three answer cells, exercises 1 to 3, share one test cell, test_a_3_by_hand)

def causal_attention_with(scale="/ math.sqrt(d_k)", keep="tril()", dim="-1", output="alpha @ V",
                          returned="out, alpha", fill='float("-inf")'):
    """A causal_attention answer with one part swapped for a mistake."""
    return f"""
def causal_attention(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    n, d_k = X.shape[-2], Q.shape[-1]
    keep = torch.ones(n, n, dtype=torch.bool, device=X.device).{keep}
    alpha = torch.softmax((Q @ K.mT {scale}).masked_fill(~keep, {fill}), dim={dim})
    out = {output}
    return {returned}
"""


TWIN_CAUSAL_ATTENTION = """
import course_utils.models.attention

def causal_attention(X, W_Q, W_K, W_V):
    alpha = course_utils.models.attention.attention_weights(X @ W_Q, X @ W_K, causal=True)
    return alpha @ (X @ W_V), alpha
"""

LOOP_WITHOUT_SCALE = """
def causal_attention(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    rows = []
    for i in range(len(X)):
        e = torch.exp(Q[i] @ K[: i + 1].T)
        rows.append(torch.cat([e / e.sum(), torch.zeros(len(X) - i - 1, dtype=e.dtype,
                                                          device=e.device)]))
    alpha = torch.stack(rows)
    return alpha @ V, alpha
"""

# Exercise 6's given function: Q, K and V cut from one product in three equal parts (right
# when d_v = d_k), the scale √d_model, the mask "I am good"'s 3 x 3; and no batch.
GIVEN_CAUSAL_ATTENTION = """
def causal_attention(X, W_Q, W_K, W_V):
    Q, K, V = (X @ torch.cat([W_Q, W_K, W_V], dim=1)).chunk(3, dim=1)
    scores = Q @ K.T / math.sqrt(X.shape[1])
    future = torch.tensor([[False, True, True], [False, False, True], [False, False, False]],
                          device=X.device)
    alpha = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return alpha @ V, alpha
"""

# ... with the two slips the test's second sentence shows fixed, and the third kept: the three
# equal parts are right on both visible sentences (d_v = d_k, then d_k = 3 and d_v = 2), wrong
# on the hidden one-word sentence's d_k = 2 and d_v = 5; and a batch, which the visible
# batch shows, read as one sentence
FIXES_TWO_OF_THREE = """
def causal_attention(X, W_Q, W_K, W_V):
    Q, K, V = (X @ torch.cat([W_Q, W_K, W_V], dim=1)).chunk(3, dim=1)
    n, d_k = X.shape[0], W_Q.shape[1]
    scores = Q @ K.T / math.sqrt(d_k)
    future = torch.ones(n, n, dtype=torch.bool, device=X.device).triu(diagonal=1)
    alpha = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return alpha @ V, alpha
"""

ONE_SENTENCE_ONLY = """
def causal_attention(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    n, d_k = X.shape[0], Q.shape[-1]
    future = torch.ones(n, n, dtype=torch.bool, device=X.device).triu(diagonal=1)
    alpha = torch.softmax((Q @ K.T / math.sqrt(d_k)).masked_fill(future, float("-inf")), dim=-1)
    return alpha @ V, alpha
"""

def next_row_with(scale="/ math.sqrt(q.shape[-1])",
                  keys="torch.cat([K_cache, (x_new @ W_K)[None]])",
                  values="torch.cat([V_cache, (x_new @ W_V)[None]])", returned="K, V"):
    """A next_row answer (exercise 7, the KV cache) with one part swapped for a mistake."""
    return f"""
def next_row(x_new, K_cache, V_cache, W_Q, W_K, W_V):
    q = x_new @ W_Q
    K, V = {keys}, {values}
    alpha = torch.softmax(K @ q {scale}, dim=-1)
    return alpha @ V, {returned}
"""


# exercise 7 through PyTorch's attention, the new token's query alone against every key
NEXT_ROW_BY_THE_LIBRARY = """
import torch.nn.functional as F

def next_row(x_new, K_cache, V_cache, W_Q, W_K, W_V):
    K = torch.cat([K_cache, (x_new @ W_K)[None]])
    V = torch.cat([V_cache, (x_new @ W_V)[None]])
    return F.scaled_dot_product_attention((x_new @ W_Q)[None], K, V)[0], K, V
"""

# Exercise 6's slips, right: {line: (n, d_model, d_k, d_v)} of a sentence on which that line
# goes wrong and the other two hold (grader.scoring.given_slips judges them)
SLIPS = {"Q, K, V": (3, 4, 4, 8), "scores": (3, 8, 4, 4), "future": (5, 4, 4, 4)}


def slips(**changed) -> str:
    """A my_slips answer: SLIPS with the entries ``changed`` (the name with its spaces and
    commas as underscores: Q_K_V) replaced, or removed where None."""
    answer = dict(SLIPS)
    for name, sizes in changed.items():
        answer.pop(name.replace("_", ", ") if name == "Q_K_V" else name, None)
        if sizes is not None:
            answer[name.replace("_", ", ") if name == "Q_K_V" else name] = sizes
    return f"my_slips = {answer!r}"


WRONG = {
    "forgets_sqrt_dk": {
        **written(by_hand_answers(sentence_of("forgets_sqrt_dk"), scale=1.0), *BY_HAND),
        "causal_attention": causal_attention_with(scale=""),
        "next_row": next_row_with(scale=""),
        # exercise 6: the scale's sentence keeps d_model = d_k, where √d_model is right
        "my_slips": slips(scores=(3, 4, 4, 4)),
    },
    # Right on the lecture's example only (d_k = 4, so sqrt(d_k) = 2): the visible check's
    # second sentence (d_k = 3) names it.
    "hard_codes_two": {
        "causal_attention": causal_attention_with(scale="/ 2"),
        # exercise 8: our own sentence's gaps, not the slides': the visible check looks at
        # the form only and passes them; the grade compares them with the stored answer
        "slides_score_gaps": "slides_score_gaps = [-1.5, -3.0]",
    },
    # exercise 8: s_33 - s_3j, the gaps the other way round (the visible check names a
    # positive gap)
    "masks_diagonal": {
        "slides_score_gaps": "slides_score_gaps = [1.29, 3.23]",
        "causal_attention": causal_attention_with(keep="tril(diagonal=-1)"),
        # exercise 7: the caches handed back as they came, the new token not added
        "next_row": next_row_with(returned="K_cache, V_cache"),
    },
    # exercise 8: the logs of the weights, the constant not taken out
    "softmax_over_queries": {
        "slides_score_gaps": "slides_score_gaps = [math.log(0.21), math.log(0.03)]",
        "causal_attention": causal_attention_with(dim="0"),
    },
    "half_filled_swapped": {
        "scores_3_by_hand": filled_skeleton("scores_3_by_hand", "{}, {}, ...".format(
            *by_hand_answers(sentence_of("half_filled_swapped"))["scores_3_by_hand"][:2])),
        "alpha_3_by_hand": "alpha_3_by_hand = [0.2, 0.0, 0.8]",
        "causal_attention": causal_attention_with(returned="alpha, out"),
    },
    "keys_not_values": {
        **written(by_hand_answers(sentence_of("keys_not_values"), weighted="keys"), "a_3_by_hand"),
        "causal_attention": causal_attention_with(output="alpha @ K"),
        # exercise 7: every key projected again, the cached keys taken for embeddings (the
        # visible test's d_k = d_model lets it run; the hidden tests' sizes stop it)
        "next_row": next_row_with(keys="torch.cat([K_cache, x_new[None]]) @ W_K",
                                  values="torch.cat([V_cache, x_new[None]]) @ W_V"),
    },
    # right numbers, of another student's sentence: they score 0
    "copies_the_numbers_of_solution": written(COPIED, *BY_HAND),
    # right numbers of the id the student worked under, not the one graded (WORKED_FOR)
    "uses_another_id": written(by_hand_answers(sentence_of("uses.another.id")), *BY_HAND),
    # ... and the same, worked under an id set in the notebook's id cell (SETS_ID)
    "sets_another_id": written(by_hand_answers(sentence_of("another.id")), *BY_HAND),
    # the future filled with -10, not -inf: it keeps a weight of about e^-10, below the visible
    # checks' tolerance at the lecture's small scores; the hidden tests' larger scores show it
    "fills_the_future_with_minus_ten": {"causal_attention": causal_attention_with(fill="-10.0")},
    # the scale forgotten in a loop, one query at a time: the visible check names it
    "loop_forgets_sqrt_dk": {"causal_attention": LOOP_WITHOUT_SCALE},
    # exercise 6's given function handed in as it is: right on the visible example only; and
    # its chunk(3) slip shown on the test's second sentence's d_k = 3 and d_v = 2, where the
    # three equal parts happen to be right
    "hands_in_the_given_function": {"causal_attention": GIVEN_CAUSAL_ATTENTION,
                                    "my_slips": slips(Q_K_V=(4, 4, 3, 2))},
    # two of its three slips fixed: the visible tests pass, a hidden one does not; and the
    # mask's sentence also changes d_model, so that the scale goes wrong there too
    "fixes_two_of_three": {"causal_attention": FIXES_TWO_OF_THREE,
                           "my_slips": slips(future=(5, 8, 4, 4)),
                           # exercise 7 divided by √d_model: right on the visible example
                           # (d_model = d_k = 4), wrong on the hidden tests
                           "next_row": next_row_with(scale="/ math.sqrt(len(x_new))")},
    # a line that holds named instead of the mask (the visible check accepts any line)
    "names_the_softmax_line": {"my_slips": slips(future=None, alpha=(5, 4, 4, 4))},
    # the three slips repaired, right for one sentence; a batch's first axis read as its
    # tokens and K.T reversing every axis: the visible batch stops it
    "repairs_one_sentence_only": {"causal_attention": ONE_SENTENCE_ONLY},
    "calls_the_library": {"causal_attention": TWIN_CAUSAL_ATTENTION,
                          "next_row": NEXT_ROW_BY_THE_LIBRARY},
}

# A wrong id is not wrong arithmetic: {student: the id their numbers were worked for}. The
# sentence's cell printed that id (PRINTED), and grader.integrity.own_numbers proves from the
# numbers that they are its: "cell ...: numbers worked for id uses.another.id, submitted as ...".
WORKED_FOR = {"uses_another_id": "uses.another.id", "sets_another_id": "another.id"}
# What a cell printed when the student ran it: {student: {how the cell's code starts: text}}.
PRINTED = {"uses_another_id": {"yours = own_sentence()": str(sentence_of("uses.another.id"))}}
# The id a student set in the notebook's id cell, student.use_id("..."): {student: id}. The
# grading kernel starts with the submitter's id, which wins, so numbers worked for another id
# score 0; grader.integrity.own_numbers reads the call and flags both ids. A student who sets
# their own id gets full marks (CORRECT) and no flag.
SETS_ID = {"sets_another_id": "another.id", "sets_own_id": "sets_own_id"}

# --- correct alternatives: full marks on every test cell --------------------------------

LOOP_FLOAT64_ATTENTION = """
def causal_attention(X, W_Q, W_K, W_V):
    if X.dim() == 3:                         # a batch: one sentence at a time
        pairs = [causal_attention(sentence, W_Q, W_K, W_V) for sentence in X]
        return torch.stack([a for a, _ in pairs]), torch.stack([alpha for _, alpha in pairs])
    X, W_Q, W_K, W_V = (t.double() for t in (X, W_Q, W_K, W_V))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    n, d_k = len(X), Q.shape[1]
    alpha = torch.zeros(n, n, dtype=torch.float64, device=X.device)
    for i in range(n):                       # one row of weights at a time, j = 1..i
        s = torch.stack([Q[i] @ K[j] for j in range(i + 1)]) / d_k ** 0.5
        e = torch.exp(s - s.max())
        alpha[i, : i + 1] = e / e.sum()
    a = torch.stack([sum(alpha[i, j] * V[j] for j in range(i + 1)) for i in range(n)])
    return a, alpha
"""

NUMPY_ATTENTION = """
import numpy as np

def causal_attention(X, W_Q, W_K, W_V):
    X, W_Q, W_K, W_V = (np.asarray(t.cpu(), dtype=np.float64) for t in (X, W_Q, W_K, W_V))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
    rows, columns = np.triu_indices(X.shape[-2], k=1)
    s[..., rows, columns] = -np.inf
    alpha = np.exp(s - s.max(axis=-1, keepdims=True))
    alpha /= alpha.sum(axis=-1, keepdims=True)
    return [alpha @ V, alpha]                # a list (a, alpha) is a pair too
"""

# exercise 6's one product kept, cut at d_k, d_k and d_v
SPLITS_THE_ONE_PRODUCT = """
def causal_attention(X, W_Q, W_K, W_V):
    d_k, d_v = W_Q.shape[1], W_V.shape[1]
    Q, K, V = (X @ torch.cat([W_Q, W_K, W_V], dim=1)).split([d_k, d_k, d_v], dim=-1)
    n = X.shape[-2]
    future = torch.ones(n, n, dtype=torch.bool, device=X.device).triu(diagonal=1)
    scores = Q @ K.transpose(-1, -2) / math.sqrt(d_k)
    alpha = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return alpha @ V, alpha
"""

# exercise 7 one key at a time, in float64, the softmax made stable by hand; a list returned
LOOP_NEXT_ROW = """
def next_row(x_new, K_cache, V_cache, W_Q, W_K, W_V):
    x_new, W_Q, W_K, W_V = (t.double() for t in (x_new, W_Q, W_K, W_V))
    keys = [row.double() for row in K_cache] + [x_new @ W_K]
    values = [row.double() for row in V_cache] + [x_new @ W_V]
    q = x_new @ W_Q
    scores = [float(q @ k) / math.sqrt(len(q)) for k in keys]
    e = [math.exp(s - max(scores)) for s in scores]
    a = sum(w / sum(e) * v for w, v in zip(e, values))
    return [a, torch.stack(keys), torch.stack(values)]
"""

NUMPY_NEXT_ROW = """
import numpy as np

def next_row(x_new, K_cache, V_cache, W_Q, W_K, W_V):
    x, W_Q, W_K, W_V, K, V = (np.asarray(t.cpu() if hasattr(t, "cpu") else t, dtype=np.float64)
                              for t in (x_new, W_Q, W_K, W_V, K_cache, V_cache))
    K, V = np.vstack([K, x @ W_K]), np.vstack([V, x @ W_V])
    s = K @ (x @ W_Q) / np.sqrt(K.shape[1])
    w = np.exp(s - s.max())
    return w / w.sum() @ V, K, V
"""

# exercise 7 with the query scaled in place and einsum for the scores
SCALED_QUERY_NEXT_ROW = """
def next_row(x_new, K_cache, V_cache, W_Q, W_K, W_V):
    q = (x_new @ W_Q).unsqueeze(0)
    q /= W_K.shape[1] ** 0.5
    K_cache = torch.cat((K_cache, (x_new @ W_K).unsqueeze(0)), dim=0)
    V_cache = torch.cat((V_cache, (x_new @ W_V).unsqueeze(0)), dim=0)
    weights = torch.einsum("qd,kd->qk", q, K_cache).softmax(dim=-1)
    return (weights @ V_cache).squeeze(0), K_cache, V_cache
"""

ARRAYS_AND_LISTS = by_hand_answers(sentence_of("arrays_and_lists"))

CORRECT = {
    # other sentences, the lines spelled otherwise, lists for tuples
    "splits_the_one_product": {
        "causal_attention": SPLITS_THE_ONE_PRODUCT,
        "next_row": SCALED_QUERY_NEXT_ROW,
        "my_slips": 'my_slips = {"q,k,v": [3, 5, 5, 1], "Scores": [3, 5, 3, 3], '
                    '"future": [1, 6, 6, 6]}',
    },
    # their id set in the notebook's id cell (SETS_ID), their own numbers: full marks
    "sets_own_id": written(by_hand_answers(sentence_of("sets_own_id")), *BY_HAND),
    "loops_and_skeletons": {
        "causal_attention": LOOP_FLOAT64_ATTENTION,
        "next_row": LOOP_NEXT_ROW,
        **{grade_id: filled_skeleton(grade_id, ", ".join(map(str, numbers)))
           for grade_id, numbers in by_hand_answers(sentence_of("loops_and_skeletons")).items()},
        # exercise 6 built in a loop, its sizes NumPy's integers
        "my_slips": "import numpy as np\n"
                    "my_slips = {}\n"
                    "for line, sizes in ((\"Q, K, V\", (3, 2, 2, 6)), (\"scores\", (3, 3, 2, 2)),\n"
                    "                    (\"future\", (4, 2, 2, 2))):\n"
                    "    my_slips[line] = tuple(np.array(sizes))",
        # exercise 8 unrounded, worked from the log of each weight
        "slides_score_gaps": "w = [0.21, 0.03, 0.76]\n"
                             "slides_score_gaps = [math.log(w[j]) - math.log(w[2])\n"
                             "                     for j in (0, 1)]",
    },
    "arrays_and_lists": {
        "causal_attention": NUMPY_ATTENTION,
        "next_row": NUMPY_NEXT_ROW,
        "scores_3_by_hand": "import numpy as np\nscores_3_by_hand = np.array({})".format(
            ARRAYS_AND_LISTS["scores_3_by_hand"]),
        "alpha_3_by_hand": f"alpha_3_by_hand = {tuple(ARRAYS_AND_LISTS['alpha_3_by_hand'])}",
        "a_3_by_hand": "import numpy as np\na_3_by_hand = np.array({}, dtype=np.float32)".format(
            ARRAYS_AND_LISTS["a_3_by_hand"]),
        "slides_score_gaps": "import numpy as np\nslides_score_gaps = np.array([-1.29, -3.23])",
    },
}

# --- answers that update their inputs in place: graded on what they return ------------------

CORRECT["works_in_place"] = {
    "causal_attention": """
def causal_attention(X, W_Q, W_K, W_V):
    W_Q /= math.sqrt(W_Q.shape[1])   # the scale folded into W_Q, in place
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    n = X.shape[-2]
    scores = torch.einsum("...id,...jd->...ij", Q, K)
    scores.masked_fill_(torch.ones(n, n, dtype=torch.bool, device=X.device).triu(1), float("-inf"))
    alpha = torch.softmax(scores, dim=-1)
    return alpha @ V, alpha
""",
}

# --- cheats: each scores 0 on its exercise, or is flagged, or both ----------------------------

# The wrong answer under the cheats that hide a failure: no causal mask.
NO_MASK = """

def causal_attention(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    alpha = torch.softmax(Q @ K.T / math.sqrt(Q.shape[1]), dim=-1)
    return alpha @ V, alpha
"""

# A loop that asks a visible check, entry by entry, which candidate values are right.
# (what the checks print while it searches is kept out of the cell's output, as a cheat would:
# thousands of lines could outlast nbclient's wait for output on a busy machine)
BRUTE_FORCE = """
import contextlib
import io
import re


def search(check, count, *arguments, candidates=[step / 100 for step in range(-400, 401)]):
    found = [candidates[0]] * count
    for entry in range(count):
        for value in candidates:
            trial = found[:entry] + [value] + found[entry + 1:]
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    check(trial, *arguments)
            except AssertionError as failure:
                named = re.search(r"entries \\[([^\\]]*)\\]", str(failure))
                if not named or str(entry + 1) in named[1].split(", "):
                    continue
            found = trial
            break
    return found
"""

CHEAT = {
    # a value that reads the check's own expected value from the caller's frame
    "by_hand_reads_the_check": {
        "scores_3_by_hand": Cheat("""
import sys


class Whatever:
    def __array__(self, dtype=None, copy=None):
        frame = sys._getframe(1)
        while frame is not None and "expected" not in frame.f_locals:
            frame = frame.f_back
        return frame.f_locals["expected"].numpy()

    def __eq__(self, other):
        return True


scores_3_by_hand = Whatever()
""", zero=True, flagged=True),
    },
    # another student's id claimed, then that student's numbers: the kernel's id is the one
    # it was started with
    "claims_another_id": {
        grade_id: Cheat(f"import os\nos.environ['COURSE_STUDENT'] = 'solution'\n{code}")
        for grade_id, code in written(COPIED, *BY_HAND).items()
    },
    # the grader's own code asked for the numbers: the kernel cannot import it (its sandbox
    # holds course_utils, not the grader) and the answer's allowlist refuses it, and the
    # line is flagged
    "imports_the_graders_answers": {
        "alpha_3_by_hand": Cheat("""
from grader.scoring.by_hand_answers import answer

alpha_3_by_hand = answer("alpha_3_by_hand", "imports_the_graders_answers").tolist()
""", zero=True, flagged=True),
    },
    # the same module found through importlib by names made at run time
    "reaches_the_graders_answers_by_importlib": {
        "scores_3_by_hand": Cheat("""
import importlib

answers = importlib.import_module(".".join(["grader", "scoring", "by_hand" + "_answers"]))
scores_3_by_hand = getattr(answers, "ans" + "wer")("scores_3_by_hand", "x").tolist()
""", zero=True, flagged=True),
    },
    # the visible checks as an oracle: a loop over candidate values, each entry in turn,
    # keeping the first the check does not name as off. Against checks that named the
    # entries off for the student's own sentence it found the right numbers; the checks say
    # only whether the numbers are well-formed and agree with each other, so it keeps the
    # first candidate. In the answer cell (as run at home; graded, the allowlist refuses the
    # check too, and the cell is flagged for using checks) ...
    "brute_forces_the_visible_check": {
        "scores_3_by_hand": Cheat(BRUTE_FORCE + """
scores_3_by_hand = search(checks.check_own_scores_3, 3, "scores_3_by_hand")
""", zero=True, flagged=True),
    },
    # ... and in the notebook's first cell, which runs unguarded: the answer cells read what
    # it found
    "brute_forces_the_checks_in_the_first_cell": {
        "scores_3_by_hand": Cheat("scores_3_by_hand = list(FOUND_SCORES)", zero=True,
                                  first_cell=BRUTE_FORCE + """
from course_utils import checks as _checks

FOUND_SCORES = search(_checks.check_own_scores_3, 3, "scores_3_by_hand")
"""),
        "alpha_3_by_hand": Cheat("alpha_3_by_hand = list(FOUND_ALPHA)", zero=True,
                                 first_cell="""
FOUND_ALPHA = search(_checks.check_own_alpha_3, 3, FOUND_SCORES, "alpha_3_by_hand",
                     candidates=[step / 200 for step in range(201)])
"""),
    },
    # exercise 8's visible check asked for the gaps, in the first cell: it looks at the form
    # only, so the loop keeps the first candidates, [-4.0, -4.0]
    "brute_forces_the_gaps_check": {
        "slides_score_gaps": Cheat("slides_score_gaps = list(FOUND_GAPS)", zero=True,
                                   first_cell=BRUTE_FORCE + """
from course_utils import checks as _checks

FOUND_GAPS = search(_checks.check_score_gaps, 2, [0.21, 0.03, 0.76], "slides_score_gaps")
"""),
    },
    # exercise 6's slips asked of the grader's judge, which the kernel cannot import (its
    # sandbox holds course_utils, not the grader) and the answer's allowlist refuses
    "asks_the_graders_judge": {
        "my_slips": Cheat("""
from grader.scoring import given_slips

my_slips = {line: next(sizes for sizes in ((3, 4, 4, 8), (3, 8, 4, 4), (5, 4, 4, 4))
                       if given_slips.goes_wrong(line, sizes)) for line in given_slips.SLIPS}
""", zero=True),
    },
    # the visible check replaced in the first cell, then a wrong answer: the test cell reports
    # nothing, and the grader's comparison misses its value
    "silences_the_slips_check": {
        "my_slips": Cheat('my_slips = {"alpha": (3, 4, 4, 4)}', zero=True,
                          first_cell="from course_utils import checks as _checks\n"
                                     "_checks.check_slips = lambda *args, **kwargs: None\n"),
    },
    # exercise 7 as the whole causal matrix over the n + 1 tokens, the earlier rows' queries
    # made up (zeros), its last row kept: right values, every row computed again; the rule
    # of the exercise (no matrix of every position against every position) stops it
    "recomputes_every_row": {
        "next_row": Cheat("""
def next_row(x_new, K_cache, V_cache, W_Q, W_K, W_V):
    K = torch.cat([K_cache, (x_new @ W_K)[None]])
    V = torch.cat([V_cache, (x_new @ W_V)[None]])
    queries = torch.cat([torch.zeros(len(K_cache), W_Q.shape[1], dtype=K.dtype, device=K.device),
                         (x_new @ W_Q)[None]])
    future = torch.ones(len(K), len(K), dtype=torch.bool, device=K.device).triu(diagonal=1)
    alpha = torch.softmax((queries @ K.T / math.sqrt(K.shape[1])).masked_fill(future, -math.inf),
                          dim=-1)
    return (alpha @ V)[-1], K, V
""", zero=True),
    },
    # the IPython shell's traceback silenced, then a wrong answer: the test must not pass
    "hides_its_failures": {
        "causal_attention": Cheat("""
from IPython.core.interactiveshell import InteractiveShell

InteractiveShell.instance().showtraceback = lambda *args, **kwargs: None
""" + NO_MASK, zero=True, flagged=True),
    },
}

# --- cheats through doors the function mode and the twin list do not watch (another thread,
# a fresh copy, the check's comparison replaced, the kernel's reply rewritten) -----------------

CHEAT.update({
    # PyTorch's attention in another thread, where the test's function mode is not on; the
    # weights are the attention of the identity matrix's rows
    "attention_in_a_thread": {
        "causal_attention": Cheat("""
import threading

import torch.nn.functional as F


def causal_attention(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    eye = torch.eye(X.shape[-2], dtype=V.dtype, device=V.device)
    found = {}

    def attend():
        found["a"] = F.scaled_dot_product_attention(Q, K, V, is_causal=True)
        found["alpha"] = F.scaled_dot_product_attention(Q, K, eye, is_causal=True)

    worker = threading.Thread(target=attend)
    worker.start()
    worker.join()
    return found["a"], found["alpha"]
""", zero=True),
    },
    # the course's attention_weights rebuilt from its code object
    "attention_weights_rebuilt_from_code": {
        "causal_attention": Cheat("""
import types

import course_utils.models.attention as _library


def _copy(function):
    return types.FunctionType(function.__code__, function.__globals__, "copy",
                              function.__defaults__)


_weights = _copy(_library.attention_weights)


def causal_attention(X, W_Q, W_K, W_V):
    alpha = _weights(X @ W_Q, X @ W_K, causal=True)
    return alpha @ (X @ W_V), alpha
""", zero=True),
    },
    # torch.allclose, which the checks compare with, replaced: a wrong answer then matches
    "replaces_torch_allclose": {
        "causal_attention": Cheat("""
torch.allclose = lambda *args, **kwargs: True
""" + NO_MASK, zero=True, flagged=True),
    },
    # the kernel's execute handler replaced: a cell that calls own_work runs as `pass`, its
    # reply reads ok; the answer underneath is wrong
    "kernel_runs_tests_as_pass": {
        "causal_attention": Cheat("""
_kernel = get_ipython().kernel
_execute = _kernel.do_execute


async def _do_execute(code, *args, **kwargs):
    return await _execute("pass" if "own_work" in code else code, *args, **kwargs)


_kernel.do_execute = _do_execute
""" + NO_MASK, zero=True, flagged=True),
    },
})

# --- a correct answer that prints while debugging: print's own work is not the answer's ------

CORRECT["prints_while_debugging"] = {
    "causal_attention": """
def causal_attention(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    s = Q @ K.mT / math.sqrt(Q.shape[-1])
    future = torch.triu(torch.ones_like(s, dtype=torch.bool), diagonal=1)
    top = s.masked_fill(future, float("-inf")).amax(dim=-1, keepdim=True)
    weights = torch.where(future, 0.0, torch.exp(s - top))
    print("unnormalised weights", weights)   # debugging
    alpha = weights / weights.sum(dim=-1, keepdim=True)
    return alpha @ V, alpha
""",
}
