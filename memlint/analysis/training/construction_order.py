"""The order of a model's construction (MEM701).

While ``__init__`` runs, ``self`` is on no device until something in it moves
it: a load into ``self`` (or a part of it) before the first move lands on CPU
tensors, whatever the class does later (pixel2style2pixel's
``pSp.__init__`` builds its encoder and decoder, then ``self.load_weights()``,
and only its callers move the net). ``state_loads.py`` walks ``__init__`` in
source order from such a start; this module says when the start holds and
which ``self.method()`` calls on the way leave ``self`` where it is.

The start holds when every base is a ``torch.nn`` class (whose ``__init__``
runs no method the class defines), the class has no metaclass keyword and
no decorator, ``__init__`` has none, and no call in ``__init__`` is given a
``device=`` (a tensor or a part built on a device). A method called on
``self`` on the way leaves it where it is when it makes no device move (nor
``prepare``/``setup``...), gives no ``device=``, calls no method of a part of
``self`` or of ``self`` itself but those that keep a model in place or that
leave it so in turn, and hands ``self`` to no call, nor a part of it but
to a constructor (``Encoder(50, self.opts)``); the same for every other
parameter (``self.set_net(net)`` may move ``net``). A method a subclass of
the module redefines is not known.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

import libcst as cst

from memlint.analysis.scope.names import ImportTable, dotted_name
from memlint.parse.traversal import visit_fast

_DEVICE_KEYWORDS = frozenset({"device", "device_map"})
_STRINGS = (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)


def _gives_device(call: cst.Call) -> bool:
    return any(arg.keyword is not None and arg.keyword.value in _DEVICE_KEYWORDS for arg in call.args)


class _DeviceKeywords(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        self.found = self.found or _gives_device(node)


def starts_on_cpu(cls: cst.ClassDef, init: cst.FunctionDef, names: ImportTable) -> bool:
    """``self`` is on no device when ``init`` (the ``__init__`` of ``cls``) starts."""
    if cls.decorators or cls.keywords or init.decorators or not cls.bases:
        return False
    for base in cls.bases:
        if base.keyword is not None or not (names.qualified_name(base.value) or "").startswith("torch.nn."):
            return False
    found = _DeviceKeywords()
    visit_fast(init, found)
    return not found.found


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)


class SelfMethods:
    """Which methods, called as ``self.method(...)``, leave ``self`` where it
    is (memoised; a method reached again while it is read counts as moving)."""

    def __init__(
        self,
        resolve: Callable[[cst.Call], cst.FunctionDef | None],
        places: Collection[str],
        stays: Collection[str],
        redefined: Callable[[cst.FunctionDef], bool],
        reads_only: Callable[[cst.Call], bool],
    ) -> None:
        self._resolve = resolve
        self._places = places  # method names that may put what they are called on on a device
        self._stays = stays  # method names that keep a model where it is
        self._redefined = redefined  # a subclass of the module defines the method again
        self._reads_only = reads_only  # ``print``, ``int``, ``math.log``: reads what it is handed
        self._verdicts: dict[cst.FunctionDef, bool] = {}

    def keeps(self, fn: cst.FunctionDef) -> bool:
        """``fn`` (a method) leaves ``self`` on the device it is on."""
        if fn not in self._verdicts:
            self._verdicts[fn] = False  # while it is read: a recursive call is not known to keep
            self._verdicts[fn] = self._reads_keeping(fn)
        return self._verdicts[fn]

    def _reads_keeping(self, fn: cst.FunctionDef) -> bool:
        params = fn.params.params
        if not params or fn.decorators or self._redefined(fn):
            return False
        this = params[0].name.value
        every = fn.params
        handed = {p.name.value for p in (*every.posonly_params, *every.params, *every.kwonly_params)}
        for star in (every.star_arg, every.star_kwarg):
            if isinstance(star, cst.Param):
                handed.add(star.name.value)
        found = _Calls()
        visit_fast(fn.body, found)
        return all(self._call_keeps(call, this, handed) for call in found.calls)

    def _call_keeps(self, call: cst.Call, this: str, handed: set[str]) -> bool:
        """``call`` in a method whose first parameter is ``this`` and whose
        parameters are ``handed`` moves none of them (nor a part of one)."""
        if _gives_device(call):
            return False
        func = call.func
        if self._reads_only(call) or isinstance(func, cst.Attribute) and isinstance(func.value, _STRINGS):
            return True  # ``"{}".format(self.opts.kind)``: a text
        if isinstance(func, cst.Attribute):
            if func.attr.value in self._places:
                return False
            spelled = dotted_name(func.value) or ""
            if spelled.partition(".")[0] in handed:
                callee = self._resolve(call) if spelled == this else None
                if callee is not None:
                    return self.keeps(callee)
                if func.attr.value not in self._stays:
                    return False  # ``self.encoder.init_gpu()``: a method of a part, not known
        # ``init_weights(self)``, ``to_gpu(self.encoder)``: code that may move
        # it. A constructor handed a part (``Encoder(50, self.opts)``) builds
        # something new from it.
        rooted = [a for a in call.args if (dotted_name(a.value) or "").partition(".")[0] in handed]
        last = (dotted_name(func) or "").rpartition(".")[2]
        bare = any(isinstance(a.value, cst.Name) for a in rooted)
        return not rooted or (not bare and last[:1].isupper())
