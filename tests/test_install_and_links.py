"""Install commands that work before torch-memlint is on PyPI, and the
documentation links memlint hands out (JSON's url among them), which lead to
files of the repository unless MEMLINT_DOCS_URL says otherwise."""

import json
import re
import textwrap
from pathlib import Path

import tomllib

import memlint

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["README.md", "docs/index.md", "docs/integrations.md", "docs/verify.md", "action.yml"]
# `pip install torch-memlint`, `'torch-memlint[server]'`, `torch-memlint==1.0`: from the index.
FROM_PYPI = re.compile(
    r"""pip install[^\n]*?(?<![\w/-])['"]?torch-memlint(\[[\w,]+\])?(==[^\s'"]*)?['"]?(?!\s*@)(?=[\s'"`)]|$)"""
)


def test_no_page_installs_from_pypi_unless_marked_for_when_it_is_published():
    for page in PAGES:
        for paragraph in re.split(r"\n\s*\n", (ROOT / page).read_text()):
            for line in paragraph.splitlines():
                if FROM_PYPI.search(line) and "$MEMLINT_VERSION" not in line:
                    said = paragraph.lower()
                    assert "once" in said and "publish" in said, f"{page}: {line}"


def test_the_pages_give_commands_that_work_today():
    readme = (ROOT / "README.md").read_text()
    assert "pip install ." in readme
    assert f'pip install "torch-memlint @ git+{memlint.REPOSITORY_URL}"' in readme
    assert "python -m build && pip install dist/torch_memlint-" in readme
    index = (ROOT / "docs" / "index.md").read_text()
    assert f"git clone {memlint.REPOSITORY_URL}" in index and "pip install '.[server]'" in index
    for page in PAGES:
        for url in re.findall(r"git\+(https://[^\s\"'@]+)", (ROOT / page).read_text()):
            assert url == memlint.REPOSITORY_URL, (page, url)


def test_extras_hint_names_what_pyproject_declares():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {k: tuple(v) for k, v in declared.items()} == memlint.EXTRAS
    hint = memlint.install_hint("server")
    assert hint.startswith("pip install 'pygls>=2.1.1' 'lsprotocol>=2025.0.0'") and "'.[server]'" in hint
    assert "torch-memlint[" not in hint


LEAKY = textwrap.dedent(
    """\
    import torch

    def train(model, loader, optimizer):
        for x in loader:
            optimizer.step()
            torch.cuda.empty_cache()
    """
)


def test_json_and_rdjson_carry_the_rule_link(tmp_path, run_memlint):
    (tmp_path / "train.py").write_text(LEAKY)
    env = {"MEMLINT_DOCS_URL": ""}
    (item,) = json.loads(run_memlint("check", "--no-cache", "--output-format", "json", "train.py", env=env).stdout)
    assert item["url"] == f"{memlint.REPOSITORY_URL}/blob/main/rules/mem702_empty_cache_in_loop.py"
    assert (ROOT / "rules" / "mem702_empty_cache_in_loop.py").is_file()
    lines = run_memlint("check", "--no-cache", "--output-format", "json-lines", "train.py", env=env).stdout
    assert json.loads(lines)["url"] == item["url"]
    rd = json.loads(run_memlint("check", "--no-cache", "--output-format", "rdjson", "train.py", env=env).stdout)
    assert rd["diagnostics"][0]["code"] == {"value": "MEM702", "url": item["url"]}
    moved = {"MEMLINT_DOCS_URL": "https://docs.example/memlint/"}
    (item,) = json.loads(run_memlint("check", "--no-cache", "--output-format", "json", "train.py", env=moved).stdout)
    assert item["url"] == "https://docs.example/memlint/rules/MEM702/"
