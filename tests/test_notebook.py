"""Notebooks through the real `memlint` command, plus the masking of IPython
syntax and the in-place JSON editing they rely on."""

import json
import os
import stat
import subprocess

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlint.lint.engine import lint_text
from memlint.read.notebook_json import replace_sources, source_spans, split_source
from memlint.read.notebook_magics import mask_cell, unmask
from memlint.rule.registry import all_rules

LOOP = "for x, y in loader:\n    loss = model(x)\n    torch.cuda.empty_cache()\n    print(loss.item())"
LOOP_FIXED = "for x, y in loader:\n    loss = model(x)\n    print(loss.item())"


@pytest.fixture
def memlint_cli(tmp_path, monkeypatch, capsys):
    """`memlint` in this process (the subprocess tests cover the installed
    command; these cover the behaviour without paying for an interpreter)."""
    from memlint.frontends.cli import main

    def run(*args):
        monkeypatch.chdir(tmp_path)
        capsys.readouterr()
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out, err)

    return run


def code(source, count=None, outputs=(), metadata=None, as_list=True):
    return {
        "cell_type": "code",
        "execution_count": count,
        "metadata": metadata or {},
        "outputs": list(outputs),
        "source": split_source(source) if as_list else source,
    }


def markdown(source):
    return {"cell_type": "markdown", "metadata": {}, "source": split_source(source)}


def notebook(*cells, language="python"):
    return {
        "cells": list(cells),
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": language, "name": "python3"},
            "language_info": {"name": language, "version": "3.11.7"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def dump(nb, indent=1, ensure_ascii=False):
    # nbformat's own layout: indent 1, keys as given, a trailing newline
    return json.dumps(nb, indent=indent, ensure_ascii=ensure_ascii) + "\n"


def write_nb(tmp_path, nb, name="nb.ipynb", **kw):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump(nb, **kw), encoding="utf-8")
    return path


OUTPUT = {"name": "stdout", "output_type": "stream", "text": ["0.25\n", "naïve ✓\n"]}
IMAGE = {
    "data": {"image/png": "iVBORw0KGgo=\n", "text/plain": ["<Figure>"]},
    "metadata": {},
    "output_type": "display_data",
}


def leaky_notebook():
    return notebook(
        markdown("# Training\nThe loop below."),
        code("%matplotlib inline\nimport torch\n!nvidia-smi", count=1),
        code(LOOP, count=2, outputs=[OUTPUT, IMAGE], metadata={"tags": ["train"]}),
        code("print('done')", count=3),
    )


# -- check -----------------------------------------------------------------


def test_check_names_the_cell(tmp_path, run_memlint):
    write_nb(tmp_path, leaky_notebook())
    proc = run_memlint("check", "nb.ipynb")
    assert proc.returncode == 1
    # cell 3 counts the markdown cell; line and column are within the cell
    assert "nb.ipynb:cell 3:3:5: MEM702" in proc.stdout
    assert "torch.cuda.empty_cache()" in proc.stdout  # the excerpt, from the cell
    assert "Found 1 finding" in proc.stdout


def test_json_and_sarif_carry_cell_and_line(tmp_path, run_memlint):
    write_nb(tmp_path, leaky_notebook())
    items = json.loads(run_memlint("check", "--output-format", "json", "nb.ipynb").stdout)
    assert [(i["cell"], i["location"], i["code"]) for i in items] == [(3, {"row": 3, "column": 5}, "MEM702")]
    (edit,) = items[0]["fix"]["edits"]
    assert edit["location"]["row"] == 3  # fix edits are placed in the cell too
    sarif = json.loads(run_memlint("check", "--output-format", "sarif", "nb.ipynb").stdout)
    (result,) = sarif["runs"][0]["results"]
    assert result["properties"]["cell"] == 3
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 3


def test_github_format_names_the_cell(tmp_path, memlint_cli):
    write_nb(tmp_path, leaky_notebook())
    out = memlint_cli("check", "--output-format", "github", "nb.ipynb").stdout
    # GitHub shows the .ipynb file's own lines: the annotation sits on the
    # line of the JSON that holds the cell's third source line.
    text = (tmp_path / "nb.ipynb").read_text()
    (json_line,) = [n for n, line in enumerate(text.splitlines(), 1) if "torch.cuda.empty_cache()" in line]
    assert out.startswith(f"::warning file=nb.ipynb,line={json_line},endLine={json_line},title=")
    assert "::cell 3, line 3: MEM702 " in out


def test_github_annotations_on_one_string_sources_and_split_lines(tmp_path, memlint_cli):
    """A cell whose source is one string shows on the string's line; list
    items that hold several lines are followed line by line."""
    nb = notebook(code("import torch\n" + LOOP, as_list=False))
    write_nb(tmp_path, nb)
    text = (tmp_path / "nb.ipynb").read_text()
    (json_line,) = [n for n, line in enumerate(text.splitlines(), 1) if "empty_cache" in line]
    out = memlint_cli("check", "--output-format", "github", "nb.ipynb").stdout
    assert out.startswith(f"::warning file=nb.ipynb,line={json_line},endLine={json_line},")
    nb = notebook(code("import torch\n"), code(LOOP))
    nb["cells"][1]["source"] = [
        "for x, y in loader:\n    loss = model(x)\n",
        "    torch.cuda.empty_cache()\n",
        "    print(loss.item())",
    ]
    write_nb(tmp_path, nb)
    text = (tmp_path / "nb.ipynb").read_text()
    (json_line,) = [n for n, line in enumerate(text.splitlines(), 1) if "empty_cache" in line]
    out = memlint_cli("check", "--output-format", "github", "nb.ipynb").stdout
    assert out.startswith(f"::warning file=nb.ipynb,line={json_line},endLine={json_line},")
    assert "cell 2, line 3: MEM702" in out


def test_dataflow_reaches_across_cells(tmp_path, memlint_cli):
    # `import torch as T` in one cell resolves the call in another
    nb = notebook(code("import torch as T"), code("for b in loader:\n    T.cuda.empty_cache()"))
    write_nb(tmp_path, nb)
    proc = memlint_cli("check", "--output-format", "concise", "nb.ipynb")
    assert "nb.ipynb:cell 2:2:5: MEM702" in proc.stdout


def test_clean_notebook_passes(tmp_path, memlint_cli):
    write_nb(
        tmp_path, notebook(code("import torch\nprint(torch.ones(1))"), markdown("for x in y: torch.cuda.empty_cache()"))
    )
    proc = memlint_cli("check", "nb.ipynb")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_noqa_in_a_cell(tmp_path, memlint_cli):
    nb = notebook(code("import torch\nwhile True:\n    torch.cuda.empty_cache()  # noqa: MEM702"))
    write_nb(tmp_path, nb)
    assert memlint_cli("check", "nb.ipynb").returncode == 0


def test_magics_do_not_break_parsing(tmp_path, memlint_cli):
    cell = (
        "%load_ext autoreload\n"
        "files = !ls -la\n"
        "!pip install \\\n"
        "    torch\n"
        "torch.cuda?\n"
        "for x in loader:\n"
        "    %time step(x)\n"
        "    !nvidia-smi\n"
        "    torch.cuda.empty_cache()\n"
    )
    write_nb(tmp_path, notebook(code("import torch"), code(cell)))
    proc = memlint_cli("check", "--output-format", "concise", "nb.ipynb")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("nb.ipynb:cell 2:9:5: MEM702")
    assert "error" not in proc.stderr


def test_non_python_cell_magic_skips_the_cell(tmp_path, memlint_cli):
    nb = notebook(
        code("import torch"),
        code("%%bash\nwhile true; do\ntorch.cuda.empty_cache()\ndone"),
        code("%%time\nwhile True:\n    torch.cuda.empty_cache()"),
    )
    write_nb(tmp_path, nb)
    proc = memlint_cli("check", "--output-format", "concise", "nb.ipynb")
    lines = [line for line in proc.stdout.splitlines() if "MEM" in line]
    assert len(lines) == 1 and lines[0].startswith("nb.ipynb:cell 3:3:5: MEM702"), proc.stdout


def test_broken_cell_is_named_and_the_rest_still_linted(tmp_path, memlint_cli):
    nb = notebook(code("import torch"), code("def oops(:\n    pass"), code("while True:\n    torch.cuda.empty_cache()"))
    write_nb(tmp_path, nb)
    proc = memlint_cli("check", "--output-format", "concise", "nb.ipynb")
    assert proc.returncode == 1
    assert "nb.ipynb:cell 3:2:5: MEM702" in proc.stdout
    assert "nb.ipynb: cell 2: syntax error" in proc.stderr


def test_other_kernel_language_is_skipped(tmp_path, memlint_cli):
    write_nb(tmp_path, notebook(code("while True:\n    torch.cuda.empty_cache()"), language="R"))
    assert memlint_cli("check", "nb.ipynb").returncode == 0


@pytest.mark.parametrize("content", ["{not json", '{"worksheets": []}', "[1, 2]"])
def test_not_a_notebook_is_an_error_not_a_crash(tmp_path, memlint_cli, content):
    (tmp_path / "bad.ipynb").write_text(content)
    proc = memlint_cli("check", "bad.ipynb")
    assert proc.returncode == 1
    assert "memlint: error: bad.ipynb:" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_directory_walk_includes_notebooks_but_not_checkpoints(tmp_path, memlint_cli):
    write_nb(tmp_path, leaky_notebook(), name="nbs/train.ipynb")
    write_nb(tmp_path, leaky_notebook(), name="nbs/.ipynb_checkpoints/train-checkpoint.ipynb")
    proc = memlint_cli("check", "--output-format", "concise", ".")
    assert proc.stdout.count("MEM702") == 1
    assert "nbs/train.ipynb:cell 3:3:5" in proc.stdout


# -- fix -------------------------------------------------------------------


@pytest.mark.parametrize("indent", [1, 2, 4, None])
@pytest.mark.parametrize("as_list", [True, False])
def test_fix_rewrites_only_the_changed_source(tmp_path, memlint_cli, indent, as_list):
    nb = leaky_notebook()
    nb["cells"][2] = code(LOOP, count=2, outputs=[OUTPUT, IMAGE], metadata={"tags": ["train"]}, as_list=as_list)
    path = write_nb(tmp_path, nb, indent=indent)
    proc = memlint_cli("check", "--fix", "nb.ipynb")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    expected = json.loads(json.dumps(nb))
    expected["cells"][2]["source"] = split_source(LOOP_FIXED) if as_list else LOOP_FIXED
    # byte for byte the same layout: indentation, key order, escapes, final newline
    assert path.read_text(encoding="utf-8") == dump(expected, indent=indent)


def test_fix_keeps_ascii_escapes_of_an_ascii_file(tmp_path, memlint_cli):
    nb = leaky_notebook()
    nb["cells"][2]["source"][1] = "    loss = model(x)  # café\n"
    path = write_nb(tmp_path, nb, ensure_ascii=True)
    assert memlint_cli("check", "--fix", "nb.ipynb").returncode == 0
    expected = json.loads(json.dumps(nb))
    expected["cells"][2]["source"] = split_source(LOOP_FIXED.replace("model(x)", "model(x)  # café"))
    assert path.read_text(encoding="utf-8") == dump(expected, ensure_ascii=True)


def test_fix_restores_magics_and_keeps_other_cells(tmp_path, run_memlint):
    cell = "for x in loader:\n    %time step(x)\n    torch.cuda.empty_cache()\n    files = !ls\n"
    nb = notebook(code("%matplotlib inline\nimport torch"), code(cell, count=7), code("%%bash\necho hi"))
    path = write_nb(tmp_path, nb)
    proc = run_memlint("check", "--fix", "nb.ipynb")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = json.loads(path.read_text())
    assert "".join(after["cells"][1]["source"]) == "for x in loader:\n    %time step(x)\n    files = !ls\n"
    assert after["cells"][0] == nb["cells"][0] and after["cells"][2] == nb["cells"][2]
    assert after["cells"][1]["execution_count"] == 7
    # fixing twice changes nothing
    before = path.read_bytes()
    assert run_memlint("check", "--fix", "--exit-non-zero-on-fix", "nb.ipynb").returncode == 0
    assert path.read_bytes() == before


def test_fix_to_pass_stays_in_its_cell(tmp_path, memlint_cli):
    nb = notebook(code("import torch"), code("while True:\n    torch.cuda.empty_cache()"), code("x = 1"))
    path = write_nb(tmp_path, nb)
    assert memlint_cli("check", "--fix", "nb.ipynb").returncode == 0
    sources = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]
    assert sources == ["import torch", "while True:\n    pass", "x = 1"]


def test_diff_writes_nothing(tmp_path, run_memlint):
    path = write_nb(tmp_path, leaky_notebook())
    before = path.read_bytes()
    proc = run_memlint("check", "--diff", "nb.ipynb")
    assert proc.returncode == 1
    assert '-    "    torch.cuda.empty_cache()\\n",' in proc.stdout
    assert path.read_bytes() == before


def test_fix_keeps_mode_and_exit_non_zero_on_fix(tmp_path, run_memlint):
    path = write_nb(tmp_path, leaky_notebook())
    path.chmod(0o640)
    proc = run_memlint("check", "--fix", "--exit-non-zero-on-fix", "nb.ipynb")
    assert proc.returncode == 1
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".memlint-")]  # no temp file left


def test_fix_refuses_when_file_changed_on_disk(tmp_path, monkeypatch):
    from memlint.rule.registry import select_rules
    from memlint.run import notebook as nbmod
    from memlint.run.runner import Settings

    path = write_nb(tmp_path, leaky_notebook())
    real_fix = nbmod.fix_text

    def racing_fix(*args, **kwargs):
        path.write_text(path.read_text() + " ")  # an editor saves meanwhile
        return real_fix(*args, **kwargs)

    monkeypatch.setattr(nbmod, "fix_text", racing_fix)
    with pytest.raises(nbmod.SourceError, match="changed on disk"):
        nbmod.process_notebook(str(path), Settings(mode="fix", root=str(tmp_path)), select_rules())
    assert path.read_text().endswith("\n ")


# -- masking IPython syntax ------------------------------------------------


MAGIC_CELLS = [
    "%matplotlib inline\nimport torch\n",
    "x = 1\n!pip install torch\ny = 2",
    "files = !ls\nout = %sx ls\nhead, tail = !cat f\n",
    "if True:\n    %time f()\n    !echo hi\n",
    "torch.cuda?\n??torch.load\n",
    "!pip install \\\n    torch \\\n    numpy\nx = 1\n",
    "%%time\nfor i in range(3):\n    f(i)\n",
    "\n\n%%timeit -n 3\nf()",
    "!echo don't\nx = 1\n",
]


@pytest.mark.parametrize("cell", MAGIC_CELLS)
def test_masked_cell_parses_keeps_lengths_and_round_trips(cell):
    masked = mask_cell(cell)
    assert masked is not None and masked.has_masks
    cst.parse_module(masked.text)
    assert [len(line) for line in masked.text.splitlines()] == [len(line) for line in cell.splitlines()]
    assert unmask(masked, masked.text) == cell


@pytest.mark.parametrize(
    "cell",
    [
        's = """\n%not a magic\n!nor this\n"""\n',
        "x = (1\n%2)\n",
        "y = [a\n!= b for a in c]\n",
        "s = 'a\\\n%b'\n",
    ],
)
def test_python_that_looks_like_magic_is_left_alone(cell):
    masked = mask_cell(cell)
    assert masked is not None and masked.text == cell


@pytest.mark.parametrize("magic", ["%%bash", "%%writefile x.py", "%%html", "%%javascript", "%%sql"])
def test_non_python_cell_magics_skip_the_cell(magic):
    assert mask_cell(f"{magic}\nfor x in y: torch.cuda.empty_cache()\n") is None


def test_unmask_after_a_fix_removed_a_line():
    masked = mask_cell("for x in y:\n    !ls\n    torch.cuda.empty_cache()\n    %time f()\n")
    fixed = masked.text.replace("    torch.cuda.empty_cache()\n", "")
    assert unmask(masked, fixed) == "for x in y:\n    !ls\n    %time f()\n"


def test_unmask_refuses_when_a_masked_line_was_edited():
    masked = mask_cell("for x in y:\n    !ls\n")
    assert unmask(masked, "for x in y:\n    pass\n") is None


# -- JSON editing ------------------------------------------------------------


def test_source_spans_find_each_cells_source():
    nb = notebook(markdown("a\nb"), code("x = 1"), {"cell_type": "raw", "metadata": {}, "source": ""})
    text = dump(nb)
    spans = source_spans(text)
    assert sorted(spans) == [0, 1, 2]
    for index, (start, end) in spans.items():
        assert json.loads(text[start:end]) == nb["cells"][index]["source"]


line_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=12)
sources = st.lists(line_text, max_size=5).map(lambda lines: "\n".join(lines))


@settings(max_examples=150, deadline=None)
@given(
    old=st.lists(sources, min_size=1, max_size=4),
    new=sources,
    target=st.integers(0, 3),
    indent=st.sampled_from([None, 1, 2, 4]),
    ensure_ascii=st.booleans(),
    as_list=st.booleans(),
)
def test_replace_sources_changes_that_value_only(old, new, target, indent, ensure_ascii, as_list):
    target %= len(old)
    nb = notebook(*[code(s, outputs=[OUTPUT], as_list=as_list) for s in old])
    text = json.dumps(nb, indent=indent, ensure_ascii=ensure_ascii) + "\n"
    out = replace_sources(text, {target: new}, nb["cells"])
    expected = json.loads(json.dumps(nb))
    expected["cells"][target]["source"] = split_source(new) if as_list else new
    assert json.loads(out) == expected
    # everything outside the replaced value is untouched
    start, end = source_spans(text)[target]
    new_start, new_end = source_spans(out)[target]
    assert out[:new_start] == text[:start] and out[new_end:] == text[end:]
    if ensure_ascii:
        assert out.isascii()
    # the layout nbformat itself would write, when the file had that layout
    if indent is not None and (as_list and split_source(old[target]) or not split_source(new)):
        assert out == json.dumps(expected, indent=indent, ensure_ascii=ensure_ascii) + "\n"


# -- every rule's examples, as notebooks ----------------------------------

FIXABLE = [
    pytest.param(rule, ex, id=f"{rule.code}-invalid-{i}")
    for rule in all_rules()
    for i, ex in enumerate(rule.invalid)
    if ex.fixed is not None
]


def as_two_cells(source):
    """The leading imports in one cell, the rest in the next (nbformat keeps
    no newline at the end of a cell)."""
    lines = source.splitlines(keepends=True)
    split = 0
    while split < len(lines) and lines[split].startswith(("import ", "from ")):
        split += 1
    if split in (0, len(lines)):
        return [source.rstrip("\n")]
    return ["".join(lines[:split]).rstrip("\n"), "".join(lines[split:]).rstrip("\n")]


@pytest.mark.parametrize("rule, example", FIXABLE)
def test_notebook_matches_file_check_and_fix(tmp_path, rule, example):
    from memlint.run.notebook import process_notebook
    from memlint.run.runner import Settings

    cells = as_two_cells(example.source)
    path = write_nb(tmp_path, notebook(markdown("# example"), *[code(c) for c in cells]))
    # A module moving a model beside it: the example's project is not CPU-only (cpu_projects.py).
    (tmp_path / "gpu.py").write_text("import torch\n\n\ndef to_gpu(model):\n    return model.cuda()\n")
    # check: the findings the file gets, each in its cell
    checked = process_notebook(str(path), Settings(select=(rule.code,), root=str(tmp_path)), [rule])
    expected = lint_text(example.source, "example.py", [rule])
    offset = cells[0].count("\n") + 1 if len(cells) == 2 else 0
    assert [(f.code, f.line, f.column) for f in expected] == [
        (f.code, f.line + (offset if f.cell == 3 else 0), f.column) for f in checked.findings
    ]
    settings = Settings(select=(rule.code,), mode="fix", unsafe_fixes=True, root=str(tmp_path))
    report = process_notebook(str(path), settings, [rule])
    assert report.error is None and report.fixed
    sources = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"][1:]]
    # Fixes (added imports included) stay in the cells; joined, they are the file's fix.
    assert "\n".join(sources) + "\n" == example.fixed


VALID = [pytest.param(rule, ex, id=f"{rule.code}-valid-{i}") for rule in all_rules() for i, ex in enumerate(rule.valid)]


@pytest.mark.parametrize("rule, example", VALID)
def test_valid_examples_stay_silent_in_notebooks(tmp_path, rule, example):
    from memlint.run.notebook import process_notebook
    from memlint.run.runner import Settings

    path = write_nb(tmp_path, notebook(*[code(c) for c in as_two_cells(example.source)]))
    report = process_notebook(str(path), Settings(select=(rule.code,), root=str(tmp_path)), [rule])
    assert report.error is None and report.findings == []
