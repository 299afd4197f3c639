"""A class picked by a factory function (MEM701's dynamic constructors):
``Model = load_model(cfg.model)`` then ``model = Model(...)``, where
``load_model`` returns one class of a registry (project/class_factories.py).

Of another project module: the project view's ``cpu_factories``. Of this
module: the registry's sources read on the module's ``ast`` tree (the
linter's when it has one), each a class of this module or of another
project module that moves nothing; a source that is every attribute of a
module (``@module``) needs the project and is not claimed here.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import libcst as cst

from memlint.parse.guard import python_tree
from memlint.project.class_factories import factories


class FactoryClasses:
    """Which calls give a class that builds on the CPU."""

    def __init__(
        self,
        module: cst.Module,
        tree: ast.Module | None,
        imported: frozenset[str],
    ) -> None:
        self.module = module
        self.tree = tree
        self.imported = imported  # the project view's cpu_factories
        self._own: dict[str, list[str]] | None = None

    def gives_cpu_class(
        self, value: cst.BaseExpression, cpu_class: Callable[[str], bool], module_def: Callable[[str], bool]
    ) -> bool:
        """``value`` is ``factory(...)`` of such a function. ``cpu_class``: a class of
        this module, or imported, that moves nothing; ``module_def``: a name bound
        only by its one module-level ``def`` (handed in, not kept: no reference cycle)."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            return False
        name = value.func.value
        if name in self.imported:
            return True
        if not module_def(name):
            return False
        sources = self._own_factories().get(name)
        return bool(sources) and all(not s.startswith("@") and cpu_class(s) for s in sources)  # type: ignore[union-attr]

    def _own_factories(self) -> dict[str, list[str]]:
        if self._own is None:
            # Linted without the gate's tree (fix, the server's single rules): the code's own.
            tree = self.tree if self.tree is not None else python_tree(self.module.code)
            self._own = factories(tree) if tree is not None else {}
        return self._own
