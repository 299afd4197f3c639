"""--add-noqa: unit cases for where the comment goes, and the real command
(a second run changes nothing; check is clean after it; notebooks)."""

import json
import textwrap

import pytest

from memlint.lint.add_noqa import add_noqa
from memlint.lint.engine import lint
from memlint.rule.registry import select_rules


def _silenced(text):
    return lint(text, "t.py", select_rules(None, [], []))[0] == []


@pytest.mark.parametrize(
    "before, findings, after",
    [
        ("x = 1\n", [(1, "MEM101")], "x = 1  # noqa: MEM101\n"),
        ("x = 1   \r\n", [(1, "MEM101")], "x = 1  # noqa: MEM101\r\n"),
        ("x = 1  # keep me\n", [(1, "MEM101")], "x = 1  # keep me  # noqa: MEM101\n"),
        ("x = 1  # noqa: MEM702 because\n", [(1, "MEM101")], "x = 1  # noqa: MEM702, MEM101 because\n"),
        ("x = 1\n", [(1, "MEM702"), (1, "MEM101"), (1, "MEM101")], "x = 1  # noqa: MEM101, MEM702\n"),
        # a noqa already on another line of the statement gets the code
        ("f(a,  # noqa: MEM702\n  b)\n", [(2, "MEM101")], "f(a,  # noqa: MEM702, MEM101\n  b)\n"),
        # a line that ends inside a string cannot take a comment: the statement's last line does
        ('f("""a\nb""", c)\n', [(1, "MEM101")], 'f("""a\nb""", c)  # noqa: MEM101\n'),
        # nor can a line continued by a backslash
        ("x = 1 + \\\n    2\n", [(1, "MEM101")], "x = 1 + \\\n    2  # noqa: MEM101\n"),
        # no final newline
        ("x = 1", [(1, "MEM101")], "x = 1  # noqa: MEM101"),
        # lines without findings keep every byte, form feeds included
        ("\x0cy = 2\t\nx = 1\n", [(2, "MEM101")], "\x0cy = 2\t\nx = 1  # noqa: MEM101\n"),
    ],
)
def test_where_the_comment_goes(before, findings, after):
    text, placed = add_noqa(before, findings)
    assert text == after
    assert placed == len(findings)
    compile(text, "t.py", "exec")


def test_bare_noqa_is_left_alone():
    assert add_noqa("f(a,  # noqa\n  b)\n", [(2, "MEM101")]) == ("f(a,  # noqa\n  b)\n", 0)


def test_text_that_does_not_tokenize_is_left_alone():
    assert add_noqa("f(\n", [(1, "MEM101")]) == ("f(\n", 0)


LEAKY = textwrap.dedent(
    """\
    import torch

    def train(model, loader, optimizer, criterion):
        total = 0.0
        for x, y in loader:
            loss = criterion(
                model(x), y)  # the real loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            total += loss  # noqa: MEM702
            torch.cuda.empty_cache()
        return total
    """
)


def test_command_silences_everything_and_is_idempotent(tmp_path, run_memlint):
    path = tmp_path / "train.py"
    path.write_bytes(LEAKY.replace("\n", "\r\n").encode())
    assert run_memlint("check", "train.py").returncode == 1
    out = run_memlint("check", "--add-noqa", "train.py")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Added 2 noqa directives." in out.stdout
    text = path.read_bytes().decode()
    assert "        total += loss  # noqa: MEM702, MEM101\r\n" in text
    assert "        torch.cuda.empty_cache()  # noqa: MEM702\r\n" in text
    assert "\n" not in text.replace("\r\n", "")
    assert _silenced(text.replace("\r\n", "\n"))
    assert run_memlint("check", "train.py").returncode == 0
    before = path.read_bytes()
    again = run_memlint("check", "--add-noqa", "train.py")
    assert again.returncode == 0 and "Added 0 noqa directives." in again.stdout
    assert path.read_bytes() == before


def test_command_refuses_to_combine_with_fix(tmp_path, run_memlint):
    (tmp_path / "t.py").write_text(LEAKY)
    out = run_memlint("check", "--add-noqa", "--fix", "t.py")
    assert out.returncode == 2 and "--add-noqa" in out.stderr


def test_notebook_cells_get_their_comments(tmp_path, run_memlint):
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Training\n"]},
        {
            "cell_type": "code",
            "execution_count": 1,
            "metadata": {},
            "outputs": [],
            "source": ["import torch\n", "%matplotlib inline\n", "total = 0.0"],
        },
        {
            "cell_type": "code",
            "execution_count": 2,
            "metadata": {},
            "outputs": [],
            "source": [
                "for x, y in loader:\n",
                "    loss = criterion(model(x), y)\n",
                "    loss.backward()\n",
                "    optimizer.step()\n",
                "    optimizer.zero_grad()\n",
                "    total += loss\n",
                "    torch.cuda.empty_cache()\n",
            ],
        },
    ]
    nb = {
        "cells": cells,
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(nb, indent=1))
    assert run_memlint("check", "nb.ipynb").returncode == 1
    out = run_memlint("check", "--add-noqa", "nb.ipynb")
    assert out.returncode == 0, out.stdout + out.stderr
    written = json.loads(path.read_text())
    assert written["cells"][1]["source"] == cells[1]["source"]
    assert written["cells"][2]["source"][5:] == [
        "    total += loss  # noqa: MEM101\n",
        "    torch.cuda.empty_cache()  # noqa: MEM702\n",
    ]
    assert run_memlint("check", "nb.ipynb").returncode == 0
    before = path.read_bytes()
    run_memlint("check", "--add-noqa", "nb.ipynb")
    assert path.read_bytes() == before


def test_example_project_adopts_memlint(tmp_path, run_memlint):
    import shutil
    from pathlib import Path

    shutil.copytree(Path(__file__).parent.parent / "fixtures" / "examples", tmp_path / "examples")
    assert run_memlint("check", "examples").returncode == 1
    assert run_memlint("check", "--add-noqa", "examples").returncode == 0
    snapshot = {p: p.read_bytes() for p in (tmp_path / "examples").rglob("*.py")}
    assert run_memlint("check", "examples").returncode == 0
    run_memlint("check", "--add-noqa", "examples")
    assert {p: p.read_bytes() for p in snapshot} == snapshot
