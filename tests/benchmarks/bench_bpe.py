"""BPE: training 1000 merges (naive, incremental, Hugging Face tokenizers), cl100k encoding
(the cached pure-Python encoder beside tiktoken: warm, and cold, the first pass with an empty
chunk cache) and long runs of one character (one chunk of 10 000 bytes: the heap merge,
tiktoken, and once the naive merge that notebook 03 teaches). Each pair is timed back to back."""

import time

from course_utils.data import wikipedia_text
from course_utils.tokens.bpe import learn_bpe, learn_bpe_naive
from course_utils.tokens.byte_bpe import byte_corpus, train_byte_bpe
from course_utils.tokens.byte_merges import _byte_pair_merge
from course_utils.tokens.cl100k import cl100k, tiktoken_cl100k
from tests.benchmarks.timing import Row, best_time, best_times
from tests.support.peers import train_hugging_face_bpe

TRAIN_BYTES = 900_000
MERGES = 1000
NAIVE_MERGES = 50
ENCODE_BYTES = 1_000_000
RUN = 10_000  # characters in a run of one character
RUNS = ["^", " ", "\n", "a"]


def training_rows(text: str) -> list[Row]:
    task = f"byte BPE, {MERGES} merges, {len(text.encode()) / 1e6:.2f} MB wiki"
    ours_s = best_time(lambda: train_byte_bpe(text, MERGES), repeat=3)
    hf_s = best_time(lambda: train_hugging_face_bpe(text, MERGES), repeat=3)
    corpus = byte_corpus(text)
    start = time.perf_counter()
    naive = learn_bpe_naive(corpus, NAIVE_MERGES)
    naive_s = (time.perf_counter() - start) * MERGES / NAIVE_MERGES
    same = naive.merges == learn_bpe(corpus, NAIVE_MERGES).merges
    return [
        Row(task, "course_utils incremental", ours_s, "s", f"{ours_s / hf_s:.1f}x tokenizers"),
        Row(task, "HF tokenizers (Rust)", hf_s, "s"),
        Row(
            task,
            "naive (recount every merge)",
            naive_s,
            "s",
            f"timed on {NAIVE_MERGES} merges x {MERGES // NAIVE_MERGES}; same merges: {same}",
        ),
    ]


def encoding_rows(text: str) -> list[Row]:
    ours, reference = cl100k(), tiktoken_cl100k()
    megabytes = len(text.encode()) / 1e6
    task = f"cl100k encode, {megabytes:.1f} MB wiki"

    def cold():  # the first pass: every distinct chunk is merged once
        ours._cache.clear()
        return ours.encode_ordinary(text)

    ours_ids = cold()
    tiktoken_s, cold_s, warm_s = best_times(
        [lambda: reference.encode_ordinary(text), cold, lambda: ours.encode_ordinary(text)],
        rounds=3,
    )
    same = ours_ids == reference.encode_ordinary(text)
    rate = megabytes / tiktoken_s
    return [
        Row(task, "course_utils (chunk cache warm)", megabytes / warm_s, "MB/s",
            f"{tiktoken_s / warm_s:.2f}x tiktoken's speed; same ids: {same}"),
        Row(task, "course_utils (first pass, cold)", megabytes / cold_s, "MB/s",
            f"{tiktoken_s / cold_s:.2f}x tiktoken's speed"),
        Row(task, "tiktoken (Rust)", rate, "MB/s"),
    ]  # fmt: skip


def long_run_rows() -> list[Row]:
    """A run of one character is one chunk: the naive merge rescans it after every merge."""
    ours, reference = cl100k(), tiktoken_cl100k()
    rows = []
    for character in RUNS:
        text = character * RUN

        def cold(text=text):  # not the cached chunk: the merge itself
            ours._cache.clear()
            return ours.encode(text)

        ours_s, tiktoken_s = best_times([cold, lambda text=text: reference.encode(text)], rounds=5)
        same = cold() == reference.encode(text)
        task = f"encode {RUN:,} x {character!r} (one chunk)"
        rows.append(Row(task, "course_utils (heap merge)", ours_s * 1e3, "ms",
                        f"tiktoken {tiktoken_s * 1e3:.1f} ms; same ids: {same}"))  # fmt: skip
    piece = (RUNS[0] * RUN).encode()
    start = time.perf_counter()
    naive = _byte_pair_merge(piece, ours.ranks)
    naive_s = time.perf_counter() - start
    same = [ours.ranks[token] for token in naive] == reference.encode(RUNS[0] * RUN)
    rows.append(Row(f"encode {RUN:,} x {RUNS[0]!r} (one chunk)", "naive merge (notebook 03)",
                    naive_s, "s", f"one run, O(n^2); same ids: {same}"))  # fmt: skip
    return rows


def run() -> list[Row]:
    text = wikipedia_text()
    return training_rows(text[:TRAIN_BYTES]) + encoding_rows(text[:ENCODE_BYTES]) + long_run_rows()
