"""``--plot FILE.png``: each meter's timeline, original against fixed, one panel
per meter. matplotlib is an optional extra (the ``plot`` extra)."""

from __future__ import annotations

from memlint.verify.outcome import Outcome
from memlint.verify.verdict import GRAPH, LABELS, METERS, TENSOR

ORIGINAL_COLOR = "#d62728"
FIXED_COLOR = "#1f77b4"


def _scale(values: list) -> tuple[float, str]:
    top = max((abs(v) for v in values if v is not None), default=0)
    for factor, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if top >= factor:
            return factor, unit
    return 1, "B"


def _scaled(values: list, factor: float) -> list:
    return [None if v is None else v / factor for v in values]


def plot_outcome(outcome: Outcome, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [(outcome.original, "original", ORIGINAL_COLOR)]
    if outcome.fixed is not None:
        runs.append((outcome.fixed, "fixed", FIXED_COLOR))
    meters = [m for m in METERS if any(m in r.meters and r.meters[m].measured for r, _, _ in runs)]
    verdicts = {v.meter: v for v in outcome.meter_verdicts}
    fig, axes = plt.subplots(len(meters) or 1, 1, figsize=(8, 2.6 * max(1, len(meters))), sharex=True, squeeze=False)
    for ax, meter in zip(axes[:, 0], meters):
        everything = [v for r, _, _ in runs for v in r.meters[meter].values + (r.meters[meter].peaks or [])]
        factor, unit = (1, "nodes") if meter == GRAPH else _scale(everything)
        for run, label, color in runs:
            stats = run.meters[meter]
            steps = range(1, len(stats.values) + 1)
            ax.plot(steps, _scaled(stats.values, factor), color=color, label=f"{label} (at step end)", lw=1.8)
            if meter == TENSOR and stats.peaks:
                ax.plot(
                    steps,
                    _scaled(stats.peaks, factor),
                    color=color,
                    ls=":",
                    lw=1.2,
                    label=f"{label} (peak within step)",
                )
        verdict = verdicts.get(meter)
        title = LABELS[meter]
        if verdict is not None:
            title += f": {verdict.status}" + (f" ({', '.join(verdict.reasons)})" if verdict.reasons else "")
        ax.set_title(title, fontsize=10, loc="left")
        ax.set_ylabel(unit)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    kind = {"optimizer": "optimizer step", "forward": "forward step"}.get(outcome.step_kind or "", "step")
    axes[-1, 0].set_xlabel(kind)
    codes = ", ".join(f.code for f in outcome.findings) or "no finding"
    head = f"{outcome.script}  [{codes}]  memory {outcome.memory}, results {outcome.results}"
    fig.suptitle(head, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
