"""The grad mode a module calls methods in, by method name.

``decoder.generate_beam(...)`` in evaluator.py runs under the caller's
``torch.no_grad()`` (a method of the same module entered only from there);
the method is defined in transformer.py, which no call of its own module
reaches. Its receiver's class is not known, so the name is all there is.
Only names named for evaluation (``generate``, ``test_loop``) and none of
nn.Module's own API (``net.eval()``) are kept: the methods a view asks about
(``asked_methods``, also the view's needles).

- ``off``: names some call of this module runs with grad off, or in a mode
  it cannot tell (the function around it is entered in both);
- ``on``: names some call runs with grad on, on a receiver not known to be
  an instance of a class of this module that defines the name itself (``self.generate()`` in such a
  class, or ``m = Beam(...); m.generate()``: that call runs that class's
  method, not one defined elsewhere). A receiver the project may type (a
  plain name, ``self.<attr>``) is kept with the call: ``name@scope:receiver``
  (``evaluate@:evaluators`` for train.py's ``evaluators.evaluate(...)``);
  the index reads such a call as grad on for a method it may run, and not
  for one of another class that defines the name itself (swapping-autoencoder's
  ``GroupEvaluator.evaluate``, which runs each evaluator under ``no_grad``);
- ``relayed``: the method names whose entry this module judged other than on
  from its own calls of them, that some call above took its mode from: a
  call from another module entering such a method with grad on runs those
  calls with grad on, so the index does not set it aside.

grad_mode.entry_mode reads both through the view
(``ProjectView.methods_off_elsewhere``): a method no call of its own module
reaches, that other modules call only off, is entered in a mode its module
cannot say. Only ever towards unknown: a finding it removes is one the gate
let through.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Protocol

from memlint.vocabulary.kinds import MODULE_API
from memlint.vocabulary.tokens import EVAL_FUNCTION_TOKENS, name_tokens

ON, OFF, UNKNOWN = "on", "off", "unknown"


class _Scope(Protocol):
    name: str
    decorator: str
    built_here: dict[str, str]


# (scope, method name, the mode set around the call in its function or
# ``inherit``, the receiver as written)
AttrCall = tuple[_Scope, str, str, str]


def method_call_modes(
    calls: Sequence[AttrCall],
    entries: Mapping[str, str],
    classes: Mapping[str, set[str] | None],
    inherit: str,
) -> tuple[list[str], list[str], list[str]]:
    """(off, on, relayed) of the module's attribute calls (see the module's
    doc). ``entries``: the mode each module-level function is entered in
    (every call of it here); ``classes``: module-level class -> its own methods."""
    asked = [call for call in calls if _asked(call[1])]
    if not asked:
        return [], [], []  # most modules: nothing a view asks about
    by_name: dict[str, list[AttrCall]] = {}
    for call in calls:
        by_name.setdefault(call[1], []).append(call)
    modes = _Modes(by_name, entries, classes, inherit)
    off: set[str] = set()
    on: set[str] = set()
    typed: set[str] = set()
    for call in asked:
        scope, name, _grad, receiver = call
        if modes.mode_of(call, frozenset()) != ON:
            off.add(name)
        elif name not in on and not _own_method(scope, name, receiver, classes):
            if _typeable(receiver):
                typed.add(f"{name}@{scope.name}:{receiver}")
            else:
                on.add(name)
    # An untyped call already says the name is called on: its typed ones add nothing.
    on.update(t for t in typed if t.partition("@")[0] not in on)
    relayed = sorted(name for name, mode in modes.memo.items() if mode != ON)
    return sorted(off), sorted(on), relayed


def _typeable(receiver: str) -> bool:
    """A receiver the project's object types may type (typed_objects.receiver_types):
    a plain name other than ``self``, or ``self.<attr>``."""
    head, dot, attr = receiver.partition(".")
    if head == "self":
        return bool(dot) and attr.isidentifier()
    return not dot and receiver.isidentifier()


class _Modes:
    """The mode of each call, and of each method through every call of it
    here (methods, not two nested functions calling each other: those
    would be a reference cycle holding the module's scopes)."""

    def __init__(
        self,
        by_name: Mapping[str, list[AttrCall]],
        entries: Mapping[str, str],
        classes: Mapping[str, set[str] | None],
        inherit: str,
    ) -> None:
        self.by_name, self.entries, self.classes, self.inherit = by_name, entries, classes, inherit
        self.memo: dict[str, str] = {}

    def method_entry(self, name: str, busy: frozenset[str]) -> str:
        """The mode every call of ``.name(...)`` here runs in; on when none
        does (as summary._resolved has a method nobody here calls)."""
        if name in self.memo:
            return self.memo[name]
        if name in busy:
            return UNKNOWN
        modes = {self.mode_of(c, busy | {name}) for c in self.by_name.get(name, ())}
        result = (modes.pop() if len(modes) == 1 else UNKNOWN) if modes else ON
        self.memo[name] = result
        return result

    def mode_of(self, call: AttrCall, busy: frozenset[str]) -> str:
        scope, _name, grad, _receiver = call
        if grad != self.inherit:
            return grad
        if scope.decorator:
            return scope.decorator
        head, _, rest = scope.name.partition(".")
        if not scope.name:
            return ON
        if not rest:
            return self.entries.get(head, ON)
        if "." not in rest and self.classes.get(head) is not None:
            return self.method_entry(rest, busy)
        return ON  # a nested function: its callers are not followed


def asked_methods(function_names: Iterable[str]) -> set[str]:
    """The methods of a module (``Class.method`` among its functions' names)
    whose callers elsewhere the view asks about: those named for evaluation,
    the same words a view's needles hold (index.needles_for), so a view of
    one file reads the modules that call them."""
    found = set()
    for name in function_names:
        cls, dot, method = name.partition(".")
        if dot and "." not in method and _asked(method):
            found.add(method)
    return found


@lru_cache(maxsize=4096)
def _asked(method: str) -> bool:
    """Named for evaluation, and none of nn.Module's own API: ``net.eval()``
    under ``no_grad`` says nothing of a class's own ``eval`` method."""
    return method not in MODULE_API and bool(name_tokens(method) & EVAL_FUNCTION_TOKENS)


def _own_method(scope: _Scope, name: str, receiver: str, classes: Mapping[str, set[str] | None]) -> bool:
    """``receiver.name`` runs a method of a class of this module that
    defines ``name`` itself (or a subclass's override of it)."""
    if receiver == "self":
        head, _, rest = scope.name.partition(".")
        cls = head if rest and "." not in rest else None
    else:
        cls = scope.built_here.get(receiver)
    methods = classes.get(cls) if cls is not None else None
    return methods is not None and name in methods
