"""Writing an Outcome for people (a before/after table) and for machines
(``--json``, schema below; fields are only ever added).

JSON schema, version 1::

    {
      "schema": 1,
      "script": str,                      # the original, as given
      "fixed_script": str | null,         # the --fixed file; null for a temporary twin
      "device": "cpu" | "cuda" | "simulated-cpu",
      "nproc_per_node": int,              # 1 unless --nproc-per-node
      "steps_requested": int,
      "step_kind": "optimizer" | "forward" | null,
      "findings": [str],                  # codes fixed, one per finding
      "fixes": [{"code", "name", "line", "safety"}],   # and "cell" for a notebook,
                                          # "path" (from the project root) for a script's twin
      "unfixed": {CODE: str},              # what memlint reports but did not fix, and why
      "left": [{"code", "name", "path", "line", "why"}],  # each finding not fixed, where, why
      "project": {"root": str, "fixed_modules": [str]} | null,  # the script's project; the
                                          # modules other than the script that the twin fixed
      "original": RUN,
      "fixed": RUN | null,                # null when there was nothing to fix
      "verdict": {
        "memory": "dropped" | "unchanged" | "increased" | "not-measured" | "not-compared",
        "results": "identical" | "within-tolerance" | "changed"
                   | "original-failed" | "fixed-failed" | "both-failed" | "not-compared",
        "meters": {METER: {"status": "dropped" | "unchanged" | "increased" | "not-measured",
                           "reasons": [str]}},
        "results_detail": str,
        "notes": [str]
      },
      "ok": bool,
      "ranks": [{"rank": int, "original": RUN, "fixed": RUN | null, "memory": str,
                 "results": str, "results_detail": str,
                 "meters": {METER: {"status", "reasons"}}}]   # [] unless --nproc-per-node
    }

    RUN = {
      "status": "ok" | "error", "error": str | null, "steps": int, "reached_steps": bool,
      "peak_bytes": int | null, "growth_bytes_per_step": float | null,
      "transient_bytes": int | null, "reserved_peak_bytes": int | null,
      "graph_nodes_peak": int | null, "graph_nodes_growth_per_step": float | null,
      "heap_peak_bytes": int | null, "heap_growth_bytes_per_step": float | null,
      "losses": [float | "NaN" | "Infinity" | "-Infinity"],
      "wall_seconds": float | null, "max_rss_bytes": int | null,
      "timeline": {"tensor_bytes": [int], "tensor_peak_bytes": [int],
                   "graph_nodes": [int], "heap_bytes": [int | null]},
      "ended": "end" | "stopped" | "error" | null,   # "end": the tail was measured
      "exit_status": int | null,           # a failed script's: what `python SCRIPT` exits with
      "rank": int,
      "meters": {METER: {
          "observed": bool,                # false: the meter saw none of the script's allocations
          "peak": number | null,           # the whole run's
          "growth_per_step": float | null,
          "segments": {"start" | "steps" | "tail": {"peak": number | null, "end": number | null}}}}
    }

METER is one of "tensor_bytes", "cpu_tensor_bytes" (the CPU tracker beside the
CUDA counters, --device auto on CUDA only), "graph_nodes", "heap_bytes". The
segments: "start" from the script's start to the end of the first step,
"steps" the steps after it, "tail" from the last step to the script's end
(absent when the run stopped at --steps). Growth is the
least-squares slope per step after the warm-up; ``null`` where a meter did not
run or too few steps ran.
"""

from __future__ import annotations

import json
import math

from memlint.verify.outcome import Outcome, RunSummary, exit_status_text
from memlint.verify.verdict import (
    CPU_TENSOR,
    GRAPH,
    HEAP,
    LABELS,
    SEGMENT_LABELS,
    SEGMENTS,
    START,
    TAIL,
    TENSOR,
    floor_for,
    one_off_rise,
)

SCHEMA_VERSION = 1


# -- JSON -------------------------------------------------------------------


def _num(value):
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
    return value


def _int(value):
    return None if value is None else int(value)


def run_json(run: RunSummary | None) -> dict | None:
    if run is None:
        return None
    t, g, h = run.meters[TENSOR], run.meters[GRAPH], run.meters[HEAP]
    return {
        "status": run.status,
        "error": run.error,
        "steps": run.steps,
        "reached_steps": run.reached_steps,
        "peak_bytes": _int(t.peak),
        "growth_bytes_per_step": t.growth_per_step,
        "transient_bytes": _int(t.transient),
        "reserved_peak_bytes": run.reserved_peak,
        "graph_nodes_peak": _int(g.peak),
        "graph_nodes_growth_per_step": g.growth_per_step,
        "heap_peak_bytes": _int(h.peak),
        "heap_growth_bytes_per_step": h.growth_per_step,
        "losses": [_num(v) for v in run.losses],
        "wall_seconds": run.wall_s,
        "max_rss_bytes": run.max_rss,
        "timeline": {
            "tensor_bytes": t.values,
            "tensor_peak_bytes": t.peaks or [],
            "graph_nodes": g.values,
            "heap_bytes": h.values,
        },
        "ended": run.ended,
        "exit_status": run.exit_status,
        "rank": run.rank,
        "meters": {name: _meter_json(stats) for name, stats in run.meters.items()},
    }


def _meter_json(stats) -> dict:
    return {
        "observed": stats.observed,
        "peak": stats.peak,
        "growth_per_step": stats.growth_per_step,
        "segments": {name: {"peak": seg.peak, "end": seg.end} for name, seg in stats.segments.items()},
    }


def _verdicts_json(verdicts) -> dict:
    return {v.meter: {"status": v.status, "reasons": v.reasons} for v in verdicts}


def to_json(outcome: Outcome) -> dict:
    return {
        "schema": SCHEMA_VERSION,
        "script": outcome.script,
        "fixed_script": outcome.fixed_script,
        "device": outcome.original.device or outcome.device,
        "nproc_per_node": max(1, len(outcome.ranks)),
        "steps_requested": outcome.steps_requested,
        "step_kind": outcome.step_kind,
        "findings": [f.code for f in outcome.findings],
        "fixes": [f.as_json() for f in outcome.findings],
        "unfixed": {code: outcome.unfixed_reasons.get(code, "") for code in dict.fromkeys(outcome.unfixed)},
        "left": [x.as_json() for x in outcome.left],
        "project": (
            {"root": outcome.project_root, "fixed_modules": list(outcome.fixed_modules)}
            if outcome.project_root is not None
            else None
        ),
        "original": run_json(outcome.original),
        "fixed": run_json(outcome.fixed),
        "verdict": {
            "memory": outcome.memory,
            "results": outcome.results,
            "meters": _verdicts_json(outcome.meter_verdicts),
            "results_detail": outcome.results_detail,
            "notes": outcome.notes,
        },
        "ok": outcome.ok,
        "ranks": [
            {
                "rank": r.rank,
                "original": run_json(r.original),
                "fixed": run_json(r.fixed),
                "memory": r.memory,
                "results": r.results,
                "results_detail": r.results_detail,
                "meters": _verdicts_json(r.meter_verdicts),
            }
            for r in outcome.ranks
        ],
    }


def render_json(outcome: Outcome) -> str:
    return json.dumps(to_json(outcome), indent=2, allow_nan=False)


# -- people -----------------------------------------------------------------


def human_bytes(n: float | None, signed: bool = False) -> str:
    if n is None:
        return "-"
    sign = ("+" if n >= 0 else "-") if signed else ("-" if n < 0 else "")
    size = abs(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            text = f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
            return sign + text
        size /= 1024
    return sign + f"{size:.1f} TiB"  # pragma: no cover


def _count(n: float | None, signed: bool = False) -> str:
    if n is None:
        return "-"
    return f"{n:+.1f}" if signed else f"{n:.0f}"


def _growth(stats, device: str) -> str:
    meter, value = stats.meter, stats.growth_per_step
    if value is None:
        return "-"
    # Below the noise floor a slope is printed as what it is: no growth.
    if abs(value) <= floor_for(meter, device):
        return "≈0/step" if meter == GRAPH else "≈0 B/step"
    text = (_count(value, True) if meter == GRAPH else human_bytes(value, True)) + "/step"
    return text + " (one-off rise)" if one_off_rise(stats, device) else text


def _label(meter: str, device: str) -> str:
    if meter == TENSOR and device.startswith("cuda"):
        return "CUDA tensor bytes"
    return LABELS[meter]


def _rows(outcome: Outcome, device: str) -> list[tuple[str, str, str, str, str]]:
    runs = [outcome.original] + ([outcome.fixed] if outcome.fixed else [])
    verdicts = {v.meter: v for v in outcome.meter_verdicts}
    rows = []
    for meter in outcome.original.meter_names():
        stats = [r.meters[meter] for r in runs if meter in r.meters]
        v = verdicts.get(meter)
        if not any(s.measured for s in stats) or not any(s.observed for s in stats):
            why = (
                "not measured"
                if not any(s.measured for s in stats)
                else "not measured: saw none of the script's allocations"
            )
            rows.append((_label(meter, device), "", why, "", ""))
            continue
        fmt = _count if meter == GRAPH else human_bytes
        lines = []
        if meter != HEAP:
            lines += _segment_lines(stats, runs, fmt)
        lines.append(("growth", [_growth(s, device) for s in stats]))
        if meter in (TENSOR, CPU_TENSOR) and any(s.transient for s in stats):
            lines.append(("transient", [fmt(s.transient) for s in stats]))
        if meter == TENSOR and any(r.reserved_peak for r in runs):
            # What the CUDA caching allocator held: what nvidia-smi shows.
            lines.append(("reserved", [fmt(r.reserved_peak) for r in runs]))
        judged = f"{v.status}: {', '.join(v.reasons)}" if v and v.reasons else (v.status if v else "")
        for i, (what, values) in enumerate(lines):
            values = values + [""] * (2 - len(values))
            rows.append((_label(meter, device) if i == 0 else "", what, values[0], values[1], judged if i == 0 else ""))
    return rows


def _segment_lines(stats, runs, fmt) -> list:
    """The whole run's peak, then each segment's, then what the tail left held."""
    lines = [("peak, whole run", [fmt(s.peak) for s in stats])]
    for name in SEGMENTS:
        if name == TAIL:
            values = [fmt(s.segment(TAIL).peak) if s.segment(TAIL) else "not reached" for s in stats]
        else:
            values = [fmt(s.segment(name).peak) if s.segment(name) else "-" for s in stats]
        if name != START or any(s.segment(name) for s in stats):
            lines.append((f"  {SEGMENT_LABELS[name]}", values))
    if any(s.segment(TAIL) for s in stats):
        lines.append(("held at end", [fmt(s.segment(TAIL).end) if s.segment(TAIL) else "-" for s in stats]))
    return lines


def _run_line(run: RunSummary) -> str:
    kind = {"optimizer": "optimizer steps", "forward": "forward steps"}.get(run.step_kind or "", "steps")
    if run.steps == 1:
        kind = kind.replace("steps", "step")
    extra = [f"{run.wall_s:.1f} s"] if run.wall_s is not None else []
    if run.max_rss:
        extra.append(f"{human_bytes(run.max_rss)} resident")
    status = "ok," if run.ok else "error after"
    return f"{status} {run.steps} {kind}" + (f" ({', '.join(extra)})" if extra else "")


def render_human(outcome: Outcome, color: bool = False) -> str:
    o, f = outcome.original, outcome.fixed
    device = o.device or outcome.device
    ranks = f", {len(outcome.ranks)} ranks, showing rank {o.rank}" if outcome.ranks else ""
    out = [f"memlint verify {outcome.script}  (device {device}{ranks})"]
    out.append(f"  original: {_run_line(o)}")
    if f is not None:
        out.append(f"  fixed:    {_run_line(f)}" + (f"  [{outcome.fixed_script}]" if outcome.fixed_script else ""))
    paths = _across_files(outcome)
    for x in outcome.findings:
        name = f" {x.name}" if x.name else ""
        how = "by hand" if outcome.fixed_script else f"{x.safety} fix"
        where = f"{x.path}:{x.line}" if paths and x.path else x.where
        out.append(f"  fixed {x.code}{name}, {where} ({how})")
    if f is not None and not outcome.findings:
        out.append("  memlint reports no finding that the twin fixes")
    if f is not None or paths:  # with nothing fixed, the verdict line says why (where: here)
        for x in outcome.left:
            name = f" {x.name}" if x.name else ""
            where = f"{x.path}:{x.line}" if paths else f"line {x.line}"
            out.append(f"  left {x.code}{name}, {where}: {x.why}")
    out.append("")
    failed = [
        (run, label) for run, label in ((o, "original failed"), (f, "fixed failed")) if run is not None and not run.ok
    ]
    if len(failed) == 2 and f is not None and o.error == f.error:
        # The same failure in both runs is the script's own: shown once, from
        # the original (the twin's frames name its temporary copy).
        failed = [(o, "the script failed in both runs, the same way")]
    for run, label in failed:
        tb = (run.traceback or "").rstrip().splitlines()
        if tb:
            out.append(f"  {label}{exit_status_text(run)}:")
            out.extend("    " + line for line in tb[-12:])
        else:
            out.append(f"  {label}{exit_status_text(run)}: {run.error}")
            out.extend("    " + line for line in run.stderr_tail.rstrip().splitlines()[-8:])
        out.append("")
    if o.ok and (f is None or f.ok):
        rows = _rows(outcome, device)
        header = ("", "", "original", "fixed" if f is not None else "", "")
        widths = [max(len(r[i]) for r in rows + [header]) for i in range(4)]
        for r in [header] + rows:
            line = f"  {r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]:>{widths[3]}}  {r[4]}"
            out.append(line.rstrip())
        out.append("")
    if len(outcome.ranks) > 1:
        for r in outcome.ranks:
            out.append(f"  rank {r.rank}: memory {r.memory}, results {r.results}")
    if outcome.results_detail:
        out.append(f"  results: {outcome.results_detail}")
    for note in outcome.notes:
        out.append(f"  note: {note}")
    out.append(_verdict_line(outcome, color))
    return "\n".join(out) + "\n"


def _across_files(outcome: Outcome) -> bool:
    """Whether the findings lie in more files than the script: each is then
    shown with its file (``engine.py:12``), else with its line alone."""
    if outcome.fixed_modules:
        return True
    import os

    if outcome.project_root is None:
        return False
    script = os.path.relpath(os.path.abspath(outcome.script), outcome.project_root).replace(os.sep, "/")
    return any(x.path not in (None, script) for x in [*outcome.findings, *outcome.left])


def _verdict_line(outcome: Outcome, color: bool) -> str:
    tail = ""
    if outcome.nothing_to_fix:
        if outcome.memory == "not-measured":
            text = "nothing to fix; memory not measured"
        elif outcome.unfixed:
            # Not "nothing to fix" beside a finding memlint reports: say why
            # nothing was fixed, and so nothing compared.
            text = "no fix was applied, so nothing was compared: " + "; ".join(
                f"{code} {outcome.unfixed_reasons.get(code, 'was not fixed')}"
                for code in dict.fromkeys(outcome.unfixed)
            )
            if not outcome.ok:
                text += "; the script failed"
        else:
            text = "nothing to fix" + ("" if outcome.ok else "; the script failed")
    elif outcome.results == "both-failed":
        text = f"the script failed in both runs{exit_status_text(outcome.original)}"
        tail = ": this says nothing about the fix"
    else:
        text = f"memory {outcome.memory}, results {outcome.results}"
        tail = ": the fix held up" if outcome.ok else ": the fix did not hold up"
    mark = "OK" if outcome.ok else "FAILED"
    if color:
        mark = f"\033[1;32m{mark}\033[0m" if outcome.ok else f"\033[1;31m{mark}\033[0m"
    return f"{mark} {text}{tail}"
