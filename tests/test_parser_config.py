"""memlint/fix/parser_config.py: code a fix parses into a module indented
with a form feed (valid Python; libcst reads the indent ``'\\x0c '`` but
refuses it back as a parser setting). One test per helper that parses new
code for a fix, and MEM201's fixes end to end (they use two of them)."""

import libcst as cst

from memlint.fix.expr_edits import parse_expr
from memlint.fix.fixer import add_imports, fix_text
from memlint.fix.parser_config import parser_config
from memlint.fix.statement_edits import statement
from memlint.rule.registry import select_rules

FORM_FEED = "class A:\n\x0c pass\n"


def test_the_config_keeps_the_modules_newline_without_its_indent():
    module = cst.parse_module("class A:\r\n\x0c pass\r\n")
    config = parser_config(module)
    assert config.default_newline == "\r\n"
    plain = cst.parse_module("class A:\n    pass\n")
    assert parser_config(plain) == plain.config_for_parsing  # the module's own settings when it has them


def test_statement_edits_builds_a_statement():
    built = statement("x = torch.zeros(2)", cst.parse_module(FORM_FEED))
    assert cst.Module(body=[built]).code == "x = torch.zeros(2)\n"


def test_expr_edits_parses_an_expression():
    expr = parse_expr("torch.no_grad()", cst.parse_module(FORM_FEED))
    assert cst.Module(body=[]).code_for_node(expr) == "torch.no_grad()"


def test_fixer_adds_an_import():
    assert add_imports(FORM_FEED + "x = 1\n", ["torch"]) == "import torch\n" + FORM_FEED + "x = 1\n"


def test_mem201_fixes_a_file_indented_with_a_form_feed():
    # No ``import torch``: the fix writes ``torch.no_grad()`` (parse_expr)
    # and adds the import (add_imports).
    text = FORM_FEED + (
        "import torch.nn as nn\n"
        "def evaluate(model, loader):\n"
        "    model.eval()\n"
        "    correct = 0\n"
        "    for x, y in loader:\n"
        "        correct += (model(x).argmax(1) == y).sum().item()\n"
        "    return correct\n"
    )
    result = fix_text(text, "ff.py", select_rules(["MEM201"]))
    assert [f.code for f in result.applied] == ["MEM201"]
    assert result.text.startswith("import torch\n")
    assert "torch.no_grad()" in result.text
    compile(result.text, "ff.py", "exec")
