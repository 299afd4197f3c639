"""analysis/training/passed_dicts.py: helpers returning a view of a dict they are handed."""

import libcst as cst

from memlint.analysis.training.passed_dicts import passed_param


def passed(code: str) -> str | None:
    fn = cst.parse_module(code).body[0]
    assert isinstance(fn, cst.FunctionDef)
    return passed_param(fn)


def test_a_loop_filling_a_local_dict_with_the_parameters_values():
    code = """\
def filter_param_dict(state_dict, include=None):
    res = {}
    for k, p in state_dict.items():
        if include is not None and include not in k:
            continue
        res[k] = p
    return res
"""
    assert passed(code) == "state_dict"


def test_the_parameter_itself_a_key_or_a_copying_comprehension():
    assert passed("def f(sd):\n    return sd\n") == "sd"
    assert passed('def f(sd):\n    return sd["state_dict"]\n') == "sd"
    assert passed("def f(sd):\n    return {k[7:]: v for k, v in sd.items()}\n") == "sd"
    assert passed("def f(sd, key):\n    if key in sd:\n        return sd[key]\n    return sd\n") == "sd"


def test_anything_else_is_not_followed():
    # a transformed value, a bare return, another parameter, a rebound parameter, a generator
    assert passed("def f(sd):\n    return {k: v.cpu() for k, v in sd.items()}\n") is None
    assert passed("def f(sd):\n    if not sd:\n        return\n    return sd\n") is None
    assert passed("def f(sd, own):\n    if sd:\n        return sd\n    return own\n") is None
    assert passed("def f(sd):\n    sd = convert(sd)\n    return sd\n") is None
    assert passed("def f(sd):\n    yield sd\n") is None
    assert passed("def f(sd):\n    pass\n") is None


def test_a_local_dict_bound_twice_or_filled_with_other_values_is_not_followed():
    twice = """\
def f(sd):
    res = {}
    for k, v in sd.items():
        res[k] = v
    res = {}
    return res
"""
    moved = """\
def f(sd):
    res = {}
    for k, v in sd.items():
        res[k] = v.cpu()
    return res
"""
    assert passed(twice) is None
    assert passed(moved) is None
