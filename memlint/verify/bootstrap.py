"""The measured process: settle the run, install the probe, run the script.

The parent starts ``python -c "from memlint.verify.bootstrap import main; ..."
CONFIG`` so that this is an importable module and not ``__main__`` (the script
is ``__main__``, and ``torch.compile`` pickles things that refer to this
module). The script runs unmodified through ``runpy.run_path``; what was
measured goes to the JSON file the config names, never to stdout.

The parent sets the environment before the interpreter starts (one thread for
OpenMP/MKL, ``PYTHONHASHSEED``, ``CUBLAS_WORKSPACE_CONFIG``, a private
``TORCHINDUCTOR_CACHE_DIR``, ``CUDA_VISIBLE_DEVICES`` for ``--device cpu``).
"""

from __future__ import annotations

import json
import os
import random
import runpy
import sys
import time
import traceback

SEED = 0


def main(config_path: str) -> None:
    with open(config_path, encoding="utf-8") as fh:
        config = json.load(fh)
    out: dict = {"status": "error", "error": None, "traceback": None}
    if config.get("distributed") and "RANK" in os.environ:
        # One progress file per rank too: ranks must not write over each other.
        config["progress"] = None if os.environ["RANK"] != "0" else config.get("progress")
    started = time.perf_counter()
    try:
        _run(config, out)
    except BaseException as exc:  # the bootstrap itself failed
        out["status"] = "error"
        out["error"] = f"memlint verify could not run the script: {type(exc).__name__}: {exc}"
        out["traceback"] = traceback.format_exc()
    out["wall_s"] = time.perf_counter() - started
    out["max_rss_bytes"] = _max_rss()
    _write(output_path(config), out)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip the script's atexit handlers and worker shutdown: the measurement
    # is written, and a stopped training loop may leave threads behind.
    os._exit(0)


def _run(config: dict, out: dict) -> None:
    try:
        import torch
    except ImportError:
        out["error"] = "torch is not installed in this environment (pip install torch, the `verify` extra)"
        return
    # Everything of memlint's is imported before sys.path becomes the script's.
    from memlint.verify import meters, overlay
    from memlint.verify.probe import Probe, StopRun

    if config.get("simulate"):
        import memlint.verify.simulate  # noqa: F401

    _settle(torch)
    device = config["device"]
    if config.get("simulate"):
        device = "simulated-cpu"
    elif device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    elif device == "cuda" and not torch.cuda.is_available():
        out["error"] = "--device cuda: torch.cuda.is_available() is False in this environment"
        return
    out["device"] = device
    out["torch"] = torch.__version__

    script = os.path.abspath(config["script"])
    script_dir = os.path.abspath(config.get("script_dir") or os.path.dirname(script))
    # A project twin's fixed modules (absolute original path -> fixed text's file).
    fixed_modules = config.get("overlay") or {}
    own = meters.own_file_matcher(script, script_dir, tuple(fixed_modules))
    tracker = _tensor_meter(meters, device)
    # --device auto on a CUDA machine: the CPU tracker too, for a script
    # whose tensors stay on the host (the CUDA counters would see nothing).
    cpu_tracker = (
        meters.StorageBytesMode(device_type="cpu") if device == "cuda" and config["device"] == "auto" else None
    )
    heap = meters.HeapBytes()
    probe = Probe(
        steps=config["steps"],
        tensor_meter=tracker,
        cpu_meter=cpu_tracker,
        graph_meter=meters.GraphNodes(own),
        heap_meter=heap if heap.available and device != "simulated-cpu" else None,
        record_results=device != "simulated-cpu",
        digest=device == "cpu",
        progress_path=config.get("progress"),
    )

    # The script sees what `python SCRIPT ARGS` would give it, with imports
    # resolved beside the original script (the fixed twin lives in a
    # temporary folder).
    sys.argv = [script, *config.get("args", [])]
    _set_path(script_dir, config.get("memlint_root"), config.get("launch_dir"))
    overlay.install(fixed_modules)

    out["status"] = "ok"
    out["ended"] = "end"
    if config.get("distributed"):
        _keep_process_groups(torch)
    probe.install()
    try:
        with _context(torch, device, tracker, cpu_tracker, own):
            try:
                namespace = runpy.run_path(script, run_name="__main__")
            except SystemExit as exit_:
                if exit_.code not in (0, None):
                    raise
                _KEEP.append(exit_)
                namespace = None
            # The script ran to its end: what it did after its last step
            # (predictions, a final evaluation) is the tail.
            probe.finish(namespace)
            _KEEP.append(namespace)
    except StopRun as exc:
        out["ended"] = "stopped"
        _KEEP.append(exc)  # its traceback holds the script's frames
    except SystemExit as exc:
        out["status"] = "error"
        out["error"] = f"the script exited with status {exc.code}"
        out["exit_status"] = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:
        out["status"] = "error"
        out["error"] = f"{type(exc).__name__}: {exc}".strip()
        out["traceback"] = _script_traceback(exc, own)
        out["exit_status"] = 1  # what `python SCRIPT` exits with on an uncaught exception
        _KEEP.append(exc)
    finally:
        probe.uninstall()
        if config.get("simulate"):
            from memlint.verify.simulate import saves_skipped

            out["saves_skipped"] = saves_skipped()
    if out["status"] != "ok":
        out["ended"] = "error"
    out.update(probe.record())
    out.update(_distributed(torch))
    out["reached_steps"] = probe.steps >= config["steps"]


# What the script left alive is kept alive until os._exit: its objects'
# destructors do not run in the measured process. A gloo process group
# destroyed while the storage tracker (a Python dispatch mode) is recorded in
# its worker thread's state deadlocks: the destructor joins the worker with the
# GIL held, and the worker needs the GIL to release the mode.
_KEEP: list = []


def _keep_process_groups(torch) -> None:
    """torch.distributed.destroy_process_group, with the groups kept alive
    (see _KEEP): the script's call still unregisters them."""
    dist = torch.distributed
    if not dist.is_available():
        return
    destroy = dist.destroy_process_group

    def destroy_process_group(group=None):
        try:
            _KEEP.append(group if group is not None else dist.group.WORLD)
            _KEEP.extend(dist.distributed_c10d._world.pg_map)
        except Exception:  # noqa: BLE001 - private layout changed: still destroy
            pass
        return destroy(group) if group is not None else destroy()

    dist.destroy_process_group = destroy_process_group


def _set_path(script_dir: str, launch_root: str | None, launch_dir: str | None = None) -> None:
    # The launch line put memlint's root first and `-c` put the current
    # folder second (under the distributed launcher: the rank launcher's
    # folder); `python SCRIPT` would give the script's folder alone.
    if launch_root and sys.path and sys.path[0] == launch_root:
        del sys.path[0]
    if sys.path and (sys.path[0] == "" or launch_dir and os.path.abspath(sys.path[0]) == os.path.abspath(launch_dir)):
        del sys.path[0]
    sys.path.insert(0, script_dir)


def _settle(torch) -> None:
    """One thread, fixed seeds, deterministic kernels: two runs of the same
    computation give the same bits on CPU."""
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set by something that ran first
    random.seed(SEED)
    torch.manual_seed(SEED)
    try:
        import numpy

        numpy.random.seed(SEED)
    except ImportError:
        pass
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True


def _tensor_meter(meters, device: str):
    """The CUDA allocator's counters on CUDA; on the CPU the allocator's own
    reports (cheap: no Python per op); under --simulate the storage tracker,
    since fake tensors allocate nothing."""
    if device == "cuda":
        return meters.CudaBytes()
    if device == "cpu" and meters.AllocatorBytes.available():
        return meters.AllocatorBytes()
    return meters.StorageBytesMode()


def _context(torch, device, tracker, cpu_tracker=None, own=None):
    import contextlib

    stack = contextlib.ExitStack()
    if device == "simulated-cpu":
        from memlint.verify.simulate import simulation

        stack.enter_context(simulation(torch, tracker, own))
    if device != "cuda":
        stack.enter_context(tracker)
    if cpu_tracker is not None:
        stack.enter_context(cpu_tracker)
    return stack


def _distributed(torch) -> dict:
    """This process's place in a torch.distributed.run job (from the
    launcher's environment; rank 0 of 1 otherwise)."""
    return {
        "rank": int(os.environ.get("RANK", "0") or 0),
        "world_size": int(os.environ.get("WORLD_SIZE", "1") or 1),
    }


def output_path(config: dict) -> str:
    """Where this process writes: one file per rank under a launcher."""
    if "RANK" in os.environ and config.get("distributed"):
        return f"{config['output']}.rank{os.environ['RANK']}"
    return config["output"]


def _script_traceback(exc: BaseException, own) -> str:
    """The script's own frames (and its local modules') and the error: not
    the bootstrap's, the probe's or the library's."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if own(f.filename)]
    lines = traceback.format_list(frames)
    lines += traceback.format_exception_only(type(exc), exc)
    return "Traceback (most recent call last, the script's frames):\n" + "".join(lines)


def _max_rss() -> int | None:
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024  # bytes on macOS, KiB on Linux


def _write(path: str, data: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)


if __name__ == "__main__":  # pragma: no cover - the parent imports it instead
    main(sys.argv[1])
