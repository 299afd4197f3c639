"""The documentation site: it builds under --strict, a broken page fails that
build, every rule has a page generated from its class, and every link memlint
hands out (SARIF helpUri, JSON url, the language server, the README) leads to a
page: in the repository by default, on the built site when MEMLINT_DOCS_URL
names it."""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from memlint import DOCS_URL_VARIABLE, REPOSITORY_DOCS_URL, REPOSITORY_URL, SITE_URL, docs_url, rule_doc_url
from memlint.reporters import sarif
from memlint.rule.registry import all_rules
from memlint.rule.table import readable_message
from memlint.server.rule_links import rule_link

pytest.importorskip("mkdocs")
pytest.importorskip("material")

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "mkdocs.yml"


def _load_hook():
    spec = importlib.util.spec_from_file_location("rule_pages", ROOT / "docs" / "hooks" / "rule_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rule_pages = _load_hook()


def build(config: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=600,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    done = build(CONFIG, out)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def built_page(site: Path, url: str) -> Path:
    assert url.startswith(SITE_URL), url
    return site / url[len(SITE_URL) :] / "index.html"


def repository_file(url: str) -> Path:
    """The file a link into the repository shows (``.../blob/main/docs/cli.md``)."""
    prefix = f"{REPOSITORY_URL}/blob/main/"
    assert url.startswith(prefix), url
    return ROOT / url[len(prefix) :]


@pytest.fixture
def site_links(monkeypatch):
    monkeypatch.setenv(DOCS_URL_VARIABLE, SITE_URL)


def test_site_url_is_the_docs_url():
    assert yaml.safe_load(CONFIG.read_text())["site_url"] == SITE_URL


def test_links_lead_to_the_repository_by_default(monkeypatch):
    """Before the site is published, every link memlint hands out is a file
    of the repository (the docs/ pages, the rule's own module)."""
    monkeypatch.delenv(DOCS_URL_VARIABLE, raising=False)
    assert docs_url() == REPOSITORY_DOCS_URL and repository_file(docs_url()).is_dir()
    log = json.loads(sarif.render([], root=str(ROOT)))
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == REPOSITORY_DOCS_URL
    for descriptor in driver["rules"]:
        url = descriptor["helpUri"]
        assert url == rule_doc_url(descriptor["id"]) == rule_link(descriptor["id"])
        module = repository_file(url)
        assert module.is_file() and f'code = "{descriptor["id"]}"' in module.read_text(), url


def test_one_setting_moves_every_link(monkeypatch):
    monkeypatch.setenv(DOCS_URL_VARIABLE, "https://mirror.example/memlint")
    assert rule_doc_url("MEM101") == "https://mirror.example/memlint/rules/MEM101/"
    driver = json.loads(sarif.render([], root=str(ROOT)))["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://mirror.example/memlint/"
    assert driver["rules"][0]["helpUri"].startswith("https://mirror.example/memlint/rules/")
    assert rule_link("MEM702") == "https://mirror.example/memlint/rules/MEM702/"


def test_every_rule_has_a_page_at_its_link(site, site_links):
    for rule in all_rules():
        page = built_page(site, rule_doc_url(rule.code))
        assert page.is_file(), rule.code
        html = page.read_text()
        assert f"{rule.code} {rule.name}" in html
    index = (site / "rules" / "index.html").read_text()
    assert all(f'href="{rule.code}/"' in index for rule in all_rules())


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_page_holds_what_the_rule_class_holds(rule):
    page = rule_pages.render_rule_page(rule)
    assert f"[{rule.code}]" not in page  # no link to itself
    page = re.sub(r"\[(MEM\d{3})\]\(\1\.md\)", r"\1", page)  # the other rules it names are links
    # What `memlint rule CODE` prints, section by section.
    for title, text in rule.doc_sections().items():
        assert f"## {title}\n\n{text}\n" in page, title
    assert readable_message(rule.message) in page
    indented = lambda code: "\n".join(("    " + line).rstrip() for line in code.splitlines())  # noqa: E731
    for example in rule.invalid:
        assert indented(example.source) in page
        if example.fixed is not None:
            assert indented(example.fixed) in page
    for example in rule.valid:
        assert indented(example.source) in page
        assert " ".join(example.why.split()).replace('"', "'") in page
    assert ("Off by default" in page) is (not rule.default_enabled)
    assert f"**{rule.fix_safety.value}**" in page


def test_a_rule_that_reads_the_project_says_what_on_its_page():
    """A rule whose findings depend on other modules (``reads_project``) names
    those facts, and its page shows them under "Facts from other modules"."""
    from memlint.rule.registry import all_rules

    for rule in all_rules():
        page = rule_pages.render_rule_page(rule)
        assert "## Facts from other modules" in page
        if rule.reads_project:
            assert rule.project_facts, f"{rule.code} reads the project but its page does not say what"
        if rule.project_facts:
            assert rule.project_facts in page


def test_sarif_help_uri_and_server_links_lead_to_rule_pages(site, site_links):
    log = json.loads(sarif.render([], root=str(ROOT)))
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == SITE_URL
    for descriptor in driver["rules"]:
        assert descriptor["helpUri"] == rule_doc_url(descriptor["id"])
        assert built_page(site, descriptor["helpUri"]).is_file()
        assert rule_link(descriptor["id"]) == descriptor["helpUri"]


def test_readme_links_are_relative_and_lead_to_files():
    """Links into docs/ render where the code is hosted; the site's address
    (not published yet) appears only as that."""
    text = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert sum(link.startswith("docs/") for link in local) >= 7
    for link in local:
        assert (ROOT / link).exists(), link
    assert not [link for link in links if link.startswith(SITE_URL)]


@pytest.mark.parametrize(
    "breakage",
    [
        pytest.param(None, id="intact-copy-builds"),
        pytest.param(("cli.md", "\nSee [the missing page](no-such-page.md).\n"), id="broken-link"),
        pytest.param(("orphan.md", "# A page no one listed in the nav\n"), id="page-not-in-nav"),
        pytest.param(("cli.md", '\n--8<-- "bench/NO_SUCH_FILE.md"\n'), id="missing-snippet"),
    ],
)
def test_a_broken_page_fails_the_strict_build(tmp_path, breakage):
    """What CI's `mkdocs build --strict` is there for: proven on a copy."""
    shutil.copytree(ROOT / "docs", tmp_path / "docs", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(CONFIG, tmp_path / "mkdocs.yml")
    (tmp_path / "bench").mkdir()
    shutil.copy(ROOT / "bench" / "README.md", tmp_path / "bench" / "README.md")
    shutil.copytree(ROOT / "bench" / "history", tmp_path / "bench" / "history")
    shutil.copy(ROOT / "CONTRIBUTING.md", tmp_path / "CONTRIBUTING.md")
    if breakage is not None:
        name, text = breakage
        page = tmp_path / "docs" / name
        page.write_text((page.read_text() if page.exists() else "") + text)
    done = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    if breakage is None:  # the copy itself is sound, so a failure below is the breakage's
        assert done.returncode == 0, done.stdout + done.stderr
        return
    assert done.returncode != 0
    assert "Aborted" in done.stdout + done.stderr or "Error" in done.stdout + done.stderr


def test_read_the_docs_installs_the_pinned_theme():
    command = yaml.safe_load((ROOT / ".readthedocs.yaml").read_text())["build"]["jobs"]["post_install"][0]
    pattern = re.search(r"grep -oE '([^']+)' requirements-dev.txt", command).group(1)
    pins = re.findall(pattern, (ROOT / "requirements-dev.txt").read_text(), re.M)
    assert len(pins) == 1 and pins[0].startswith("mkdocs-material=="), pins


def test_rule_codes_in_prose_link_to_their_pages_but_code_stays_code():
    known = {"MEM101", "MEM102", "MEM103"}
    text = "see MEM101 and `MEM102`\n```python\nx = 1  # MEM103\n```\nMEM103 here, MEM999 unknown"
    assert rule_pages._link_codes(text, "MEM103", known) == (
        "see [MEM101](MEM101.md) and `MEM102`\n```python\nx = 1  # MEM103\n```\nMEM103 here, MEM999 unknown"
    )
