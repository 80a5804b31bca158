"""Training the tiny GPT: the course's blocks (the tests' ``AssembledGPT``) beside the same
model built from ``nn.TransformerEncoderLayer`` with a causal mask, started from the same
weights. One full step (forward, next-token loss, backward, AdamW step) of each is timed in
turn on the same batch of Wikipedia text in a byte-level BPE of 256 merges (so a busy
machine slows both alike; the best round of each counts). The rows give training tokens/s,
the note the ratio of the two step times and the largest difference of the first losses.
On the CPU and on the GPU when there is one."""

import time

import torch

from course_utils.data import wikipedia_text
from course_utils.models.gpt import GPTConfig, TinyGPT, next_token_loss, random_batch
from course_utils.tokens.byte_bpe import train_byte_bpe
from tests.benchmarks.timing import Row, on_each_device, synchronize
from tests.support.peers import AssembledGPT, TorchLayersGPT

TEXT_CHARS = 200_000
MERGES = 256
BATCH = 16
ROUNDS = 10


def training_step(model: TinyGPT):
    """A function doing one AdamW step of ``model`` on a batch; returns the loss."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step(batch: torch.Tensor) -> float:
        loss = next_token_loss(model, batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def rows(device: torch.device) -> list[Row]:
    text = wikipedia_text()[:TEXT_CHARS]
    tokenizer = train_byte_bpe(text, MERGES)
    ids = torch.tensor(tokenizer.encode_ordinary(text), device=device)
    config = GPTConfig(tokenizer.n_vocab, block_size=128, d_model=128, n_layers=4, n_heads=4,
                       dim_feedforward=512)  # fmt: skip
    torch.manual_seed(0)
    ours = AssembledGPT(config).to(device)
    theirs = TorchLayersGPT(config).to(device)
    theirs.load_state_dict(ours.state_dict())
    steps = [training_step(ours), training_step(theirs)]
    generator = torch.Generator().manual_seed(0)
    batches = [random_batch(ids, config.block_size, BATCH, generator) for _ in range(ROUNDS + 1)]

    first_losses = [step(batches[0]) for step in steps]  # also the warm-up
    best = [float("inf")] * len(steps)
    for batch in batches[1:]:
        for i, step in enumerate(steps):
            synchronize(device)
            start = time.perf_counter()
            step(batch)
            synchronize(device)
            best[i] = min(best[i], time.perf_counter() - start)
    tokens = BATCH * config.block_size
    task = f"tiny GPT training step, {BATCH}x{config.block_size} tokens"
    note = (
        f"{best[0] / best[1]:.2f}x the PyTorch layers' step time; "
        f"first losses differ by {abs(first_losses[0] - first_losses[1]):.1e}"
    )
    return [
        Row(task, "the course's blocks", tokens / best[0], "tokens/s", note),
        Row(task, "nn.TransformerEncoderLayer", tokens / best[1], "tokens/s"),
    ]


def run() -> list[Row]:
    return on_each_device(rows)
