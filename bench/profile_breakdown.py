"""Where memlint's time goes, phase by phase, in one process.

    python bench/profile_breakdown.py --corpus timm
    python bench/profile_breakdown.py PATH... [--select MEM1] [--top 15] [--per-rule] [--cprofile 30]

Every file goes through the same path as ``memlint check`` (runner.process_file);
the phases are timed by wrapping the functions that make them up:

- read:       reading and decoding the file (source.read_source)
- pre-filter: ``# memlint: noqa`` and the token scan (screen.applicable_rules)
- parse:      libcst (engine.parse_module)
- metadata:   positions (positions.syntactic_ranges, lazily) and the module's
              node index that every walk and parent lookup reads (traversal.TreeIndex)
- analysis:   everything in memlint/analysis: building ModuleFacts and
              answering the rules' questions (per analysis module below)
- rules:      the one batched walk and the rules' own code (what is left of it)
- report:     noqa comments, detaching findings (fix edits), the text reporter

Times are CPU seconds of this process (``--wall`` for wall clock), exclusive:
an analysis that asks another is charged only for its own part. The wrappers
cost some time themselves (printed as the instrumented/plain ratio).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import pkgutil
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpora import CORPORA, fetch  # noqa: E402

clock = time.process_time


class PhaseClock:
    """Exclusive time per phase: entering a phase pauses the one below it."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = defaultdict(float)
        self.stack: list[str] = []
        self.last = clock()

    def _switch(self) -> None:
        now = clock()
        if self.stack:
            self.totals[self.stack[-1]] += now - self.last
        self.last = now

    def enter(self, phase: str) -> None:
        self._switch()
        self.stack.append(phase)

    def leave(self) -> None:
        self._switch()
        self.stack.pop()

    def wrap(self, phase: str, fn):
        @functools.wraps(fn)
        def timed(*args, **kwargs):
            self.enter(phase)
            try:
                return fn(*args, **kwargs)
            finally:
                self.leave()

        timed.__wrapped_phase__ = phase  # type: ignore[attr-defined]
        return timed


def _patch(module, name: str, phases: PhaseClock, phase: str) -> None:
    setattr(module, name, phases.wrap(phase, getattr(module, name)))


def instrument(phases: PhaseClock) -> None:
    """Wrap the functions that make up each phase, where they are looked up."""
    import memlint.fix.fixer as fixer
    import memlint.lint.engine as engine
    import memlint.lint.screen as screen
    import memlint.parse.positions as positions
    import memlint.parse.traversal as traversal
    import memlint.run.runner as runner
    from memlint.analysis.facts import ModuleFacts

    _patch(runner, "read_source", phases, "read")
    _patch(screen, "file_is_exempt", phases, "pre-filter")
    _patch(screen, "applicable_rules", phases, "pre-filter")
    _patch(engine, "parse_module", phases, "parse: libcst")
    if hasattr(engine, "check_nesting"):
        _patch(engine, "check_nesting", phases, "parse: nesting guard")
    _patch(positions, "syntactic_ranges", phases, "metadata: positions")
    traversal.TreeIndex.__init__ = phases.wrap("metadata: tree index (walks, parents)", traversal.TreeIndex.__init__)
    _patch(engine, "run_batched", phases, "rules")
    _patch(engine, "noqa_map", phases, "report")
    _patch(runner, "detach", phases, "report")
    _ = fixer

    # ModuleFacts properties build the analyses; their classes answer later.
    for name, attr in list(vars(ModuleFacts).items()):
        if isinstance(attr, functools.cached_property):
            wrapped = functools.cached_property(phases.wrap(f"analysis: {name}", attr.func))
            wrapped.__set_name__(ModuleFacts, name)
            setattr(ModuleFacts, name, wrapped)
    import memlint.analysis as analysis_pkg

    for info in pkgutil.walk_packages(analysis_pkg.__path__, "memlint.analysis."):
        if info.ispkg or info.name == "memlint.analysis.facts":
            continue
        mod = importlib.import_module(info.name)
        phase = f"analysis: {info.name.rpartition('.')[2]}"
        for obj_name, obj in list(vars(mod).items()):
            if inspect.isclass(obj) and obj.__module__ == mod.__name__:
                for attr_name, attr in list(vars(obj).items()):
                    # visit_/leave_ run while the analysis is built, already timed.
                    if inspect.isfunction(attr) and not attr_name.startswith(("__", "visit_", "leave_")):
                        setattr(obj, attr_name, phases.wrap(phase, attr))
                    elif isinstance(attr, functools.cached_property):
                        cp = functools.cached_property(phases.wrap(phase, attr.func))
                        cp.__set_name__(obj, attr_name)
                        setattr(obj, attr_name, cp)
            elif inspect.isfunction(obj) and obj.__module__ == mod.__name__:
                setattr(mod, obj_name, phases.wrap(phase, obj))
    _rebind_imported_names(phases)


def _rebind_imported_names(phases: PhaseClock) -> None:
    """Rules import analysis helpers by name (``from ... import f``): point
    those names at the wrapped functions too."""
    import memlint.analysis as analysis_pkg

    wrapped: dict[int, object] = {}
    for info in pkgutil.walk_packages(analysis_pkg.__path__, "memlint.analysis."):
        mod = importlib.import_module(info.name)
        for value in vars(mod).values():
            original = getattr(value, "__wrapped__", None)
            if getattr(value, "__wrapped_phase__", None) and original is not None:
                wrapped[id(original)] = value
    for mod_name, mod in list(sys.modules.items()):
        if not mod_name.startswith("memlint.") or mod is None:
            continue
        for name, value in list(vars(mod).items()):
            if id(value) in wrapped:
                setattr(mod, name, wrapped[id(value)])


# -- ablation: switch one speed-up off at a time ------------------------------

STEPS = {
    "prefilter": "every rule runs on every file (no token pre-filter)",
    "index": "walks recurse through children instead of reading the module's TreeIndex",
    "lazy-metadata": "libcst's PositionProvider and ParentNodeProvider, resolved eagerly",
    "fast-walk": "libcst's own traversal (CSTNode.visit, MetadataWrapper.visit_batched)",
}


class Patches:
    def __init__(self) -> None:
        self._undo: list[tuple[object, str, object]] = []

    def set(self, obj: object, name: str, value: object) -> None:
        self._undo.append((obj, name, getattr(obj, name)))
        setattr(obj, name, value)

    def undo(self) -> None:
        while self._undo:
            obj, name, value = self._undo.pop()
            setattr(obj, name, value)


def switch_off(steps: list[str]) -> Patches:
    from libcst.metadata import ParentNodeProvider, PositionProvider

    import memlint.lint.engine as engine
    import memlint.lint.screen as screen
    import memlint.parse.traversal as traversal
    import memlint.parse.tree as tree

    patches = Patches()
    if "prefilter" in steps:
        patches.set(screen, "applicable_rules", lambda text, rules: list(rules))
    if "index" in steps:
        patches.set(traversal, "tree_of", lambda node: None)
        patches.set(tree, "tree_of", lambda node: None)
    if "lazy-metadata" in steps:
        patches.set(
            traversal,
            "install_lazy_metadata",
            lambda w, source=None: (w.resolve(PositionProvider), w.resolve(ParentNodeProvider)),
        )
    if "fast-walk" in steps:
        original = traversal.visit_fast

        def libcst_visit(node, visitor):
            node.visit(visitor)

        for name, mod in list(sys.modules.items()):
            if name.startswith("memlint") and mod is not None and getattr(mod, "visit_fast", None) is original:
                patches.set(mod, "visit_fast", libcst_visit)
        patches.set(engine, "run_batched", lambda w, visitors, source=None: w.visit_batched(visitors))
    return patches


def ablation(files: list[str], settings, steps: list[str]) -> None:
    """Plain totals with everything on, then with each step (and all of them) off."""
    import memlint.rules  # noqa: F401  (imported before patching names)
    from memlint.rule.registry import all_rules

    all_rules()
    configs = [("all on", [])] + [(f"without {s}", [s]) for s in steps]
    if len(steps) > 1:
        configs.append(("without " + " + ".join(steps), steps))
    results = []
    for label, off in configs:
        patches = switch_off(off)
        try:
            start = clock()
            lint_all(files, settings)
            results.append((label, clock() - start))
        finally:
            patches.undo()
        print(f"  {label:<60} {results[-1][1]:8.2f} s", file=sys.stderr, flush=True)
    base = results[0][1]
    print(f"\n{'configuration':<60} {'CPU s':>8} {'× all on':>9}")
    for label, secs in results:
        print(f"{label:<60} {secs:8.2f} {secs / base:8.2f}×")
    for step in steps:
        print(f"  {step}: {STEPS[step]}")


def files_of(paths: list[str]) -> list[str]:
    from memlint.find.config import Config
    from memlint.find.discovery import discover

    return list(discover(paths, Config(root=Path.cwd())))


def lint_all(files: list[str], settings) -> tuple[list, dict[str, float]]:
    from memlint.run.runner import process_file

    reports, per_file = [], {}
    for path in files:
        start = clock()
        reports.append(process_file(path, settings))
        per_file[path] = clock() - start
    return reports, per_file


def main(argv: list[str] | None = None) -> int:
    global clock
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="files or folders (default: --corpus)")
    parser.add_argument("--corpus", help=f"download and use one of: {', '.join(CORPORA)}")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/memlint-bench-corpora"))
    parser.add_argument("--select", help="rules, as memlint check --select (default: the default rules)")
    parser.add_argument("--top", type=int, default=10, help="slowest files to list")
    parser.add_argument("--per-rule", action="store_true", help="also time each rule alone (analyses shared)")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N", help="print the N top functions by own time")
    parser.add_argument("--wall", action="store_true", help="wall-clock instead of CPU time")
    parser.add_argument("--no-instrument", action="store_true", help="only the plain total (for the overhead ratio)")
    parser.add_argument(
        "--ablation",
        nargs="?",
        const=",".join(STEPS),
        metavar="STEPS",
        help=f"plain totals with each speed-up switched off ({', '.join(STEPS)}; default all)",
    )
    args = parser.parse_args(argv)
    if args.wall:
        clock = time.perf_counter

    paths = args.paths
    if args.corpus:
        paths = [str(fetch(args.corpus, args.workdir).root)]
    if not paths:
        parser.error("give PATHs or --corpus")
    from memlint.reporters import get_reporter
    from memlint.run.runner import Settings

    settings = Settings(select=tuple(args.select.split(",")) if args.select else None)
    files = files_of(paths)
    lines = sum(Path(f).read_bytes().count(b"\n") for f in files)
    if args.ablation:
        steps = [s for s in args.ablation.split(",") if s]
        unknown = [s for s in steps if s not in STEPS]
        if unknown:
            parser.error(f"unknown steps: {', '.join(unknown)}")
        print(f"{len(files)} files, {lines:,} lines")
        ablation(files, settings, steps)
        return 0

    # The plain run first: the total without any wrapper.
    start = clock()
    lint_all(files, settings)
    plain = clock() - start
    if args.no_instrument:
        print(f"{len(files)} files, {lines:,} lines: {plain:.2f} s")
        return 0

    phases = PhaseClock()
    instrument(phases)
    profiler = None
    if args.cprofile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    start = clock()
    phases.enter("other")
    reports, per_file = lint_all(files, settings)
    phases.enter("report")
    text = get_reporter("text")(reports, unsafe_fixes=False, root=str(Path.cwd()))
    phases.leave()
    phases.leave()
    total = clock() - start
    if profiler:
        profiler.disable()

    findings = sum(len(r.findings) for r in reports)
    errors = sum(1 for r in reports if r.error)
    parsed = sum(1 for r in reports if r.digest is not None)
    unit = "wall" if args.wall else "CPU"
    print(f"{len(files)} files, {lines:,} lines, {findings} findings, {errors} errors, report {len(text):,} chars")
    print(f"plain run {plain:.2f} s {unit}; instrumented {total:.2f} s (×{total / plain:.2f} overhead)\n")
    order = ["read", "pre-filter", "parse", "metadata", "analysis", "rules", "report", "other"]
    grouped: dict[str, float] = defaultdict(float)
    for phase, secs in phases.totals.items():
        grouped[phase.split(":")[0]] += secs
    print(f"{'phase':<34} {unit + ' s':>9} {'share':>7}")
    for group in order:
        if group not in grouped:
            continue
        print(f"{group:<34} {grouped[group]:9.2f} {100 * grouped[group] / total:6.1f}%")
        subs = sorted(((p, s) for p, s in phases.totals.items() if p.startswith(group + ":")), key=lambda kv: -kv[1])
        for phase, secs in subs:
            print(f"  {phase.split(':', 1)[1].strip():<32} {secs:9.2f} {100 * secs / total:6.1f}%")
    print(f"{'total':<34} {total:9.2f}  ({len(files) / total:.0f} files/s one process, {parsed} files read)")

    print(f"\nslowest {args.top} files:")
    for path, secs in sorted(per_file.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"  {secs:7.2f} s  {path}")

    if args.per_rule:
        per_rule(files, settings)
    if profiler:
        import pstats

        print()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.cprofile)
    return 0


def per_rule(files: list[str], settings) -> None:
    """Each rule alone over the corpus, with the analyses already built: the
    cost of the rule's own visiting, beyond a walk with no rule at all."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    from memlint.analysis.facts import ModuleFacts
    from memlint.lint.engine import applicable_rules, parse_module
    from memlint.parse.traversal import run_batched
    from memlint.read.source import read_source
    from memlint.rule import RuleContext
    from memlint.run.runner import rules_for

    rules = rules_for(settings, ())
    own: dict[str, float] = defaultdict(float)
    for path in files:
        text = read_source(path).text
        active = applicable_rules(text, rules)
        if not active:
            continue
        try:
            module = parse_module(text)
        except Exception:
            continue
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        facts = ModuleFacts(wrapper)
        warm = RuleContext(path=path, source=text, module=module, facts_factory=lambda: facts)
        run_batched(wrapper, [r(warm) for r in active])  # builds what the rules ask for
        start = clock()
        run_batched(wrapper, [])
        empty = clock() - start
        for rule in active:
            ctx = RuleContext(path=path, source=text, module=module, facts_factory=lambda: facts)
            start = clock()
            run_batched(wrapper, [rule(ctx)])
            own[rule.code] += max(0.0, clock() - start - empty)
        _ = cst
    print("\nrules alone (analyses prebuilt; walk cost subtracted):")
    for code, secs in sorted(own.items(), key=lambda kv: -kv[1]):
        print(f"  {code}  {secs:7.2f} s")


if __name__ == "__main__":
    sys.exit(main())
