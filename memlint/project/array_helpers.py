"""Helpers named for gradients that only compute on arrays (issue 29, UGATIT).

A call whose name says it needs gradients (``cam(...)``, ``saliency(...)``:
vocabulary/tokens.py's GRAD_NAME_TOKENS) keeps an evaluation loop from being
read as grad-free inference (MEM201's trap: Grad-CAM, saliency maps). UGATIT's
``cam(x, size)`` in ``utils.py`` only colours a heat map the generator already
returned: ``np.min``, ``np.uint8``, ``cv2.resize``, ``cv2.applyColorMap``. Its
name then says nothing about gradients.

A module-level function of another project module is an array helper when
its body proves it cannot need gradients: every call in it is of a numeric
library that never differentiates (numpy, OpenCV, PIL, SciPy, math) or of a
builtin, it calls no parameter, no method and nothing of the project, and it
spells no gradient word (``grad``, ``backward``, ``hook``). The view lists
the callees of the viewed module, as it writes them, that name a gradient
and are such helpers; the loop analysis then drops their name's evidence.
"""

from __future__ import annotations

import ast
import builtins

from memlint.vocabulary.tokens import GRAD_NAME_TOKENS, name_tokens

# Libraries with no autograd: nothing they compute has a gradient to need.
_ARRAY_ROOTS = frozenset({"numpy", "cv2", "PIL", "scipy", "math", "skimage", "imageio"})
_GRAD_WORDS = ("grad", "backward", "hook", "autograd")


def names_gradients(written: str) -> bool:
    """``written`` (a callee as a call spells it) is named for gradients."""
    return bool(name_tokens(written.rsplit(".", 1)[-1]) & GRAD_NAME_TOKENS)


def is_array_helper(tree: ast.Module, name: str) -> bool:
    """The module-level function ``name`` of ``tree``, defined once, only
    computes with numeric libraries and builtins (module docstring)."""
    defs = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name]
    if len(defs) != 1 or defs[0].decorator_list:
        return False
    roots = _array_imports(tree)
    if not roots:
        return False
    fn = defs[0]
    own = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    own.update(n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load))
    shadowed = own | _module_names(tree)
    roots = {k: v for k, v in roots.items() if k not in own}
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and not _array_call(node.func, roots, shadowed):
            return False
        if isinstance(node, ast.Attribute) and any(w in node.attr for w in _GRAD_WORDS):
            return False
        if isinstance(node, ast.Name) and any(w in node.id for w in _GRAD_WORDS):
            return False
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not fn:
            return False
    return True


def _array_imports(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound by ``import numpy as np`` / ``import os, cv2``
    to a numeric library; a name the module also binds otherwise is left out."""
    found: dict[str, str] = {}
    other: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                root = alias.name.split(".")[0]
                local = alias.asname or root
                if root in _ARRAY_ROOTS and (alias.asname is None or alias.name == root):
                    found[local] = root
                else:
                    other.add(local)
        elif isinstance(stmt, ast.ImportFrom):
            other.update(a.asname or a.name for a in stmt.names)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            other.add(stmt.name)
        else:
            other.update(n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return {k: v for k, v in found.items() if k not in other}


def array_helper_at(index, path: str, name: str) -> bool:
    """``is_array_helper`` of ``path``'s function ``name``, read once per
    generation of the index (``index._current``'s memo)."""
    index._note_read(path)  # the view depends on the helper's text
    memo = index._current("_array_helpers")
    key = (path, name)
    if key not in memo:
        try:
            memo[key] = is_array_helper(ast.parse(index.source_bytes(path)), name)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            memo[key] = False
    return memo[key]


def _module_names(tree: ast.Module) -> set[str]:
    """Every name the module binds at its top level, imports included."""
    names: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in stmt.names)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        else:
            names.update(n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load))
    return names


def _array_call(func: ast.expr, roots: dict[str, str], shadowed: set[str]) -> bool:
    """``np.min`` / ``cv2.resize`` / ``np.random.rand`` on a numeric import,
    or a builtin (``len``, ``max``) no binding of the module or function hides."""
    if isinstance(func, ast.Name):
        return (
            hasattr(builtins, func.id)
            and func.id not in shadowed
            and func.id not in ("eval", "exec", "getattr", "__import__")
        )
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and func.id in roots
