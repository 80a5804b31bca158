"""Answer cells that import or name a twin of their exercise are flagged (a static scan)."""

import pytest

from grader.integrity.tamper import imported_twins


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("from course_utils.models.attention import attention_weights, MultiHeadAttention",
         ["course_utils.models.attention.attention_weights"]),
        ("import course_utils.models.attention as A\n"
          "def f(s):\n    return A.attention_weights(s, s)",
         ["course_utils.models.attention.attention_weights"]),
        ("def f(s):\n    return attention.attention_weights(s, s)",
         ["course_utils.models.attention.attention_weights"]),
        ("def f(s):\n    return torch.softmax(s.masked_fill(~keep, -1e9), -1)", []),
        ("def f(s):\n    return self.attention(s)", []),
        ("this is not python (", []),
    ],
)
def test_answer_cells_that_import_a_twin_are_flagged(source, flagged):
    assert imported_twins(source, "causal_attention") == flagged


def test_method_twins_are_flagged_only_when_named_with_their_class():
    own = ("from course_utils.tokens.byte_bpe import CL100K_PATTERN\n"
           "def encode(t):\n    return t.encode()")
    assert imported_twins(own, "encode") == []
    named = "from tiktoken import Encoding as T\n" \
            "from course_utils.tokens.pre_tokenizer import CL100K_PATTERN\n" \
            "def encode(t):\n    return T.encode(tok, t) + Encoding.encode(tok, t)"
    assert imported_twins(named, "encode") == ["tiktoken.Encoding.encode"]
