"""The scoring of bench/recall_real.py, on made-up instances (the real files are not in CI)."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "recall_real", Path(__file__).resolve().parent.parent / "bench" / "recall_real.py"
)
rr = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("recall_real", rr)  # dataclasses look their module up there
_SPEC.loader.exec_module(rr)


def inst(line, codes="MEM101", label="pos", family="accumulation", path="train.py"):
    first, last = rr.parse_lines(line)
    return rr.Instance(
        "manifest_t.tsv", "o/r", path, "c" * 40, "0" * 64, first, last, family, tuple(codes.split(",")), label, "why"
    )


def hit(line, code="MEM101", path="train.py"):
    return rr.Hit("o/r", path, line, code, "message")


def test_window_is_three_lines_either_side_of_the_span():
    pos = inst("10-12")
    assert rr.score([pos], [hit(7)], {}).found == {pos}
    assert rr.score([pos], [hit(15)], {}).found == {pos}
    result = rr.score([pos], [hit(6), hit(16)], {})
    assert result.found == set()
    assert len(result.unlabelled) == 2


def test_code_and_file_must_match():
    pos = inst("10", codes="MEM101,MEM102")
    assert rr.score([pos], [hit(10, "MEM102")], {}).found == {pos}
    result = rr.score([pos], [hit(10, "MEM201"), hit(10, path="other.py")], {})
    assert result.found == set()
    assert len(result.unlabelled) == 2


def test_finding_on_a_negative_is_a_false_alarm():
    neg = inst("20", label="neg")
    result = rr.score([neg], [hit(21)], {})
    assert [i for _, i in result.neg_hits] == [neg]
    row = {r["family"]: r for r in rr.table([neg], result)}["accumulation"]
    assert row["false_alarms"] == 1
    assert row["precision"] == 0.0


def test_nearest_instance_takes_the_finding_and_pos_wins_a_tie():
    pos, neg = inst("10"), inst("14", label="neg")
    result = rr.score([pos, neg], [hit(11), hit(13)], {})
    assert result.found == {pos}
    assert [i for _, i in result.neg_hits] == [neg]
    tie = rr.score([pos, inst("14", label="neg")], [hit(12)], {})
    assert tie.found == {pos} and not tie.neg_hits


def test_unlabelled_counts_as_false_alarm_unless_reviewed():
    pos = inst("10")
    findings = [hit(10), hit(50), hit(60)]
    review = {("o/r", "train.py", 50, "MEM101"): "TP"}
    result = rr.score([pos], findings, review)
    assert [h.line for h in result.after_tp] == [50]
    assert [h.line for h in result.unlabelled] == [60]
    overall = rr.table([pos], result)[-1]
    assert overall["family"] == "overall"
    assert (overall["positives"], overall["found"], overall["false_alarms"]) == (1, 1, 1)
    assert overall["precision"] == pytest.approx(2 / 3)
    reviewed_fp = rr.score([pos], findings, {("o/r", "train.py", 60, "MEM101"): "FP"})
    assert [h.line for h in reviewed_fp.after_fp] == [60]
    assert rr.table([pos], reviewed_fp)[-1]["false_alarms"] == 2


def test_recall_per_family_and_misses():
    a, b = inst("10"), inst("30", codes="MEM201", family="eval-no-grad")
    rows = {r["family"]: r for r in rr.table([a, b], rr.score([a, b], [hit(10)], {}))}
    assert rows["accumulation"]["recall"] == 1.0
    assert rows["eval-no-grad"]["recall"] == 0.0
    assert rows["overall"]["recall"] == 0.5


def test_manifest_and_saved_files(tmp_path):
    body = b"x = 1\n"
    saved = tmp_path / "files" / "o__r" / "sub" / "a.py"
    saved.parent.mkdir(parents=True)
    saved.write_bytes(body)
    digest = hashlib.sha256(body).hexdigest()
    rows = [
        "\t".join(rr.HEADER),
        f"o/r\tsub/a.py\t{'c' * 40}\t{digest}\t3-5\taccumulation\tMEM101, mem102\tpos\tlabelled",
        f"o/r\tgone.py\t{'c' * 40}\t{digest}\t1\teval-no-grad\tMEM201\tneg\tlook-alike",
        f"o/s\tb.py\tunknown\t{'f' * 64}\t2\tretain-graph\tMEM103\tpos\tchanged",
    ]
    (tmp_path / "manifest_t.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    other = tmp_path / "files" / "o__s" / "b.py"
    other.parent.mkdir(parents=True)
    other.write_bytes(b"different\n")
    instances = rr.load_manifests(tmp_path)
    assert instances[0].codes == ("MEM101", "MEM102")
    assert (instances[0].first, instances[0].last) == (3, 5)
    present, missing, changed, usable = rr.check_files(instances, tmp_path / "files")
    assert list(present) == [("o/r", "sub/a.py")]
    assert [i.path for i in missing] == ["gone.py"]
    assert [i.path for i in changed] == ["b.py"]
    assert [i.path for i in usable] == ["sub/a.py"]
    assert rr.raw_url(instances[1]) == f"https://raw.githubusercontent.com/o/r/{'c' * 40}/gone.py"
    spaced = dataclasses.replace(instances[1], path="Char09 SAC/SAC.py")
    assert rr.raw_url(spaced).endswith("/Char09%20SAC/SAC.py")  # urllib refuses a raw space


def test_two_versions_of_one_path_only_the_saved_one_is_scored(tmp_path):
    saved = tmp_path / "files" / "o__r" / "t.py"
    saved.parent.mkdir(parents=True)
    saved.write_bytes(b"new\n")
    new, old = hashlib.sha256(b"new\n").hexdigest(), hashlib.sha256(b"old\n").hexdigest()
    rows = [
        "\t".join(rr.HEADER),
        f"o/r\tt.py\t{'a' * 40}\t{old}\t1\tinplace\tMEM404\tpos\tlabelled on the old version",
        f"o/r\tt.py\t{'b' * 40}\t{new}\t1\taccumulation\tMEM101\tneg\tlabelled on the new version",
    ]
    (tmp_path / "manifest_t.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    present, missing, changed, usable = rr.check_files(rr.load_manifests(tmp_path), tmp_path / "files")
    assert list(present) == [("o/r", "t.py")] and not missing
    assert [i.family for i in changed] == ["inplace"]
    assert [i.family for i in usable] == ["accumulation"]


@pytest.mark.parametrize("text", ["0", "5-3", "x"])
def test_bad_line_spec_is_refused(text):
    with pytest.raises(ValueError):
        rr.parse_lines(text)


TRAIN = b"""import torch


def train(model, loader, optimizer, criterion):
    total = 0
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss
    print(total / len(loader))
"""


def test_main_lints_saved_files_in_process(tmp_path):
    saved = tmp_path / "files" / "o__r" / "train.py"
    saved.parent.mkdir(parents=True)
    saved.write_bytes(TRAIN)
    digest = hashlib.sha256(TRAIN).hexdigest()
    rows = [
        "\t".join(rr.HEADER),
        f"o/r\ttrain.py\t{'c' * 40}\t{digest}\t11\taccumulation\tMEM101\tpos\tloss summed with history",
    ]
    (tmp_path / "manifest_t.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "out.json"
    assert rr.main(["--folder", str(tmp_path), "--json", str(out)]) == 0
    overall = json.loads(out.read_text())["table"][-1]
    assert (overall["positives"], overall["found"]) == (1, 1)
    saved.unlink()
    assert rr.main(["--folder", str(tmp_path)]) == 1  # a missing copy is reported, not scored
