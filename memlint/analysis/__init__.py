"""The analysis layer: facts about a module computed once and shared by rules."""

from memlint.analysis.facts import ModuleFacts
from memlint.analysis.scope.names import ImportTable, dotted_name

__all__ = ["ImportTable", "ModuleFacts", "dotted_name"]
