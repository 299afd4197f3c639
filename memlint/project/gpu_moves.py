"""Whether anything of a project may put a model or a tensor on a GPU.

``torch.load`` without ``map_location`` doubles the weights on a GPU only
where there is a GPU copy to make: a checkpoint saved from a GPU, loaded
beside a model on one. A project none of whose modules moves anything to a
device, wraps a model in ``DataParallel``, sets a device, or imports a
framework that moves models for you (Lightning, accelerate, the Hugging Face
``Trainer``, ignite...) has its models and its checkpoints on the CPU
(torchMoji): MEM701 has nothing to report there.

Per module (``ModuleSummary.gpu_moves``, from the summary's one walk): some
call may place something on a device (``gpu_call``), or the module imports
such a framework (``imports_framework``). A module with no training word has
no summary: its text is screened (``may_move``) and any device word counts.
Precision goes the other way here: one such call anywhere, or a word the
screen cannot rule out in a module not summarised, keeps the rule on.
"""

from __future__ import annotations

import ast
import re

# Words one of which a module's text spells wherever ``gpu_call`` or
# ``imports_framework`` may hold (the screen of a module without a summary;
# ``.to`` without its parenthesis: ``x.to (d)`` is a call too); short ones
# as whole words (``input`` spells ``npu``), with the frameworks' names, below.
_WORDS = (
    rb"cuda|CUDA|\.to\b|device|[Pp]arallel|set_default|accelerat|init_process_group"
    rb"|\b(?:gpus?|GPUs?|gpu_ids|xpu|mps|npu|ipu)\b"
)

# Methods and functions that move a model or a tensor, or choose where they live.
_MOVING = frozenset(
    {"cuda", "xpu", "mps", "npu", "ipu", "to_empty", "set_device", "device", "set_default_device"}
    | {"set_default_tensor_type", "DataParallel", "DistributedDataParallel", "data_parallel"}
    | {"init_process_group", "FullyShardedDataParallel"}
)
# Keywords that name a device or a set of them.
_DEVICE_KEYWORDS = frozenset(
    {"device", "device_ids", "output_device", "devices", "device_map", "gpus", "gpu", "gpu_ids", "accelerator"}
)
# ``.to(torch.float16)``, ``.to(dtype=...)``: a conversion, no move.
_DTYPES = frozenset(
    {"float", "float16", "float32", "float64", "half", "double", "bfloat16", "long", "int", "int8", "int16"}
    | {"int32", "int64", "uint8", "bool", "complex64", "complex128", "short", "cfloat"}
)
_CONVERSION_KEYWORDS = frozenset({"dtype", "non_blocking", "copy", "memory_format"})
# Type tests read a type (``isinstance(x, torch.cuda.LongTensor)``), move nothing.
_TYPE_TESTS = frozenset({"isinstance", "issubclass"})
# Top-level packages that move the models they are handed, or build them on
# a device, without a move the project's own code spells.
FRAMEWORKS = frozenset(
    {"pytorch_lightning", "lightning", "lightning_fabric", "accelerate", "ignite", "deepspeed", "fairscale"}
    | {"transformers", "sentence_transformers", "fastai", "catalyst", "mmcv", "mmengine", "mmdet", "mmseg"}
    | {"detectron2", "allennlp", "skorch", "poutyne", "torchbearer", "composer", "horovod", "colossalai"}
    | {"torchtnt", "fairseq", "apex", "flair", "speechbrain", "nemo", "ultralytics", "pytorch_pretrained_bert"}
)

_SCREEN = re.compile(_WORDS + rb"|\b(?:" + b"|".join(name.encode() for name in sorted(FRAMEWORKS)) + rb")\b")


def may_move(data: bytes) -> bool:
    """The text spells a word without which no call moves anything (a
    module not summarised: any one counts)."""
    return _SCREEN.search(data) is not None


def gpu_call(call: ast.Call) -> bool:
    """``call`` may place a model or a tensor on a device: ``x.cuda()``,
    ``x.to(d)`` (not ``x.to(torch.float16)``), ``torch.cuda.*(...)``,
    ``DataParallel(m)``, ``set_device``, a ``device=``-like keyword, or an
    argument naming CUDA (``"cuda:0"``, ``x.type(torch.cuda.FloatTensor)``)."""
    func = call.func
    kind = func.__class__
    if kind is ast.Attribute:
        name = func.attr  # type: ignore[attr-defined]
        if name in _MOVING or (name == "to" and not _conversion(call)) or _names_cuda(func.value):  # type: ignore[attr-defined]
            return True
    elif kind is ast.Name:
        name = func.id  # type: ignore[attr-defined]
        if name in _MOVING:
            return True
        if name in _TYPE_TESTS:
            return False
    for keyword in call.keywords:
        if keyword.arg in _DEVICE_KEYWORDS or _cuda_value(keyword.value):
            return True
    return any(_cuda_value(arg) for arg in call.args)


def imports_framework(node: ast.Import | ast.ImportFrom) -> bool:
    """The import statement names such a framework (at any depth: an
    import inside a function, under ``try``)."""
    if node.__class__ is ast.ImportFrom:
        return not node.level and (node.module or "").partition(".")[0] in FRAMEWORKS  # type: ignore[union-attr]
    return any(alias.name.partition(".")[0] in FRAMEWORKS for alias in node.names)


def _conversion(call: ast.Call) -> bool:
    if any(k.arg not in _CONVERSION_KEYWORDS for k in call.keywords):
        return False
    return all(a.__class__ is ast.Attribute and a.attr in _DTYPES for a in call.args)  # type: ignore[attr-defined]


def _names_cuda(value: ast.AST) -> bool:
    """``torch.cuda`` in a dotted name (``torch.cuda.FloatTensor``, ``torch.cuda.amp``)."""
    while value.__class__ is ast.Attribute:
        if value.attr == "cuda":  # type: ignore[attr-defined]
            return True
        value = value.value  # type: ignore[attr-defined]
    return value.__class__ is ast.Name and value.id == "cuda"  # type: ignore[attr-defined]


def _cuda_value(value: ast.AST) -> bool:
    kind = value.__class__
    if kind is ast.Constant:
        return isinstance(value.value, str) and "cuda" in value.value.lower()  # type: ignore[attr-defined]
    return kind is ast.Attribute and _names_cuda(value)
