"""What kind of PyTorch object a constructor or a conventional name gives:
module, optimizer, scaler, scheduler, loss, loader."""

from __future__ import annotations

import enum
import re


class Kind(enum.Enum):
    MODULE = "module"
    OPTIMIZER = "optimizer"
    SCALER = "scaler"
    SCHEDULER = "scheduler"
    LOSS = "loss"
    LOADER = "loader"


SCALER_NAMES = frozenset(
    {
        "torch.cuda.amp.GradScaler",
        "torch.amp.GradScaler",
        "torch.cpu.amp.GradScaler",
        "torch.amp.grad_scaler.GradScaler",
        "torch.cuda.amp.grad_scaler.GradScaler",
        "torch.GradScaler",
    }
)


# A conventional suffix: ``optimizer_G``, ``optD``, ``opt2``, ``model_ema``.
_SUFFIX = r"(_?[A-Z0-9][A-Za-z0-9]*|_[a-z]|_(student|teacher|ema|base|main|gen|disc|enc|dec|\d+))?"


_NAME_GUESSES: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    (Kind.OPTIMIZER, re.compile(rf"^(optim|optimi[sz]er|opt){_SUFFIX}$|^[a-z]+_(optim|optimi[sz]er|opt)$")),
    (Kind.SCHEDULER, re.compile(rf"^(lr_)?sched(uler)?{_SUFFIX}$|^[a-z]+_sched(uler)?$")),
    (Kind.SCALER, re.compile(r"^(grad_|amp_|loss_)?scaler$")),
    (Kind.LOSS, re.compile(rf"^(criterion|loss_?fn|loss_?func(tion)?){_SUFFIX}$|^[a-z]+_criterion$")),
    (Kind.LOADER, re.compile(r"^([a-z]+_)?(data)?loader$|^[a-z]+_dl$|^dl$")),
    (
        Kind.MODULE,
        re.compile(
            rf"^(model|net|network|generator|discriminator|encoder|decoder|classifier|backbone|"
            rf"policy|critic|actor|unet|vae|rnn|lstm|gru|cnn|mlp|transformer|net[GD]){_SUFFIX}$"
            r"|^[a-z]+_(model|net)$|^[GD]$"
        ),
    ),
)


def guess_kind_from_name(name: str) -> Kind | None:
    """Kind suggested by a conventional name (``optimizer``, ``netD``...)."""
    for kind, pattern in _NAME_GUESSES:
        if pattern.search(name):
            return kind
    return None


# torch schedulers stepped once per batch by design, and the plateau one that
# steps on a metric: a caller handing one says nothing of an epoch schedule.
_NOT_EPOCH_SCHEDULERS = frozenset({"OneCycleLR", "CyclicLR", "ReduceLROnPlateau"})


def epoch_scheduler(qualified: str) -> bool:
    """``torch.optim.lr_scheduler.MultiStepLR``: a torch LR scheduler that
    moves per epoch (or whatever its caller steps it by), not a per-batch
    or a plateau one."""
    head, _, last = qualified.rpartition(".")
    return head == "torch.optim.lr_scheduler" and last[:1].isupper() and last not in _NOT_EPOCH_SCHEDULERS


def constructor_kind(qualified: str) -> Kind | None:
    """Kind of object created by calling ``qualified`` (an imported callee)."""
    head, _, last = qualified.rpartition(".")
    if qualified in SCALER_NAMES:
        return Kind.SCALER
    if qualified == "torch.optim.swa_utils.AveragedModel":
        return Kind.MODULE
    if qualified == "torch.optim.swa_utils.SWALR":
        return Kind.SCHEDULER
    if head.startswith("torch.optim.lr_scheduler") or head.startswith("timm.scheduler"):
        return Kind.SCHEDULER
    if qualified.startswith("transformers.") and "schedule" in last:
        return Kind.SCHEDULER
    if head.startswith("torch.optim") and last[:1].isupper() and last != "Optimizer" and "swa_utils" not in head:
        return Kind.OPTIMIZER
    if qualified in ("transformers.AdamW", "transformers.Adafactor", "transformers.optimization.AdamW"):
        return Kind.OPTIMIZER
    if head.startswith(("bitsandbytes.optim", "torch_optimizer", "timm.optim")) and last[:1].isupper():
        return Kind.OPTIMIZER
    if qualified.startswith("timm.optim.create_optimizer"):
        return Kind.OPTIMIZER
    if last == "DataLoader":
        return Kind.LOADER
    if last.endswith(("Loss", "Criterion")) and last[:1].isupper():
        return Kind.LOSS  # torch.nn, segmentation_models_pytorch, kornia, timm, a project's ``Criterion(args)``
    if head in ("torch.nn", "torch.nn.modules.loss") and last.endswith("Loss"):
        return Kind.LOSS
    if (
        head.startswith("torch.nn")
        and last[:1].isupper()
        and last not in ("Parameter", "Module", "ParameterList", "ParameterDict", "UninitializedParameter", "Buffer")
    ):
        if not head.startswith(("torch.nn.utils", "torch.nn.init", "torch.nn.functional")):
            return Kind.MODULE
    if head.startswith("torchvision.models") and last[:1].islower() and not last.startswith("get_weight"):
        return Kind.MODULE
    if qualified in ("timm.create_model", "torch.hub.load"):
        return Kind.MODULE
    if last == "from_pretrained" and re.search(r"(Model|For[A-Z]\w*)$", head.rsplit(".", 1)[-1]):
        return Kind.MODULE
    return None


# MEM305: the methods, and the kinds of receiver on which the bare reference is
# certainly a forgotten call. ``backward`` is checked on tensors with
# autograd history instead. ``scaler.step`` takes the optimizer, so adding
# ``()`` would not fix it: it is left out.
BARE_METHOD_RECEIVERS: dict[str, frozenset[Kind]] = {
    "eval": frozenset({Kind.MODULE}),
    "train": frozenset({Kind.MODULE}),
    "zero_grad": frozenset({Kind.OPTIMIZER, Kind.MODULE}),
    "step": frozenset({Kind.OPTIMIZER, Kind.SCHEDULER}),
    "update": frozenset({Kind.SCALER}),
}
BARE_METHOD_NAMES = frozenset(BARE_METHOD_RECEIVERS) | {"backward"}


# nn.Module's own API (and the calls handing back the module they are called
# on): calling one of these on a model is not a forward.
MODULE_API = frozenset(
    {
        "parameters",
        "named_parameters",
        "state_dict",
        "load_state_dict",
        "zero_grad",
        "apply",
        "modules",
        "children",
        "named_modules",
        "buffers",
        "register_buffer",
        "register_forward_hook",
        "add_module",
        "step",
        "backward",
    }
    | {"to", "cuda", "cpu", "eval", "train", "float", "half", "double", "requires_grad_"}
)


# Calls that hand back the module they are called on (``S(...).cuda()``).
MODULE_MOVES = frozenset(
    {"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "train", "eval", "requires_grad_", "to_empty"}
)


def spells_a_class(callee: str) -> bool:
    """``S``, ``nn.Linear``, ``models.SyncNet``: the callee's last name is
    spelled as a class (a capital first), the constructor a receiver must
    be bound to for ObjectTable._built_module and the gate alike."""
    last = callee.rpartition(".")[2]
    return bool(last) and last[0].isupper()


def names_a_model_method(receiver: str, method: str) -> bool:
    """``<receiver>.<method>(...)`` may run a named method of a model
    (``self.model.extract_feature(x)``): the receiver's last name is one for
    a model and the method is none of nn.Module's own API. The one test the
    gate, the summary's needles and ObjectTable share
    (project/typed_objects.named_forward)."""
    return (
        method not in MODULE_API
        and method != "forward"
        and not method.startswith("__")
        and guess_kind_from_name(receiver.rpartition(".")[2]) is Kind.MODULE
    )


# torch.nn layers that own no parameter as built (padding, pooling,
# activations, resampling, reshaping, dropout): a call's output has the
# history of its inputs, no more (RIFE's ``pader = nn.ReplicationPad2d(...)``
# on frames read from disk builds no graph).
_PARAMETERLESS_LAYER = re.compile(
    r"^torch\.nn\.("
    r"(Reflection|Replication|Zero|Constant|Circular)Pad[123]d"
    r"|(Adaptive)?(Max|Avg)Pool[123]d|LPPool[123]d|MaxUnpool[123]d"
    r"|ReLU6?|LeakyReLU|ELU|SELU|CELU|GELU|SiLU|Mish|Sigmoid|Tanh|Hardtanh|Hardswish|Hardsigmoid"
    r"|Softplus|Softsign|Softmax|Softmax2d|LogSoftmax|Softmin|Tanhshrink|Softshrink|Hardshrink|LogSigmoid|GLU"
    r"|Upsample|UpsamplingNearest2d|UpsamplingBilinear2d|PixelShuffle|PixelUnshuffle"
    r"|Flatten|Unflatten|Identity|Dropout[123]?d?|AlphaDropout|Fold|Unfold|ChannelShuffle"
    r")$"
)


def parameterless_layer(qualified: str) -> bool:
    """``qualified`` names a torch.nn layer that owns no parameter."""
    return bool(_PARAMETERLESS_LAYER.match(qualified))
