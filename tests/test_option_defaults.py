"""option_defaults.py: integer defaults of a module's own command-line options."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.option_defaults import OptionDefaults
from memlint.analysis.scope.options import ModuleOptions

_HEAD = "import argparse\nparser = argparse.ArgumentParser()\n"


def _loop(source: str) -> tuple[OptionDefaults, cst.For]:
    module = cst.parse_module(source)
    loop = next(s for s in module.body if isinstance(s, cst.For))
    return OptionDefaults(ModuleOptions(module)), loop


def test_a_range_of_an_option_defaulting_to_one():
    src = (
        _HEAD
        + "parser.add_argument('--num-split', type=int, default=1)\nargs = parser.parse_args()\nfor j in range(args.num_split):\n    pass\n"
    )
    options, loop = _loop(src)
    assert options.runs_once_by_default(loop)


def test_dest_names_the_option():
    src = (
        _HEAD
        + "parser.add_argument('-n', dest='parts', default=1)\nargs = parser.parse_args()\nfor j in range(args.parts):\n    pass\n"
    )
    options, loop = _loop(src)
    assert options.runs_once_by_default(loop)


def test_another_default():
    src = (
        _HEAD
        + "parser.add_argument('--n', type=int, default=2)\nargs = parser.parse_args()\nfor j in range(args.n):\n    pass\n"
    )
    options, loop = _loop(src)
    assert not options.runs_once_by_default(loop)


def test_declared_twice_says_nothing():
    src = (
        _HEAD
        + "parser.add_argument('--n', default=1)\nparser.add_argument('--n', default=1)\nargs = parser.parse_args()\nfor j in range(args.n):\n    pass\n"
    )
    options, loop = _loop(src)
    assert not options.runs_once_by_default(loop)


def test_a_namespace_not_parsed_here():
    src = _HEAD + "parser.add_argument('--n', default=1)\nfor j in range(cfg.n):\n    pass\n"
    options, loop = _loop(src)
    assert not options.runs_once_by_default(loop)


def test_range_with_a_start():
    src = (
        _HEAD
        + "parser.add_argument('--n', default=1)\nargs = parser.parse_args()\nfor j in range(0, args.n):\n    pass\n"
    )
    options, loop = _loop(src)
    assert not options.runs_once_by_default(loop)
