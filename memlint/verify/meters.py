"""The three meters, read inside the measured process at step boundaries.

No single meter sees every leak: a loss summed after ``backward()`` keeps graph
nodes on the host and no tensor bytes at all; validation without ``no_grad``
keeps activations (tensor bytes) through the graph.

1. tensor bytes: on CUDA the caching allocator's counters; elsewhere a
   ``TorchDispatchMode`` that adds each new storage's bytes and subtracts them
   when the storage dies (a weakref callback);
2. autograd graph nodes reachable from the tensors the script's own frames hold;
3. host heap bytes in use (glibc ``mallinfo2``), where available.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import gc
import itertools
import os
import sys
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# -- 1. tensor bytes --------------------------------------------------------


class _StorageRef(weakref.ref):
    __slots__ = ("key", "nbytes")


# Ops that change the size of a storage they did not create.
_RESIZING = {"resize_", "set_", "resize_as_", "_resize_output_"}
# What an op's outputs can be, decided once per op: views and in-place ops
# return storages that already exist (most of a transformer's ops).
_NEW, _EXISTING, _RESIZES = 0, 1, 2


def _op_kind(func) -> int:
    if func._opname in _RESIZING:
        return _RESIZES
    if func._opname.startswith("lift_fresh"):
        return _NEW  # hands over a tensor made outside dispatch (torch.tensor(...))
    try:
        schema = func._schema
        if func.is_view or (schema.is_mutable and not any(a.name == "out" for a in schema.arguments)):
            return _EXISTING
    except AttributeError:  # not an OpOverload
        pass
    return _NEW


class StorageBytesMode(TorchDispatchMode):
    """Live and peak bytes of the storages created by tensor ops while active.

    Views share their base's storage and are counted once. ``paused`` lets the
    probe run its own ops without counting them. With ``device_type`` only
    storages on that kind of device count (the CPU's, beside the CUDA
    allocator's counters, which see the rest).
    """

    def __init__(self, device_type: str | None = None) -> None:
        super().__init__()
        self.device_type = device_type
        self.block = 1  # storages count rounded up to this (--simulate of a CUDA run: 512)
        self.live = 0
        self.peak = 0
        self.paused = False
        self._refs: dict[int, _StorageRef] = {}
        self._kinds: dict = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if self.paused:
            return out
        kind = self._kinds.get(func)
        if kind is None:
            kind = self._kinds[func] = _op_kind(func)
        if kind == _EXISTING:
            return out
        if kind == _RESIZES or kwargs and "out" in kwargs:
            self._remeasure(out, kwargs)
            return out
        if isinstance(out, torch.Tensor):
            self._see(out)
        elif isinstance(out, (tuple, list)):
            for item in out:
                if isinstance(item, torch.Tensor):
                    self._see(item)
                elif isinstance(item, (tuple, list)):
                    for inner in item:
                        if isinstance(inner, torch.Tensor):
                            self._see(inner)
        return out

    def _see(self, tensor) -> None:
        try:
            storage = tensor.untyped_storage()
        except (RuntimeError, NotImplementedError, TypeError):
            return  # sparse, nested and other storage-less layouts
        key = storage._cdata
        if key in self._refs:
            return
        if self.device_type is not None and storage.device.type != self.device_type:
            return
        ref = _StorageRef(storage, self._released)
        ref.key = key
        nbytes = storage.nbytes()
        ref.nbytes = nbytes if self.block == 1 else self._rounded(nbytes)
        self._refs[key] = ref
        self.live += ref.nbytes
        if self.live > self.peak:
            self.peak = self.live

    def _released(self, ref: _StorageRef) -> None:
        if self._refs.get(ref.key) is ref:
            del self._refs[ref.key]
            self.live -= ref.nbytes

    def _remeasure(self, out, kwargs) -> None:
        targets = [out, (kwargs or {}).get("out")]
        for t in targets:
            for tensor in t if isinstance(t, (tuple, list)) else (t,):
                if not isinstance(tensor, torch.Tensor):
                    continue
                try:
                    storage = tensor.untyped_storage()
                except (RuntimeError, NotImplementedError, TypeError):
                    continue
                ref = self._refs.get(storage._cdata)
                if ref is None:
                    self._see(tensor)
                    continue
                size = self._rounded(storage.nbytes())
                self.live += size - ref.nbytes
                ref.nbytes = size
                self.peak = max(self.peak, self.live)

    def _rounded(self, nbytes: int) -> int:
        block = self.block
        if block == 1:
            return nbytes
        return max(block, -(-nbytes // block) * block)

    def add_fixed(self, nbytes: int) -> None:
        """Memory held from now to the end that no storage stands for (a
        simulated library workspace)."""
        self.live += nbytes
        self.peak = max(self.peak, self.live)

    # The probe's interface, shared with CudaBytes.
    def sample(self) -> tuple[int, int, None]:
        return self.live, self.peak, None

    def reset_peak(self) -> None:
        self.peak = self.live


class AllocatorBytes:
    """Live and peak bytes of CPU tensor storages, from the CPU allocator's
    own reports: the profiler's memory events, recorded in C++ as each block
    is allocated and freed, with no Python per tensor op.

    The storage tracker above calls into Python for every op; on a small
    transformer that alone costs a third of the step's CPU time, while these
    events cost next to nothing until they are read. They are read, and the
    profiler restarted, whenever the probe pauses the meter (its own work at a
    step boundary), so the probe's ops are not counted and the events held
    stay few. Only the memory events are kept: the profiler records no op
    (it is started for an activity this build does not trace, so no op
    callback runs and no CPU trace is built; failing that, for the CPU with
    its callbacks limited to a scope no ATen op runs in).

    What it counts, beside the storage tracker: every block the CPU allocator
    hands out while on, which includes a kernel's scratch buffers (so peaks
    are somewhat higher) and excludes storages it did not allocate (shared
    memory from DataLoader workers, ``from_numpy``). Blocks allocated before
    it started are not counted, nor their release. The events are the
    calling thread's (as the storage tracker's ops are); a block freed by
    another thread stays counted. When the script starts a profiler of its
    own, the two cannot run together: this meter stops for good and reads
    "not measured" from then on.
    """

    def __init__(self) -> None:
        self.live = 0
        self.peak = 0
        self.lost = False  # the script's own profiler took over
        self._paused = False
        self._active = False  # inside the context
        self._on = False  # our profiler is running
        self._gc_was_enabled = False
        self._restore: list = []
        from torch._C import _profiler

        self._config = _profiler.ProfilerConfig(
            _profiler.ProfilerState.KINETO, False, True, False, False, False, _profiler._ExperimentalConfig()
        )
        self._activities = {_profiler.ProfilerActivity.CPU}
        # Cheaper still: an activity this build cannot trace. No op callback
        # is installed and no CPU trace is built at each stop (about half of
        # a stop's cost), and the allocator still reports; checked once on
        # entry, the CPU activity otherwise.
        self._untraced = _untraced_activity(_profiler)
        # A scope that no ATen op (nor record_function) records in: no op events.
        self._scopes = {_profiler.RecordScope.BUILD_FEATURE}
        self._cpu = torch._C._autograd.DeviceType.CPU if hasattr(torch._C._autograd, "DeviceType") else None
        # Reading each event's device costs more than the rest of its read:
        # skipped where no other device can allocate.
        if _only_the_cpu_allocates():
            self._cpu = None

    @staticmethod
    def available() -> bool:
        autograd = getattr(torch._C, "_autograd", None)
        return all(
            hasattr(autograd, name) for name in ("_prepare_profiler", "_enable_profiler", "_disable_profiler")
        ) and hasattr(torch._C, "_profiler")

    def __enter__(self):
        self._active = True
        self._watch_script_profilers()
        if self._untraced is not None and self._reports_blocks_with({self._untraced}):
            self._activities = {self._untraced}
        if not self._paused:
            self._start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop()
        self._active = False
        for owner, name, value in reversed(self._restore):
            setattr(owner, name, value)
        self._restore.clear()

    @property
    def paused(self) -> bool:
        return self._paused

    @paused.setter
    def paused(self, value: bool) -> None:
        if value and not self._paused:
            # No collection while paused: a script tensor freed while the
            # profiler is off would stay counted.
            self._gc_was_enabled = gc.isenabled()
            gc.disable()
            self._paused = True
            self._stop()
        elif not value and self._paused:
            self._paused = False
            if self._active:
                self._start()
            if self._gc_was_enabled:
                gc.enable()

    def _start(self) -> None:
        if self._on or self.lost:
            return
        autograd = torch._C._autograd
        if autograd._profiler_enabled():
            self._give_up()  # the script's profiler is running
            return
        try:
            with _quiet_stderr():  # kineto writes a line to fd 2 at each start and stop
                autograd._prepare_profiler(self._config, self._activities)
                # (the type stub lacks the scopes argument)
                autograd._enable_profiler(self._config, self._activities, self._scopes)  # type: ignore[call-arg]
        except RuntimeError:
            self.lost = True  # a profiler this build cannot start: not measured, the run goes on
            return
        self._on = True

    def _reports_blocks_with(self, activities) -> bool:
        """Whether a profiler started with ``activities`` reports a block
        allocated and freed."""
        autograd = torch._C._autograd
        if self._on or self.lost or autograd._profiler_enabled():
            return False
        try:
            with _quiet_stderr():
                autograd._prepare_profiler(self._config, activities)
                autograd._enable_profiler(self._config, activities, self._scopes)  # type: ignore[call-arg]
                try:
                    block = torch.empty(16, dtype=torch.float32)
                    del block
                finally:
                    result = autograd._disable_profiler()
        except RuntimeError:
            return False
        sizes = [e.nbytes() for e in result.events()]
        return 64 in sizes and -64 in sizes

    def _stop(self) -> None:
        if not self._on:
            return
        with _quiet_stderr():
            result = torch._C._autograd._disable_profiler()
        self._on = False
        cpu = self._cpu
        # Only memory events were recorded: + bytes allocated, - bytes freed,
        # in order. The running sum from the live bytes gives the rest.
        sizes = [e.nbytes() for e in result.events() if cpu is None or e.device_type() == cpu]
        if sizes:
            running = list(itertools.accumulate(sizes, initial=self.live))
            self.live = running[-1]
            self.peak = max(self.peak, max(running))

    def _give_up(self) -> None:
        self._stop()
        self.lost = True

    def _watch_script_profilers(self) -> None:
        """The script starting a profiler stops this meter first (one
        profiler at a time)."""
        import torch.autograd.profiler as kineto
        import torch.autograd.profiler_legacy as legacy

        for module, name in (
            (kineto, "_prepare_profiler"),
            (kineto, "_enable_profiler"),
            (legacy, "_enable_profiler_legacy"),
        ):
            original = getattr(module, name, None)
            if original is None:
                continue

            def wrapped(*args, _original=original, **kwargs):
                self._give_up()
                return _original(*args, **kwargs)

            self._restore.append((module, name, original))
            setattr(module, name, wrapped)

    def sample(self) -> tuple[int | None, int | None, None]:
        if self._on:
            self._stop()
            self._start()
        if self.lost:
            return None, None, None
        return self.live, self.peak, None

    def reset_peak(self) -> None:
        if self._on:
            self._stop()
            self._start()
        self.peak = self.live


def _untraced_activity(profiler):
    """A profiler activity this build of torch does not trace, if any."""
    supported = getattr(torch._C._autograd, "_supported_activities", None)
    if supported is None:
        return None
    traced = supported()
    for name in ("MTIA", "HPU", "XPU"):
        activity = getattr(profiler.ProfilerActivity, name, None)
        if activity is not None and activity not in traced:
            return activity
    return None


def _only_the_cpu_allocates() -> bool:
    """No accelerator can allocate in this process: a CPU-only build of
    torch, or a CUDA build with every device hidden (as a --device cpu run
    hides them)."""
    get = getattr(torch._C, "_accelerator_getAccelerator", None)
    if get is None:
        return False
    accelerator = get()
    if accelerator is None:
        return True
    return accelerator.type == "cuda" and os.environ.get("CUDA_VISIBLE_DEVICES") == ""


@contextlib.contextmanager
def _quiet_stderr():
    try:
        sys.stderr.flush()
    except (AttributeError, ValueError, OSError):
        pass
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, 2)
        finally:
            os.close(devnull)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class CudaBytes:
    """The CUDA caching allocator's own counters for the current device.

    Reads nothing before the script has initialised CUDA itself: initialising
    it here would change what the script sees (a fork after it, for one)."""

    def sample(self) -> tuple[int, int, int]:
        if not torch.cuda.is_initialized():
            return 0, 0, 0
        return (
            torch.cuda.memory_allocated(),
            torch.cuda.max_memory_allocated(),
            torch.cuda.memory_reserved(),
        )

    def reset_peak(self) -> None:
        if torch.cuda.is_initialized():
            torch.cuda.reset_peak_memory_stats()


# -- 2. autograd graph nodes ------------------------------------------------

# Bounds that keep a sample cheap on scripts that hold huge containers.
MAX_OBJECTS = 200_000
MAX_NODES = 2_000_000
MAX_DEPTH = 4
_CONTAINERS = (list, tuple, set, frozenset, collections.deque)
_CO_OPTIMIZED = 0x0001


class GraphNodes:
    """Counts the distinct autograd nodes reachable (through
    ``grad_fn.next_functions``) from tensors held by the script's own frames:
    their locals, the containers in them, and attributes of modules and of
    objects whose class the script defines."""

    def __init__(self, own_file) -> None:
        self._own_file = own_file  # callable: filename -> bool
        self.saturated = False

    def sample(self, namespace: dict | None = None) -> int:
        """``namespace``: more names to start from (the script's globals once
        its module frame has returned)."""
        frame = sys._getframe(1)
        namespaces = []
        while frame is not None:
            if self._own_file(frame.f_code.co_filename):
                namespaces.append(frame)
            frame = frame.f_back
        roots = []
        seen: set[int] = set()
        for frame in namespaces:
            names = frame.f_locals
            try:
                self._collect(names.values(), roots, seen)
            finally:
                self._drop_snapshot(frame, names)
        del namespaces, frame
        if namespace:
            self._collect(list(namespace.values()), roots, seen)
        return self._count(roots)

    @staticmethod
    def _drop_snapshot(frame, names) -> None:
        # Before Python 3.13, reading a function frame's f_locals stores a
        # snapshot dict on the frame that keeps every local alive until the
        # next read; that would hold the previous step's tensors. Clear it when
        # nothing else (a `locals()` result the script kept) refers to it.
        if sys.version_info >= (3, 13) or not frame.f_code.co_flags & _CO_OPTIMIZED:
            return
        # References: the frame, the caller's variable, our parameter, and
        # getrefcount's own argument.
        if isinstance(names, dict) and sys.getrefcount(names) <= 4:
            names.clear()

    def _collect(self, values, roots: list, seen: set) -> None:
        stack = [(v, 0) for v in values]
        budget = MAX_OBJECTS
        while stack and budget:
            obj, depth = stack.pop()
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            budget -= 1
            if isinstance(obj, torch.Tensor):
                node = obj.grad_fn
                if node is not None:
                    roots.append(node)
                continue
            if depth >= MAX_DEPTH:
                continue
            if isinstance(obj, _CONTAINERS):
                stack.extend((v, depth + 1) for v in obj)
            elif isinstance(obj, dict):
                stack.extend((v, depth + 1) for v in obj.values())
            elif isinstance(obj, torch.nn.Module):
                attrs = vars(obj)
                stack.extend((m, depth + 1) for m in attrs.get("_modules", {}).values())
                stack.extend((v, depth + 1) for k, v in attrs.items() if not k.startswith("_"))
            elif hasattr(type(obj), "__module__") and self._defined_by_script(obj):
                stack.extend((v, depth + 1) for v in vars(obj).values())
        if not budget:
            self.saturated = True

    def _defined_by_script(self, obj) -> bool:
        if isinstance(obj, type) or not hasattr(obj, "__dict__"):
            return False
        mod = sys.modules.get(type(obj).__module__)
        fn = getattr(mod, "__file__", None) if mod is not None else None
        return type(obj).__module__ in ("__main__", "__mp_main__") or bool(fn and self._own_file(fn))

    def _count(self, roots) -> int:
        seen: set = set()
        stack = list(roots)
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            if len(seen) >= MAX_NODES:
                self.saturated = True
                break
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    stack.append(nxt)
        return len(seen)


# -- 3. host heap -----------------------------------------------------------


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


class HeapBytes:
    """Bytes the C heap has handed out and not taken back: glibc's
    ``uordblks + hblkhd``. Python's own small objects live in arenas mapped
    outside malloc and are not counted; C++ autograd nodes, CPU tensor
    storages and large Python buffers are."""

    def __init__(self) -> None:
        self._fn = None
        if sys.platform.startswith("linux"):
            try:
                fn = ctypes.CDLL(None).mallinfo2
                fn.restype = _MallInfo2
                fn.argtypes = []
                fn()
                self._fn = fn
            except (AttributeError, OSError):
                self._fn = None

    @property
    def available(self) -> bool:
        return self._fn is not None

    def sample(self) -> int | None:
        if self._fn is None:
            return None
        info = self._fn()
        return int(info.uordblks + info.hblkhd)


def own_file_matcher(script: str, script_dir: str, others: tuple[str, ...] = ()):
    """filename -> bool: the script itself, the modules beside it that are
    not installed packages, and ``others`` (a project twin's fixed modules,
    wherever they lie in the project)."""
    script = os.path.abspath(script)
    prefix = os.path.abspath(script_dir) + os.sep
    mine = {script, *(os.path.abspath(p) for p in others)}
    cache: dict[str, bool] = {}

    def own(filename: str) -> bool:
        hit = cache.get(filename)
        if hit is None:
            path = os.path.abspath(filename) if filename and not filename.startswith("<") else ""
            hit = path in mine or (
                path.startswith(prefix) and "site-packages" not in path and "dist-packages" not in path
            )
            cache[filename] = hit
        return hit

    return own
