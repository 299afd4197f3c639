"""`.py` files Python (or IPython) reads but libcst does not, checked through
a view of their text: notebook exports with IPython lines, and indentation
that mixes tabs and spaces. Through the real `memlint` command, and the views
themselves."""

import json
import textwrap

import pytest

from memlint.fix.fixer import fix_text
from memlint.read.notebook_magics import masked_view
from memlint.read.tab_indent import expand, expanded_view, python_width
from memlint.read.text_view import TextView, same_column
from memlint.rule.registry import rule_by_code

EXPORT = textwrap.dedent(
    """\
    #!/usr/bin/env python
    # coding: utf-8

    # In[1]:

    get_ipython().system('nvidia-smi')
    !pip install timm
    %matplotlib inline
    import torch

    # In[2]:

    %%time
    def train(model, loader, optimizer):
        for x in loader:
            optimizer.step()
            torch.cuda.empty_cache()
    train?
    files = !ls
    """
)

# Python reads the block under `for` as 12 columns deep (a tab, then 4
# spaces); libcst compares "\t    " with "    " as strings and refuses it.
MIXED = (
    "import torch\n"
    "from torch.cuda import amp\n"
    "\n"
    "def train(model, loader, optimizer, scaler):\n"
    "    for x in loader:\n"
    "\t    with amp.autocast():\n"
    "\t        loss = model(x)\n"
    "\t    scaler.scale(loss).backward()\n"
    "\t    scaler.step(optimizer)\n"
    "\t    scaler.update()\n"
    "\t    torch.cuda.empty_cache()\n"
    "    return model\n"
)


def write(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    return tmp_path / name


def notes(stderr):
    return [line for line in stderr.splitlines() if line.startswith("memlint: note: ")]


# Notebook exports


def test_export_with_ipython_lines_is_checked_and_says_so_once(tmp_path, run_memlint):
    write(tmp_path, "export.py", EXPORT)
    proc = run_memlint("check", "--no-cache", "export.py")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "export.py:17:9: MEM702" in proc.stdout
    assert "error" not in proc.stderr
    (note,) = notes(proc.stderr)
    assert "export.py" in note and "5 IPython lines" in note and "masked" in note
    proc = run_memlint("check", "--no-cache", "--output-format", "json", "export.py")
    assert [(i["code"], i["location"]["row"]) for i in json.loads(proc.stdout)] == [("MEM702", 17)]
    assert len(notes(proc.stderr)) == 1


def test_export_fix_keeps_ipython_lines_byte_for_byte(tmp_path, run_memlint):
    path = write(tmp_path, "export.py", EXPORT)
    diff = run_memlint("check", "--no-cache", "--diff", "export.py")
    assert diff.returncode == 1, diff.stdout + diff.stderr
    assert diff.stdout.count("\n-") == 1 and "-        torch.cuda.empty_cache()" in diff.stdout
    assert "\n+" not in diff.stdout.replace("+++ ", "")
    assert path.read_text() == EXPORT
    proc = run_memlint("check", "--no-cache", "--fix", "export.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert path.read_text() == EXPORT.replace("        torch.cuda.empty_cache()\n", "")
    assert len(notes(proc.stderr)) == 1
    again = run_memlint("check", "--no-cache", "--fix", "export.py")
    assert again.returncode == 0 and path.read_text() == EXPORT.replace("        torch.cuda.empty_cache()\n", "")


def test_export_with_another_syntax_error_is_still_an_error(tmp_path, run_memlint):
    write(tmp_path, "broken.py", EXPORT + "def oops(:\n")
    proc = run_memlint("check", "--no-cache", "broken.py")
    assert proc.returncode == 1
    assert "broken.py: syntax error" in proc.stderr and not notes(proc.stderr)


def test_a_file_that_parses_is_never_masked(tmp_path, run_memlint):
    # `x = !ls` is not Python, but `%` and `!` inside Python stay Python.
    write(tmp_path, "ok.py", "import torch\nx = 10 % 3\ny = not x != 1\n")
    proc = run_memlint("check", "--no-cache", "ok.py")
    assert proc.returncode == 0 and not notes(proc.stderr)


def test_masked_view_maps_back_only_untouched_magics():
    view = masked_view("%matplotlib inline\nimport torch\n")
    assert view.text == "...               \nimport torch\n"
    assert view.restore("...               \nimport torch\nx = 1\n") == "%matplotlib inline\nimport torch\nx = 1\n"
    assert view.restore("import torch\n") is None  # a fix removed the magic's line


# Indentation mixing tabs and spaces


def test_python_reads_tabs_to_the_next_multiple_of_8():
    assert [python_width(s) for s in ("\t", "    \t", "\t    ", "  \t  ", " \f\t")] == [8, 8, 12, 10, 8]
    text, _ = expand('x = """\n\tkept\n"""\nif x:\n\ty = 1\n')
    assert text == 'x = """\n\tkept\n"""\nif x:\n        y = 1\n'  # a string's tabs are its content


def test_mixed_indent_script_gets_its_findings_at_its_own_columns(tmp_path, run_memlint):
    write(tmp_path, "train.py", MIXED)
    proc = run_memlint("check", "--no-cache", "--output-format", "json", "train.py")
    got = [(i["code"], i["location"]["row"], i["location"]["column"]) for i in json.loads(proc.stdout)]
    # 1-based columns of the file itself: "\t    torch" -> column 6.
    assert got == [("MEM501", 2, 1), ("MEM501", 6, 11), ("MEM304", 9, 6), ("MEM702", 11, 6)], got
    assert "error" not in proc.stderr
    (note,) = notes(proc.stderr)
    assert "tabs" in note


def test_mixed_indent_fixes_keep_the_files_tabs_and_it_compiles(tmp_path, run_memlint):
    path = write(tmp_path, "train.py", MIXED)
    diff = run_memlint("check", "--no-cache", "--diff", "train.py")
    assert "-\t    torch.cuda.empty_cache()" in diff.stdout, diff.stdout + diff.stderr
    proc = run_memlint("check", "--no-cache", "--fix", "train.py")
    assert "Fixed 3 findings." in proc.stdout, proc.stdout + proc.stderr
    fixed = path.read_text()
    compile(fixed, "train.py", "exec")
    # The import and the autocast call rewritten (the latter inside the
    # tab-indented block, its tab kept), the empty_cache line gone, every
    # other line the file's own.
    assert fixed == (
        MIXED.replace("from torch.cuda import amp", "from torch import amp")
        .replace("amp.autocast()", 'amp.autocast("cuda")')
        .replace("\t    torch.cuda.empty_cache()\n", "")
    )
    # MEM304 (no fix) remains; a second run changes nothing.
    assert run_memlint("check", "--no-cache", "--fix", "train.py").returncode == 1
    assert path.read_text() == fixed


def test_a_fix_the_tabs_cannot_express_is_refused():
    # A fixed copy whose new line Python would read at another depth once
    # written with the file's tabs (or without them) is not restored.
    view = expanded_view("if x:\n    a = 1\n    if y:\n\t    b = 2\n    c = 3\n")
    assert view.text == "if x:\n    a = 1\n    if y:\n            b = 2\n    c = 3\n"
    assert view.column(4, 12) == 5 and view.column(4, 0) == 0 and view.column(2, 4) == 4
    assert view.restore(view.text.replace("b = 2", "b = 3")) == "if x:\n    a = 1\n    if y:\n\t    b = 3\n    c = 3\n"
    assert view.restore(view.text.replace("    c = 3", "          c = 3")) is None


def test_a_withheld_fix_is_reported_without_it_and_says_why():
    rule = rule_by_code("MEM702")
    source = "import torch\nfor b in loader:\n    torch.cuda.empty_cache()\n"
    stub = TextView(source, source, "read through a stub", lambda fixed: None, same_column, "the stub refuses it")
    result = fix_text(source, "t.py", [rule], view_of=lambda text: stub)
    assert result.text == source and not result.applied
    (finding,) = result.remaining
    assert finding.code == "MEM702" and finding.fix is None
    assert result.notes == ["read through a stub", "1 fix not applied: the stub refuses it"]


@pytest.mark.parametrize("view", [expanded_view, masked_view])
def test_no_view_for_plain_text(view):
    assert view("import torch\n\nx = 1\n") is None


# A mixed-indent script is a module of its project like any other: a tracker
# class of another module that keeps the tensor it is given is read (MEM102).
_METER = (
    "class AverageMeter:\n"
    "    def __init__(self):\n"
    "        self.sum = 0\n"
    "\n"
    "    def update(self, val, n=1):\n"
    "        self.sum += val * n\n"
)
_MIXED_TRAIN = (
    "import torch\n"
    "from meters import AverageMeter\n"
    "\n"
    "def train(model, loader, optimizer, criterion):\n"
    "    losses = AverageMeter()\n"
    "    for x, y in loader:\n"
    "\t    loss = criterion(model(x), y)\n"
    "\t    optimizer.zero_grad()\n"
    "\t    loss.backward()\n"
    "\t    optimizer.step()\n"
    "\t    losses.update(loss, x.size(0))\n"
    "    return losses\n"
)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_mixed_indent_script_is_linted_with_its_project(tmp_path, run_memlint, jobs):
    write(tmp_path, "meters.py", _METER)
    write(tmp_path, "train.py", _MIXED_TRAIN)
    (tmp_path / "pyproject.toml").write_text("")
    proc = run_memlint("check", "--no-cache", "-j", jobs, "--select", "MEM102", "--output-format", "json", ".")
    got = [(i["code"], i["filename"].rsplit("/", 1)[-1], i["location"]["row"]) for i in json.loads(proc.stdout)]
    assert got == [("MEM102", "train.py", 11)], (got, proc.stderr)
    (note,) = notes(proc.stderr)
    assert "tabs" in note


def test_mixed_indent_script_reads_its_projects_torch_pin(tmp_path, run_memlint):
    """A project pinned below torch 2.4 hears nothing of MEM501, whatever
    the file's indentation (RULES.md: the project's torch floor)."""
    write(tmp_path, "train.py", MIXED)
    write(tmp_path, "requirements.txt", "torch==1.9.0\n")
    (tmp_path / "pyproject.toml").write_text("")
    proc = run_memlint("check", "--no-cache", "--select", "MEM501", "--output-format", "json", ".")
    assert json.loads(proc.stdout) == [], proc.stderr
