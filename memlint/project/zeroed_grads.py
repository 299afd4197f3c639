"""Functions and methods that clear the gradients of what they are handed.

imrahulr/adversarial_robustness_pytorch: ``WATrainer(Trainer).train`` runs
``loss, m = self.standard_loss(x, y)``, ``loss.backward()``,
``self.optimizer.step()``; ``standard_loss`` is inherited from ``Trainer``
in ``core/utils/train.py`` and begins with ``self.optimizer.zero_grad()``,
and ``self.trades_loss`` hands ``self.optimizer`` to ``trades_loss`` of
``utils/trades.py``, which calls ``optimizer.zero_grad()``. The loop clears
its optimizer's gradients every iteration, in another module (MEM304).

Summary side (``FunctionFacts.clears``, read in the summary walk):
``cleared(receiver, params)`` keeps the receiver of a ``.zero_grad()`` call
when it is a parameter of the function other than ``self`` (``optimizer``)
or an attribute path of ``self`` (``self.optimizer``). A clear under a
branch counts: the loop it is read for stays silent when the gradients
may be cleared.

View side:

- ``clearing_functions(index, path, sites, facts_at)``: the functions of
  other project modules ``path`` calls that clear a parameter, by the name
  the call writes, with the parameters cleared and their positional and
  keyword-only parameters (``ProjectView.grad_clearers``);
- ``inherited_clears(index, path, summary)``: the methods of the imported
  project classes ``path``'s classes subclass that clear ``self.<attr>``:
  (the base as ``path`` spells it, the method, the attributes). One level
  of bases: a base's own bases are not followed (``ProjectView.inherited_clears``).
"""

from __future__ import annotations


def cleared(receiver: str, params: tuple[str, ...]) -> str | None:
    """What ``receiver.zero_grad()`` clears, as the summary keeps it."""
    head, dot, _rest = receiver.partition(".")
    if head == "self":
        return receiver if dot else None  # ``self.zero_grad()``: a module's own parameters
    return receiver if not dot and head in params else None


def clearing_functions(facts_by_name) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...]:
    """``facts_by_name``: (the name a call writes, the callee's FunctionFacts)
    for the functions of other modules the viewed module calls."""
    out = []
    for written, fn in facts_by_name:
        params = tuple(c for c in fn.clears if "." not in c)
        if params:
            out.append((written, params, fn.params, fn.kwonly))
    return tuple(sorted(out))


def inherited_clears(index, path: str, summary) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    # Only a module that trains asks (a loop that backpropagates, or a
    # ``.step()`` call: MEM304's step split across methods); the others read
    # no base module, and their views do not depend on one.
    if not summary.subclassed or not (summary.trains or any(fn.steps for fn in summary.functions)):
        return ()
    out: set[tuple[str, str, tuple[str, ...]]] = set()
    for target in dict.fromkeys(summary.subclassed):
        found = index.resolve(target, path)
        if found is None or not found[1] or found[0] == path or "." in found[1]:
            continue
        defining = index.full_summary(found[0])
        if defining is None:
            continue
        spelled = _spelled(target, summary.imports)
        if spelled is None:
            continue
        prefix = found[1] + "."
        for fn in defining.functions:
            method = fn.name[len(prefix) :] if fn.name.startswith(prefix) else ""
            attrs = tuple(c for c in fn.clears if c.startswith("self."))
            if method and "." not in method and attrs:
                out.add((spelled, method, attrs))
    return tuple(sorted(out))


def _spelled(target: str, imports: dict[str, str]) -> str | None:
    """``Trainer`` for ``core.utils.Trainer`` after ``from core.utils import
    Trainer``; ``utils.Trainer`` after ``import core.utils as utils``."""
    for local, bound in imports.items():
        if bound == target:
            return local
        if target.startswith(bound + "."):
            return local + target[len(bound) :]
    return None
