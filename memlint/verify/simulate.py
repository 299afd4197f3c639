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
  fails or is not measured;
- the script's own ``torch.cuda.is_available()`` is True (the run estimated is
  its CUDA run; library code hears the truth); once it asks for a CUDA device, the run behaves as it would there
  where it matters for memory: optimizers take their multi-tensor (foreach)
  path, which holds a temporary the size of all parameters at once (a 1.07e9-
  parameter AdamW: 4 GiB, the issue's 18.0 → 20.1 GiB gap); every storage is
  rounded up as the caching allocator rounds blocks (512 B); the first matrix
  product adds cuBLAS's workspace (the size CUBLAS_WORKSPACE_CONFIG, which the
  runner sets, gives). Not modelled: the allocator's cached and fragmented
  segments (``memory_reserved``, what ``nvidia-smi`` shows), cuDNN and other
  library workspaces, the CUDA context; peaks estimate ``memory_allocated``;
- no results are computed, so results are "not-compared";
- data read from files still has to fit in memory (it is converted to fakes
  when it meets the model);
- ``torch.save`` writes nothing: fake tensors hold no data to pickle, and a
  placeholder would overwrite the script's real checkpoint. The run counts the
  saves and says so; a script that loads back a checkpoint it saved fails.
"""

from __future__ import annotations

import contextlib
import os

import torch
from torch._subclasses.fake_tensor import DataDependentOutputException, FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode

_HOST = ("cpu", "meta")
# The CUDA caching allocator hands out blocks in multiples of this.
CUDA_BLOCK = 512
_MATMULS = {"mm", "addmm", "bmm", "baddbmm", "_addmm_activation", "addbmm", "matmul", "linear"}


class _Target:
    """What the simulated script asked for: set once a CUDA device is named."""

    cuda = False
    tracker = None  # the storage tracker, whose rounding follows the target
    workspace_added = False
    saves_skipped = 0  # torch.save calls that wrote nothing


def saves_skipped() -> int:
    return _Target.saves_skipped


def _skip_save(original):
    # Pickling a fake tensor fails ("Can't pickle local object"), and most
    # training scripts save a checkpoint: the save is counted, not written.
    def save(obj, f, *args, **kwargs):
        _Target.saves_skipped += 1

    return save


def _on_host(value):
    """A device argument moved to the CPU; anything else unchanged."""
    if isinstance(value, (str, torch.device, int)) and not isinstance(value, bool):
        try:
            device = torch.device(value)
        except (RuntimeError, TypeError):
            return value
        if device.type not in _HOST:
            _aim_at_cuda()
            return torch.device("cpu")
    return value


def _aim_at_cuda() -> None:
    if not _Target.cuda:
        _Target.cuda = True
        if _Target.tracker is not None:
            _Target.tracker.block = CUDA_BLOCK


def cublas_workspace_bytes(config: str | None = None) -> int:
    """cuBLAS's workspace as torch sizes it from CUBLAS_WORKSPACE_CONFIG
    (``:SIZE_KIB:COUNT`` pairs, summed); torch's default where unset."""
    config = os.environ.get("CUBLAS_WORKSPACE_CONFIG") if config is None else config
    total = 0
    for size, count in zip(*[iter((config or "").split(":")[1:])] * 2):
        try:
            total += int(size) * 1024 * int(count)
        except ValueError:
            return 0
    return total or 4096 * 1024 * 8


class _Shims(TorchDispatchMode):
    """Between the script and the fake mode: zeros for values read back,
    the CPU for every device an op asks for."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _Target.cuda and not _Target.workspace_added and func._opname in _MATMULS:
            # cuBLAS's workspace comes from the caching allocator with the
            # first GEMM, and stays.
            _Target.workspace_added = True
            tracker = _Target.tracker
            if tracker is not None:
                tracker.add_fixed(cublas_workspace_bytes())
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
        # (a positional int is a device index only as the first argument)
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
        _aim_at_cuda()
        return self

    return stay


def _foreach_default(original):
    # torch.optim picks its multi-tensor path by default only for plain
    # parameters on an accelerator; the simulated CUDA parameters are fake
    # CPU tensors.
    def default(params, differentiable, use_fused=False):
        if _Target.cuda and not differentiable:
            return use_fused, not use_fused
        return original(params, differentiable, use_fused)

    return default


def _optimizer_modules():
    """torch.optim's modules that hold their own reference to the default."""
    import sys

    import torch.optim  # noqa: F401

    return [
        m
        for name, m in list(sys.modules.items())
        if name.startswith("torch.optim") and m is not None and hasattr(m, "_default_to_fused_or_foreach")
    ]


def _script_sees_cuda(own):
    # The script's own `torch.cuda.is_available()` says True, so that it
    # takes its CUDA path (the run being estimated); library code, which
    # would go on to touch a real device, hears the truth.
    def patch(original):
        def is_available():
            import sys

            if own is not None and own(sys._getframe(1).f_code.co_filename):
                return True
            return original()

        return is_available

    return patch


@contextlib.contextmanager
def simulation(torch_module=torch, tracker=None, own=None):
    """Fake tensors for everything the script does inside this block.
    ``tracker``: the storage tracker, told to round as CUDA's allocator does
    once the script aims at CUDA. ``own``: filename -> bool, the script's
    files, whose ``torch.cuda.is_available()`` is True."""
    _Target.cuda, _Target.tracker, _Target.workspace_added = False, tracker, False
    _Target.saves_skipped = 0
    restore = [
        _patched(torch, "save", _skip_save),
        _patched(torch.Tensor, "to", _device_args),
        _patched(torch.nn.Module, "_apply", _replace_tensors),
        _patched(torch.Tensor, "cuda", _stay),
        _patched(torch.nn.Module, "cuda", _stay),
        _patched(torch.cuda, "is_available", _script_sees_cuda(own)),
    ]
    restore += [_patched(m, "_default_to_fused_or_foreach", _foreach_default) for m in _optimizer_modules()]
    try:
        with FakeTensorMode(allow_non_fake_inputs=True), _Shims():
            yield
    finally:
        for owner, name, original in reversed(restore):
            setattr(owner, name, original)
