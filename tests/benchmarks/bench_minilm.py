"""MiniLM forward on a padded batch of 32 Wikipedia sentences: ``minilm_encoder`` (the
course's blocks) beside Hugging Face's ``BertModel`` with the same weights, timed in turn
without autograd (one call of each per round, so a busy machine slows both alike; the best
round of each counts). The note gives the time ratio and the largest difference. On the CPU
and on the GPU when there is one."""

import torch

from course_utils.data import wikipedia_sentences
from course_utils.models.minilm import minilm_encoder
from course_utils.models.pretrained import load_encoder
from tests.benchmarks.timing import Row, best_times, on_each_device

BATCH = 32
MAX_WORDS = 60


def sentences(n: int = BATCH) -> list[str]:
    """``n`` Wikipedia paragraphs cut to at most ``MAX_WORDS`` words: lengths differ."""
    return [" ".join(words[:MAX_WORDS]) for words in wikipedia_sentences()[:n]]


def rows(device: torch.device) -> list[Row]:
    tokenizer, bert = load_encoder(device)
    ours = minilm_encoder(device)
    batch = tokenizer(sentences(), padding=True, return_tensors="pt").to(device)
    ids, mask = batch["input_ids"], batch["attention_mask"]

    @torch.no_grad()
    def course():
        return ours(ids, mask)

    @torch.no_grad()
    def hugging_face():
        return bert(input_ids=ids, attention_mask=mask).last_hidden_state

    difference = (course() - hugging_face()).abs().max().item()
    ours_s, hf_s = best_times([course, hugging_face], device)
    task = f"MiniLM forward, {BATCH} sentences padded to {ids.shape[1]}"
    note = f"{ours_s / hf_s:.2f}x BertModel's time; max |diff| {difference:.1e}"
    return [
        Row(task, "course_utils minilm_encoder", ours_s * 1e3, "ms", note),
        Row(task, "HF BertModel", hf_s * 1e3, "ms"),
    ]


def run() -> list[Row]:
    return on_each_device(rows)
