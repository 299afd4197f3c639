"""Does an ``nn.Module`` class hold a layer whose output depends on its mode? (MEM202)

A model built fresh is in train mode; evaluating it under ``no_grad``
without ``eval()`` only matters when something in it reads the mode:
BatchNorm (batch statistics, running statistics overwritten), Dropout,
InstanceNorm with ``track_running_stats=True``, a functional call handed
``training=self.training``. pytorch-vqvae's ``VectorQuantizedVAE`` holds
``nn.BatchNorm2d`` layers; melgan's ``Generator`` (weight norm only) and
IMDN's ``IMDN`` (convolutions; ``norm()`` exists but no block asks for one)
hold none, so a sample pass of theirs without ``eval()`` changes nothing.

The summary lists, per model class and per module-level function, either
``"Name=*"`` (it builds such a layer itself) or the callees it builds from,
as the module spells them (``"Name=B.IMDModule,conv_layer"``); index.py
resolves them across modules: a class counts when it builds such a layer,
builds a project class that does, or calls a project function that builds
one itself or builds such a class (one function deep: IMDN's
``conv_block`` -> ``norm`` -> ``BatchNorm2d`` only on request is not followed).
A class that calls ``self.train()`` or ``self.eval()`` keeps its own mode
(WaveRNN's ``Tacotron.forward``) and is listed with nothing: never counts.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable, Mapping

from memlint.gate.ast_fields import nodes
from memlint.project.arg_modes import dotted

_MODE_LAYERS = frozenset(
    {"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LazyBatchNorm1d", "LazyBatchNorm2d"}
    | {"LazyBatchNorm3d", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"}
)
_TRACKING_NORMS = frozenset({"InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"})
# torchvision constructors whose models hold BatchNorm or Dropout at their defaults
# (ViT, Swin, ConvNeXt are left out: no BatchNorm, dropout 0 by default).
_TORCHVISION_MODES = re.compile(
    r"(resnet|resnext|wide_resnet|vgg|densenet|mobilenet|efficientnet|inception|googlenet|alexnet"
    r"|squeezenet|shufflenet|mnasnet|regnet)"
)
_BUILTINS = frozenset(dir(builtins))
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
ALL = "*"


def _qualified(spelled: str, bindings: Mapping[str, str]) -> str:
    head, _, rest = spelled.partition(".")
    target = bindings.get(head)
    if not target:
        return spelled
    return f"{target}.{rest}" if rest else target


def _zero(e: ast.AST | None) -> bool:
    return isinstance(e, ast.Constant) and not isinstance(e.value, bool) and e.value == 0


def _mode_layer(call: ast.Call, qualified: str) -> bool:
    """``nn.BatchNorm2d(c)``, ``nn.Dropout(0.1)`` (not ``Dropout(0)``),
    ``nn.InstanceNorm2d(c, track_running_stats=True)``, ``models.resnet18()``."""
    if qualified.startswith("torchvision.models."):
        return bool(_TORCHVISION_MODES.match(qualified.rsplit(".", 1)[-1]))
    if not qualified.startswith("torch.nn."):
        return False
    last = qualified.rsplit(".", 1)[-1]
    if last in _TRACKING_NORMS:
        return any(
            k.arg == "track_running_stats" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in call.keywords
        )
    if last not in _MODE_LAYERS:
        return False
    if last.endswith("Dropout") or "Dropout" in last:
        p = next((k.value for k in call.keywords if k.arg == "p"), call.args[0] if call.args else None)
        return not _zero(p)
    return True


def _mode_base(qualified: str) -> bool:
    """``class ResNetMultiImageInput(models.ResNet)``: a torchvision model with BatchNorm."""
    return qualified.startswith("torchvision.models.") and bool(
        _TORCHVISION_MODES.match(qualified.rsplit(".", 1)[-1].lower())
    )


def _reads_mode(call: ast.Call) -> bool:
    """``F.dropout(x, p, training=self.training)``: the mode decides."""
    return any(k.arg == "training" and dotted(k.value) == "self.training" for k in call.keywords)


def _self_chain(node: ast.AST) -> bool:
    """``self.a.b``: an attribute chain down to the name ``self``."""
    while node.__class__ is ast.Attribute:
        node = node.value  # type: ignore[attr-defined]
    return node.__class__ is ast.Name and node.id == "self"  # type: ignore[attr-defined]


def _entry(
    part: ast.AST, bindings: Mapping[str, str], names: set[str], walk: Callable[[ast.AST], list[ast.AST]]
) -> str | None:
    """``*``, the callees as spelled (comma-joined), "" for none; None: it keeps its own mode."""
    callees: set[str] = set()
    reads = False  # walked to the end all the same: a later ``self.eval()`` decides
    for node in walk(part):
        if node.__class__ is not ast.Call:
            continue
        call: ast.Call = node  # type: ignore[assignment]
        func = call.func
        if func.__class__ is ast.Attribute and _self_chain(func):
            # ``self.x(...)``, most calls of a model class: never a callee, so
            # no spelling is built for it (the summary asks this of every class).
            if func.value.__class__ is ast.Name and func.attr in ("train", "eval"):  # type: ignore[attr-defined]
                return None
            if not reads and _reads_mode(call):
                reads = True
            continue
        spelled = dotted(func)
        if spelled in ("self.train", "self.eval"):
            return None
        if reads:
            continue
        if _reads_mode(call):
            reads = True
            continue
        if not spelled or spelled.startswith("self."):
            continue
        qualified = _qualified(spelled, bindings)
        if _mode_layer(call, qualified):
            reads = True
            continue
        head = spelled.split(".", 1)[0]
        if qualified.startswith(("torch.", "torchvision.")) or head in _BUILTINS:
            continue
        if head in bindings or head in names or "." not in spelled:  # a bare name may come from a star import
            callees.add(spelled)
    return ALL if reads else ",".join(sorted(callees))


def mode_entries(
    tree: ast.Module,
    model_classes: list[str],
    bindings: Mapping[str, str],
    walk: Callable[[ast.AST], list[ast.AST]] | None = None,
) -> list[str]:
    """``"Name=*"`` or ``"Name=callee,..."`` for each model class and each
    other class with a base (its bases among the callees: a torchvision
    ResNet counts itself) and each module-level function; classes keeping their
    own mode and parts calling nothing of the project are left out."""
    walk = walk or nodes
    wanted = set(model_classes)
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, *_FUNCTIONS))}
    out: list[str] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and (stmt.name in wanted or stmt.bases):
            entries = [_entry(p, bindings, names, walk) for p in stmt.body]
            if any(e is None for e in entries):
                continue  # it switches its own mode
            if ALL in entries or any(_mode_base(_qualified(dotted(b), bindings)) for b in stmt.bases):
                out.append(f"{stmt.name}={ALL}")
                continue
            callees = {c for e in entries if e for c in e.split(",")}
            callees.update(
                s for s in map(dotted, stmt.bases) if s and (s.split(".")[0] in names or s.split(".")[0] in bindings)
            )
            callees.discard(stmt.name)
            callees = {c for c in callees if not _qualified(c, bindings).startswith("torch.")}
            if callees:
                out.append(f"{stmt.name}={','.join(sorted(callees))}")
        elif isinstance(stmt, _FUNCTIONS):
            entry = _entry(stmt, bindings, names, walk)
            if entry:
                out.append(f"{stmt.name}={entry}")
    return out


def entry_of(entries: list[str], name: str) -> str | None:
    """The entry of ``name`` (``*`` or callees), None when it has none."""
    prefix = name + "="
    return next((e[len(prefix) :] for e in entries if e.startswith(prefix)), None)
