"""The offline corpora and evaluation sets (all shipped inside installed packages).

* ``wikipedia_articles()``: 106 English Wikipedia articles (about 470k words) from
  gensim's bundled dump, wiki markup stripped; the main corpus of the workbook.
* ``lee_sentences()``: a small news corpus (about 60k words), one document a line.
* ``word_pairs("wordsim353" | "simlex999")``: word pairs with human similarity scores.
* ``analogy_questions()``: the Google analogy questions ("athens greece baghdad iraq").
* ``planted_analogy_corpus()``: a small synthetic corpus, seeded, where
  king − man + woman = queen is built in.

Nothing is downloaded. Loaders are cached: the second call is free.
"""

import bz2
import functools
import random
import re
from collections.abc import Iterator, Mapping
from types import MappingProxyType

from gensim.corpora.wikicorpus import extract_pages, filter_wiki
from gensim.test.utils import datapath

from course_utils import validation
from course_utils.validation import positive_int

WIKIPEDIA_DUMP = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
PAIR_FILES = {"wordsim353": "wordsim353.tsv", "simlex999": "simlex999.txt"}
WORD = re.compile(r"[a-z]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased runs of the letters a–z.

    ``"The dog's bark!"`` -> ``['the', 'dog', 's', 'bark']``
    """
    return WORD.findall(validation.text("text", text).lower())


def _strip_markup(wiki_text: str) -> str:
    text = filter_wiki(wiki_text)
    text = re.sub(r"'{2,}", "", text)  # ''italic'' and '''bold'''
    text = re.sub(r"^=+\s*(.*?)\s*=+\s*$", r"\1", text, flags=re.M)  # ==Headings==
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _read_articles() -> Iterator[tuple[str, str]]:
    """(title, plain text) of the dump's articles in order; redirects and meta pages dropped."""
    with bz2.open(datapath(WIKIPEDIA_DUMP)) as dump:
        for title, wiki_text, _ in extract_pages(dump):
            if ":" in title or wiki_text.lstrip().upper().startswith("#REDIRECT"):
                continue
            yield title, _strip_markup(wiki_text)


@functools.cache
def wikipedia_articles() -> tuple[tuple[str, str], ...]:
    """(title, plain text) of every article in the dump; redirects and meta pages dropped."""
    return tuple(_read_articles())


def wikipedia_text(n_chars: int | None = None) -> str:
    """All articles as one string, separated by blank lines; with ``n_chars``, its first
    ``n_chars`` characters, for which only the first articles are read (reading them all
    takes seconds)."""
    if n_chars is not None:
        positive_int("n_chars", n_chars)
    if n_chars is None or wikipedia_articles.cache_info().currsize:
        return "\n\n".join(text for _, text in wikipedia_articles())[:n_chars]
    parts, size = [], 0
    for _, text in _read_articles():
        parts.append(text)
        size += len(text) + 2
        if size >= n_chars:
            break
    return "\n\n".join(parts)[:n_chars]


@functools.cache
def wikipedia_sentences() -> tuple[tuple[str, ...], ...]:
    """The articles as tokenized paragraphs (lists of words), the unit skip-gram trains on."""
    paragraphs = (p for _, text in wikipedia_articles() for p in text.split("\n"))
    return tuple(words for words in map(tuple, map(tokenize, paragraphs)) if len(words) > 1)


@functools.cache
def lee_sentences() -> tuple[tuple[str, ...], ...]:
    """The Lee news corpus, one tokenized document per line."""
    with open(datapath("lee_background.cor"), encoding="utf-8") as handle:
        return tuple(tuple(tokenize(line)) for line in handle if line.strip())


@functools.cache
def word_pairs(name: str) -> tuple[tuple[str, str, float], ...]:
    """(word 1, word 2, human score) of WordSim-353 or SimLex-999, lower-cased."""
    if name not in PAIR_FILES:
        raise ValueError(f"name must be one of {', '.join(PAIR_FILES)}; got {name!r}")
    pairs = []
    with open(datapath(PAIR_FILES[name]), encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#") or not line.strip():
                continue
            first, second, score = line.split("\t")[:3]
            pairs.append((first.lower(), second.lower(), float(score)))
    return tuple(pairs)


@functools.cache
def analogy_questions() -> Mapping[str, tuple[tuple[str, str, str, str], ...]]:
    """{section: (a, b, c, d) questions "a is to b as c is to d"}, lower-cased, in file order.

    Read-only, like every cached corpus here: one caller cannot spoil it for the next.
    """
    sections: dict[str, list] = {}
    current = None
    with open(datapath("questions-words.txt"), encoding="utf-8") as handle:
        for line in handle:
            if line.startswith(":"):
                current = line[1:].strip()
                sections[current] = []
            elif line.strip():
                sections[current].append(tuple(line.lower().split()))
    return MappingProxyType({name: tuple(questions) for name, questions in sections.items()})


PLANTED_GENDER = {
    "male": ("he", "him", "his", "beard", "mr"),
    "female": ("she", "her", "hers", "dress", "mrs"),
}
PLANTED_ROLES = {
    "royal": (("king", "queen"), ("crown", "throne", "palace", "reign", "kingdom")),
    "common": (("man", "woman"), ("street", "work", "town", "market", "job")),
    "young": (("boy", "girl"), ("school", "toy", "play", "small", "game")),
    "noble": (("lord", "lady"), ("estate", "manor", "title", "land", "court")),
    "parent": (("father", "mother"), ("child", "home", "family", "raise", "care")),
    "sibling": (("brother", "sister"), ("twin", "older", "younger", "share", "room")),
}
PLANTED_FILLER = ("the", "a", "and", "of", "to", "in", "is", "was", "with", "on")


def planted_analogy_corpus(n_sentences: int = 3000, length: int = 10, seed: int = 0):
    """A synthetic corpus whose words have two planted attributes, gender and role.

    Each sentence is about one person word (king, queen, man, woman, boy, girl, ...);
    its other words are drawn from that person's gender words (he, she, ...), its role
    words (throne, street, ...) and filler. So a person's contexts are the sum of its
    gender's and its role's, and king - man + woman should land on queen. Seeded.
    Returns a tuple of sentences (tuples of words).
    """
    n_sentences, length = positive_int("n_sentences", n_sentences), positive_int("length", length)
    rng = random.Random(seed)
    roles = list(PLANTED_ROLES.values())
    genders = list(PLANTED_GENDER.values())
    sentences = []
    for _ in range(n_sentences):
        gender = rng.randrange(2)
        people, role_words = rng.choice(roles)
        pools = (genders[gender], role_words, PLANTED_FILLER)
        words = [
            rng.choice(pool) for pool in rng.choices(pools, weights=(0.35, 0.35, 0.3), k=length - 1)
        ]
        words.insert(rng.randrange(length), people[gender])
        sentences.append(tuple(words))
    return tuple(sentences)
