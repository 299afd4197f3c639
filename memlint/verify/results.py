"""What a run computed, and whether two runs computed the same.

Three sequences are recorded in the child, compared in this order:

- ``losses``: the value passed to each backward call (a scalar as a float, a
  larger tensor as its float64 sum);
- ``params``: one fingerprint of every parameter after each optimizer step;
- ``outputs``: one fingerprint of each root module forward's outputs (the
  evaluation loops' results, and training forwards too).

A fingerprint is the sum of each tensor (for the tolerance check) and, for CPU
tensors, a digest of their raw bytes (for the bitwise check: a CRC-32 of the
bytes, or of the wrapping sum of the 8-byte words of a large tensor). Recording
functions import torch lazily; comparing needs no torch.
"""

from __future__ import annotations

import ctypes
import math
import struct
import zlib
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


class Scratch:
    """0-d tensors that a CPU fingerprint's reductions write into (``out=``),
    so that fingerprinting allocates nothing: the probe can then record a
    forward's outputs without pausing the allocator meter (a pause restarts
    the profiler, which costs more than the fingerprint). Made once, before
    the meters start."""

    def __init__(self) -> None:
        import torch

        self.float32 = torch.zeros((), dtype=torch.float32)
        self.float64 = torch.zeros((), dtype=torch.float64)
        self.words = torch.zeros((), dtype=torch.int64)


def fingerprint(tensors: Iterable, with_digest: bool, scratch: Scratch | None = None) -> dict:
    """Sums (and a byte digest when asked) of ``tensors``; call under no_grad."""
    import torch

    tensors = [t.detach() for t in tensors if isinstance(t, torch.Tensor)]
    if not tensors:
        return {"sums": [], "digest": None}
    if all(_in_place(t) for t in tensors):
        return _fingerprint_in_place(tensors, with_digest, scratch or Scratch())
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
        scratch = scratch or Scratch()
        crc = 0
        for t in tensors:
            crc = _digest_tensor(crc, t.cpu().contiguous(), scratch)
        digest = f"{crc:08x}"
    return {"sums": sums, "digest": digest}


def fingerprint_in_place(tensors: Iterable, with_digest: bool, scratch: Scratch) -> dict | None:
    """:func:`fingerprint`, computed without allocating a tensor; None when a
    tensor needs a copy first (another device, dtype or layout)."""
    import torch

    tensors = [t.detach() for t in tensors if isinstance(t, torch.Tensor)]
    if not all(_in_place(t) for t in tensors):
        return None
    if not tensors:
        return {"sums": [], "digest": None}
    return _fingerprint_in_place(tensors, with_digest, scratch)


def _in_place(t) -> bool:
    import torch

    return (
        type(t) is torch.Tensor  # not a subclass (DTensor, a fake tensor) nor a nested tensor
        and not t.is_nested
        and t.device.type == "cpu"
        and t.dtype in (torch.float32, torch.float64)
        and t.layout == torch.strided
        and t.is_contiguous()
        and _word_aligned(t)
    )


def _word_aligned(t) -> bool:
    # An 8-byte word view of the bytes needs the tensor to start on a word.
    return t.storage_offset() * t.element_size() % 8 == 0


def _fingerprint_in_place(tensors: list, with_digest: bool, scratch: Scratch) -> dict:
    import torch

    # A float32 sum is taken in float32 (as _sum64 does), into a 0-d tensor.
    sums = []
    for t in tensors:
        out = scratch.float32 if t.dtype == torch.float32 else scratch.float64
        torch.sum(t.reshape(-1), 0, out=out)
        sums.append(out.item())
    digest = None
    if with_digest:
        crc = 0
        for t in tensors:
            crc = _digest_tensor(crc, t, scratch)
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


# Below this many bytes a tensor's digest is a CRC-32 of its bytes; above, of
# the wrapping sum of its 8-byte words (a tenth of the CPU time: one torch
# reduction, where zlib reads a byte at a time).
WORD_SUM_BYTES = 4096


# Each shape and dtype's text, formatted once: it costs more than the CRC.
_HEADERS: dict = {}


def _digest_tensor(crc: int, t, scratch: Scratch) -> int:
    """Fold a contiguous CPU tensor into ``crc``: its shape, dtype and bytes.

    A bitwise-identity check, not a security hash. The word sum (modulo
    2**64) changes with any single changed bit, as a CRC does; unlike a CRC
    it does not see two 8-byte words of one tensor trade places (nor do the
    sums beside it). The losses, compared bitwise at every step, and the
    order of the recorded tensors are the check on order."""
    import torch

    key = (t.shape, t.dtype)
    header = _HEADERS.get(key)
    if header is None:
        header = f"{tuple(t.shape)}{t.dtype}".encode()
        if len(_HEADERS) < 1024:  # (outputs of many shapes: text of many lengths)
            _HEADERS[key] = header
    crc = zlib.crc32(header, crc)
    nbytes = t.numel() * t.element_size()
    if not nbytes:
        return crc
    head = 0
    if nbytes >= WORD_SUM_BYTES:
        if not _word_aligned(t):
            t = t.clone()  # (the paused path only: in_place() asks for alignment)
        try:
            raw = t.reshape(-1).view(torch.uint8)
            head = nbytes // 8 * 8
            torch.sum(raw[:head].view(torch.int64), 0, out=scratch.words)
        except (RuntimeError, NotImplementedError, TypeError):  # a dtype with no byte view
            head = 0
        else:
            crc = zlib.crc32(int(scratch.words.item()).to_bytes(8, "little", signed=True), crc)
    if head < nbytes:
        # Read the memory in place: no copy of a large parameter onto the heap.
        crc = zlib.crc32((ctypes.c_char * (nbytes - head)).from_address(t.data_ptr() + head), crc)
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
