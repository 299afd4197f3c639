"""The live index's word index (project/live.py): the words a call may
spell last, each a whole identifier. Taking prefixes of longer names (``bi``
of ``bias``, ``h`` of ``has``) found no call and cost most of the server's
first open of a large project."""

from memlint.project.live import _words


def test_calls_and_aliases_spell_their_whole_name():
    text = b"from utils import evaluate as ev\nx = engine.train (\n  1)\ny = main  # why\n(\n)\nz = run\\\n(2)\n"
    assert _words(text) == {b"evaluate", b"train", b"main", b"run"}


def test_no_prefix_of_a_longer_name_is_a_word():
    assert _words(b"print(bias)\nif has:\n    alias = 1\n") == {b"print"}
    assert _words(b"model.canvas\n") == frozenset()
