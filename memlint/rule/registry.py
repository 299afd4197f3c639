"""Discovers the rules: every Rule subclass in a module of ``memlint.rules``."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from types import ModuleType

from memlint.rule import Rule
from memlint.run.selection import select_codes


def all_rules() -> tuple[type[Rule], ...]:
    # Keyed by the package object: a host that drops memlint's modules from
    # sys.modules (pytester's in-process runs restore a snapshot) gets the
    # rules again along with the analysis modules they are checked against,
    # not stale classes whose enums and facts no longer compare equal.
    return _discover(importlib.import_module("memlint.rules"))


@lru_cache(maxsize=1)
def _discover(package: ModuleType) -> tuple[type[Rule], ...]:
    found: dict[str, type[Rule]] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"memlint.rules.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule and obj.code:
                if obj.__module__ != module.__name__:
                    continue
                if obj.code in found and found[obj.code] is not obj:
                    raise RuntimeError(f"duplicate rule code {obj.code}")
                found[obj.code] = obj
    return tuple(sorted(found.values(), key=lambda r: r.code))


def rule_by_code(code: str) -> type[Rule] | None:
    code = code.upper()
    for rule in all_rules():
        if rule.code == code or rule.name == code.lower():
            return rule
    return None


def rules_by_code() -> dict[str, type[Rule]]:
    return {r.code: r for r in all_rules()}


def select_rules(
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    extend_select: list[str] | None = None,
) -> list[type[Rule]]:
    """ruff's selection (run.selection.select_codes, over the rules found here)."""
    by_code = {r.code: r for r in all_rules()}
    codes = select_codes(select, ignore, extend_select, {c: r.default_enabled for c, r in by_code.items()})
    return [by_code[c] for c in codes]
