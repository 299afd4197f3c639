"""analysis/training/state_flow.py: what a loaded checkpoint passes on unchanged."""

import libcst as cst

from memlint.analysis.scope.names import dotted_name
from memlint.analysis.training.state_flow import drawn_from, loop_copies


def source(expr: str) -> str | None:
    """The dotted name ``expr`` draws its value from, unchanged; None when not a name."""
    return dotted_name(drawn_from(cst.parse_expression(expr)))


def test_key_lookups_are_parts_of_the_dict():
    assert source('ck["state_dict"]') == "ck"
    assert source('ck.get("model")') == "ck"
    assert source('ck.get("model", {})["enc"]') == "ck"
    assert source('ck.pop("model")') == "ck"  # pvcnn: the entry taken out holds the same tensors
    assert source('ck.pop("model", None)["enc"]') == "ck"


def test_a_comprehension_copying_every_value_is_the_dict():
    assert source('{k[7:]: v for k, v in ck["state_dict"].items() if "fc" not in k}') == "ck"
    assert source("{'.'.join(k.split('.')[1:]): v for k, v in list(ck.items())}") == "ck"


def test_values_changed_or_read_otherwise_are_not_followed():
    assert source("{k: v.cpu() for k, v in ck.items()}") is None
    assert source("{k: k for k, v in ck.items()}") is None
    assert source("{k: v for k, v in ck.values()}") is None
    assert source("{k: v for k, v in a.items() for _ in b}") is None
    assert source('ck.get(key="model")') is None
    assert source("ck.pop()") is None
    assert source("ck.popitem()") is None
    assert source("convert(ck)") is None


def copies(code: str) -> list[tuple[str, str | None]]:
    """What ``loop_copies`` finds in the first statement of ``code``: (dict, source)."""
    loop = cst.parse_module(code).body[0]
    assert isinstance(loop, cst.For)
    return [(name, dotted_name(drawn_from(src))) for name, src in loop_copies(loop)]


def test_a_loop_copying_every_value_fills_the_dict_from_the_source():
    assert copies('for k, v in ck["state_dict"].items():\n    t = k[7:]\n    d[t] = v\n') == [("d", "ck")]
    assert copies("for k, v in list(sd.items()):\n    if k.startswith('m'):\n        d[k[2:]] = v\n") == [("d", "sd")]
    assert copies("for k, v in sd.items(): d[k] = v\n") == [("d", "sd")]


def test_a_loop_storing_other_values_is_not_followed():
    assert copies("for k, v in sd.items():\n    d[k] = v.cpu()\n") == []
    assert copies("for k, v in sd.values():\n    d[k] = v\n") == []
    assert copies("for k in sd.items():\n    d[k] = k\n") == []
    assert copies("for k, v in sd.items():\n    d[k] = k\n") == []
    assert copies("for k, v in sd.items():\n    x = v\n") == []
