"""Byte-level BPE with GPT-4's pre-tokenizer, learned by Hugging Face ``tokenizers`` and
run by ``tiktoken`` (the language models of 06 and 09; notebook 03's students write
their own learner, and :func:`tokens` shows how an encoding cuts their text).

Byte-level BPE learns merges on the UTF-8 bytes of the text: the initial vocabulary is
the 256 possible bytes, so any text can be encoded and nothing is ever unknown. A regex
pre-tokenizer (GPT-4's, :data:`CL100K_PATTERN`) first cuts the text into chunks, and merges
never cross a chunk boundary.

:func:`train_byte_bpe` learns the merges with Hugging Face's ``BpeTrainer`` (byte-level,
the chunks cut by the same pattern; among equally frequent pairs it takes its own order)
and returns ``tiktoken.Encoding`` of them: ids 0..255 the single bytes, 256 + i the token
of merge i + 1. :func:`tokens` shows how an encoding cuts a text.
"""

from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

from course_utils import validation

from .bpe import merges_of
from .pre_tokenizer import CL100K_PATTERN

__all__ = ["CL100K_PATTERN", "tokens", "train_byte_bpe"]


def _learned_merges(text: str, k: int, pattern: str) -> list[tuple[str, str]]:
    """Hugging Face's k byte-level merges of ``text`` (each byte written as GPT-2's
    printable character), the chunks cut by ``pattern``."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    trainer = trainers.BpeTrainer(vocab_size=256 + k, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator([text], trainer=trainer)
    return merges_of(tokenizer)


def train_byte_bpe(text: str, k: int, pattern: str = CL100K_PATTERN):
    """``tiktoken.Encoding`` of k byte-level merges learned on ``text`` by Hugging Face's
    ``BpeTrainer`` (fewer when the text runs out of pairs), chunks cut by ``pattern``.

    Ids 0-255 are the single bytes, 256 + i the token of merge i + 1; ``n_vocab`` is 256 + k.
    """
    import tiktoken
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    text = validation.text("text", text)
    k = validation.integer("k (the number of merges)", k, minimum=0)
    if not text:
        raise ValueError("the text is empty: BPE needs a non-empty corpus")
    byte_of = {character: byte for byte, character in bytes_to_unicode().items()}
    ranks = {bytes([b]): b for b in range(256)}
    for pair in _learned_merges(text, k, pattern):
        token = bytes(byte_of[character] for character in "".join(pair))
        ranks.setdefault(token, len(ranks))
    return tiktoken.Encoding(f"byte_bpe_{k}", pat_str=pattern, mergeable_ranks=ranks,
                             special_tokens={})


def tokens(encoding, text: str, **special) -> list[str]:
    """How ``encoding`` (a ``tiktoken.Encoding``) cuts ``text``: each token's text, a token
    that cuts a character shown with U+FFFD (``special``: ``encode``'s ``allowed_special``
    and ``disallowed_special``)."""
    ids = encoding.encode(validation.text("text", text), **special)
    return [encoding.decode_single_token_bytes(i).decode("utf-8", errors="replace")
            for i in ids]
