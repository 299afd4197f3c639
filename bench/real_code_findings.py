"""Precision on released code: every finding memlint reports, against a review.

    python bench/real_code_findings.py                       # all corpora
    python bench/real_code_findings.py --corpus skorch,torchtune --workdir /tmp/memlint-corpora

Each corpus is a released wheel from PyPI (corpora.py; downloaded at run time,
never committed): timm and transformers (model code), and eight packages full
of training and evaluation loops (Lightning, ignite, accelerate, skorch,
torchtune, mmengine, fastai, torchmetrics). The real command runs with every
rule selected, and each finding is looked up in `real_code_reviewed.tsv`,
where a person recorded whether it is right:

- `TP`: the code has the problem the rule describes;
- `FP`: a false alarm that was fixed in memlint (it must not come back);
- anything else is printed as it stands, for the next review.

A finding is keyed by file, code and the text of its source line, so the
review survives line shifts between memlint versions. Findings not in the
review are listed as NEW. The exit status is 1 when a reviewed false alarm is
reported again.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpora import CORPORA, fetch  # noqa: E402

REVIEW = Path(__file__).resolve().parent / "real_code_reviewed.tsv"
FIELDS = ("corpus", "path", "code", "line", "verdict", "why")


def load_review(path: Path = REVIEW) -> dict[tuple[str, str, str], dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = csv.DictReader((line for line in fh if not line.startswith("#")), delimiter="\t")
        return {(r["path"], r["code"], r["line"]): r for r in rows}


def findings(root: Path) -> tuple[list[dict], list[str]]:
    """The findings, and the files memlint could not check (its stderr lines):
    a file that was never analysed must not pass for a clean one."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "memlint",
            "check",
            "--no-cache",
            "--select",
            "ALL",
            "--output-format",
            "json",
            str(root),
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"memlint failed on {root}:\n{proc.stderr}")
    unchecked = [line for line in proc.stderr.splitlines() if line.startswith("memlint: error: ")]
    return json.loads(proc.stdout or "[]"), unchecked


def source_line(path: str, row: int) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        for i, text in enumerate(fh, 1):
            if i == row:
                return text.strip()
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default=",".join(CORPORA), help="comma-separated: " + ", ".join(CORPORA))
    parser.add_argument("--workdir", help="where the wheels are unpacked (default: a temporary folder)")
    args = parser.parse_args(argv)
    review = load_review()
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="memlint-corpora-"))
    verdicts: Counter[str] = Counter()
    per_code: Counter[str] = Counter()
    came_back = 0
    unchecked_total = 0
    for name in args.corpus.split(","):
        corpus = fetch(name, workdir)
        found, unchecked = findings(corpus.root)
        unchecked_total += len(unchecked)
        print(f"\n{corpus.requirement}: {corpus.files} files, {corpus.lines:,} lines, {len(found)} findings")
        for line in unchecked:
            print(f"  NOT CHECKED {line.removeprefix('memlint: error: ')}")
        for f in sorted(found, key=lambda f: (f["filename"], f["location"]["row"], f["code"])):
            rel = str(Path(f["filename"]).relative_to(corpus.root))
            line = source_line(f["filename"], f["location"]["row"])
            row = review.get((rel, f["code"], line))
            verdict = row["verdict"] if row else "NEW"
            verdicts[verdict] += 1
            per_code[f["code"]] += 1
            came_back += verdict == "FP"
            note = f" ({row['why']})" if row and row["why"] else ""
            print(f"  {verdict:<9} {f['code']} {rel}:{f['location']['row']}{note}")
    print("\nby rule: " + ", ".join(f"{code} {n}" for code, n in sorted(per_code.items())))
    print("by verdict: " + ", ".join(f"{v} {n}" for v, n in sorted(verdicts.items())))
    if came_back:
        print(f"{came_back} reviewed false alarm(s) reported again", file=sys.stderr)
    if unchecked_total:
        print(f"{unchecked_total} file(s) could not be checked", file=sys.stderr)
    return 1 if came_back or unchecked_total else 0


if __name__ == "__main__":
    sys.exit(main())
