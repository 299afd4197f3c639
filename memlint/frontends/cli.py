"""The ``memlint`` command: check, rule, verify.

Exit status: 0 nothing left to report, 1 findings remain or a file could not
be read or parsed, 2 usage, configuration or internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from memlint import __version__
from memlint.find.config import OUTPUT_FORMATS, Config, ConfigError
from memlint.reporters.style import CHOICES

if TYPE_CHECKING:
    from memlint.run.results import Settings

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(value: str) -> list[str]:
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memlint",
        description="Find, fix and verify PyTorch habits that waste GPU memory or silently break training.",
        epilog="Start with `memlint check .`; `memlint COMMAND --help` lists a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"memlint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser(
        "check",
        help="lint files and folders (default: .)",
        description="Lint Python files, notebooks and the folders holding them; report, or fix with --fix.",
        epilog=CHECK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument(
        "paths",
        nargs="*",
        default=None,
        metavar="PATH",
        help="files and folders to check (default: .); folders are walked for *.py, *.pyi and *.ipynb",
    )
    check.add_argument("--fix", action="store_true", help="apply safe fixes")
    check.add_argument(
        "--unsafe-fixes", action="store_true", default=None, help="also apply unsafe fixes (with --fix/--diff)"
    )
    check.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false", help="never apply unsafe fixes")
    check.add_argument("--diff", action="store_true", help="print the patch the fixes would make; write nothing")
    check.add_argument("--show-fixes", action="store_true", help="list the fixes applied")
    check.add_argument("--statistics", action="store_true", help="count findings per rule")
    check.add_argument(
        "--select",
        type=_codes,
        metavar="CODES",
        help="rules to enable, replacing the defaults and the config's: comma-separated codes or prefixes "
        "(MEM1,MEM501) or ALL",
    )
    check.add_argument(
        "--extend-select", type=_codes, default=[], metavar="CODES", help="rules to enable in addition (MEM403)"
    )
    check.add_argument(
        "--ignore", type=_codes, default=[], metavar="CODES", help="rules to disable: comma-separated codes or prefixes"
    )
    check.add_argument(
        "--add-noqa",
        action="store_true",
        help="write a `# noqa: MEMxxx` comment on every line with a finding (edits the files)",
    )
    check.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        metavar="FORMAT",
        help=f"{', '.join(OUTPUT_FORMATS)} (default: text with a source excerpt; concise: one line per finding; "
        "json/sarif for tools, github for Actions annotations)",
    )
    check.add_argument(
        "--output-file", metavar="PATH", help="write the report there; the terminal gets the text format"
    )
    check.add_argument("--color", choices=CHOICES, default="auto", help="colour the text output (default: auto)")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    check.add_argument("--exit-non-zero-on-fix", action="store_true", help="exit 1 when any file was fixed")
    check.add_argument(
        "--force-exclude", action="store_true", help="apply excludes to paths named on the command line too"
    )
    check.add_argument("--config", metavar="PATH", help="pyproject.toml (or TOML file) to read settings from")
    check.add_argument("--no-cache", action="store_true", help="do not read or write the findings cache")
    check.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where the findings cache lives (default: .memlint_cache in the project root)",
    )
    check.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: one per core)")
    check.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    check.add_argument(
        "--show-settings",
        action="store_true",
        help="print the settings each given file is checked with (rules, torch range and where it was read); "
        "check nothing",
    )

    rule = sub.add_parser("rule", help="show a rule's documentation")
    rule.add_argument("code", nargs="?", help="code (MEM101) or name")
    rule.add_argument("--all", action="store_true", help="list every rule")
    rule.add_argument("--markdown", action="store_true", help="with --all: the README's rule table")

    sub.add_parser("verify", help="run a script and its fixed twin; compare memory and results", add_help=False)
    sub.add_parser(
        "server",
        help="run the language server over stdio (needs the server extra)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=SERVER_DESCRIPTION,
    )
    return parser


CHECK_EPILOG = """\
examples:
  memlint check                    every file under the current folder
  memlint check --diff train.py    the patch the safe fixes would make
  memlint check --fix src/         apply the safe fixes
  memlint rule MEM101              what a finding's code means, and why

Each file is checked with the [tool.memlint] table of the pyproject.toml
nearest to it; `# noqa: MEM101` on a line silences that finding there.

exit status: 0 nothing to report, 1 findings remain (or a file could not be
read or parsed), 2 usage, configuration or internal error.
"""

SERVER_DESCRIPTION = """\
Run memlint's language server for editors: it speaks the Language Server
Protocol (JSON-RPC) over stdio, so the editor starts `memlint server` and
talks to it on its stdin and stdout; it takes no options.

It publishes findings as you type (.py files and notebooks the editor syncs),
offers their fixes as quick fixes and `source.fixAll.memlint`, and shows a
rule's documentation on hover.

Settings it reads:
  [tool.memlint] in the pyproject.toml nearest each file (re-read when it changes)
  the editor's initializationOptions and workspace/didChangeConfiguration,
  bare or under a "memlint" key:
    {"select": ["MEM1"], "ignore": ["MEM403"], "unsafeFixes": true}
  (select replaces the configured selection, ignore adds to it, unsafeFixes
  overrides unsafe-fixes)

Needs the server extra (pygls, lsprotocol). Editor set-ups: docs/integrations.md.
"""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "verify":
        try:
            from memlint.verify.cli import main as verify_main
        except ImportError as exc:  # pragma: no cover - packaging error
            print(f"memlint: error: verify is unavailable: {exc}", file=sys.stderr)
            return EXIT_ERROR
        return verify_main(argv[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_ERROR if exc.code not in (0, None) else EXIT_OK
    try:
        if args.command == "check":
            with _sigterm_interrupts():
                return run_check(args)
        if args.command == "rule":
            return run_rule(args)
        if args.command == "server":
            from memlint.server import main as server_main

            return server_main()
        parser.print_help()
        return EXIT_ERROR
    except ConfigError as exc:
        print(f"memlint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt as exc:
        print("memlint: interrupted", file=sys.stderr)
        return 143 if isinstance(exc, Terminated) else 130
    except BrokenPipeError:
        # The reader left (`memlint check | head`): no traceback, and no second
        # error when Python flushes stdout at exit.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FINDINGS


class Terminated(KeyboardInterrupt):
    """SIGTERM as an exception, so the clean-up of an interrupted run (stopping
    workers, removing temporary files) happens as it does for Ctrl-C."""


def _raise_terminated(signum, frame):
    raise Terminated()


@contextlib.contextmanager
def _sigterm_interrupts():
    import signal

    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except (ValueError, OSError, AttributeError):  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def run_rule(args: argparse.Namespace) -> int:
    from memlint.rule.registry import all_rules, rule_by_code

    if args.all and args.markdown:
        from memlint.rule.table import render_rule_table

        sys.stdout.write(render_rule_table())
        return EXIT_OK
    if args.all:
        for rule in all_rules():
            fix = {"safe": "safe fix", "unsafe": "unsafe fix", "none": "no fix"}[rule.fix_safety.value]
            default = "" if rule.default_enabled else " (opt-in)"
            print(f"{rule.code}  {rule.name:<45} {fix}{default}")
        return EXIT_OK
    if not args.code:
        print("memlint: error: give a rule code (`memlint rule MEM101`), or --all to list them", file=sys.stderr)
        return EXIT_ERROR
    rule = rule_by_code(args.code)
    if rule is None:
        from memlint.find.suggest import did_you_mean

        known = [r.code for r in all_rules()] + [r.name for r in all_rules()]
        word = args.code.upper() if args.code[:3].upper() == "MEM" else args.code.lower()
        hint = did_you_mean(word, known) or " (`memlint rule --all` lists them)"
        print(f"memlint: error: unknown rule '{args.code}'{hint}", file=sys.stderr)
        return EXIT_ERROR
    print(f"# {rule.name} ({rule.code})\n")
    print(
        f"Fix: {rule.fix_safety.value}. {'Enabled by default.' if rule.default_enabled else 'Off by default (opt-in).'}\n"
    )
    print(rule.documentation())
    return EXIT_OK


def _settings(args: argparse.Namespace, config: Config, output_format: str) -> Settings:
    """The settings of the files ``config`` governs: the config's selection,
    then the command line's on top (ruff's order: a ``--select`` here replaces
    the config's selection and its ignores; ``--extend-select`` and
    ``--ignore`` alone refine it)."""
    from memlint.run.results import Settings

    unsafe = config.unsafe_fixes if args.unsafe_fixes is None else args.unsafe_fixes
    mode = "add-noqa" if args.add_noqa else "diff" if args.diff else "fix" if args.fix else "check"
    return Settings(
        select=tuple(config.select) if config.select is not None else None,
        extend_select=tuple(config.extend_select),
        ignore=tuple(config.ignore),
        override=(tuple(args.select) if args.select else None, tuple(args.extend_select), tuple(args.ignore)),
        per_file_ignores=tuple((k, tuple(v)) for k, v in config.per_file_ignores.items()),
        root=str(config.root),
        mode=mode,
        unsafe_fixes=bool(unsafe),
        with_edits=output_format in ("json", "json-lines", "sarif", "rdjson"),
        torch_version=config.torch_version,
        torch_version_where=f"{_shown(config.path)} [tool.memlint] torch-version" if config.path else "",
    )


def _shown(path: Path | str) -> str:
    """A path as the user may read it: relative to the working folder when inside it."""
    import os

    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if relative.startswith("..") else relative


def _check_options(args: argparse.Namespace) -> None:
    from memlint.find.suggest import did_you_mean
    from memlint.run.selection import CODES, known_prefix

    for code in (args.select or []) + args.extend_select + args.ignore:
        if not known_prefix(code):
            hint = did_you_mean(code, CODES) or " (`memlint rule --all` lists the codes)"
            raise ConfigError(f"unknown rule code '{code}' on the command line{hint}")
    if args.add_noqa and (args.fix or args.diff):
        raise ConfigError("--add-noqa cannot be combined with --fix or --diff")


def run_check(args: argparse.Namespace) -> int:
    import os

    from memlint.find.discovery import discover
    from memlint.find.resolver import ConfigResolver
    from memlint.reporters import get_reporter
    from memlint.reporters.style import use_color
    from memlint.run.runner import run

    _check_options(args)
    paths = args.paths or ["."]
    resolver = ConfigResolver(args.config, lenient=True)
    # The run's own settings (output format, cache, the root paths are shown
    # from): the config of the one path named, else of the working folder.
    start = _config_start(paths)
    config = resolver.config_for_folder(start or Path.cwd())
    output_format = args.output_format or config.output_format or "text"
    settings = _settings(args, config, output_format)
    files = list(discover(paths, resolver, force_exclude=args.force_exclude))
    # Each file is checked with its nearest config, whatever the command line;
    # one Settings per config, so the runner's selection caches are shared.
    per_config = {id(config): settings}
    per_file = []
    by_folder: dict[str, Config] = {}  # a source file's config is its folder's: asked once per folder
    for path in files:
        source = path.endswith((".py", ".pyi", ".ipynb"))
        own = by_folder.get(os.path.dirname(path)) if source else None
        if own is None:
            own = resolver.config_for(path)
            if source:
                by_folder[os.path.dirname(path)] = own
        if id(own) not in per_config:
            per_config[id(own)] = _settings(args, own, output_format)
        per_file.append(per_config[id(own)])
    if args.show_settings:
        return _show_settings(files, [resolver.config_for(path) for path in files], per_file)
    if not files and not args.quiet and not args.force_exclude:
        # A mistyped folder, or one outside the project, would otherwise "pass".
        # (pre-commit names files, --force-exclude may drop them all: no news.)
        print(
            f"memlint: warning: no Python files or notebooks found under {', '.join(paths)}"
            " (looked for *.py, *.pyi and *.ipynb, skipping virtual environments, build output and excludes)",
            file=sys.stderr,
        )
    progress = _progress(args, len(files))
    try:
        reports = run(
            files,
            per_file,
            jobs=args.jobs,
            cache=_cache(args, config, settings),
            on_report=(lambda r: progress.update(len(r.findings))) if progress else None,
        )
    finally:
        if progress:
            progress.close()

    terminal_format = output_format
    if args.output_file:
        _write_report(
            args.output_file,
            get_reporter(output_format)(reports, unsafe_fixes=settings.unsafe_fixes, root=str(config.root)),
        )
        terminal_format = "text"
    # --statistics replaces the findings and the summary with the table, as ruff's does.
    table_only = args.statistics and terminal_format in ("text", "concise") and settings.mode == "check"
    if settings.mode != "diff" and not table_only:
        color = use_color(args.color, sys.stdout) and terminal_format in ("text", "concise")
        render = get_reporter(terminal_format)
        sys.stdout.write(render(reports, unsafe_fixes=settings.unsafe_fixes, root=str(config.root), color=color))
    if not args.quiet:
        for r in reports:
            for note in r.notes:
                print(f"memlint: note: {r.path}: {note}", file=sys.stderr)
    errors = [r for r in reports if r.error]
    for r in errors:
        print(f"memlint: error: {r.path}: {r.error}", file=sys.stderr)
    if settings.mode == "diff":
        for r in reports:
            sys.stdout.write(r.diff)
    remaining = [f for r in reports for f in r.findings]
    fixed = [f for r in reports for f in r.fixed]
    if args.show_fixes and fixed and settings.mode == "fix":
        print("\nFixed:")
        for r in reports:
            for f in r.fixed:
                print(f"  {f.path}:{f.line}:{f.column + 1}: {f.code} {f.fix.title if f.fix else ''}")
    if args.statistics:
        _print_statistics(remaining)
    if terminal_format in ("text", "concise") and not args.quiet and not table_only:
        if settings.mode == "add-noqa":
            added = sum(r.noqa_added for r in reports)
            print(f"Added {added} noqa directive{'s' if added != 1 else ''}.")
        _print_summary(remaining, fixed, settings, len(files) - len(errors), bool(errors), sum(r.moot for r in reports))
        if errors:
            n = len(errors)
            print(f"{n} file{'s' if n != 1 else ''} could not be checked (see the errors above).", file=sys.stderr)
    internal = any(r.error and r.error.startswith("internal error") for r in reports)
    if internal or _report_broken_configs(resolver.broken):
        return EXIT_ERROR
    if errors:
        return EXIT_FINDINGS
    if args.exit_non_zero_on_fix and fixed:
        return EXIT_FINDINGS
    if settings.mode == "diff" and fixed and not args.exit_zero:
        return EXIT_FINDINGS
    if remaining and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_OK


def _report_broken_configs(broken: dict[Path, str]) -> bool:
    """Each unreadable pyproject.toml, with the files it governed checked
    with the defaults; true when there was one (the exit code says so)."""
    for path, reason in broken.items():
        print(
            f"memlint: error: {reason} (the files under {_shown(path.parent)} were checked with the default settings)",
            file=sys.stderr,
        )
    return bool(broken)


def _show_settings(files: list[str], configs: list[Config], settings: list) -> int:
    """What each file is checked with, as ruff's --show-settings: the
    configuration file, the rules and the torch range with its source."""
    from memlint.find.torch_floor import format_version
    from memlint.run.runner import codes_for, per_file_ignored

    if not files:
        print("memlint: error: --show-settings: no Python file or notebook among the paths", file=sys.stderr)
        return EXIT_ERROR
    for path, config, own in zip(files, configs, settings):
        torch = own.torch_for(path)
        print(f"Settings for {_shown(path)}:")
        print(f"  configuration: {_shown(config.path) if config.path else '(none: the defaults)'}")
        print(f"  rules: {', '.join(codes_for(own, per_file_ignored(path, own))) or '(none)'}")
        print(f"  unsafe-fixes: {str(own.unsafe_fixes).lower()}")
        if torch is None:
            print("  torch: not declared (migrations are reported and fixed for any torch)")
            continue
        floor = format_version(torch.floor) if torch.floor else "none"
        if torch.ceiling is None:
            ceiling = "none"
        else:
            ceiling = f"{'<=' if torch.ceiling_included else '<'}{format_version(torch.ceiling)}"
        print(f"  torch: floor {floor}, ceiling {ceiling}, from {torch.where}: {torch.requirement}")
        pin = torch.pinned
        if pin is not None and (pin.floor, pin.ceiling) != (torch.floor, torch.ceiling):
            # The torch the code was written for (MEM602, MEM802), when another file allows more.
            print(f"  torch pinned: {pin.requirement}, from {pin.where}")
    return EXIT_OK


def _progress(args: argparse.Namespace, total: int):
    """A progress line on a terminal's stderr; None when piped or quiet."""
    if args.quiet or not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return None
    from memlint.reporters.progress import Progress

    return Progress(total, sys.stderr)


def _write_report(path: str, text: str) -> None:
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the report to {path}: {exc.strerror or exc}") from None


def _cache(args: argparse.Namespace, config: Config, settings):
    """The findings cache for a check run; None with --no-cache or when fixing."""
    if args.no_cache or settings.mode != "check":
        return None
    from memlint.run.cache import FindingsCache, resolve_cache_dir

    return FindingsCache(resolve_cache_dir(args.cache_dir, config.cache_dir, config.root))


def _config_start(paths: list[str]) -> Path | None:
    """A single path names where the project is; otherwise the working folder."""
    if len(paths) != 1:
        return None
    path = Path(paths[0]).resolve()
    return path if path.is_dir() else path.parent


def _print_statistics(findings) -> None:
    from memlint.gate.cards import CARDS  # the names, without importing a rule

    counts = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if f.fix is not None)
    for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        card = CARDS.get(code)
        mark = "[*]" if fixable[code] else "   "
        print(f"{count:5d}  {code}  {mark} {card.name if card else ''}")


def _print_summary(remaining, fixed, settings, nfiles: int, errors: bool, moot: int = 0) -> None:
    # With --diff stdout is the patch alone, so the summary goes to stderr.
    out = sys.stderr if settings.mode == "diff" else sys.stdout
    verb = "Would fix" if settings.mode == "diff" else "Fixed"
    if fixed:
        # Counted as `check` announced them: a finding another fix ended is fixed too.
        also = f" ({moot} of them by the others' fixes)" if moot else ""
        total = len(fixed) + moot
        print(f"{verb} {total} finding{'s' if total != 1 else ''}{also}.", file=out)
    if not remaining:
        if not fixed:
            # Not "all passed" when some files could not be checked at all.
            head = "No findings" if errors else "All checks passed!"
            print(f"{head} ({nfiles} file{'s' if nfiles != 1 else ''} checked)", file=out)
        return
    safe = sum(1 for f in remaining if f.fix is not None and f.fix.safety.value == "safe")
    unsafe = sum(1 for f in remaining if f.fix is not None and f.fix.safety.value == "unsafe")
    # The files that have findings, not the files checked (ruff counts none).
    nwith = len({f.path for f in remaining})
    print(
        f"Found {len(remaining)} finding{'s' if len(remaining) != 1 else ''} in {nwith} file{'s' if nwith != 1 else ''}.",
        file=out,
    )
    if settings.unsafe_fixes:
        if safe + unsafe:
            print(f"[*] {safe + unsafe} fixable with `--fix --unsafe-fixes`.", file=out)
    else:
        if safe:
            print(f"[*] {safe} fixable with `--fix`.", file=out)
        if unsafe:
            print(f"({unsafe} more fixable with `--fix --unsafe-fixes`.)", file=out)
