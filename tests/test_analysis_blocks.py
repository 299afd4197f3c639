"""facts.blocks: a statement's place in its block, earlier and later statements."""

import libcst as cst

from memlint.analysis.scope.blocks import Blocks, inside
from memlint.parse.traversal import ParentMap

SOURCE = """\
import gc
for x in data:
    a = 1
    del b
    c = 2
    if d:
        e = 3
    break
f = 4
"""


def setup():
    module = cst.parse_module(SOURCE)
    loop = module.body[1]
    return module, loop.body.body, Blocks(ParentMap(module))


def is_del(stmt):
    return isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Del)


def is_break(stmt):
    return isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Break)


def test_locate():
    module, body, blocks = setup()
    assert blocks.locate(body[2]) == (body, 2)
    assert blocks.locate(module.body[2]) == (module.body, 2)
    assert blocks.locate(body[3].body.body[0]) == (body[3].body.body, 0)
    assert blocks.locate(body[0].body[0]) == (body[0].body, 0)  # a small statement in its line
    assert blocks.locate(body[3].test) is None  # not a statement of a block


def test_before_and_after():
    module, body, blocks = setup()
    assert not blocks.any_before(body[0], is_del) and not blocks.any_before(body[1], is_del)
    assert blocks.any_before(body[2], is_del) and blocks.any_before(body[4], is_del)
    assert blocks.any_after(body[3], is_break) and not blocks.any_after(body[4], is_break)
    assert not blocks.any_after(body[3].body.body[0], is_break)  # the break is in the enclosing block
    assert not blocks.any_before(module.body[2], is_del)


def test_each_test_runs_once_per_statement_of_a_block():
    module, body, blocks = setup()
    seen = []

    def test(stmt):
        seen.append(stmt)
        return False

    for stmt in body:
        blocks.any_before(stmt, test)
        blocks.any_after(stmt, test)
    assert len(seen) == len(body)


def test_inside_follows_the_parents_up_to_outer():
    module, body, _ = setup()
    parents = ParentMap(module)
    loop, inner_if = module.body[1], body[3]
    assert inside(inner_if.body.body[0], loop, parents)
    assert inside(loop, loop, parents)
    assert not inside(module.body[2], loop, parents)
