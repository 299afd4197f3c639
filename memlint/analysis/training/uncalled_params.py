"""Parameters of a helper that nothing in the project calls.

``def init_net(net, net_file): net.load_state_dict(torch.load(net_file))``
with no call of ``init_net`` in its module nor in any other module of the
project: the model it loads into comes from no code MEM701 can read, so
where it lives (CPU or GPU) is not known, and the rule stays silent. A
helper that is called keeps its finding (DeviceParams reads its callers
for the loads that need a moved model).

Read only with the project (callers in other modules are known), for a
function at module level that is not passed around by name (a callback
has callers we cannot see), whose parameter is not bound again before the
load (``net = Net()``: no longer the caller's model).
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.callgraph import CallGraph
from memlint.analysis.training.device_params import rebound_before
from memlint.project.view import ProjectView


def uncalled_param(
    fn: cst.FunctionDef, param: str, use: cst.CSTNode, module: cst.Module, calls: CallGraph, project: ProjectView | None
) -> bool:
    """``param`` of ``fn`` still holds what a caller passed at ``use``, and
    no code of the project calls ``fn``: its device is not known."""
    if project is None or fn in calls.class_of or calls.owner.get(fn) is not module or fn in calls.escapes:
        return False
    params = fn.params
    names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    if param not in names or calls.call_sites.get(fn) or project.callers_of(fn.name.value):
        return False
    return not rebound_before(fn, param, use)
