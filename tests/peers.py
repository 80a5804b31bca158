"""Other libraries' implementations, set up the same way for the tests and the benchmarks."""

from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

from course_utils.byte_bpe import CL100K_PATTERN


def train_hugging_face_bpe(text: str, k: int) -> Tokenizer:
    """Hugging Face `tokenizers` byte-level BPE with k merges and cl100k's pre-tokenizer."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(CL100K_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=256 + k,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator([text], trainer=trainer)
    return tokenizer
