"""Classes a module builds from an import the project cannot follow (MEM701).

TSM's ``tsm_fpga/mobilenet_v2_tfslim.py`` puts ``tf_models/research/slim``
on ``sys.path``, runs ``import mobilenet_v2_tsm_v2 as tsm_online`` inside a
function, then ``tsm_online.MobileNetV2(n_class=27)`` and loads a checkpoint
into it before anything moves it. No module of that name is in the project:
the script reaches code through folders it puts on the path that the
project does not hold. Whether that class's ``__init__`` moves the model to
a device is not known, so a load into a fresh one is not claimed, as for a
constructor bound nowhere or picked by name at run time (state_loads.py). A
model of such a class moved before the load is still reported: the move is
what the rule reads then.

Only for a module that edits ``sys.path`` (its own ``sys.path.append``, or
a neighbour's it imports: index._sys_paths): elsewhere an unresolved import
is most often a project file the checked copy lacks (a script saved alone,
``from backbone import EfficientDetBackbone``), judged as before. Read from
the module's call sites (summary.CallSite): the callee as its imports name
it, which holds imports made inside functions too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from memlint.project.summary import CallSite


def unknown_classes(sites: Iterable[CallSite], resolve: Callable[[str], object]) -> tuple[str, ...]:
    """The constructors (as written: ``tsm_online.MobileNetV2``, ``Net``)
    among ``sites`` whose callee is imported from a module that is no module
    of the project (``resolve`` finds nothing). Torch, the standard library
    and the other roots summary.py never keeps are not call sites at all; a
    name a star import may bring is left alone (it may be a project class)."""
    out = set()
    for site in sites:
        written = site.written
        if not written or site.callee.startswith("*") or not written.rpartition(".")[2].lstrip("_")[:1].isupper():
            continue
        if resolve(site.callee) is None:
            out.add(written)
    return tuple(sorted(out))
