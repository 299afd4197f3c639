"""Cross-module recall: whole training projects, each checked as one tree.

    python bench/cross_module.py                    # default rules, every project
    python bench/cross_module.py --markdown
    python bench/cross_module.py --json out.json
    python bench/cross_module.py --mirror /work/.mirror   # recreate missing trees from git mirrors
    python bench/cross_module.py --fetch            # recreate missing trees with git over the network
    python bench/cross_module.py --batch unseen --fetch   # the second, unseen batch (its own labels and trees)
    python bench/cross_module.py --batch fresh --mirror /work/.mirror   # the third batch
    python bench/cross_module.py --batch fourth --mirror /work/.mirror  # the fourth batch
    python bench/cross_module.py --batch fifth --mirror /work/.mirror   # the fifth batch
    python bench/cross_module.py --batch sixth --mirror /work/.mirror   # the sixth batch
    python bench/cross_module.py --batch seventh --mirror /work/.mirror # the seventh batch
    python bench/cross_module.py --batch eighth --mirror /work/.mirror  # the eighth batch
    python bench/cross_module.py --batch ninth --mirror /work/.mirror   # the ninth batch
    python bench/cross_module.py --batch tenth --mirror /work/.mirror   # the tenth batch
    python bench/cross_module.py --batch eleventh --mirror /work/.mirror # the eleventh batch
    python bench/cross_module.py --batch twelfth --mirror /work/.mirror  # the twelfth batch
    python bench/cross_module.py --batch thirteenth --mirror /work/.mirror # the thirteenth batch
    python bench/cross_module.py --batch fourteenth --mirror /work/.mirror # the fourteenth batch
    python bench/cross_module.py --batch fifteenth --mirror /work/.mirror  # the fifteenth batch
    python bench/cross_module.py --batch sixteenth --mirror /work/.mirror  # the sixteenth batch
    python bench/cross_module.py --batch seventeenth --mirror /work/.mirror # the seventeenth batch
    python bench/cross_module.py --batch eighteenth --mirror /work/.mirror  # the eighteenth batch
    python bench/cross_module.py --batch nineteenth --mirror /work/.mirror  # the nineteenth batch
    python bench/cross_module.py --batch twentieth --mirror /work/.mirror   # the twentieth batch
    python bench/cross_module.py --batch twentyfirst --mirror /work/.mirror # the twenty-first batch
    python bench/cross_module.py --batch twentysecond --mirror /work/.mirror # the twenty-second batch
    python bench/cross_module.py --batch twentythird --mirror /work/.mirror  # the twenty-third batch
    python bench/cross_module.py --batch twentyfourth --mirror /work/.mirror  # the twenty-fourth batch
    python bench/cross_module.py --batch twentyfifth --mirror /work/.mirror  # the twenty-fifth batch, labelled last

`cross_module/manifest.tsv` lists instances labelled by reading public,
multi-file PyTorch training projects BEFORE memlint ran on them: a place
where a rule should fire (`pos`) or a deliberate look-alike where it must stay
silent (`neg`), and whether the fact that decides it lives in another module
of the project (`cross_module` yes/no: the caller's `no_grad`, a helper
defined elsewhere, `torch` arriving through a star import, a tracker class
from another module...). Columns: repo, commit, path, line (a line or a range
`a-b`), codes (comma-separated), label, cross_module, why. The family of an
instance is the hundred of its first code (MEM2xx -> grad-mode).

The projects are never committed. Each lives, as exported at the pinned
commit (its `.py` files and the pin files memlint reads: pyproject.toml /
setup.py / setup.cfg / requirements*.txt / requirements/*.txt /
conda environment files: environment*.yml, conda*.yml, *env*.yml, nothing else), in the git-ignored
`bench/.corpora/cross_module/<owner>__<repo>/`, with a `.commit` file naming
the commit. A missing tree is recreated from a local git mirror
(`--mirror DIR`, holding `DIR/<owner>+<repo>/repo` as a bare or normal git
directory that contains the commit, e.g. what this workplace's `fetch` tool
leaves under /work/.mirror) or, with `--fetch`, by `git fetch` of that one
commit from github.com. A folder that is already there is used as it is (a
`.commit` naming another commit is reported and the project skipped). What
is still missing is listed with its repo and commit.

memlint runs as a user would run it: the real CLI,
`memlint check --output-format json --no-cache --exit-zero <tree>`, once per
project, on the whole tree. Scoring, as bench/recall_real.py:

- a finding matches an instance when it is in the same file, its code is one
  of the instance's codes, and its line lies within the instance's line or
  range widened by WINDOW lines each side; when several instances match, the
  nearest one takes the finding (a `pos` wins a tie);
- a finding on a helper whose message names its callers ("called with
  autograd on from train.py:58") also matches an instance at a named caller's
  line (widened the same way) when nothing in its own file matches: the
  label sits on the caller's loop, the finding on the helper it runs;
- a `pos` instance is found when at least one finding matches it; a finding
  that matches a `neg` instance is a false alarm;
- a finding that matches nothing is "unlabelled": listed for a person to
  judge and counted as a false alarm of the overall row, unless
  `cross_module/reviewed_after.tsv` (repo, path, line, code, verdict TP/FP,
  cross_module yes/no/empty, why) holds a verdict given after the run; those
  are reported separately as labelled-after, and count in the same-file or
  cross-module row when their cross_module column says which.

Labels are never edited after a run. `cross_module/label_decisions.tsv` lists
the corrections found since (label errors, with the evidence, and the label
questions decided once for every batch); the table as labelled comes first,
then the batch read with its corrections. A correction that no longer matches
its manifest or verdict stops the run.

Rows: overall, same-file (cross_module no), cross-module (cross_module yes),
and one per family. recall = found / positives; precision = (found +
labelled-after TP) / (that + false alarms). The exit status is 0 (a
measurement), or 1 when a project is missing or not analysed.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
# A finding keyed by (repo, path), and a manifest's line or range: recall_real's, scored the same way.
from recall_real import Hit, parse_lines  # noqa: E402

from memlint.find.torch_floor import is_environment_file  # noqa: E402

HERE = BENCH / "cross_module"
DECISIONS = HERE / "label_decisions.tsv"
TREES = BENCH / ".corpora" / "cross_module"

# Each batch keeps its own labels, verdicts and trees, so a batch added later
# never moves the figures of an earlier one. "first": the 19 projects the
# yardstick was built on; "unseen": 26 projects labelled later, never looked at
# while memlint's project stage was written (the check of issue 29's "unseen
# whole repositories" line).
BATCHES = {
    "first": (HERE / "manifest.tsv", HERE / "reviewed_after.tsv", TREES),
    "unseen": (
        HERE / "manifest_unseen.tsv",
        HERE / "reviewed_after_unseen.tsv",
        BENCH / ".corpora" / "cross_module_unseen",
    ),
    # "fresh": a third batch labelled after the first two had been used to tune
    # memlint, so that its first-sight figure is not flattered by that tuning.
    "fresh": (
        HERE / "manifest_fresh.tsv",
        HERE / "reviewed_after_fresh.tsv",
        BENCH / ".corpora" / "cross_module_fresh",
    ),
    # "fourth": labelled after all three earlier batches had been used to tune
    # memlint, weighted towards instances whose evidence is in another module.
    "fourth": (
        HERE / "manifest_fourth.tsv",
        HERE / "reviewed_after_fourth.tsv",
        BENCH / ".corpora" / "cross_module_fourth",
    ),
    # "fifth": labelled after the first four had been used to tune memlint;
    # famous research code first, where a false alarm costs the most trust.
    "fifth": (
        HERE / "manifest_fifth.tsv",
        HERE / "reviewed_after_fifth.tsv",
        BENCH / ".corpora" / "cross_module_fifth",
    ),
    # "sixth": labelled after the first five had been used to tune memlint;
    # research code, GNN/skeleton/video/flow/time-series/RL projects, chosen by kind.
    "sixth": (
        HERE / "manifest_sixth.tsv",
        HERE / "reviewed_after_sixth.tsv",
        BENCH / ".corpora" / "cross_module_sixth",
    ),
    # "seventh": labelled after the first six had been used to tune memlint;
    # chosen by kind (research, course, detection, segmentation, GAN, diffusion,
    # NLP, RL, speech, self-supervised, graph, recommendation, time series, 3D),
    # each project's torch pin read before labelling the migration rules.
    "seventh": (
        HERE / "manifest_seventh.tsv",
        HERE / "reviewed_after_seventh.tsv",
        BENCH / ".corpora" / "cross_module_seventh",
    ),
    # "eighth": labelled after the first seven had been used to tune memlint;
    # fields the earlier batches lack (federated, continual and meta-learning,
    # video, pose, OCR, tracking, point clouds, NeRF, medical, audio), famous
    # research code first, each project's torch pin read before labelling.
    "eighth": (
        HERE / "manifest_eighth.tsv",
        HERE / "reviewed_after_eighth.tsv",
        BENCH / ".corpora" / "cross_module_eighth",
    ),
    # "ninth": labelled after the first eight had been used to tune memlint;
    # fields the earlier batches lack (depth, few-shot, NAS, anomaly
    # detection, style transfer, super-resolution, weakly-supervised
    # segmentation, distillation, speech, VQA, time series), famous research
    # code first, each project's torch pin read before labelling.
    "ninth": (
        HERE / "manifest_ninth.tsv",
        HERE / "reviewed_after_ninth.tsv",
        BENCH / ".corpora" / "cross_module_ninth",
    ),
    # "tenth": labelled after the first nine had been used to tune memlint;
    # fields they cover thinly (point clouds and 3D registration, medical
    # imaging, video, graphs, recommendation, multi-agent RL, audio tagging,
    # OCR, metric learning, CLIP training, clustering, pruning, continual
    # learning, stereo), each project's torch pin read before labelling.
    "tenth": (
        HERE / "manifest_tenth.tsv",
        HERE / "reviewed_after_tenth.tsv",
        BENCH / ".corpora" / "cross_module_tenth",
    ),
    # "eleventh": labelled after the first ten had been used to tune memlint;
    # famous research code in fields none of them covers (re-identification,
    # crowd counting, lanes, trajectories, captioning, speech enhancement,
    # retrieval, molecules, proteins, weather, ODEs, pose, landmarks, optical
    # flow, LLM adapters, offline RL, speaker verification, lip sync,
    # restoration, music), each project's torch pin read before labelling.
    "eleventh": (
        HERE / "manifest_eleventh.tsv",
        HERE / "reviewed_after_eleventh.tsv",
        BENCH / ".corpora" / "cross_module_eleventh",
    ),
    # "twelfth": labelled after the first eleven had been used to tune
    # memlint; famous research code in fields none of them covers (VQA, video
    # prediction, sequential recommendation, link prediction, active
    # learning, sign language, domain adaptation, distillation, anomaly
    # detection, tabular, adversarial training, semi-supervised learning,
    # inpainting, text recognition, depth, NeRF, TTS, vocoders), each
    # project's torch pin read before labelling.
    "twelfth": (
        HERE / "manifest_twelfth.tsv",
        HERE / "reviewed_after_twelfth.tsv",
        BENCH / ".corpora" / "cross_module_twelfth",
    ),
    # "thirteenth": labelled after the first twelve had been used to tune
    # memlint; famous research code in fields none of them covers (flows,
    # VAEs, 6D pose, point-cloud completion, GAN inversion, music, knowledge
    # tracing, meta-learning, weak supervision, hashing, domain
    # generalisation, video segmentation, matting, registration, pixel RL,
    # OOD detection, capsules, NAS, federated learning, tracking), each
    # project's torch pin read before labelling.
    "thirteenth": (
        HERE / "manifest_thirteenth.tsv",
        HERE / "reviewed_after_thirteenth.tsv",
        BENCH / ".corpora" / "cross_module_thirteenth",
    ),
    # "fourteenth": labelled after the first thirteen had been used to tune
    # memlint; research code in fields none of them covers (speech
    # recognition, source separation, summarisation, KG embeddings,
    # imputation, VQ-VAE-2, face recognition, world models, change
    # detection, quantisation-aware training, event cameras, QA, offline RL,
    # score-based and energy-based models), torch pins read first.
    "fourteenth": (
        HERE / "manifest_fourteenth.tsv",
        HERE / "reviewed_after_fourteenth.tsv",
        BENCH / ".corpora" / "cross_module_fourteenth",
    ),
    # "fifteenth": labelled after the first fourteen had been used to tune
    # memlint, picked for cross-module facts (trainer, evaluation, checkpoint
    # and meter code in separate modules): super-resolution, long-tailed and
    # noisy-label learning, text-to-image GANs, saliency and edge detection,
    # vision-language pretraining, grounding, speech separation and
    # recognition, NER, sentiment, unsupervised MT, LoRA, human parsing, 3D
    # detection, colorisation, few-shot; torch pins read first.
    "fifteenth": (
        HERE / "manifest_fifteenth.tsv",
        HERE / "reviewed_after_fifteenth.tsv",
        BENCH / ".corpora" / "cross_module_fifteenth",
    ),
    # "sixteenth": labelled after the first fifteen had been used to tune
    # memlint, picked for cross-module facts in fields they cover thinly:
    # 3D human mesh and hand-object recovery, grounding, temporal action
    # localisation, music transcription, audio-visual separation, graph
    # generation, histopathology MIL, change detection, trajectories, motion
    # generation, fonts, dehazing, deraining, frame interpolation,
    # self-supervised video, code models, symbolic maths, video captioning,
    # continual learning, scene text, video prediction; torch pins read first.
    "sixteenth": (
        HERE / "manifest_sixteenth.tsv",
        HERE / "reviewed_after_sixteenth.tsv",
        BENCH / ".corpora" / "cross_module_sixteenth",
    ),
    # "seventeenth": labelled after the first sixteen had been used to tune
    # memlint, picked for trainer / checkpoint helpers in separate modules in
    # fields they cover thinly: gaze, face alignment, recognition and parsing,
    # stereo, inpainting, crowd counting, speaker verification, skeleton
    # actions, depth completion, nowcasting, speech enhancement, long-tailed
    # classification, 6D pose, contours, 3D detection, keypoints, unsupervised
    # depth, semi-supervised learning, neural rendering; torch pins read first.
    "seventeenth": (
        HERE / "manifest_seventeenth.tsv",
        HERE / "reviewed_after_seventeenth.tsv",
        BENCH / ".corpora" / "cross_module_seventeenth",
    ),
    # "eighteenth": labelled after the seventeenth, screened for helpers,
    # trainers and checkpoint code in separate modules: scene text, lanes,
    # segmentation, text-to-motion, re-ID adaptation, crowd counting,
    # pruning, skeleton actions, domain adaptation; torch pins read first.
    "eighteenth": (
        HERE / "manifest_eighteenth.tsv",
        HERE / "reviewed_after_eighteenth.tsv",
        BENCH / ".corpora" / "cross_module_eighteenth",
    ),
    # "nineteenth": labelled after the eighteenth, screened for cross-module
    # facts in fields the batches cover least: video, TTS and voice
    # conversion, graphs, point clouds, RL, self-supervised, medical imaging,
    # super-resolution, GAN variants, pre-2020 NLP, few-shot, KG embeddings;
    # torch pins read first.
    "nineteenth": (
        HERE / "manifest_nineteenth.tsv",
        HERE / "reviewed_after_nineteenth.tsv",
        BENCH / ".corpora" / "cross_module_nineteenth",
    ),
    # "twentieth": labelled after the nineteenth, screened for trainer
    # engines, experiment base classes and load helpers in separate modules:
    # traffic and long-range forecasting, speech recognition, pose, optical
    # flow, multi-view stereo, NeRF, anomaly detection, diffusion, knowledge
    # distillation, federated learning, recommendation; torch pins read first.
    "twentieth": (
        HERE / "manifest_twentieth.tsv",
        HERE / "reviewed_after_twentieth.tsv",
        BENCH / ".corpora" / "cross_module_twentieth",
    ),
    # "twentyfirst": labelled after the twentieth, in fields the yardstick had
    # few of: point clouds, tracking, OCR, graphs, RL, re-id, speech
    # synthesis, time series, medical imaging, continual and self-supervised
    # learning, normalising flows; torch pins read first.
    "twentyfirst": (
        HERE / "manifest_twentyfirst.tsv",
        HERE / "reviewed_after_twentyfirst.tsv",
        BENCH / ".corpora" / "cross_module_twentyfirst",
    ),
    # "twentysecond": labelled after the twenty-first, before memlint ran on
    # it, in fields the yardstick had few of: stereo and optical flow, depth,
    # adversarial robustness, randomized smoothing, domain adaptation,
    # few-shot, distillation, NeRF/SDF rendering, molecules, recommendation,
    # captioning, retrieval, audio, skeleton and video action recognition.
    "twentysecond": (
        HERE / "manifest_twentysecond.tsv",
        HERE / "reviewed_after_twentysecond.tsv",
        BENCH / ".corpora" / "cross_module_twentysecond",
    ),
    # "twentythird": labelled after the twenty-second, before memlint ran on
    # it: well-known papers' official code (self-supervised pretraining,
    # semi-supervised segmentation, detection, matting, super-resolution,
    # image translation, NAS backbones, point clouds, frame interpolation,
    # distillation), hunting for facts kept in another module: checkpoint
    # loaders and savers, trainer classes, evaluation helpers.
    "twentythird": (
        HERE / "manifest_twentythird.tsv",
        HERE / "reviewed_after_twentythird.tsv",
        BENCH / ".corpora" / "cross_module_twentythird",
    ),
    # "twentyfourth": labelled after the twenty-third, before memlint ran on
    # it: well-known papers' official code (DeiT-style ImageNet engines,
    # DETR variants, re-ID, GANs, diffusion/MAR, point clouds, occupancy
    # networks, video segmentation, graph sampling, restoration), hunting
    # for facts kept in another module: checkpoint helpers and their
    # callers, trainer classes, loss helpers that backpropagate.
    "twentyfourth": (
        HERE / "manifest_twentyfourth.tsv",
        HERE / "reviewed_after_twentyfourth.tsv",
        BENCH / ".corpora" / "cross_module_twentyfourth",
    ),
    # "twentyfifth": labelled after the twenty-fourth, before memlint ran on
    # it: well-known papers' official code chosen for split training code
    # (pose, DETR variants, RL, GAN translation, re-ID, 3D reconstruction,
    # NeRF, score models, speech separation, self-supervised audio and
    # vision, OOD detection, keypoints, 6D pose), hunting for facts kept in
    # another module: checkpoint helpers and their callers, trainer base
    # classes, meters, schedulers stepped by another module's loop.
    "twentyfifth": (
        HERE / "manifest_twentyfifth.tsv",
        HERE / "reviewed_after_twentyfifth.tsv",
        BENCH / ".corpora" / "cross_module_twentyfifth",
    ),
}


def batch_paths(batch: str, manifest: str | None, review: str | None, trees: str | None) -> tuple[Path, Path, Path]:
    """The batch's manifest, verdicts and tree folder; an explicit path wins over the batch's."""
    default_manifest, default_review, default_trees = BATCHES[batch]
    return (
        Path(manifest) if manifest else default_manifest,
        Path(review) if review else default_review,
        Path(trees) if trees else default_trees,
    )


WINDOW = 3
HEADER = ("repo", "commit", "path", "line", "codes", "label", "cross_module", "why")
REVIEW_COLUMNS = ("repo", "path", "line", "code", "verdict")
DECISION_COLUMNS = ("batch", "repo", "path", "line", "codes", "kind", "was", "now", "reason", "why")
KEEP_SUFFIXES = (".py",)
# Every project file memlint/find/torch_floor.py reads as a torch pin: a tree
# without them checks a pinned project as unpinned. Conda environment files
# go by many names (``conda_env.yml``): torch_floor's own test of the name.
KEEP_NAMES = ("pyproject.toml", "setup.py", "setup.cfg")
FAMILIES = {
    "1": "autograd-history",
    "2": "grad-mode",
    "3": "optimizer-steps",
    "4": "in-place",
    "5": "mixed-precision",
    "6": "checkpointing",
    "7": "device-memory",
    "8": "schedulers",
}


def family_of(code: str) -> str:
    return FAMILIES.get(code[3:4], "other") if code.upper().startswith("MEM") else "other"


@dataclass(frozen=True)
class Instance:
    repo: str
    commit: str
    path: str
    first: int
    last: int
    codes: tuple[str, ...]
    label: str
    cross: bool
    why: str

    @property
    def family(self) -> str:
        return family_of(self.codes[0])

    @property
    def scope(self) -> str:
        return "cross-module" if self.cross else "same-file"

    @property
    def lines(self) -> str:
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"

    def distance(self, line: int) -> int:
        """How far `line` lies outside the labelled span (0 inside)."""
        return max(self.first - line, line - self.last, 0)


@dataclass(frozen=True)
class Verdict:
    verdict: str  # TP or FP
    cross: bool | None  # None: not said


@dataclass
class Score:
    found: set[Instance] = field(default_factory=set)
    true_hits: list[tuple[Hit, Instance]] = field(default_factory=list)
    neg_hits: list[tuple[Hit, Instance]] = field(default_factory=list)
    unlabelled: list[Hit] = field(default_factory=list)
    after: list[tuple[Hit, Verdict]] = field(default_factory=list)


def _yes_no(value: str, where: str) -> bool:
    value = value.strip().lower()
    if value not in ("yes", "no"):
        raise SystemExit(f"{where}: cross_module must be yes or no, not {value!r}")
    return value == "yes"


def load_manifest(path: Path) -> list[Instance]:
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        if tuple(reader.fieldnames or ()) != HEADER:
            raise SystemExit(f"{path}: header must be {' '.join(HEADER)}")
        out = []
        for number, row in enumerate(reader, start=2):
            where = f"{path}:{number}"
            if row["label"] not in ("pos", "neg"):
                raise SystemExit(f"{where}: label must be pos or neg, not {row['label']!r}")
            codes = tuple(c.strip().upper() for c in row["codes"].split(",") if c.strip())
            if not codes:
                raise SystemExit(f"{where}: no codes")
            first, last = parse_lines(row["line"])
            out.append(
                Instance(
                    repo=row["repo"],
                    commit=row["commit"],
                    path=row["path"],
                    first=first,
                    last=last,
                    codes=codes,
                    label=row["label"],
                    cross=_yes_no(row["cross_module"], where),
                    why=row["why"],
                )
            )
        return out


def load_review(path: Path) -> dict[tuple[str, str, int, str], Verdict]:
    """(repo, path, line, code) -> verdict, for findings judged after the run."""
    if not path.exists():
        return {}
    with open(path, newline="", encoding="utf-8") as fh:
        rows = csv.DictReader((line for line in fh if not line.startswith("#")), delimiter="\t")
        missing = [c for c in REVIEW_COLUMNS if c not in (rows.fieldnames or ())]
        if missing:
            raise SystemExit(f"{path}: missing columns {', '.join(missing)}")
        review = {}
        for row in rows:
            verdict = row["verdict"].strip().upper()
            if verdict not in ("TP", "FP"):
                raise SystemExit(f"{path}: verdict must be TP or FP, not {row['verdict']!r}")
            cross_text = (row.get("cross_module") or "").strip()
            cross = _yes_no(cross_text, str(path)) if cross_text else None
            key = (row["repo"], row["path"], int(row["line"]), row["code"].strip().upper())
            review[key] = Verdict(verdict, cross)
        return review


LabelKey = tuple[str, str, str, tuple[str, ...]]
ReviewKey = tuple[str, str, int, str]


def _codes(text: str) -> tuple[str, ...]:
    return tuple(c.strip().upper() for c in text.split(",") if c.strip())


def load_decisions(path: Path, batch: str) -> tuple[dict[LabelKey, tuple[str, str]], dict[ReviewKey, tuple[str, str]]]:
    """The batch's label corrections: (key -> (was, now)) for labels and for reviewed verdicts."""
    labels: dict[LabelKey, tuple[str, str]] = {}
    verdicts: dict[ReviewKey, tuple[str, str]] = {}
    if not path.exists():
        return labels, verdicts
    with open(path, newline="", encoding="utf-8") as fh:
        rows = csv.DictReader((line for line in fh if not line.startswith("#")), delimiter="\t", quoting=csv.QUOTE_NONE)
        if tuple(rows.fieldnames or ()) != DECISION_COLUMNS:
            raise SystemExit(f"{path}: header must be {' '.join(DECISION_COLUMNS)}")
        for row in rows:
            if row["batch"] != batch:
                continue
            change = (row["was"], row["now"])
            if row["kind"] == "label" and set(change) == {"pos", "neg"}:
                first, last = parse_lines(row["line"])
                lines = str(first) if first == last else f"{first}-{last}"
                labels[(row["repo"], row["path"], lines, _codes(row["codes"]))] = change
            elif row["kind"] == "verdict" and set(change) == {"TP", "FP"}:
                verdicts[(row["repo"], row["path"], int(row["line"]), row["codes"].strip().upper())] = change
            else:
                raise SystemExit(f"{path}: {row['kind']} {row['was']} -> {row['now']} is not a correction")
    return labels, verdicts


def apply_decisions(
    instances: list[Instance],
    review: dict[ReviewKey, Verdict],
    labels: dict[LabelKey, tuple[str, str]],
    verdicts: dict[ReviewKey, tuple[str, str]],
) -> tuple[list[Instance], dict[ReviewKey, Verdict]]:
    """The batch read with its corrections; a correction that matches nothing, or not what it says it was, stops the run."""
    left = dict(labels)
    out = []
    for inst in instances:
        change = left.pop((inst.repo, inst.path, inst.lines, inst.codes), None)
        if change is not None:
            if inst.label != change[0]:
                raise SystemExit(
                    f"{DECISIONS}: {inst.repo}/{inst.path}:{inst.lines} is labelled {inst.label}, not {change[0]}"
                )
            inst = replace(inst, label=change[1])
        out.append(inst)
    decided = dict(review)
    for key, (was, now) in verdicts.items():
        verdict = decided.get(key)
        if verdict is None or verdict.verdict != was:
            raise SystemExit(f"{DECISIONS}: no reviewed {was} finding at {key[0]}/{key[1]}:{key[2]} {key[3]}")
        decided[key] = replace(verdict, verdict=now)
    if left:
        repo, path, lines, codes = next(iter(left))
        raise SystemExit(f"{DECISIONS}: no instance {repo}/{path}:{lines} {','.join(codes)} in the manifest")
    return out, decided


# -- the trees ---------------------------------------------------------------


def tree_dir(trees: Path, repo: str) -> Path:
    return trees / repo.replace("/", "__")


def projects(instances: list[Instance]) -> dict[str, str]:
    """repo -> commit (one commit per repository)."""
    out: dict[str, str] = {}
    for inst in instances:
        if out.setdefault(inst.repo, inst.commit) != inst.commit:
            raise SystemExit(f"{inst.repo}: the manifest names two commits ({out[inst.repo]}, {inst.commit})")
    return out


def _keep(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        path.endswith(KEEP_SUFFIXES)
        or name in KEEP_NAMES
        or (name.startswith("requirements") and name.endswith(".txt"))
        or (path.endswith(".txt") and path.rsplit("/", 2)[-2:-1] == ["requirements"])
        or (name.lower().endswith((".yml", ".yaml")) and is_environment_file(name))
    )


def _git(git_dir: Path | None, *args: str, cwd: Path | None = None, data: bool = False) -> subprocess.CompletedProcess:
    command = ["git"] + ([f"--git-dir={git_dir}"] if git_dir else []) + list(args)
    return subprocess.run(command, cwd=cwd, capture_output=True, check=False, text=not data)


def export_tree(git_dir: Path, commit: str, target: Path) -> str:
    """Write the kept files of `commit` under `target`; returns what happened, in words."""
    if _git(git_dir, "cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
        return f"commit {commit} is not in {git_dir}"
    listing = _git(git_dir, "ls-tree", "-r", "--name-only", "-z", commit)
    if listing.returncode != 0:
        return f"git ls-tree failed: {listing.stderr.strip()}"
    paths = [p for p in listing.stdout.split("\0") if p and _keep(p)]
    scratch = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    try:
        for rel in paths:
            blob = _git(git_dir, "show", f"{commit}:{rel}", data=True)
            if blob.returncode != 0:  # a submodule, or a blob the mirror lacks
                continue
            out = scratch / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(blob.stdout)
        (scratch / ".commit").write_text(commit + "\n", encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        scratch.rename(target)
    finally:
        if scratch.exists():
            shutil.rmtree(scratch)
    return f"exported {len(paths)} files"


def mirror_git_dir(mirror: Path, repo: str) -> Path | None:
    base = mirror / repo.replace("/", "+") / "repo"
    for candidate in (base / ".git", base):
        if (candidate / "HEAD").is_file():
            return candidate
    return None


def fetch_tree(repo: str, commit: str, target: Path, timeout: float = 300.0) -> str:
    """`git fetch` the one commit from github.com into a scratch repository and export it."""
    scratch = Path(tempfile.mkdtemp(prefix="cross_module_git."))
    try:
        if _git(None, "init", "-q", "--bare", str(scratch)).returncode != 0:
            return "git init failed"
        try:
            url = f"https://github.com/{repo}.git"
            command = ["git", f"--git-dir={scratch}", "fetch", "-q", "--depth", "1", url, commit]
            got = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return "git fetch timed out"
        if got.returncode != 0:
            return f"git fetch failed: {got.stderr.strip()[:200]}"
        return export_tree(scratch, commit, target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def prepare_trees(
    wanted: dict[str, str], trees: Path, mirror: Path | None, network: bool
) -> tuple[dict[str, Path], list[str]]:
    """The tree of every project, recreated where missing; and, in words, what is still missing."""
    ready: dict[str, Path] = {}
    problems: list[str] = []
    for repo, commit in sorted(wanted.items()):
        target = tree_dir(trees, repo)
        marker = target / ".commit"
        if target.is_dir():
            recorded = marker.read_text(encoding="utf-8").strip() if marker.is_file() else None
            if recorded and recorded != commit:
                problems.append(f"{repo}: {target} holds {recorded}, the manifest wants {commit}: skipped")
            else:
                ready[repo] = target
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        notes = []
        git_dir = mirror_git_dir(mirror, repo) if mirror else None
        if git_dir is not None:
            notes.append(f"mirror: {export_tree(git_dir, commit, target)}")
        if not target.is_dir() and network:
            notes.append(f"fetch: {fetch_tree(repo, commit, target)}")
        if target.is_dir():
            ready[repo] = target
            print(f"recreated {repo}@{commit[:12]} ({'; '.join(notes)})")
        else:
            how = "; ".join(notes) or "no mirror given and --fetch not asked"
            problems.append(
                f"missing: {repo}@{commit} ({how}) -- export it into {target} "
                f"(e.g. this workplace's fetch tool for github:{repo}, then --mirror /work/.mirror; or --fetch)"
            )
    return ready, problems


def check_paths(instances: list[Instance], ready: dict[str, Path]) -> list[str]:
    """Labelled files that a present tree lacks."""
    seen, out = set(), []
    for inst in instances:
        key = (inst.repo, inst.path)
        if inst.repo in ready and key not in seen:
            seen.add(key)
            if not (ready[inst.repo] / inst.path).is_file():
                out.append(f"{inst.repo}: {inst.path} is not in {ready[inst.repo]}")
    return out


# -- running memlint ---------------------------------------------------------


def memlint_command() -> list[str]:
    """The CLI beside this interpreter (a virtual environment's), else the one on PATH."""
    here = Path(sys.executable).parent / ("memlint.exe" if os.name == "nt" else "memlint")
    if here.is_file():
        return [str(here)]
    found = shutil.which("memlint")
    if found:
        return [found]
    return [sys.executable, "-m", "memlint"]


# What a file of a real project can hold that Python 3 cannot read: a Python 2
# leftover (syntax), or a codec the project installs for itself
# (``# -*- coding: future_fstrings -*-``: Python needs that package to decode
# the file, memlint says so and checks the rest of the tree).
_UNREADABLE_FILE = re.compile(
    r"^memlint: error: (?P<path>.+?): (?:syntax error at \d+:\d+|bad encoding declaration"
    r"|not valid UTF-8|cannot decode as |binary file)"
)
_NOT_CHECKED = re.compile(r"^\d+ files? could not be checked")
# Python's own parser warns on stderr about source it still accepts (an
# "invalid decimal literal" such as `1if`); the file is checked all the same.
_PARSER_WARNING = re.compile(r"^<unknown>:\d+: SyntaxWarning: ")
# A project's pyproject.toml that is not TOML: memlint names it and checks its
# files with the default settings (exit 2); the findings are the project's.
_DEFAULTS_CONFIG = re.compile(r"^memlint: error: .+\(the files under .+ were checked with the default settings\)$")


def unparsable_files(stderr: str) -> list[str] | None:
    """The files memlint could not read or parse, when that is all its errors say; else None.

    A real project may hold a file that does not parse (a Python 2 leftover, a
    half-edited script) or that declares a codec only the project's own
    environment has: memlint still checks every other file and prints their
    findings, but exits 1 even with --exit-zero. Those findings are the
    project's, so the tree counts as analysed and the skipped files are named.
    """
    files = []
    defaults = False
    for line in stderr.splitlines():
        line = line.strip()
        if _DEFAULTS_CONFIG.match(line):
            defaults = True
            continue
        if not line or _NOT_CHECKED.match(line) or _PARSER_WARNING.match(line):
            continue
        match = _UNREADABLE_FILE.match(line)
        if match is None:
            return None
        files.append(match["path"])
    return files if files or defaults else None


def lint_tree(repo: str, tree: Path, select: str | None, jobs: int | None) -> tuple[list[Hit], str | None, list[str]]:
    """The findings on one tree; what went wrong, if the tree could not be analysed; the files memlint could not parse."""
    command = memlint_command() + ["check", "--output-format", "json", "--no-cache", "--exit-zero", "--quiet"]
    if select:
        command += ["--select", select]
    if jobs:
        command += ["--jobs", str(jobs)]
    command.append(str(tree))
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    skipped = unparsable_files(done.stderr) if done.returncode != 0 else []
    if skipped is None:
        return [], f"{repo}: memlint exited {done.returncode}: {done.stderr.strip()[-300:]}", []
    try:
        findings = json.loads(done.stdout or "[]")
    except json.JSONDecodeError as exc:
        return [], f"{repo}: memlint's JSON did not parse ({exc})", []
    root = tree.resolve()
    hits = []
    for f in findings:
        path = Path(f["filename"]).resolve()
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            rel = path.as_posix()
        hits.append(Hit(repo, rel, int(f["location"]["row"]), f["code"], f["message"]))
    return hits, None, skipped


# -- scoring -----------------------------------------------------------------


def score(
    instances: list[Instance], hits: list[Hit], review: dict[tuple[str, str, int, str], Verdict] | None = None
) -> Score:
    review = review or {}
    by_file: dict[tuple[str, str], list[Instance]] = defaultdict(list)
    for inst in instances:
        by_file[(inst.repo, inst.path)].append(inst)
    result = Score()
    for hit in sorted(hits, key=lambda h: (h.repo, h.path, h.line, h.code)):
        matches = [
            inst
            for inst in by_file.get((hit.repo, hit.path), ())
            if hit.code in inst.codes and inst.distance(hit.line) <= WINDOW
        ] or _named_callers(hit, by_file)
        if matches:
            best = min(matches, key=lambda i: (i.distance(hit.line), i.label != "pos"))
            if best.label == "pos":
                result.found.add(best)
                result.true_hits.append((hit, best))
            else:
                result.neg_hits.append((hit, best))
            continue
        verdict = review.get((hit.repo, hit.path, hit.line, hit.code))
        if verdict is None:
            result.unlabelled.append(hit)
        else:
            result.after.append((hit, verdict))
    return result


# A helper's finding that says where its callers run it: "(called with autograd on from train.py:58, ...)".
CALLERS = re.compile(r"\(called with autograd on from ([^)]*)\)")
PLACE = re.compile(r"([^\s,]+\.py):(\d+)")


def _named_callers(hit: Hit, by_file: dict[tuple[str, str], list[Instance]]) -> list[Instance]:
    """Instances at the callers a finding's message names: the bug is labelled
    where the caller's loop runs the helper with grad on, and reported on the
    helper, pointing at that loop."""
    named = CALLERS.search(hit.message)
    if not named:
        return []
    return [
        inst
        for path, line in PLACE.findall(named.group(1))
        for inst in by_file.get((hit.repo, path), ())
        if hit.code in inst.codes and inst.distance(int(line)) <= WINDOW
    ]


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def _row(name: str, c: Counter) -> dict:
    good = c["found"] + c["after_tp"]
    return {
        "row": name,
        "positives": c["positives"],
        "found": c["found"],
        "recall": _ratio(c["found"], c["positives"]),
        "negatives": c["negatives"],
        "false_alarms": c["false_alarms"],
        "unlabelled": c["unlabelled"],
        "labelled_after": f"{c['after_tp']} TP / {c['after_fp']} FP",
        "precision": _ratio(good, good + c["false_alarms"]),
    }


def table(instances: list[Instance], result: Score) -> list[dict]:
    """Rows: overall, same-file, cross-module, then one per family (sorted).

    An unlabelled finding is a false alarm of the overall row and of its
    code's family; it belongs to neither scope until a person judges it.
    """
    scopes: dict[str, Counter] = {"overall": Counter(), "same-file": Counter(), "cross-module": Counter()}
    families: dict[str, Counter] = defaultdict(Counter)

    def add(scope: str | None, family: str, key: str) -> None:
        scopes["overall"][key] += 1
        if scope:
            scopes[scope][key] += 1
        families[family][key] += 1

    for inst in instances:
        add(inst.scope, inst.family, "positives" if inst.label == "pos" else "negatives")
    for inst in result.found:
        add(inst.scope, inst.family, "found")
    for _, inst in result.neg_hits:
        add(inst.scope, inst.family, "false_alarms")
    for hit in result.unlabelled:
        add(None, family_of(hit.code), "false_alarms")
        add(None, family_of(hit.code), "unlabelled")
    for hit, verdict in result.after:
        scope = None if verdict.cross is None else ("cross-module" if verdict.cross else "same-file")
        if verdict.verdict == "TP":
            add(scope, family_of(hit.code), "after_tp")
        else:
            add(scope, family_of(hit.code), "after_fp")
            add(scope, family_of(hit.code), "false_alarms")
    rows = [_row(name, c) for name, c in scopes.items()]
    rows += [_row(f"family {name}", c) for name, c in sorted(families.items())]
    return rows


COLUMNS = (
    "row",
    "positives",
    "found",
    "recall",
    "negatives",
    "false_alarms",
    "unlabelled",
    "labelled_after",
    "precision",
)


def _fmt(value) -> str:
    if value is None:
        return "–"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def render(rows: list[dict], markdown: bool) -> str:
    cells = [[_fmt(r[c]) for c in COLUMNS] for r in rows]
    if markdown:
        lines = [
            "| " + " | ".join(c.replace("_", " ") for c in COLUMNS) + " |",
            "| --- |" + " ---: |" * (len(COLUMNS) - 1),
        ]
        lines += ["| " + " | ".join(row) + " |" for row in cells]
        return "\n".join(lines)
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(COLUMNS)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--select", help="rule codes or prefixes, comma-separated (default: memlint's defaults)")
    parser.add_argument("--json", metavar="OUT", help="write the table, misses and findings as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument(
        "--mirror", metavar="DIR", help="recreate missing trees from git mirrors DIR/<owner>+<repo>/repo"
    )
    parser.add_argument("--fetch", action="store_true", help="recreate missing trees with git fetch from github.com")
    parser.add_argument("--jobs", type=int, help="memlint worker processes per project (default: memlint's)")
    parser.add_argument("--repo", help="score only repositories whose name contains this")
    parser.add_argument(
        "--batch", choices=sorted(BATCHES), default="first", help="which labelled batch to score (default: first)"
    )
    parser.add_argument("--manifest", help=argparse.SUPPRESS)
    parser.add_argument("--review", help=argparse.SUPPRESS)
    parser.add_argument("--trees", help="where the exported projects live (default: the batch's folder)")
    args = parser.parse_args(argv)
    manifest, review, trees = batch_paths(args.batch, args.manifest, args.review, args.trees)

    instances = load_manifest(manifest)
    review_table = load_review(review)
    decided_instances, decided_review = apply_decisions(instances, review_table, *load_decisions(DECISIONS, args.batch))
    corrections = sum(a is not b for a, b in zip(instances, decided_instances)) + sum(
        decided_review[k] != v for k, v in review_table.items()
    )
    if args.repo:
        decided_instances = [d for i, d in zip(instances, decided_instances) if args.repo in i.repo]
        instances = [i for i in instances if args.repo in i.repo]
    if not instances:
        print("no instances to score", file=sys.stderr)
        return 1
    wanted = projects(instances)
    ready, problems = prepare_trees(wanted, trees, Path(args.mirror) if args.mirror else None, args.fetch)
    problems += check_paths(instances, ready)

    select = ",".join(c.strip().upper() for c in args.select.split(",")) if args.select else None
    hits: list[Hit] = []
    notes: list[str] = []
    for repo, tree in sorted(ready.items()):
        found, error, skipped = lint_tree(repo, tree, select, args.jobs)
        hits += found
        notes += [
            f"{repo}: memlint could not read or parse {path} (the rest of the tree is checked)" for path in skipped
        ]
        if error:
            problems.append(f"not analysed: {error}")
            ready.pop(repo)
    usable = [i for i in instances if i.repo in ready]
    result = score(usable, hits, review_table)
    rows = table(usable, result)
    decided = [i for i in decided_instances if i.repo in ready]
    decided_rows = table(decided, score(decided, hits, decided_review))

    for line in problems:
        print(line)
    for line in notes:
        print(line)
    pos = [i for i in usable if i.label == "pos"]
    print(
        f"{len(usable)} instances ({len(pos)} pos, {sum(i.cross for i in pos)} of them cross-module; "
        f"{sum(i.label == 'neg' for i in usable)} neg) in {len(ready)} projects; "
        f"{len(hits)} findings"
    )
    print(render(rows, args.markdown))
    if corrections:
        print(f"\nread with {DECISIONS.name} ({corrections} corrections of this batch: label errors and decisions):")
        print(render(decided_rows, args.markdown))
    missed = sorted(
        (i for i in pos if i not in result.found), key=lambda i: (not i.cross, i.family, i.repo, i.path, i.first)
    )
    print(f"\nmissed positives ({len(missed)}):")
    for inst in missed:
        print(
            f"  [{inst.scope}, {inst.family}] {inst.repo}/{inst.path}:{inst.lines} {','.join(inst.codes)} -- {inst.why}"
        )
    print(f"\nfalse alarms on labelled look-alikes ({len(result.neg_hits)}):")
    for hit, inst in result.neg_hits:
        print(
            f"  [{inst.scope}] {hit.repo}/{hit.path}:{hit.line} {hit.code} {hit.message} (neg {inst.lines}: {inst.why})"
        )
    print(f"\nunlabelled findings, counted as false alarms until reviewed ({len(result.unlabelled)}):")
    for hit in result.unlabelled:
        print(f"  {hit.repo}/{hit.path}:{hit.line} {hit.code} {hit.message}")
    if result.after:
        tp = sum(v.verdict == "TP" for _, v in result.after)
        print(f"\nlabelled after the run: {tp} TP, {len(result.after) - tp} FP")

    if args.json:
        payload = {
            "table": rows,
            "table_decided": decided_rows,
            "corrections": corrections,
            "projects": {repo: wanted[repo] for repo in sorted(ready)},
            "missed": [asdict(i) | {"scope": i.scope, "family": i.family} for i in missed],
            "found": [
                asdict(i) | {"scope": i.scope} for i in sorted(result.found, key=lambda i: (i.repo, i.path, i.first))
            ],
            "false_alarms": [{"finding": asdict(h), "instance": asdict(i)} for h, i in result.neg_hits],
            "unlabelled": [asdict(h) for h in result.unlabelled],
            "labelled_after": [{"finding": asdict(h), "verdict": asdict(v)} for h, v in result.after],
            "problems": problems,
            "notes": notes,
        }
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
