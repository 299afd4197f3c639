"""The order of freezes and thaws before a call (analysis/autograd/caller_freezes.py)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from memlint.analysis.autograd.caller_freezes import frozen_before
from memlint.parse.traversal import ParentMap


def _frozen(body: str) -> bool:
    module = cst.parse_module(textwrap.dedent(body))
    parents = ParentMap(module)
    calls: list[cst.Call] = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "val":
                calls.append(node)

    module.visit(_Calls())
    return frozen_before(calls[-1], "model", parents)


@pytest.mark.parametrize(
    "body, frozen",
    [
        ("for p in model.parameters():\n    p.requires_grad = False\nmodel.eval()\nacc = val()\n", True),
        ("model.requires_grad_(False)\nacc = val()\n", True),
        ("for p in model.parameters():\n    p.requires_grad = False\nmodel.requires_grad_(True)\nval()\n", False),
        ("for p in model.parameters():\n    p.requires_grad = flag\nval()\n", False),
        (
            "for p in model.parameters():\n    p.requires_grad = False\nfor p in other.parameters():\n    p.requires_grad = True\nval()\n",
            False,
        ),
        ("model.eval()\nval()\n", False),
        ("if ok:\n    model.requires_grad_(False)\nval()\n", False),
        ("for p in other.parameters():\n    p.requires_grad = False\nval()\n", False),
    ],
)
def test_the_last_setting_before_the_call_in_its_block_decides(body, frozen):
    assert _frozen(body) is frozen
