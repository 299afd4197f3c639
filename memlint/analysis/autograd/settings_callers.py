"""A helper whose retained graph reaches its caller only through settings.

``WGANGPGradientPenalty(real, fake, D, weight)`` in losses.py: the penalty
runs through ``D(Variable(mix, requires_grad=True))`` (a new leaf) and
``* weight``; it is backpropagated once with ``retain_graph=True`` and
``.item()`` is returned. Nothing of that graph outlives the call unless a
caller hands a tensor with history as ``weight``; base_GAN.py passes
``self.config.lambdaGP``. So no caller can backpropagate through it again.

API: ``settled_by_callers(facts, call, fn)`` -> where the callers are
(``("base_GAN.py:203",)``) when:

- ``fn`` is a function of the module's body, defined once, never called nor
  handed anywhere in its own module (the call sites in other modules are
  then all its callers the project shows);
- the graph ``call`` backpropagates is built in ``fn`` (``RetainedGraph.
  built_from``: from leaves, modules and outside names only, nothing of it
  stored, returned or captured, ``fn`` returns no history);
- every outside name it reads is a parameter of ``fn``, and every caller in
  another module passes each of them a literal or a settings value
  (project/plain_args.py), or a local name whose graph dies in the calling
  function after the call: nothing there backpropagates again, nothing of
  it is kept (project/final_calls.py; base_GAN.py's ``GDPPLoss(phiDReal,
  phiGFake)`` at the end of the generator step);
- the project lists one caller at least.

Anything else (an attribute or global read by the graph, a parameter a
caller hands a name or an expression, a function of a class) is silent.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.autograd.retained_graph import RetainedGraph


def settled_by_callers(facts, call: cst.Call, fn: cst.FunctionDef) -> tuple[str, ...]:
    project = facts.project
    module = facts.module
    if project is None or fn not in module.body:
        return ()
    name = fn.name.value
    if sum(1 for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef)) and s.name.value == name) != 1:
        return ()
    calls = facts.calls
    if fn in calls.escapes or calls.call_sites.get(fn):
        return ()
    outside = RetainedGraph(facts).built_from(call, fn)
    if outside is None:
        return ()
    positions = _positions(fn)
    if any(key not in positions for key in outside):
        return ()  # an attribute, a global or ``*args``: what it holds is not known
    callers = project.callers_of(name)
    if not callers:
        return ()
    for caller in callers:
        for key in outside:
            if not (caller.passes_plain(positions[key], key) or caller.passes_final(positions[key], key)):
                return ()
    return tuple(c.where() for c in callers)


def _positions(fn: cst.FunctionDef) -> dict[str, int]:
    """Each named parameter's position (-1: keyword-only)."""
    params = fn.params
    out = {p.name.value: i for i, p in enumerate((*params.posonly_params, *params.params))}
    out.update((p.name.value, -1) for p in params.kwonly_params)
    return out
