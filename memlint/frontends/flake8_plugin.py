"""The flake8 plugin: memlint's findings as flake8 errors with codes ``MEM…``.

The checker lints the very lines flake8 read (an editor's unsaved buffer on
stdin included) with the engine the CLI uses, so findings and positions match
``memlint check``. flake8 then applies its own ``# noqa``, ``--select`` and
``--ignore``; ``[tool.memlint]`` in the nearest pyproject.toml still decides
which rules run, since flake8 does not read pyproject.toml: the same config
``memlint check`` uses for the same file (memlint.find.resolver), with the
same default selection. flake8's ``--select``/``--extend-select`` filter
what memlint reports; naming an opt-in rule by its full code there
(``--extend-select MEM403``) also turns it on, as memlint's own
``--extend-select`` does.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from memlint import __version__
from memlint.find.config import Config, ConfigError
from memlint.find.resolver import ConfigResolver
from memlint.lint.engine import LibcstLimitation, ParseError, applicable_rules, lint
from memlint.parse.budget import BudgetExceeded
from memlint.read.tab_indent import expanded_view
from memlint.rule import Rule
from memlint.rule.registry import all_rules
from memlint.run.results import Settings
from memlint.run.runner import per_file_ignored, rules_for

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


@lru_cache(maxsize=8)
def _resolver(explicit: str | None) -> ConfigResolver:
    return ConfigResolver(explicit)


def config_for(filename: str, explicit: str | None) -> Config:
    """``[tool.memlint]`` as the CLI finds it for this one file."""
    return _resolver(explicit).config_for(filename)


def opt_in_named(options: argparse.Namespace) -> tuple[str, ...]:
    """The opt-in rules flake8's --select/--extend-select name by full code."""
    named = {c.strip().upper() for key in ("select", "extend_select") for c in (getattr(options, key, None) or [])}
    return tuple(c for c in off_by_default() if c in named)


def _configured_codes(config: Config, filename: str, opt_in: tuple[str, ...] = ()) -> frozenset[str]:
    """What ``memlint check`` would run on this file (runner.rules_for, on the
    settings the CLI builds from the same config), plus the opt-in rules
    flake8's own options name."""
    settings = Settings(
        select=tuple(config.select) if config.select is not None else None,
        extend_select=tuple(config.extend_select),
        ignore=tuple(config.ignore),
        override=(None, opt_in, ()),
        per_file_ignores=tuple((k, tuple(v)) for k, v in config.per_file_ignores.items()),
        root=str(config.root),
    )
    return frozenset(r.code for r in rules_for(settings, per_file_ignored(filename, settings)))


class Flake8Checker:
    name = "memlint"
    version = __version__

    # Set once per process by parse_options (flake8 calls it in every worker).
    rules: tuple[type[Rule], ...] | None = None
    config_path: str | None = None
    opt_in: tuple[str, ...] = ()
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

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        cls.config_path = getattr(options, "memlint_config", None)
        cls.apply_noqa = not getattr(options, "disable_noqa", False)
        cls.rules = _flake8_selected(options)
        cls.opt_in = opt_in_named(options)

    def run(self) -> Iterator[Result]:
        text = "".join(self.lines)
        rules = self.rules if self.rules is not None else all_rules()
        # The pre-filter first: a file without torch costs a substring scan.
        if not applicable_rules(text, rules):
            return
        try:
            codes = _configured_codes(config_for(self.filename, self.config_path), self.filename, self.opt_in)
        except ConfigError as exc:
            yield 1, 0, f"{PLUGIN_ERROR} memlint configuration error: {exc}", type(self)
            return
        chosen = [r for r in rules if r.code in codes]
        try:
            try:
                findings, _ = lint(text, self.filename, chosen, noqa=self.apply_noqa, python_tree=self.tree)
            except LibcstLimitation:
                # Indentation mixing tabs and spaces that Python accepts: read
                # as `memlint check` reads it, at the file's own columns.
                view = expanded_view(text)
                if view is None:
                    raise
                findings = [
                    replace(f, column=view.column(f.line, f.column))
                    for f in lint(view.text, self.filename, chosen, noqa=self.apply_noqa)[0]
                ]
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
