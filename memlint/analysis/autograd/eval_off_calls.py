"""Model calls that return no history because the model is in eval mode.

SECOND's ``VoxelNet.forward`` returns, when ``self.training`` is false,
only what it computed under ``torch.no_grad()`` (project/eval_forwards.py).
``net(example)`` after ``net.eval()`` (loops.py's ``mode_before``: the last
switch of ``net`` on every way to the call, none unknown) therefore carries
no history. The model's classes come from the project view (``eval_off``:
the receivers whose every project class is such a model) or, for a class
of this module, from every binding of the receiver's name here being a
construction of one (through ``.to(...)``-style calls).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import libcst as cst

from memlint.analysis.scope.bindings import Bindings, unwrap_pass_through
from memlint.analysis.scope.callgraph import CallGraph
from memlint.analysis.scope.class_trees import ClassTrees
from memlint.analysis.scope.names import dotted_name
from memlint.analysis.scope.objects import ObjectTable
from memlint.project.eval_forwards import eval_off_forward, works_before_eval_branch
from memlint.project.object_types import is_off_context


class EvalOffCalls:
    def __init__(
        self,
        module: cst.Module,
        calls: CallGraph,
        objects: ObjectTable,
        bindings: Callable[[], Bindings],
        loops: Callable[[], object],
        project_pairs: frozenset[tuple[str, str]],
        class_trees: ClassTrees | None = None,
    ) -> None:
        self._module = module
        self._class_trees = class_trees or ClassTrees(module, calls.classes, None)
        self._calls = calls
        self._objects = objects
        self._bindings = bindings
        self._loops = loops
        self._pairs = project_pairs
        self._local: frozenset[str] | None = None
        # Of them, those whose forward works with grad on before its eval branch.
        self._working: frozenset[str] = frozenset()

    def returns_no_history(self, func: cst.BaseExpression, call: cst.Call) -> bool:
        """``func(...)`` (``call``) is such a model's call in eval mode."""
        if isinstance(func, cst.Attribute) and func.attr.value == "forward":
            func = func.value
        receiver = dotted_name(func)
        if receiver is None:
            return False
        scope = self._objects.scope_of(call)
        if not (self._in_view(receiver, scope) or self._built_here(receiver, scope)):
            return False
        return self._loops().mode_before(call, frozenset({receiver})) == "eval"  # type: ignore[attr-defined]

    def builds_graph(self, func: cst.BaseExpression, call: cst.Call) -> bool:
        """Such a call whose model still works with grad on before its eval
        branch (eval_forwards.works_before_eval_branch): no history comes
        back, yet a graph is built (MEM201). A model typed by the project
        counts so here: the view's ``partly_off`` holds those that do not."""
        if not self.returns_no_history(func, call):
            return False
        if isinstance(func, cst.Attribute) and func.attr.value == "forward":
            func = func.value
        receiver = dotted_name(func) or ""
        scope = self._objects.scope_of(call)
        if self._in_view(receiver, scope):
            return True
        values = [unwrap_pass_through(v) for v in self._bindings().values(receiver, scope)]
        return any(isinstance(v, cst.Call) and dotted_name(v.func) in self._working for v in values)

    def _in_view(self, receiver: str, scope: cst.CSTNode) -> bool:
        if not self._pairs:
            return False
        name = self._calls.scope_name(scope)
        return (name, receiver) in self._pairs

    def _built_here(self, receiver: str, scope: cst.CSTNode) -> bool:
        local = self._local_classes()
        if not local:
            return False
        values = [unwrap_pass_through(v) for v in self._bindings().values(receiver, scope)]
        return bool(values) and all(isinstance(v, cst.Call) and dotted_name(v.func) in local for v in values)

    def _local_classes(self) -> frozenset[str]:
        """This module's classes, defined once, whose ``forward`` is eval-off."""
        if self._local is None:
            found = set()
            working = set()
            for name, defs in self._calls.classes.items():
                if len(defs) != 1:
                    continue
                cls = self._class_trees.of(defs[0])
                if cls is None:
                    continue
                forwards = [f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "forward"]
                if not (len(forwards) == 1 and eval_off_forward(forwards[0], is_off_context)):
                    continue
                # Only a class whose code names grad off counts (its forward
                # may return only ``None``); regenerated last, for the few left.
                code = self._module.code_for_node(defs[0])
                if "no_grad" in code or "inference_mode" in code:
                    found.add(name)
                    if works_before_eval_branch(forwards[0]):
                        working.add(name)
            self._local = frozenset(found)
            self._working = frozenset(working)
        return self._local
