"""Types from call sites: what project object a name holds (summary side).

A rule that meets ``policy.select_action(state)`` in an evaluation loop
cannot tell, from the file alone, what ``policy`` is. The project can: every
call of ``eval_policy(policy, ...)`` passes an object built as
``TD3.TD3(...)``; ``self.scheduler`` is the constructor's ``scheduler``
argument, built at the one construction site by a project function whose
every ``return`` is ``LambdaLR(...)``. This module records, from one walk of
a module's ``ast`` tree (the summary's: it gathers, per scope, the nodes
read here; a module summarised without it, summarise_exports, is walked
here), the pieces those answers are made of; ``index.py`` joins them across
modules (``ProjectIndex.object_types``):

- ``bound``: per scope, the names every binding of which is a call (a
  constructor or a factory) or another typed name, as the module spells the
  callee (``TD3.TD3``, ``:Actor`` for a class of its own, ``*SAC`` for a name
  that may come from a star import);
- ``sites``: every call of a function or class the module defines or
  imports from outside the standard library, with the arguments whose type
  is known that way, by parameter key (``"0"`` by position, else the keyword);
- ``escaped``: the module's own functions and classes used other than as the
  callee of a call (handed out as values: their call sites are not all seen);
- ``returns``: module-level functions whose every ``return`` is typed;
- ``params``: each function's parameters, in order (``self`` dropped for
  methods), to bind a call site's keys;
- ``init_attrs``: ``self.<attr> = <param>`` in a class's ``__init__``;
- ``receivers``: ``<name>.<method>(...)`` calls whose receiver may be typed
  (a parameter, a bound name, ``self.<attr>``): only these are resolved;
- ``forwards``: methods that run a model attribute's forward with grad on
  (``self.actor(state)``, ``self.netG.forward(x)``), and no forward under
  ``no_grad`` but one guarded by a ``torch.__version__`` test (a branch
  dead on current torch); ``self_forwards``: methods that run the object's
  own forward (``mean, std = self.forward(state)``);
- ``bases`` and ``model_attrs``: per class, its bases as spelled, and the
  attributes assigned a call of a class (``self.actor = Actor(...).to(d)``);
  ``attr_types``, those of a project class or factory (a receiver chain
  ``trainer.gen_a`` is typed through them);
- ``receivers`` also holds ``<name>.<attr>.<method>(...)`` on a typed name,
  and bound-method aliases (``encode = trainer.gen_a.encode if a2b else
  trainer.gen_b.encode``): each arm's receiver and method.

Names and spellings only: no resolution here, so the facts depend on the
file's bytes alone and are cached with its summary.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from operator import attrgetter

from memlint.gate.ast_fields import CHILD_READERS, children, nodes, read_nothing
from memlint.gate.ast_names import ast_dotted
from memlint.project.backward_returns import backward_returned
from memlint.project.dynamic_classes import direct_pick, pickers
from memlint.project.eval_forwards import eval_off_forward, works_before_eval_branch
from memlint.project.forward_returns import returned_params
from memlint.project.passed_through import passthroughs, wraps_itself
from memlint.project.tuple_factories import ELEMENT_MARK, Element, element_types, mark_elements
from memlint.vocabulary.kinds import MODULE_API, Kind, guess_kind_from_name

_STDLIB = frozenset(sys.stdlib_module_names) | {"builtins"}
# Installed packages whose calls are never a project function's call site
# (summary._EXTERNAL): their classes may still be a type (``LambdaLR``).
_NOT_PROJECT = frozenset(
    {"torch", "torchvision", "torchaudio", "numpy", "scipy", "pandas", "sklearn", "PIL", "cv2", "tqdm"}
    | {"matplotlib", "einops", "wandb", "tensorboardX"}
)
# Calls that hand back the object they are called on (a module's ``.to``)
# or wrap it without changing which methods a caller reaches through it.
_SAME_OBJECT = frozenset({"to", "cuda", "cpu", "eval", "train", "float", "half", "double", "requires_grad_"})
_WRAPPERS = frozenset({"DataParallel", "DistributedDataParallel"})
_OFF = frozenset({"no_grad", "inference_mode"})
# nn.Module's own API: calling one of these on a model attribute is not a forward.
_MODULE_API = MODULE_API
_DEFS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
# Code _returns does not read: it runs elsewhere, or later.
_RETURNS_SKIPS = _DEFS | {ast.Lambda}
# A call's place in the source, read in C (every call of every scope is sorted by it).
_POSITION = attrgetter("lineno", "col_offset")
# The node classes _Types._scope reads (any other is only walked through).
READ_IN_SCOPE = frozenset(
    {ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef}
    | {ast.Lambda, ast.Import, ast.ImportFrom, ast.Name, ast.Global, ast.Nonlocal, ast.Call}
)


@dataclass
class ObjectTypes:
    bound: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)
    sites: list[tuple[str, int, tuple[tuple[str, tuple[str, ...]], ...]]] = field(default_factory=list)
    escaped: list[str] = field(default_factory=list)
    returns: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    params: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    init_attrs: list[tuple[str, str, str]] = field(default_factory=list)
    receivers: list[tuple[str, str, str]] = field(default_factory=list)
    # (method "Class.m", attribute, line, the attribute's constructors as
    # spelled, joined by "|", or "" for an explicit ``.forward(``, the
    # attribute's method called: "" for the call itself)
    forwards: list[tuple[str, str, int, str, str]] = field(default_factory=list)
    self_forwards: list[str] = field(default_factory=list)
    # Of ``forwards``, the methods whose every return is that forward's
    # result on some of their parameters as they came in (forward_returns.py):
    # (method "Class.m", ((position or -1 for a keyword-only one, parameter), ...)).
    returned: list[tuple[str, tuple[tuple[int, str], ...]]] = field(default_factory=list)
    bases: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    # Attributes named for a scheduler whose every assignment in the class is
    # typed (``None`` aside): (class, attr, spellings). MEM802 reads a
    # method's ``self.gen_scheduler.step()`` as a library scheduler's.
    scheduler_attrs: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)
    # Attributes whose every assignment in the class is a call of a class or
    # factory other than an installed package's (``self.gen_a = AdaINGen(...)``):
    # (class, attr, spellings). ``trainer.gen_a.encode`` is typed through them.
    attr_types: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)
    # Classes whose ``forward`` turns grad off for some of its work (a ``with
    # torch.no_grad():`` block, or the decorator): whether a call records a
    # graph depends on what it is asked (SPADE's ``mode='inference'``).
    off_inside: list[str] = field(default_factory=list)
    # Of them, those whose ``forward`` returns in eval mode only what it
    # computed with grad off (eval_forwards.py: SECOND's ``VoxelNet``).
    eval_off: list[str] = field(default_factory=list)
    # A class's own ``forward`` method, as ``forwards`` has the others, for a
    # class some method of which runs it (``self.forward(split="test")``):
    # on a plain wrapper (no ``nn.Module``) ``forward`` is a method like any
    # other (Attention-Gated-Networks' ``FeedForwardSegmentation.forward``
    # runs ``self.net``); typed_objects reads it only for such a class.
    # (method "Class.forward", attribute, line): each ``self.<attr>(...)`` it
    # runs with grad on; none when one runs under ``no_grad``.
    own_forwards: list[tuple[str, str, int]] = field(default_factory=list)
    # (class, attribute) of such a class whose ``self.<attr>.parameters()``
    # it hands an optimizer (a callee spelled with "optim"): trainable weights.
    optimized_attrs: list[tuple[str, str]] = field(default_factory=list)
    # Methods whose every return hands back a loss they backpropagated
    # (backward_returns.py): (method "Class.m", tuple length or 0, places).
    backwards: list[tuple[str, int, tuple[int, ...]]] = field(default_factory=list)

    def to_json(self) -> dict:
        # dataclasses.asdict's shape (tuples stay tuples; json writes them as lists)
        return {name: list(getattr(self, name)) for name in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: dict) -> ObjectTypes:
        def strs(xs) -> tuple[str, ...]:
            return tuple(str(x) for x in xs)

        return cls(
            bound=[(str(s), str(n), strs(t)) for s, n, t in data.get("bound", ())],
            sites=[
                (str(c), int(ln), tuple((str(k), strs(t)) for k, t in args)) for c, ln, args in data.get("sites", ())
            ],
            escaped=[str(e) for e in data.get("escaped", ())],
            returns=[(str(f), strs(t)) for f, t in data.get("returns", ())],
            params=[(str(f), strs(p)) for f, p in data.get("params", ())],
            init_attrs=[(str(c), str(a), str(p)) for c, a, p in data.get("init_attrs", ())],
            receivers=[(str(s), str(r), str(m)) for s, r, m in data.get("receivers", ())],
            forwards=[(str(m), str(a), int(ln), str(c), str(v)) for m, a, ln, c, v in data.get("forwards", ())],
            self_forwards=[str(m) for m in data.get("self_forwards", ())],
            returned=[(str(m), tuple((int(i), str(p)) for i, p in ps)) for m, ps in data.get("returned", ())],
            bases=[(str(c), strs(b)) for c, b in data.get("bases", ())],
            scheduler_attrs=[(str(c), str(a), strs(t)) for c, a, t in data.get("scheduler_attrs", ())],
            attr_types=[(str(c), str(a), strs(t)) for c, a, t in data.get("attr_types", ())],
            off_inside=[str(c) for c in data.get("off_inside", ())],
            eval_off=[str(c) for c in data.get("eval_off", ())],
            own_forwards=[(str(m), str(a), int(ln)) for m, a, ln in data.get("own_forwards", ())],
            optimized_attrs=[(str(c), str(a)) for c, a in data.get("optimized_attrs", ())],
            backwards=[(str(m), int(n), tuple(int(i) for i in p)) for m, n, p in data.get("backwards", ())],
        )


def object_types(
    tree: ast.Module,
    bindings: dict[str, str],
    has_star: bool,
    scope_nodes: dict[int, list[ast.AST]] | None = None,
    off_withs: set[int] | None = None,
) -> ObjectTypes:
    """The module's object-type facts (see the module docstring).
    ``scope_nodes``: per scope (by the ``id`` of the module's tree or of a
    function), the nodes of its own code of a READ_IN_SCOPE class (others
    among them are not read), in a pre-order (the summary's walk gathers them: summary.py); a scope
    missing there is walked here. ``off_withs``: the ids of the functions
    (and classes) holding a ``with`` of an off context as their own code,
    from the same walk (every ``with`` of the module met); None: each
    ``forward`` is walked here."""
    return _Types(tree, bindings, has_star, scope_nodes or {}, off_withs).out


def _attribute_runs(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, int]]:
    """``self.<attr>(...)`` calls of ``fn`` with grad on; none at all when
    one runs under ``no_grad`` (or the function is decorated so)."""
    if any(_is_off_context(d) for d in fn.decorator_list):
        return []
    out: list[tuple[str, int]] = []
    todo: list[tuple[ast.AST, bool]] = [(stmt, False) for stmt in reversed(fn.body)]
    while todo:
        node, off = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.With, ast.AsyncWith)):
            inner = off or any(_is_off_context(i.context_expr) for i in node.items)
            todo += [(stmt, inner) for stmt in reversed(node.body)]
            continue
        if isinstance(node, ast.Call):
            attr = _self_attr(node.func)
            if attr is not None:
                if off:
                    return []
                out.append((attr, node.lineno))
        todo += [(child, off) for child in reversed(children(node))]
    return out


def _optimized_attributes(methods: list[ast.FunctionDef | ast.AsyncFunctionDef]) -> list[str]:
    """The attributes whose ``self.<attr>.parameters()`` a method hands a
    call spelled with "optim" (``get_optimizer(opts, self.net.parameters())``,
    ``optim.Adam(self.net.parameters())``)."""
    found: list[str] = []
    for fn in methods:
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Call) and "optim" in (ast_dotted(node.func) or "").lower()):
                continue
            for arg in node.args:
                if (
                    isinstance(arg, ast.Call)
                    and isinstance(arg.func, ast.Attribute)
                    and arg.func.attr == "parameters"
                    and (attr := _self_attr(arg.func.value)) is not None
                    and attr not in found
                ):
                    found.append(attr)
    return found


def _is_self(node: ast.AST) -> bool:
    """``ast_dotted(node) == "self"``, without spelling the chain."""
    return node.__class__ is ast.Name and node.id == "self"  # type: ignore[attr-defined]


def is_off_context(expr: ast.AST) -> bool:
    """A ``with`` item or decorator named ``no_grad``/``inference_mode``."""
    if isinstance(expr, ast.Call):
        expr = expr.func
    name = ast_dotted(expr) or ""
    return name.rpartition(".")[2] in _OFF


_is_off_context = is_off_context


def _turns_grad_off(fn: ast.FunctionDef, off_withs: set[int] | None = None) -> bool:
    """``fn`` is decorated with ``no_grad``/``inference_mode`` or holds a
    ``with`` of one (not in a function or class nested in it). ``off_withs``:
    the functions that hold one, as the summary's walk found them."""
    if any(_is_off_context(d) for d in fn.decorator_list):
        return True
    if off_withs is not None:
        return id(fn) in off_withs
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(_is_off_context(i.context_expr) for i in node.items):
            return True
        todo.extend(children(node))
    return False


def _version_test(test: ast.AST) -> bool:
    """``if torch.__version__.startswith('0.4'):``: a branch taken on some
    torch versions only."""
    return any(isinstance(n, ast.Attribute) and n.attr == "__version__" for n in nodes(test))


class _Types:
    def __init__(
        self,
        tree: ast.Module,
        bindings: dict[str, str],
        has_star: bool,
        scope_nodes: dict[int, list[ast.AST]],
        off_withs: set[int] | None = None,
    ) -> None:
        self.bindings = bindings
        self._scope_nodes = scope_nodes
        self._off_withs = off_withs
        self.has_star = has_star
        self.defs = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        # Module-level names bound to a dict literal: a ``TABLE[key](...)`` of
        # one is a lookup (class_registries.py decides what it may hold).
        self._tables = {
            t.id
            for n in tree.body
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Dict)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        self.out = ObjectTypes()
        # Functions returning a class picked from a module named at run time
        # (dynamic_classes.py), only where the module may import importlib.
        self._dynamic = any(v.split(".")[0] == "importlib" for v in bindings.values())
        self._pickers = pickers(tree, self._qualified, self._spell_text) if self._dynamic else {}
        # Functions handing back the parameter they are given (``init_net(net)``,
        # passed_through.py): a call of one is what it was handed.
        self._passthrough = passthroughs(tree, lambda v, n: wraps_itself(v, n, _WRAPPERS, _SAME_OBJECT))
        self._called: set[int] = set()  # ids of Name nodes that are a call's callee
        self._escaped: set[str] = set()
        self._receivers: set[tuple[str, str, str]] = set()  # out.receivers, for membership
        # The classes whose methods (nested code included) are being walked,
        # innermost last: each gets every ``self.<attr>`` assignment met
        # (_Attrs), so a method is walked once, not once more per question.
        self._classes: list[_Attrs] = []
        # ``self.<attr> = encoder`` (or ``encoder.cuda()``): the values, per
        # scope being walked (innermost last), whose type is a local name's,
        # known only once the scope's names are typed; then their types by id
        # (``_class`` reads them as it would a call's).
        self._local_values: list[list[ast.AST]] = []
        self._value_types: dict[int, tuple[str, ...]] = {}
        # A class's init_attrs and forwards need all its methods walked: each
        # is a slot (a list) kept in its place in the output, filled when the
        # class is done, flattened at the end (the entries' order is the
        # order of a walk per method).
        self._init_attrs: list = []
        self._forwards: list = []
        self._self_forwards: list = []
        self._scheduler_attrs: list = []
        # Module-level names typed at module level, read (never bound) in a
        # module-level function, and the receivers of such names met there:
        # kept once no function of the module rebinds the name (``global``).
        self._module_typed: dict[str, tuple[str, ...]] = {}
        self._globals: set[str] = set()
        self._global_receivers: list[tuple[str, str, str]] = []
        self._scope("", tree, tree.body, {}, None, ())
        self._add_global_receivers()
        self.out.escaped = sorted(self._escaped)
        self.out.init_attrs = _flat(self._init_attrs)
        self.out.forwards = _flat(self._forwards)
        self.out.self_forwards = _flat(self._self_forwards)
        self.out.scheduler_attrs = _flat(self._scheduler_attrs)

    def _add_global_receivers(self) -> None:
        """The receivers of module-level typed names read in functions, with
        the module's types bound in the function's scope, once the whole
        module is read: a ``global`` statement anywhere may rebind the name."""
        added: set[tuple[str, str]] = set()
        for scope, recv, method in self._global_receivers:
            if recv in self._globals:
                continue
            if (scope, recv) not in added:
                added.add((scope, recv))
                self.out.bound.append((scope, recv, self._module_typed[recv]))
            entry = (scope, recv, method)
            if entry not in self._receivers:
                self._receivers.add(entry)
                self.out.receivers.append(entry)

    # -- spellings -----------------------------------------------------------
    def _qualified(self, func: ast.AST) -> str | None:
        """``func`` as a dotted name with its head's import applied."""
        name = ast_dotted(func)
        if name is None:
            return None
        head, dot, tail = name.partition(".")
        return self.bindings.get(head, head) + dot + tail

    def _local_qualified(self, func: ast.AST, local: dict[str, str]) -> str | None:
        """``func`` as a dotted name with its head's import, local or not, applied."""
        name = ast_dotted(func)
        if name is None:
            return None
        head, dot, tail = name.partition(".")
        return local.get(head, self.bindings.get(head, head)) + dot + tail

    def _spell_text(self, dotted: str) -> str | None:
        try:
            node = ast.parse(dotted, mode="eval").body
        except SyntaxError:
            return None
        return self.spell(node, {})

    def spell(self, func: ast.AST, local: dict[str, str]) -> str | None:
        """The callee as this module spells it after its imports; None for a
        name it cannot place (a builtin, a local variable, the stdlib)."""
        # Most callees are a local's or ``self``'s method (``x.view``,
        # ``self.conv``): their head, found first, places nothing, and
        # their spelling is never joined.
        root = func
        while root.__class__ is ast.Attribute:
            root = root.value  # type: ignore[attr-defined]
        if root.__class__ is not ast.Name:
            return None
        head = root.id  # type: ignore[attr-defined]
        if (
            head not in local
            and head not in self.defs
            and head not in self.bindings
            and not (self.has_star and root is func)
        ):
            return None
        name = ast_dotted(func)
        if name is None:
            return None
        head, _, tail = name.partition(".")
        rest = f".{tail}" if tail else ""
        if head in local:
            target = local[head]
        elif head in self.defs:
            return f":{name}" if not tail else None
        elif head in self.bindings:
            target = self.bindings[head]
        elif self.has_star and not tail:
            return f"*{name}"
        else:
            return None
        if target.split(".")[0] in _STDLIB:
            return None
        return target + rest

    # -- scopes --------------------------------------------------------------
    def _scope(
        self,
        name: str,
        owner: ast.AST,
        body: list[ast.stmt],
        local: dict[str, str],
        cls: ast.ClassDef | None,
        params: tuple[str, ...],
    ) -> _Probe:
        """One function (or the module): its typed names, call sites,
        receivers; nested functions and classes get scopes of their own.
        Returns what the walk saw that ``_returns`` and ``_forward_of`` need."""
        local = dict(local)
        stores: dict[str, list[ast.AST | None]] = {p: [None] for p in params}
        self._local_values.append([])
        calls: list[ast.Call] = []
        nested: list[ast.AST] = []
        returns: list[ast.AST | None] = []
        unpacked: list[ast.Assign] = []  # ``a, b = call(...)``: amp.initialize keeps its models
        read = self._scope_nodes.get(id(owner))
        if read is not None:
            self._read(read, stores, calls, nested, returns, local, unpacked)
        todo: list[ast.AST] = [] if read is not None else list(body)
        while todo:
            node = todo.pop()
            kind = node.__class__
            if kind not in READ_IN_SCOPE:  # most nodes: only their children matter
                todo.extend(children(node))
                continue
            if kind is ast.Name:
                if not isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
                    stores.setdefault(node.id, []).append(None)  # type: ignore[attr-defined]
                elif node.id in self.defs and id(node) not in self._called:  # type: ignore[attr-defined]
                    self._escaped.add(node.id)  # type: ignore[attr-defined]
                continue
            if self._classes and (kind is ast.Assign or kind is ast.AugAssign or kind is ast.AnnAssign):
                self._assigned(node)  # type: ignore[arg-type]
            elif kind is ast.Return:
                returns.append(node.value)  # type: ignore[attr-defined]
            if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                nested.append(node)
                stores.setdefault(node.name, []).append(None)  # type: ignore[attr-defined]
                continue
            if kind is ast.Lambda:
                continue
            if kind is ast.Import or kind is ast.ImportFrom:
                self._local_import(node, local)  # type: ignore[arg-type]
                continue
            if kind is ast.Assign and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):  # type: ignore[attr-defined]
                stores.setdefault(node.targets[0].id, []).append(node.value)  # type: ignore[attr-defined]
                todo.append(node.value)  # type: ignore[attr-defined]
                continue
            if kind is ast.Assign and _unpacks_a_call(node):  # type: ignore[arg-type]
                unpacked.append(node)  # type: ignore[arg-type]
            if kind in (ast.Global, ast.Nonlocal):
                for n in node.names:  # type: ignore[attr-defined]
                    stores.setdefault(n, []).append(None)
                if kind is ast.Global:
                    self._globals.update(node.names)  # type: ignore[attr-defined]
                continue
            if kind is ast.Call:
                calls.append(node)  # type: ignore[arg-type]
                if isinstance(node.func, ast.Name):  # type: ignore[attr-defined]
                    self._called.add(id(node.func))  # type: ignore[attr-defined]
                    self._super_class(node)  # type: ignore[arg-type]
            todo.extend(children(node))
        for assign in unpacked:
            if not _keep_models(assign, stores, lambda func: self._local_qualified(func, local)):
                mark_elements(assign, stores)  # ``optim, sched = get_optimizer(...)`` (tuple_factories.py)
        typed: dict[str, tuple[str, ...]] = {}
        # Names bound only to typed values, to a fixed point over chains of
        # names (``model = net`` after ``net = Net()``): at most one pass per name.
        pending = {n: vs for n, vs in stores.items() if n not in params and all(v is not None for v in vs)}
        changed = True
        while changed and pending:
            changed = False
            for n in list(pending):
                types: set[str] = set()
                ok = True
                values = [v for v in pending[n] if not _same_object_of(v, n)]
                for v in values or [None]:
                    if v is None:
                        ok = False
                        break
                    t = self.type_of(v, local, typed)
                    if t is None:
                        ok = False
                        break
                    types.update(t)
                if ok:
                    typed[n] = tuple(sorted(types))
                    del pending[n]
                    changed = True
        for value in self._local_values.pop():
            t = self.type_of(value, local, typed)
            if t is not None:
                self._value_types[id(value)] = t
        for n, t in sorted(typed.items()):
            self.out.bound.append((name, n, t))
        may_type = set(typed) | {p for p in params if len(stores.get(p, ())) == 1}
        if not name:
            self._module_typed = typed
        # A module-level function reading a module-level typed name it never
        # binds (``agent = Agent(...)`` at module level, ``agent.collect_samples()``
        # in ``main_loop``): the module's binding is the one it reads.
        inherited = (
            {n for n in self._module_typed if n not in stores} if name and cls is None and "." not in name else set()
        )

        def receiver(func: ast.Attribute) -> None:
            # Only a name, or one attribute of a name, typed here, inherited
            # or ``self`` is kept: most receivers are told by their head
            # before they are spelled.
            value = func.value
            if value.__class__ is ast.Attribute:
                value = value.value  # type: ignore[attr-defined]
            if value.__class__ is not ast.Name:
                return
            head = value.id  # type: ignore[attr-defined]
            if head not in may_type and head not in inherited and (cls is None or head != "self"):
                return
            recv = ast_dotted(func.value)
            if recv is None:
                return
            head, dot, rest = recv.partition(".")
            if (
                recv in may_type
                or (cls is not None and head == "self" and dot and "." not in rest)
                or (head in may_type and dot and "." not in rest)  # ``trainer.gen_a``: through attr_types
            ):
                entry = (name, recv, func.attr)
                if entry not in self._receivers:  # a set beside the list: a module may hold thousands
                    self._receivers.add(entry)
                    self.out.receivers.append(entry)
            elif recv in inherited:
                self._global_receivers.append((name, recv, func.attr))

        for call in sorted(calls, key=_POSITION):
            self._site(call, local, typed)
            if isinstance(call.func, ast.Attribute):
                receiver(call.func)
        # Only a name whose first value is an attribute or a conditional may
        # be bound to methods (_bound_methods): most stores are not asked.
        for _n, values in sorted((n, vs) for n, vs in stores.items() if vs[0].__class__ in _ARMS):
            arms = _bound_methods(values)
            for arm in arms or ():
                receiver(arm)
        probe = _Probe(bool(returns) and all(r is not None for r in returns))
        if cls is not None:
            for call in calls:
                _probe_forward(call, probe)
        for node in sorted(nested, key=lambda n: n.lineno):  # type: ignore[attr-defined]
            if isinstance(node, ast.ClassDef):
                self._class(node, name, local)
            else:
                self._function(node, name, local, None)  # type: ignore[arg-type]
        return probe

    def _read(
        self,
        read: list[ast.AST],
        stores: dict[str, list[ast.AST | None]],
        calls: list[ast.Call],
        nested: list[ast.AST],
        returns: list[ast.AST | None],
        local: dict[str, str],
        unpacked: list[ast.Assign],
    ) -> None:
        """_scope's walk, from the scope's nodes the summary gathered (a
        pre-order, children left to right): the same reading, and the same
        facts, as the walk's (children right to left). Only the local
        imports' order tells: a name imported twice ends with the walk's
        last one, the first in source order."""
        skipped: set[int] = set()  # the ``x`` of ``x = value``: the walk never visits it
        imports: list[ast.Import | ast.ImportFrom] = []
        # Runs on every kept node of every scope: the classes and tables
        # looked up once, calls (the most of them) tested first.
        name_, call_, assign_, load, defs, called = ast.Name, ast.Call, ast.Assign, ast.Load, self.defs, self._called
        assigns = (ast.Assign, ast.AugAssign, ast.AnnAssign) if self._classes else ()
        for node in read:
            kind = node.__class__
            if kind is call_:
                calls.append(node)  # type: ignore[arg-type]
                if node.func.__class__ is name_:  # type: ignore[attr-defined]
                    called.add(id(node.func))  # type: ignore[attr-defined]
                    self._super_class(node)  # type: ignore[arg-type]
                continue
            if kind is name_:
                if id(node) in skipped:
                    continue
                if node.ctx.__class__ is not load:  # type: ignore[attr-defined]
                    stores.setdefault(node.id, []).append(None)  # type: ignore[attr-defined]
                elif node.id in defs and id(node) not in called:  # type: ignore[attr-defined]
                    self._escaped.add(node.id)  # type: ignore[attr-defined]
                continue
            if kind in assigns:
                self._assigned(node)  # type: ignore[arg-type]
            elif kind is ast.Return:
                returns.append(node.value)  # type: ignore[attr-defined]
            if kind in _DEFS:
                nested.append(node)
                stores.setdefault(node.name, []).append(None)  # type: ignore[attr-defined]
            elif kind is ast.Import or kind is ast.ImportFrom:
                imports.append(node)  # type: ignore[arg-type]
            elif kind is assign_ and len(node.targets) == 1 and node.targets[0].__class__ is name_:  # type: ignore[attr-defined]
                stores.setdefault(node.targets[0].id, []).append(node.value)  # type: ignore[attr-defined]
                skipped.add(id(node.targets[0]))  # type: ignore[attr-defined]
            elif kind is assign_ and _unpacks_a_call(node):  # type: ignore[arg-type]
                unpacked.append(node)  # type: ignore[arg-type]
            elif kind is ast.Global or kind is ast.Nonlocal:
                for n in node.names:  # type: ignore[attr-defined]
                    stores.setdefault(n, []).append(None)
                if kind is ast.Global:
                    self._globals.update(node.names)  # type: ignore[attr-defined]
        for node in reversed(imports):
            self._local_import(node, local)

    def _super_class(self, call: ast.Call) -> None:
        """``super(Protonet, self).__init__()``: the class named there is
        read, not handed out (its construction sites stay all its call sites)."""
        if call.func.id == "super" and call.args and isinstance(call.args[0], ast.Name):  # type: ignore[attr-defined]
            self._called.add(id(call.args[0]))

    def _assigned(self, node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> None:
        """A ``self.<attr>`` assignment in a method of every class around."""
        for target in node.targets if node.__class__ is ast.Assign else [node.target]:  # type: ignore[union-attr]
            if isinstance(target, ast.Attribute) and _is_self(target.value):
                value = node.value if node.__class__ is ast.Assign else None
                for attrs in self._classes:
                    attrs.counts[target.attr] = attrs.counts.get(target.attr, 0) + 1
                    if value is not None:
                        attrs.values.setdefault(target.attr, []).append(value)
                if value is not None and self._local_values and _named_value(value):
                    self._local_values[-1].append(value)

    def _local_import(self, node: ast.Import | ast.ImportFrom, local: dict[str, str]) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                local[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
            return
        base = "." * node.level + (node.module or "")
        for alias in node.names:
            if alias.name != "*":
                sep = "" if base.endswith(".") or not base else "."
                local[alias.asname or alias.name] = f"{base}{sep}{alias.name}"

    def type_of(
        self, value: ast.AST, local: dict[str, str], typed: dict[str, tuple[str, ...]]
    ) -> tuple[str, ...] | None:
        """The types ``value`` may hold, as spelled: a call of a project
        name or of a class, through ``.to(...)``-style calls and parallel
        wrappers; a typed name; None when unknown."""
        for _ in range(8):
            if isinstance(value, ast.Name):
                return typed.get(value.id)
            if value.__class__ is Element:
                # one element of a project factory's tuple (tuple_factories.py)
                spelled = self.spell(value.call.func, local)  # type: ignore[attr-defined]
                if spelled is None or spelled.split(".")[0] in _NOT_PROJECT:
                    return None
                return (f"{spelled}{ELEMENT_MARK}{value.index}",)  # type: ignore[attr-defined]
            if not isinstance(value, ast.Call):
                return None
            func = value.func
            if isinstance(func, ast.Attribute) and func.attr in _SAME_OBJECT:
                value = func.value
                continue
            if _wrapper(func):
                if not value.args:
                    return None
                value = value.args[0]
                continue
            if func.__class__ is ast.Call or func.__class__ is ast.Subscript:
                looked = self._looked_up(func, local)  # type: ignore[arg-type]
                if looked is not None:
                    return looked
            if self._dynamic:
                picked = self._picked(func, local, typed)
                if picked is not None:
                    return picked
            handed = self._handed_back(value, local, typed)
            if handed is not None:
                value = handed
                continue
            spelled = self.spell(func, local)
            return (spelled,) if spelled is not None else None
        return None

    def _looked_up(self, func: ast.Call | ast.Subscript, local: dict[str, str]) -> tuple[str, ...] | None:
        """``get_model_class(name)(...)``, ``MODELS[name](...)``,
        ``MODELS.get(name)(...)``: an instance of the class a project lookup
        hands back, spelled ``%`` + the lookup (class_registries.py)."""
        holder: ast.AST
        if func.__class__ is ast.Subscript:
            holder = func.value  # type: ignore[union-attr]
        else:
            callee = func.func  # type: ignore[union-attr]
            is_get = isinstance(callee, ast.Attribute) and callee.attr == "get"
            holder = callee.value if is_get and len(func.args) == 1 else callee  # type: ignore[union-attr]
        spelled = self.spell(holder, local)
        if spelled is None and isinstance(holder, ast.Name) and holder.id in self._tables and holder.id not in local:
            spelled = ":" + holder.id  # a module-level table of this module (class_registries.py reads it)
        if spelled is None or spelled.split(".")[0] in _NOT_PROJECT:
            return None
        return ("%" + spelled,)

    def _handed_back(self, call: ast.Call, local: dict[str, str], typed: dict[str, tuple[str, ...]]) -> ast.AST | None:
        """The argument ``call`` of a function of this module that returns
        the parameter it is given (passed_through.py) hands it."""
        func = call.func
        if not isinstance(func, ast.Name) or func.id in local or func.id in typed:
            return None
        found = self._passthrough.get(func.id)
        if found is None:
            return None
        position, name = found
        if any(isinstance(a, ast.Starred) for a in call.args[: position + 1]) or any(
            k.arg is None for k in call.keywords
        ):
            return None
        if position < len(call.args):
            return call.args[position]
        return next((k.value for k in call.keywords if k.arg == name), None)

    def _picked(
        self, func: ast.AST, local: dict[str, str], typed: dict[str, tuple[str, ...]]
    ) -> tuple[str, ...] | None:
        """A call of a class picked at run time (dynamic_classes.py): an
        instance of one of its classes; ``^`` marks the class itself, the
        result of a picker (``model = find_model_using_name(opt.model)``)."""
        if isinstance(func, ast.Name):
            held = typed.get(func.id)
            if held and all(t.startswith("^") for t in held):
                return tuple(t[1:] for t in held)
            if held is None and func.id in self._pickers and func.id not in local:
                return tuple("^" + t for t in self._pickers[func.id])
            return None
        spelled = direct_pick(func, self._qualified)
        return (spelled,) if spelled is not None else None

    def _site(self, call: ast.Call, local: dict[str, str], typed: dict[str, tuple[str, ...]]) -> None:
        spelled = self.spell(call.func, local)
        if spelled is None or spelled.split(".")[0] in _NOT_PROJECT:
            return
        args = []
        for i, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                break
            t = self.type_of(arg, local, typed)
            if t is not None:
                args.append((str(i), t))
        for kw in call.keywords:
            if kw.arg is not None:
                t = self.type_of(kw.value, local, typed)
                if t is not None:
                    args.append((kw.arg, t))
        self.out.sites.append((spelled, call.lineno, tuple(args)))

    def _function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, outer: str, local: dict[str, str], cls: ast.ClassDef | None
    ) -> _Probe:
        name = f"{outer}.{node.name}" if outer else node.name
        a = node.args
        params = [p.arg for p in a.posonlyargs + a.args]
        if cls is not None and params and not any(ast_dotted(d) == "staticmethod" for d in node.decorator_list):
            params = params[1:]
        all_params = tuple(params) + tuple(p.arg for p in a.kwonlyargs)
        self.out.params.append((name, all_params))
        probe = self._scope(name, node, node.body, local, cls, all_params)
        # Only module-level functions append ``returns``: after the scope's
        # walk, in the same order; read again only when every return has a value.
        if cls is None and not outer and probe.returns:
            self._returns(node, name, local)
        return probe

    def _returns(self, node: ast.FunctionDef | ast.AsyncFunctionDef, name: str, local: dict[str, str]) -> None:
        """A factory: every ``return`` hands back a typed value (a call of a
        class or of another factory, or a name bound only to such calls)."""
        local = dict(local)
        stores: dict[str, list[ast.AST | None]] = {}
        returns: list[ast.AST | None] = []
        todo: list[ast.AST] = list(node.body)
        # Runs on every node of every module-level function that returns:
        # the classes tested by identity (``ast.parse`` makes no subclass of
        # them), each class's children reader looked up once.
        pop, readers, name_, load = todo.pop, CHILD_READERS, ast.Name, ast.Load
        while todo:
            sub = pop()
            kind = sub.__class__
            if kind is name_:
                if sub.ctx.__class__ is not load:  # type: ignore[attr-defined]
                    stores.setdefault(sub.id, []).append(None)  # type: ignore[attr-defined]
                continue  # a name holds no node below it
            if kind in _RETURNS_SKIPS:
                continue
            if kind is ast.Import or kind is ast.ImportFrom:
                self._local_import(sub, local)  # type: ignore[arg-type]
            elif kind is ast.Yield or kind is ast.YieldFrom:
                return
            elif kind is ast.Return:
                returns.append(sub.value)  # type: ignore[attr-defined]
            elif kind is ast.Assign and len(sub.targets) == 1 and sub.targets[0].__class__ is name_:  # type: ignore[attr-defined]
                stores.setdefault(sub.targets[0].id, []).append(sub.value)  # type: ignore[attr-defined]
                continue
            read = readers.get(kind, read_nothing)
            todo += read(sub) if read is not None else ast.iter_child_nodes(sub)
        if not returns or any(r is None for r in returns):
            return
        typed: dict[str, tuple[str, ...]] = {}
        for n, vs in stores.items():
            types: set[str] = set()
            for v in vs:
                if _is_none(v):
                    continue  # ``scheduler = None  # constant``: no object to call a method of
                # ``model = DataParallel(model)``: the name's own earlier value
                if (
                    isinstance(v, ast.Call)
                    and (ast_dotted(v.func) or "").rpartition(".")[2] in _WRAPPERS
                    and v.args
                    and isinstance(v.args[0], ast.Name)
                    and v.args[0].id == n
                ) or _same_object_of(v, n):
                    continue
                t = self.type_of(v, local, {}) if v is not None else None
                if t is None:
                    break
                types.update(t)
            else:
                if types:
                    typed[n] = tuple(sorted(types))
        if self._dynamic:
            # ``instance = model()`` after ``model = find_model_using_name(...)``
            for n, vs in stores.items():
                if n not in typed and vs and all(v is not None and not _is_none(v) for v in vs):
                    picked = [self._picked(v.func, local, typed) if isinstance(v, ast.Call) else None for v in vs]
                    if all(x is not None and not any(y.startswith("^") for y in x) for x in picked):
                        typed[n] = tuple(sorted({y for x in picked for y in x or ()}))
        elements = element_types(returns, lambda r: self.type_of(r, local, typed))  # type: ignore[arg-type]
        for i, held in sorted(elements.items()):
            self.out.returns.append((f"{name}{ELEMENT_MARK}{i}", held))
        found: set[str] = set()
        for r in returns:
            if _is_none(r) or _exception(r):
                continue  # ``return None``, ``return NotImplementedError(...)``: no object of another type
            t = self.type_of(r, local, typed)  # type: ignore[arg-type]
            if t is None:
                return
            found.update(t)
        if found:
            self.out.returns.append((name, tuple(sorted(found))))

    # -- classes -------------------------------------------------------------
    def _class(self, node: ast.ClassDef, outer: str, local: dict[str, str]) -> None:
        name = f"{outer}.{node.name}" if outer else node.name
        bases = tuple(s for s in (self.spell(b, local) or ast_dotted(b) or "?" for b in node.bases))
        self.out.bases.append((name, bases))
        own_forwards = [f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "forward"]
        if any(_turns_grad_off(f, self._off_withs) for f in own_forwards):
            eval_off = len(own_forwards) == 1 and eval_off_forward(own_forwards[0], _is_off_context)
            # A forward whose eval branch alone is off, after work done with grad on, builds a graph.
            if not (eval_off and works_before_eval_branch(own_forwards[0])):
                self.out.off_inside.append(name)
            if eval_off:
                self.out.eval_off.append(name)
        # What each ``self.<attr>`` is assigned (a call's type, or None), and
        # how often, in any method: gathered by the methods' own walks.
        attrs = _Attrs()
        methods = [f for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if self._classes:  # a class inside a method: its other statements are that method's code too
            for stmt in node.body:
                if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    for sub in nodes(stmt):
                        if sub.__class__ in (ast.Assign, ast.AugAssign, ast.AnnAssign):
                            self._assigned(sub)  # type: ignore[arg-type]
        scheduler: list = []  # scheduler_attrs: the class's own before its methods' nested classes'
        self._scheduler_attrs.append(scheduler)
        self._classes.append(attrs)
        slots: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, list, list, list, _Probe]] = []
        for fn in methods:
            returned = backward_returned(fn)
            if returned is not None:
                self.out.backwards.append((f"{name}.{fn.name}", *returned))
            init: list = []
            if fn.name == "__init__":
                self._init_attrs.append(init)
            probe = self._function(fn, name, local, node)
            forwards: list = []
            own: list = []
            if fn.name not in ("__init__", "forward"):
                self._self_forwards.append(own)
                self._forwards.append(forwards)
            slots.append((fn, init, forwards, own, probe))
        self._classes.pop()
        model_attrs: dict[str, list[str | None]] = {}
        held: dict[str, list[tuple[str, ...] | None]] = {}  # the same, ``None`` left out, for scheduler_attrs
        for attr, values in attrs.values.items():
            for value in values:
                if _rewraps(value, attr, lambda f: self.spell(f, local)):
                    continue  # ``self.net = DDP(self.net, ...)``: still the module it held
                t = self._value_types.get(id(value)) or self.type_of(value, local, {})
                model_attrs.setdefault(attr, []).append("|".join(t) if t is not None else None)
                if t is not None or not _is_none(value):
                    # ``self.scheduler = None`` holds no object of another type
                    held.setdefault(attr, []).append(t)
        for attr, types in sorted(held.items()):
            if types and None not in types and guess_kind_from_name(attr) is Kind.SCHEDULER:
                spelled = sorted({c for t in types for c in t or ()})
                scheduler.append((name, attr, tuple(spelled)))
            elif types and None not in types and None not in model_attrs[attr]:
                spelled = sorted({c for t in types for c in t or ()})
                if any(sp.split(".")[0] not in _NOT_PROJECT for sp in spelled):
                    self.out.attr_types.append((name, attr, tuple(spelled)))
        parts = _forward_parts(slots, model_attrs)
        own_forward = None
        for fn, init, forwards, own, probe in slots:
            if fn.name == "__init__":
                init.extend(self._init_attrs_of(name, fn, attrs.counts))
            elif fn.name == "forward":
                own_forward = (fn, probe)
            elif (
                probe.own
                or any(_model_attr(model_attrs, a) or a in parts.runs for a in probe.attrs)
                or (probe.items and parts.containers)
            ):  # a method that calls no model attribute has no forward to find
                self._forwards_of(name, fn, model_attrs, forwards, own, parts)
        if any(own for _fn, _init, _fw, own, _p in slots):
            # Methods that run ``self.forward(...)``: a plain wrapper's forward,
            # and the attributes whose parameters it hands an optimizer.
            if own_forward is not None:
                own_methods = {f.name for f in methods}
                self.out.own_forwards.extend(
                    (f"{name}.forward", a, ln) for a, ln in _attribute_runs(own_forward[0]) if a not in own_methods
                )
            self.out.optimized_attrs.extend((name, a) for a in _optimized_attributes(methods))

    @staticmethod
    def _init_attrs_of(
        cls: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, counts: dict[str, int]
    ) -> list[tuple[str, str, str]]:
        """``self.<attr> = <param>`` in ``__init__``'s own body, the only
        assignment of that attribute in the class."""
        params = {p.arg for p in fn.args.args[1:] + fn.args.kwonlyargs}
        out = []
        for stmt in fn.body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Attribute)
                and _is_self(stmt.targets[0].value)
                and isinstance(stmt.value, ast.Name)
                and stmt.value.id in params
                and counts.get(stmt.targets[0].attr) == 1
            ):
                out.append((cls, stmt.targets[0].attr, stmt.value.id))
        return out

    def _forwards_of(
        self,
        cls: str,
        fn: ast.FunctionDef | ast.AsyncFunctionDef,
        attrs: dict[str, list[str | None]],
        forwards: list,
        self_forwards: list,
        parts: _Parts | None = None,
    ) -> None:
        """``fn`` runs a model attribute's forward with grad on, and none
        under ``no_grad`` but on a torch-version branch."""
        if any(_is_off_context(d) for d in fn.decorator_list):
            return
        parts = parts or _Parts()
        name = f"{cls}.{fn.name}"
        on: list[tuple[str, int, str, str]] = []
        off = False
        own = False
        items: dict[str, str] = {}  # a loop name -> the layer container it runs through
        # (node, under no_grad, under a torch-version branch), in pre-order:
        # a stack, not a recursive closure (a cycle that would hold the tree).
        # Classes tested by identity, and no name or constant put on the stack
        # (most of the nodes: none is read, none has a child to read).
        todo: list[tuple[ast.AST, bool, bool]] = [(stmt, False, False) for stmt in reversed(fn.body)]
        skipped, leaves, containers = _NOT_ENTERED, _LEAVES, parts.containers
        while todo:
            node, grad_off, guarded = todo.pop()
            kind = node.__class__
            if kind in skipped:
                continue
            if kind is ast.With or kind is ast.AsyncWith:
                inner = grad_off or any(_is_off_context(i.context_expr) for i in node.items)  # type: ignore[attr-defined]
                todo += [(stmt, inner, guarded) for stmt in reversed(node.body)]  # type: ignore[attr-defined]
                continue
            if kind is ast.If and _version_test(node.test):  # type: ignore[attr-defined]
                todo += [(stmt, grad_off, True) for stmt in reversed(node.body + node.orelse)]  # type: ignore[attr-defined]
                continue
            if containers:
                _bind_items(node, containers, items)
            if kind is ast.Call:
                found = self._forward_call(node, attrs)  # type: ignore[arg-type]
                if found is not None and not found[2] and found[1] and found[0] in parts.runs:
                    # ``self.convnet = get_convnet(args)``, run by ``forward`` too: a
                    # factory the index may not type (typed_objects._layer_part).
                    found = (found[0], f"{FORWARD_PART}|{found[1]}", "")
                found = found or _part_call(node, attrs, parts, items)  # type: ignore[arg-type]
                if found is not None:
                    if not grad_off:
                        on.append((found[0], node.lineno, found[1], found[2]))  # type: ignore[attr-defined]
                    elif not guarded:
                        off = True
                func = ast_dotted(node.func)  # type: ignore[attr-defined]
                if func in ("self", "self.forward"):
                    own = True
            todo += [(child, grad_off, guarded) for child in reversed(children(node)) if child.__class__ not in leaves]
        if own:
            self_forwards.append(name)
        if on and not off:
            attr, line, ctor, via = on[-1]  # the last: after any guarded branch, the one that runs
            forwards.append((name, attr, line, ctor, via))
            if not via:
                a = fn.args
                params = tuple(p.arg for p in (a.posonlyargs + a.args)[1:]) + tuple(p.arg for p in a.kwonlyargs)
                passed = returned_params(fn, attr, params)
                if passed:
                    self.out.returned.append((name, passed))

    @staticmethod
    def _forward_call(call: ast.Call, attrs: dict[str, list[str | None]]) -> tuple[str, str, str] | None:
        """(attribute, its constructor or "", the method called or "") for
        ``self.X(...)``, ``self.X.forward(...)`` or ``self.X.m(...)`` on a
        model attribute; None for any other call."""
        func = call.func
        if not isinstance(func, ast.Attribute):
            return None
        if _is_self(func.value):
            ctors = attrs.get(func.attr, [])
            if ctors and None not in ctors:
                return func.attr, "|".join(sorted(set(ctors))), ""  # type: ignore[arg-type]
            return None
        recv = func.value
        if isinstance(recv, ast.Attribute) and _is_self(recv.value):
            if func.attr == "forward":
                return recv.attr, "", ""
            ctors = attrs.get(recv.attr, [])
            if func.attr not in _MODULE_API and ctors and None not in ctors:
                return recv.attr, "|".join(sorted(set(ctors))), func.attr  # type: ignore[arg-type]
        return None


# What a ``forward`` reads as a run of a part the class owns, where the
# attribute's constructor cannot be typed (``self.convnet = get_convnet(args)``):
# marks typed_objects reads as a layer run (FORWARD_PART, CONTAINER_ITEM).
FORWARD_PART = "~forward"
CONTAINER_ITEM = "~items"
# torch containers whose items are layers: iterating one, or indexing it, and
# calling the item runs a layer (``for block in self.blocks: x = block(x)``).
_LAYER_CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential"})


@dataclass
class _Parts:
    """A class's parts: the attributes its ``forward`` runs itself, and its
    attributes every assignment of which builds a torch layer container."""

    runs: frozenset[str] = frozenset()
    containers: frozenset[str] = frozenset()


def _forward_parts(slots: list, model_attrs: dict[str, list[str | None]]) -> _Parts:
    runs: set[str] = set()
    for fn, _init, _forwards, _own, probe in slots:
        if fn.name == "forward" and not any(_is_off_context(d) for d in fn.decorator_list):
            runs |= probe.direct - _MODULE_API  # ``self.train()`` in a forward is no part
    containers = {a for a, ctors in model_attrs.items() if ctors and all(c in _LAYER_CONTAINERS for c in ctors)}
    return _Parts(frozenset(runs), frozenset(containers))


def _self_attr(node: ast.AST) -> str | None:
    """``X`` for ``self.X``."""
    if isinstance(node, ast.Attribute) and _is_self(node.value):
        return node.attr
    return None


# _forwards_of: the nodes whose code it does not read, and those it has nothing to read in.
_NOT_ENTERED = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda})
_LEAVES = frozenset({ast.Name, ast.Constant})


def _bind_items(node: ast.AST, containers: frozenset[str], items: dict[str, str]) -> None:
    """``for block in self.blocks`` (a statement or a comprehension's
    ``for``): ``block`` is an item of that container from here on."""
    if isinstance(node, ast.For):
        loops = [(node.target, node.iter)]
    elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        loops = [(g.target, g.iter) for g in node.generators]
    else:
        return
    for target, iterable in loops:
        attr = _self_attr(iterable)
        if isinstance(target, ast.Name) and attr in containers:
            items[target.id] = attr  # type: ignore[assignment]


def _part_call(
    call: ast.Call, attrs: dict[str, list[str | None]], parts: _Parts, items: dict[str, str]
) -> tuple[str, str, str] | None:
    """(attribute, its mark, "") for a call that runs one of the class's
    parts whose constructor is not typed: ``self.X(...)`` where ``forward``
    runs ``self.X`` too, an item of a layer container (``block(x)`` in a loop
    over ``self.blocks``, ``self.blocks[i](x)``); None otherwise."""
    func = call.func
    if isinstance(func, ast.Name) and func.id in items:
        return items[func.id], CONTAINER_ITEM, ""
    if isinstance(func, ast.Subscript):
        attr = _self_attr(func.value)
        if attr is not None and attr in parts.containers:
            return attr, CONTAINER_ITEM, ""
        return None
    attr = _self_attr(func)
    if attr is not None and attr in parts.runs and not _model_attr(attrs, attr):
        return attr, FORWARD_PART, ""
    return None


@dataclass
class _Attrs:
    """A class's ``self.<attr>`` assignments in its methods: how many per
    attribute, and the values of the plain ``=`` ones."""

    counts: dict[str, int] = field(default_factory=dict)
    values: dict[str, list[ast.AST]] = field(default_factory=dict)


@dataclass
class _Probe:
    """What a scope's walk saw: every ``return`` has a value (a factory may
    hand back a type), the ``self.<attr>`` whose forward a call may run, a
    call of the object's own forward or of ``self.<attr>.forward``."""

    returns: bool
    attrs: set[str] = field(default_factory=set)
    own: bool = False
    # ``self.X(...)``, ``self.X.forward(...)``: the attributes run directly
    # (a ``forward``'s are the class's parts, _forward_parts).
    direct: set[str] = field(default_factory=set)
    # A call of a bare name or of ``self.X[i]``: maybe an element of a
    # container of layers (``for block in self.blocks: x = block(x)``).
    items: bool = False


def _probe_forward(call: ast.Call, probe: _Probe) -> None:
    """Note what ``_Types._forward_call`` and the own-forward test could
    match in ``call``, before the class's attributes are known."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        if _is_self(func):
            probe.own = True  # ``self(x)``
        elif isinstance(func, (ast.Name, ast.Subscript)):
            probe.items = True
        return
    if _is_self(func.value):
        if func.attr == "forward":
            probe.own = True  # ``self.forward(x)``
        probe.attrs.add(func.attr)
        probe.direct.add(func.attr)
        return
    recv = func.value
    if isinstance(recv, ast.Attribute) and _is_self(recv.value):
        if func.attr == "forward":
            probe.own = True  # always a forward: walk the method
            probe.direct.add(recv.attr)
        elif func.attr not in _MODULE_API:
            probe.attrs.add(recv.attr)


def _model_attr(attrs: dict[str, list[str | None]], attr: str) -> bool:
    ctors = attrs.get(attr, [])
    return bool(ctors) and None not in ctors


_ARMS = frozenset({ast.IfExp, ast.Attribute})
# Calls handing back, in order, the very models (and optimizers) they are
# given: ``model, opt = amp.initialize(model, opt, opt_level="O2")`` casts
# and patches them in place (apex).
_SAME_MODELS = frozenset({"apex.amp.initialize"})


def _unpacks_a_call(node: ast.Assign) -> bool:
    return len(node.targets) == 1 and node.targets[0].__class__ is ast.Tuple and node.value.__class__ is ast.Call


def _same_object_of(value: ast.AST | None, name: str) -> bool:
    """``model = model.cuda()``: the name's own object again, through calls
    that hand it back (a ``.to(...)``); it holds what its other bindings
    gave it, so the fixed point reads those alone."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _SAME_OBJECT:
        value = value.func.value
    return isinstance(value, ast.Name) and value.id == name and value is not None


def _keep_models(node: ast.Assign, stores: dict[str, list[ast.AST | None]], qualified) -> bool:
    """``model, opt = amp.initialize(model, opt)``: each target named as the
    argument in its place keeps its earlier value, so the binding adds no
    unknown value to it (one unknown mark taken off; a name left with no
    binding keeps it). False for any other call."""
    call = node.value
    if qualified(call.func) not in _SAME_MODELS:  # type: ignore[attr-defined]
        return False
    for target, arg in zip(node.targets[0].elts, call.args):  # type: ignore[attr-defined]
        if not (isinstance(target, ast.Name) and isinstance(arg, ast.Name) and target.id == arg.id):
            continue
        values = stores.get(target.id, [])
        if len(values) > 1 and None in values:
            values.remove(None)
    return True


def _bound_methods(values: list[ast.AST | None]) -> list[ast.Attribute] | None:
    """A name bound only to methods of objects (``encode = trainer.gen_a.encode
    if a2b else trainer.gen_b.encode``): every arm's attribute; None otherwise."""
    arms: list[ast.Attribute] = []
    for value in values:
        todo = [value]
        while todo:
            v = todo.pop()
            if isinstance(v, ast.IfExp):
                todo += [v.body, v.orelse]
            elif isinstance(v, ast.Attribute) and isinstance(v.value, (ast.Name, ast.Attribute)):
                arms.append(v)
            else:
                return None
    return arms or None


def _flat(slotted: list) -> list:
    """The entries, in order, of a list of entries and slots (lists)."""
    out = []
    for item in slotted:
        if isinstance(item, list):
            out.extend(item)
        else:
            out.append(item)
    return out


def _rewraps(value: ast.AST, attr: str, spell) -> bool:
    """``value`` hands back ``self.<attr>`` itself, moved or wrapped in a
    parallel wrapper (``DDP(self.flownet, device_ids=[r])``,
    ``self.net.cuda()``): assigned back, the attribute holds the module it
    held, so the assignment adds no type of its own."""
    for _ in range(8):
        if isinstance(value, ast.Attribute):
            return value.attr == attr and _is_self(value.value)
        if not isinstance(value, ast.Call):
            return False
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr in _SAME_OBJECT:
            value = func.value
        elif value.args and any((n or "").rpartition(".")[2] in _WRAPPERS for n in (ast_dotted(func), spell(func))):
            value = value.args[0]
        else:
            return False
    return False


def _wrapper(func: ast.AST) -> bool:
    """``DataParallel``/``x.DistributedDataParallel`` as a callee (a chain of
    names ending in a wrapper's name), the chain spelled only when its last
    name is one."""
    if func.__class__ is ast.Name:
        return func.id in _WRAPPERS  # type: ignore[attr-defined]
    return func.__class__ is ast.Attribute and func.attr in _WRAPPERS and ast_dotted(func) is not None  # type: ignore[attr-defined]


def _named_value(value: ast.AST) -> bool:
    """``encoder``, ``encoder.cuda()``, ``DataParallel(encoder)``: a value
    whose type, if any, is that of a name (type_of's unwrapping, shallow)."""
    for _ in range(8):
        if value.__class__ is ast.Name:
            return True
        if value.__class__ is not ast.Call:
            return False
        func = value.func  # type: ignore[attr-defined]
        if func.__class__ is ast.Attribute and func.attr in _SAME_OBJECT:
            value = func.value
        elif _wrapper(func) and value.args:  # type: ignore[attr-defined]
            value = value.args[0]  # type: ignore[attr-defined]
        else:
            return False
    return False


def _is_none(value: ast.AST | None) -> bool:
    return isinstance(value, ast.Constant) and value.value is None


def _exception(value: ast.AST | None) -> bool:
    """``NotImplementedError(...)``: an exception object, returned by mistake for a raise."""
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id.endswith(("Error", "Exception"))
    )
