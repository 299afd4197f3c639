"""memlint verify, piece by piece: slopes and verdicts, result comparison, the
JSON and human reports, argument parsing, the twin, and the meters in-process.
End-to-end runs of the fixtures are in test_verify_runs.py."""

from __future__ import annotations

import json
import math
import sys
import weakref

import pytest

from memlint.verify import cli
from memlint.verify.outcome import Outcome, RunSummary, decide
from memlint.verify.report import human_bytes, render_human, render_json, to_json
from memlint.verify.results import compare_results
from memlint.verify.twin import FixedFinding
from memlint.verify.verdict import (
    GRAPH,
    HEAP,
    TENSOR,
    MeterStats,
    MeterVerdict,
    compare_meter,
    grew,
    memory_verdict,
    slope,
    warmup_steps,
)

# -- slopes and verdicts ----------------------------------------------------


def test_slope_of_a_line_and_of_a_constant():
    assert slope([10 + 3 * i for i in range(20)], warmup=2) == pytest.approx(3.0)
    assert slope([7] * 20, warmup=2) == 0.0


def test_slope_skips_the_warm_up_and_needs_three_points():
    # A big first-step allocation (optimizer state) is not growth.
    assert slope([0, 1000] + [1000] * 10, warmup=2) == 0.0
    assert slope([1, 2, 3, 4], warmup=2) is None


def test_warmup_is_a_fifth_of_the_run_between_one_and_five_steps():
    assert [warmup_steps(n) for n in (3, 10, 20, 50, 1000)] == [1, 2, 4, 5, 5]


def test_meter_stats_peak_and_transient():
    stats = MeterStats.from_samples(TENSOR, [100] * 10, [100] + [150] * 9)
    assert stats.growth_per_step == 0.0
    assert stats.peak == 150
    assert stats.transient == 50


def _stats(meter, values, peaks=None):
    return MeterStats.from_samples(meter, values, peaks)


def test_growth_that_stops_is_a_drop():
    v = compare_meter(_stats(GRAPH, [11 + 8 * i for i in range(20)]), _stats(GRAPH, [11] * 20), "cpu")
    assert v.status == "dropped"
    assert "stopped growing" in v.reasons


def test_growth_that_starts_is_an_increase():
    v = compare_meter(_stats(HEAP, [10**8] * 20), _stats(HEAP, [10**8 + 8000 * i for i in range(20)]), "cpu")
    assert v.status == "increased"


def test_heap_growth_that_ends_no_higher_is_timing_not_cost():
    # Measured on an H200 (fixtures/verify/cuda/project): both twins' heaps
    # rose about 58 MB over 20 steps and ended level, but the original took
    # most of it in the warm-up (lazily loaded CUDA kernels) and the fixed
    # twin during the steps: +1.78 against +4.06 MB/step after the warm-up.
    start = 511_843_248
    orig = _stats(HEAP, [start, start + 30_000_000] + _line(start + 30_000_000, 1_780_000, 18))
    fixed = _stats(HEAP, _line(start, 3_170_000))
    assert fixed.growth_per_step > 1.5 * orig.growth_per_step
    assert fixed.values[-1] <= orig.values[-1]
    assert compare_meter(orig, fixed, "cuda").status == "unchanged"
    # Ending higher is still a cost.
    higher = _stats(HEAP, _line(start, 4_060_000))
    assert higher.values[-1] > orig.values[-1]
    assert compare_meter(orig, higher, "cuda").reasons == ["grows faster"]


def test_a_one_off_rise_is_not_growth():
    # Measured: the first validation pass left the heap 365 KiB higher, once.
    heap = [114_258_000 + (365_000 if i >= 10 else 0) + 50 * i for i in range(30)]
    stats = _stats(HEAP, heap)
    assert stats.growth_per_step > 10_000  # what a straight line through it says
    assert compare_meter(stats, _stats(HEAP, [114_258_000] * 30), "cpu").status == "unchanged"
    from memlint.verify.verdict import grew, one_off_rise

    assert not grew(stats, "cpu") and one_off_rise(stats, "cpu")


def test_growth_under_the_noise_floor_is_no_growth():
    # A few hundred heap bytes a step is what a clean loop shows.
    noisy = [10**8 + (300 * i if i % 2 else 0) for i in range(20)]
    assert compare_meter(_stats(HEAP, noisy), _stats(HEAP, [10**8] * 20), "cpu").status == "unchanged"


def test_a_peak_that_falls_beyond_noise_is_a_drop_and_within_noise_is_not():
    before = _stats(TENSOR, [5_000_000] * 20, [6_430_000] * 20)
    after = _stats(TENSOR, [5_000_000] * 20, [5_610_000] * 20)
    assert compare_meter(before, after, "cpu").reasons == ["peak fell"]
    close = _stats(TENSOR, [5_000_000] * 20, [6_400_000] * 20)
    assert compare_meter(before, close, "cpu").status == "unchanged"


def test_cuda_allows_for_allocator_rounding():
    # 512 B/step is one rounded block: noise on CUDA, growth on the CPU tracker.
    grows = _stats(TENSOR, [10**6 + 400 * i for i in range(20)])
    flat = _stats(TENSOR, [10**6] * 20)
    assert compare_meter(grows, flat, "cpu").status == "dropped"
    assert compare_meter(grows, flat, "cuda").status == "unchanged"


def _line(start, per_step, n=20):
    return [start + int(per_step * i) for i in range(n)]


def test_two_slopes_within_noise_of_each_other_are_no_change():
    # Measured on an H200: the same clean training steps in both twins gave
    # the host heap +1843 and +2074 B/step, either side of the CPU's floor.
    orig, fixed = _stats(HEAP, _line(10**8, 1843)), _stats(HEAP, _line(10**8, 2074))
    assert compare_meter(orig, fixed, "cpu").status == "unchanged"
    assert compare_meter(fixed, orig, "cpu").status == "unchanged"
    # ... and no CUDA loop's heap reads as growth at all.
    assert compare_meter(orig, fixed, "cuda").status == "unchanged"
    assert not grew(_stats(HEAP, _line(10**8, 2244)), "cuda")
    # A leak far above the other run's slope is still one.
    assert compare_meter(orig, _stats(HEAP, _line(10**8, 8400)), "cuda").status == "increased"
    assert compare_meter(_stats(HEAP, _line(10**8, 8400)), orig, "cuda").reasons == ["stopped growing"]


def test_growth_in_a_short_run_is_shown_but_not_judged():
    # Five steps of a clean loop: the warm-up's allocations still look like
    # growth on the heap (measured: +1.6 to +2.1 KiB/step).
    short_a = _stats(HEAP, [114866640, 114886032, 114888592, 114889440, 114891536 + 2000])
    short_b = _stats(HEAP, [114873872, 114891840, 114895056, 114895904, 114896832])
    assert short_a.growth_per_step > 2048 and not short_a.growth_judged
    assert compare_meter(short_a, short_b, "cpu").status == "unchanged"
    out = _outcome(_raw(), _raw())
    out.original.meters[HEAP] = short_a
    out.notes.clear()
    decide(out)
    assert any(n.startswith("too few steps to judge growth (it needs 9") for n in out.notes)


def test_a_meter_that_did_not_run_is_not_judged():
    assert compare_meter(_stats(HEAP, [None] * 5), _stats(HEAP, [None] * 5), "cpu").status == "not-measured"


def test_any_increase_outweighs_drops():
    d, u, i = (MeterVerdict(TENSOR, s) for s in ("dropped", "unchanged", "increased"))
    assert memory_verdict([d, u]) == "dropped"
    assert memory_verdict([u, u]) == "unchanged"
    assert memory_verdict([d, i]) == "increased"


# -- results ----------------------------------------------------------------


def _rec(losses=(), params=(), outputs=()):
    return {"losses": list(losses), "params": list(params), "outputs": list(outputs)}


def test_identical_results_are_bitwise():
    a = _rec([2.5, 1.25], [{"sums": [1.0], "digest": "ab"}], [{"sums": [3.0], "digest": "cd"}])
    check = compare_results(a, json.loads(json.dumps(a)))
    assert check.status == "identical"
    assert "bitwise" in check.detail


def test_last_bit_differences_are_within_tolerance():
    x = 0.1 + 0.2
    assert compare_results(_rec([x]), _rec([math.nextafter(x, 1.0)])).status == "within-tolerance"


def test_a_changed_loss_is_named_with_its_index():
    check = compare_results(_rec([1.0, 2.0, 3.0]), _rec([1.0, 2.0, 3.5]))
    assert check.status == "changed"
    assert check.detail.startswith("loss 3 differs")


def test_losses_are_compared_before_parameters():
    check = compare_results(
        _rec([1.0], [{"sums": [1.0], "digest": "a"}]), _rec([2.0], [{"sums": [9.0], "digest": "b"}])
    )
    assert check.detail.startswith("loss 1")


def test_parameters_with_other_bytes_but_equal_sums_are_within_tolerance():
    check = compare_results(
        _rec(params=[{"sums": [1.0], "digest": "a"}]), _rec(params=[{"sums": [1.0], "digest": "b"}])
    )
    assert check.status == "within-tolerance"


def test_a_different_number_of_steps_is_a_change():
    check = compare_results(_rec([1.0, 2.0]), _rec([1.0]))
    assert check.status == "changed"
    assert "2 losses in the original, 1 in the fixed run" in check.detail


def test_nan_losses_compare_equal_to_nan():
    assert compare_results(_rec([float("nan")]), _rec([float("nan")])).status == "identical"


def test_fingerprints_see_a_single_flipped_bit():
    torch = pytest.importorskip("torch")
    from memlint.verify.results import fingerprint

    t = torch.randn(100)
    u = t.clone()
    u.view(torch.int32)[37] ^= 1
    assert fingerprint([t], True) == fingerprint([t.clone()], True)
    assert fingerprint([t], True)["digest"] != fingerprint([u], True)["digest"]
    assert fingerprint([t.half()], False)["digest"] is None


# -- outcome and reports ----------------------------------------------------


def _raw(status="ok", live=None, nodes=None, heap=None, losses=(1.0, 0.5), error=None):
    n = 20
    return {
        "status": status,
        "error": error,
        "device": "cpu",
        "steps": n if status == "ok" else 3,
        "step_kind": "optimizer",
        "reached_steps": status == "ok",
        "samples": {
            "tensor_live": live or [1000] * n,
            "tensor_peak": [v + 10 for v in (live or [1000] * n)],
            "tensor_reserved": [None] * n,
            "graph_nodes": nodes or [11] * n,
            "heap": heap or [10**8] * n,
        },
        "losses": list(losses),
        "params": [],
        "outputs": [],
        "wall_s": 1.5,
    }


def _outcome(orig, fixed, findings=("MEM101",)):
    return decide(
        Outcome(
            script="train.py",
            fixed_script=None,
            device="cpu",
            steps_requested=20,
            findings=[FixedFinding(c, "name", 3, "safe", "m") for c in findings],
            original=RunSummary.from_raw(orig),
            fixed=RunSummary.from_raw(fixed) if fixed is not None else None,
        )
    )


def test_a_graph_leak_that_stops_with_equal_results_holds_up():
    out = _outcome(_raw(nodes=[11 + 11 * i for i in range(20)]), _raw())
    assert (out.memory, out.results, out.ok) == ("dropped", "identical", True)


def test_nothing_measurable_is_said_plainly():
    out = _outcome(_raw(), _raw())
    assert (out.memory, out.ok) == ("unchanged", True)
    assert "no meter showed a difference in memory between the two runs" in out.notes


def test_changed_results_after_safe_fixes_fail():
    out = _outcome(_raw(), _raw(losses=(1.0, 0.75)))
    assert (out.results, out.ok) == ("changed", False)
    assert "every fix applied is marked safe" in out.notes[0]


def test_changed_results_name_the_unsafe_fixes():
    out = _outcome(_raw(), _raw(losses=(1.0, 0.75)))
    out.findings = [FixedFinding("MEM203", "eval-mode-never-undone", 12, "unsafe", "m")]
    out.notes.clear()
    decide(out)
    assert any("MEM203 (line 12)" in n for n in out.notes)


def test_a_crashing_original_and_a_running_twin_is_reported_as_such():
    out = _outcome(_raw("error", error="RuntimeError: inplace"), _raw())
    assert (out.results, out.memory, out.ok) == ("original-failed", "not-compared", True)
    assert out.notes[0] == "the original failed and the fixed script ran 20 optimizer steps"


def test_a_fix_that_breaks_the_script_fails():
    out = _outcome(_raw(), _raw("error", error="NameError: x"))
    assert (out.results, out.ok) == ("fixed-failed", False)


def test_json_schema_fields():
    out = _outcome(_raw(nodes=[11 + 11 * i for i in range(20)], losses=(float("nan"), 1.0)), _raw())
    text = render_json(out)
    data = json.loads(text, parse_constant=lambda name: pytest.fail(f"non-standard JSON: {name}"))
    assert data["schema"] == 1
    assert data["findings"] == ["MEM101"]
    assert data["verdict"]["memory"] == "dropped"
    assert data["verdict"]["results"] == "changed"
    assert data["ok"] is False
    for run in ("original", "fixed"):
        for key in (
            "status",
            "error",
            "steps",
            "peak_bytes",
            "growth_bytes_per_step",
            "graph_nodes_growth_per_step",
            "heap_growth_bytes_per_step",
            "losses",
        ):
            assert key in data[run]
    assert data["original"]["losses"][0] == "NaN"
    assert data["original"]["graph_nodes_growth_per_step"] == pytest.approx(11.0)
    assert data["verdict"]["meters"]["graph_nodes"]["reasons"] == ["stopped growing", "peak fell"]


def test_json_for_nothing_to_fix_has_no_fixed_run():
    data = to_json(_outcome(_raw(), None, findings=()))
    assert data["fixed"] is None and data["ok"] is True and data["findings"] == []


def test_human_report_has_a_table_per_meter_and_a_verdict():
    text = render_human(_outcome(_raw(nodes=[11 + 11 * i for i in range(20)]), _raw()))
    assert "tensor bytes" in text and "graph nodes" in text and "host heap" in text
    assert "+11.0/step" in text
    assert "fixed MEM101 name, line 3 (safe fix)" in text
    assert text.rstrip().endswith("OK memory dropped, results identical: the fix held up")


def test_human_report_shows_cuda_reserved_memory():
    orig, fixed = _raw(), _raw()
    for raw in (orig, fixed):
        raw["device"] = "cuda"
        raw["samples"]["tensor_reserved"] = [2 * 2**20] * 20
    text = render_human(_outcome(orig, fixed))
    assert "device cuda" in text
    assert any(line.split()[:3] == ["reserved", "2.0", "MiB"] for line in text.splitlines())


def test_human_report_of_a_crash_shows_the_error():
    text = render_human(_outcome(_raw("error", error="RuntimeError: boom"), _raw()))
    assert "original failed: RuntimeError: boom" in text
    assert "results original-failed" in text


def test_human_bytes():
    assert human_bytes(512) == "512 B"
    assert human_bytes(7.7 * 1024, signed=True) == "+7.7 KiB"
    assert human_bytes(16.5 * 2**30) == "16.5 GiB"


# -- the command line -------------------------------------------------------


def test_arguments_after_double_dash_go_to_the_script():
    opts = cli.parse_args(["train.py", "--steps", "5", "--select", "MEM1,MEM201", "--", "--steps", "9", "-x"])
    assert opts.steps == 5
    assert opts.select == ["MEM1", "MEM201"]
    assert opts.args == ("--steps", "9", "-x")


@pytest.mark.parametrize(
    "argv",
    [[], ["x.py", "--steps", "0"], ["x.py", "--device", "tpu"], ["x.py", "--timeout", "-1"], ["x.py", "--bogus"]],
)
def test_bad_arguments_exit_2(argv, capsys):
    assert cli.main(argv) == 2


def test_help_exits_0(capsys):
    assert cli.main(["--help"]) == 0
    assert "-- SCRIPT ARGS" in capsys.readouterr().out


def test_inputs_are_checked_before_anything_runs(tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    assert cli.main([str(tmp_path / "missing.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert cli.main([str(script), "--plot", str(tmp_path / "p.svg")]) == 2
    assert "PNG" in capsys.readouterr().err
    assert cli.main([str(script), "--plot", str(tmp_path / "nowhere" / "p.png")]) == 2
    assert "cannot write into" in capsys.readouterr().err
    assert cli.main([str(script), "--select", "NOPE9"]) == 2
    assert "no rule matches NOPE9" in capsys.readouterr().err
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n  import torch\n  x.backward()\n")
    assert cli.main([str(bad)]) == 2


def test_verify_cli_imports_without_torch():
    import subprocess

    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import memlint.verify.cli, memlint.verify.report, memlint.verify.outcome\n"
        "import memlint.verify.plot, memlint.verify.pytest_plugin\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_missing_torch_is_a_usage_error(tmp_path, capsys, monkeypatch):
    import importlib.util

    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    assert cli.main([str(script)]) == 2
    assert "needs torch" in capsys.readouterr().err


# -- meters, in this process ------------------------------------------------


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def test_storage_tracker_counts_storages_once_and_releases_them(torch):
    from memlint.verify.meters import StorageBytesMode

    with StorageBytesMode() as mode:
        a = torch.zeros(1000)
        assert mode.live == 4000
        view = a[10:20].view(2, 5)  # same storage
        assert mode.live == 4000
        b = a * 2
        assert mode.live == 8000
        del b
        assert mode.live == 4000
        assert mode.peak == 8000
        a.resize_(2000)
        assert mode.live == 8000
        mode.paused = True
        c = torch.ones(10_000)
        mode.paused = False
        assert mode.live == 8000
        d = torch.tensor([1.0, 2.0])  # made outside dispatch, handed over by lift_fresh
        assert mode.live == 8008
        del a, view, c, d
    assert mode.live == 0


@pytest.fixture
def allocator_bytes(torch):
    from memlint.verify.meters import AllocatorBytes

    if not AllocatorBytes.available():
        pytest.skip("this torch has no profiler memory events")
    return AllocatorBytes


def test_allocator_meter_counts_blocks_while_on_and_not_while_paused(torch, allocator_bytes):
    meter = allocator_bytes()
    with meter:
        a = torch.zeros(1000)
        assert meter.sample()[:2] == (4000, 4000)
        view = a[10:20].view(2, 5)  # no block of its own
        b = a * 2
        live, peak, _ = meter.sample()
        assert live >= 8000  # (a 0-d temporary for the 2 may come and go)
        del b
        assert meter.sample()[0] == 4000
        assert meter.sample()[1] >= 8000
        meter.reset_peak()
        assert meter.sample()[:2] == (4000, 4000)
        meter.paused = True
        c = torch.ones(10_000)  # the probe's own work
        meter.paused = False
        assert meter.sample()[:2] == (4000, 4000)
        d = torch.tensor([1.0, 2.0])  # made outside dispatch: the allocator still reports it
        assert meter.sample()[0] == 4008
        held = [torch.ones(250) for _ in range(4)]  # a growing list: 1000 bytes each
        assert meter.sample()[0] == 8008
        del a, view, c, d, held
        assert meter.sample()[0] == 0
    assert not torch._C._autograd._profiler_enabled()


def test_allocator_meter_keeps_kineto_off_the_scripts_stderr(torch, allocator_bytes, capfd):
    meter = allocator_bytes()
    with meter:
        for _ in range(3):
            x = torch.ones(100)
            meter.sample()
            del x
    err = capfd.readouterr().err
    assert "profiler_start" not in err and "profiler_stop" not in err


def test_allocator_meter_yields_to_the_scripts_own_profiler(torch, allocator_bytes):
    meter = allocator_bytes()
    with meter:
        x = torch.ones(100)
        assert meter.sample()[0] == 400
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            y = x * 3
        assert any(e.name == "aten::mul" for e in prof.events())  # the script's profiler worked
        assert meter.sample() == (None, None, None)  # and this meter says it no longer measures
        del x, y
    assert not torch._C._autograd._profiler_enabled()
    # Its patches are gone once it has stopped.
    from torch.autograd import profiler

    assert profiler._enable_profiler is torch._C._autograd._enable_profiler


def test_cpu_runs_meter_with_allocator_events_and_simulations_with_the_tracker(torch, allocator_bytes):
    from memlint.verify import bootstrap, meters

    assert type(bootstrap._tensor_meter(meters, "cpu")) is allocator_bytes
    assert type(bootstrap._tensor_meter(meters, "simulated-cpu")) is meters.StorageBytesMode
    assert type(bootstrap._tensor_meter(meters, "cuda")) is meters.CudaBytes


def test_graph_meter_sees_an_accumulator_and_ignores_detached_values(torch):
    from memlint.verify.meters import GraphNodes

    here = __file__
    meter = GraphNodes(lambda f: f == here)
    w = torch.ones(3, requires_grad=True)

    def loop(detach):
        total = 0
        counts = []
        for _ in range(5):
            loss = (w * 2).sum()
            loss.backward()
            total = total + (loss.detach() if detach else loss)
            counts.append(meter.sample())
        return counts

    leaky = loop(False)
    assert leaky[-1] > leaky[0] and len(set(b - a for a, b in zip(leaky, leaky[1:]))) == 1
    flat = loop(True)
    assert len(set(flat)) == 1


def test_graph_meter_does_not_keep_locals_alive(torch):
    from memlint.verify.meters import GraphNodes

    here = __file__
    meter = GraphNodes(lambda f: f == here)

    def body():
        t = torch.ones(3, requires_grad=True) * 2
        ref = weakref.ref(t)
        meter.sample()
        del t
        return ref

    assert body()() is None


def test_graph_meter_leaves_a_kept_locals_dict_alone(torch):
    from memlint.verify.meters import GraphNodes

    here = __file__
    meter = GraphNodes(lambda f: f == here)

    def body():
        t = torch.ones(3, requires_grad=True) * 2  # noqa: F841
        kept = locals()
        meter.sample()
        return kept

    assert "t" in body()


def test_heap_meter_reads_mallinfo2_on_glibc(torch):
    from memlint.verify.meters import HeapBytes

    heap = HeapBytes()
    if not heap.available:
        pytest.skip("no mallinfo2 here")
    before = heap.sample()
    block = bytearray(4 << 20)
    assert heap.sample() - before >= 4 << 20
    del block


def test_simulation_fakes_a_model_larger_than_memory(torch):
    from memlint.verify.meters import StorageBytesMode
    from memlint.verify.simulate import simulation

    tracker = StorageBytesMode()
    with simulation(), tracker:
        model = torch.nn.Sequential(torch.nn.Linear(16384, 16384), torch.nn.Linear(16384, 16384)).to("cuda")
        loss = model(torch.randn(8, 16384, device="cuda")).sum()
        loss.backward()
        assert loss.item() == 0.0
        assert float(loss.detach()) == 0.0
    # Two 1 GiB weights and their 1 GiB gradients, without the memory.
    assert tracker.peak > 4 * 2**30
    assert model[0].weight.device.type == "cpu"


def test_simulation_keeps_the_autograd_graph(torch):
    from memlint.verify.meters import GraphNodes
    from memlint.verify.simulate import simulation

    here = __file__
    meter = GraphNodes(lambda f: f == here)
    with simulation():
        model = torch.nn.Linear(64, 64)
        total = 0
        counts = []
        for _ in range(4):
            loss = model(torch.randn(2, 64)).sum()
            loss.backward()
            total = total + loss
            counts.append(meter.sample())
    assert counts[0] < counts[1] < counts[2] < counts[3]


def test_cuda_meter_reads_nothing_before_the_script_initialises_cuda(torch):
    from memlint.verify.meters import CudaBytes

    if torch.cuda.is_initialized():
        pytest.skip("CUDA already initialised in this process")
    meter = CudaBytes()
    assert meter.sample() == (0, 0, 0)
    meter.reset_peak()
    assert not torch.cuda.is_initialized()


def test_missing_matplotlib_is_a_clear_usage_error(tmp_path, capsys, monkeypatch):
    import importlib.util

    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    assert cli.main([str(script), "--plot", str(tmp_path / "p.png")]) == 2
    assert (
        "--plot needs matplotlib: pip install 'matplotlib>=3.5' (the `plot` extra; from a clone: pip install '.[plot]')"
        in capsys.readouterr().err
    )


def test_every_row_the_report_prints_is_defined_in_the_docs():
    """docs/verify.md's "Reading the table" defines each row label the human
    report can print ("transient" included)."""
    import re
    from pathlib import Path

    from memlint.verify.verdict import SEGMENT_LABELS

    docs = (Path(__file__).resolve().parent.parent / "docs" / "verify.md").read_text()
    defined = set(re.findall(r"^\| \*\*(.+?)\*\* \|", docs, re.M))
    orig, fixed = _raw(live=[1000 + 50 * i for i in range(20)]), _raw()
    for raw in (orig, fixed):
        raw["device"] = "cuda"
        raw["samples"]["tensor_reserved"] = [2 * 2**20] * 20
        raw["samples"]["tensor_peak"] = [v + 4096 for v in raw["samples"]["tensor_live"]]
        raw["tail"] = {"tensor_live": 900, "tensor_peak": 5000, "graph_nodes": 11, "heap": 10**8}
        raw["ended"] = "end"
    text = render_human(_outcome(orig, fixed))
    printed = set()
    for line in text.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) >= 2 and re.match(r"[\d.≈+-]", cells[1]) and not re.match(r"[\d.≈+-]", cells[0]):
            printed.add(cells[0])  # a row without a meter name
        elif len(cells) >= 3 and re.match(r"[\d.≈+-]", cells[2]):
            printed.add(cells[1])  # the meter's first row
    assert {"transient", "reserved", "growth", "peak, whole run", "held at end"} <= printed, text
    expected = printed | set(SEGMENT_LABELS.values()) | {"not measured"}
    assert expected <= defined, expected - defined
