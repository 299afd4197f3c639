"""MEM703 on a loop over the same models inside the batch loop
(``_same_models_per_batch``) and its gate card (gate/moves.moves_own_target)."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from memlint.gate.moves import moves_own_target
from memlint.lint.engine import lint_text
from memlint.rule.registry import all_rules
from memlint.rules.mem703_loop_invariant_device_move import _setting, _settings


@pytest.mark.parametrize(
    ("loop", "expected"),
    [
        ("for net in nets:\n    net.to(device)\n    net(x)", True),
        ("for net in self.nets:\n    if flag:\n        net.cuda()\n    y = net(x)", True),
        ("for net in nets:\n    net.to(device)", False),
        ("for net in nets:\n    other.to(device)\n    net(x)", False),
        ("for i, net in enumerate(nets):\n    net.to(device)", False),
        ("for net in make_nets():\n    net.to(device)", False),
    ],
)
def test_the_gate_card_finds_a_loop_moving_its_own_target(loop, expected):
    node = ast.parse(loop).body[0]
    assert isinstance(node, ast.For)
    assert moves_own_target(node) is expected


class _Names:
    def call_name(self, node):
        return None


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ("args.loss == 'contrastive'", "args.loss"),
        ("mode in ('a', 'b')", "mode"),
        ("use_cuda", "use_cuda"),
        ("step == 0", None),
        ("args.loss == other", None),
        ("args.loss < 'b'", None),
        ("len(nets) > 1", None),
    ],
)
def test_a_setting_compared_with_strings_is_a_flag(test, expected):
    assert _setting(cst.parse_expression(test), _Names()) == expected


_NIID = """\
import torch
def train(net, previous_nets, loader, optimizer, criterion, args, device):
    for previous_net in previous_nets:
        previous_net.to(device)
    for epoch in range(3):
        for x, y in loader:
            out = net(x.to(device))
            loss = criterion(out, y.to(device))
            if args.loss == "l2norm":
                loss = loss + out.norm()
            elif args.loss == "only_contrastive" or args.loss == "contrastive":
                for previous_net in previous_nets:
                    previous_net.to(device)
                    loss = loss + previous_net(x).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""


@pytest.mark.parametrize("gate", [True, False])
def test_the_same_models_moved_in_each_batch_are_reported(gate, monkeypatch):
    import memlint.lint.screen as screen

    monkeypatch.setattr(screen, "GATE", gate)
    found = [(f.code, f.line) for f in lint_text(_NIID, "train.py", all_rules()) if f.code == "MEM703"]
    assert found == [("MEM703", 13)]


def test_models_rebound_per_epoch_outside_the_batch_loop_still_count():
    """``previous_nets`` bound in the epoch loop, outside the batch loop: the
    same models for every batch of the epoch."""
    text = _NIID.replace(
        "    for epoch in range(3):\n", "    for epoch in range(3):\n        previous_nets = list(previous_nets)\n"
    )
    found = [f.line for f in lint_text(text, "train.py", all_rules()) if f.code == "MEM703"]
    assert found == [14]


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ("args.loss == 'a' or args.loss == 'b'", ["args.loss", "args.loss"]),
        ("use_cuda and mode != 'cpu'", ["use_cuda", "mode"]),
        ("args.loss == 'a' or step == 0", None),
    ],
)
def test_settings_joined_by_and_or_are_settings(test, expected):
    assert _settings(cst.parse_expression(test), _Names()) == expected
