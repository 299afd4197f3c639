"""memlint verify's segments (start, steps, tail), meters that saw nothing,
and ranks: verdicts decided from hand-made measurements, no torch needed."""

from __future__ import annotations

import json

from memlint.verify import cli
from memlint.verify.outcome import Outcome, RankOutcome, RunSummary, decide
from memlint.verify.report import render_human, render_json
from memlint.verify.twin import FixedFinding
from memlint.verify.verdict import CPU_TENSOR, START, STEPS, TAIL, TENSOR, MeterStats

N = 20


def _raw(
    live=None,
    peaks=None,
    tail=None,
    device="cpu",
    cpu=None,
    ended="stopped",
    nodes=None,
    losses=(1.0, 0.5),
    rank=0,
    pg=True,
):
    live = live or [1000] * N
    raw = {
        "status": "ok",
        "error": None,
        "device": device,
        "steps": N,
        "step_kind": "optimizer",
        "reached_steps": ended == "stopped",
        "ended": ended,
        "samples": {
            "tensor_live": live,
            "tensor_peak": peaks or [v + 10 for v in live],
            "tensor_reserved": [None] * N,
            "graph_nodes": nodes or [11] * N,
            "heap": [10**8] * N,
        },
        "tail": tail,
        "losses": list(losses),
        "params": [],
        "outputs": [],
        "wall_s": 1.5,
        "rank": rank,
        "process_group": pg,
    }
    if cpu is not None:
        raw["samples"]["cpu_live"] = cpu
        raw["samples"]["cpu_peak"] = [v + 10 for v in cpu]
    return raw


def _outcome(orig, fixed, device="cpu"):
    return decide(
        Outcome(
            script="train.py",
            fixed_script=None,
            device=device,
            steps_requested=N,
            findings=[FixedFinding("MEM201", "name", 3, "safe", "m")],
            original=RunSummary.from_raw(orig),
            fixed=RunSummary.from_raw(fixed),
        )
    )


def _tail(live, peak, nodes=11):
    return {"tensor_live": live, "tensor_peak": peak, "tensor_reserved": None, "graph_nodes": nodes, "heap": 10**8}


# -- segments ---------------------------------------------------------------


def test_segments_split_the_run_at_the_first_and_last_step():
    stats = MeterStats.from_samples(
        TENSOR, [100, 200, 200, 200], [5000, 300, 400, 250], tail=900, tail_peak=1200, head_peak=7000
    )
    assert stats.segment(START).peak == 7000 and stats.segment(START).end == 100
    assert stats.segment(STEPS).peak == 400 and stats.segment(STEPS).end == 200
    assert stats.segment(TAIL).peak == 1200 and stats.segment(TAIL).end == 900
    assert stats.peak == 7000  # the whole run's


def test_a_leak_after_the_last_step_is_a_drop_that_the_steps_never_showed():
    orig = _raw(ended="end", tail=_tail(6_000_000, 6_500_000, nodes=300))
    fixed = _raw(ended="end", tail=_tail(1_500_000, 1_600_000))
    out = _outcome(orig, fixed)
    tensor = next(v for v in out.meter_verdicts if v.meter == TENSOR)
    assert tensor.status == "dropped"
    assert tensor.reasons == ["peak fell", "holds less at the end"]
    assert (out.memory, out.ok) == ("dropped", True)
    # Without the tail, the same runs compare as equal.
    out = _outcome(_raw(), _raw())
    assert out.memory == "unchanged"


def test_a_fix_that_moves_memory_into_the_tail_is_an_increase_even_under_a_higher_steps_peak():
    steps_peak = [50_000_000] * N
    orig = _raw(peaks=steps_peak, ended="end", tail=_tail(1000, 1_000_000))
    fixed = _raw(peaks=steps_peak, ended="end", tail=_tail(1000, 9_000_000))
    out = _outcome(orig, fixed)
    tensor = next(v for v in out.meter_verdicts if v.meter == TENSOR)
    assert tensor.status == "increased" and "peak rose in last step→end" in tensor.reasons
    assert (out.memory, out.ok) == ("increased", False)


def test_a_run_stopped_at_steps_says_its_tail_was_not_measured():
    out = _outcome(_raw(), _raw())
    assert any("the tail) was not measured" in n for n in out.notes)
    text = render_human(out)
    assert "not reached" in text
    out = _outcome(_raw(ended="end", tail=_tail(1000, 1010)), _raw(ended="end", tail=_tail(1000, 1010)))
    assert not any("tail" in n for n in out.notes)


def test_json_shows_each_segment():
    out = _outcome(_raw(ended="end", tail=_tail(6_000_000, 6_500_000)), _raw(ended="end", tail=_tail(1000, 1010)))
    data = json.loads(render_json(out))
    segments = data["original"]["meters"]["tensor_bytes"]["segments"]
    assert set(segments) == {"start", "steps", "tail"}
    assert segments["tail"] == {"peak": 6_500_000, "end": 6_000_000}
    assert data["original"]["ended"] == "end"
    assert data["original"]["meters"]["tensor_bytes"]["observed"] is True
    assert data["nproc_per_node"] == 1 and data["ranks"] == []


# -- meters that saw nothing ------------------------------------------------


def test_auto_on_cuda_with_a_cpu_script_uses_the_cpu_tracker_and_says_cuda_saw_nothing():
    zeros = [0] * N
    orig = _raw(live=zeros, peaks=zeros, device="cuda", cpu=[10_000 + 300_000 * i for i in range(N)])
    fixed = _raw(live=zeros, peaks=zeros, device="cuda", cpu=[10_000] * N)
    out = _outcome(orig, fixed, device="auto")
    by = {v.meter: v for v in out.meter_verdicts}
    assert by[TENSOR].status == "not-measured"
    assert by[CPU_TENSOR].status == "dropped"
    assert out.memory == "dropped" and out.ok
    assert any("CUDA not measured" in n for n in out.notes)
    text = render_human(out)
    assert "CUDA tensor bytes" in text and "not measured: saw none of the script's allocations" in text
    assert "CPU tensor bytes" in text


def test_a_meter_that_saw_nothing_never_says_unchanged():
    zeros = [0] * N
    out = _outcome(
        _raw(live=zeros, peaks=zeros, device="cuda"), _raw(live=zeros, peaks=zeros, device="cuda"), device="cuda"
    )
    by = {v.meter: v for v in out.meter_verdicts}
    assert by[TENSOR].status == "not-measured"
    assert out.memory == "not-measured" and not out.ok
    assert any(n.startswith("--device cuda: the CUDA allocator saw none") for n in out.notes)


def test_not_measured_has_its_own_exit_status(monkeypatch, tmp_path, capsys):
    zeros = [0] * N
    out = _outcome(
        _raw(live=zeros, peaks=zeros, device="cuda"), _raw(live=zeros, peaks=zeros, device="cuda"), device="cuda"
    )
    monkeypatch.setattr(cli, "verify", lambda options: out)
    assert cli.main(["train.py", "--device", "cuda"]) == cli.EXIT_NOT_MEASURED == 3
    assert "memory not-measured" in capsys.readouterr().out


# -- ranks --------------------------------------------------------------------


def _ranked(pairs, findings=("MEM101",)):
    ranks = [
        RankOutcome(rank=i, original=RunSummary.from_raw(a), fixed=RunSummary.from_raw(b))
        for i, (a, b) in enumerate(pairs)
    ]
    return decide(
        Outcome(
            script="train.py",
            fixed_script=None,
            device="cpu",
            steps_requested=N,
            findings=[FixedFinding(c, "name", 3, "safe", "m") for c in findings],
            original=ranks[0].original,
            fixed=ranks[0].fixed,
            ranks=ranks,
        )
    )


def test_the_report_shows_the_worst_rank_and_judges_every_rank():
    leak = [11 + 8 * i for i in range(N)]
    small = _raw(rank=0)
    big = _raw(rank=1, live=[5000] * N, nodes=leak)
    out = _ranked([(small, _raw(rank=0)), (big, _raw(rank=1, live=[5000] * N))])
    assert out.original.rank == 1  # the rank that held the most
    assert [(r.memory, r.results) for r in out.ranks] == [("unchanged", "identical"), ("dropped", "identical")]
    assert (out.memory, out.results, out.ok) == ("dropped", "identical", True)
    assert out.results_detail.startswith("per rank (2 ranks)")
    data = json.loads(render_json(out))
    assert data["nproc_per_node"] == 2 and [r["rank"] for r in data["ranks"]] == [0, 1]
    assert "rank 1: memory dropped, results identical" in render_human(out)


def test_results_are_compared_per_rank():
    out = _ranked([(_raw(rank=0), _raw(rank=0)), (_raw(rank=1), _raw(rank=1, losses=(1.0, 0.75)))])
    assert (out.results, out.ok) == ("changed", False)
    assert out.results_detail.startswith("rank 1: loss 2 differs")


def test_a_script_without_a_process_group_is_told_so():
    out = _ranked([(_raw(rank=0, pg=False), _raw(rank=0, pg=False)), (_raw(rank=1, pg=False), _raw(rank=1, pg=False))])
    assert any("never called torch.distributed.init_process_group" in n for n in out.notes)
    out = _ranked([(_raw(rank=0), _raw(rank=0)), (_raw(rank=1), _raw(rank=1))])
    assert not any("init_process_group" in n for n in out.notes)


def test_launcher_flags_memlint_owns_are_refused(capsys):
    assert cli.main(["train.py", "--nproc-per-node", "2", "--launcher-arg=--nproc-per-node=4"]) == cli.EXIT_USAGE
    assert "memlint sets --nproc-per-node=4 itself" in capsys.readouterr().err
    assert cli.main(["train.py", "--launcher-arg=--max-restarts=0"]) == cli.EXIT_USAGE


def test_one_process_per_node_still_goes_through_the_launcher(tmp_path):
    # A DDP script reads RANK and the rendezvous from the launcher's
    # environment: --nproc-per-node 1 must launch, only no flag runs it plain.
    from memlint.verify.runner import RunSpec, command

    plain = RunSpec(label="original", script="t.py", script_dir=".")
    assert not plain.distributed and "torch.distributed.run" not in command(plain, tmp_path / "c.json", tmp_path)
    one = RunSpec(label="original", script="t.py", script_dir=".", nproc_per_node=1)
    assert one.distributed
    assert command(one, tmp_path / "c.json", tmp_path)[1:5] == [
        "-m",
        "torch.distributed.run",
        "--nproc-per-node=1",
        "--standalone",
    ]
    assert cli.parse_args(["train.py"]).nproc_per_node == 0
    assert cli.parse_args(["train.py", "--nproc-per-node", "1"]).nproc_per_node == 1
    assert cli.main(["train.py", "--nproc-per-node", "0"]) == cli.EXIT_USAGE


def test_the_launcher_command_adds_a_private_rendezvous_unless_one_is_given(tmp_path):
    from memlint.verify.runner import RunSpec, command

    spec = RunSpec(label="original", script="t.py", script_dir=".", nproc_per_node=2)
    cmd = command(spec, tmp_path / "c.json", tmp_path)
    assert cmd[1:5] == ["-m", "torch.distributed.run", "--nproc-per-node=2", "--standalone"]
    spec.launcher_args = ["--master-port=29611", "--max-restarts=0"]
    cmd = command(spec, tmp_path / "c.json", tmp_path)
    assert "--standalone" not in cmd and cmd[4:6] == ["--master-port=29611", "--max-restarts=0"]
    assert cmd[-1] == str(tmp_path / "c.json")


def test_a_single_run_that_cuda_never_saw_is_not_measured_either():
    zeros = [0] * N
    out = decide(
        Outcome(
            script="train.py",
            fixed_script=None,
            device="cuda",
            steps_requested=N,
            findings=[],
            original=RunSummary.from_raw(_raw(live=zeros, peaks=zeros, device="cuda")),
            fixed=None,
        )
    )
    assert out.nothing_to_fix and out.memory == "not-measured" and not out.ok
    assert render_human(out).rstrip().endswith("FAILED nothing to fix; memory not measured")
    assert any(n.startswith("--device cuda: the CUDA allocator saw none") for n in out.notes)
    cpu = [10_000] * N
    out = decide(
        Outcome(
            script="train.py",
            fixed_script=None,
            device="auto",
            steps_requested=N,
            findings=[],
            original=RunSummary.from_raw(_raw(live=zeros, peaks=zeros, device="cuda", cpu=cpu)),
            fixed=None,
        )
    )
    assert out.memory == "unchanged" and out.ok
    assert any("CUDA not measured" in n for n in out.notes)
