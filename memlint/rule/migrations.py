"""The torch API migrations the rules know, as one table.

A row says what torch deprecated (a symbol, or an argument of one), in which
release, what replaces it, and how far the rule's fix may be trusted. The
rules that report migrations read their rows here instead of keeping their own
symbol lists: MEM501 (the device-specific AMP API), MEM602 (checkpoint
without ``use_reentrant``) and MEM804 (``verbose=`` on LR schedulers).
Adding a migration is a row plus an Invalid example in the rule that reads it
(CONTRIBUTING.md, "Adding a migration"). The facts come from the torch
release notes and the deprecation warnings of each release.

A row also says from which release its replacement exists (``requires``):
a project that still supports an older torch (find/torch_floor.py) keeps
the finding but not the fix, and a project whose every accepted torch
predates the deprecation (``since``) is not told about it at all
(``torch_verdict``). Behaviour that changed in a release, or an argument
that does not exist before one, is judged by the torch the code was written
for (``written_before``: the releases the project accepts, or the one it
pins with ``==``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memlint.rule import Safety

if TYPE_CHECKING:
    from memlint.find.torch_floor import TorchRange


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
    # The first torch release where the replacement exists (empty: every
    # release, as for removing an argument).
    requires: str = ""


def _amp(old: str, new: str, device: str, requires: str) -> Migration:
    return Migration(old, "2.4", new, Safety.SAFE, "MEM501", device=device, requires=requires)


# ``torch.amp.autocast(device_type)`` came with 1.10; ``torch.amp.GradScaler``
# (and the cpu GradScaler) with 2.3; ``torch.amp.custom_fwd/custom_bwd``
# with their ``device_type`` argument in 2.4.
MIGRATIONS: tuple[Migration, ...] = (
    _amp("torch.cuda.amp.autocast", "torch.amp.autocast", "cuda", "1.10"),
    _amp("torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "cuda", "2.3"),
    _amp("torch.cuda.amp.custom_fwd", "torch.amp.custom_fwd", "cuda", "2.4"),
    _amp("torch.cuda.amp.custom_bwd", "torch.amp.custom_bwd", "cuda", "2.4"),
    _amp("torch.cuda.amp.autocast_mode.autocast", "torch.amp.autocast_mode.autocast", "cuda", "1.10"),
    _amp("torch.cuda.amp.autocast_mode.custom_fwd", "torch.amp.autocast_mode.custom_fwd", "cuda", "2.4"),
    _amp("torch.cuda.amp.autocast_mode.custom_bwd", "torch.amp.autocast_mode.custom_bwd", "cuda", "2.4"),
    _amp("torch.cuda.amp.grad_scaler.GradScaler", "torch.amp.grad_scaler.GradScaler", "cuda", "2.3"),
    _amp("torch.cpu.amp.autocast", "torch.amp.autocast", "cpu", "1.10"),
    _amp("torch.cpu.amp.GradScaler", "torch.amp.GradScaler", "cpu", "2.3"),
    _amp("torch.cpu.amp.autocast_mode.autocast", "torch.amp.autocast_mode.autocast", "cpu", "1.10"),
    _amp("torch.cpu.amp.grad_scaler.GradScaler", "torch.amp.grad_scaler.GradScaler", "cpu", "2.3"),
    # Warned about since 2.1 (2.2 for checkpoint_sequential); the default
    # is to become an error. False is the mode torch recommends. The
    # argument exists since 1.11 (checkpoint_sequential: 2.0).
    Migration(
        "torch.utils.checkpoint.checkpoint",
        "2.1",
        "use_reentrant=False",
        Safety.UNSAFE,
        "MEM602",
        keyword="use_reentrant",
        requires="1.11",
    ),
    Migration(
        "torch.utils.checkpoint.checkpoint_sequential",
        "2.2",
        "use_reentrant=False",
        Safety.UNSAFE,
        "MEM602",
        keyword="use_reentrant",
        positional=3,
        requires="2.0",
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


def needed_by_fix(rule: str, fixed_code: str) -> Migration | None:
    """Of ``rule``'s rows, the one whose replacement the fix's new code
    ``fixed_code`` spells (its last name, ``GradScaler``) that needs the
    newest torch; None when the fix needs no particular release."""
    best: Migration | None = None
    for row in rows(rule):
        name = row.replacement.rpartition(".")[2].split("=")[0]
        if not row.requires or not name or not re.search(rf"\b{re.escape(name)}\b", fixed_code):
            continue
        if best is None or _release(row.requires) > _release(best.requires):
            best = row
    return best


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


@dataclass(frozen=True)
class Verdict:
    """What a migration finding becomes in a project with a known torch range."""

    report: bool  # False: every torch the project accepts predates the deprecation
    withheld: str | None = None  # why the fix is not offered, for the message


def torch_verdict(since: str, needed: Migration | None, torch: TorchRange | None) -> Verdict:
    """A deprecation made in ``since``, fixed by code that needs
    ``needed.requires``, in a project accepting ``torch`` (None: unknown, so
    as before: reported and fixed)."""
    if torch is None:
        return Verdict(True)
    if not torch.reaches(since):
        return Verdict(False)
    if needed is not None and torch.older_than(needed.requires):
        return Verdict(
            True,
            f"fix withheld: the project supports {torch.describe()} ({torch.where}); "
            f"`{needed.replacement}` needs torch {needed.requires}: "
            # The two ways out a user can act on (a finding they cannot fix is noise otherwise).
            f"raise the floor to torch>={needed.requires}, or keep the old spelling until then "
            f"(ignore {needed.rule})",
        )
    return Verdict(True)


def written_before(version: str, torch: TorchRange | None) -> bool:
    """The project's code was written for a torch older than ``version``
    (TorchRange.predates); False when its torch is unknown."""
    return torch is not None and torch.predates(version)
