"""One verification: both runs summarised, and the verdict with its reasons.

Pure Python; built from the JSON the measured processes wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memlint.verify.results import compare_results
from memlint.verify.twin import FixedFinding
from memlint.verify.verdict import (
    GRAPH,
    HEAP,
    LABELS,
    METERS,
    MIN_GROWTH_POINTS,
    TENSOR,
    MeterStats,
    MeterVerdict,
    compare_meter,
    memory_verdict,
    warmup_steps,
)

# The shortest run whose growth is judged: the warm-up plus MIN_GROWTH_POINTS.
MIN_GROWTH_STEPS = next(n for n in range(1, 100) if n - warmup_steps(n) >= MIN_GROWTH_POINTS)


@dataclass
class RunSummary:
    status: str  # "ok" | "error"
    error: str | None
    traceback: str | None
    device: str | None
    steps: int
    step_kind: str | None  # "optimizer" | "forward" | None (no step seen)
    reached_steps: bool
    meters: dict[str, MeterStats]
    reserved_peak: int | None
    losses: list
    params: list
    outputs: list
    wall_s: float | None
    stderr_tail: str = ""
    graph_saturated: bool = False
    max_rss: int | None = None  # the measured process's peak resident memory

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @classmethod
    def from_raw(cls, raw: dict) -> "RunSummary":
        s = raw.get("samples") or {}
        reserved = [v for v in s.get("tensor_reserved") or [] if v is not None]
        return cls(
            status=raw.get("status", "error"),
            error=raw.get("error"),
            traceback=raw.get("traceback"),
            device=raw.get("device"),
            steps=int(raw.get("steps") or 0),
            step_kind=raw.get("step_kind"),
            reached_steps=bool(raw.get("reached_steps")),
            meters={
                TENSOR: MeterStats.from_samples(TENSOR, list(s.get("tensor_live") or []), list(s.get("tensor_peak") or [])),
                GRAPH: MeterStats.from_samples(GRAPH, list(s.get("graph_nodes") or [])),
                HEAP: MeterStats.from_samples(HEAP, list(s.get("heap") or [])),
            },
            reserved_peak=max(reserved) if reserved else None,
            losses=list(raw.get("losses") or []),
            params=list(raw.get("params") or []),
            outputs=list(raw.get("outputs") or []),
            wall_s=raw.get("wall_s"),
            stderr_tail=raw.get("stderr_tail") or "",
            graph_saturated=bool(raw.get("graph_saturated")),
            max_rss=raw.get("max_rss_bytes"),
        )


@dataclass
class Outcome:
    script: str
    fixed_script: str | None  # None when the twin was made in a temporary folder
    device: str
    steps_requested: int
    findings: list[FixedFinding]
    original: RunSummary
    fixed: RunSummary | None  # None when there was nothing to fix
    memory: str = "unchanged"  # "dropped" | "unchanged" | "increased" | "not-compared"
    # "identical" | "within-tolerance" | "changed" | "original-failed" |
    # "fixed-failed" | "both-failed" | "not-compared"
    results: str = "identical"
    results_detail: str = ""
    meter_verdicts: list[MeterVerdict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ok: bool = False
    unfixed: list[str] = field(default_factory=list)  # codes memlint still reports on the twin

    @property
    def nothing_to_fix(self) -> bool:
        return self.fixed is None

    @property
    def step_kind(self) -> str | None:
        return self.original.step_kind or (self.fixed.step_kind if self.fixed else None)


def decide(outcome: Outcome, simulate: bool = False) -> Outcome:
    """Fill in the verdict of ``outcome`` from its two runs."""
    o, f = outcome.original, outcome.fixed
    if f is None:
        outcome.memory = "unchanged"
        outcome.results = "identical" if o.ok else "original-failed"
        outcome.ok = o.ok
        outcome.notes.append("memlint found nothing to fix; only the original was run")
        if outcome.unfixed:
            codes = ", ".join(dict.fromkeys(outcome.unfixed))
            outcome.notes.append(
                f"memlint reports {codes} but applied no fix (some fixes need --unsafe-fixes, some rules have none): "
                "write the fix and pass it with --fixed"
            )
        _growth_notes(outcome, o, "the script")
        return outcome
    if not o.ok or not f.ok:
        outcome.memory = "not-compared"
        if not o.ok and not f.ok:
            outcome.results = "both-failed"
            outcome.notes.append(f"both runs failed; original: {o.error}; fixed: {f.error}")
        elif not o.ok:
            outcome.results = "original-failed"
            outcome.notes.append(f"the original failed and the fixed script ran {_steps(f)}")
        else:
            outcome.results = "fixed-failed"
            outcome.notes.append(f"the fix broke the script: {f.error}")
        outcome.ok = outcome.results == "original-failed"
        return outcome

    device = o.device or outcome.device
    if o.step_kind is None and f.step_kind is None:
        outcome.notes.append(
            "no step boundary was seen (no optimizer step, no forward of a module with parameters): memory was not sampled"
        )
    outcome.meter_verdicts = [compare_meter(o.meters[m], f.meters[m], device) for m in METERS]
    outcome.memory = memory_verdict(outcome.meter_verdicts)
    if simulate:
        outcome.results = "not-compared"
        outcome.results_detail = "not compared: a simulated run computes no values"
    else:
        check = compare_results(_recorded(o), _recorded(f))
        outcome.results, outcome.results_detail = check.status, check.detail
    if outcome.results == "changed":
        unsafe = [f"{x.code} (line {x.line})" for x in outcome.findings if x.safety == "unsafe"]
        if unsafe:
            outcome.notes.append(
                "results changed; unsafe fixes were applied and may change results by design: " + ", ".join(unsafe)
            )
        elif outcome.fixed_script:
            outcome.notes.append("results changed: the given twin computes different values")
        else:
            outcome.notes.append("results changed although every fix applied is marked safe: please report this")
    if o.step_kind != f.step_kind:
        outcome.notes.append(f"the runs ended steps differently ({o.step_kind} vs {f.step_kind})")
    if any(r.meters[m].measured and not r.meters[m].growth_judged for r in (o, f) for m in METERS):
        outcome.notes.append(
            f"too few steps to judge growth (it needs {MIN_GROWTH_STEPS}; use --steps): only peaks were compared"
        )
    if outcome.memory == "unchanged":
        outcome.notes.append("no meter showed a difference in memory between the two runs")
    if device == "cuda" and not o.meters[TENSOR].peak:
        outcome.notes.append("the script allocated no CUDA memory; if its tensors live on the CPU, use --device cpu")
    if o.graph_saturated or f.graph_saturated:
        outcome.notes.append("the graph-node meter hit its bound; graph counts are lower limits")
    outcome.ok = outcome.memory in ("dropped", "unchanged") and outcome.results in (
        "identical",
        "within-tolerance",
        "not-compared",
    )
    return outcome


def _recorded(run: RunSummary) -> dict:
    return {"losses": run.losses, "params": run.params, "outputs": run.outputs}


def _steps(run: RunSummary) -> str:
    kind = {"optimizer": "optimizer steps", "forward": "forward steps"}.get(run.step_kind or "", "steps")
    return f"{run.steps} {kind}"


def _growth_notes(outcome: Outcome, run: RunSummary, who: str) -> None:
    from memlint.verify.verdict import grew

    if not run.ok:
        return
    grows = [LABELS[m] for m in METERS if grew(run.meters[m], run.device or outcome.device)]
    if grows:
        outcome.notes.append(f"{who} still grows per step on: {', '.join(grows)}")
