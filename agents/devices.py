"""Checking a torch device string from the command line or a config before any work starts."""

from __future__ import annotations

from typing import Any


def check_device(name: Any, what: str = "--device") -> Any:
    """``torch.device(name)`` if this machine has that device, else a ``ValueError`` naming ``what`` and
    ``name``: an unknown device string, cuda where none is available, or an index past the last GPU.

    Torch's own errors for these are a RuntimeError listing every device type it knows (or come only
    at the first tensor), so commands call this first (``halma bench``, and ``halma train`` may)."""
    import torch

    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{what} must be a torch device such as cpu, cuda or cuda:1, got {name!r}")
    try:
        device = torch.device(name.strip())
    except (RuntimeError, ValueError):
        raise ValueError(f"{what} {name!r} is not a torch device (expected cpu, cuda or cuda:N)") from None
    if device.type == "meta":  # parses and allocates, but holds no data: nothing can run on it
        raise ValueError(f"{what} {name!r} is not a device to compute on (expected cpu, cuda or cuda:N)")
    if device.type == "cpu":
        return device
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{what} {name!r}: cuda requested but not available on this machine")
    try:  # an index past the last GPU, or another backend this build or machine lacks (hpu: an ImportError)
        torch.empty(0, device=device)
    except (RuntimeError, AssertionError, ImportError) as e:
        first = str(e).strip().splitlines()[0].split(". ")[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"{what} {name!r} is not available on this machine ({first})") from None
    return device
