"""A small closed world to pre-train tiny language models on: people, cities, weather,
pets and colours, told in templated sentences of whole words.

Every fact is fixed (``FACTS``): each person lives in one city, has one pet and one
favourite colour; each city has one kind of weather; what a person carries follows from
the weather of their city (an umbrella in the rain, a scarf in the snow...); some things
have a colour ("the grass is green"). ``tiny_world_text`` draws sentences that state these
facts in several templates, seeded, so that a model that fills in a masked word or goes on
with the next one can only be right by having learnt the world: a guess of the right
*kind* (a city after "lives in") shows the grammar; the right city, the fact.

The words are the tokens (``WordTokenizer``): the vocabulary is small (about 60 words), a
masked word is one token, and every guess is a whole word.

``reading_questions`` makes a small reading task in the world's words: a passage of two or
three sentences, each a fact of another kind, drawn at random (not the world's ``FACTS``, so
that what a model remembers of the world cannot answer), a question on one of them, and the
position of its answer, one word of the passage. The questions need a few words the world's
sentences never say (``QUESTION_WORDS``).
"""

import random
from dataclasses import dataclass

import torch

from course_utils.validation import integer, positive_int

__all__ = ["FACTS", "QUESTION_WORDS", "Reading", "WordTokenizer", "fill_mask_probes",
           "reading_questions", "tiny_world_text", "world_sentences"]

PEOPLE = {  # person: (city, pet, favourite colour)
    "anna": ("paris", "cat", "red"), "ben": ("oslo", "dog", "blue"),
    "clara": ("cairo", "horse", "green"), "david": ("dublin", "fish", "yellow"),
    "emma": ("oslo", "rabbit", "purple"), "felix": ("cairo", "parrot", "orange"),
    "grace": ("dublin", "cat", "black"), "hugo": ("paris", "dog", "white"),
}
WEATHER = {"paris": "windy", "oslo": "snowy", "cairo": "sunny", "dublin": "rainy"}
CARRIES = {"windy": "a kite", "snowy": "a scarf", "sunny": "a hat", "rainy": "an umbrella"}
COLOURS = {"grass": "green", "sky": "blue", "snow": "white", "sun": "yellow",
           "night": "black", "tomato": "red"}
FACTS = {"people": PEOPLE, "weather": WEATHER, "carries": CARRIES, "colours": COLOURS}
QUESTION_WORDS = ("who", "where", "what", "does", "live", "have", "like", "?")
# a fact about a person, by kind: its sentence (a template of the world), the question on
# its value, the question on its person
KINDS = (("{person} lives in {value} .", "where does {person} live ?", "who lives in {value} ?"),
         ("{person} has a {value} .", "what does {person} have ?", "who has a {value} ?"),
         ("{person} likes the colour {value} .", "what colour does {person} like ?",
          "who likes the colour {value} ?"))


def _sentences(person: str) -> list[str]:
    """Every sentence the world can say about ``person`` (and their city's weather)."""
    city, pet, colour = PEOPLE[person]
    weather = WEATHER[city]
    return [f"{person} lives in {city} .", f"{person} has a {pet} .",
            f"the {pet} of {person} lives in {city} .",
            f"{person} likes the colour {colour} .",
            f"the favourite colour of {person} is {colour} .",
            f"in {city} it is often {weather} .", f"the weather in {city} is {weather} .",
            f"it is {weather} in {city} , so {person} takes {CARRIES[weather]} .",
            f"{person} takes {CARRIES[weather]} because {city} is {weather} ."]


def tiny_world_text(n_sentences: int, seed: int = 0) -> str:
    """``n_sentences`` sentences of the world, drawn at random (seeded) and joined by
    spaces: a fact about a person (9 templates) four times in five, else a thing's colour
    ("the grass is green ."). Lower case; punctuation marks are words of their own."""
    positive_int("n_sentences", n_sentences)
    integer("seed", seed, minimum=0)
    generator = random.Random(seed)
    people, things = sorted(PEOPLE), sorted(COLOURS)
    sentences = []
    for _ in range(n_sentences):
        if generator.random() < 0.8:
            sentences.append(generator.choice(_sentences(generator.choice(people))))
        else:
            thing = generator.choice(things)
            sentences.append(f"the {thing} is {COLOURS[thing]} .")
    return " ".join(sentences)


def world_sentences() -> set[str]:
    """Every sentence ``tiny_world_text`` can draw (each ends with " ."): the true ones."""
    return ({s for person in PEOPLE for s in _sentences(person)}
            | {f"the {thing} is {colour} ." for thing, colour in COLOURS.items()})


def fill_mask_probes() -> dict[str, list[tuple[str, str]]]:
    """Sentences of the world with one word masked, by kind of fact: {kind: [(sentence with
    "[MASK]", the word the world puts there), ...]}. The kinds: a person's city, pet and
    colour (8 sentences each), a city's weather (4), what the weather makes a person take
    (8), a thing's colour (6)."""
    people = sorted(PEOPLE)
    return {
        "a person's city": [(f"{p} lives in [MASK] .", PEOPLE[p][0]) for p in people],
        "a person's pet": [(f"{p} has a [MASK] .", PEOPLE[p][1]) for p in people],
        "a person's colour": [(f"the favourite colour of {p} is [MASK] .", PEOPLE[p][2])
                              for p in people],
        "a city's weather": [(f"the weather in {c} is [MASK] .", w) for c, w in WEATHER.items()],
        "what the weather needs": [
            (f"it is {WEATHER[PEOPLE[p][0]]} in {PEOPLE[p][0]} , so {p} takes "
             f"{CARRIES[WEATHER[PEOPLE[p][0]]].split()[0]} [MASK] .",
             CARRIES[WEATHER[PEOPLE[p][0]]].split()[1]) for p in people],
        "a thing's colour": [(f"the {t} is [MASK] .", c) for t, c in COLOURS.items()],
    }


@dataclass(frozen=True)
class Reading:
    """A question, its passage, and the answer: the word ``passage.split()[answer]``."""

    question: str
    passage: str
    answer: int


def reading_questions(n: int, seed: int = 0, one_kind: bool = False) -> list[Reading]:
    """``n`` questions, each on a passage of two or three facts drawn at random, seeded.

    Each sentence states a fact of another kind about another person, in one of the world's
    templates: where they live, their pet or their colour ("anna lives in oslo ."), its
    value drawn at random. The question asks, with equal odds, for the value of one of the
    facts ("where does anna live ?") or for its person ("who lives in oslo ?"); the answer
    is one word of the passage. A passage states each kind of fact at most once, so the
    question's verb (*live*, *have*, *like*) points to one sentence, which a reader has to
    find (its verb is *lives*, *has*, *likes*, other words) before it picks the word asked.
    With ``one_kind=True`` every sentence of a passage states the same kind of fact (no value
    twice), and only the person or the value named in the question points to its sentence.
    """
    positive_int("n", n)
    integer("seed", seed, minimum=0)
    if not isinstance(one_kind, bool):
        raise TypeError(f"one_kind must be True or False; got {one_kind!r}")
    generator = random.Random(seed)
    values = (sorted(WEATHER), sorted({pet for _, pet, _ in PEOPLE.values()}),
              sorted({colour for _, _, colour in PEOPLE.values()}))
    examples = []
    for _ in range(n):
        people = generator.sample(sorted(PEOPLE), generator.choice((2, 3)))
        kinds = ([generator.randrange(len(KINDS))] * len(people) if one_kind
                 else generator.sample(range(len(KINDS)), len(people)))   # each kind once
        drawn = [generator.sample(pool, len(people)) for pool in values]   # no value twice
        facts = [(person, kind, drawn[kind][i])
                 for i, (person, kind) in enumerate(zip(people, kinds, strict=True))]
        sentences = [KINDS[kind][0].format(person=person, value=value)
                     for person, kind, value in facts]
        i = generator.randrange(len(facts))
        person, kind, value = facts[i]
        asks_person = generator.random() < 0.5
        question = KINDS[kind][2 if asks_person else 1].format(person=person, value=value)
        before = sum(len(sentence.split()) for sentence in sentences[:i])
        answer = before + sentences[i].split().index(person if asks_person else value)
        examples.append(Reading(question, " ".join(sentences), answer))
    return examples


class WordTokenizer:
    """Whole words as tokens: ``encode`` splits at white space, ``decode`` joins with spaces.

    The vocabulary is the sorted words of ``text``, ids 0 … V − 1 (``n_vocab`` = V), and one
    more id, ``mask_id`` = V, for ``[MASK]``.
    """

    def __init__(self, text: str):
        self.words = sorted(set(text.split()))
        self.ids = {word: i for i, word in enumerate(self.words)}
        self.n_vocab = len(self.words)
        self.mask_id = self.n_vocab

    def encode(self, text: str) -> torch.Tensor:
        """The ids of the words of ``text`` (1-D, int64); ``[MASK]`` is ``mask_id``."""
        unknown = [w for w in text.split() if w != "[MASK]" and w not in self.ids]
        if unknown:
            raise ValueError(f"words outside the vocabulary: {unknown}")
        return torch.tensor([self.mask_id if w == "[MASK]" else self.ids[w] for w in text.split()])

    def decode(self, ids) -> str:
        """The words of ``ids`` (a sequence of ints or a 1-D tensor), joined by spaces."""
        return " ".join("[MASK]" if int(i) == self.mask_id else self.words[int(i)] for i in ids)
