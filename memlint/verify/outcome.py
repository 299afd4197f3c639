"""One verification: both runs summarised, and the verdict with its reasons.

Pure Python; built from the JSON the measured processes wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memlint.verify.results import compare_results
from memlint.verify.twin import FixedFinding, LeftFinding
from memlint.verify.verdict import (
    CPU_TENSOR,
    GRAPH,
    HEAP,
    LABELS,
    METERS,
    MIN_GROWTH_POINTS,
    NOT_OBSERVED,
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
    ended: str | None = None  # "end" (the script finished: tail measured) | "stopped" (at --steps) | "error"
    process_group: bool = False  # the script called torch.distributed.init_process_group
    rank: int = 0
    world_size: int = 1
    exit_status: int | None = None  # what `python SCRIPT` would have exited with, when the script failed
    saves_skipped: int = 0  # --simulate: torch.save calls that wrote nothing

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def tail_measured(self) -> bool:
        return self.ended == "end"

    @classmethod
    def from_raw(cls, raw: dict) -> RunSummary:
        s = raw.get("samples") or {}
        tail = raw.get("tail") or {}
        head = list(raw.get("head_peaks") or [None, None])
        reserved = [v for v in [*(s.get("tensor_reserved") or []), tail.get("tensor_reserved")] if v is not None]

        def stats(meter, live, peak=None, head_peak=None):
            return MeterStats.from_samples(
                meter,
                list(s.get(live) or []),
                list(s.get(peak) or []) if peak else None,
                tail=tail.get(live),
                tail_peak=tail.get(peak) if peak else None,
                head_peak=head_peak,
            )

        meters = {
            TENSOR: stats(TENSOR, "tensor_live", "tensor_peak", head[0]),
            GRAPH: stats(GRAPH, "graph_nodes"),
            HEAP: stats(HEAP, "heap"),
        }
        if any(v is not None for v in s.get("cpu_live") or []) or tail.get("cpu_live") is not None:
            meters[CPU_TENSOR] = stats(CPU_TENSOR, "cpu_live", "cpu_peak", head[1])
        return cls(
            status=raw.get("status", "error"),
            error=raw.get("error"),
            traceback=raw.get("traceback"),
            device=raw.get("device"),
            steps=int(raw.get("steps") or 0),
            step_kind=raw.get("step_kind"),
            reached_steps=bool(raw.get("reached_steps")),
            meters=meters,
            reserved_peak=max(reserved) if reserved else None,
            losses=list(raw.get("losses") or []),
            params=list(raw.get("params") or []),
            outputs=list(raw.get("outputs") or []),
            wall_s=raw.get("wall_s"),
            stderr_tail=raw.get("stderr_tail") or "",
            graph_saturated=bool(raw.get("graph_saturated")),
            max_rss=raw.get("max_rss_bytes"),
            ended=raw.get("ended"),
            process_group=bool(raw.get("process_group")),
            rank=int(raw.get("rank") or 0),
            world_size=int(raw.get("world_size") or 1),
            exit_status=raw.get("exit_status"),
            saves_skipped=int(raw.get("saves_skipped") or 0),
        )

    def meter_names(self) -> list[str]:
        return [m for m in METERS if m in self.meters]


# What --simulate's figures are, and how far they were off a real run.
SIMULATE_NOTE = (
    "--simulate estimates, it does not measure: tensor bytes are what the CUDA allocator would count "
    "(storages rounded to 512 B, cuBLAS's workspace, optimizers' foreach temporaries), not its cached segments, "
    "other libraries' workspaces or the CUDA context; fixtures/verify/large_mlp.py: 20.0 GiB estimated, "
    "20.1 GiB measured on an H100"
)


@dataclass
class RankOutcome:
    rank: int
    original: RunSummary
    fixed: RunSummary | None
    memory: str = "unchanged"
    results: str = "identical"
    results_detail: str = ""
    meter_verdicts: list[MeterVerdict] = field(default_factory=list)


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
    # "dropped" | "unchanged" | "increased" | "not-measured" | "not-compared"
    # "identical" | "within-tolerance" | "changed" | "original-failed" |
    # "fixed-failed" | "both-failed" | "not-compared"
    results: str = "identical"
    results_detail: str = ""
    meter_verdicts: list[MeterVerdict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ok: bool = False
    unfixed: list[str] = field(default_factory=list)  # codes memlint still reports on the twin
    unfixed_reasons: dict[str, str] = field(default_factory=dict)  # code -> why it was not fixed
    # Under --nproc-per-node: every rank's runs; original/fixed above are the
    # worst rank's (the highest tensor peak in the original).
    ranks: list[RankOutcome] = field(default_factory=list)
    # A project twin's (project_twin.py): each finding left, with its file and
    # why; the project's root; the modules other than the script it fixed.
    left: list[LeftFinding] = field(default_factory=list)
    project_root: str | None = None
    fixed_modules: list[str] = field(default_factory=list)

    @property
    def nothing_to_fix(self) -> bool:
        return self.fixed is None

    @property
    def step_kind(self) -> str | None:
        return self.original.step_kind or (self.fixed.step_kind if self.fixed else None)


def exit_status_text(run: RunSummary) -> str:
    """`` (exit status 1)``, or nothing when the process gave none (killed, timed out)."""
    return f" (exit status {run.exit_status})" if run.exit_status is not None else ""


def both_failed_note(o: RunSummary, f: RunSummary) -> str:
    """The script fails without memlint's help: nothing was compared."""
    how = f"the same way: {o.error}" if o.error == f.error else f"original: {o.error}; fixed: {f.error}"
    return (
        f"the script failed in both runs{exit_status_text(o)}, {how}; this says nothing about the fix: "
        "make the script run on its own (`python SCRIPT ARGS`), then verify again"
    )


def decide(outcome: Outcome, simulate: bool = False) -> Outcome:
    """Fill in the verdict of ``outcome`` from its two runs (per rank under
    --nproc-per-node)."""
    if outcome.ranks:
        _pick_rank(outcome)
    if simulate:
        outcome.notes.append(SIMULATE_NOTE)
        saves = max(r.saves_skipped for r in (outcome.original, outcome.fixed) if r is not None)
        if saves:
            outcome.notes.append(
                f"the script called torch.save {saves} time{'s' if saves != 1 else ''}: under --simulate the "
                "tensors are fakes with no data, so nothing was written"
            )
    o, f = outcome.original, outcome.fixed
    if f is None:
        outcome.memory = "unchanged"
        outcome.results = "identical" if o.ok else "original-failed"
        outcome.ok = o.ok
        outcome.notes.append("memlint found nothing to fix; only the original was run")
        if outcome.unfixed:
            codes = ", ".join(dict.fromkeys(outcome.unfixed))
            outcome.notes.append(
                f"memlint reports {codes} but applied no fix: add --unsafe-fixes for an unsafe fix, or write "
                "the fix and pass it with --fixed"
            )
        _growth_notes(outcome, o, "the script")
        if o.ok:
            # One run, no comparison: whether its meters saw the script.
            outcome.meter_verdicts = [
                MeterVerdict(m, "not-measured", [NOT_OBSERVED]) for m in o.meter_names() if not o.meters[m].observed
            ]
            _observed_notes(outcome, o.device or outcome.device)
            outcome.meter_verdicts = []
        _distributed_notes(outcome)
        return outcome
    if not o.ok or not f.ok:
        outcome.memory = "not-compared"
        if not o.ok and not f.ok:
            outcome.results = "both-failed"
            outcome.notes.append(both_failed_note(o, f))
        elif not o.ok:
            outcome.results = "original-failed"
            outcome.notes.append(f"the original failed and the fixed script ran {_steps(f)}")
        else:
            outcome.results = "fixed-failed"
            outcome.notes.append(f"the fix broke the script: {f.error}")
        outcome.ok = outcome.results == "original-failed"
        _distributed_notes(outcome)
        return outcome

    device = o.device or outcome.device
    if o.step_kind is None and f.step_kind is None:
        outcome.notes.append(
            "no step boundary was seen (no optimizer step, no forward of a module with parameters): "
            + ("only the whole run was measured" if o.tail_measured and f.tail_measured else "memory was not sampled")
        )
    pairs = [(r.original, r.fixed) for r in outcome.ranks] or [(o, f)]
    judged = [_judge(a, b, device, simulate) for a, b in pairs]
    for rank, (verdicts, memory, results, detail) in zip(outcome.ranks, judged):
        rank.meter_verdicts, rank.memory, rank.results, rank.results_detail = verdicts, memory, results, detail
    if outcome.ranks:
        worst = next(i for i, r in enumerate(outcome.ranks) if r.original is o)
        outcome.meter_verdicts = judged[worst][0]
        outcome.memory = memory_verdict([v for j in judged for v in j[0]])
        outcome.results, outcome.results_detail = _rank_results(outcome.ranks)
    else:
        outcome.meter_verdicts, outcome.memory, outcome.results, outcome.results_detail = judged[0]
    if outcome.results == "changed":
        unsafe = [f"{x.code} ({x.where})" for x in outcome.findings if x.safety == "unsafe"]
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
    if any(m in r.meters and r.meters[m].measured and not r.meters[m].growth_judged for r in (o, f) for m in METERS):
        if o.step_kind or f.step_kind:
            outcome.notes.append(
                f"too few steps to judge growth (it needs {MIN_GROWTH_STEPS}; use --steps): only peaks were compared"
            )
    if not (o.tail_measured and f.tail_measured):
        outcome.notes.append(
            f"stopped at --steps {outcome.steps_requested}: what the script does after that step (the tail) was not "
            "measured; a --steps above the script's own step count lets it run to its end"
        )
    _observed_notes(outcome, device)
    if outcome.memory == "unchanged":
        outcome.notes.append("no meter showed a difference in memory between the two runs")
    if o.graph_saturated or f.graph_saturated:
        outcome.notes.append("the graph-node meter hit its bound; graph counts are lower limits")
    _distributed_notes(outcome)
    outcome.ok = outcome.memory in ("dropped", "unchanged") and outcome.results in (
        "identical",
        "within-tolerance",
        "not-compared",
    )
    return outcome


def _judge(o: RunSummary, f: RunSummary, device: str, simulate: bool):
    verdicts = [compare_meter(o.meters[m], f.meters[m], device) for m in o.meter_names() if m in f.meters]
    memory = memory_verdict(verdicts)
    if simulate:
        return verdicts, memory, "not-compared", "not compared: a simulated run computes no values"
    check = compare_results(_recorded(o), _recorded(f))
    return verdicts, memory, check.status, check.detail


def _observed_notes(outcome: Outcome, device: str) -> None:
    """A meter that saw none of the script's allocations says so; when it is
    the only tensor meter the user asked for, memory is "not-measured"."""
    by_meter = {v.meter: v for v in outcome.meter_verdicts}
    tensor = by_meter.get(TENSOR)
    if tensor is None or NOT_OBSERVED not in tensor.reasons or not device.startswith("cuda"):
        return
    if CPU_TENSOR in outcome.original.meters:  # --device auto
        outcome.notes.append(
            "the CUDA allocator saw none of the script's allocations (its tensors live on the CPU): CUDA not measured; "
            "the CPU tracker measured the tensors"
        )
        return
    outcome.memory = "not-measured"
    outcome.ok = False
    outcome.notes.append(
        "--device cuda: the CUDA allocator saw none of the script's allocations (its tensors live on the CPU), "
        "so memory was not measured; use --device auto or --device cpu (exit status 3)"
    )


_RESULT_ORDER = ("identical", "within-tolerance", "not-compared", "changed")


def _rank_results(ranks: list[RankOutcome]) -> tuple[str, str]:
    worst = max(ranks, key=lambda r: _RESULT_ORDER.index(r.results) if r.results in _RESULT_ORDER else 0)
    if worst.results in ("identical", "within-tolerance") and all(r.results == worst.results for r in ranks):
        return worst.results, f"per rank ({len(ranks)} ranks), " + worst.results_detail
    return worst.results, f"rank {worst.rank}: {worst.results_detail}"


def _pick_rank(outcome: Outcome) -> None:
    """The runs the report shows: a failed rank's first, else the rank whose
    original used the most memory."""
    failed = [r for r in outcome.ranks if not r.original.ok or (r.fixed is not None and not r.fixed.ok)]

    def load(r: RankOutcome):
        return tuple(r.original.meters[m].peak or 0 for m in (TENSOR, CPU_TENSOR, GRAPH) if m in r.original.meters)

    pick = failed[0] if failed else max(outcome.ranks, key=load)
    outcome.original, outcome.fixed = pick.original, pick.fixed


def _distributed_notes(outcome: Outcome) -> None:
    if len(outcome.ranks) < 2:
        return
    n = len(outcome.ranks)
    shown = outcome.original.rank
    outcome.notes.append(f"{n} ranks measured; the table shows rank {shown}, the one that used the most memory")
    runs = [r.original for r in outcome.ranks if r.original.ok] + [
        r.fixed for r in outcome.ranks if r.fixed and r.fixed.ok
    ]
    if runs and not any(r.process_group for r in runs):
        outcome.notes.append(
            f"--nproc-per-node {n}: the script never called torch.distributed.init_process_group, so each of its {n} "
            "processes ran the whole job alone; verify it without --nproc-per-node"
        )


def _recorded(run: RunSummary) -> dict:
    return {"losses": run.losses, "params": run.params, "outputs": run.outputs}


def _steps(run: RunSummary) -> str:
    kind = {"optimizer": "optimizer steps", "forward": "forward steps"}.get(run.step_kind or "", "steps")
    return f"{run.steps} {kind}"


def _growth_notes(outcome: Outcome, run: RunSummary, who: str) -> None:
    from memlint.verify.verdict import grew

    if not run.ok:
        return
    grows = [LABELS[m] for m in run.meter_names() if grew(run.meters[m], run.device or outcome.device)]
    if grows:
        outcome.notes.append(f"{who} still grows per step on: {', '.join(grows)}")
