"""Module summaries on disk, one JSON file per digest of the module's bytes,
in the findings cache's folder (``<cache>/summaries/``). A summary depends on
the bytes alone, so a module that did not change is never read again.
Entries are written atomically; an unreadable one is a miss."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from functools import lru_cache

from memlint.project import (
    arg_modes,
    backward_returns,
    checkpoint_files,
    class_factories,
    class_moves,
    cpu_builders,
    cpu_construction,
    cpu_receivers,
    data_passes,
    dynamic_classes,
    engine_factories,
    engine_hooks,
    eval_forwards,
    final_calls,
    forward_copies,
    forward_returns,
    gpu_args,
    gpu_moves,
    init_moves,
    keyword_trackers,
    layer_functions,
    layer_lists,
    local_imports,
    method_modes,
    method_moves,
    mode_layers,
    model_tables,
    object_types,
    off_decorators,
    parameterless,
    passed_through,
    plain_args,
    returned_loads,
    single_device_moves,
    state_copies,
    state_feeds,
    state_helpers,
    sys_paths,
    trackers,
    tuple_factories,
    tuple_returns,
    version_tests,
    wrapped_args,
    zeroed_grads,
)
from memlint.project import summary as summary_module
from memlint.project.summary import ModuleSummary
from memlint.vocabulary import checkpoint_files as checkpoint_names
from memlint.vocabulary import loading, settings_values


@lru_cache(maxsize=1)
def summary_fingerprint() -> str:
    """A hash of the code that makes summaries: editing it invalidates them."""
    h = hashlib.sha256()
    for module in (
        summary_module,
        arg_modes,
        class_moves,
        parameterless,
        mode_layers,
        cpu_builders,
        cpu_receivers,
        class_factories,
        layer_lists,
        layer_functions,
        local_imports,
        model_tables,
        sys_paths,
        loading,
        object_types,
        checkpoint_files,
        checkpoint_names,
        state_feeds,
        state_helpers,
        state_copies,
        gpu_args,
        gpu_moves,
        tuple_returns,
        method_modes,
        version_tests,
        single_device_moves,
        cpu_construction,
        data_passes,
        engine_factories,
        returned_loads,
        zeroed_grads,
        method_moves,
        trackers,
        keyword_trackers,
        off_decorators,
        forward_returns,
        engine_hooks,
        settings_values,
        wrapped_args,
        init_moves,
        forward_copies,
        eval_forwards,
        dynamic_classes,
        passed_through,
        plain_args,
        final_calls,
        tuple_factories,
        backward_returns,
    ):
        with open(module.__file__, "rb") as fh:  # type: ignore[arg-type]
            h.update(fh.read())
    return h.hexdigest()


class SummaryStore:
    def __init__(self, directory: str) -> None:
        self.folder = os.path.join(os.path.abspath(directory), "summaries", summary_fingerprint()[:16])

    def _entry(self, digest: str) -> str:
        return os.path.join(self.folder, digest[:2], digest + ".json")

    def load(self, digest: str) -> ModuleSummary | None:
        try:
            with open(self._entry(digest), "rb") as fh:
                return ModuleSummary.from_json(json.loads(fh.read()))
        except Exception:  # missing, truncated, from another layout: a miss
            return None

    def store(self, digest: str, summary: ModuleSummary) -> None:
        self._write(self._entry(digest), json.dumps(summary.to_json(), separators=(",", ":")).encode())

    def _write(self, entry: str, data: bytes) -> None:
        tmp = f"{entry}.{os.getpid()}-{os.urandom(4).hex()}.tmp"
        try:
            os.makedirs(os.path.dirname(entry), exist_ok=True)
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, entry)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass

    # -- which files hold none of a set of needles (index.Needleless) ---------
    def _needles_entry(self, needles: tuple[bytes, ...]) -> str:
        key = hashlib.sha256(b"\0".join(sorted(needles))).hexdigest()
        return os.path.join(self.folder, "needles", key + ".json")

    def needleless(self, needles: tuple[bytes, ...]) -> frozenset[str]:
        try:
            with open(self._needles_entry(needles), "rb") as fh:
                return frozenset(str(d) for d in json.loads(fh.read()))
        except Exception:  # missing, truncated: none known
            return frozenset()

    def store_needleless(self, needles: tuple[bytes, ...], digests: Iterable[str]) -> None:
        self._write(self._needles_entry(needles), json.dumps(sorted(digests), separators=(",", ":")).encode())
