"""Recall and precision on real training code that none of us wrote.

    python bench/recall_real.py                    # default rules, every manifest
    python bench/recall_real.py --select MEM1,MEM2 --markdown
    python bench/recall_real.py --json out.json
    python bench/recall_real.py --fetch            # try to download missing files
    python bench/recall_real.py --manifest yard2   # one labeller's manifest only

Each `recall_real/manifest_*.tsv` lists instances labelled by reading public
training scripts BEFORE memlint ran on them: a place where a rule should fire
(`pos`) or a deliberate look-alike where it must stay silent (`neg`). The
scripts themselves are never committed; their copies live in the git-ignored
`recall_real/files/<owner>__<repo>/<path>`, checked against the manifest's
sha256. A missing or changed copy is listed with where to get it again
(raw.githubusercontent.com/<repo>/<commit>/<path>) and left out of the score.

memlint runs once, in process, over every saved file. Scoring:

- a finding matches an instance when it is in the same file, its code is one
  of the instance's codes, and its line lies within the instance's line or
  range widened by WINDOW lines each side. When several instances match, the
  nearest one takes the finding (a `pos` wins a tie), so one finding is
  never counted twice;
- a `pos` instance is found when at least one finding matches it;
- a finding that matches a `neg` instance is a false alarm;
- a finding that matches nothing is "unlabelled": printed for a person to
  judge and counted as a false alarm, unless `recall_real/reviewed_after.tsv`
  (repo, path, line, code, verdict TP/FP, why) records a verdict for it;
  those are reported separately as labelled-after (TP ones are not false
  alarms, FP ones are).

precision = (found + labelled-after TP) / (that + false alarms).
The exit status is 0 (a measurement), or 1 when saved files are missing or
changed.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent / "recall_real"
WINDOW = 3
HEADER = ("repo", "path", "commit", "sha256", "line", "family", "codes", "label", "why")
REVIEW_HEADER = ("repo", "path", "line", "code", "verdict", "why")


@dataclass(frozen=True)
class Instance:
    manifest: str
    repo: str
    path: str
    commit: str
    sha256: str
    first: int
    last: int
    family: str
    codes: tuple[str, ...]
    label: str
    why: str

    @property
    def file_key(self) -> tuple[str, str]:
        return (self.repo, self.path)

    @property
    def lines(self) -> str:
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"

    def distance(self, line: int) -> int:
        """How far `line` lies outside the labelled span (0 inside)."""
        return max(self.first - line, line - self.last, 0)


@dataclass(frozen=True)
class Hit:
    """One memlint finding, keyed by the manifest's (repo, path)."""

    repo: str
    path: str
    line: int
    code: str
    message: str


@dataclass
class Score:
    found: set[Instance] = field(default_factory=set)
    true_hits: list[tuple[Hit, Instance]] = field(default_factory=list)
    neg_hits: list[tuple[Hit, Instance]] = field(default_factory=list)
    unlabelled: list[Hit] = field(default_factory=list)
    after_tp: list[Hit] = field(default_factory=list)
    after_fp: list[Hit] = field(default_factory=list)


def parse_lines(text: str) -> tuple[int, int]:
    first, _, last = text.strip().partition("-")
    lo, hi = int(first), int(last or first)
    if lo < 1 or hi < lo:
        raise ValueError(f"bad line or range: {text!r}")
    return lo, hi


def load_manifest(path: Path) -> list[Instance]:
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        if tuple(reader.fieldnames or ()) != HEADER:
            raise SystemExit(f"{path}: header must be {' '.join(HEADER)}")
        out = []
        for row in reader:
            first, last = parse_lines(row["line"])
            if row["label"] not in ("pos", "neg"):
                raise SystemExit(f"{path}: label must be pos or neg, not {row['label']!r}")
            codes = tuple(c.strip().upper() for c in row["codes"].split(",") if c.strip())
            out.append(
                Instance(
                    manifest=path.name,
                    repo=row["repo"],
                    path=row["path"],
                    commit=row["commit"],
                    sha256=row["sha256"],
                    first=first,
                    last=last,
                    family=row["family"],
                    codes=codes,
                    label=row["label"],
                    why=row["why"],
                )
            )
        return out


def load_manifests(folder: Path = HERE) -> list[Instance]:
    out: list[Instance] = []
    for path in sorted(folder.glob("manifest_*.tsv")):
        out.extend(load_manifest(path))
    return out


def load_review(path: Path) -> dict[tuple[str, str, int, str], str]:
    """(repo, path, line, code) -> verdict TP/FP, for findings judged after the run."""
    if not path.exists():
        return {}
    with open(path, newline="", encoding="utf-8") as fh:
        rows = csv.DictReader((line for line in fh if not line.startswith("#")), delimiter="\t")
        review = {}
        for row in rows:
            verdict = row["verdict"].strip().upper()
            if verdict not in ("TP", "FP"):
                raise SystemExit(f"{path}: verdict must be TP or FP, not {row['verdict']!r}")
            review[(row["repo"], row["path"], int(row["line"]), row["code"].strip().upper())] = verdict
        return review


def local_file(files: Path, repo: str, path: str) -> Path:
    return files / repo.replace("/", "__") / path


def raw_url(inst: Instance) -> str:
    # Paths may hold spaces ("Char09 SAC/SAC.py"): quoted, or urllib refuses the URL.
    return f"https://raw.githubusercontent.com/{inst.repo}/{inst.commit}/{urllib.parse.quote(inst.path)}"


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_files(
    instances: list[Instance], files: Path
) -> tuple[dict[tuple[str, str], Path], list[Instance], list[Instance], list[Instance]]:
    """Check each saved copy against every sha256 the manifests give for it.

    Returns the files to lint, the missing and the changed ones (one instance
    per file and sha256), and the instances that can be scored: those whose
    sha256 is the saved file's. Two manifests that labelled different
    versions of one path cannot both be scored; the other version is listed
    as changed.
    """
    present: dict[tuple[str, str], Path] = {}
    digests: dict[tuple[str, str], str | None] = {}
    missing: list[Instance] = []
    changed: list[Instance] = []
    seen: set[tuple[str, str, str]] = set()
    for inst in instances:
        key = inst.file_key
        if key not in digests:
            path = local_file(files, inst.repo, inst.path)
            digests[key] = sha256_of(path) if path.is_file() else None
        if (key[0], key[1], inst.sha256) in seen:
            continue
        seen.add((key[0], key[1], inst.sha256))
        if digests[key] is None:
            missing.append(inst)
        elif digests[key] != inst.sha256:
            changed.append(inst)
        else:
            present[key] = local_file(files, inst.repo, inst.path)
    usable = [i for i in instances if digests[i.file_key] == i.sha256]
    return present, missing, changed, usable


def fetch(inst: Instance, files: Path, timeout: float = 20.0) -> str:
    """Download one file from its raw URL; returns what happened, in words."""
    if inst.commit == "unknown":
        return "commit unknown: fetch it by hand"
    try:
        with urllib.request.urlopen(raw_url(inst), timeout=timeout) as resp:
            data = resp.read()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return f"network refused or failed ({exc}); fetch it by hand"
    if hashlib.sha256(data).hexdigest() != inst.sha256:
        return "downloaded, but its sha256 differs from the manifest: not saved"
    target = local_file(files, inst.repo, inst.path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return "fetched"


def lint(present: dict[tuple[str, str], Path], select: list[str] | None, jobs: int) -> tuple[list[Hit], list[str]]:
    from memlint.run.runner import Settings, run

    keys = sorted(present)
    settings = Settings(select=tuple(select) if select else None)
    reports = run([str(present[k]) for k in keys], settings, jobs=jobs)
    hits, errors = [], []
    for key, report in zip(keys, reports):
        if report.error:
            errors.append(f"{key[0]}/{key[1]}: {report.error}")
        for f in report.findings:
            hits.append(Hit(key[0], key[1], f.line, f.code, f.message))
    return hits, errors


def score(instances: list[Instance], hits: list[Hit], review: dict[tuple[str, str, int, str], str]) -> Score:
    by_file: dict[tuple[str, str], list[Instance]] = defaultdict(list)
    for inst in instances:
        by_file[inst.file_key].append(inst)
    result = Score()
    for hit in sorted(hits, key=lambda h: (h.repo, h.path, h.line, h.code)):
        matches = [
            inst
            for inst in by_file.get((hit.repo, hit.path), ())
            if hit.code in inst.codes and inst.distance(hit.line) <= WINDOW
        ]
        if matches:
            best = min(matches, key=lambda i: (i.distance(hit.line), i.label != "pos"))
            if best.label == "pos":
                result.found.add(best)
                result.true_hits.append((hit, best))
            else:
                result.neg_hits.append((hit, best))
            continue
        verdict = review.get((hit.repo, hit.path, hit.line, hit.code))
        if verdict == "TP":
            result.after_tp.append(hit)
        elif verdict == "FP":
            result.after_fp.append(hit)
        else:
            result.unlabelled.append(hit)
    return result


def code_families(instances: list[Instance]) -> dict[str, str]:
    """The family each code is most often labelled with, for findings that match no instance."""
    votes: dict[str, Counter] = defaultdict(Counter)
    for inst in instances:
        for code in inst.codes:
            votes[code][inst.family] += 1
    return {code: c.most_common(1)[0][0] for code, c in votes.items()}


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def table(instances: list[Instance], result: Score) -> list[dict]:
    """One row per family (sorted), then `overall`."""
    families = code_families(instances)
    rows: dict[str, Counter] = defaultdict(Counter)
    for inst in instances:
        rows[inst.family]["positives" if inst.label == "pos" else "negatives"] += 1
    for inst in result.found:
        rows[inst.family]["found"] += 1
    for _, inst in result.neg_hits:
        rows[inst.family]["false_alarms"] += 1
    for hit in result.unlabelled + result.after_fp:
        rows[families.get(hit.code, "other")]["false_alarms"] += 1
    for hit in result.after_tp:
        rows[families.get(hit.code, "other")]["after_tp"] += 1
    for hit in result.after_fp:
        rows[families.get(hit.code, "other")]["after_fp"] += 1
    total: Counter = Counter()
    for c in rows.values():
        total.update(c)
    out = []
    for name, c in sorted(rows.items()) + [("overall", total)]:
        good = c["found"] + c["after_tp"]
        out.append(
            {
                "family": name,
                "positives": c["positives"],
                "found": c["found"],
                "recall": _ratio(c["found"], c["positives"]),
                "negatives": c["negatives"],
                "false_alarms": c["false_alarms"],
                "labelled_after": f"{c['after_tp']} TP / {c['after_fp']} FP",
                "precision": _ratio(good, good + c["false_alarms"]),
            }
        )
    return out


def _fmt(value) -> str:
    if value is None:
        return "–"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def render(rows: list[dict], markdown: bool) -> str:
    cols = ("family", "positives", "found", "recall", "negatives", "false_alarms", "labelled_after", "precision")
    cells = [[_fmt(r[c]) for c in cols] for r in rows]
    if markdown:
        lines = ["| " + " | ".join(c.replace("_", " ") for c in cols) + " |", "| --- |" + " ---: |" * (len(cols) - 1)]
        lines += ["| " + " | ".join(row) + " |" for row in cells]
        return "\n".join(lines)
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--select", help="rule codes or prefixes, comma-separated (default: memlint's defaults)")
    parser.add_argument("--json", metavar="OUT", help="write the table, misses and findings as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--fetch", action="store_true", help="try to download missing files from their raw URL")
    parser.add_argument("--jobs", type=int, default=1, help="memlint worker processes (default 1)")
    parser.add_argument("--manifest", help="score only manifests whose name contains this (e.g. yard1)")
    parser.add_argument("--folder", default=str(HERE), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    folder = Path(args.folder)
    files = folder / "files"
    instances = load_manifests(folder)
    if args.manifest:
        instances = [i for i in instances if args.manifest in i.manifest]
    if not instances:
        print(f"no manifest_*.tsv under {folder}", file=sys.stderr)
        return 1
    present, missing, changed, usable = check_files(instances, files)
    if args.fetch and missing:
        for inst in missing:
            print(f"fetch {inst.repo}/{inst.path}: {fetch(inst, files)}")
        present, missing, changed, usable = check_files(instances, files)
    for label, group in (("missing", missing), ("changed", changed)):
        for inst in group:
            print(
                f"{label}: {inst.repo} {inst.path} ({inst.manifest}, skipped) -- re-fetch {raw_url(inst)}"
                " (or, in this workplace, the search tool's read_file / fetch at that commit)"
            )

    select = [c.strip().upper() for c in args.select.split(",")] if args.select else None
    hits, errors = lint(present, select, args.jobs)
    for err in errors:
        print(f"not analysed: {err}")
    result = score(usable, hits, load_review(folder / "reviewed_after.tsv"))
    rows = table(usable, result)

    manifests = Counter(i.manifest for i in usable)
    repos = len({i.repo for i in usable})
    print(
        f"{len(usable)} instances ({sum(i.label == 'pos' for i in usable)} pos) in {len(present)} files "
        f"from {repos} repositories; manifests: " + ", ".join(f"{m} {n}" for m, n in sorted(manifests.items()))
    )
    print(render(rows, args.markdown))
    missed = sorted(
        (i for i in usable if i.label == "pos" and i not in result.found),
        key=lambda i: (i.family, i.repo, i.path, i.first),
    )
    print(f"\nmissed positives ({len(missed)}):")
    for inst in missed:
        print(f"  [{inst.family}] {inst.repo}/{inst.path}:{inst.lines} {','.join(inst.codes)} -- {inst.why}")
    print(f"\nfalse alarms on labelled look-alikes ({len(result.neg_hits)}):")
    for hit, inst in result.neg_hits:
        print(f"  {hit.repo}/{hit.path}:{hit.line} {hit.code} {hit.message} (neg {inst.lines}: {inst.why})")
    print(f"\nunlabelled findings, counted as false alarms until reviewed ({len(result.unlabelled)}):")
    for hit in result.unlabelled:
        print(f"  {hit.repo}/{hit.path}:{hit.line} {hit.code} {hit.message}")
    if result.after_tp or result.after_fp:
        print(f"\nlabelled after the run: {len(result.after_tp)} TP, {len(result.after_fp)} FP")

    if args.json:
        payload = {
            "table": rows,
            "missed": [asdict(i) for i in missed],
            "false_alarms": [{"finding": asdict(h), "instance": asdict(i)} for h, i in result.neg_hits],
            "unlabelled": [asdict(h) for h in result.unlabelled],
            "labelled_after": {"TP": [asdict(h) for h in result.after_tp], "FP": [asdict(h) for h in result.after_fp]},
            "missing": [asdict(i) for i in missing],
            "changed": [asdict(i) for i in changed],
            "not_analysed": errors,
        }
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 1 if missing or changed else 0


if __name__ == "__main__":
    sys.exit(main())
