"""Precision on research code: every finding on famous research repositories, against a review.

    python bench/research_findings.py                         # every repository in research/repos.tsv
    python bench/research_findings.py --repo NVlabs/stylegan2-ada-pytorch,vwxyzjn/cleanrl
    python bench/research_findings.py --fetch --mirror /work/.mirror   # export missing trees first
    python bench/research_findings.py --markdown              # the per-family table for README.md
    python bench/research_findings.py --json                  # every finding with its verdict

A sibling of real_code_findings.py (released wheels) for issue 30: research and
example code (GANs, self-supervised learning, detection, segmentation,
diffusion, LLM fine-tuning, reinforcement learning, speech, notebook courses)
is where the frozen/copied/offloaded-model shapes live. The repositories and
their pinned commits are listed in `research/repos.tsv`; each tree is kept in
the git-ignored `bench/.corpora/research/<owner>__<name>/` (never committed;
`--fetch` exports the source, notebook and packaging files of the pinned
commit from a local mirror or a clone from GitHub).

The real command, `memlint check --select ALL --output-format json --no-cache`,
runs on each repository as a whole tree (so cross-module facts are the ones a
user gets), and each finding is looked up in `research/reviewed.tsv` by
(repository, path, code, text of the source line), so the review survives line
shifts between memlint versions:

- `TP`: the code has the problem the rule describes;
- `FP`: a false alarm (must go away; exit 1 when one is reported again);
- `judgment`: debatable, kept as it stands.

Findings not in the review are listed as NEW, for the next review. Reviewed
rows that no longer come back are listed as GONE (a fixed false alarm, or a
true finding lost). Figures are per rule family (MEM1xx..MEM8xx) and per rule.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_code_findings import findings, source_line  # noqa: E402

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "research" / "repos.tsv"
REVIEW = HERE / "research" / "reviewed.tsv"
TREES = HERE / ".corpora" / "research"
MANIFEST_FIELDS = ("repo", "commit", "kind", "what")
REVIEW_FIELDS = ("repo", "path", "code", "line", "verdict", "why")
VERDICTS = ("TP", "FP", "judgment")
# Files a tree keeps: what memlint reads (sources, notebooks) and what says
# which torch a project needs (issue 30's torch floor).
KEEP_SUFFIXES = (".py", ".pyi", ".ipynb")
KEEP_NAMES = ("pyproject.toml", "setup.py", "setup.cfg", "environment.yml", "environment.yaml")
# A notebook whose exercise cells do not parse ("# TODO: fill in") is checked
# without them (memlint names them); anything else that could not be checked
# fails the run, as in real_code_findings.py.
BROKEN_CELLS = re.compile(r"\.ipynb: (cell \d+: syntax error[^;]*(; |$))+$")


@dataclass(frozen=True)
class Repo:
    name: str  # owner/name
    commit: str
    kind: str
    what: str

    @property
    def folder(self) -> str:
        return self.name.replace("/", "__")


@dataclass
class Scored:
    repo: str
    path: str
    row: int
    code: str
    line: str
    verdict: str  # TP / FP / judgment / NEW
    why: str
    message: str
    cell: int | None = None  # a notebook's cell number (1-based, every cell counted)

    @property
    def where(self) -> str:
        return f"{self.path}:cell{self.cell}:{self.row}" if self.cell is not None else f"{self.path}:{self.row}"


def _rows(path: Path, fields: tuple[str, ...]) -> Iterable[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        # Plain tab-separated text: a source line may hold quotes, which csv must not interpret.
        reader = csv.DictReader(
            (line for line in fh if not line.startswith("#")), delimiter="\t", quoting=csv.QUOTE_NONE
        )
        if tuple(reader.fieldnames or ()) != fields:
            raise SystemExit(f"{path}: columns {tuple(reader.fieldnames or ())}, expected {fields}")
        yield from reader


def load_manifest(path: Path = MANIFEST) -> list[Repo]:
    return [Repo(r["repo"], r["commit"], r["kind"], r["what"]) for r in _rows(path, MANIFEST_FIELDS)]


def load_review(path: Path = REVIEW) -> dict[tuple[str, str, str, str], dict[str, str]]:
    """(repo, path, code, source line) -> the reviewed row. A key reviewed twice
    (the same line text twice in one file) must carry one verdict."""
    review: dict[tuple[str, str, str, str], dict[str, str]] = {}
    if not path.is_file():
        return review
    for r in _rows(path, REVIEW_FIELDS):
        key = (r["repo"], r["path"], r["code"], r["line"])
        if r["verdict"] not in VERDICTS:
            raise SystemExit(f"{path}: unknown verdict {r['verdict']!r} for {key}")
        if key in review and review[key]["verdict"] != r["verdict"]:
            raise SystemExit(f"{path}: two verdicts for {key}")
        review[key] = r
    return review


def family(code: str) -> str:
    """MEM702 -> MEM7xx."""
    return code[:4] + "xx"


def line_text(path: Path, row: int, cell: int | None = None) -> str:
    """The stripped text of the finding's line: in a notebook, line ``row`` of
    cell ``cell`` (memlint numbers every cell from 1, markdown too)."""
    if cell is None:
        return source_line(str(path), row)
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = cells[cell - 1]["source"]
    except (OSError, ValueError, KeyError, IndexError):
        return ""
    lines = ("".join(text) if isinstance(text, list) else text).splitlines()
    return lines[row - 1].strip() if 0 < row <= len(lines) else ""


def score(
    repo: str, found: list[dict], root: Path, review: dict[tuple[str, str, str, str], dict[str, str]]
) -> list[Scored]:
    """Each finding of one repository (memlint's JSON records) with its verdict."""
    out = []
    for f in sorted(found, key=lambda f: (f["filename"], f.get("cell") or 0, f["location"]["row"], f["code"])):
        rel = Path(f["filename"]).resolve().relative_to(root.resolve()).as_posix()
        text = line_text(root / rel, f["location"]["row"], f.get("cell"))
        row = review.get((repo, rel, f["code"], text))
        out.append(
            Scored(
                repo=repo,
                path=rel,
                row=f["location"]["row"],
                code=f["code"],
                line=text,
                verdict=row["verdict"] if row else "NEW",
                why=row["why"] if row else "",
                message=f.get("message", ""),
                cell=f.get("cell"),
            )
        )
    return out


def gone(
    scored: list[Scored], review: dict[tuple[str, str, str, str], dict[str, str]], repos: Iterable[str]
) -> list[dict[str, str]]:
    """Reviewed rows of the repositories run that no finding matched any more."""
    seen = {(s.repo, s.path, s.code, s.line) for s in scored}
    wanted = set(repos)
    return [r for key, r in sorted(review.items()) if key[0] in wanted and key not in seen]


def tally(scored: list[Scored], key=lambda s: family(s.code)) -> dict[str, Counter[str]]:
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for s in scored:
        table[key(s)][s.verdict] += 1
        table[key(s)]["findings"] += 1
    return dict(sorted(table.items()))


def markdown_table(table: dict[str, Counter[str]], first: str = "family") -> str:
    cols = ("findings", "TP", "FP", "judgment", "NEW")
    lines = [f"| {first} | " + " | ".join(cols) + " |", "| --- | " + " | ".join("---:" for _ in cols) + " |"]
    total: Counter[str] = Counter()
    for name, counts in table.items():
        total.update(counts)
        lines.append(f"| {name} | " + " | ".join(str(counts[c]) for c in cols) + " |")
    lines.append("| **all** | " + " | ".join(f"**{total[c]}**" for c in cols) + " |")
    return "\n".join(lines)


# ---- fetching (only with --fetch; CI never does) -------------------------------------------


def _keep(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        path.endswith(KEEP_SUFFIXES)
        or name in KEEP_NAMES
        or (name.startswith("requirements") and name.endswith(".txt"))
    )


def export(git_dir: Path, commit: str, dest: Path) -> int:
    """Write the kept files of ``commit`` under ``dest``; returns how many.
    Files whose blob the snapshot lacks (large files) are skipped."""
    listing = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "-z", commit], capture_output=True, check=True
    ).stdout.decode("utf-8", "surrogateescape")
    written = 0
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind != "blob" or mode == "120000" or not _keep(path):
            continue
        data = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "blob", blob], capture_output=True)
        if data.returncode != 0:
            print(f"  skipped {path} (blob not in the snapshot)", file=sys.stderr)
            continue
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data.stdout)
        written += 1
    return written


def fetch(repo: Repo, trees: Path, mirror: Path | None) -> Path:
    """The tree of ``repo`` at its pinned commit, exported once."""
    dest = trees / repo.folder
    marker = dest / ".complete"
    if marker.is_file() and marker.read_text().strip() == repo.commit:
        return dest
    git_dir = mirror / repo.name.replace("/", "+") / "repo" if mirror else None
    scratch = None
    if git_dir is None or not git_dir.is_dir():
        scratch = Path(tempfile.mkdtemp(prefix="memlint-research-"))
        git_dir = scratch / "repo.git"
        url = f"https://github.com/{repo.name}.git"
        subprocess.run(["git", "clone", "--quiet", "--bare", "--filter=blob:limit=2m", url, str(git_dir)], check=True)
    if dest.exists():
        subprocess.run(["rm", "-rf", str(dest)], check=True)
    dest.mkdir(parents=True)
    n = export(git_dir, repo.commit, dest)
    marker.write_text(repo.commit + "\n")
    print(f"{repo.name}: {n} files at {repo.commit[:10]}", file=sys.stderr)
    if scratch:
        subprocess.run(["rm", "-rf", str(scratch)], check=True)
    return dest


# ---- the run ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", help="comma-separated owner/name (default: all in research/repos.tsv)")
    parser.add_argument("--trees", default=str(TREES), help=f"where the trees are (default: {TREES})")
    parser.add_argument("--fetch", action="store_true", help="export missing trees at their pinned commit")
    parser.add_argument("--mirror", help="folder of bare snapshots <owner>+<name>/repo to export from")
    parser.add_argument("--json", action="store_true", help="print every finding with its verdict as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the per-family and per-rule tables")
    args = parser.parse_args(argv)

    repos = load_manifest(MANIFEST)
    if args.repo:
        wanted = set(args.repo.split(","))
        unknown = wanted - {r.name for r in repos}
        if unknown:
            raise SystemExit(f"not in {MANIFEST.name}: {', '.join(sorted(unknown))}")
        repos = [r for r in repos if r.name in wanted]
    review = load_review(REVIEW)
    trees = Path(args.trees)
    scored: list[Scored] = []
    unchecked: list[str] = []
    cells_left_out: list[str] = []
    missing: list[str] = []
    for repo in repos:
        root = fetch(repo, trees, Path(args.mirror) if args.mirror else None) if args.fetch else trees / repo.folder
        marker = root / ".complete"
        if not marker.is_file() or marker.read_text().strip() != repo.commit:
            missing.append(repo.name)
            continue
        found, bad = findings(root)
        for b in bad:
            what = f"{repo.name}: {b.removeprefix('memlint: error: ')}"
            (cells_left_out if BROKEN_CELLS.search(what) else unchecked).append(what)
        scored += score(repo.name, found, root.resolve(), review)
    lost = gone(scored, review, [r.name for r in repos if r.name not in missing])
    came_back = [s for s in scored if s.verdict == "FP"]

    if args.json:
        print(json.dumps({"findings": [asdict(s) for s in scored], "gone": lost, "missing": missing}, indent=1))
    elif args.markdown:
        print(markdown_table(tally(scored)))
        print()
        print(markdown_table(tally(scored, key=lambda s: s.code), first="rule"))
        print()
        print(markdown_table(tally(scored, key=lambda s: s.repo), first="repository"))
    else:
        for s in scored:
            note = f" ({s.why})" if s.why else f" {s.message}" if s.verdict == "NEW" else ""
            print(f"{s.verdict:<9} {s.code} {s.repo} {s.where}{note}")
        for r in lost:
            print(f"GONE      {r['code']} {r['repo']} {r['path']} [{r['verdict']}] {r['line']}")
        print()
        print(markdown_table(tally(scored)))
        print()
        print(markdown_table(tally(scored, key=lambda s: s.code), first="rule"))
    for name in missing:
        print(f"MISSING {name}: no tree at its pinned commit (run with --fetch)", file=sys.stderr)
    for line in cells_left_out:
        print(f"CELLS LEFT OUT {line}", file=sys.stderr)
    for line in unchecked:
        print(f"NOT CHECKED {line}", file=sys.stderr)
    if came_back:
        print(f"{len(came_back)} reviewed false alarm(s) reported again", file=sys.stderr)
    return 1 if came_back or unchecked or missing else 0


if __name__ == "__main__":
    sys.exit(main())
