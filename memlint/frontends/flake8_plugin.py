"""The flake8 plugin: memlint's findings as flake8 errors with codes ``MEM…``.

The checker lints the very lines flake8 read (an editor's unsaved buffer on
stdin included) with the engine the CLI uses, so findings and positions match
``memlint check``. flake8 then applies its own ``# noqa``, ``--select`` and
``--ignore``; ``[tool.memlint]`` in the nearest pyproject.toml still decides
which rules run, since flake8 does not read pyproject.toml.
"""

from __future__ import annotations

import argparse
import ast
import os
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from memlint import __version__
from memlint.find.config import Config, ConfigError, load_config
from memlint.lint.engine import ParseError, applicable_rules, lint
from memlint.parse.budget import BudgetExceeded
from memlint.rule import Rule
from memlint.rule.registry import all_rules, select_rules

# Not a rule: the code under which the plugin says it could not do its job
# (a broken [tool.memlint], an internal error), instead of crashing flake8.
PLUGIN_ERROR = "MEM000"

Result = tuple[int, int, str, type]


def off_by_default() -> list[str]:
    return [r.code for r in all_rules() if not r.default_enabled]


def _flake8_selected(options: argparse.Namespace) -> tuple[type[Rule], ...]:
    """The rules whose codes flake8 would report; running the others is wasted
    time. flake8's decision engine is internal, so any surprise there falls
    back to running every rule and letting flake8 filter."""
    try:
        from flake8.style_guide import Decision, DecisionEngine

        engine = DecisionEngine(options)
        return tuple(r for r in all_rules() if engine.decision_for(r.code) is Decision.Selected)
    except Exception:
        return all_rules()


@lru_cache(maxsize=32)
def _config_for_folder(folder: str, explicit: str | None) -> Config:
    return load_config(explicit, Path(folder))


def config_for(filename: str, explicit: str | None) -> Config:
    """``[tool.memlint]`` as the CLI finds it for this one file."""
    folder = os.path.dirname(os.path.abspath(filename))
    if not os.path.isdir(folder):  # stdin without a usable display name
        folder = os.getcwd()
    return _config_for_folder(folder, explicit)


def _configured_codes(config: Config, filename: str) -> frozenset[str]:
    from memlint.find.discovery import is_excluded

    ignore = list(config.ignore)
    for pattern, codes in config.per_file_ignores.items():
        if is_excluded(filename, [pattern], config.root):
            ignore.extend(codes)
    # Rules that are off by default stay available: flake8's default ignore
    # list hides them until `--extend-select MEM403` asks for them.
    extend = list(config.extend_select) + (off_by_default() if config.select is None else [])
    return frozenset(r.code for r in select_rules(config.select, ignore, extend))


class Flake8Checker:
    name = "memlint"
    version = __version__

    # Set once per process by parse_options (flake8 calls it in every worker).
    rules: tuple[type[Rule], ...] | None = None
    config_path: str | None = None
    apply_noqa = True

    def __init__(self, tree: ast.AST, lines: Sequence[str], filename: str) -> None:
        # memlint parses with libcst; flake8's tree of the same text stands in
        # for the one memlint's parse guard would build.
        self.tree = tree if isinstance(tree, ast.Module) else None
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, manager: Any) -> None:
        manager.add_option(
            "--memlint-config",
            metavar="PATH",
            default=None,
            parse_from_config=True,
            normalize_paths=True,  # relative to the flake8 config file that names it
            help="pyproject.toml (or TOML file) with memlint's settings; default: the nearest "
            "pyproject.toml above each file",
        )
        manager.extend_default_ignore(off_by_default())

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        cls.config_path = getattr(options, "memlint_config", None)
        cls.apply_noqa = not getattr(options, "disable_noqa", False)
        cls.rules = _flake8_selected(options)

    def _project(self):
        """The file's project as it is on disk (project/index.py), read only
        when a rule asks. flake8 hands over one file at a time: each process
        builds the project's index once (summaries from memlint's cache
        folder when there), and an unsaved buffer on stdin is seen by the
        other modules as its saved version."""
        if self.filename in ("stdin", "-") or not os.path.isfile(self.filename):
            return None
        from memlint.project.index import view_from_disk
        from memlint.run.cache import resolve_cache_dir

        config = config_for(self.filename, self.config_path)
        return view_from_disk(self.filename, resolve_cache_dir(None, config.cache_dir, config.root))

    def run(self) -> Iterator[Result]:
        text = "".join(self.lines)
        rules = self.rules if self.rules is not None else all_rules()
        # The pre-filter first: a file without torch costs a substring scan.
        if not applicable_rules(text, rules):
            return
        try:
            codes = _configured_codes(config_for(self.filename, self.config_path), self.filename)
        except ConfigError as exc:
            yield 1, 0, f"{PLUGIN_ERROR} memlint configuration error: {exc}", type(self)
            return
        try:
            findings, _ = lint(
                text,
                self.filename,
                [r for r in rules if r.code in codes],
                noqa=self.apply_noqa,
                python_tree=self.tree,
                project=self._project,
            )
        except (ParseError, RecursionError):
            return  # flake8 reports the syntax error itself (E999)
        except BudgetExceeded as exc:
            yield 1, 0, f"{PLUGIN_ERROR} memlint: {exc}", type(self)
            return
        except Exception as exc:  # a bug in a rule must not take the editor's linter down
            yield 1, 0, f"{PLUGIN_ERROR} memlint internal error: {type(exc).__name__}: {exc}", type(self)
            return
        for f in findings:
            yield f.line, f.column, f"{f.code} {f.message}", type(self)
