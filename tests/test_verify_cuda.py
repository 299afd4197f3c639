"""The CUDA tier: memlint verify on a GPU (``pytest -m cuda``).

Skipped, with the reason, where torch sees no CUDA device, so CI stays green
without one. The scripts in fixtures/verify/cuda/ pick the GPU when there is
one and the CPU otherwise; ``python bench/verify_cuda.py --device cpu`` runs
them on the CPU, ``--device cuda`` writes the tier's figures for
bench/README.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from memlint.verify.cli import Options, cuda_available, verify  # noqa: E402
from memlint.verify.verdict import CPU_TENSOR, GRAPH, STEPS, TAIL, TENSOR, floor_for  # noqa: E402

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.slow,
    pytest.mark.skipif(not cuda_available(), reason="no CUDA device: the CUDA tier needs a GPU that torch can use"),
]

pytest_plugins = ["pytester"]

VERIFY = Path(__file__).resolve().parent.parent / "fixtures" / "verify"
CUDA = VERIFY / "cuda"
STEPS_WANTED = 20
SAME = ("identical", "within-tolerance")


def _verify(script, **kwargs):
    kwargs.setdefault("steps", STEPS_WANTED)
    kwargs.setdefault("device", "cuda")
    return verify(Options(script=str(script), **kwargs))


def _status(out, meter):
    return next(v.status for v in out.meter_verdicts if v.meter == meter)


def test_validation_leak_keeps_activations_on_the_gpu():
    out = _verify(CUDA / "validation_leak.py")
    assert out.original.device == "cuda" and out.step_kind == "forward"
    o, f = out.original.meters[TENSOR], out.fixed.meters[TENSOR]
    # Each batch keeps 128 x (1024 + 1024 + ...) float32 activations.
    assert o.growth_per_step > 256 * 1024 and f.growth_per_step <= floor_for(TENSOR, "cuda")
    # A difference, not a ratio: on CUDA both runs also hold what the libraries
    # take through the allocator before the first step (33-65 MiB more than on the
    # CPU on an H200), which the fix does not touch.
    assert o.peak - f.peak > STEPS_WANTED // 2 * 2**20
    assert _status(out, TENSOR) == "dropped"
    assert out.memory == "dropped" and out.results in SAME and out.ok


def test_training_total_leak_grows_the_graph_not_the_gpu():
    out = _verify(CUDA / "training_total.py")
    assert [f.code for f in out.findings] == ["MEM101"]
    assert out.original.meters[GRAPH].growth_per_step >= 5 and out.fixed.meters[GRAPH].growth_per_step == 0
    assert _status(out, GRAPH) == "dropped"
    assert _status(out, TENSOR) in ("unchanged", "dropped")
    assert out.memory == "dropped" and out.results in SAME and out.ok


def test_predictions_kept_after_training_are_measured_in_the_tail():
    out = _verify(CUDA / "tail_predict.py")
    o, f = out.original, out.fixed
    assert o.ended == f.ended == "end" and o.steps == f.steps == 16
    ot, ft = o.meters[TENSOR], f.meters[TENSOR]
    assert abs(ot.segment(STEPS).peak - ft.segment(STEPS).peak) <= 64 * 1024
    # 32 batches of 256 predictions keep their graphs: tens of MiB on the CPU
    # and on the GPU alike; the runs' common base differs by device (see above).
    assert ot.segment(TAIL).peak - ft.segment(TAIL).peak > 32 * 2**20
    assert ot.segment(TAIL).end - ft.segment(TAIL).end > 32 * 2**20
    assert _status(out, TENSOR) == "dropped"
    assert out.memory == "dropped" and out.results in SAME and out.ok


def test_amp_training_with_a_total_leak():
    out = _verify(CUDA / "amp_training.py")
    assert [f.code for f in out.findings] == ["MEM101"]
    assert _status(out, GRAPH) == "dropped"
    assert out.memory == "dropped" and out.results in SAME and out.ok


def test_a_project_whose_leaks_are_fixed_in_a_helper_module():
    """fixtures/verify/cuda/project/: train.py is clean; the fixes lie in
    lib/engine.py (MEM201 known from train.py's call, two MEM101), reached by
    the twin's import overlay."""
    out = _verify(CUDA / "project" / "train.py")
    assert out.original.device == "cuda" and out.fixed_modules == ["lib/engine.py"]
    assert [(f.code, f.path) for f in out.findings] == [
        ("MEM101", "lib/engine.py"),
        ("MEM201", "lib/engine.py"),
        ("MEM101", "lib/engine.py"),
    ]
    o, f = out.original.meters[TENSOR], out.fixed.meters[TENSOR]
    # evaluate() kept 64 batches' activations (about 2 MiB each) until it returned.
    assert o.peak - f.peak > 32 * 2**20
    assert out.original.meters[GRAPH].peak > 10 * out.fixed.meters[GRAPH].peak
    assert _status(out, TENSOR) == "dropped"
    assert out.memory == "dropped" and out.results in SAME and out.ok


def test_clean_training_has_nothing_to_fix_and_does_not_grow():
    out = _verify(CUDA / "clean_training.py")
    assert out.nothing_to_fix and out.ok
    run = out.original
    assert run.device == "cuda" and run.meters[TENSOR].observed
    assert run.meters[TENSOR].growth_per_step <= floor_for(TENSOR, "cuda")
    assert not any("still grows" in n for n in out.notes)


def test_a_cpu_script_under_auto_is_measured_by_the_cpu_tracker():
    out = _verify(VERIFY / "mem101_epoch_loss.py", device="auto")
    assert out.original.device == "cuda"
    verdicts = {v.meter: v.status for v in out.meter_verdicts}
    assert verdicts[TENSOR] == "not-measured"
    assert CPU_TENSOR in verdicts and out.original.meters[CPU_TENSOR].observed
    assert verdicts[GRAPH] == "dropped"
    assert out.memory == "dropped" and out.results == "identical" and out.ok
    assert any("CUDA not measured" in n for n in out.notes)


def test_a_cpu_script_under_device_cuda_is_not_measured(run_memlint):
    proc = run_memlint("verify", VERIFY / "mem101_epoch_loss.py", "--device", "cuda", "--steps", STEPS_WANTED, "--json")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert data["verdict"]["memory"] == "not-measured"
    assert data["verdict"]["meters"]["tensor_bytes"]["status"] == "not-measured"
    assert data["original"]["meters"]["tensor_bytes"]["observed"] is False
    assert any(n.startswith("--device cuda: the CUDA allocator saw none") for n in data["verdict"]["notes"])
    assert data["ok"] is False


def test_the_pytest_plugin_verifies_on_the_gpu(pytester):
    script = CUDA / "training_total.py"
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.memlint_verify({str(script)!r}, steps=20)
        def test_marked(memlint_verify_outcome):
            assert memlint_verify_outcome.original.device == "cuda"
            assert memlint_verify_outcome.memory == "dropped"

        def test_fixture(memlint_verify):
            outcome = memlint_verify({str(CUDA / "clean_training.py")!r}, steps=20)
            assert outcome.nothing_to_fix
        """
    )
    result = pytester.runpytest_subprocess("--memlint-verify")
    result.assert_outcomes(passed=2)
