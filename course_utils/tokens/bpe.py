"""Character-level BPE: the corpus C of the lectures' figure, and the learner on real text.

The token learner of the figure (Jurafsky & Martin, Fig. 2.13) is notebook 03's to write;
this module gives what the notebook needs around it:

* :func:`corpus_from_text`: the corpus C as the learner sees it, a dict ``{word: count}``,
  each word a tuple of characters ending with the end-of-word token ``"_"``, the words in
  the order of their first appearance, so ``"low lower"`` is
  ``{('l', 'o', 'w', '_'): 1, ('l', 'o', 'w', 'e', 'r', '_'): 1}``;
* :func:`train_bpe`: Hugging Face ``tokenizers``' BPE learner on the same words (each
  ending with ``"_"``, so that merges never cross a word), for real text (section 6).
  Among equally frequent pairs it takes its own order (the smallest pair of ids), not the
  notebook's first occurrence in C, so it may learn the same pieces in another order.
  :func:`merges_of` lists what it learned, :func:`first_merges` keeps the first k of them,
  :func:`corpus_length` counts the tokens of C as a tokenizer cuts it.

A ``Tokenizer`` of :func:`train_bpe` segments one word: ``tokenizer.encode(word + "_")``;
a character it never saw becomes ``[UNK]``.
"""

import json
from collections import Counter

from tokenizers import Tokenizer, models, trainers

from course_utils import validation

END_OF_WORD = "_"
UNKNOWN = "[UNK]"


def corpus_from_text(text: str, end_of_word: str = END_OF_WORD) -> dict[tuple, int]:
    """The corpus C of ``text``: {word as a tuple of characters + end_of_word: count}.

    Words are the whitespace-separated strings of ``text``, in order of first appearance.
    """
    words = Counter(validation.text("text", text).split())
    if not words:
        raise ValueError("the text has no words: BPE needs a non-empty corpus")
    return {(*word, end_of_word): count for word, count in words.items()}


def train_bpe(text: str, k: int) -> Tokenizer:
    """Hugging Face's BPE learner on the words of ``text``, each ending with ``"_"``: k
    merges (fewer when every word is one token before), ``[UNK]`` for unseen characters."""
    words = [word + END_OF_WORD for word in validation.text("text", text).split()]
    k = validation.integer("k (the number of merges)", k, minimum=0)
    if not words:
        raise ValueError("the text has no words: BPE needs a non-empty corpus")
    alphabet = set().union(*words)
    tokenizer = Tokenizer(models.BPE(unk_token=UNKNOWN))
    trainer = trainers.BpeTrainer(vocab_size=len(alphabet) + 1 + k, special_tokens=[UNKNOWN],
                                  show_progress=False)
    tokenizer.train_from_iterator(words, trainer=trainer)
    return tokenizer


def merges_of(tokenizer: Tokenizer) -> list[tuple[str, str]]:
    """The merges (t_L, t_R) of a BPE ``tokenizer``, in the order they were learned."""
    return [tuple(pair) for pair in json.loads(tokenizer.to_str())["model"]["merges"]]


def first_merges(tokenizer: Tokenizer, k: int) -> Tokenizer:
    """A tokenizer with the vocabulary of ``tokenizer`` and only its first k merges."""
    k = validation.integer("k (the number of merges)", k, minimum=0)
    model = models.BPE(vocab=tokenizer.get_vocab(), merges=merges_of(tokenizer)[:k],
                       unk_token=UNKNOWN)
    return Tokenizer(model)


def corpus_length(tokenizer: Tokenizer, corpus: dict[tuple, int]) -> int:
    """How many tokens the corpus C (of :func:`corpus_from_text`) has, cut by ``tokenizer``."""
    tokenize = tokenizer.model.tokenize
    return sum(len(tokenize("".join(word))) * count for word, count in corpus.items())
