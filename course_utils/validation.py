"""Input checks shared by the helpers: wrong input gets a clear error.

Each function raises ``TypeError`` (wrong kind or dtype) or ``ValueError``
(wrong shape or value) with a message naming what was expected and what came.
A helper checks its inputs in one or two calls at its top, so that the formula after them
reads as it does on the page::

    float_tensors(q=q, k=k, min_dim=2)
    same_size(-1, "must have the same last dimension d_k", q=q, k=k)
    return (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
"""

import numbers

import torch


def _describe(x) -> str:
    if isinstance(x, torch.Tensor):
        return f"a {x.dtype} tensor of shape {tuple(x.shape)}"
    return f"a {type(x).__name__}"


def float_tensor(name: str, x, min_dim: int = 1) -> torch.Tensor:
    """Require ``x`` to be a floating-point tensor with at least ``min_dim`` non-empty axes."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {_describe(x)}")
    if not x.is_floating_point():
        raise TypeError(
            f"{name} must have a floating-point dtype (e.g. torch.float32); got {x.dtype}. "
            "Convert it with .float()"
        )
    if x.dim() < min_dim:
        raise ValueError(
            f"{name} must have at least {min_dim} dimensions; got shape {tuple(x.shape)}"
        )
    if x.numel() == 0:
        raise ValueError(f"{name} must not be empty; got shape {tuple(x.shape)}")
    return x


def bool_tensor(name: str, x) -> torch.Tensor:
    """Require ``x`` to be a boolean tensor."""
    if not isinstance(x, torch.Tensor) or x.dtype != torch.bool:
        raise TypeError(f"{name} must be a torch.bool tensor; got {_describe(x)}")
    return x


def same_device(**tensors: torch.Tensor) -> None:
    """Require every tensor to live on one device."""
    devices = {name: t.device for name, t in tensors.items()}
    if len(set(devices.values())) > 1:
        listed = ", ".join(f"{name} on {device}" for name, device in devices.items())
        raise ValueError(f"all inputs must be on the same device; got {listed}")


def float_tensors(min_dim: int = 1, **tensors) -> None:
    """Require each of ``tensors`` (by name) to be a floating-point tensor with at least
    ``min_dim`` non-empty axes (:func:`float_tensor`, in the order given), all on one device."""
    for name, x in tensors.items():
        float_tensor(name, x, min_dim)
    same_device(**tensors)


def same_size(axis: int, must: str, **tensors: torch.Tensor) -> None:
    """Require the two ``tensors`` (by name) to have the same size along ``axis``; the
    error reads "a and b ``must``; got a of shape (...) and b of shape (...)"."""
    (first, a), (second, b) = tensors.items()
    if a.shape[axis] != b.shape[axis]:
        raise ValueError(f"{first} and {second} {must}; got {first} of shape {tuple(a.shape)} "
                         f"and {second} of shape {tuple(b.shape)}")


def integer(name: str, value, minimum: int | None = None, maximum: int | None = None) -> int:
    """Require ``value`` to be an integer (a Python or NumPy int, not a bool) with
    ``minimum <= value <= maximum``; returns it as an int."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int; got {value!r} ({type(value).__name__})")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}; got {value}")
    return int(value)


def number(name: str, value) -> float:
    """Require ``value`` to be a real number (a Python or NumPy int or float, not a bool);
    returns it as a float. Its range is the caller's to check."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a number; got {value!r} ({type(value).__name__})")
    return float(value)


def positive_int(name: str, value) -> int:
    """Require ``value`` to be an int >= 1."""
    return integer(name, value, minimum=1)


def text(name: str, value) -> str:
    """Require ``value`` to be a str."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str; got {type(value).__name__}")
    return value
