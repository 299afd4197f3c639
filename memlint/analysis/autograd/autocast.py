"""Which code runs inside an ``autocast`` block.

API (through ``facts.autocast``):

- ``block_of(node)``: the innermost ``with autocast(...)`` statement around a
  call or statement line, in the same function; None when the innermost
  autocast there is ``enabled=False`` or there is none. A function defined in
  the block is not run by it, so its body starts afresh.
- ``is_autocast(call)``: ``torch.autocast``/``torch.amp.autocast``/
  ``torch.cuda.amp.autocast``/``torch.cpu.amp.autocast`` under any import
  spelling; ``enabled(call)``: False only for a literal ``enabled=False``.
- ``with ctx:`` counts when every assignment to ``ctx`` is such a call, or
  (nanoGPT) ``nullcontext() if device == "cpu" else torch.amp.autocast(...)``.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import ImportTable
from memlint.parse.traversal import visit_fast

AUTOCAST_NAMES = frozenset(
    {
        "torch.autocast",
        "torch.amp.autocast",
        "torch.amp.autocast_mode.autocast",
        "torch.cuda.amp.autocast",
        "torch.cuda.amp.autocast_mode.autocast",
        "torch.cpu.amp.autocast",
        "torch.cpu.amp.autocast_mode.autocast",
    }
)
# Position of ``enabled`` among the positional parameters of each spelling.
_ENABLED_POSITION = {"torch.autocast": 2, "torch.amp.autocast": 2, "torch.amp.autocast_mode.autocast": 2}


class AutocastScopes(cst.CSTVisitor):
    def __init__(self, module: cst.Module, names: ImportTable) -> None:
        super().__init__()
        self._names = names
        # innermost autocast ``with`` (None: disabled or none) for each call/line
        self._stack: list[cst.With | None] = [None]
        self._block: dict[int, cst.With] = {}
        # name -> the autocast call every assignment so far gave it (None: something else)
        self._aliases: dict[str, cst.Call | None] = {}
        visit_fast(module, self)

    def is_autocast(self, call: cst.BaseExpression) -> bool:
        return isinstance(call, cst.Call) and self._names.call_name(call) in AUTOCAST_NAMES

    def enabled(self, call: cst.Call) -> bool:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "enabled":
                return not _is_false(arg.value)
        position = _ENABLED_POSITION.get(self._names.call_name(call) or "", 0)
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if len(positional) > position:
            return not _is_false(positional[position].value)
        return True

    # The new state covers the ``with`` items too (``visit_fast`` has no
    # ``visit_With_body``); nothing in an ``autocast(...)`` item is a backward.
    def visit_With(self, node: cst.With) -> None:
        state = self._stack[-1]
        for item in node.items:
            call = item.item
            if isinstance(call, cst.Name):
                call = self._aliases.get(call.value)  # type: ignore[assignment]
            if call is not None and self.is_autocast(call):
                state = node if self.enabled(call) else None  # type: ignore[arg-type]
        self._stack.append(state)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Name):
                name = t.target.value
                found = self._autocast_value(node.value)
                known = self._aliases.get(name, found)
                self._aliases[name] = found if found is not None and known is found else None

    def _autocast_value(self, value: cst.BaseExpression) -> cst.Call | None:
        if self.is_autocast(value):
            return value  # type: ignore[return-value]
        if isinstance(value, cst.IfExp):
            branches = (value.body, value.orelse)
            calls = [b for b in branches if self.is_autocast(b)]
            others = [b for b in branches if not self.is_autocast(b)]
            if calls and all(_is_nullcontext(o) for o in others):
                return calls[0]  # type: ignore[return-value]
        return None

    def leave_With(self, original_node: cst.With) -> None:
        self._stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._stack.append(None)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._stack.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._stack.append(None)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._stack.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._stack.append(None)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._stack.pop()

    def visit_Call(self, node: cst.Call) -> None:
        self._record(node)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._record(node)

    def _record(self, node: cst.CSTNode) -> None:
        if self._stack[-1] is not None:
            self._block[id(node)] = self._stack[-1]

    def block_of(self, node: cst.CSTNode) -> cst.With | None:
        return self._block.get(id(node))


def _is_false(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def _is_nullcontext(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and (
        (isinstance(expr.func, cst.Name) and expr.func.value == "nullcontext")
        or (isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "nullcontext")
    )
