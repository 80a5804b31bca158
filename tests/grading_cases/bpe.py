ASSIGNMENT = "03_bpe"

# The whole corpus read as one stream: pairs such as ('_', 'l') span two words.
ACROSS_WORDS = """
def count_pairs(corpus):
    stream = [token for word, count in corpus.items() for _ in range(count) for token in word]
    pairs = {}
    for pair in zip(stream, stream[1:]):
        pairs[pair] = pairs.get(pair, 0) + 1
    return pairs
"""

# Right on the visible example, where no word has the pair twice; the hidden banana does.
FIRST_OCCURRENCE_ONLY = """
def merge_pair(corpus, pair):
    merged = {}
    for word, count in corpus.items():
        word = list(word)
        for i in range(len(word) - 1):
            if (word[i], word[i + 1]) == pair:
                word[i : i + 2] = [pair[0] + pair[1]]
                break
        merged[tuple(word)] = merged.get(tuple(word), 0) + count
    return merged
"""

ALPHABETICAL_TIES = """
def learn_vocabulary(corpus, k):
    vocabulary = sorted({token for word in corpus for token in word})
    for _ in range(k):
        pairs = bpe.count_pairs(corpus)
        best = max(pairs.values())
        t_left, t_right = min(pair for pair, count in pairs.items() if count == best)
        vocabulary.append(t_left + t_right)
        corpus = bpe.merge_pair(corpus, (t_left, t_right))
    return vocabulary
"""

# Right on "lower" (the visible test), wrong on "owner" (hidden).
GREEDY_LONGEST_MATCH = """
def segment_word(word, merges):
    vocabulary = {t_left + t_right for t_left, t_right in merges} | set(word + "_")
    text, tokens = word + "_", []
    while text:
        size = max(n for n in range(1, len(text) + 1) if text[:n] in vocabulary)
        tokens.append(text[:size])
        text = text[size:]
    return tokens
"""

# Merges whatever mergeable pair comes first instead of the lowest rank.
LEFTMOST_PAIR = """
def merge_chunk(piece, ranks):
    parts = [bytes([b]) for b in piece]
    merged = True
    while merged:
        merged = False
        for i in range(len(parts) - 1):
            if parts[i] + parts[i + 1] in ranks:
                parts[i : i + 2] = [parts[i] + parts[i + 1]]
                merged = True
                break
    return parts
"""

WRONG = {
    "counts_across_words": {"count_pairs": ACROSS_WORDS},
    "merges_first_occurrence_only": {"merge_pair": FIRST_OCCURRENCE_ONLY},
    "breaks_ties_alphabetically": {"learn_vocabulary": ALPHABETICAL_TIES},
    "greedy_longest_match": {"segment_word": GREEDY_LONGEST_MATCH},
    "merges_leftmost_pair": {"merge_chunk": LEFTMOST_PAIR},
}

CORRECT: dict[str, dict[str, str]] = {}
