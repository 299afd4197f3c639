"""A notebook as a module of its project: its code cells, joined.

A notebook in a project imports the project's modules (``import fc_model``)
and calls their functions, so its code is summarised like a ``.py`` module's
(summary.py) and it gets a ``ProjectView``: the callers it holds count for
the project's functions, and its rules read the classes and functions of the
modules it imports. The join is the one the lint reads (run/notebook.py):
each code cell, IPython magics masked, then a marker line naming the cell,
so a call's line here is its line in the linted text.
"""

from __future__ import annotations

import ast
import json

from memlint.read.notebook_magics import mask_cell

MARKER = "__memlint_cell__ = {}"


def notebook_code(text: str) -> str:
    """The joined code cells of a notebook's JSON text; cells that do not
    parse on their own are left out when the whole does not parse (as the
    lint leaves them out); empty for a text that is not a notebook."""
    try:
        data = json.loads(text)
    except ValueError:
        return ""
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        return ""
    bodies: list[tuple[int, str]] = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        masked = mask_cell(source) if isinstance(source, str) else None
        if masked is not None:
            bodies.append((index + 1, masked.text))
    joined = _join(bodies)
    if _parses(joined):
        return joined
    return _join([(n, body) for n, body in bodies if _parses(body)])


def _join(bodies: list[tuple[int, str]]) -> str:
    parts = []
    for number, body in bodies:
        if body and not body.endswith("\n"):
            body += "\n"
        parts.append(body)
        parts.append(MARKER.format(number) + "\n")
    return "".join(parts)


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True
