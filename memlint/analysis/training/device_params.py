"""Parameters to which every caller hands a model already on a device.

``def load_checkpoint(path, model): ... model.load_state_dict(new_s)`` with
``model = Wav2Lip().to(device)`` at its only call, or lib/utils.py's
``get_ckpt_model(ckpt_path, model, device)`` called from run_models.py with a
model built ``.to(device)``: the model the helper loads into is on a GPU, so
a ``torch.load`` without ``map_location`` drawn into it (a key, a filtering
comprehension, a renaming loop) is a second copy of the weights there. MEM701
reads a drawn load only into a model known to be on a device; for a
parameter, that is known from the callers.

Every known call must hand such a model: the calls of this module (a name
the caller moved before the call, as the rule's own ``_placed_before`` says),
and the callers in other modules (``Caller.gpu_args``, project/gpu_args.py).
A function passed around by name, a method, a parameter rebound or moved
before the load, a public function read without the project, or one called
nowhere says nothing.

A call of this module may hand on a parameter of its own function
(PointRCNN's ``load_ckpt_based_on_args(model, logger)`` calls
``load_part_ckpt(model, ...)``, and is itself called only after
``model.cuda()``): that parameter is asked the same question, one function
up at a time; a cycle of such calls says nothing.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from memlint.analysis.scope.callgraph import CallGraph
from memlint.analysis.scope.names import binds_name
from memlint.parse.traversal import visit_fast
from memlint.project.view import ProjectView


class DeviceParams:
    """Per module: which parameter of which function holds a model on a device."""

    def __init__(
        self,
        module: cst.Module,
        calls: CallGraph,
        project: ProjectView | None,
        placed_before: Callable[[cst.BaseExpression, cst.CSTNode], bool],
    ) -> None:
        self.module = module
        self.calls = calls
        self.project = project
        self.placed_before = placed_before  # (a model as a call passes it, the call): moved there before
        self._known: dict[tuple[cst.FunctionDef, str], tuple[str, ...] | None] = {}
        self._asking: set[tuple[cst.FunctionDef, str]] = set()  # the questions under way: a cycle says nothing

    def callers(self, fn: cst.FunctionDef, param: str, use: cst.CSTNode) -> tuple[str, ...] | None:
        """When every known call of ``fn`` hands a model on a device as
        ``param`` and ``param`` still holds it at ``use``: where the calls
        of other modules are (``"run_models.py:237"``; none for calls of
        this module only). None otherwise."""
        if _rebound_before(fn, param, use):
            return None
        key = (fn, param)
        if key not in self._known:
            self._asking.add(key)
            try:
                found = self._every_call(fn, param)
            finally:
                self._asking.discard(key)
            self._known[key] = found
        return self._known[key]

    def _every_call(self, fn: cst.FunctionDef, param: str) -> tuple[str, ...] | None:
        if fn in self.calls.class_of or fn in self.calls.escapes:
            return None
        names = [p.name.value for p in fn.params.params]
        if param not in names:
            return None
        index = names.index(param)
        module_level = self.calls.owner.get(fn) is self.module
        if module_level and self.project is None and not fn.name.value.startswith("_"):
            return None  # callers in other modules are not known
        remote = self.project.callers_of(fn.name.value) if module_level and self.project is not None else ()
        local = self.calls.call_sites.get(fn, [])
        if not local and not remote:
            return None
        where: list[str] = []
        for call in local:
            value = _argument(call, index, param)
            if value is None:
                return None
            if self.placed_before(value, call):
                continue
            handed = self._handed_on(value, call)
            if handed is None:
                return None
            where.extend(w for w in handed if w not in where)
        if not all(caller.passes_gpu_model(index, param) for caller in remote):
            return None
        return (*where, *(caller.where() for caller in remote if caller.where() not in where))

    def _handed_on(self, value: cst.BaseExpression, call: cst.CSTNode) -> tuple[str, ...] | None:
        """``value`` is a parameter of the function making ``call``, unchanged
        up to it, to which every call of that function hands a model on a
        device: where those calls are in other modules; None otherwise."""
        if not isinstance(value, cst.Name) or not isinstance(call, cst.Call):
            return None
        scope = self.calls.scope_of_call(call)
        if not isinstance(scope, cst.FunctionDef):
            return None
        key = (scope, value.value)
        if key in self._asking:
            return None
        self._asking.add(key)
        try:
            return self.callers(scope, value.value, call)
        finally:
            self._asking.discard(key)


def _argument(call: cst.Call, index: int, param: str) -> cst.BaseExpression | None:
    """The value ``call`` passes to the parameter at ``index`` named ``param``."""
    positional = 0
    for arg in call.args:
        if arg.star:
            return None  # ``*args`` / ``**kwargs``: which one it is, is not known
        if arg.keyword is None:
            if positional == index:
                return arg.value
            positional += 1
        elif arg.keyword.value == param:
            return arg.value
    return None


class _Rebinds(cst.CSTVisitor):
    """``param`` is bound again before ``until`` (``model = Net()``, a loop
    target, ``with ... as model``): it is no longer the caller's model."""

    def __init__(self, param: str, until: cst.CSTNode) -> None:
        self.param = param
        self.until = until
        self.found = False
        self._done = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._done or self.found:
            return False
        if node is self.until:
            self._done = True
            return False
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False  # their own scope
        targets: list[cst.BaseExpression] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For)):
            targets = [node.target]
        elif isinstance(node, cst.AsName):
            targets = [node.name]
        elif isinstance(node, cst.NamedExpr):
            targets = [node.target]
        self.found = any(binds_name(t, self.param) for t in targets) or _moves_back(node, self.param)
        return not self.found


def _moves_back(node: cst.CSTNode, param: str) -> bool:
    """``model.cpu()`` / ``model.to(...)``: where it is after that is another question."""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in ("cpu", "to")
        and isinstance(node.func.value, cst.Name)
        and node.func.value.value == param
    )


def _rebound_before(fn: cst.FunctionDef, param: str, use: cst.CSTNode) -> bool:
    visitor = _Rebinds(param, use)
    visit_fast(fn.body, visitor)
    return visitor.found
