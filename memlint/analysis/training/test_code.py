"""Unit tests: a ``test_*`` function in a ``test_*.py`` / ``*_test.py`` file.

A test drives a scheduler, a model or an optimizer to check what it does
(``lr_scheduler_test.py`` printing fifty learning rates), not to train: the
habits MEM201 and MEM802 report cost nothing there. Pytest's and unittest's
default discovery names, nothing else. MEM507 reads the whole file as test
code (a test module run as a script, ``python test_groups.py --fp16``, steps
a half model once to compare implementations); a file in a ``tests/`` folder
under another name is not one (such folders hold runnable examples too).
"""

from __future__ import annotations

from typing import Any

import libcst as cst


def is_test_file(path: str) -> bool:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith("_test.py")


def is_test_function(fn: cst.FunctionDef, path: str) -> bool:
    """``fn`` is a ``test_*`` function of a test file."""
    return fn.name.value.startswith("test_") and is_test_file(path)


def is_unit_test(fn: cst.FunctionDef, path: str, calls: Any, project: Any = None) -> bool:
    """``fn`` is a ``test_*`` function of a test file that no other function
    of its module calls, a unit test aside, and no other module of the
    project calls. Pytest calls its tests; ``test_one_epoch(device, model,
    loader)`` called by the script's own ``test(args, ...)`` in
    ``test_pcrnet.py`` is an evaluation step of an evaluation script, and so
    is ``test_all_case(net, images)`` of ``test_util.py``, imported and run
    by ``test_LA.py`` (pytest imports no test to run it), with the
    ``test_single_case`` it calls. A call at module level (``if __name__ ==
    "__main__": test_model()``) runs the test by hand: still a test.
    ``project``: the module's ProjectView, for callers in other modules."""
    return _unit_test(fn, path, calls, project, set())


def _unit_test(fn: cst.FunctionDef, path: str, calls: Any, project: Any, seen: set[int]) -> bool:
    if not is_test_function(fn, path):
        return False
    if id(fn) in seen:
        return True  # a cycle of tests calling each other: nothing outside them calls in
    seen.add(id(fn))
    if project is not None and calls.owner.get(fn) is calls.module and fn not in calls.class_of:
        if project.callers_of(fn.name.value):
            return False
    for site in calls.call_sites.get(fn, ()):
        caller = calls.scope_of_call(site)
        if isinstance(caller, cst.FunctionDef) and not _unit_test(caller, path, calls, project, seen):
            return False
    return True


def in_test_function(node: cst.CSTNode, parents: dict, path: str) -> bool:
    """``node`` sits in a ``test_*`` function (a method of a test case too)
    of a test file."""
    if not is_test_file(path):
        return False
    cur = parents.get(node)
    while cur is not None:
        if isinstance(cur, cst.FunctionDef) and is_test_function(cur, path):
            return True
        cur = parents.get(cur)
    return False
