"""The exercises of 03_bpe: one record each (``course_utils.exercises``)."""

from course_utils.exercises.allowance import BYTE_LEVEL, DEFAULT, Allowance
from course_utils.exercises.record import Compare, Exercise

NOTEBOOK = "03_bpe"

EXERCISES = (
    # dicts: the pairs (count_pairs) and the words (merge_pair) compare in any order already
    Exercise("count_pairs", NOTEBOOK, points=2, check="check_pair_counts",
             twins=("course_utils.tokens.bpe.count_pairs",)),
    Exercise("merge_pair", NOTEBOOK, points=2, check="check_merged_corpus",
             twins=("course_utils.tokens.bpe.merge_pair",
                    "course_utils.tokens.bpe.merge_word")),
    # stands on the references of exercises 1 and 2, which its text offers
    Exercise("learn_vocabulary", NOTEBOOK, points=3, check="check_bpe_vocabulary",
             allowance=Allowance(modules=DEFAULT.modules + (
                 "course_utils.tokens.bpe.count_pairs", "course_utils.tokens.bpe.merge_pair",
                 "course_utils.tokens.bpe.merge_word")),
             twins=("course_utils.tokens.bpe.learn_bpe_naive",
                    "course_utils.tokens.bpe.learn_bpe",
                    "course_utils.checks.bpe._vocabulary_with_ties")),
    Exercise("segment_word", NOTEBOOK, points=2, check="check_segmentation",
             twins=("course_utils.tokens.bpe.segment_word",
                    "course_utils.tokens.bpe.segment",
                    "course_utils.tokens.bpe.apply_merges")),
    # the byte-level exercises split text with the notebook's pattern, as GPT-4 does, and may
    # read the tokenizer's vocabulary (reading answers nothing; encoding is refused)
    Exercise("merge_chunk", NOTEBOOK, points=3, check="check_merge_chunk",
             allowance=BYTE_LEVEL,
             twins=("course_utils.tokens.byte_merges._byte_pair_merge",
                    "course_utils.tokens.byte_merges._byte_pair_merge_fast",
                    "course_utils.tokens.byte_merges._lowest_pair",
                    "course_utils.tokens.byte_merges.merge_steps",
                    "course_utils.tokens.byte_bpe.BytePairTokenizer.encode",
                    "course_utils.tokens.byte_bpe.BytePairTokenizer.encode_ordinary",
                    "course_utils.tokens.byte_bpe.BytePairTokenizer._encode_chunk",
                    # every encoding method (encode_batch, encode_single_token...)
                    "course_utils.tokens.byte_bpe.*encode*",
                    "tiktoken.Encoding.encode",
                    "tiktoken.Encoding.encode_ordinary",
                    "tiktoken.core.*")),
    # ids are exact: the default relative tolerance would let an id near 100 000 be off by 100
    Exercise("encode", NOTEBOOK, points=4, check="check_encode",
             compare=Compare(rtol=0.0, atol=0.0),
             allowance=BYTE_LEVEL,
             twins=("course_utils.tokens.byte_bpe.BytePairTokenizer.encode",
                    "course_utils.tokens.byte_bpe.BytePairTokenizer.encode_ordinary",
                    "course_utils.tokens.byte_bpe.BytePairTokenizer._encode_chunk",
                    "course_utils.tokens.byte_bpe.*encode*",
                    "course_utils.tokens.byte_merges._byte_pair_merge_fast",
                    "course_utils.tokens.byte_bpe.BytePairTokenizer.pre_tokenize",
                    "course_utils.tokens.byte_bpe.BytePairTokenizer.tokens",
                    "course_utils.tokens.pre_tokenizer.pre_tokenize",
                    "course_utils.tokens.pre_tokenizer.*",
                    "course_utils.tokens.byte_merges._byte_pair_merge",
                    "course_utils.tokens.byte_merges._lowest_pair",
                    "course_utils.tokens.byte_merges.merge_steps",
                    "course_utils.checks.bpe._model_encode",
                    "tiktoken.Encoding.encode",
                    "tiktoken.Encoding.encode_ordinary",
                    "tiktoken.core.*")),
)
