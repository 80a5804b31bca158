"""Input checks shared by the helpers: wrong input gets a clear error.

Each function raises ``TypeError`` (wrong kind or dtype) or ``ValueError``
(wrong shape or value) with a message naming what was expected and what came.
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
