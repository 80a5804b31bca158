"""07's rule by cost: an answer whose work grows with N² is refused, whatever form it takes.

``NoSquareMatrix`` (``course_utils.exercises.allowance``) sees one form of the quadratic
product, a tensor of N_q × N_k entries. The same work hides in a loop over the rows or the
pairs, in blocks, in an ``einsum`` that reduces at once. So the answer to an exercise whose
rules hold ``LinearWork`` is also run on inputs of the test's batch and feature sizes at
``SHORT`` and ``2 × SHORT`` positions,
under the same guards, and its work is counted at each length by PyTorch's own tools:

* the aten operations it runs (a ``TorchDispatchMode`` sees each one, views included),
* the entries those operations produce,
* the FLOPs of its matrix products (``torch.utils.flop_counter``'s formulas, those that
  ``FlopCounterMode`` adds up),
* the peak of the memory it allocates outside torch (``tracemalloc``: NumPy arrays,
  Python lists).

Linear work doubles with the length (a little less: fixed costs do not grow). Any count that
grows more than ``RATIO`` times breaks the rule: ``RuleBroken``, naming the rule and the
count. A Python loop over the pairs that keeps only running sums, or a NumPy loop over the
rows, allocates little and runs no torch operation: its cost is counted only by an
interpreter hook (what it leaves out is said in the README, Instructors).

An exercise whose rules hold ``ChunkedWork`` (07's causal linear attention, given a chunk
size C of at least ``CHUNKED_FROM``; a smaller one is not measured) is run again at 4C and
8C positions instead, on the test's batch, dtype and feature map, with values of
``CHUNK_VALUES`` features: the counts above must grow as they do for ``LinearWork``, and two
more things are measured: the aten operations added by the 4 more chunks, at most
``PER_POSITION`` per position added (a loop over the positions runs a dozen or more per
position; a loop over the chunks a few dozen per chunk), and the largest tensor an operation
makes (views excluded), at most the numbers the chunked form keeps alive together: the
inputs and their features, the output, the chunks' C × C scores and one r × D_v state per
chunk (a state per position, r · D_v numbers for every position, is the form it refuses);
the same bound, in float64 bytes, for the memory allocated outside torch.
"""

import tracemalloc
from collections.abc import Callable
from functools import partial
from types import MappingProxyType

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry

from course_utils.exercises.allowance import ChunkedWork, LinearWork, RuleBroken

from .records import RULES

__all__ = ["CHUNKED_FROM", "CHUNK_VALUES", "PER_POSITION", "RATIO", "SHORT", "check_cost"]

SHORT = 64  # the answer runs on SHORT, then 2 × SHORT positions
RATIO = 3.0  # a count that grows more than this when the length doubles is not linear
OUTSIDE = "bytes allocated outside torch"
SMALLEST = MappingProxyType({"aten operations": 2 * SHORT, "entries produced": 2 * SHORT,
                             "FLOPs of matrix products": 2 * SHORT, OUTSIDE: 16 * 2**10})
"""Below these, a count at 2 × SHORT is a fixed cost, whatever its growth."""
CHUNKED_FROM = 32  # ChunkedWork is measured for chunks of this many positions or more
CHUNK_VALUES = 128  # the values' features in those runs: a state per position stands out
PER_POSITION = 4  # the aten operations a chunked form may add per position added


class WorkCounter(TorchDispatchMode):
    """Counts the aten operations run under it, the entries they produce and the FLOPs of
    the matrix products among them. The first count to pass its limit raises
    ``broken(name)``, so that a quadratic answer is stopped early (one that catches it
    keeps the count it reached)."""

    def __init__(self, limits: dict[str, float], broken: Callable[[str], RuleBroken]):
        super().__init__()
        self.counts = {"aten operations": 0, "entries produced": 0, "FLOPs of matrix products": 0}
        self.largest = (0, ())  # the entries and shape of the largest tensor made (not a view)
        self.limits = limits
        self.broken = broken

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False  # nothing is compiled here: spares importing torch._dynamo (2 s)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self.counts["aten operations"] += 1
        leaves = out if isinstance(out, tuple | list) else (out,)
        made = [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)]
        self.counts["entries produced"] += sum(leaf.numel() for leaf in made)
        if not func.is_view:
            self.largest = max([self.largest, *((t.numel(), tuple(t.shape)) for t in made)])
        flops = flop_registry.get(func._overloadpacket)
        if flops is not None:
            self.counts["FLOPs of matrix products"] += flops(*args, **kwargs, out_val=out)
        for name, count in self.counts.items():
            if count > self.limits.get(name, count):
                raise self.broken(name)
        return out


def _python_memory_peak(function: Callable, args: tuple, kwargs: dict) -> int:
    """The peak of the memory one call allocates through Python's allocator (NumPy's
    arrays, lists, floats), above what was there before. A pass of its own: tracing
    allocations under the dispatch mode would slow it tenfold."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        function(*args, **kwargs)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        if started:
            tracemalloc.stop()


def _at_length(args: tuple, n: int, generator: torch.Generator) -> tuple:
    """The arguments ``(q, k, v, *rest)`` with new random ``q``, ``k`` and ``v`` of ``n``
    positions, their other sizes, dtype and device those of the test's."""
    if len(args) < 3 or not all(isinstance(a, torch.Tensor) and a.dim() >= 2 for a in args[:3]):
        raise TypeError("check_cost expects the arguments (q, k, v, feature_map...) with q, k "
                        f"and v tensors of at least 2 dimensions, got {[type(a) for a in args]}")

    def longer(tensor: torch.Tensor) -> torch.Tensor:
        shape = (*tensor.shape[:-2], n, tensor.shape[-1])
        return torch.randn(shape, generator=generator, dtype=tensor.dtype).to(tensor.device) / 2

    return (*(longer(tensor) for tensor in args[:3]), *args[3:])


def _work(function: Callable, args: tuple, kwargs: dict, limits: dict,
          broken: Callable[[str], RuleBroken]) -> dict[str, int]:
    """The counts of ``function`` on ``args``: the torch ones, then the memory outside
    torch. Raises ``broken(name)`` as soon as a torch count passes its limit."""
    counter = WorkCounter(limits, broken)
    with counter:
        function(*args, **kwargs)
    return {**counter.counts, OUTSIDE: _python_memory_peak(function, args, kwargs)}


def _broken(exercise: str, name: str, short: int = 0, long: int = 0,
            positions: int = SHORT) -> RuleBroken:
    """The refusal of an answer whose count ``name`` grew from ``short`` to ``long``
    (unknown when the count was stopped at its limit) from ``positions`` to twice as many."""
    growth = f"{long / short:.1f} times" if short else f"more than {RATIO:g} times"
    return RuleBroken(
        f"{exercise} does work that grows with N², the number of positions squared: its "
        f"{name} grew {growth} from {positions} to {2 * positions} positions, where linear work "
        "doubles. This exercise asks for work linear in N, whatever form the N × N products "
        "take (a matrix, a loop over rows or pairs, blocks, lists): look at which of your "
        "steps runs once for every pair of a query and a key"
    )


def _chunked_at(args: tuple, n: int, generator: torch.Generator) -> tuple:
    """The arguments at ``n`` positions, the values with ``CHUNK_VALUES`` features."""
    q, k, v = _at_length(args, n, generator)[:3]
    v = torch.randn((*v.shape[:-1], CHUNK_VALUES), generator=generator, dtype=v.dtype).to(v.device)
    return (q, k, v, *args[3:])


def _chunk_bound(args: tuple, chunk: int) -> int:
    """The entries of the chunked form's tensors alive together, on ``args``: q, k, their
    features, v, the output, the chunks' C × C scores and one r × D_v state per chunk."""
    q, _, v, feature_map = args[:4]
    n, d, d_v = q.shape[-2], q.shape[-1], v.shape[-1]
    r = torch.as_tensor(feature_map(q[..., :1, :])).shape[-1]
    lead = torch.broadcast_shapes(q.shape[:-2], v.shape[:-2]).numel()
    return lead * (n * (2 * d + 2 * r + 2 * d_v + chunk) + -(-n // chunk) * r * d_v)


def _check_chunks(exercise: str, function: Callable, args: tuple, kwargs: dict) -> None:
    """Raises ``RuleBroken`` unless ``function`` works chunk by chunk (``ChunkedWork``) and
    its work grows linearly, both measured at 4 and 8 chunks of the test's chunk size (the
    two lengths ``LinearWork`` compares, here)."""
    chunk = kwargs.get("chunk_size", args[4] if len(args) > 4 else None)
    if not isinstance(chunk, int) or chunk < CHUNKED_FROM:
        return
    generator = torch.Generator()
    generator.seed()  # fresh inputs each time: an answer cannot recognise them
    broken = partial(_broken, exercise, positions=4 * chunk)
    runs = {}
    for n in (4 * chunk, 8 * chunk):
        at_n = _chunked_at(args, n, generator)
        counter = WorkCounter({}, broken)
        try:
            with counter:
                function(*at_n, **kwargs)
            outside = _python_memory_peak(function, at_n, kwargs)
        except Exception as error:
            error.add_note(f"(while the tests ran {exercise} on {n} positions in chunks of "
                           f"{chunk} to see how its work grows)")
            raise
        runs[n] = ({**counter.counts, OUTSIDE: outside}, counter.largest, _chunk_bound(at_n, chunk))
    short, long = runs[4 * chunk][0], runs[8 * chunk][0]
    for name, count in long.items():
        if count > RATIO * max(short[name], SMALLEST[name]):
            raise broken(name, short[name], count)
    added = long["aten operations"] - short["aten operations"]
    if added > PER_POSITION * 4 * chunk:
        raise RuleBroken(
            f"{exercise} works position by position: from {4 * chunk} to {8 * chunk} positions "
            f"(4 more chunks of {chunk}) it ran {added} more PyTorch operations, "
            f"{added / (4 * chunk):.0f} per position, where a chunked form adds a few per chunk "
            "whatever the chunk's length: look at which of your steps runs once per position")
    for n, (counts, (entries, shape), bound) in runs.items():
        if entries > bound or counts[OUTSIDE] > 8 * bound:
            made = (f"a tensor of shape {shape}" if entries > bound
                    else f"{counts[OUTSIDE]} bytes of NumPy arrays or lists")
            raise RuleBroken(
                f"{exercise} made {made} at {n} positions in chunks of {chunk}: more numbers "
                f"than its inputs, their features, the output, the chunks' {chunk} × {chunk} "
                f"scores and one state per chunk hold together ({bound}): look at where that "
                "tensor is made, and which of its axes grows with the positions")


def check_cost(exercise: str, function: Callable, args: tuple, kwargs: dict) -> None:
    """Raises ``RuleBroken`` when ``function``, the answer to ``exercise``, does work that
    grows faster than the number of positions, where its record's rules hold ``LinearWork``
    (its answer takes ``(q, k, v, feature_map)``, the positions on the axis -2), or that
    does not work chunk by chunk, where they hold ``ChunkedWork`` (measured for chunks of
    ``CHUNKED_FROM`` positions or more, and then its work's growth too).

    Call it where the answer's guards are on (``own_work``), with the test's arguments:
    the answer then runs under them on the longer inputs too."""
    if ChunkedWork in RULES.get(exercise, ()):
        _check_chunks(exercise, function, args, kwargs)
    elif LinearWork in RULES.get(exercise, ()):
        generator = torch.Generator()
        generator.seed()  # fresh inputs each time: an answer cannot recognise them
        broken = partial(_broken, exercise)
        try:
            short = _work(function, _at_length(args, SHORT, generator), kwargs, {}, broken)
            limits = {name: RATIO * max(count, SMALLEST[name]) for name, count in short.items()}
            long = _work(function, _at_length(args, 2 * SHORT, generator), kwargs, limits, broken)
        except RuleBroken:
            raise
        except Exception as error:
            error.add_note(f"(while the tests ran {exercise} on {SHORT} and {2 * SHORT} positions "
                           "to see how its work grows)")
            raise
        for name, count in long.items():
            if count > RATIO * max(short[name], SMALLEST[name]):
                raise broken(name, short[name], count)
