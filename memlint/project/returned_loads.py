"""Module-level functions returning a ``torch.load`` without ``map_location``.

``def load_checkpoint(fpath): ... checkpoint = torch.load(fpath); return
checkpoint``: a caller in another module holds what that load restored, on
the device it was saved from. MEM701 reports such a load at the helper when
its callers load it into models on a GPU (``Caller.gpu_state``); when some
callers load it into models on the CPU and others into one on a GPU (aster's
``load_checkpoint``), the GPU caller is reported too, at its call, naming
the helper's load (``ProjectView.mixed_loaders``).

The same reading as the rule's ``_ReturnedLoads``, on the ``ast`` tree: a
``return torch.load(f)``, or ``return ckpt`` where the function binds
``ckpt`` only to loads (one with ``map_location`` may be among them, on
another branch). Any other value returned says nothing. Nested functions
and classes are their own.
"""

from __future__ import annotations

import ast


def unmapped_return(fn: ast.FunctionDef | ast.AsyncFunctionDef, bindings: dict[str, str]) -> int:
    """The line of the first ``torch.load`` without ``map_location`` that
    ``fn`` returns, 0 when it returns none or anything else too."""
    bound: dict[str, list[ast.Call | None]] = {}
    returned: list[ast.expr] = []
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            # ``return None``: no tensors, as a bare ``return`` (a missing checkpoint).
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                returned.append(node.value)
        elif isinstance(node, ast.Assign):
            kind = _load_kind(node.value, bindings)
            load = node.value if kind == "unmapped" and isinstance(node.value, ast.Call) else None
            if kind != "mapped":  # a mapped load: nothing for the callers, nothing against the others
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        bound.setdefault(target.id, []).append(load)
        todo.extend(ast.iter_child_nodes(node))
    lines: list[int] = []
    for value in returned:
        kind = _load_kind(value, bindings)
        if kind == "unmapped":
            lines.append(value.lineno)
        elif kind == "mapped":
            continue
        elif isinstance(value, ast.Name) and bound.get(value.id) and None not in bound[value.id]:
            lines.extend(load.lineno for load in bound[value.id] if load is not None)
        else:
            return 0
    return min(lines, default=0)


def _load_kind(value: ast.expr, bindings: dict[str, str]) -> str:
    """ "unmapped" for ``torch.load(f)`` that MEM701 may flag, "mapped" for
    any other ``torch.load``, "" for anything else."""
    if not isinstance(value, ast.Call) or _qualified(value.func, bindings) != "torch.load":
        return ""
    if any(k.arg is None or k.arg == "map_location" for k in value.keywords):
        return "mapped"  # ``**kwargs`` may hold it
    if len(value.args) >= 2 or any(isinstance(a, ast.Starred) for a in value.args):
        return "mapped"
    return "unmapped"


def _qualified(func: ast.expr, bindings: dict[str, str]) -> str:
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return ""
    head = bindings.get(func.id, "")
    return ".".join([head, *reversed(parts)]) if head else ""


def mixed_loader(index, helper: str, facts, own: list[bool]) -> str:
    """For a call of ``facts`` (a function of the module at ``helper``
    returning an unmapped load): ``"lib/utils/serialization.py:55"``, where
    that load is, when some caller in the project does not load the value
    into a model on a GPU (``Caller.gpu_state``; ``own``: that of each call
    of the viewed module, known whatever the index read), so that the
    helper alone does not say which caller doubles the weights; "" otherwise,
    and when the helper's module saves its checkpoints from CPU tensors. The
    view then depends on every module calling into the helper's. (A view
    read from disk holds the callers of modules spelling the viewed one's
    names only: it may miss a third module's CPU caller, never invent one.)"""
    summary = index.full_summary(helper)  # its saves, word-less or not
    if summary is None or summary.model_saves == "cpu" or (summary.cpu_saved and not summary.other_saved):
        return ""
    states = [*own, *(site.gpu_state for site in index._callers.get((helper, facts.name), ()))]
    if not states or all(states):
        return ""
    for read in index._target_reads.get(helper, ()):
        index._note_read(read)
    return f"{index.modules.display(helper)}:{facts.unmapped_load}"
