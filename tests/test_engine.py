"""Engine, fixer and suppression units, through the library API."""

import codecs

import libcst as cst
import pytest

from memlint.fix.fixer import add_imports, fix_text, text_edit
from memlint.lint.engine import ParseError, applicable_rules, lint_text
from memlint.lint.noqa import file_is_exempt, is_suppressed, noqa_map
from memlint.read.source import SourceError, decode_source
from memlint.rule import Fix, Rule, Safety
from memlint.rule.registry import rule_by_code, select_rules

MEM702 = rule_by_code("MEM702")
LOOP = "import torch\nfor x in xs:\n    f(x)\n    torch.cuda.empty_cache()\n"


def test_prefilter_skips_parsing():
    # Not even valid Python, but no rule's tokens occur: nothing is parsed.
    assert lint_text("def (:\n", "x.py", [MEM702]) == []
    assert applicable_rules("x = 1", [MEM702]) == []
    with pytest.raises(ParseError):
        lint_text("empty_cache(\n", "x.py", [MEM702])


def test_positions_are_exact():
    (finding,) = lint_text(LOOP, "x.py", [MEM702])
    assert (finding.line, finding.column, finding.end_line, finding.end_column) == (4, 4, 4, 28)


@pytest.mark.parametrize(
    "comment, suppressed",
    [
        ("# noqa", True),
        ("# noqa: MEM702", True),
        ("# noqa:MEM702", True),
        ("# noqa: MEM7", True),
        ("# noqa: MEM1, MEM702", True),
        ("# NOQA: mem702", True),
        ("# noqa: MEM101", False),
        ("# noqa: E501", False),
        ("# not a noqa marker", False),
    ],
)
def test_noqa_codes(comment, suppressed):
    text = LOOP.replace("empty_cache()", "empty_cache()  " + comment)
    assert (lint_text(text, "x.py", [MEM702]) == []) is suppressed


def test_noqa_on_any_line_of_multiline_statement():
    text = "import torch\nfor x in xs:\n    torch.cuda.empty_cache(\n    )  # noqa: MEM702\n"
    assert lint_text(text, "x.py", [MEM702]) == []
    mapping = noqa_map(text)
    assert is_suppressed("MEM702", 3, mapping) and not is_suppressed("MEM702", 2, mapping)


def test_file_level_noqa():
    assert file_is_exempt("x = 1\n# memlint: noqa\n")
    assert not file_is_exempt("x = 1  # memlint: noqa\n")
    assert lint_text("# memlint: noqa\n" + LOOP, "x.py", [MEM702]) == []


def _file_noqa_texts():
    """Line starts, spellings and line ends around a file-level noqa, each
    part chosen so that FILE_NOQA_RE's ``^\\s*`` or ``\\s*$`` may go either way."""
    import itertools

    heads = ["", "x", " ", "\t", "\r", "\x0c", "\x0b", "\xa0", "\u2028", "\x1c", "x ", " x", "#", "# "]
    bodies = [
        "# memlint: noqa",
        "#memlint=noqa",
        "#  MemLint :\tNOQA",
        "# memlınt: noqa",
        "# MEMLİNT: noqa",
        "# memlint noqa",
    ]
    tails = ["", " ", "x", "\r", "\r\n", "\n", "\n x", "\u2028", " # memlint: noqa"]
    befores = ["", "a\n", "a\r", "a\r\n", "# memlint: noqa x\n", "\n\n", "  \n"]
    for before, head, body, tail in itertools.product(befores, heads, bodies, tails):
        yield before + head + body + tail


def test_file_level_noqa_is_the_pattern_searched_from_its_hash():
    # file_is_exempt searches from each "#" instead of trying "^\\s*" at every
    # position: the same answer as the whole pattern on every arrangement.
    from memlint.lint.noqa import FILE_NOQA_RE

    texts = list(_file_noqa_texts())
    for text in texts:
        assert file_is_exempt(text) == (FILE_NOQA_RE.search(text) is not None), repr(text)
    assert 0 < sum(map(file_is_exempt, texts)) < len(texts)


def test_fix_keeps_crlf_and_comments():
    text = LOOP.replace("\n", "\r\n").replace("f(x)", "f(x)  # keep me")
    result = fix_text(text, "x.py", [MEM702])
    assert result.text == "import torch\r\nfor x in xs:\r\n    f(x)  # keep me\r\n"
    assert [f.code for f in result.applied] == ["MEM702"]


def test_fix_reaches_fixed_point_over_several_rounds():
    text = "import torch\nfor x in xs:\n    torch.cuda.empty_cache()\n    torch.cuda.empty_cache()\n"
    result = fix_text(text, "x.py", [MEM702])
    assert result.text == "import torch\nfor x in xs:\n    pass\n"
    assert fix_text(result.text, "x.py", [MEM702]).text == result.text


def test_text_edit_is_minimal():
    edit = text_edit("a = foo(1)\n", "a = foo(1, b=2)\n")
    assert (edit.start, edit.end, edit.content) == (9, 9, ", b=2")


def test_add_imports_after_docstring_and_existing_imports():
    assert add_imports('"""Doc."""\nx = 1\n', ["torch"]) == '"""Doc."""\n\nimport torch\nx = 1\n'
    assert add_imports("import os\nx = 1\n", ["torch"]) == "import os\nimport torch\nx = 1\n"
    assert add_imports("import torch as T\nx = 1\n", ["torch"]).count("import torch") == 2
    assert add_imports("import torch\nx = 1\n", ["torch"]) == "import torch\nx = 1\n"


class _BreaksCode(Rule):
    """A rule whose fix would produce invalid code: the engine must refuse it."""

    code = "MEM999"
    name = "breaks-code"
    message = "m"
    tokens = ("x",)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == "x":
            bad = cst.Name("def")  # a keyword: the result does not parse
            self.report(node, fix=Fix("break", ((node, bad),), Safety.SAFE))


def test_fix_that_breaks_code_is_refused():
    result = fix_text("x = 1\n", "x.py", [_BreaksCode])
    assert result.text == "x = 1\n"
    assert [f.code for f in result.remaining] == ["MEM999"]


def test_decode_keeps_encoding_and_bom():
    src = decode_source(codecs.BOM_UTF8 + b"x = '\xc3\xa9'\r\n")
    assert src.bom and src.text == "x = 'é'\r\n"
    assert src.encode(src.text) == codecs.BOM_UTF8 + b"x = '\xc3\xa9'\r\n"
    latin = decode_source(b"# -*- coding: latin-1 -*-\nx = '\xe9'\n")
    assert latin.encoding == "iso-8859-1" and latin.encode(latin.text).endswith(b"'\xe9'\n")
    with pytest.raises(SourceError, match="not valid UTF-8"):
        decode_source(b"x = '\xe9'\n")
    with pytest.raises(SourceError, match="binary"):
        decode_source(b"\x00\x01")


def test_selection():
    codes = [r.code for r in select_rules(["MEM7"])]
    assert "MEM702" in codes and all(c.startswith("MEM7") for c in codes)
    assert "MEM702" not in [r.code for r in select_rules(None, ["MEM702"])]
    assert all(r.default_enabled for r in select_rules())


def test_a_linted_module_is_freed_without_the_cyclic_collector():
    # The analyses form cycles with the module's nodes; lint_module lets them
    # go (ModuleFacts.release) so reference counting frees the whole tree and
    # the collector does not walk it after every file.
    import gc

    from memlint.lint.engine import lint

    text = rule_by_code("MEM101").invalid[0].source
    gc.collect()
    gc.disable()
    flags = gc.get_debug()
    try:
        findings, module = lint(text, "x.py", select_rules())
        assert findings and module is not None  # the rules asked for facts
        del module, findings
        gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector would free lands in gc.garbage
        gc.collect()
        assert not any(isinstance(o, cst.Module) for o in gc.garbage)
    finally:
        gc.set_debug(flags)
        gc.garbage.clear()
        gc.enable()
