"""An exercise's stated rules, enforced on every torch call while its answer runs.

``RULES`` maps an exercise to the rules its text states. A rule is made from the answer's
arguments; ``TorchWatch`` (``refuse.py``) calls ``before(name)`` ahead of each torch call
and ``after(name, result)`` with what the call returned. A broken rule raises
``RuleBroken`` (an ``AssertionError``: the test fails) naming the rule.

* ``NoAutograd`` (02's ``sgd_step``, a gradient in closed form): no tensor may require a
  gradient and nothing may call autograd, even under ``torch.enable_grad()``.
* ``NoSquareMatrix`` (07's linear attention): no tensor with an axis as long as the
  queries and another as long as the keys, the N_q × N_k matrix the exercise avoids.
"""

from types import MappingProxyType

import torch

__all__ = ["RULES", "NoAutograd", "NoSquareMatrix", "RuleBroken"]


class RuleBroken(AssertionError):
    """An answer broke a rule its exercise states."""


def _tensors(result) -> list[torch.Tensor]:
    items = result if isinstance(result, tuple | list) else (result,)
    return [item for item in items if isinstance(item, torch.Tensor)]


class NoAutograd:
    """The exercise asks for a gradient worked out in closed form."""

    CALLS = {"backward", "grad", "requires_grad_", "requires_grad.__set__", "vjp", "jvp",
             "jacobian", "hessian", "vmap"}

    def __init__(self, exercise: str, args: tuple, kwargs: dict):
        self.exercise = exercise

    def _broken(self, what: str) -> RuleBroken:
        return RuleBroken(
            f"{self.exercise} used autograd ({what}): write the gradient in closed form with "
            "tensor operations; autograd is not allowed while the tests run your function"
        )

    def before(self, name: str) -> None:
        if name in self.CALLS:
            raise self._broken(name)

    def after(self, name: str, result) -> None:
        if any(tensor.requires_grad for tensor in _tensors(result)):
            raise self._broken(f"{name} returned a tensor that requires a gradient")


class NoSquareMatrix:
    """No N_q × N_k matrix: the answer's first two arguments are the queries ``(..., N_q, D)``
    and the keys ``(..., N_k, D)``. The rule holds only where it is unambiguous: both
    lengths above 1 and unlike every other size of the inputs."""

    def __init__(self, exercise: str, args: tuple, kwargs: dict):
        self.exercise = exercise
        q, k = args[:2]
        self.n_q, self.n_k = q.shape[-2], k.shape[-2]
        other = {size for tensor in args if isinstance(tensor, torch.Tensor)
                 for axis, size in enumerate(tensor.shape) if axis != tensor.dim() - 2}
        self.active = min(self.n_q, self.n_k) > 1 and not {self.n_q, self.n_k} & other

    def before(self, name: str) -> None:
        pass

    def after(self, name: str, result) -> None:
        if not self.active:
            return
        for tensor in _tensors(result):
            sizes = list(tensor.shape)
            if self.n_q in sizes:
                sizes.remove(self.n_q)  # one axis for the queries, another for the keys
            if len(sizes) < tensor.dim() and self.n_k in sizes:
                raise RuleBroken(
                    f"{self.exercise} made a tensor of shape {tuple(tensor.shape)} with {name}: "
                    f"that is the {self.n_q} × {self.n_k} matrix of every query against every key, "
                    "which this exercise asks you to avoid (no N × N matrix): regroup the "
                    "products so that only sums over the keys are kept"
                )


# Read-only (a mapping proxy over tuples): a notebook cannot edit it.
RULES: MappingProxyType[str, tuple[type, ...]] = MappingProxyType({
    "sgd_step": (NoAutograd,),
    "kernel_attention": (NoSquareMatrix,),
    "causal_linear_attention": (NoSquareMatrix,),
})
