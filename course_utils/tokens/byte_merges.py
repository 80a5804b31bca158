"""How byte-level BPE encodes one chunk: merge the adjacent pair of lowest rank, again and again.

A tokenizer is its ``ranks``: {token bytes: id}, the 256 single bytes first and then each
merged token in the order it was learned. Encoding a chunk starts from its bytes and
repeatedly merges the adjacent pair whose concatenation has the lowest rank, which is how
``tiktoken`` encodes. :func:`_byte_pair_merge` does it as notebook 03 teaches (rescan every
pair after each merge: O(n^2) for a chunk of n bytes), and :func:`merge_steps` records each
step for a figure; the tokenizer (:mod:`course_utils.tokens.byte_bpe`) uses
:func:`_byte_pair_merge_fast`, the same merges in O(n log n) with a heap, so that a line of
10 000 ``=`` takes milliseconds, not seconds.
"""

import heapq
from collections.abc import Mapping

SINGLE_BYTES = tuple(bytes([b]) for b in range(256))


def _byte_pair_merge(piece: bytes, ranks: Mapping[bytes, int]) -> list[bytes]:
    """The tokens of one chunk: merge the adjacent pair of lowest rank until none is left.

    As notebook 03 teaches it: after each merge every adjacent pair is looked up again, so a
    chunk of n bytes costs O(n^2) (seconds for a run of 10 000 ``=``).
    :func:`_byte_pair_merge_fast` gives the same tokens in O(n log n).
    """
    parts = list(map(SINGLE_BYTES.__getitem__, piece))
    while (lowest := _lowest_pair(parts, ranks)) is not None:
        _, at = lowest
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    return parts


def _lowest_pair(parts: list[bytes], ranks: Mapping[bytes, int]) -> tuple[int, int] | None:
    """(rank, position) of the adjacent pair of ``parts`` whose concatenation has the lowest
    rank (the leftmost among equals), or None when no adjacent pair is in ``ranks``."""
    best = None
    for i in range(len(parts) - 1):
        rank = ranks.get(parts[i] + parts[i + 1])
        if rank is not None and (best is None or rank < best[0]):
            best = (rank, i)
    return best


def merge_steps(piece: bytes, ranks: Mapping[bytes, int]) -> list[tuple]:
    """Every step of encoding one chunk, for a figure: a list of (the tokens, where the step's
    merge put its new token, the rank it merged), from the single bytes (None, None) to the
    tokens :func:`_byte_pair_merge` returns. The ranks only grow from step to step."""
    if not isinstance(piece, bytes):
        raise TypeError(f"piece: expected bytes (a chunk's UTF-8), got {type(piece).__name__}")
    parts = list(map(SINGLE_BYTES.__getitem__, piece))
    steps = [(parts, None, None)]
    while (lowest := _lowest_pair(parts, ranks)) is not None:
        rank, at = lowest
        parts = parts[:at] + [parts[at] + parts[at + 1]] + parts[at + 2 :]
        steps.append((parts, at, rank))
    return steps


_MERGED = -1  # after[i] of a part that was merged into the part before it


def _byte_pair_merge_fast(piece: bytes, ranks: Mapping[bytes, int]) -> list[bytes]:
    """The tokens of one chunk, the same as :func:`_byte_pair_merge`'s, in O(n log n).

    The naive loop looks up every adjacent pair again after each merge, although a merge
    changes only the two pairs around the new part. Here:

    * **The parts are a linked list** over the byte positions of the piece: the part that
      starts at byte ``i`` is ``piece[i:after[i]]``, and the part before it starts at
      ``before[i]``. Merging the part at ``i`` with the next one is ``after[i] = end``: no
      list is shifted (the naive loop's ``parts[i : i + 2] = [...]`` moves every part
      after ``i``).
    * **A heap** (``heapq``) holds a candidate ``(rank, start, end)`` for each adjacent pair
      of parts ``piece[start:end]`` that is in the ranks. The smallest pops first: the
      lowest rank, and among equal ranks the leftmost pair, the naive loop's choice.
    * After a merge, the pairs the new part forms with its neighbours are pushed. The
      candidates the merge made wrong stay in the heap and are skipped when they pop
      (**stale**): the part at ``start`` was merged into the one before it, or the pair that
      starts there no longer ends at ``end`` (parts only grow, so a pair with the same start
      and end is the same pair).

    Every merge pushes at most two candidates, so the heap sees at most 3n of them, each
    pushed and popped in O(log n).
    """
    n = len(piece)
    after = list(range(1, n + 1))  # where the next part starts (n: there is none)
    before = list(range(-1, n - 1))  # where the previous part starts (-1: there is none)
    get = ranks.get
    heap = [(rank, i, i + 2) for i in range(n - 1) if (rank := get(piece[i : i + 2])) is not None]
    heapq.heapify(heap)
    while heap:
        _, start, end = heapq.heappop(heap)
        middle = after[start]
        if middle == _MERGED or middle == n or after[middle] != end:
            continue  # stale: the parts around this candidate have changed
        after[start], after[middle] = end, _MERGED
        if end < n:  # the new part and the one after it
            before[end] = start
            rank = get(piece[start : after[end]])
            if rank is not None:
                heapq.heappush(heap, (rank, start, after[end]))
        if (previous := before[start]) >= 0:  # the one before it and the new part
            rank = get(piece[previous:end])
            if rank is not None:
                heapq.heappush(heap, (rank, previous, end))
    tokens, i = [], 0
    while i < n:
        tokens.append(piece[i : after[i]])
        i = after[i]
    return tokens
