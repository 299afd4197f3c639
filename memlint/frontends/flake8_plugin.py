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
import os
from collections.abc import Iterator, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from memlint import __version__
from memlint.find.config import Config, ConfigError
from memlint.find.resolver import ConfigResolver
from memlint.gate.cards import CARDS, Card
from memlint.lint.screen import applicable_rules, screen
from memlint.parse.budget import BudgetExceeded
from memlint.parse.collector import collector_paused
from memlint.parse.errors import LibcstLimitation, ParseError
from memlint.read.tab_indent import expanded_view
from memlint.run.results import Settings
from memlint.run.runner import codes_for, per_file_ignored

if TYPE_CHECKING:
    from memlint.rule import Rule

    Candidate = Card | type[Rule]

# flake8 loads this module in every run: it screens a file with the rules'
# cards (gate/cards.py) and imports libcst, the engine and the rules only
# when some card lets the file through (a file without torch costs a
# substring scan). Tests hand the checker rule classes, screened the same way.

# Not a rule: the code under which the plugin says it could not do its job
# (a broken [tool.memlint], an internal error), instead of crashing flake8.
PLUGIN_ERROR = "MEM000"

Result = tuple[int, int, str, type]


def off_by_default() -> list[str]:
    return [card.code for card in CARDS.values() if not card.default_enabled]


def _flake8_selected(options: argparse.Namespace) -> tuple[Card, ...]:
    """The rules whose codes flake8 would report; running the others is wasted
    time. flake8's decision engine is internal, so any surprise there falls
    back to running every rule and letting flake8 filter."""
    try:
        from flake8.style_guide import Decision, DecisionEngine

        engine = DecisionEngine(options)
        return tuple(card for card in CARDS.values() if engine.decision_for(card.code) is Decision.Selected)
    except Exception:
        return tuple(CARDS.values())


def _rule_classes(chosen: Sequence[Candidate]) -> list[type[Rule]]:
    """The rule classes of the chosen cards (a rule class stays itself): the
    first file that reaches a rule imports them, and libcst."""
    from memlint.rule.registry import rules_by_code

    by_code = rules_by_code()
    return [by_code[c.code] if isinstance(c, Card) else c for c in chosen]


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


def _torch_range(filename: str, config: Config):
    """The torch releases the file's project accepts, as the CLI reads them."""
    from memlint.find.torch_floor import range_of_setting, torch_range_for

    setting = None
    if config.torch_version is not None:
        setting = range_of_setting(config.torch_version, f"{config.path} [tool.memlint] torch-version")
    folder = os.path.dirname(os.path.abspath(filename))
    return torch_range_for(filename if os.path.isdir(folder) else os.path.join(os.getcwd(), "-"), setting)


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
    return frozenset(codes_for(settings, per_file_ignored(filename, settings)))


class Flake8Checker:
    name = "memlint"
    version = __version__

    # Set once per process by parse_options (flake8 calls it in every worker):
    # the cards of the rules flake8 selects (a test may set rule classes).
    rules: Sequence[Candidate] | None = None
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
        candidates: Sequence[Candidate] = self.rules if self.rules is not None else tuple(CARDS.values())
        # The pre-filter first: a file without torch costs a substring scan.
        if not applicable_rules(text, candidates):
            return
        try:
            config = config_for(self.filename, self.config_path)
            codes = _configured_codes(config, self.filename, self.opt_in)
        except ConfigError as exc:
            yield 1, 0, f"{PLUGIN_ERROR} memlint configuration error: {exc}", type(self)
            return
        try:
            with collector_paused():
                passed, tree = screen(text, [c for c in candidates if c.code in codes], self.tree)
            if not passed:
                return  # no rule can report anything here: libcst stays unimported
            from memlint.lint.engine import lint

            chosen = _rule_classes([c for c in candidates if c.code in codes])
            try:
                findings, _ = lint(
                    text,
                    self.filename,
                    chosen,
                    noqa=self.apply_noqa,
                    python_tree=tree,
                    torch=_torch_range(self.filename, config),
                    project=self._project,
                    active=_rule_classes(passed),
                )
            except LibcstLimitation:
                # Indentation mixing tabs and spaces that Python accepts: read
                # as `memlint check` reads it, at the file's own columns.
                view = expanded_view(text)
                if view is None:
                    raise
                findings = [
                    replace(f, column=view.column(f.line, f.column))
                    for f in lint(
                        view.text,
                        self.filename,
                        chosen,
                        noqa=self.apply_noqa,
                        torch=_torch_range(self.filename, config),
                        project=self._project,
                    )[0]
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
