"""Which activations save memory with ``inplace=True``? (MEM403's list)

For each activation, a ``Linear(1024, 1024) -> activation -> Linear(1024, 16)``
stack (a narrow head, so that the activation's own moment is the forward's
peak) runs one forward on the CPU with and without ``inplace=True``, and two
things are measured:

- saved: the bytes of the distinct storages autograd saves for the backward
  (``torch.autograd.graph.saved_tensors_hooks``), not counting the weights
  and the stack's input, which every variant saves alike;
- peak: the highest live tensor bytes during the forward (memlint verify's
  own CPU meter, ``StorageBytesMode``), less the input and the weights.

Three outcomes. ReLU's backward reads its output in both forms: out of
place, the Linear's output is freed right after the activation, so in place
saves only the transient (the peak drops by one activation; the saved bytes
stay). LeakyReLU, ELU, CELU and SELU read their input out of place and their
output in place: in place also saves one activation for the backward, per
layer, for the whole step. The others (ReLU6, Hardtanh, SiLU, Mish,
Hardswish, Hardsigmoid) read their input even in place, so autograd keeps a
copy of it before overwriting it: nothing is saved. GELU has no in-place
form at all.

Run: ``python bench/inplace_activations.py`` (torch on the CPU, a few seconds).
"""

from __future__ import annotations

import torch
from torch import nn

from memlint.verify.meters import StorageBytesMode

BATCH, WIDTH, HEAD = 2048, 1024, 16  # one activation: 2048 * 1024 * 4 bytes = 8 MiB
MIB = 1024 * 1024

# name -> factory taking inplace (None: the module has no in-place form)
ACTIVATIONS = {
    "ReLU": lambda inplace: nn.ReLU(inplace=inplace),
    "ReLU6": lambda inplace: nn.ReLU6(inplace=inplace),
    "LeakyReLU(0.2)": lambda inplace: nn.LeakyReLU(0.2, inplace=inplace),
    "ELU": lambda inplace: nn.ELU(inplace=inplace),
    "Hardtanh": lambda inplace: nn.Hardtanh(inplace=inplace),
    "CELU": lambda inplace: nn.CELU(inplace=inplace),
    "SELU": lambda inplace: nn.SELU(inplace=inplace),
    "SiLU": lambda inplace: nn.SiLU(inplace=inplace),
    "Mish": lambda inplace: nn.Mish(inplace=inplace),
    "Hardswish": lambda inplace: nn.Hardswish(inplace=inplace),
    "Hardsigmoid": lambda inplace: nn.Hardsigmoid(inplace=inplace),
    "GELU": None,
}


def _storage_key(t: torch.Tensor) -> tuple[int, int]:
    storage = t.untyped_storage()
    return storage.data_ptr(), storage.nbytes()


def measure(activation: nn.Module) -> tuple[float, float]:
    """(saved MiB, forward peak MiB) of one forward through the stack."""
    torch.manual_seed(0)
    stack = nn.Sequential(nn.Linear(WIDTH, WIDTH), activation, nn.Linear(WIDTH, HEAD))
    x = torch.randn(BATCH, WIDTH)
    excluded = {_storage_key(p) for p in stack.parameters()} | {_storage_key(x)}
    saved: dict[tuple[int, int], int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        key = _storage_key(t)
        if key not in excluded:
            saved[key] = key[1]
        return t

    meter = StorageBytesMode()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), meter:
        out = stack(x)
        _, peak, _ = meter.sample()
    del out
    return sum(saved.values()) / MIB, peak / MIB


def main() -> None:
    print(
        f"Linear({WIDTH}, {WIDTH}) -> activation -> Linear({WIDTH}, {HEAD}), batch {BATCH}, float32, CPU, "
        f"torch {torch.__version__}"
    )
    print("one activation tensor = 8.0 MiB; saved = bytes autograd keeps for the backward;")
    print("peak = highest live tensor bytes during the forward (both less the input and the weights)\n")
    print("| activation | saved (MiB) | saved, inplace | peak (MiB) | peak, inplace | inplace=True saves |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, make in ACTIVATIONS.items():
        if make is None:
            saved, peak = measure(nn.GELU())
            print(f"| {name} | {saved:.1f} | no in-place form | {peak:.1f} | no in-place form | - |")
            continue
        saved, peak = measure(make(False))
        saved_in, peak_in = measure(make(True))
        gains = []
        if saved - saved_in > 0.05:
            gains.append(f"{saved - saved_in:.1f} MiB kept for the backward")
        if peak - peak_in > 0.05:
            gains.append(f"{peak - peak_in:.1f} MiB at the peak")
        verdict = ", ".join(gains) or "nothing"
        print(f"| {name} | {saved:.1f} | {saved_in:.1f} | {peak:.1f} | {peak_in:.1f} | {verdict} |")


if __name__ == "__main__":
    main()
