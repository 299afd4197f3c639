"""memlint verify on the runnable fixtures (fixtures/verify/): real runs in
fresh processes on the CPU, verdicts asserted per meter.

The tests that make the twin with memlint's own fixes (no --fixed) depend on
the rules MEM101, MEM102 and MEM201 fixing these fixtures; the hand-written
twins beside them are what those fixes produce (checked first, statically).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from memlint.verify.cli import Options, verify  # noqa: E402
from memlint.verify.verdict import GRAPH, HEAP, START, TAIL, TENSOR, floor_for  # noqa: E402
from memlint.verify.verdict import STEPS as SEG_STEPS  # noqa: E402

pytestmark = pytest.mark.slow

VERIFY = Path(__file__).resolve().parent.parent / "fixtures" / "verify"
STEPS = 20


def _verify(script, **kwargs):
    kwargs.setdefault("steps", STEPS)
    kwargs.setdefault("device", "cpu")
    return verify(Options(script=str(VERIFY / script), **kwargs))


def _growth(run, meter):
    return run.meters[meter].growth_per_step


def _grows(run, meter):
    return _growth(run, meter) > floor_for(meter, "cpu")


@pytest.mark.parametrize(
    "name",
    [
        "mem101_epoch_loss",
        "mem102_stored_predictions",
        "mem201_validation_accumulates",
        "mem201_validation_peak",
        "tail_predict_after_training",
    ],
)
def test_hand_written_twins_are_what_memlint_fixes_produce(name):
    from memlint.fix.fixer import fix_text
    from memlint.read.source import read_source
    from memlint.rule.registry import select_rules

    source = read_source(str(VERIFY / f"{name}.py"))
    fixed = fix_text(source.text, source.path, select_rules())
    assert fixed.text == (VERIFY / f"{name}_fixed.py").read_text()


def test_mem101_graph_nodes_stop_growing(run_memlint, tmp_path):
    plot = tmp_path / "timeline.png"
    proc = run_memlint(
        "verify", VERIFY / "mem101_epoch_loss.py", "--device", "cpu", "--steps", STEPS, "--json", "--plot", plot
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert data["findings"] == ["MEM101"]
    orig, fixed = data["original"], data["fixed"]
    assert (orig["status"], fixed["status"]) == ("ok", "ok")
    assert orig["steps"] == fixed["steps"] == STEPS
    # `epoch_loss += loss` after backward: graph nodes and host heap grow,
    # tensor bytes do not (backward freed the saved tensors).
    assert orig["graph_nodes_growth_per_step"] >= 5
    assert fixed["graph_nodes_growth_per_step"] == 0
    assert orig["heap_growth_bytes_per_step"] > floor_for(HEAP, "cpu")
    assert fixed["heap_growth_bytes_per_step"] < floor_for(HEAP, "cpu")
    assert orig["growth_bytes_per_step"] == fixed["growth_bytes_per_step"] == 0
    assert data["verdict"] == {
        "memory": "dropped",
        "results": "identical",
        "meters": {
            "tensor_bytes": {"status": "unchanged", "reasons": []},
            "graph_nodes": {"status": "dropped", "reasons": ["stopped growing", "peak fell"]},
            "heap_bytes": {"status": "dropped", "reasons": ["stopped growing"]},
        },
        "results_detail": f"{STEPS} losses, {STEPS} parameter fingerprints, {STEPS} forward outputs: identical (bitwise)",
        "notes": [
            f"stopped at --steps {STEPS}: what the script does after that step (the tail) was not measured; "
            "a --steps above the script's own step count lets it run to its end"
        ],
    }
    assert orig["ended"] == "stopped" and "tail" not in orig["meters"]["graph_nodes"]["segments"]
    assert orig["losses"] == fixed["losses"] and len(orig["losses"]) == STEPS
    assert data["ok"] is True
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_mem102_stored_predictions_keep_tensors_but_no_graph():
    out = _verify("mem102_stored_predictions.py")
    assert [f.code for f in out.findings] == ["MEM102"]
    # The stored predictions are wanted, so tensor bytes grow in both runs;
    # their graphs are not, and stop growing.
    assert _grows(out.original, TENSOR) and _grows(out.fixed, TENSOR)
    assert _growth(out.original, TENSOR) == _growth(out.fixed, TENSOR)
    assert _grows(out.original, GRAPH) and _growth(out.fixed, GRAPH) == 0
    assert (out.memory, out.results, out.ok) == ("dropped", "identical", True)


def test_mem201_validation_stops_keeping_activations():
    out = _verify("mem201_validation_accumulates.py")
    assert "MEM201" in [f.code for f in out.findings]
    assert out.step_kind == "forward"
    # The running total held every batch's graph and its saved activations.
    assert _growth(out.original, TENSOR) > 100 * 1024
    assert _growth(out.fixed, TENSOR) == 0
    assert out.fixed.meters[TENSOR].peak < out.original.meters[TENSOR].peak / 2
    assert out.fixed.meters[GRAPH].peak == 0
    assert [v.status for v in out.meter_verdicts] == ["dropped", "dropped", "dropped"]
    assert (out.results, out.ok) == ("identical", True)
    assert out.results_detail.startswith(f"{STEPS} forward outputs: identical")


def test_mem201_without_accumulation_lowers_the_peak_only():
    out = _verify("mem201_validation_peak.py")
    assert [f.code for f in out.findings] == ["MEM201"]
    for run in (out.original, out.fixed):
        assert not any(_grows(run, m) for m in (TENSOR, GRAPH, HEAP))
    # The graph kept each batch's activations until the next forward.
    assert out.original.meters[TENSOR].peak - out.fixed.meters[TENSOR].peak > 1024 * 1024
    assert [(v.status, v.reasons) for v in out.meter_verdicts] == [
        ("dropped", ["peak fell"]),
        ("dropped", ["peak fell"]),
        ("unchanged", []),
    ]
    assert (out.memory, out.results, out.ok) == ("dropped", "identical", True)


def test_a_leak_after_the_last_step_is_measured_in_the_tail():
    # 16 training steps, then 32 predictions kept with their graphs.
    out = _verify("tail_predict_after_training.py")
    assert [f.code for f in out.findings] == ["MEM201", "MEM102"]
    o, f = out.original, out.fixed
    assert o.ended == f.ended == "end" and o.steps == f.steps == 16
    ot, ft = o.meters[TENSOR], f.meters[TENSOR]
    # The steps are the same in both runs: sampling at steps alone saw no leak.
    assert ot.segment(SEG_STEPS).peak == ft.segment(SEG_STEPS).peak
    assert ot.segment(START).peak == ft.segment(START).peak
    # The tail held every prediction's activations, and its graph.
    assert ot.segment(TAIL).peak > 3 * ft.segment(TAIL).peak
    assert ot.segment(TAIL).end > 3 * ft.segment(TAIL).end
    assert o.meters[GRAPH].segment(TAIL).end > 200 and f.meters[GRAPH].segment(TAIL).end < 20
    verdicts = {v.meter: v for v in out.meter_verdicts}
    assert verdicts[TENSOR].status == verdicts[GRAPH].status == "dropped"
    assert "holds less at the end" in verdicts[TENSOR].reasons
    assert (out.memory, out.results, out.ok) == ("dropped", "identical", True)
    assert out.results_detail == "16 losses, 16 parameter fingerprints, 48 forward outputs: identical (bitwise)"
    assert not any("tail" in note for note in out.notes)


def _verify_gloo(run_memlint, ranks):
    """``memlint verify --json`` of the total-loss DDP fixture under the
    launcher with ``ranks`` gloo processes on the CPU; its report."""
    proc = run_memlint(
        "verify",
        VERIFY / "ddp_total_loss.py",
        "--nproc-per-node",
        ranks,
        "--device",
        "cpu",
        "--steps",
        STEPS,
        "--timeout",
        240,
        "--json",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_two_gloo_ranks_under_the_launcher_with_a_total_loss_leak(run_memlint):
    data = _verify_gloo(run_memlint, 2)
    assert data["findings"] == ["MEM101"] and data["nproc_per_node"] == 2
    assert [r["rank"] for r in data["ranks"]] == [0, 1]
    for r in data["ranks"]:
        assert (r["original"]["rank"], r["fixed"]["rank"]) == (r["rank"], r["rank"])
        assert r["original"]["steps"] == r["fixed"]["steps"] == 16
        assert r["memory"] == "dropped" and r["meters"]["graph_nodes"]["status"] == "dropped"
        assert r["results"] == "identical"
        assert r["results_detail"] == "16 losses, 16 parameter fingerprints, 16 forward outputs: identical (bitwise)"
    # Each rank trained on its own data: different losses, both compared.
    assert data["ranks"][0]["original"]["losses"] != data["ranks"][1]["original"]["losses"]
    assert data["verdict"]["memory"] == "dropped" and data["verdict"]["results"] == "identical"
    assert data["verdict"]["results_detail"].startswith("per rank (2 ranks)")
    assert not any("init_process_group" in n for n in data["verdict"]["notes"])


def test_one_gloo_rank_under_the_launcher(run_memlint):
    # The script calls init_process_group from the launcher's environment:
    # with --nproc-per-node 1 both runs must reach their steps.
    data = _verify_gloo(run_memlint, 1)
    assert data["nproc_per_node"] == 1 and [r["rank"] for r in data["ranks"]] == [0]
    assert data["original"]["steps"] == data["fixed"]["steps"] == 16
    assert data["verdict"]["memory"] == "dropped" and data["verdict"]["results"] == "identical"


def test_clean_script_has_nothing_to_fix(run_memlint):
    proc = run_memlint("verify", VERIFY / "clean_training.py", "--device", "cpu", "--steps", STEPS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "memlint found nothing to fix; only the original was run" in proc.stdout
    assert proc.stdout.rstrip().endswith("OK nothing to fix")
    # and the run itself shows no growth on any meter
    assert "still grows" not in proc.stdout


def test_mem402_original_crashes_and_the_twin_runs(run_memlint):
    proc = run_memlint(
        "verify",
        VERIFY / "mem402_inplace_sigmoid.py",
        "--fixed",
        VERIFY / "mem402_inplace_sigmoid_fixed.py",
        "--device",
        "cpu",
        "--steps",
        STEPS,
        "--json",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert data["original"]["status"] == "error"
    assert "modified by an inplace operation" in data["original"]["error"]
    assert data["fixed"]["status"] == "ok" and data["fixed"]["steps"] == 16  # 512 samples, batches of 32
    assert data["verdict"]["results"] == "original-failed"
    assert data["verdict"]["memory"] == "not-compared"
    assert data["findings"] == ["MEM402"]
    assert data["ok"] is True


def test_changed_results_fail_and_script_arguments_reach_both_runs(tmp_path, run_memlint):
    body = (VERIFY / "clean_training.py").read_text()
    assert "lr=0.05" in body
    original = tmp_path / "train.py"
    original.write_text("import sys\n" + body.replace("lr=0.05", 'lr=float(sys.argv[sys.argv.index("--lr") + 1])'))
    twin = tmp_path / "train_twin.py"
    twin.write_text("import sys\n" + body.replace("lr=0.05", 'lr=2 * float(sys.argv[sys.argv.index("--lr") + 1])'))
    proc = run_memlint("verify", original, "--fixed", twin, "--device", "cpu", "--steps", 5, "--", "--lr", "0.05")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # Same first loss (same start), different from the second on.
    assert "results: loss 2 differs" in proc.stdout
    assert "results changed: the given twin computes different values" in proc.stdout
    assert proc.stdout.rstrip().endswith("FAILED memory unchanged, results changed: the fix did not hold up")


def test_a_run_that_outlives_its_timeout_is_stopped(tmp_path):
    script = tmp_path / "forever.py"
    script.write_text("import time\nwhile True:\n    time.sleep(0.1)\n")
    out = verify(Options(script=str(script), fixed=str(script), device="cpu", timeout=3))
    assert out.results == "both-failed" and not out.ok
    assert out.original.error == out.fixed.error == "timed out after 3 s (--timeout)"


def test_simulate_checks_a_model_larger_than_this_machine():
    out = _verify("large_mlp.py", simulate=True, steps=4)
    assert out.nothing_to_fix and out.ok
    run = out.original
    assert run.device == "simulated-cpu" and run.steps == 4
    # 1.07e9 float32 parameters, their gradients and AdamW's two moments
    # (16 GiB), and the foreach step's temporary (4 GiB): a real H100 run
    # peaked at 20.1 GiB (max_memory_allocated); within 2 % of it.
    assert abs(run.meters[TENSOR].peak - 20.1 * 2**30) < 0.02 * 20.1 * 2**30
    assert any(n.startswith("--simulate estimates, it does not measure") for n in out.notes)
    assert run.max_rss < 2 * 2**30
    assert _growth(run, TENSOR) == 0
    assert not run.meters[HEAP].measured


FAILS_AT_STEP_6 = """\
import torch

model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(20):
    optimizer.zero_grad()
    loss = model(torch.ones(2, 4)).sum()
    loss.backward()
    optimizer.step()
    torch.cuda.empty_cache()
    if step == 5:
        raise RuntimeError("the data loader broke at step 6")
"""


def test_a_script_that_fails_by_itself_in_both_runs_says_so(tmp_path, run_memlint):
    """Not "the fix did not hold up": the script fails without any fix, so
    nothing was compared; the exit status and the traceback's last lines say
    what happened."""
    script = tmp_path / "train.py"
    script.write_text(FAILS_AT_STEP_6)
    proc = run_memlint("verify", script, "--device", "cpu", "--steps", STEPS)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert "fixed MEM702 empty-cache-in-loop, line 10 (safe fix)" in out
    assert "the script failed in both runs, the same way (exit status 1):" in out
    assert 'raise RuntimeError("the data loader broke at step 6")' in out
    assert out.count("RuntimeError: the data loader broke at step 6") == 2  # the traceback's last line, the note
    assert "this says nothing about the fix" in out
    assert "the fix did not hold up" not in out
    assert out.rstrip().endswith(
        "FAILED the script failed in both runs (exit status 1): this says nothing about the fix"
    )
    data = json.loads(run_memlint("verify", script, "--device", "cpu", "--steps", STEPS, "--json").stdout)
    assert data["verdict"]["results"] == "both-failed" and data["ok"] is False
    assert data["original"]["exit_status"] == data["fixed"]["exit_status"] == 1
    assert any("says nothing about the fix" in n for n in data["verdict"]["notes"])


def test_an_unapplied_unsafe_fix_is_not_nothing_to_fix(tmp_path, run_memlint):
    """MEM202's fix is unsafe: without --unsafe-fixes nothing is fixed, and the
    verdict says why rather than "nothing to fix"."""
    script = tmp_path / "evaluate.py"
    script.write_text(
        textwrap.dedent(
            """\
            import torch
            import torch.nn.functional as F
            def val(net, data_loader):
                correct = 0
                for data, target in data_loader:
                    with torch.no_grad():
                        output = net(data)
                        correct += (output.argmax(1) == target).sum().item()
                return correct
            def train(net, optimizer, data_loader, val_loader, epochs):
                for e in range(epochs):
                    net.train()
                    for data, target in data_loader:
                        optimizer.zero_grad()
                        F.cross_entropy(net(data), target).backward()
                        optimizer.step()
                    val_acc = val(net, val_loader)
            net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Dropout(0.5))
            batches = [(torch.ones(2, 4), torch.tensor([0, 1]))] * 3
            train(net, torch.optim.SGD(net.parameters(), lr=0.1), batches, batches, 2)
            """
        )
    )
    lint = run_memlint("check", "--no-cache", "--select", "MEM202", script)
    assert "MEM202" in lint.stdout, lint.stdout
    proc = run_memlint("verify", script, "--device", "cpu", "--steps", STEPS)
    last = proc.stdout.rstrip().splitlines()[-1]
    assert last.startswith("OK no fix was applied, so nothing was compared: MEM202 has an unsafe fix"), proc.stdout
    assert "--unsafe-fixes" in last and "nothing to fix" not in last


def test_simulate_skips_torch_save_and_says_so(tmp_path, run_memlint):
    """Pickling a fake tensor fails; most training scripts save a checkpoint.
    Under --simulate the save writes nothing (no placeholder over a real
    checkpoint) and the report counts it."""
    script = tmp_path / "train.py"
    script.write_text(
        "import torch\n\nmodel = torch.nn.Linear(64, 64)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for step in range(3):\n    optimizer.zero_grad()\n    model(torch.ones(8, 64)).sum().backward()\n"
        "    optimizer.step()\n    torch.save(model.state_dict(), 'checkpoint.pt')\n"
    )
    proc = run_memlint("verify", script, "--simulate", "--steps", 10, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "the script called torch.save 3 times: under --simulate the tensors are fakes" in proc.stdout
    assert "Can't pickle" not in proc.stdout and "failed" not in proc.stdout
    assert not (tmp_path / "checkpoint.pt").exists()
