"""memlint/fix/statement_edits.py: moving statements with their comments."""

import libcst as cst

from memlint.fix.statement_edits import StatementEdits, bare, call_statement_only, statement, wrap_in_with

SRC = """\
for x in loader:
    # clear
    opt.zero_grad()
    loss.backward()
    if ready:
        opt.step()
"""


def parts(module):
    loop = module.body[0]
    zero, backward, guard = loop.body.body
    return loop, zero, backward, guard, guard.body.body[0]


def test_move_into_a_nested_block_keeps_the_comment_in_place():
    module = cst.parse_module(SRC)
    loop, zero, backward, guard, step = parts(module)
    edits = StatementEdits()
    edits.remove(zero, loop.body)
    edits.insert_after(step, bare(zero))
    new = module.with_changes(body=[edits.apply(loop)])
    assert (
        new.code
        == "for x in loader:\n    # clear\n    loss.backward()\n    if ready:\n        opt.step()\n        opt.zero_grad()\n"
    )


def test_insert_before_takes_over_the_comment_lines():
    module = cst.parse_module(SRC)
    loop, zero, backward, guard, step = parts(module)
    edits = StatementEdits()
    edits.insert_before(zero, statement("model.train()", module))
    new = module.with_changes(body=[edits.apply(loop)])
    assert new.code.startswith("for x in loader:\n    # clear\n    model.train()\n    opt.zero_grad()\n")


def test_removing_the_only_statement_leaves_pass():
    module = cst.parse_module("if a:\n    b()\n")
    block = module.body[0].body
    edits = StatementEdits()
    edits.remove(block.body[0], block)
    assert module.with_changes(body=[edits.apply(module.body[0])]).code == "if a:\n    pass\n"


def test_wrap_in_with_and_call_statement_only():
    module = cst.parse_module("# note\nw -= lr * w.grad\n")
    stmt = module.body[0]
    wrapped = wrap_in_with(stmt, cst.parse_expression("torch.no_grad()"))
    assert module.with_changes(body=[wrapped]).code == "# note\nwith torch.no_grad():\n    w -= lr * w.grad\n"
    line = cst.parse_statement("opt.zero_grad()\n")
    assert call_statement_only(line, line.body[0].value)
    assert not call_statement_only(cst.parse_statement("a = opt.zero_grad()\n"), line.body[0].value)


def test_a_statement_is_built_in_a_module_indented_with_a_form_feed():
    # Python accepts "\x0c pass" as an indented block; libcst reads the
    # indent but refuses it back as a parser setting (found by the fuzz test).
    module = cst.parse_module("import torch\nclass A:\n\x0c pass\n")
    built = statement("x = torch.zeros(2)", module)
    assert cst.Module(body=[built]).code == "x = torch.zeros(2)\n"


def test_mem104_fixes_a_file_indented_with_a_form_feed():
    text = (
        "class A:\n\x0c pass\n"
        "import torch\nstate = (torch.zeros(2, 8, 64), torch.zeros(2, 8, 64))\n"
        "for step, (x, y) in enumerate(loader):\n    out, state = lstm(x, state)\n"
        "    loss = criterion(out, y)\n    loss.backward(retain_graph=True)\n    optimizer.step()\n"
    )
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import select_rules

    findings = lint_text(text, "fuzz.py", select_rules(["MEM104"]))
    assert "MEM104" in {f.code for f in findings}
