"""GateFacts: what Python's own ``ast`` tree says about a file, cheaply, so the
engine can skip libcst where no rule can fire.

The stdlib parse is about ten times cheaper than libcst's, and the engine
builds it anyway (the nesting guard). Each rule may declare ``gate``, a
*necessary* condition on these facts: when it is false the rule cannot report
anything in the file, so the rule is not run, and a file no rule is left for
is never handed to libcst. Conditions must never be heuristics: a gate may
only skip work whose result would be "no finding" (tests/test_gate.py runs
every example and corpus with the gate on and off and requires the same
findings and fixes). A rule without a ``gate`` is never skipped.

Facts are deliberately coarse and over-approximate: "an identifier occurs in
code", "a call's last name is", "a loop's iterable mentions a data word".
Identifiers inside strings and comments do not count, which is what makes
the gate sharper than the token pre-filter.
"""

from __future__ import annotations

import ast

# The very words loops.py uses to call a loop a batch loop or a function an
# evaluation, so the gate widens whenever they do.
from memlint.analysis.loops import _DATA_TOKENS as DATA_TOKENS
from memlint.analysis.loops import _EVAL_FUNCTION_TOKENS as EVAL_FUNCTION_TOKENS
from memlint.analysis.activations import (
    OUTPUT_SAVING_FUNCTIONS,
    OUTPUT_SAVING_FUNCTIONS_WHEN_INPLACE,
    OUTPUT_SAVING_METHODS,
    OUTPUT_SAVING_MODULES,
    OUTPUT_SAVING_WHEN_INPLACE,
)
from memlint.analysis.grad_mode import _LIGHTNING_NO_GRAD_HOOKS
from memlint.analysis.loops import name_tokens

# Calls that prove a backward, or a step of an optimizer, scheduler or
# scaler, may run (objects.is_backward_call, is_optimizer_step; a gradient
# read through torch.autograd.grad).
_TRAINING_VERBS = frozenset({"backward", "manual_backward", "step", "grad"})
_BACKWARD = frozenset({"backward", "manual_backward"})
# grad_mode: what turns recording off (context managers, decorators, the
# Lightning hooks run under no_grad).
_GRAD_OFF = frozenset({"no_grad", "inference_mode", "set_grad_enabled"}) | _LIGHTNING_NO_GRAD_HOOKS
# Ops whose output autograd saves (MEM402), by their last name.
_SAVES_OUTPUT = frozenset(
    {q.rsplit(".", 1)[-1] for q in OUTPUT_SAVING_FUNCTIONS | OUTPUT_SAVING_FUNCTIONS_WHEN_INPLACE}
    | OUTPUT_SAVING_METHODS | OUTPUT_SAVING_MODULES | OUTPUT_SAVING_WHEN_INPLACE
)
# What marks a leaf that requires grad (MEM401, objects.constructor_kind).
_LEAF_MARKS = frozenset({"parameters", "named_parameters", "requires_grad", "requires_grad_", "Parameter",
                         "UninitializedParameter", "ParameterList", "ParameterDict"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class GateFacts:
    """One walk over an ``ast.Module``; see the module docstring."""

    def __init__(self, tree: ast.AST) -> None:
        self.idents: set[str] = set()  # names, attributes, import parts, def/class names, keywords
        self.called: set[str] = set()  # last name of each callee; an import alias counts as what it imports
        self.keywords: set[str] = set()  # keyword argument names of calls
        self.def_tokens: set[str] = set()  # name_tokens of every function name
        self.iter_tokens: set[str] = set()  # name_tokens of loop and comprehension iterables
        self.loops = False  # a for/while loop
        self.comprehensions = False
        self.aug_assign = False
        self.subscript_store = False  # ``x[i] = ...``
        self.inplace_call = False  # ``x.add_(...)``, ``f(x, inplace=True)``, ``torch.relu_(x)``
        self.checkpoint_without_reentrant = False  # a ``checkpoint``/``checkpoint_sequential`` call MEM602 may flag
        self._walk(tree)

    # -- what the rules ask ------------------------------------------------
    @property
    def trains(self) -> bool:
        """A backward, a step or a gradient read may run somewhere."""
        return bool(self.idents & _TRAINING_VERBS)

    @property
    def backward(self) -> bool:
        """A backward may run (objects.is_backward_call, ``torch.autograd.grad`` included)."""
        return bool(self.idents & _BACKWARD) or ("grad" in self.idents and "autograd" in self.idents)

    @property
    def mode_switch(self) -> bool:
        """``m.eval()`` / ``m.train(...)`` (objects.mode_call)."""
        return "eval" in self.called or "train" in self.called

    @property
    def grad_off(self) -> bool:
        """Somewhere recording may be off: a no_grad-like context or
        decorator, a Lightning evaluation hook, the forward of a custom
        ``autograd.Function``, a transformers ``Pipeline``."""
        return bool(self.idents & _GRAD_OFF) or any(i.endswith(("Function", "Pipeline")) for i in self.idents)

    @property
    def saves_output(self) -> bool:
        """An op whose output autograd saves for the backward is named."""
        return bool(self.idents & _SAVES_OUTPUT)

    @property
    def across_iterations(self) -> bool:
        """Code that runs once per batch may exist: a loop with batch
        evidence, or a function named for a training/evaluation step (a
        framework calls it per batch)."""
        return self.batch_evidence and (self.loops or bool(self.def_tokens & (EVAL_FUNCTION_TOKENS | DATA_TOKENS)))

    @property
    def names_loader(self) -> bool:
        """A name that may hold a data loader (objects' LOADER kind)."""
        return any("loader" in i.lower() or i.lower().endswith("dl") for i in self.idents)

    @property
    def leaf_marks(self) -> bool:
        return bool(self.idents & _LEAF_MARKS)

    @property
    def inplace(self) -> bool:
        """Some in-place write: augmented or subscript assignment, an in-place
        method or function."""
        return self.aug_assign or self.subscript_store or self.inplace_call

    @property
    def batch_evidence(self) -> bool:
        """What loops.LoopInfo.is_batch_loop and its widenings need at least
        one of: training verbs, a mode switch, a function named for
        evaluation or for a training/evaluation step, an iterable named for
        data; or a loader constructed here."""
        return (
            self.trains
            or self.mode_switch
            or bool(self.def_tokens & (EVAL_FUNCTION_TOKENS | DATA_TOKENS))
            or bool(self.iter_tokens & DATA_TOKENS)
            or "DataLoader" in self.idents
        )

    # -- the walk ------------------------------------------------------------
    def _walk(self, tree: ast.AST) -> None:
        idents, called, keywords = self.idents, self.called, self.keywords
        aliases: dict[str, str] = {}
        calls: list[ast.Call] = []
        for node in ast.walk(tree):
            kind = type(node)
            if kind is ast.Name:
                idents.add(node.id)  # type: ignore[attr-defined]
            elif kind is ast.Attribute:
                idents.add(node.attr)  # type: ignore[attr-defined]
            elif kind is ast.Call:
                calls.append(node)  # type: ignore[arg-type]
            elif kind is ast.keyword:
                if node.arg is not None:  # type: ignore[attr-defined]
                    keywords.add(node.arg)  # type: ignore[attr-defined]
            elif kind is ast.AugAssign:
                self.aug_assign = True
            elif kind is ast.Subscript:
                if type(node.ctx) is ast.Store:  # type: ignore[attr-defined]
                    self.subscript_store = True
            elif kind in (ast.For, ast.AsyncFor):
                self.loops = True
                self._iter_tokens(node.iter)  # type: ignore[attr-defined]
            elif kind is ast.While:
                self.loops = True
                self._iter_tokens(node.test)  # type: ignore[attr-defined]
            elif kind in _COMPREHENSIONS:
                self.comprehensions = True
                for gen in node.generators:  # type: ignore[attr-defined]
                    self._iter_tokens(gen.iter)
            elif kind in (ast.FunctionDef, ast.AsyncFunctionDef):
                idents.add(node.name)  # type: ignore[attr-defined]
                self.def_tokens |= name_tokens(node.name)  # type: ignore[attr-defined]
            elif kind is ast.ClassDef:
                idents.add(node.name)  # type: ignore[attr-defined]
            elif kind in (ast.Import, ast.ImportFrom):
                if kind is ast.ImportFrom and node.module:  # type: ignore[attr-defined]
                    idents.update(node.module.split("."))  # type: ignore[attr-defined]
                for alias in node.names:  # type: ignore[attr-defined]
                    parts = alias.name.split(".")
                    idents.update(parts)
                    if alias.asname:
                        idents.add(alias.asname)
                        aliases[alias.asname] = parts[-1]
        keywords.discard("")
        idents |= keywords
        for call in calls:
            func = call.func
            if type(func) is ast.Attribute:
                last = func.attr
            elif type(func) is ast.Name:
                last = aliases.get(func.id, func.id)
            else:
                continue
            called.add(last)
            names = {kw.arg for kw in call.keywords}
            if last.endswith("_") and not last.endswith("__") and not last.startswith("_") or "inplace" in names:
                self.inplace_call = True
            if last in ("checkpoint", "checkpoint_sequential") and "use_reentrant" not in names and None not in names:
                self.checkpoint_without_reentrant = True

    def _iter_tokens(self, expr: ast.AST) -> None:
        tokens = self.iter_tokens
        for node in ast.walk(expr):
            kind = type(node)
            if kind is ast.Name:
                tokens |= name_tokens(node.id)  # type: ignore[attr-defined]
            elif kind is ast.Attribute:
                tokens |= name_tokens(node.attr)  # type: ignore[attr-defined]
            elif kind is ast.Constant and isinstance(node.value, str):  # type: ignore[attr-defined]
                tokens |= name_tokens(node.value.strip("'\""))  # type: ignore[attr-defined]


def enabled_by_gate(rules, facts: GateFacts):
    """The rules whose declared condition holds (a rule without one always)."""
    return [r for r in rules if r.gate is None or r.gate(facts)]
