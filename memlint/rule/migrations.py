"""The torch API migrations the rules know, as one table.

A row says what torch deprecated (a symbol, or an argument of one), in which
release, what replaces it, and how far the rule's fix may be trusted. The
rules that report migrations read their rows here instead of keeping their own
symbol lists: MEM501 (the device-specific AMP API), MEM602 (checkpoint
without ``use_reentrant``) and MEM804 (``verbose=`` on LR schedulers).
Adding a migration is a row plus an Invalid example in the rule that reads it
(CONTRIBUTING.md, "Adding a migration"). The facts come from the torch
release notes and the deprecation warnings of each release.
"""

from __future__ import annotations

from dataclasses import dataclass

from memlint.rule import Safety


@dataclass(frozen=True)
class Migration:
    # The qualified name that is deprecated; ``module.*`` stands for every
    # direct member of the module.
    symbol: str
    # The torch release that deprecated it.
    since: str
    # The qualified name that replaces the symbol, or for an argument
    # migration the argument as the fix writes it (``use_reentrant=False``;
    # empty: the fix removes the argument).
    replacement: str
    safety: Safety
    # The rule that reports the migration.
    rule: str
    # For an argument migration: the argument concerned; empty when the
    # symbol itself moved.
    keyword: str = ""
    # How many positional parameters come before ``keyword`` (an argument
    # passed positionally counts as given); None: it is keyword-only there.
    positional: int | None = None
    # The device type the replacement takes as an argument.
    device: str | None = None


def _amp(old: str, new: str, device: str) -> Migration:
    return Migration(old, "2.4", new, Safety.SAFE, "MEM501", device=device)


MIGRATIONS: tuple[Migration, ...] = (
    _amp("torch.cuda.amp.autocast", "torch.amp.autocast", "cuda"),
    _amp("torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "cuda"),
    _amp("torch.cuda.amp.custom_fwd", "torch.amp.custom_fwd", "cuda"),
    _amp("torch.cuda.amp.custom_bwd", "torch.amp.custom_bwd", "cuda"),
    _amp("torch.cuda.amp.autocast_mode.autocast", "torch.amp.autocast_mode.autocast", "cuda"),
    _amp("torch.cuda.amp.autocast_mode.custom_fwd", "torch.amp.autocast_mode.custom_fwd", "cuda"),
    _amp("torch.cuda.amp.autocast_mode.custom_bwd", "torch.amp.autocast_mode.custom_bwd", "cuda"),
    _amp("torch.cuda.amp.grad_scaler.GradScaler", "torch.amp.grad_scaler.GradScaler", "cuda"),
    _amp("torch.cpu.amp.autocast", "torch.amp.autocast", "cpu"),
    _amp("torch.cpu.amp.GradScaler", "torch.amp.GradScaler", "cpu"),
    _amp("torch.cpu.amp.autocast_mode.autocast", "torch.amp.autocast_mode.autocast", "cpu"),
    _amp("torch.cpu.amp.grad_scaler.GradScaler", "torch.amp.grad_scaler.GradScaler", "cpu"),
    # Warned about since 2.1 (2.2 for checkpoint_sequential); the default
    # is to become an error. False is the mode torch recommends.
    Migration(
        "torch.utils.checkpoint.checkpoint",
        "2.1",
        "use_reentrant=False",
        Safety.UNSAFE,
        "MEM602",
        keyword="use_reentrant",
    ),
    Migration(
        "torch.utils.checkpoint.checkpoint_sequential",
        "2.2",
        "use_reentrant=False",
        Safety.UNSAFE,
        "MEM602",
        keyword="use_reentrant",
        positional=3,
    ),
    Migration("torch.optim.lr_scheduler.*", "2.2", "", Safety.SAFE, "MEM804", keyword="verbose"),
)


def rows(rule: str) -> tuple[Migration, ...]:
    """The rows the rule ``rule`` (a code) reports."""
    return tuple(m for m in MIGRATIONS if m.rule == rule)


def lookup(rule: str, qualified: str | None) -> Migration | None:
    """The row of ``rule`` for the qualified name ``qualified``, else None."""
    if qualified is None:
        return None
    module = qualified.rpartition(".")[0]
    for row in rows(rule):
        if row.symbol == qualified or row.symbol == f"{module}.*":
            return row
    return None
