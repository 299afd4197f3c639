"""What a run computed, and whether two runs computed the same.

Three sequences are recorded in the child, compared in this order:

- ``losses``: the value passed to each backward call (a scalar as a float, a
  larger tensor as its float64 sum);
- ``params``: one fingerprint of every parameter after each optimizer step;
- ``outputs``: one fingerprint of each root module forward's outputs (the
  evaluation loops' results, and training forwards too).

A fingerprint is the sum of each tensor (for the tolerance check) and, for CPU
tensors, a CRC-32 of their raw bytes (for the bitwise check). Recording
functions import torch lazily; comparing needs no torch.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

ORDER = ("losses", "params", "outputs")
NOUNS = {"losses": "loss", "params": "parameter fingerprint", "outputs": "forward output"}
PLURALS = {"losses": "losses", "params": "parameter fingerprints", "outputs": "forward outputs"}

# On CUDA the same program may round differently between runs (kernel choice,
# atomics left nondeterministic by warn_only); these bound what still counts
# as the same result.
RTOL = 1e-4
ATOL = 1e-6


# -- recording (inside the child) ------------------------------------------


def loss_value(tensor) -> float:
    t = tensor.detach()
    if t.numel() == 1:
        return float(t.reshape(()).item())
    return float(t.sum(dtype=_float64()).item())


def fingerprint(tensors: Iterable, with_digest: bool) -> dict:
    """Sums (and a byte hash when asked) of ``tensors``; call under no_grad."""
    import torch

    tensors = [t.detach() for t in tensors if isinstance(t, torch.Tensor)]
    if not tensors:
        return {"sums": [], "digest": None}
    # One transfer per device (parameters may live on several), in order.
    by_device: dict = {}
    for i, t in enumerate(tensors):
        by_device.setdefault(t.device, []).append(i)
    sums: list = [0.0] * len(tensors)
    for indices in by_device.values():
        values = torch.stack([_sum64(tensors[i]) for i in indices]).tolist()
        for i, v in zip(indices, values):
            sums[i] = v
    digest = None
    if with_digest:
        crc = 0
        for t in tensors:
            crc = _crc_tensor(crc, t)
        digest = f"{crc:08x}"
    return {"sums": sums, "digest": digest}


def _float64():
    import torch

    return torch.float64


def _sum64(t):
    """The tensor's sum as a float64 scalar. float32 and float64 are summed in
    their own type (a float64 accumulation of float32 is 40 times slower on
    CPU); narrower types are widened first."""
    import torch

    if t.is_complex():
        t = torch.view_as_real(t)
    if t.dtype not in (torch.float32, torch.float64):
        t = t.float()
    return t.sum().to(torch.float64)


def _crc_tensor(crc: int, t) -> int:
    # CRC-32 of the raw bytes: a bitwise-identity check, not a security
    # hash, and the cheapest one the standard library has.
    import ctypes
    import zlib

    crc = zlib.crc32(f"{tuple(t.shape)}{t.dtype}".encode(), crc)
    if t.device.type != "cpu":
        t = t.cpu()
    t = t.contiguous()
    nbytes = t.numel() * t.element_size()
    if nbytes:
        # Read the memory in place: no copy of a large parameter onto the heap.
        crc = zlib.crc32((ctypes.c_char * nbytes).from_address(t.data_ptr()), crc)
    return crc


# -- comparing (in the parent) ---------------------------------------------


@dataclass
class ResultCheck:
    status: str  # "identical" | "within-tolerance" | "changed"
    detail: str
    counts: dict  # name -> (original count, fixed count)


def _same_bits(a: float, b: float) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return struct.pack("<d", a) == struct.pack("<d", b)
    except (struct.error, TypeError):
        return a == b


def _close(a: Any, b: Any) -> bool:
    if _same_bits(a, b):
        return True
    try:
        return math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL)
    except TypeError:
        return False


def _compare_item(name: str, a: Any, b: Any) -> str:
    """'identical', 'within-tolerance' or 'changed' for one recorded item."""
    if name == "losses":
        return "identical" if _same_bits(a, b) else "within-tolerance" if _close(a, b) else "changed"
    sa, sb = a.get("sums", []), b.get("sums", [])
    if len(sa) != len(sb):
        return "changed"
    if a.get("digest") is not None and a.get("digest") == b.get("digest"):
        return "identical"
    if all(_same_bits(x, y) for x, y in zip(sa, sb)) and (a.get("digest") is None or b.get("digest") is None):
        return "identical"
    return "within-tolerance" if all(_close(x, y) for x, y in zip(sa, sb)) else "changed"


def _show(name: str, item: Any) -> str:
    if name == "losses":
        return repr(item)
    sums = item.get("sums", [])
    return f"sum {sum(sums):.9g}" if sums else "no tensors"


def compare_results(orig: dict, fixed: dict) -> ResultCheck:
    """Compare the recorded sequences of two runs, losses first."""
    counts = {n: (len(orig.get(n) or []), len(fixed.get(n) or [])) for n in ORDER}
    worst = "identical"
    for name in ORDER:
        a, b = orig.get(name) or [], fixed.get(name) or []
        for i, (x, y) in enumerate(zip(a, b)):
            status = _compare_item(name, x, y)
            if status == "changed":
                return ResultCheck(
                    "changed",
                    f"{NOUNS[name]} {i + 1} differs: {_show(name, x)} (original) vs {_show(name, y)} (fixed)",
                    counts,
                )
            if status == "within-tolerance":
                worst = status
        if len(a) != len(b):
            return ResultCheck(
                "changed", f"{len(a)} {PLURALS[name]} in the original, {len(b)} in the fixed run", counts
            )
    compared = ", ".join(f"{counts[n][0]} {PLURALS[n]}" for n in ORDER if counts[n][0])
    if not compared:
        return ResultCheck(
            worst, "nothing was recorded to compare (no backward, optimizer step or module forward)", counts
        )
    how = "bitwise" if worst == "identical" else f"within rtol={RTOL:g}, atol={ATOL:g}"
    return ResultCheck(worst, f"{compared}: {worst} ({how})", counts)


def summarise_losses(losses: Sequence[float], limit: int = 3) -> str:
    if not losses:
        return "-"
    shown = ", ".join(f"{v:.6g}" for v in losses[:limit])
    return shown + (f", … ({len(losses)} in all)" if len(losses) > limit else "")
