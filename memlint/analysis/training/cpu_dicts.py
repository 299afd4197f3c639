"""Models on the CPU held in a local dict and loaded in a loop over it.

``modules = {}; modules["encoder"] = Net(...); modules["decoder"] = Net(...)``
then ``for k, v in modules.items(): v.load_state_dict(sd[k])`` before any
``.cuda()`` (SymbolicMathematics' ``build_modules``): each ``v`` is a model
built on the CPU. A dict counts while every use of its name in the function
is one of: its binding to an empty literal, a store of a model built on the
CPU under a key (``d[k] = Net()``), or the iterable of a ``for`` over
``d.items()``/``d.values()``. Any other use (a read of an item, a call it is
handed to, a method, a store of anything else) drops it, and so does a loop
variable bound from it that may have moved (``for v in d.values(): v.cuda()``
moves the dict's models, whatever a later loop binds).

Used by cpu_models.py's ``CpuModels`` walk (which says what "built on the
CPU" and "may have moved" mean); this module only keeps the dicts' books.

A dict literal of models built on the CPU (``BACKBONE_DICT = {"ResNet_50":
ResNet_50(size), "IR_50": IR_50(size)}``, face.evoLVe) is one too, and so
is an item read from such a dict into a name (``BACKBONE =
BACKBONE_DICT[name]``): whichever model the key picks was built on the
CPU. A move of that name may move the dict's model: it drops the dict.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

_ITERATIONS = frozenset({"items", "values"})


class CpuDicts:
    def __init__(self) -> None:
        # Per function: dict name -> the blocks it was bound in.
        self.dicts: list[dict[str, tuple[int, ...]]] = [{}]
        # Per function: dict name -> the constructors of its models.
        self.constructors: list[dict[str, set[str]]] = [{}]
        # Per function: loop variable -> the dict it was bound from.
        self.variables: list[dict[str, str]] = [{}]
        self._allowed: set[int] = set()  # Name nodes of a dict in an allowed use

    def enter_function(self) -> None:
        self.dicts.append({})
        self.constructors.append({})
        self.variables.append({})

    def leave_function(self) -> None:
        self.dicts.pop()
        self.constructors.pop()
        self.variables.pop()

    def bound(
        self, assign: cst.Assign, blocks: tuple[int, ...], built: Callable[[cst.BaseExpression], str | None]
    ) -> None:
        """After ``d = {}``: ``d`` starts as an empty dict of models; after
        ``d = {"a": Net(), ...}`` it holds the models ``built`` names the
        constructor of (None: not a model built on the CPU, not a dict)."""
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
            return
        value = assign.value
        name = assign.targets[0].target.value
        if isinstance(value, cst.Dict) and value.elements:
            made = [built(e.value) if isinstance(e, cst.DictElement) else None for e in value.elements]
            if all(made):
                self.dicts[-1][name] = blocks
                self.constructors[-1][name] = {m for m in made if m}
            return
        empty = isinstance(value, cst.Dict) and not value.elements
        # ``{i: None for i in range(n)}``: slots, no model yet (MOON's ``init_nets``).
        empty = empty or _empty_slots(value)
        empty = (
            empty
            or (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict")
            and not value.args
        )  # type: ignore[union-attr]
        if empty:
            self.dicts[-1][name] = blocks
            self.constructors[-1][name] = set()

    def storing(self, assign: cst.Assign) -> str | None:
        """Before ``d[k] = value`` is walked: the dict it stores into, if one."""
        if len(assign.targets) != 1:
            return None
        target = assign.targets[0].target
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            if target.value.value in self.dicts[-1]:
                self._allowed.add(id(target.value))
                return target.value.value
        return None

    def reading(self, assign: cst.Assign) -> str | None:
        """Before ``x = d[k]`` is walked: the dict of models it picks from, if one."""
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
            return None
        value = assign.value
        if (
            isinstance(value, cst.Subscript)
            and isinstance(value.value, cst.Name)
            and value.value.value in self.dicts[-1]
            and len(value.slice) == 1
            and isinstance(value.slice[0].slice, cst.Index)
        ):
            self._allowed.add(id(value.value))
            return value.value.value
        return None

    def picked(self, name: str, variable: str, on_cpu_here: Callable[[tuple[int, ...]], bool]) -> set[str] | None:
        """After ``variable = d[k]``: the constructors of ``d``'s models when
        ``d`` still holds models on the CPU here (``variable`` then ties its
        moves to ``d``), else None."""
        if name not in self.dicts[-1] or not on_cpu_here(self.dicts[-1][name]):
            return None
        self.variables[-1][variable] = name
        return set(self.constructors[-1][name])

    def stored(self, name: str, constructor: str | None, variable: str | None = None) -> None:
        """After ``d[k] = value``: ``constructor``, the class or builder of a
        model built on the CPU; None (anything else) drops ``d``. ``variable``:
        the name the model was stored from (``d[k] = net``), whose later move
        moves the dict's model."""
        if constructor is None:
            self.dicts[-1].pop(name, None)
        elif name in self.dicts[-1]:
            self.constructors[-1][name].add(constructor)
            if variable is not None:
                self.variables[-1][variable] = name

    def unlink(self, variable: str) -> None:
        """``variable`` is rebound: it names none of a dict's models any more."""
        self.variables[-1].pop(variable, None)

    def item_method(self, call: cst.Call, leaves_in_place: frozenset[str]) -> None:
        """Before ``d[k].state_dict()`` is walked: a method of one of the dict's
        models that leaves it where it is (``leaves_in_place``) keeps the dict."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in leaves_in_place):
            return
        item = func.value
        if isinstance(item, cst.Subscript) and isinstance(item.value, cst.Name) and item.value.value in self.dicts[-1]:
            self._allowed.add(id(item.value))

    def returned(self, name: str, on_cpu_here: Callable[[tuple[int, ...]], bool]) -> frozenset[str] | None:
        """At ``return d`` (or ``return d, ...``): the constructors of ``d``'s
        models when ``d`` holds models on the CPU here, else None."""
        if name not in self.dicts[-1] or not on_cpu_here(self.dicts[-1][name]):
            return None
        return frozenset(self.constructors[-1][name])

    def received(self, name: str, blocks: tuple[int, ...], constructors: frozenset[str]) -> None:
        """``d = build(...)`` (or ``d, x = build(...)``) from a function of the
        module whose every return gives a dict of models on the CPU (``returned``)."""
        self.dicts[-1][name] = blocks
        self.constructors[-1][name] = set(constructors)

    def loop(self, node: cst.For, on_cpu_here: Callable[[tuple[int, ...]], bool]) -> tuple[str, set[str]] | None:
        """``for k, v in d.items()`` / ``for v in d.values()`` over a dict of
        models on the CPU here: ``v`` and the constructors of ``d``'s models,
        to bind ``v`` for the loop."""
        it = node.iter
        if not (isinstance(it, cst.Call) and not it.args and isinstance(it.func, cst.Attribute)):
            return None
        receiver, method = it.func.value, it.func.attr.value
        if method not in _ITERATIONS or not isinstance(receiver, cst.Name) or receiver.value not in self.dicts[-1]:
            return None
        if not on_cpu_here(self.dicts[-1][receiver.value]):
            return None
        target: cst.BaseExpression = node.target
        if method == "items":
            if not (isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2):
                return None
            target = target.elements[1].value
        if not isinstance(target, cst.Name):
            return None
        self._allowed.add(id(receiver))
        self.variables[-1][target.value] = receiver.value
        return target.value, self.constructors[-1][receiver.value]

    def seen(self, node: cst.Name) -> None:
        """Any other use of a dict's name drops it."""
        if node.value in self.dicts[-1] and id(node) not in self._allowed:
            del self.dicts[-1][node.value]
            self.variables[-1] = {v: d for v, d in self.variables[-1].items() if d != node.value}

    def lost(self, key: str) -> None:
        """A loop variable bound from a dict may have moved: so may the dict's models."""
        name = self.variables[-1].pop(key.split(".", 1)[0], None)
        if name is not None:
            self.dicts[-1].pop(name, None)


def _empty_slots(value: cst.BaseExpression) -> bool:
    """``{k: None for k in ...}``: a dict whose every value is ``None``."""
    return isinstance(value, cst.DictComp) and isinstance(value.value, cst.Name) and value.value.value == "None"
