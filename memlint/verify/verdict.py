"""From samples to a verdict: growth per step, peaks, and what changed.

Pure Python (no torch): the parent process reads the children's samples and
decides. Noise floors are per meter and per device; a meter "grew" only when
its least-squares slope after the warm-up is above its floor, so a verdict never
rests on a difference smaller than what a clean loop shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

# Meter names, in the order reports list them.
TENSOR = "tensor_bytes"
GRAPH = "graph_nodes"
HEAP = "heap_bytes"
METERS = (TENSOR, GRAPH, HEAP)

LABELS = {TENSOR: "tensor bytes", GRAPH: "graph nodes", HEAP: "host heap"}
UNITS = {TENSOR: "bytes", GRAPH: "nodes", HEAP: "bytes"}

# Growth below these per-step slopes is noise. The CPU storage tracker is exact;
# the CUDA allocator rounds every block to 512 bytes; glibc's heap moves by a few
# hundred bytes a step in a clean loop (measured on the clean fixtures).
GROWTH_FLOOR = {
    (TENSOR, "cpu"): 64.0,
    (TENSOR, "cuda"): 512.0,
    (GRAPH, None): 0.5,
    (HEAP, None): 2048.0,
}
# A peak moved by more than max(relative * peak, absolute) is a real change.
PEAK_NOISE = {
    (TENSOR, "cpu"): (0.02, 4096.0),
    (TENSOR, "cuda"): (0.02, 65536.0),
    (GRAPH, None): (0.05, 8.0),
}
# The host heap's peak mixes allocator caching and Python's own arenas; only its
# growth is judged.


def floor_for(meter: str, device: str) -> float:
    return GROWTH_FLOOR.get((meter, _family(device)), GROWTH_FLOOR.get((meter, None), 0.0))


def peak_noise_for(meter: str, device: str) -> tuple[float, float] | None:
    return PEAK_NOISE.get((meter, _family(device)), PEAK_NOISE.get((meter, None)))


def _family(device: str) -> str:
    return "cuda" if device.startswith("cuda") else "cpu"


# A slope over fewer points is shown but not judged: in a short run the
# warm-up's allocations (caches, allocator arenas) still look like growth.
MIN_GROWTH_POINTS = 8


def warmup_steps(n: int) -> int:
    """Samples skipped before fitting: the first steps allocate optimizer state,
    warm caches and autotune; about a fifth of the run, one to five steps."""
    return max(1, min(5, n // 5))


def slope(values: Sequence[float | None], warmup: int) -> float | None:
    """Least-squares slope of ``values`` against the step index after the
    warm-up; None with fewer than three usable points."""
    return _fit([(i, v) for i, v in enumerate(values) if i >= warmup and v is not None])


def _fit(pts: list[tuple[int, float]]) -> float | None:
    if len(pts) < 3:
        return None
    n = len(pts)
    mx = sum(i for i, _ in pts) / n
    my = sum(v for _, v in pts) / n
    sxx = sum((i - mx) ** 2 for i, _ in pts)
    sxy = sum((i - mx) * (v - my) for i, v in pts)
    return sxy / sxx if sxx else 0.0


@dataclass
class MeterStats:
    """One meter over one run."""

    meter: str
    values: list  # the value at each step boundary (None where not measured)
    peaks: list | None = None  # highest value within each step, when the meter sees inside steps
    growth_per_step: float | None = None
    peak: float | None = None
    transient: float | None = None  # largest (in-step peak - boundary value) after the warm-up
    points: int = 0  # samples the slope was fitted to
    # Slopes of the first and second half of the fitted window: growth goes
    # on through both; a one-off rise (a lazy initialisation, the first
    # validation pass) shows in one half only.
    half_slopes: tuple = (None, None)

    @property
    def growth_judged(self) -> bool:
        return self.growth_per_step is not None and self.points >= MIN_GROWTH_POINTS

    def sustained(self, floor: float) -> bool:
        return all(s is not None and s > floor / 2 for s in self.half_slopes)

    @classmethod
    def from_samples(cls, meter: str, values: list, peaks: list | None = None) -> "MeterStats":
        usable = [v for v in values if v is not None]
        if not usable:
            return cls(meter, values, peaks)
        warm = warmup_steps(len(values))
        stats = cls(meter, values, peaks, growth_per_step=slope(values, warm))
        window = [(i, v) for i, v in enumerate(values) if i >= warm and v is not None]
        stats.points = len(window)
        stats.half_slopes = (_fit(window[: len(window) // 2]), _fit(window[len(window) // 2 :]))
        all_peaks = [p for p in (peaks or []) if p is not None] + usable
        stats.peak = max(all_peaks)
        if peaks:
            gaps = [p - v for i, (p, v) in enumerate(zip(peaks, values)) if i >= warm and p is not None and v is not None]
            stats.transient = max(gaps) if gaps else None
        return stats

    @property
    def measured(self) -> bool:
        return any(v is not None for v in self.values)


@dataclass
class MeterVerdict:
    meter: str
    status: str  # "dropped" | "unchanged" | "increased" | "not-measured"
    reasons: list[str] = field(default_factory=list)


def grew(stats: MeterStats, device: str) -> bool:
    floor = floor_for(stats.meter, device)
    return stats.growth_judged and stats.growth_per_step > floor and stats.sustained(floor)


def one_off_rise(stats: MeterStats, device: str) -> bool:
    """A slope above the floor that does not go on: a step, not growth."""
    floor = floor_for(stats.meter, device)
    return stats.growth_judged and stats.growth_per_step > floor and not stats.sustained(floor)


def compare_meter(orig: MeterStats, fixed: MeterStats, device: str) -> MeterVerdict:
    meter = orig.meter
    if not orig.measured or not fixed.measured:
        return MeterVerdict(meter, "not-measured")
    floor = floor_for(meter, device)
    down: list[str] = []
    up: list[str] = []
    og, fg = orig.growth_per_step or 0.0, fixed.growth_per_step or 0.0
    if not (orig.growth_judged and fixed.growth_judged):
        pass  # too short to tell growth from warm-up; the peaks still count
    elif grew(orig, device) and not grew(fixed, device):
        down.append("stopped growing")
    elif grew(orig, device) and fg < 0.5 * og:
        down.append("grows more slowly")
    elif grew(fixed, device) and not grew(orig, device):
        up.append("started growing")
    elif grew(fixed, device) and fg > 1.5 * og + floor:
        up.append("grows faster")
    noise = peak_noise_for(meter, device)
    if noise and orig.peak is not None and fixed.peak is not None:
        margin = max(noise[0] * max(orig.peak, fixed.peak), noise[1])
        if orig.peak - fixed.peak > margin:
            down.append("peak fell")
        elif fixed.peak - orig.peak > margin:
            up.append("peak rose")
    if up:
        return MeterVerdict(meter, "increased", up + down)
    if down:
        return MeterVerdict(meter, "dropped", down)
    return MeterVerdict(meter, "unchanged")


def memory_verdict(verdicts: Sequence[MeterVerdict]) -> str:
    """Any meter that rose makes the whole "increased": a fix must not cost
    memory anywhere. Otherwise "dropped" needs at least one meter that showed it."""
    statuses = {v.status for v in verdicts}
    if "increased" in statuses:
        return "increased"
    if "dropped" in statuses:
        return "dropped"
    return "unchanged"
