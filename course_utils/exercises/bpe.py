"""The exercises of 03_bpe: one record each (``course_utils.exercises``)."""

from course_utils.exercises.allowance import BYTE_LEVEL
from course_utils.exercises.record import Compare, Exercise

NOTEBOOK = "03_bpe"

EXERCISES = (
    # dicts: the pairs (count_pairs) and the words (merge_pair) compare in any order already
    Exercise("count_pairs", NOTEBOOK, points=1, check="check_pair_counts"),
    # a (corpus, pair) on which exercise 2's merge by text goes wrong: its test reports whether
    # it does (by_text_fails_on), the same verdict for every right pair
    Exercise("merge_counterexample", NOTEBOOK, points=1, check="check_by_text_fails"),
    Exercise("merge_pair", NOTEBOOK, points=1, check="check_merged_corpus"),
    # worked by hand (owner's tokens and the merge that decides; b"abc"'s tokens): the visible
    # check looks at the form only, the grade compares the value with the stored answer
    Exercise("owner_by_hand", NOTEBOOK, points=1, check="check_owner_by_hand",
             compare=Compare(rtol=0.0, atol=0.0)),
    # ranks are exact; tiktoken's educational learner does the whole job
    Exercise("train_bytes", NOTEBOOK, points=4, check="check_train_bytes",
             compare=Compare(rtol=0.0, atol=0.0),
             allowance=BYTE_LEVEL,
             twins=("tiktoken._educational.*",)),
    Exercise("abc_by_hand", NOTEBOOK, points=1, check="check_abc_by_hand"),
    # the byte-level exercises split text with the notebook's pattern, as GPT-4 does, and may
    # read the tokenizer's vocabulary (reading answers nothing; encoding is refused)
    Exercise("merge_chunk", NOTEBOOK, points=3, check="check_merge_chunk",
             allowance=BYTE_LEVEL,
             twins=("tiktoken.Encoding.encode",
                    "tiktoken.Encoding.encode_ordinary",
                    "tiktoken.core.*")),
    # ids are exact: the default relative tolerance would let an id near 100 000 be off by 100
    Exercise("encode", NOTEBOOK, points=4, check="check_encode",
             compare=Compare(rtol=0.0, atol=0.0),
             allowance=BYTE_LEVEL,
             twins=("tiktoken.Encoding.encode",
                    "tiktoken.Encoding.encode_ordinary",
                    "tiktoken.core.*")),
)
