"""``--simulate``: run the script on fake tensors, to check models larger than
this machine for growth and peak.

Every tensor the script makes is a ``FakeTensor`` on the CPU device: shapes,
dtypes, strides and storage sizes are real, data is not, and nothing is
allocated. The storage tracker counts the bytes the storages would take, and
the autograd graph is real, so both the tensor-bytes and the graph-node meters
work; the host heap meter does not (it would measure the simulator).

What the simulation changes, and so its limits:

- every value read back from a tensor (``.item()``, ``float()``, ``bool()``,
  ``.tolist()``, formatting a scalar tensor) is 0 / False, except small
  constants the fake mode keeps (an optimizer's step count): data-dependent control
  flow (early stopping on a loss, ``if torch.isnan(loss)``) takes the zero path;
  data-dependent shapes (``nonzero``, boolean masks) fail;
- every device is the CPU: ``.to("cuda")``, ``.cuda()`` and ``device="cuda"``
  factories become CPU fakes (faking CUDA on a CPU-only build aborts), so
  CUDA-only code (``torch.cuda.*`` calls, custom kernels, ``torch.compile``)
  fails or is not measured, and the CUDA allocator's rounding and caching are
  not modelled: peaks are the bytes tensors need, not what ``nvidia-smi`` shows;
- no results are computed, so results are "not-compared";
- data read from files still has to fit in memory (it is converted to fakes
  when it meets the model).
"""

from __future__ import annotations

import contextlib

import torch
from torch._subclasses.fake_tensor import DataDependentOutputException, FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode

_HOST = ("cpu", "meta")


def _on_host(value):
    """A device argument moved to the CPU; anything else unchanged."""
    if isinstance(value, (str, torch.device)):
        try:
            device = torch.device(value)
        except (RuntimeError, TypeError):
            return value
        if device.type not in _HOST:
            return torch.device("cpu")
    return value


class _Shims(TorchDispatchMode):
    """Between the script and the fake mode: zeros for values read back,
    the CPU for every device an op asks for."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.ops.aten._local_scalar_dense.default:
            try:
                # Small constants (an optimizer's step count) keep real values.
                return func(*args, **kwargs)
            except DataDependentOutputException:
                dtype = args[0].dtype
                return False if dtype == torch.bool else 0.0 if dtype.is_floating_point or dtype.is_complex else 0
        if "device" in kwargs:
            kwargs = dict(kwargs, device=_on_host(kwargs["device"]))
        return func(*args, **kwargs)


def _patched(owner, name, make):
    original = getattr(owner, name)
    setattr(owner, name, make(original))
    return owner, name, original


def _device_args(original):
    def to(self, *args, **kwargs):
        args = tuple(_on_host(a) for a in args)
        if "device" in kwargs:
            kwargs["device"] = _on_host(kwargs["device"])
        return original(self, *args, **kwargs)

    return to


def _replace_tensors(original):
    # Module._apply swaps fake parameters in place with swap_tensors, which
    # fails while the fake mode holds weak references to them. Here a
    # conversion that returns a new tensor gets a new Parameter (what torch
    # does for incompatible types anyway) and a device move, which the
    # simulation makes a no-op, changes nothing.
    def _apply(self, fn, recurse=True):
        if recurse:
            for child in self.children():
                child._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            with torch.no_grad():
                applied = fn(param)
            if applied is param:
                continue
            new = torch.nn.Parameter(applied, requires_grad=param.requires_grad)
            if param.grad is not None:
                with torch.no_grad():
                    new.grad = fn(param.grad)
            self._parameters[key] = new
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    return _apply


def _stay(original):
    def stay(self, *args, **kwargs):
        return self

    return stay


@contextlib.contextmanager
def simulation(torch_module=torch):
    """Fake tensors for everything the script does inside this block."""
    restore = [
        _patched(torch.Tensor, "to", _device_args),
        _patched(torch.nn.Module, "_apply", _replace_tensors),
        _patched(torch.Tensor, "cuda", _stay),
        _patched(torch.nn.Module, "cuda", _stay),
    ]
    try:
        with FakeTensorMode(allow_non_fake_inputs=True), _Shims():
            yield
    finally:
        for owner, name, original in reversed(restore):
            setattr(owner, name, original)
