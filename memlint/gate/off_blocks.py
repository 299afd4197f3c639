"""MEM201's scope sites and the calls a ``with torch.no_grad():`` holds.

A function named for evaluation, or any scope with an eval-mode call, is
a site of MEM201 of its own (eval.compute_evaluates_with_grad's sites with
a ``mode_scope`` and no loop): visit_FunctionDef reports it only for a
model call that history.py finds with history (H.YES), and visit_Module
only for a model call in a simple statement right in the scope's body. A
model call under a ``with`` that grad_mode surely finds DISABLED is
neither: history.py's ``fresh`` is NO there (or MAYBE for a frozen
model), and such a call is no statement of the scope's body. timm's
``HybridEmbed._init_backbone`` (``self.backbone.eval()``, then one forward
under ``torch.no_grad()`` to read its output size) went through libcst
for none.

So the calls of such a ``with``'s body are kept apart, on a shadow of
each scope site, and count only where what the ``with`` reads may be
rebound (the walk's ``trusted_off`` fails: ``unshadow``). A ``with`` that
may turn grad back on (``"on"``: ``enable_grad``, a flag, an unknown
name) shows the scope sites themselves again. Loop and comprehension
sites are untouched: a loop's helper calls are read by other means.
"""

from __future__ import annotations

from typing import Any


def shadowed(open_sites: tuple[Any, ...], modes: list[str | None], shadows: list[Any]) -> tuple[Any, ...]:
    """The sites a ``with`` body's calls feed, given the modes its items set
    (syntax.grad_context: "off", "on" or None)."""
    if "on" in modes:
        return tuple(s.shadow_of or s for s in open_sites)
    if "off" not in modes:
        return open_sites
    out = []
    for site in open_sites:
        if site.shadow_of is None and site.mode_scope is not None and not site.loop:
            shadow = type(site)(site.off, site.via, site.loop, site.mode_scope)
            shadow.shadow_of = site
            shadows.append(shadow)
            site = shadow
        out.append(site)
    return tuple(out)


def unshadow(shadows: list[Any]) -> None:
    """Every shadow's calls back on its site: the ``with`` may not turn grad off."""
    for shadow in shadows:
        site = shadow.shadow_of
        site.callees |= shadow.callees
        site.self_attrs |= shadow.self_attrs
        site.cls_attrs |= shadow.cls_attrs
        site.calls_self = site.calls_self or shadow.calls_self
