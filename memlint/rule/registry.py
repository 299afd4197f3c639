"""Discovers the rules: every Rule subclass in a module of ``memlint.rules``."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from memlint.rule import Rule


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    package = importlib.import_module("memlint.rules")
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


def select_rules(
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    extend_select: list[str] | None = None,
) -> list[type[Rule]]:
    """ruff's selection: ``select`` replaces the default set, ``extend_select``
    adds to it, ``ignore`` removes; entries are codes or prefixes (``MEM1``)."""
    rules = all_rules()
    if select:
        chosen = {r for r in rules if _matches(r.code, select)}
    else:
        chosen = {r for r in rules if r.default_enabled}
    if extend_select:
        chosen |= {r for r in rules if _matches(r.code, extend_select)}
    if ignore:
        chosen = {r for r in chosen if not _matches_more_specific(r.code, ignore, select or [])}
    return sorted(chosen, key=lambda r: r.code)


def _matches(code: str, prefixes: list[str]) -> bool:
    return any(p.upper() == "ALL" or code.startswith(p.upper()) for p in prefixes)


def _matches_more_specific(code: str, ignore: list[str], select: list[str]) -> bool:
    # As in ruff: `--select MEM101 --ignore MEM1` keeps MEM101, the more
    # specific selector wins.
    ig = max((len(p) for p in ignore if code.startswith(p.upper()) or p.upper() == "ALL"), default=-1)
    if ig < 0:
        return False
    se = max((len(p) for p in select if code.startswith(p.upper())), default=-1)
    return ig >= se


def known_prefix(entry: str) -> bool:
    entry = entry.upper()
    return entry == "ALL" or any(r.code.startswith(entry) for r in all_rules())
