"""bench/README.md is the page a newcomer reads: every benchmark script once,
with its latest figures, short; the session-by-session record lives in
bench/history/, and the documentation site shows both."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
README = BENCH / "README.md"
HISTORY = BENCH / "history"
LATEST_ROUND = "## Benchmarks added in the latest round"


def test_the_page_reads_in_five_minutes():
    assert len(README.read_text().splitlines()) <= 300, "latest figures only; move the tables to bench/history/"


def test_every_benchmark_script_has_its_section():
    text = README.read_text()
    scripts = sorted(p.name for p in BENCH.glob("*.py"))
    assert scripts
    missing = [name for name in scripts if name not in text]
    assert not missing, f"say in bench/README.md what these measure and how to run them: {missing}"


def test_new_benchmarks_have_a_place_at_the_end():
    headings = [line for line in README.read_text().splitlines() if line.startswith("## ")]
    assert headings[-1] == LATEST_ROUND


def test_the_history_is_kept_and_published():
    files = sorted(p.name for p in HISTORY.glob("*.md") if p.name != "README.md")
    assert len(files) >= 15
    index = (HISTORY / "README.md").read_text()
    page = (ROOT / "docs" / "benchmark-history.md").read_text()
    included = re.findall(r'^--8<-- "bench/history/([^"]+)"$', page, re.M)
    assert included == sorted(included, key=index.index)  # the index's order
    assert set(included) == set(files), "include every bench/history file in docs/benchmark-history.md"
    assert all(f"`{name}`" in index for name in files), "list every bench/history file in its README.md"


def test_the_benchmarks_page_includes_the_readme_and_links_the_history():
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    assert '--8<-- "bench/README.md"' in page
    assert "(benchmark-history.md)" in page
