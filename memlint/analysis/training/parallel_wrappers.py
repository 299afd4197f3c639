"""``torch.nn.DataParallel(model)`` whose device depends on the machine.

``DataParallel.__init__`` moves the module it wraps to its first device only
when it is given exactly one device: with no ``device_ids`` it takes every
visible GPU (one GPU: moved; none or several: left where it is), and a
``device_ids`` that is not written out (``range(args.ngpu)``, a name) is
known only at run time. Such a wrapper is judged like a ``torch.nn``
container: the model it wraps stays where it was (on the CPU when it was
built there), as the labels of the bench read it (obman, vnet). A display of
one device (``device_ids=[args.gpu]``) always moves it and is no such wrapper.
"""

from __future__ import annotations

import libcst as cst

_DATA_PARALLEL = frozenset(
    {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel"}
)


def machine_parallel(call: cst.Call, qualified: str) -> bool:
    """``call`` (``qualified`` its callee) wraps a model in torch's
    ``DataParallel`` without naming exactly one device."""
    if qualified not in _DATA_PARALLEL or any(a.star for a in call.args):
        return False
    positional = [a for a in call.args if a.keyword is None]
    devices = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "device_ids"), None)
    if devices is None and len(positional) > 1:
        devices = positional[1].value
    if isinstance(devices, (cst.List, cst.Tuple, cst.Set)):
        return len(devices.elements) != 1 and not any(isinstance(e, cst.StarredElement) for e in devices.elements)
    return True
