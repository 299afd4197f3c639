"""From samples to a verdict: growth per step, peaks, and what changed.

Pure Python (no torch): the parent process reads the children's samples and
decides. Noise floors are per meter and per device; a meter "grew" only when
its least-squares slope after the warm-up is above its floor, so a verdict never
rests on a difference smaller than what a clean loop shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

# Meter names, in the order reports list them. TENSOR is the run's device's
# tensor meter (the CUDA allocator's counters on CUDA, the storage tracker on
# the CPU); CPU_TENSOR is the storage tracker for CPU storages beside the
# CUDA counters (--device auto on a CUDA machine), absent otherwise.
TENSOR = "tensor_bytes"
CPU_TENSOR = "cpu_tensor_bytes"
GRAPH = "graph_nodes"
HEAP = "heap_bytes"
METERS = (TENSOR, CPU_TENSOR, GRAPH, HEAP)
BYTE_METERS = (TENSOR, CPU_TENSOR)

LABELS = {TENSOR: "tensor bytes", CPU_TENSOR: "CPU tensor bytes", GRAPH: "graph nodes", HEAP: "host heap"}
UNITS = {TENSOR: "bytes", CPU_TENSOR: "bytes", GRAPH: "nodes", HEAP: "bytes"}

# The segments of a run: from the script's start to the end of its first
# step, the steps after it, and from the last step to the script's end (only
# when the script ended on its own). Each has its own peak; the whole run's
# peak is the highest of them.
START, STEPS, TAIL = "start", "steps", "tail"
SEGMENTS = (START, STEPS, TAIL)
SEGMENT_LABELS = {START: "start→step 1", STEPS: "steps", TAIL: "last step→end"}

# Growth below these per-step slopes is noise. The CPU storage tracker is exact;
# the CUDA allocator rounds every block to 512 bytes; glibc's heap moves by a few
# hundred bytes a step in a clean loop (measured on the clean fixtures), and by
# 1.8-2.3 KiB a step when the loop runs on CUDA (measured on an H200: the same
# clean training steps in both twins, 8 runs).
GROWTH_FLOOR = {
    (TENSOR, "cpu"): 64.0,
    (TENSOR, "cuda"): 512.0,
    (GRAPH, None): 0.5,
    (HEAP, None): 2048.0,
    (HEAP, "cuda"): 4096.0,
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
    if meter == CPU_TENSOR:
        meter, device = TENSOR, "cpu"
    return GROWTH_FLOOR.get((meter, _family(device)), GROWTH_FLOOR.get((meter, None), 0.0))


def peak_noise_for(meter: str, device: str) -> tuple[float, float] | None:
    if meter == CPU_TENSOR:
        meter, device = TENSOR, "cpu"
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
class Segment:
    peak: float | None  # the highest value seen in the segment
    end: float | None  # the value held at its end


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
    segments: dict = field(default_factory=dict)  # START/STEPS/TAIL -> Segment, where there was one

    @property
    def growth_judged(self) -> bool:
        return self.growth_per_step is not None and self.points >= MIN_GROWTH_POINTS

    def sustained(self, floor: float) -> bool:
        return all(s is not None and s > floor / 2 for s in self.half_slopes)

    @classmethod
    def from_samples(
        cls,
        meter: str,
        values: list,
        peaks: list | None = None,
        tail: float | None = None,
        tail_peak: float | None = None,
        head_peak: float | None = None,
    ) -> MeterStats:
        """``values``/``peaks`` at each step boundary; ``tail``/``tail_peak``
        at the script's end; ``head_peak``: before the first step, from
        boundaries that were dropped."""
        usable = [v for v in values if v is not None]
        segments = _segments(values, peaks, tail, tail_peak, head_peak)
        if not usable:
            stats = cls(meter, values, peaks, segments=segments)
            stats.peak = _top(*(seg.peak for seg in segments.values()))
            return stats
        warm = warmup_steps(len(values))
        stats = cls(meter, values, peaks, growth_per_step=slope(values, warm))
        window = [(i, v) for i, v in enumerate(values) if i >= warm and v is not None]
        stats.points = len(window)
        stats.half_slopes = (_fit(window[: len(window) // 2]), _fit(window[len(window) // 2 :]))
        stats.segments = segments
        stats.peak = _top(*(seg.peak for seg in segments.values()))
        if peaks:
            gaps = [
                p - v for i, (p, v) in enumerate(zip(peaks, values)) if i >= warm and p is not None and v is not None
            ]
            stats.transient = max(gaps) if gaps else None
        return stats

    @property
    def measured(self) -> bool:
        return any(v is not None for v in self.values) or any(seg.end is not None for seg in self.segments.values())

    @property
    def observed(self) -> bool:
        """The meter saw something of the script's: a byte meter that read 0
        throughout (a CPU script under the CUDA counters) saw nothing."""
        if not self.measured:
            return False
        if self.meter in BYTE_METERS:
            return bool(self.peak)
        return True

    def segment(self, name: str) -> Segment | None:
        return self.segments.get(name)


def _top(*values):
    usable = [v for v in values if v is not None]
    return max(usable) if usable else None


def _segments(values, peaks, tail, tail_peak, head_peak) -> dict:
    peaks = list(peaks or [])
    peaks += [None] * (len(values) - len(peaks))
    out = {}
    if values:
        out[START] = Segment(_top(head_peak, peaks[0], values[0]), values[0])
    elif head_peak is not None:
        out[START] = Segment(head_peak, None)
    if len(values) > 1:
        out[STEPS] = Segment(_top(*peaks[1:], *values[1:]), values[-1])
    if tail is not None or tail_peak is not None:
        out[TAIL] = Segment(_top(tail_peak, tail), tail)
    return out


@dataclass
class MeterVerdict:
    meter: str
    status: str  # "dropped" | "unchanged" | "increased" | "not-measured"
    reasons: list[str] = field(default_factory=list)


NOT_OBSERVED = "saw none of the script's allocations"


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
    if not orig.observed and not fixed.observed:
        # Zero against zero is no evidence that the fix kept memory as it was.
        return MeterVerdict(meter, "not-measured", [NOT_OBSERVED])
    floor = floor_for(meter, device)
    down: list[str] = []
    up: list[str] = []
    og, fg = orig.growth_per_step or 0.0, fixed.growth_per_step or 0.0
    if not (orig.growth_judged and fixed.growth_judged):
        pass  # too short to tell growth from warm-up; the peaks still count
    elif abs(fg - og) <= floor:
        # Two slopes on either side of the floor but within noise of each
        # other: the same loop measured twice, not a change.
        pass
    elif grew(orig, device) and not grew(fixed, device):
        down.append("stopped growing")
    elif grew(orig, device) and fg < 0.5 * og:
        down.append("grows more slowly")
    elif grew(fixed, device) and not grew(orig, device):
        up.append("started growing")
    elif grew(fixed, device) and fg > 1.5 * og + floor:
        up.append("grows faster")
    noise = peak_noise_for(meter, device)
    if up and noise is None and _ends_no_higher(orig, fixed, floor):
        # A meter judged by growth alone (the host heap): the fixed run ended
        # its steps no higher, so the same memory arrived at other steps (on
        # an H200, CUDA's lazily loaded kernels moved from the warm-up into the
        # steps when a fix put evaluation under no_grad). Not a cost.
        up.clear()
    if noise:
        moved = _moved(orig.peak, fixed.peak, noise)
        if moved == "fell":
            down.append("peak fell")
        elif moved == "rose":
            up.append("peak rose")
        # Each segment counts on its own: a fix must not move memory into
        # another part of the run, and a leak in the tail shows only there.
        for name in SEGMENTS:
            a, b = orig.segment(name), fixed.segment(name)
            if a is None or b is None:
                continue
            where = SEGMENT_LABELS[name]
            moved = _moved(a.peak, b.peak, noise)
            if moved == "rose" and "peak rose" not in up:
                up.append(f"peak rose in {where}")
            elif moved == "fell" and "peak fell" not in down:
                down.append(f"peak fell in {where}")
            if name == TAIL:
                held = _moved(a.end, b.end, noise)
                if held == "rose":
                    up.append("holds more at the end")
                elif held == "fell":
                    down.append("holds less at the end")
    if up:
        return MeterVerdict(meter, "increased", up + down)
    if down:
        return MeterVerdict(meter, "dropped", down)
    return MeterVerdict(meter, "unchanged")


def _ends_no_higher(orig: MeterStats, fixed: MeterStats, floor: float) -> bool:
    a, b = orig.segment(STEPS), fixed.segment(STEPS)
    if a is None or b is None or a.end is None or b.end is None:
        return False
    return b.end <= a.end + floor


def _moved(a, b, noise) -> str | None:
    """ "fell", "rose" or None: whether a -> b moved beyond the noise."""
    if a is None or b is None:
        return None
    margin = max(noise[0] * max(a, b), noise[1])
    if a - b > margin:
        return "fell"
    if b - a > margin:
        return "rose"
    return None


def memory_verdict(verdicts: Sequence[MeterVerdict]) -> str:
    """Any meter that rose makes the whole "increased": a fix must not cost
    memory anywhere. Otherwise "dropped" needs at least one meter that showed it."""
    statuses = {v.status for v in verdicts}
    if "increased" in statuses:
        return "increased"
    if "dropped" in statuses:
        return "dropped"
    if statuses <= {"not-measured"}:
        return "not-measured"
    return "unchanged"
