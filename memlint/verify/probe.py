"""Hooks installed in the measured process: where a step ends, what to sample,
what to record, and when to stop.

The run has three segments: from the script's start to the first step, the
steps, and from the last step to the script's end (the tail, sampled by
:meth:`Probe.finish` when the script ends on its own rather than at
``--steps``); each sample's peak covers the interval it ends.

A step ends at an optimizer step (the global step post-hook) in training, or at
a root module forward (global forward pre/post hooks with a depth counter; only
modules with parameters count) in a script that never steps an optimizer. The
meters are read there, the results recorded, and after the requested number of
steps the run stops by raising :class:`StopRun` out of the hook.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
import weakref

import torch
import torch.nn.modules.module as nn_module
import torch.optim.optimizer as optim_module
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from memlint.verify.results import Scratch, fingerprint, fingerprint_in_place, loss_value


class StopRun(BaseException):
    """The requested steps have run. A BaseException, so that a script's
    ``except Exception`` does not swallow it."""


class Probe:
    def __init__(
        self,
        *,
        steps,
        tensor_meter,
        graph_meter,
        heap_meter,
        cpu_meter=None,
        record_results=True,
        digest=True,
        progress_path=None,
    ):
        self.steps_wanted = steps
        self.tensor = tensor_meter
        # Under --device auto on a CUDA machine: the CPU storage tracker beside
        # the CUDA counters, for what the script keeps on the host.
        self.cpu = cpu_meter
        self.graph = graph_meter
        self.heap = heap_meter
        self.record_results = record_results
        self.digest = digest
        # Made before the meters start: what fingerprints reduce into.
        self._scratch = Scratch() if record_results else None
        # A forward's outputs are fingerprinted without a pause when that
        # allocates nothing a meter could see: not under a dispatch mode
        # (the storage tracker), which sees every op, ours included.
        self._unpaused_outputs = not any(isinstance(m, TorchDispatchMode) for m in (tensor_meter, cpu_meter))
        self.kind: str | None = None  # "optimizer" | "forward"
        self.steps = 0
        self.optimizer_made = False
        self.samples: dict[str, list] = {k: [] for k in SAMPLE_KEYS}
        # Highest tensor bytes (main meter, CPU meter) in forwards that came
        # before the first optimizer step and were dropped as step boundaries:
        # they still belong to the start segment.
        self.head_peaks: list = [None, None]
        self.tail: dict | None = None  # the tail's sample, when the script ended on its own
        self.process_group = False  # the script called torch.distributed.init_process_group
        self.losses: list[float] = []
        self.params: list[dict] = []
        self.outputs: list[dict] = []
        self._primary = None
        self._depth = 0
        self._paused = 0
        self._handles: list = []
        self._restore: list = []
        self._progress_fd = os.open(progress_path, os.O_WRONLY | os.O_CREAT, 0o600) if progress_path else None
        self._progress_at = 0.0

    # -- installation -------------------------------------------------------

    def install(self) -> None:
        self._handles.append(optim_module.register_optimizer_step_post_hook(self._after_step))
        self._handles.append(nn_module.register_module_forward_pre_hook(self._before_forward))
        self._handles.append(nn_module.register_module_forward_hook(self._after_forward, always_call=True))
        self._patch(torch.autograd, "backward", self._wrap_backward(torch.autograd.backward))
        self._patch(torch.optim.Optimizer, "__init__", self._wrap_optimizer_init(torch.optim.Optimizer.__init__))
        if torch.distributed.is_available():
            self._patch(
                torch.distributed, "init_process_group", self._wrap_init_pg(torch.distributed.init_process_group)
            )

    def uninstall(self) -> None:
        for handle in self._handles:
            handle.remove()
        for owner, name, value in reversed(self._restore):
            setattr(owner, name, value)
        self._handles.clear()
        self._restore.clear()

    def _patch(self, owner, name, value) -> None:
        self._restore.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    @contextlib.contextmanager
    def paused(self):
        """Our own tensor ops: not counted, not recorded, no graph."""
        self._paused += 1
        trackers = [m for m in (self.tensor, self.cpu) if m is not None and hasattr(m, "paused")]
        previous = [m.paused for m in trackers]
        for m in trackers:
            m.paused = True
        try:
            with torch.no_grad():
                yield
        finally:
            self._paused -= 1
            for m, was in zip(trackers, previous):
                m.paused = was

    # -- hooks --------------------------------------------------------------

    def _wrap_optimizer_init(self, init):
        probe = self

        @functools.wraps(init)
        def __init__(self, *args, **kwargs):
            probe.optimizer_made = True
            return init(self, *args, **kwargs)

        return __init__

    def _wrap_init_pg(self, init):
        probe = self

        @functools.wraps(init)
        def init_process_group(*args, **kwargs):
            probe.process_group = True
            return init(*args, **kwargs)

        return init_process_group

    def _wrap_backward(self, backward):
        probe = self

        @functools.wraps(backward)
        def wrapped(tensors, *args, **kwargs):
            if probe.record_results and not probe._paused:
                if not isinstance(tensors, (torch.Tensor, list, tuple)):
                    tensors = tuple(tensors)  # read a generator once, for both of us
                items = [
                    t
                    for t in ([tensors] if isinstance(tensors, torch.Tensor) else tensors)
                    if isinstance(t, torch.Tensor)
                ]
                if all(t.numel() == 1 for t in items):
                    # A scalar loss is read without allocating (a view and
                    # .item()): no pause, whose restart of the CPU meter
                    # costs more than the whole read.
                    probe.losses.extend(loss_value(t) for t in items)
                else:
                    with probe.paused():
                        probe.losses.extend(loss_value(t) for t in items)
            return backward(tensors, *args, **kwargs)

        return wrapped

    def _after_step(self, optimizer, args, kwargs) -> None:
        if self._paused:
            return
        if self._primary is None or self._primary() is None:
            self._primary = weakref.ref(optimizer)
        if self.kind != "optimizer":
            # A training script: forwards seen before its first step were
            # not step boundaries.
            self.kind = "optimizer"
            self.steps = 0
            self.head_peaks = [
                _max(self.head_peaks[0], *self.samples["tensor_peak"]),
                _max(self.head_peaks[1], *self.samples["cpu_peak"]),
            ]
            for values in self.samples.values():
                values.clear()
        primary = self._primary() is optimizer
        with self.paused():
            if primary:
                self._sample()
            if self.record_results:
                params = [p for group in optimizer.param_groups for p in group["params"]]
                self.params.append(fingerprint(params, self.digest, self._scratch))
            if primary:
                self._reset_peaks()
        if primary:
            self._count_step()

    def _before_forward(self, module, args) -> None:
        self._depth += 1

    def _after_forward(self, module, args, output) -> None:
        self._depth -= 1
        if self._depth or self._paused or output is None:
            return
        if next(module.parameters(), None) is None:
            return  # a loss module or a parameter-free wrapper, not a model
        boundary = self.kind != "optimizer"
        if not boundary and self.record_results and self._record_output_unpaused(output):
            return
        with self.paused():
            if boundary:
                self._sample()
            if self.record_results:
                self.outputs.append(fingerprint(tree_flatten(output)[0], self.digest, self._scratch))
            if boundary:
                self._reset_peaks()
        if boundary:
            self.kind = "forward"
            # With an optimizer around, its first step will restart the count:
            # never stop a training script on its forwards.
            self._count_step(stop=not self.optimizer_made)

    def _record_output_unpaused(self, output) -> bool:
        """A training forward's outputs, fingerprinted while the meters run:
        on the CPU the sums go into preallocated tensors, so the allocator
        meter sees nothing of ours and needs no restart (a second read per
        step). False when that would allocate; the caller pauses."""
        if not self._unpaused_outputs or torch.get_num_threads() != 1:
            return False  # (with more threads a reduction allocates a block per thread)
        self._paused += 1  # our ops are not the script's (no hook counts them)
        try:
            with torch.no_grad():
                recorded = fingerprint_in_place(tree_flatten(output)[0], self.digest, self._scratch)
        finally:
            self._paused -= 1
        if recorded is None:
            return False
        self.outputs.append(recorded)
        return True

    # -- sampling -----------------------------------------------------------

    def _reset_peaks(self) -> None:
        self.tensor.reset_peak()
        if self.cpu is not None:
            self.cpu.reset_peak()

    def _read(self, namespace=None) -> dict:
        # Tensor counters first, then the heap, then the graph walk, whose own
        # Python objects must not show up in the other two.
        live, peak, reserved = self.tensor.sample()
        cpu_live, cpu_peak, _ = self.cpu.sample() if self.cpu is not None else (None, None, None)
        heap = self.heap.sample() if self.heap is not None else None
        nodes = self.graph.sample(namespace) if self.graph is not None else None
        return {
            "tensor_live": live,
            "tensor_peak": peak,
            "tensor_reserved": reserved,
            "cpu_live": cpu_live,
            "cpu_peak": cpu_peak,
            "heap": heap,
            "graph_nodes": nodes,
        }

    def _sample(self) -> None:
        for key, value in self._read().items():
            self.samples[key].append(value)

    def finish(self, namespace: dict | None) -> None:
        """The script ended on its own: sample the tail (last step to end).
        ``namespace`` is the script's module globals, which its frames no
        longer show once it has returned."""
        with self.paused():
            self.tail = self._read(namespace)

    def _count_step(self, stop: bool = True) -> None:
        self.steps += 1
        if self._progress_fd is not None:
            now = time.monotonic()
            if now - self._progress_at > 0.2 or self.steps >= self.steps_wanted:
                self._progress_at = now
                os.lseek(self._progress_fd, 0, os.SEEK_SET)
                os.write(self._progress_fd, b"%10d" % self.steps)
        if stop and self.steps >= self.steps_wanted:
            raise StopRun()

    def record(self) -> dict:
        return {
            "step_kind": self.kind,
            "steps": self.steps,
            "samples": self.samples,
            "losses": self.losses,
            "params": self.params,
            "outputs": self.outputs,
            "graph_saturated": bool(getattr(self.graph, "saturated", False)),
            "head_peaks": self.head_peaks,
            "tail": self.tail,
            "process_group": self.process_group,
        }


SAMPLE_KEYS = ("tensor_live", "tensor_peak", "tensor_reserved", "cpu_live", "cpu_peak", "graph_nodes", "heap")


def _max(*values):
    usable = [v for v in values if v is not None]
    return max(usable) if usable else None
