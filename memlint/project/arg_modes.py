"""The training/eval mode of the models a call hands to a project function.

``validate(model, val_loader)`` in ``train.py`` runs the helper of
``utils.py`` with ``model`` in whatever mode ``train.py`` left it: MEM202
asks whether every caller hands it a model still in training mode. This is
the ``ast`` twin of ``loops.mode_before`` for the one question the summary
keeps: for each argument that is a dotted name, the last ``.eval()`` /
``.train()`` of it before the call in the calling scope (walking back around
enclosing loops, the previous iteration's tail included), and whether it
trained since. Anything else is unknown, and unknown stays silent: the modes
a model is built in are not followed, nor calls into other scopes except
through the functions a call hands the model to (``train_one_epoch(model,
...)``), which the index judges from their own summaries (``via``).
"""

from __future__ import annotations

import ast
from bisect import bisect_left
from dataclasses import dataclass, field

from memlint.gate.ast_names import ast_dotted
from memlint.vocabulary.tokens import name_tokens

Pos = tuple[int, int]

EVAL, TRAIN, UNKNOWN = "eval", "train", "unknown"
# Words of a function name that may switch a model's mode (loops._may_set_mode).
_MODE_WORDS = frozenset({"eval", "train", "mode", "dropout", "bn", "batchnorm", "freeze", "unfreeze"})
# Words naming what a function builds when it is not a model (loops._NOT_A_MODEL, the part that matters here).
_NOT_A_MODEL = frozenset({"transform", "transforms", "dataset", "datasets", "loader", "dataloader", "sampler"})


class _Event:
    """One thing a scope does to model modes. A plain class with slots, not
    a frozen dataclass: the summary's walk makes one per call it cannot
    read (most calls of every module), and a frozen dataclass's ``__init__``
    sets each field through ``object.__setattr__``."""

    __slots__ = ("pos", "kind", "receiver", "names", "runs", "callee", "call")

    def __init__(
        self,
        pos: Pos,
        kind: str,  # "eval", "train", "unknown" (an opaque call that may switch), "call" (hands names to a function)
        receiver: str = "",  # "eval"/"train": the dotted name switched
        names: frozenset[str] = frozenset(),  # "call": the dotted names handed over
        runs: frozenset[str] = frozenset(),  # "call": the names it only runs (``model(x)``, ``model.forward(x)``)
        callee: str = "",  # "call": a project function as spelled ("engine.train_one_epoch", "local:fit"), "" for others
        # "run": a call of nothing the summary follows (``model(x)``, ``model.run_epoch(...)``);
        # its ``names`` and ``runs`` are read from it only when ``state`` walks past it.
        call: ast.Call | None = None,
    ) -> None:
        self.pos = pos
        self.kind = kind
        self.receiver = receiver
        self.names = names
        self.runs = runs
        self.callee = callee
        self.call = call


@dataclass
class ModeTrace:
    """What one scope (a function's own statements, or the module's) does to
    model modes, in source order; filled by the summary's walk."""

    events: list[_Event] = field(default_factory=list)
    loops: list[tuple[Pos, Pos, bool]] = field(default_factory=list)  # (start, end, trains: holds a backward)
    receivers: set[str] = field(default_factory=set)  # every name switched: ``state`` can know only these
    _sorted: bool = False
    _handed: dict[int, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)  # "run" events read

    def switch(self, pos: Pos, kind: str, receiver: str) -> None:
        self.receivers.add(receiver)
        self.events.append(_Event(pos, kind, receiver))

    def opaque(self, pos: Pos) -> None:
        self.events.append(_Event(pos, UNKNOWN))

    def hand(self, pos: Pos, callee: str, names: frozenset[str], runs: frozenset[str] = frozenset()) -> None:
        if names:
            self.events.append(_Event(pos, "call", names=names, callee=callee, runs=runs))

    def run(self, pos: Pos, call: ast.Call) -> None:
        """``hand(pos, "", handed_names(call), run_names(call))``, the names
        read only if ``state`` walks past it: most scopes switch no model,
        and a call's names are then never asked for."""
        self.events.append(_Event(pos, "run", call=call))

    def backward(self, pos: Pos) -> None:
        self.events.append(_Event(pos, "backward"))

    def loop(self, start: Pos, end: Pos, trains: bool) -> None:
        self.loops.append((start, end, trains))

    def _ready(self) -> None:
        if not self._sorted:
            self.events.sort(key=lambda e: e.pos)
            self._starts = [e.pos for e in self.events]
            self._sorted = True

    def state(self, name: str, start: Pos, end: Pos) -> tuple[str, tuple[str, ...]]:
        """The mode ``name`` is in when the call spanning ``start``..``end``
        runs: ("eval", ()), ("train", via) or ("unknown", ()). ``via``: the
        project functions ``name`` was handed to since the switch (spelled
        as the summary spells callees), and "loop" when this scope ran it
        and backpropagated since. Handed since to a call we cannot read
        (``model.run_epoch(...)``) and not seen trained: unknown, not fresh."""
        if not self.may_know(name):
            return UNKNOWN, ()  # no switch of it, of a part of it or of what holds it
        self._ready()
        enclosing = sorted((lp for lp in self.loops if lp[0] < start and end <= lp[1]), key=lambda lp: lp[0])[::-1]
        ranges: list[tuple[Pos, Pos]] = []
        cs, ce = start, end
        for lo, hi, _ in enclosing:
            ranges += [(lo, cs), (ce, hi)]
            cs, ce = lo, hi
        ranges.append(((-1, -1), cs))
        via: list[str] = []
        handed = False  # to a call we cannot read (``model.run_epoch(...)``): it may have trained it
        ran = backprop = False  # met since the switch, walking back: a forward of it, a backward
        for lo, hi in ranges:
            for k in range(bisect_left(self._starts, hi) - 1, bisect_left(self._starts, lo) - 1, -1):
                e = self.events[k]
                if e.kind == UNKNOWN:
                    return UNKNOWN, ()
                if e.kind == "backward":
                    backprop = True
                    continue
                if e.kind == "run":
                    names, runs = self._names_of(k, e.call)  # type: ignore[arg-type]
                    ran = ran or any(_same_or_part(name, n) for n in runs)
                    handed = handed or any(_same_or_part(name, n) for n in names - runs)
                    continue
                if e.kind == "call":
                    ran = ran or any(_same_or_part(name, n) for n in e.runs)
                    if e.callee and any(_same_or_part(name, n) for n in e.names):
                        via.append(e.callee)
                    elif not e.callee and any(_same_or_part(name, n) for n in e.names - e.runs):
                        handed = True
                    continue
                if e.receiver == name or name.startswith(e.receiver + "."):
                    if e.kind == TRAIN:
                        trained = tuple(via) + (("loop",) if ran and backprop else ())
                        if handed and "loop" not in trained:
                            return UNKNOWN, ()  # trained or not, we cannot tell: not "fresh"
                        return TRAIN, trained
                    return e.kind, ()
                if e.receiver.startswith(name + "."):
                    return UNKNOWN, ()  # ``model.head.train()``: part of it switched
        return UNKNOWN, ()

    def evaluating_before(self, start: Pos) -> bool:
        """The last switch of any model before ``start`` in this scope's
        source order is an ``.eval()`` (no ``.train()``, no call that may
        switch we cannot read, no backward since): the scope evaluates
        something (ReID-MGN's ``vis()``: ``self.model.eval()``, then
        ``extract_feature(model, ...)`` on a name it does not switch)."""
        if not self.receivers:
            return False
        self._ready()
        for k in range(bisect_left(self._starts, start) - 1, -1, -1):
            kind = self.events[k].kind
            if kind == EVAL:
                return True
            if kind in (TRAIN, UNKNOWN, "backward"):
                return False
        return False

    def may_know(self, name: str) -> bool:
        """Some switch in this scope is of ``name``, of what holds it
        (``model`` for ``model.head``) or of a part of it: without one,
        ``state`` walks to the scope's start and finds it unknown."""
        receivers = self.receivers
        if not receivers:
            return False
        if name in receivers or any(r.startswith(name + ".") for r in receivers):
            return True
        head = name
        while "." in head:
            head = head.rsplit(".", 1)[0]
            if head in receivers:
                return True
        return False

    def _names_of(self, index: int, call: ast.Call) -> tuple[frozenset[str], frozenset[str]]:
        found = self._handed.get(index)
        if found is None:
            found = self._handed[index] = (handed_names(call), run_names(call))
        return found


def _same_or_part(name: str, other: str) -> bool:
    return other == name or other.startswith(name + ".")


def may_set_mode(last: str) -> bool:
    """An opaque call that may switch a model's mode (``enable_dropout(m)``,
    ``set_eval_mode(m)``, ``m.apply(fn)``); constructors are not."""
    if not last or last[:1].isupper():
        return False
    found = _MAY_SET_MODE.get(last)
    if found is None:
        if len(_MAY_SET_MODE) > 100_000:
            _MAY_SET_MODE.clear()
        found = _MAY_SET_MODE[last] = _may_set_mode(last)
    return found


# last name -> may_set_mode: asked of most calls of every module the summary
# walks, of a few thousand distinct names.
_MAY_SET_MODE: dict[str, bool] = {}


def _may_set_mode(last: str) -> bool:
    tokens = name_tokens(last)
    if tokens & _NOT_A_MODEL:
        return False
    return bool(tokens & _MODE_WORDS) or last == "apply"


def run_names(call: ast.Call) -> frozenset[str]:
    """The module a call only runs: ``model`` for ``model(x)``,
    ``model.forward(x)``, ``model.__call__(x)``."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in ("forward", "__call__"):
        func = func.value
    elif isinstance(func, ast.Attribute) and not (isinstance(func.value, ast.Name) and func.value.id == "self"):
        return frozenset()  # ``model.run_epoch(...)``: a method, not a forward
    name = dotted(func)
    return frozenset({name}) if name else frozenset()


def handed_names(call: ast.Call) -> frozenset[str]:
    """The dotted names a call runs or hands over: its receiver (``model(x)``,
    ``model.forward(x)``) and its arguments."""
    out = set()
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in ("forward", "__call__"):
        func = func.value
    head = dotted(func)
    if head:
        out.add(head)
    for arg in (*call.args, *(k.value for k in call.keywords)):
        name = dotted(arg.value if isinstance(arg, ast.Starred) else arg)
        if name:
            out.add(name)
    return frozenset(out)


def argument_keys(call: ast.Call) -> list[tuple[str, str]]:
    """(parameter key, dotted name) per argument that is a dotted name: the
    position ("0", "1"...) before any ``*args``, or the keyword."""
    out = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        name = dotted(arg)
        if name:
            out.append((str(i), name))
    for kw in call.keywords:
        name = dotted(kw.value) if kw.arg else ""
        if name:
            out.append((kw.arg, name))  # type: ignore[arg-type]
    return out


def dotted(node: ast.AST) -> str:
    """``a.b.c`` for a chain of names, "" for anything else."""
    if node.__class__ is ast.Name:  # most callees and arguments: no chain to spell
        return node.id  # type: ignore[attr-defined]
    return ast_dotted(node) or ""
