"""Input readers (vocabulary/input_readers.py): the gate's spelling of a
call the rule reads by qualified name (MEM703's per-file loops, IMDN)."""

from __future__ import annotations

import ast

from memlint.gate.facts import GateFacts
from memlint.vocabulary.input_readers import INPUT_READERS, may_read_inputs


def _reads(src: str) -> bool:
    g = GateFacts(ast.parse(src))
    return may_read_inputs(g.called, g.idents)


def test_a_reader_under_any_alias_is_seen_by_the_gate():
    assert _reads("import cv2\nim = cv2.imread(p)\n")
    assert _reads("from PIL import Image as I\nim = I.open(p)\n")
    assert _reads("import numpy as np\nx = np.load(f)\n")


def test_a_call_of_the_same_last_name_elsewhere_is_no_reader():
    assert not _reads("f = open(p)\n")
    assert not _reads("import torch\nsd = torch.load(p)\n")


def test_checkpoint_loads_are_no_input_readers():
    assert "torch.load" not in INPUT_READERS
