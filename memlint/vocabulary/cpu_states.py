"""What the two proofs that a checkpoint is saved from CPU tensors keep while
they walk a module: analysis/training/cpu_saves.py on libcst (the module that
saves, MEM701) and project/checkpoint_files.py on Python's ``ast`` (the
module that loads the file elsewhere). Their readers of the tree differ; this
bookkeeping, keyed by dotted names, is one, so the two cannot drift apart on
what a rebinding forgets or where a state dict lives."""

from __future__ import annotations

from memlint.vocabulary.kinds import Kind, guess_kind_from_name

# nn.Module methods that return the module itself: ``model.eval().cpu()`` moves ``model``.
RETURNS_SELF = frozenset({"eval", "train", "float", "half", "double", "bfloat16", "requires_grad_", "share_memory"})
# Tensor methods whose result stays where the tensor is: ``v.cpu().clone()`` is on the CPU.
KEEPS_DEVICE = frozenset({"clone", "detach", "contiguous", "float", "half"})
# A value whose name holds none of these is a number, a flag, an epoch: no state, model or tensor.
STATE_WORDS = ("state", "dict", "model", "net", "weight", "param", "tensor", "ckpt", "checkpoint", "sd")

_NO_WEIGHT_KINDS = (Kind.OPTIMIZER, Kind.SCHEDULER, Kind.SCALER)


def plain_name(name: str, words: tuple[str, ...] = STATE_WORDS) -> bool:
    """The last part of the dotted ``name`` (``self._cur_task``) names none of ``words``."""
    last = name.rsplit(".", 1)[-1].lower()
    return not any(word in last for word in words)


def holds_no_weights(owner: str) -> bool:
    """``optimizer``, ``self.scheduler_G``, ``scaler``: named for what only
    ``optimizer.load_state_dict`` (a scheduler's, a scaler's) reads back."""
    return guess_kind_from_name(owner.rsplit(".", 1)[-1]) in _NO_WEIGHT_KINDS


class CpuStateFrames:
    """Per function (and the module): the last device move of each name (True:
    to the CPU), and the names bound to a state dict on the CPU."""

    def __init__(self) -> None:
        self.moves: list[dict[str, bool]] = [{}]
        self.cpu_states: list[set[str]] = [set()]

    def enter(self) -> None:
        self.moves.append({})
        self.cpu_states.append(set())

    def leave(self) -> None:
        self.moves.pop()
        self.cpu_states.pop()

    def moved(self, key: str, to_cpu: bool) -> None:
        self.moves[-1][key] = to_cpu

    def rebound(self, key: str, moved: bool | None, same_object: bool) -> None:
        """``key`` names a new object: what was known of the old one's device
        (and its parts', ``net.module``) is gone; ``net = net.cpu()`` moves
        the new one (``moved``), ``net = net.eval()`` is the same object."""
        if moved is None and same_object:
            return
        moves = self.moves[-1]
        for old in [k for k in moves if k == key or k.startswith(key + ".")]:
            del moves[old]
        for old in [k for k in self.cpu_states[-1] if k.startswith(key + ".")]:
            self.cpu_states[-1].discard(old)
        if moved is not None:
            moves[key] = moved

    def last_move_to_cpu(self, key: str) -> bool:
        """The last move of ``key`` or of its nearest owner (``net.module``,
        then ``net``) went to the CPU."""
        parts = key.split(".")
        for owner in (".".join(parts[:i]) for i in range(len(parts), 0, -1)):
            if owner in self.moves[-1]:
                return self.moves[-1][owner]
        return False

    def is_cpu_state(self, key: str) -> bool:
        return key in self.cpu_states[-1]

    def set_cpu_state(self, key: str, cpu: bool) -> None:
        if cpu:
            self.cpu_states[-1].add(key)
        else:
            self.cpu_states[-1].discard(key)
