"""MEM703's gate passes a file whose only batch loop is ``while True: x =
queue.get()`` (no training, no eval call, no loader): the rule reads that
loop as one per batch (gate/loops.py, gate/facts.py ``queue_gets``)."""

from __future__ import annotations

import ast
import textwrap

from memlint.gate.cards import CARDS
from memlint.gate.facts import GateFacts
from memlint.lint import screen
from memlint.lint.engine import lint
from memlint.rule.registry import all_rules

QUEUE_LOOP = """\
import torch


def run(model, work_queue, device):
    while True:
        inputs = work_queue.get()
        if inputs is None:
            break
        model.to(device)
        print(model(inputs.to(device)))
"""

NOT_A_QUEUE = QUEUE_LOOP.replace("work_queue", "cache")


def _facts(src: str) -> GateFacts:
    return GateFacts(ast.parse(textwrap.dedent(src)))


def test_the_gate_passes_a_queue_loop_and_the_rule_reports_it(monkeypatch):
    assert CARDS["MEM703"].gate(_facts(QUEUE_LOOP))
    assert CARDS["MEM703"].local_gate(_facts(QUEUE_LOOP))
    runs = []
    for gate in (False, True):
        monkeypatch.setattr(screen, "GATE", gate)
        runs.append([(f.code, f.line) for f in lint(QUEUE_LOOP, "example.py", list(all_rules()))[0]])
    assert runs[0] == runs[1] and ("MEM703", 9) in runs[0]


def test_a_get_from_something_else_is_no_batch_loop():
    assert not CARDS["MEM703"].gate(_facts(NOT_A_QUEUE))
    found = lint(NOT_A_QUEUE, "example.py", list(all_rules()))[0]
    assert not [f for f in found if f.code == "MEM703"]
