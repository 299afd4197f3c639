"""MEM201 inference-without-no-grad."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.autograd.caller_freezes import frozen_before
from memlint.analysis.autograd.grad_mode import GradMode
from memlint.analysis.autograd.history import MAYBE as _NONE
from memlint.analysis.autograd.history import H
from memlint.analysis.autograd.own_graph_returns import hands_back_no_own_graph
from memlint.analysis.autograd.volatile_era import volatile_era_loop
from memlint.analysis.scope.attribute_names import spells_attribute
from memlint.analysis.scope.callgraph import bound_params
from memlint.analysis.scope.names import dotted_name, flat_targets, mentions
from memlint.analysis.scope.own_returns import own_returns
from memlint.analysis.training.loops import is_eval_name
from memlint.analysis.training.loss_accumulators import accumulated_names
from memlint.analysis.training.test_code import is_unit_test
from memlint.analysis.training.training_branches import runs_only_in_training
from memlint.fix.expr_edits import add_decorator, parse_expr
from memlint.fix.statement_edits import wrap_in_with
from memlint.parse.traversal import visit_fast
from memlint.rule import Fix, Invalid, Rule, Safety, Valid
from memlint.vocabulary.frameworks import OTHER_EVAL_FRAMEWORKS

# Tracers and exporters: a forward just before one of them is its dry run.
_EXPORTERS = frozenset(
    {"torch.jit.trace", "torch.jit.trace_module", "torch.jit.script", "torch.onnx.export", "torch.export.export"}
)
_SHARED_LOOP_MESSAGE = "`{fn}` evaluates (its training flag is off) with autograd on: its forward passes build graphs nobody backpropagates"
_FORWARD_MESSAGE = "forward pass after `.eval()` runs with autograd on: it builds a graph nobody backpropagates"


def _counts(it: cst.BaseExpression) -> bool:
    """``range(n)``, ``enumerate(range(n))``: a counter, no data."""
    while isinstance(it, cst.Call) and dotted_name(it.func) == "enumerate" and it.args:
        it = it.args[0].value
    return isinstance(it, cst.Call) and dotted_name(it.func) in ("range", "itertools.count")


class _EvalSwitches(cst.CSTVisitor):
    """Any ``x.eval()`` call (no argument) in a scope."""

    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "eval" and not node.args:
            self.found = True


class InferenceWithoutNoGrad(Rule):
    """
    ## What it does
    Flags an evaluation loop — one that calls a model and never backpropagates,
    after `model.eval()`, inside a function named for validation, evaluation,
    testing or prediction, or iterating a validation/test loader — that runs
    with autograd recording: not under `torch.no_grad()` or
    `torch.inference_mode()`, not in a function decorated with them, and not in
    a function that this module only calls under such a context.

    ## Why it matters
    With grad mode on, every forward pass builds a graph and saves the
    activations its backward would need. Evaluation never runs that backward,
    so this is pure waste: the activations of each batch live as long as the
    outputs do, typically 2-3x the memory of an inference pass, and anything
    kept from the loop (outputs, losses) keeps its graph too.
    `model.eval()` does not switch this off; it only changes dropout and
    batch-norm behaviour.

    ## Example
    ```python
    def evaluate(model, loader):
        model.eval()
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    ```

    ## Use instead
    ```python
    @torch.no_grad()
    def evaluate(model, loader):
        ...
    ```
    or `with torch.no_grad():` around the loop.

    ## Fix safety
    Safe: the outputs have the same values without a graph. When the function is
    the evaluation (named for it, trains nothing) it gets `@torch.no_grad()`;
    otherwise the loop is wrapped in `with torch.no_grad():`. Each separate
    evaluation loop of such a function is reported (a `test` over one loader,
    then over another); their findings share the one decorator, applied once.

    ## When it stays silent
    Code that needs gradients while evaluating (saliency maps, Grad-CAM,
    adversarial examples, `autograd.grad`, test-time adaptation,
    `torch.enable_grad()`) is not reported, nor are Lightning's
    `validation_step`/`test_step`/`predict_step` and a transformers pipeline's
    `_forward` (the framework already disables grad), helpers called from a
    model's `forward` (`_inference_forward`: the model's caller chooses the
    mode), loops whose only model runs its `forward` under `@torch.no_grad()`,
    and frozen models (RULES.md, "Frozen means"): `model.requires_grad_(False)`,
    also chained on the name (`model.eval().requires_grad_(False).to(device)`),
    a parameter loop that turns `requires_grad` off, a copy of a frozen model
    (`copy.deepcopy`, `.eval()`, `.to()`, `.train(False)`), a part of a frozen
    parent, a model frozen at the top of the module or in the class's
    `__init__`. A model thawed again, or any part of it
    (`model.head.requires_grad_(True)`), is not frozen. Nor is a loop whose only
    module owns no parameter (an `nn.Module` that keeps buffers and runs
    functional ops, a spectrogram front end): its output has the history of its
    input, no more. Nor are step functions handed out by a factory
    (`make_val_step_fn` returning `perform_val_step_fn`: whoever receives one
    chooses the mode), nor helpers that a caller in another module runs under
    `no_grad` or backpropagates through, nor a method named for evaluation that
    no call of its module reaches and that other modules call only under
    `no_grad` (or in a mode they cannot tell), on receivers of any class
    (`decoder.generate_beam(src)` in an evaluator method entered only from under
    `torch.no_grad()`); a call with grad on whose receiver the project types
    as an instance of another module's class that defines the method itself
    (`evaluators.evaluate(...)` on a `GroupEvaluator` that runs each evaluator
    under `no_grad`) does not count, unless that method runs its calls in the
    mode it is entered in while its own module enters it only with grad off. A method of an object the loop is handed
    (`policy.select_action(state)`) is judged only when the project types the
    object (see "Facts from other modules"): not when some caller passes an
    object of unknown type, nor when one of the classes it may be runs its
    forward under `no_grad`. The same holds for an attribute of such an object
    (`trainer.gen_a.encode(x)`) and for a name bound only to such methods
    (`encode = trainer.gen_a.encode if a2b else trainer.gen_b.encode`): silent
    when one arm runs no layer. A loop over the task's classes (`for c in
    classes_to_create:`, `for c in range(self.n_classes):`, named for classes and
    for no data) is no evaluation over data, after `.eval()` too: it builds one
    result per class. Nor is a loop whose helper runs the model with grad on
    only in the arm of `if model.training:` (its `else` under `no_grad`), nor
    one over a model whose `forward` needs autograd (it runs `autograd.grad`
    itself or through an attribute's method: an implicit-surface renderer's
    normals; see "Facts from other modules").

    ## Details
    The loop may be a `while` over episodes (a policy evaluated in its
    environment), and the model may come from a class it is handed
    (`self.__call__(x)` is the model's own forward, as `self(x)` is): a name
    restored with `load_state_dict` and switched with `.eval()` is a module. A
    function named for evaluation that calls `model.eval()` and runs the model
    without a loop (a full-graph GNN test) is reported too, on its `def` line,
    when it runs its model on an input it is handed or is called in a loop (one
    forward on noise it draws itself, run once, such as a grid of samples at the
    end, only passes a peak), and so is a forward pass in the script body after
    `model.eval()` (`y_pred = model(X_test)`) when nothing later in the script
    backpropagates or reads gradients, unless nothing reads its output and the
    model is then traced or exported (a dry run before `torch.jit.trace`: one
    passing peak). So is one in an `if` block closing a training loop's body
    (`if i % 10 == 0:`, `classifier.eval()`, one test batch) that backpropagates
    nothing, when every name the block binds to a value with a graph is bound
    afresh at the top of the loop's body before its backward (no later backward
    reads that graph). A loop over data in a function that says nothing of
    evaluation is reported when every caller in the module has put its model in
    eval mode and the function hands back no graph (`extract_feature(model,
    loader)` after `model.eval()`; what its caller gave it, a name or a label
    list, may go back with the numbers). The forward may sit in a function of this
    module the loop calls per step, a sibling method
    (`self._process_one_batch(x)`) or a per-image helper (`inference(net,
    image)`): it counts when that function runs a model with grad on outside
    loops of its own, even if what it returns has lost its history (`.numpy()`).
    A helper named for evaluation that hands back no graph is reported, and
    decorated, itself; otherwise the loop is. A loop shared by training and
    evaluation (`iteration(epoch, loader, train=True)`, every backward and step
    under `if train:`, or under a negated flag, `if not cross_valid:`, also as
    one side of an `and`, an `elif` or a conditional expression:
    `opt.zero_grad() if not is_validate else None`) is reported where it is
    called with the flag off (`cross_valid=True`) and grad on, and fixed there:
    `with torch.no_grad(): self.iteration(epoch, test_loader, train=False)`
    (wrapping the loop itself would stop its training too). So is a data loop
    that trains nothing and asks a model wrapper for a forward with
    `volatile=True`, a flag PyTorch ignores since 0.4. A loop that wraps its
    data in `Variable(x, volatile=True)` is not reported where the project
    pins or caps torch below 0.4, where the flag turned grad off. A module that gets its
    model from another module need not import torch for its loop to be an
    evaluation (`model.eval()` is what lets it in); one importing another
    framework whose models have `.eval()` (paddle) and no torch is not
    reported.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.no_grad.html
    - https://pytorch.org/docs/stable/notes/autograd.html#locally-disable-grad-doc
    """

    code = "MEM201"
    name = "inference-without-no-grad"
    message = "evaluation loop runs with autograd on: every forward pass builds a graph nobody backpropagates"
    fix_safety = Safety.SAFE
    fix_turns_grad_off = True
    project_facts = (
        "The callers of a module-level function, wherever they are in the project: a helper that a caller in "
        "another module runs under `torch.no_grad()`/`inference_mode()` (a `with` around the call, or a "
        "decorator on the calling function) is not reported, nor one whose caller backpropagates where it "
        "calls it while the helper returns values that may carry a graph. When every caller elsewhere runs it "
        'with grad on, the message names them ("called with autograd on from train.py:58"). '
        "Types from call sites: a loop with evidence of evaluation that calls a method of a project object "
        "(`policy.select_action(state)`, `model.inference(x)`) is reported when the project says what the "
        "object is (a parameter every call site in the project passes an instance of one or more project "
        "classes, `self.x` set from a constructor argument typed so, the result of a project factory whose "
        "every `return` builds one of its classes) and, for every class it may be, that method runs a model's "
        "forward with grad on (a `no_grad` only on a `torch.__version__` branch does not count); the message "
        "names the callee (`TD3.select_action runs the actor with autograd on, TD3.py:101`). Any untyped call "
        "site, a class we cannot read, or a method that runs its forward under `no_grad` keeps it silent. "
        'A class picked at run time from a module named by a string (`importlib.import_module("models." + '
        'opt.model + "_model")`, then the class that subclasses `BaseModel`, or `getattr(mod, "Net")`) is one '
        "of the project's classes in the modules that pattern names, and every one must agree (a class without "
        "the method is not the object); a factory's helper that hands back the network it is given "
        "(`init_net(net)`) keeps its type. On such a plain object, a method named for evaluation that only "
        "switches the models it holds to eval (`model.setup_to_test(path)`) is a switch to eval. "
        "On a plain wrapper (no `nn.Module`, pix2pix style) a method that calls `self.forward(...)` runs the "
        "network the wrapper's own `forward` runs, when the wrapper hands that network's parameters to an "
        "optimizer (`model.validate()` per batch); a factory in a module with no training word types its "
        "result too; a loop that also calls a method of the object that backpropagates or steps "
        "(`model.optimize_parameters()`) trains, and is no evaluation. "
        "A class imported from another project module that derives from `nn.Module` builds a model "
        "(`model = Tacotron(...)` after `from synthesizer.models.tacotron import Tacotron`), as a class of the file does, "
        "unless the summary of its module proves it owns no parameter (only `nn.Module` bases, buffers, functional "
        "ops and attributes of constants: melgan's `Audio2Mel`); calling one records no graph of its own. "
        "A named method called on a model (`self.model.extract_feature(x)`, the receiver named for a model and "
        "known as one in the file, or `self.__S__` whose class assigns it only a project class, `self.__S__ = S(...)`) "
        "is a forward when every project class defining a method of that name, in "
        "any module, is an `nn.Module` whose method runs, with grad on, a layer that owns parameters (a torch "
        "layer or a project model); a definer that is no model, or a method that runs no layer, keeps it silent. "
        "Running a layer may go through a submodule's own named method (`self.encoder.forward_masks(x)`, which "
        "runs the encoder's layers: tabnet's `explain`). When no project class defines the method at all (the "
        "model's class comes from an import the project does not hold), a name marking a forward (`forward_lip`) "
        "counts, on a receiver switched with `.eval()` earlier in the same function, in a function whose entry "
        "mode can be read. A name whose every binding builds a class and moves it to a device "
        "(`self.__S__ = S(...).cuda()`) and that is switched with `.eval()` is a module whatever its class. "
        "A method also runs a layer when it runs a part its class's `forward` runs too, whatever builds it "
        "(`self.convnet = get_convnet(args)`, a factory the project cannot type), or an item of a torch layer "
        "container (`[convnet(x) for convnet in self.convnets]`, `self.blocks[i](x)`); a part typed to anything "
        "but a layer (`nn.ReLU()`) still decides. A receiver switched with `.eval()` earlier in the same function "
        "(`self._network.eval()`) is a model for such a method whatever its name (PyCIL's `extract_vector`), and a "
        "method its own module calls is judged by the mode of those calls. "
        "A method also runs a layer when it runs a part its class's `__init__` takes as an argument "
        "(`self.encoder = encoder`, run as `self.encoder.forward(x)`: protonets' `Protonet.loss`) and every "
        "construction site in the project passes a torch layer, an `nn.Sequential` or a project model for it; "
        "an untyped site, or a class handed out (a registry), keeps it silent. "
        "A model whose every project class turns grad off for some of its `forward` (a `with torch.no_grad():` "
        "block or the decorator, its own or a project base's: SPADE's `Pix2PixModel` runs `mode='inference'` "
        "so) may build no graph when called: a loop over it is not reported. "
        "A model a function of the module "
        "returns after freezing it (`self.model = self.__load_model()`) is frozen: its forwards record no graph. "
        "An attribute of a typed object is typed by the assignments of its class (`trainer.gen_a.encode(x)` "
        "where every class `trainer` may be assigns `self.gen_a = AdaINGen(...)` and nothing else), and a name "
        "bound only to such methods (`encode = trainer.gen_a.encode if a2b else trainer.gen_b.encode`) runs a "
        "forward when every arm does; `trainer.eval()` earlier in the same scope, still in effect at the call, is "
        "evidence of evaluation (an opaque call before it is then no MC dropout). "
        "`self.model.forward(x)` where every class the project gives `self.model` (from each construction "
        "site of the owner) decorates `forward` with `@torch.no_grad()`/`@torch.inference_mode()`, its own or "
        "inherited from a project base, builds no graph (LLaMA's `generate`): the loop and its callers are silent. "
        "A method called on an instance another module builds of the class (`engine = trainer(...)`, then "
        "`engine.eval(x, y)` in train.py's validation loop) is named in the message when that call runs with grad "
        "on. A plain wrapper that keeps the model it is given in eval mode itself (`self.model.eval()` in its "
        "`__init__`, its own or a project base's) and runs it in a method with grad on (pysot's "
        "`tracker.track(img)` running `self.model.track(x)`) is evidence of evaluation for a loop calling that "
        "method, when every class the object may be does so (a literal table of classes, `TRACKS[name](model)`, "
        "is one of them) and none of them trains, freezes or switches that model back to train. A function that "
        "switches its model to eval, runs it and hands back only values without history (`.data.cpu().numpy()`) "
        "is reported, whatever name stores it (`test_set.set_feat_func(ExtractFeature(model))`), when no file "
        "of the project spells a way of turning grad off. "
        "A model whose class's `forward` needs autograd (it calls `torch.autograd.grad` or `.backward()`, or a "
        "method of an attribute that does: IDR's `self.implicit_network.gradient(x)`) is run with grad on on "
        "purpose: a loop over it is not reported. That holds for a receiver the project types to such a class, "
        "and for a model built from a class looked up at run time by a name the project cannot follow "
        "(`utils.get_class(conf.get_string('train.model_class'))(conf)`) when any model class of the project, "
        "in a module that spells `autograd`, has such a `forward`."
    )

    def __init__(self, context) -> None:
        super().__init__(context)
        self._decorated: set[int] = set()
        # The decorator fix of each evaluation function a loop was reported in:
        # a second, separate evaluation loop there is reported with the same
        # fix, which the fixer applies once for both (a shared fix, as MEM501's).
        self._function_fixes: dict[int, Fix] = {}
        # Loops whose project objects (_object_forward) were each switched to eval here.
        self._eval_switched: set[int] = set()
        self._foreign: bool | None = None

    def report(self, node: cst.CSTNode, message: str | None = None, fix: Fix | None = None) -> None:
        if not self._other_framework():
            super().report(node, message=message, fix=fix)

    def _other_framework(self) -> bool:
        """The file imports paddle (or another framework whose models have
        ``.eval()``) and no torch: its loops evaluate no torch model. The
        pre-filter lets files without torch in (``model.eval()``)."""
        if self._foreign is None:
            roots = {q.partition(".")[0] for q in self.facts.names.bindings.values()}
            self._foreign = "torch" not in roots and bool(roots & OTHER_EVAL_FRAMEWORKS)
        return self._foreign

    def visit_For(self, node: cst.For) -> None:
        self._check(node)

    def visit_While(self, node: cst.While) -> None:
        self._check(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        """An evaluation function with no loop over batches: named for
        evaluation, switches the model to ``.eval()``, runs it with grad on."""
        facts = self.facts
        loops = facts.loops
        if not loops.eval_named(node) or is_unit_test(node, self.context.path, self.facts.calls, self.facts.project):
            return
        scope_facts = loops.scope_facts(node)
        if scope_facts is None or not any(mode == "eval" for _, _, mode in scope_facts.mode_calls):
            return
        if any(info.role == "eval" for info in scope_facts.loops):
            return  # the loop is reported
        if loops.trains(node) or loops.needs_grad(node) or facts.grad_mode.entry_mode(node) is not GradMode.ENABLED:
            return
        forwards = [
            c for c in scope_facts.model_calls if facts.calls.resolve(c) is None
        ]  # not ``self.load_model(path)``
        if not loops.runs_repeatedly(node) and not _forwards_its_input(node, forwards):
            return  # one forward on noise it draws itself (a sample grid), run once: a passing peak
        events = loops.mode_events(node)
        if any(e.kind in ("unknown", "train") for e in events):
            return  # MC dropout and friends
        history = facts.history
        if not any((history.value(c) or _NONE).h is H.YES for c in scope_facts.model_calls):
            return
        if self._backpropagated_elsewhere(node):
            return
        self._decorated.add(id(node))
        self.report(node, message=self._with_callers(self.message, node), fix=self._decorator_fix(node))

    def visit_Module(self, node: cst.Module) -> None:
        """A forward pass after ``model.eval()`` with no loop, in the script
        body or a function not named for evaluation (``visit_FunctionDef``
        reports those): ``preds = model(X_test)``, nothing after it in that
        scope needs grad, and a function does not return the result."""
        facts = self.facts
        loops = facts.loops
        for scope in (node, *facts.calls.functions):
            body_facts = loops.scope_facts(scope)
            if body_facts is None or not any(mode == "eval" for _, _, mode in body_facts.mode_calls):
                continue
            if isinstance(scope, cst.FunctionDef) and (
                loops.eval_named(scope)
                or loops.serves_forward(scope)
                or is_unit_test(scope, self.context.path, self.facts.calls, self.facts.project)
                or not isinstance(scope.body, cst.IndentedBlock)
            ):
                continue
            for stmt in scope.body.body if isinstance(scope, cst.FunctionDef) else scope.body:
                if not isinstance(stmt, cst.SimpleStatementLine):
                    continue
                start, end = loops.pos(stmt), loops.end(stmt)
                model_calls = [c for c in body_facts.model_calls if start <= loops.pos(c) < end]
                if model_calls and self._forward_after_eval(scope, stmt, model_calls):
                    torch_no_grad, imports = self._no_grad_spelling()
                    new_stmt = wrap_in_with(stmt, parse_expr(f"{torch_no_grad}()", self.context.module))
                    fix = Fix(f"Run it under `with {torch_no_grad}():`", ((stmt, new_stmt),), Safety.SAFE, imports)
                    self.report(stmt, message=_FORWARD_MESSAGE, fix=fix)
            self._check_periodic_eval(scope)
        for fn in facts.calls.functions:
            self._check_shared_loop(fn)

    def _check_periodic_eval(self, scope) -> None:
        """pointnet's ``if i % 10 == 0:`` closing the training loop's body:
        ``classifier.eval()`` and one test batch through it with grad on.
        The block is judged on its own: it backpropagates nothing, and every
        name it binds from the forward's graph is bound afresh at the top of
        the loop's body before the next backward, so no later backward reads
        that graph."""
        loops = self.facts.loops
        for info in loops.scope_loops(scope):
            body = info.node.body
            if not (info.is_batch_loop and info.backward_calls and isinstance(body, cst.IndentedBlock)):
                continue
            block = body.body[-1] if body.body else None
            if not (isinstance(block, cst.If) and block.orelse is None and isinstance(block.body, cst.IndentedBlock)):
                continue
            start, end = loops.pos(block), loops.end(block)
            if any(start <= loops.pos(m) < end for m in info.grad_markers):
                continue
            first = min(loops.pos(b) for b in info.backward_calls)  # the first graph read in an iteration
            for stmt in block.body.body:
                if not isinstance(stmt, cst.SimpleStatementLine):
                    continue
                s_start, s_end = loops.pos(stmt), loops.end(stmt)
                calls = [c for c in info.model_calls if s_start <= loops.pos(c) < s_end]
                if calls and self._block_forward(scope, info, block, stmt, calls, first):
                    torch_no_grad, imports = self._no_grad_spelling()
                    new_stmt = wrap_in_with(stmt, parse_expr(f"{torch_no_grad}()", self.context.module))
                    fix = Fix(f"Run it under `with {torch_no_grad}():`", ((stmt, new_stmt),), Safety.SAFE, imports)
                    self.report(stmt, message=_FORWARD_MESSAGE, fix=fix)

    def _block_forward(self, scope, info, block: cst.If, stmt: cst.SimpleStatementLine, calls, first) -> bool:
        facts = self.facts
        loops = facts.loops
        grad = facts.grad_mode
        if grad.mode_at(stmt) is not GradMode.ENABLED or grad.local_mode(stmt) is GradMode.ENABLED:
            return False
        if not all(isinstance(s, (cst.Assign, cst.Expr)) for s in stmt.body) or loops.holds_comprehension(stmt):
            return False
        if not any((facts.history.value(c) or _NONE).h is H.YES for c in calls):
            return False
        receivers = frozenset(dotted_name(_module_of(c.func)) for c in calls)
        if None in receivers or loops.mode_before(stmt, receivers) != "eval":  # type: ignore[arg-type]
            return False
        start, end = loops.pos(block), loops.end(block)
        for call in facts.calls.calls_in.get(scope, ()):
            fn = facts.calls.resolve(call)
            if fn is not None and start <= loops.pos(call) < end and (loops.trains(fn) or loops.needs_grad(fn)):
                return False
        # Every name the block binds to a value that may carry a graph (the
        # forward's outputs, a loss computed from them) is bound afresh at the
        # top of the loop's body before its next backward.
        carried: set[str] = set()
        for line in block.body.body:
            if not isinstance(line, cst.SimpleStatementLine):
                return False  # a nested block: what it binds is not followed
            for small in line.body:
                if isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                    return False
                if not isinstance(small, cst.Assign):
                    continue
                history = (facts.history.value(small.value) or _NONE).h
                for target in small.targets:
                    for name in flat_targets(target.target):
                        if not isinstance(name, cst.Name):
                            if history is not H.NO:
                                return False  # ``self.out = ...`` outlives the iteration
                        elif history is not H.NO or line is stmt:
                            carried.add(name.value)
        if isinstance(scope, cst.FunctionDef) and any(facts.usage.reaches_return(n, scope) for n in carried):
            return False
        return all(self._only_stored(n, scope) or self._bound_afresh(n, info, first, scope) for n in carried)

    def _only_stored(self, name: str, scope) -> bool:
        """``name`` is never read in ``scope``, only assigned (``pred, _, _ = ...``)."""
        for node in self.facts.usage.reads(name, scope):
            cur = self.parent(node)
            while isinstance(cur, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
                cur = self.parent(cur)
            if not isinstance(cur, cst.AssignTarget):
                return False
        return True

    def _bound_afresh(self, name: str, info, first, scope) -> bool:
        """``name``'s first mention in ``info``'s loop is a plain assignment
        at the top of its body, before the loop's first backward or step."""
        loops = self.facts.loops
        mentions_in = [n for n in self.facts.usage.reads(name, scope) if info.contains(loops.pos(n))]
        if not mentions_in:
            return False
        earliest = min(mentions_in, key=loops.pos)
        if loops.pos(earliest) >= first:
            return False
        target = getattr(info.node, "target", None)
        if target is not None and any(n is earliest for n in flat_targets(target)):
            return True  # ``for i, (points, target) in ...``: bound by each iteration
        small = self.parent(earliest)
        while isinstance(small, (cst.Tuple, cst.List, cst.Element, cst.StarredElement, cst.AssignTarget)):
            small = self.parent(small)
        line = self.parent(small) if isinstance(small, cst.Assign) else None
        if line is None or self.parent(line) is not info.node.body:
            return False
        return any(earliest in flat_targets(t.target) for t in small.targets)  # type: ignore[union-attr]

    def _check_shared_loop(self, fn: cst.FunctionDef) -> None:
        """``self.iteration(epoch, test_loader, train=False)``: a loop shared
        by training and evaluation, whose training all sits under ``if
        train:``, called with the flag off and grad on. Wrapping the shared
        loop would stop its training too, so the call is what gets fixed."""
        facts = self.facts
        loops = facts.loops
        guards = loops.training_guards(fn)
        if not guards or not self._shared_loop_forwards(fn, guards):
            return
        grad = facts.grad_mode
        for call in facts.calls.call_sites.get(fn, ()):
            if not any(_turns_training_off(arg.value, param, guards) for arg, param in bound_params(call, fn)):
                continue
            if grad.mode_at(call) is not GradMode.ENABLED or grad.local_mode(call) is GradMode.ENABLED:
                continue
            if (facts.history.value(call) or _NONE).h is H.YES:
                continue  # the result keeps a graph a caller may backpropagate
            scope = loops.scope_of(call)
            if isinstance(scope, cst.FunctionDef) and is_unit_test(
                scope, self.context.path, self.facts.calls, self.facts.project
            ):
                continue
            stmt = self._statement(call)
            fix = None
            if stmt is not None and len(stmt.body) == 1 and getattr(stmt.body[0], "value", None) is call:
                torch_no_grad, imports = self._no_grad_spelling()
                new_stmt = wrap_in_with(stmt, parse_expr(f"{torch_no_grad}()", self.context.module))
                fix = Fix(
                    f"Call `{fn.name.value}` under `with {torch_no_grad}():`", ((stmt, new_stmt),), Safety.SAFE, imports
                )
            message = _SHARED_LOOP_MESSAGE.format(fn=fn.name.value)
            self.report(stmt if stmt is not None else call, message=message, fix=fix)

    def _shared_loop_forwards(self, fn: cst.FunctionDef, guards: frozenset[str]) -> bool:
        """A batch loop of ``fn`` calls a model whose output carries history
        outside the training guard: the evaluation path runs forward passes."""
        loops = self.facts.loops
        history = self.facts.history
        for info in loops.scope_loops(fn):
            if not info.is_batch_loop:
                continue
            for call in info.model_calls:
                if (history.value(call) or _NONE).h is H.YES and not loops.guarding_params(call, fn) & guards:
                    return True
        return False

    def _forward_after_eval(self, scope, stmt: cst.SimpleStatementLine, model_calls) -> bool:
        facts = self.facts
        loops = facts.loops
        grad = facts.grad_mode
        if grad.mode_at(stmt) is not GradMode.ENABLED or grad.local_mode(stmt) is GradMode.ENABLED:
            return False
        if not all(isinstance(s, (cst.Assign, cst.AnnAssign, cst.Expr)) for s in stmt.body):
            return False
        if loops.holds_comprehension(stmt):
            return False  # a comprehension or lambda: reported (or not) on its own
        if not any((facts.history.value(c) or _NONE).h is H.YES for c in model_calls):
            return False
        receivers = frozenset(dotted_name(_module_of(c.func)) for c in model_calls)
        if None in receivers or loops.mode_before(stmt, receivers) != "eval":  # type: ignore[arg-type]
            return False
        if self._result_dropped(stmt, scope) and (
            self._traced_after(stmt, scope, receivers) or (_registers_forward_hooks(scope) and self._called_once(scope))
        ):
            # a dry run before ``torch.jit.trace``, or one for the forward hooks
            # it registered in a function run once per caller, outside any
            # loop (a model summary counting flops): one passing peak
            return False
        if isinstance(scope, cst.FunctionDef):
            for small in stmt.body:
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else []
                if isinstance(small, cst.AnnAssign):
                    targets = [small.target]
                names = [n for t in targets for n in flat_targets(t)]
                if not all(isinstance(n, cst.Name) for n in names):
                    return False  # ``self.out = ...`` outlives the call
                if any(facts.usage.reaches_return(n.value, scope) for n in names) and not self._hands_back_numbers(
                    scope
                ):
                    return False  # handed back to a caller that may backpropagate
        start = loops.pos(stmt)
        body_facts = loops.scope_facts(scope)
        if any(loops.pos(m) >= start for m in body_facts.grad_markers):
            return False  # a backward, a step, ``x.grad`` later on: it may need this graph
        for call in facts.calls.calls_in.get(scope, ()):
            fn = facts.calls.resolve(call)
            if fn is not None and loops.pos(call) >= start and (loops.trains(fn) or loops.needs_grad(fn)):
                return False
        return True

    def _hands_back_numbers(self, scope: cst.FunctionDef) -> bool:
        """``feat = self.model(ims)`` ... ``return feat.data.cpu().numpy()``:
        what the function returns carries no history, so no caller can
        backpropagate through the forward, in a project where no file turns
        grad off (grad_off_anywhere.py): whoever calls it, through whatever
        name it was stored under (``test_set.set_feat_func(ExtractFeature(...))``),
        runs it with grad on."""
        project = self.facts.project
        if project is None or not project.grad_never_off:
            return False
        return self.facts.history.returns(scope).h is H.NO

    def _called_once(self, scope) -> bool:
        """``scope`` is a function with callers, here or in other modules,
        none of them in a loop (a feature extractor called per batch is not)."""
        if not isinstance(scope, cst.FunctionDef):
            return False
        facts = self.facts
        if scope in facts.calls.escapes:
            return False
        local = facts.calls.call_sites.get(scope, ())
        external = facts.grad_mode.external_callers(scope)
        if not local and not external:
            return False
        return all(facts.loops.loop_of(c) is None for c in local) and not any(c.in_loop for c in external)

    def _result_dropped(self, stmt: cst.SimpleStatementLine, scope) -> bool:
        """Nothing of ``stmt`` is read again: ``y = net(img)  # dry run``
        with ``y`` never read in ``scope`` (or ``_ = net(img)``). A lone
        forward whose output nobody reads keeps no graph that grows; a
        notebook's bare expression at a cell's top level is not dropped (its
        cell shows it), one inside a function is."""
        for small in stmt.body:
            if isinstance(small, cst.Expr):
                if self.context.path.endswith(".ipynb") and not isinstance(scope, cst.FunctionDef):
                    return False
                continue
            if not isinstance(small, cst.Assign):
                return False
            for target in small.targets:
                names = list(flat_targets(target.target))
                if not names or not all(isinstance(n, cst.Name) for n in names):
                    return False
                if not all(self._only_stored(n.value, scope) for n in names):  # type: ignore[union-attr]
                    return False
        return True

    def _traced_after(self, stmt: cst.SimpleStatementLine, scope, receivers: frozenset) -> bool:
        """A later call of ``scope`` hands one of ``receivers`` to a tracer
        or exporter (``torch.jit.trace(net, img)``): the forward before it
        is the export script's dry run."""
        facts = self.facts
        loops = facts.loops
        start = loops.end(stmt)
        for call in facts.calls.calls_in.get(scope, ()):
            if loops.pos(call) < start or facts.names.call_name(call) not in _EXPORTERS or not call.args:
                continue
            if dotted_name(call.args[0].value) in receivers:
                return True
        return False

    def _check_comprehension(self, node: cst.BaseExpression) -> None:
        """``sum(criterion(model(x), y) for x, y in valid_dl)`` after ``.eval()``."""
        facts = self.facts
        loops = facts.loops
        if any(info.role == "eval" for info in loops.enclosing_loops(node)):
            return  # inside an evaluation loop: the loop is reported
        grad = facts.grad_mode
        if grad.mode_at(node) is not GradMode.ENABLED or grad.local_mode(node) is GradMode.ENABLED:
            return
        model_calls = loops.comprehension_is_eval(node)
        if not any((facts.history.value(c) or _NONE).h is H.YES for c in model_calls):
            return
        scope = loops.scope_of(node)
        if isinstance(scope, cst.FunctionDef) and is_unit_test(
            scope, self.context.path, self.facts.calls, self.facts.project
        ):
            return
        if any(e.kind == "unknown" and e.pos < loops.pos(node) for e in loops.mode_events(scope)):
            return
        stmt = self._statement(node)
        if stmt is None:
            return
        torch_no_grad, imports = self._no_grad_spelling()
        new_stmt = wrap_in_with(stmt, parse_expr(f"{torch_no_grad}()", self.context.module))
        fix = Fix(f"Evaluate under `with {torch_no_grad}():`", ((stmt, new_stmt),), Safety.SAFE, imports)
        self.report(node, fix=fix)

    def _statement(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        cur = self.parent(node)
        while cur is not None and not isinstance(cur, cst.SimpleStatementLine):
            if isinstance(cur, (cst.BaseCompoundStatement, cst.Lambda)):
                return None
            cur = self.parent(cur)
        return cur

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._check_comprehension(node)

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._check_comprehension(node)

    def _no_grad_spelling(self) -> tuple[str, tuple[str, ...]]:
        torch_no_grad = self.facts.names.local_name_for("torch.no_grad")
        if torch_no_grad is None:
            return "torch.no_grad", ("torch",)
        return torch_no_grad, ()

    def _decorator_fix(self, fn: cst.FunctionDef) -> Fix:
        torch_no_grad, imports = self._no_grad_spelling()
        new = add_decorator(fn, parse_expr(f"{torch_no_grad}()", self.context.module))
        return Fix(f"Decorate `{fn.name.value}` with `@{torch_no_grad}()`", ((fn, new),), Safety.SAFE, imports)

    def _check(self, node: cst.For | cst.While) -> None:
        facts = self.facts
        loops = facts.loops
        info = loops.info(node)
        if info is None:
            return
        through = None
        if (
            info.role != "eval"
            and not self._callers_evaluate(info)
            and not self._volatile_forwards(info)
            and not self._helper_switched_to_eval(info)
        ):
            through = self._object_forward(info)
            if through is None:
                return
        grad = facts.grad_mode
        if grad.local_mode(node) is GradMode.ENABLED:
            return  # switched on explicitly with enable_grad()
        if grad.mode_at(node) is not GradMode.ENABLED and not grad.entered_with_grad_here(node):
            return  # off, or unknown (no call of this module runs it with grad on)
        if volatile_era_loop(info, facts, self.context.torch):
            return  # ``Variable(x, volatile=True)`` in code that runs only on a torch before 0.4: grad was off
        parent = info.parent
        while parent is not None:
            if (
                parent.role == "eval"
                or self._callers_evaluate(parent)
                or self._volatile_forwards(parent)
                or self._helper_switched_to_eval(parent)
                or self._object_forward(parent) is not None
            ):
                return  # the outer evaluation loop is reported
            parent = parent.parent
        if through is None and not self._builds_graph(info) and not self._volatile_forwards(info):
            # Its own model calls build no graph (a frozen scorer, a padding
            # layer), but a project object's method it runs may (MUNIT's
            # ``encode(images)`` beside ``inception(inception_up(out))``).
            through = self._object_forward(info)
            if through is None:
                return  # frozen models (an EMA copy), or outputs we cannot see
        scope = info.scope
        if self._backpropagated_elsewhere(scope) or self._sums_a_backpropagated_loss(node, scope):
            return
        if through is None and self._frozen_by_every_caller(info):
            return
        if self._uncalled_helper(node, scope):
            return
        if self._mc_dropout(info) and not self._objects_in_eval(info, through):
            return
        if isinstance(scope, cst.FunctionDef) and is_unit_test(
            scope, self.context.path, self.facts.calls, self.facts.project
        ):
            return  # a unit test of the model, not an evaluation
        helper = self._evaluating_helper(info) if through is None else None
        if helper is not None:
            # ``inference(net, image)`` per image: the helper is the
            # evaluation, so it is what gets ``@torch.no_grad()``.
            if id(helper) not in self._decorated:
                self._decorated.add(id(helper))
                self.report(helper, message=self._with_callers(self.message, helper), fix=self._decorator_fix(helper))
            return
        if (
            isinstance(scope, cst.FunctionDef)
            and loops.eval_named(scope)
            and not loops.trains(scope)
            and not loops.needs_grad(scope)
        ):
            shared = self._function_fixes.get(id(scope))
            if shared is None and id(scope) in self._decorated:
                return  # decorated for another finding (a helper, the function itself)
            self._decorated.add(id(scope))
            fix = shared or self._function_fixes.setdefault(id(scope), self._decorator_fix(scope))
        else:
            torch_no_grad, imports = self._no_grad_spelling()
            new_stmt = wrap_in_with(node, parse_expr(f"{torch_no_grad}()", self.context.module))
            fix = Fix(f"Run the loop under `with {torch_no_grad}():`", ((node, new_stmt),), Safety.SAFE, imports)
        message = self.message if through is None else f"{self.message} ({through})"
        self.report(node, message=self._with_callers(message, scope), fix=fix)

    def _uncalled_helper(self, node: cst.For | cst.While, scope) -> bool:
        """A method named for evaluation that nothing in the project calls
        (grad_mode.uncalled_method), that hands a value back (a caller may even
        backpropagate through a sampled sequence), whose own body proves no evaluation: no
        ``.eval()`` switch, and the loop iterates no data (a ``while`` or a
        ``for`` over ``range``: a decoding loop). RULES.md judges a helper by
        its callers; with none, the mode it runs in is not known
        (SymbolicMathematics' ``TransformerModel.generate``)."""
        if not isinstance(scope, cst.FunctionDef) or not self.facts.loops.eval_named(scope):
            return False
        if not self.facts.grad_mode.uncalled_method(scope):
            return False
        if not any(
            v is not None and not (isinstance(v, cst.Name) and v.value == "None") for v in own_returns(scope)[0]
        ):
            return False  # ``generate_latent_walk`` saves its images: an end, no helper handing them back
        if isinstance(node, cst.For) and not _counts(node.iter):
            return False  # ``for batch in self.val_loader``: an evaluation by itself
        switches = _EvalSwitches()
        visit_fast(scope, switches)
        return not switches.found

    def _object_forward(self, info) -> str | None:
        """``policy.select_action(state)`` in a loop that trains nothing,
        where the project types ``policy`` (from every call site, a factory's
        return, a constructor argument: project/typed_objects.py) and every
        class it may be runs a model forward with grad on in that method.
        Each such call needs evidence of evaluation: the function is named
        for it or switched the object to eval before (``trainer.eval()``,
        for ``trainer.gen_a.encode(x)`` too), the method is named for it
        (``model.inference(x)``), or the call asks for it (``evaluate=True``).
        A call of a bound-method alias (``encode = trainer.gen_a.encode if
        a2b else trainer.gen_b.encode``; ``encode(x)``) counts when every
        arm does. The description of the callee, or None."""
        project = self.facts.project
        if project is None or not project.object_forwards or info.role == "train" or info.trains or info.needs_grad:
            return None
        loops = self.facts.loops
        calls = self.facts.calls
        scope = info.scope
        if isinstance(scope, cst.FunctionDef):
            cls = calls.class_of.get(scope)
            scope_name = f"{cls.name.value}.{scope.name.value}" if cls is not None else scope.name.value
            evaluating = loops.eval_named(scope)
        else:
            scope_name, evaluating = "", False
        found = None
        eval_switched = True  # every object found was switched to eval in this scope
        grad = self.facts.grad_mode
        for call in calls.between(calls.calls_in.get(scope, []), info.start, info.end):
            if not isinstance(call, cst.Call):
                continue
            if grad.mode_at(call) is not GradMode.ENABLED:
                continue  # ``with torch.no_grad(): model.inference(x)`` inside the loop
            if isinstance(call.func, cst.Attribute):
                methods: list[cst.Attribute] | None = [call.func]
            elif isinstance(call.func, cst.Name):
                # ``encode(x)`` after ``encode = trainer.gen_a.encode if a2b else ...``:
                # a forward only if every arm is one.
                methods = self.facts.objects.bound_methods(call.func)
            else:
                methods = None
            arms: list[tuple[str, str, str]] = []
            for func in methods or ():
                receiver = dotted_name(func.value)
                method = func.attr.value
                if (
                    receiver
                    and (scope_name, receiver, method) in project.object_trains
                    and not project.runs_pass(scope_name, receiver, method)
                ):
                    # ``model.optimize_parameters()``: a training step of the object, so the
                    # loop trains (a whole training pass, ``model.train(loader)``, is no step).
                    return None
                message = project.forward_through(scope_name, receiver, method) if receiver else None
                if receiver is None or message is None:
                    break
                arms.append((receiver, method, message))
            if not arms or len(arms) != len(methods or ()):
                continue
            for receiver, method, _ in arms:
                if self._switched_to_eval_here(scope, receiver, call):
                    continue
                if project.runs_held_model(scope_name, receiver, method):
                    continue  # ``tracker.track(img)``: the object keeps its model in eval mode itself
                eval_switched = False
                if not (evaluating or is_eval_name(method) or _asks_for_eval(call)):
                    return None  # the same object also acts in training here
            receiver, method, message = arms[0]
            found = found or f"`{receiver}.{method}`: {message}"
        if found is not None and eval_switched:
            self._eval_switched.add(id(info.node))
        return found

    def _objects_in_eval(self, info, through: str | None) -> bool:
        """The loop runs project objects' forwards (``_object_forward``)
        each switched to eval in this scope and still in eval at the call
        (``trainer.eval()`` before ``trainer.gen_a.encode(x)``): an opaque
        call before that switch (``get_loader(...)``) is no MC dropout."""
        if through is None and self._object_forward(info) is None:
            return False
        return id(info.node) in self._eval_switched

    def _switched_to_eval_here(self, scope, receiver: str, call: cst.Call) -> bool:
        """``trainer.eval()`` (or ``.train(False)``) in the same scope before
        ``call``, on ``receiver`` or an object holding it (``trainer`` for
        ``trainer.gen_a``), and still its mode at the call."""
        for c in self.facts.calls.calls_in.get(scope, []):
            if not isinstance(c, cst.Call) or c is call or not isinstance(c.func, cst.Attribute):
                continue
            attr = c.func.attr.value
            args = c.args
            if not (
                (attr == "eval" and not args)
                # ``model.setup_to_test(path)``: a method named for evaluation that only
                # switches the models the object holds to eval (project/method_evals.py)
                or (attr != "train" and self.facts.objects.mode_call(c) == "eval")
                or (
                    attr == "train"
                    and len(args) == 1
                    and isinstance(args[0].value, cst.Name)
                    and args[0].value.value == "False"
                )
            ):
                continue
            switched = dotted_name(c.func.value)
            if switched and (receiver == switched or receiver.startswith(switched + ".")):
                return self.facts.loops.mode_before(call, frozenset({receiver})) == "eval"
        return False

    def _backpropagated_elsewhere(self, scope) -> bool:
        """A caller in another module backpropagates in the scope that calls
        ``scope``, and what ``scope`` returns may carry a graph: the forward
        passes may be part of that backward (distillation targets)."""
        if not isinstance(scope, cst.FunctionDef):
            return False
        sites = self.facts.grad_mode.external_callers(scope)
        return any(site.backward for site in sites) and self.facts.history.returns(scope).h is not H.NO

    def _sums_a_backpropagated_loss(self, node: cst.For | cst.While, scope) -> bool:
        """The loop adds into a name that a backward of its function reads
        (``loss_cons += self.epe(...)`` ... ``(loss_l1 + loss_cons).backward()``):
        its forwards build the graph of a training step (loss_accumulators.py)."""
        loops = self.facts.loops
        start = loops.pos(node)
        if not any(loops.pos(call) > start for call in loops.scope_facts(scope).backward_calls):
            return False  # no backward after it: a sum of its own (the name may be reused)
        return any(self.facts.usage.reaches_backward(name, scope) for name in accumulated_names(node))

    def _frozen_by_every_caller(self, info) -> bool:
        """``scope`` is a function of this module that every call (all seen
        here) makes right after freezing each model the loop runs
        (caller_freezes.py: MORAN's ``val()``)."""
        scope = info.scope
        calls = self.facts.calls
        if not isinstance(scope, cst.FunctionDef) or scope in calls.class_of or scope in calls.escapes:
            return False
        sites = calls.call_sites.get(scope, ())
        if not sites or self.facts.grad_mode.external_callers(scope) or not info.model_calls:
            return False
        for call in calls.calls_in.get(scope, ()):
            callee = calls.resolve(call)
            if callee is not None and info.contains(self.facts.loops.pos(call)) and self._helper_forwards(call, callee):
                return False  # forwards of a helper: its models are not read here
        params = {
            p.name.value for p in (*scope.params.posonly_params, *scope.params.params, *scope.params.kwonly_params)
        }
        models = {dotted_name(_module_of(c.func)) for c in info.model_calls}
        if None in models or any(m.split(".", 1)[0] in params for m in models):  # type: ignore[union-attr]
            return False  # a model handed in: the caller's freeze is of another name
        return all(frozen_before(site, m, calls.parents) for site in sites for m in models)  # type: ignore[arg-type]

    def _with_callers(self, message: str, scope) -> str:
        """The message, saying where the project calls the function from when
        the callers that decide its grad mode live in other modules."""
        if not isinstance(scope, cst.FunctionDef):
            return message
        places = [site.where() for site in self.facts.grad_mode.external_callers(scope)] or self._method_callers_on(
            scope
        )
        if not places:
            return message
        where = ", ".join(places[:3]) + (", ..." if len(places) > 3 else "")
        return f"{message} (called with autograd on from {where})"

    def _method_callers_on(self, method: cst.FunctionDef) -> list[str]:
        """Where other modules call the method with grad on, on an instance
        of its class they built (``engine = trainer(...)`` then
        ``engine.eval(x, y)`` in train.py's validation loop)."""
        project = self.facts.project
        cls = self.facts.calls.class_of.get(method)
        if project is None or cls is None:
            return []
        return list(project.method_callers_on_of(f"{cls.name.value}.{method.name.value}"))

    def _callers_evaluate(self, info) -> bool:
        """``extract_feature(model, loader)``: a batch loop with no name or
        ``.eval()`` of its own to say it evaluates, whose models every caller
        in this module has put in eval mode, and whose function hands back
        nothing with a graph (a caller cannot backpropagate through it)."""
        if info.role is not None or not info.is_batch_loop or not info.model_calls or info.needs_grad:
            return False
        scope = info.scope
        if not isinstance(scope, cst.FunctionDef):
            return False
        if not self.facts.calls.call_sites.get(scope) and not self.facts.grad_mode.external_callers(scope):
            return False
        receivers = frozenset(dotted_name(_module_of(c.func)) for c in info.model_calls)
        loops = self.facts.loops
        if None in receivers or loops.mode_before(info.node, receivers, scope_evals=True) != "eval":  # type: ignore[arg-type]
            return False
        # What it returns may carry history only through what its caller gave it (a name, a label list).
        return self.facts.history.returns(scope).h is H.NO or hands_back_no_own_graph(self.facts.history, scope)

    def _helper_switched_to_eval(self, info) -> bool:
        """A loop that runs a model, trains nothing and needs no gradient,
        after a function of this module switched to eval
        (``self.net_mode(train=False)``, whose ``if train:`` branch it does
        not take): the same evidence as a ``.eval()`` written in the scope.
        The last call that switches before the loop decides, when each switch
        it may make is to eval; an opaque call is no evidence."""
        if info.role is not None or info.trains or info.needs_grad or not info.model_calls:
            return False
        events = [
            e for e in self.facts.loops.mode_events(info.scope) if e.pos < info.start and e.kind != "training-phase"
        ]
        if not events or not isinstance(events[-1].node, cst.Call) or self.facts.calls.resolve(events[-1].node) is None:
            return False
        # Every switch that call may make is to eval (both arms of an ``if``
        # it cannot choose would list a ``train`` too).
        return all(e.kind == "eval" for e in events if e.node is events[-1].node)

    def _volatile_forwards(self, info) -> bool:
        """``model.forward_emb(images, captions, volatile=True)`` in a data
        loop that trains nothing: code written for PyTorch < 0.4, where
        ``volatile=True`` meant inference without a graph. The flag has been
        ignored since 0.4, so the forward it asks for now records one."""
        if info.role is not None or info.trains or info.needs_grad or not info.is_batch_loop:
            return False
        calls = self.facts.calls
        names = self.facts.names
        defined = {fn.name.value for fn in calls.functions}
        for call in calls.between(calls.calls_in.get(info.scope, []), info.start, info.end):
            if not isinstance(call, cst.Call):
                continue
            if not any(
                a.keyword is not None and a.keyword.value == "volatile" and _is_true(a.value) for a in call.args
            ):
                continue
            qn = names.call_name(call) or ""
            if qn.startswith("torch") or calls.resolve(call) is not None:
                continue  # ``Variable(x, volatile=True)`` itself makes a leaf; a function we can read speaks for itself
            if isinstance(call.func, cst.Attribute) and call.func.attr.value not in defined:
                return True  # a method of a model wrapper defined elsewhere runs the forward
        return False

    def _builds_graph(self, info) -> bool:
        history = self.facts.history
        grad = self.facts.grad_mode
        for call in info.model_calls:
            if self._partly_off(call) or runs_only_in_training(call, self.parent):
                continue  # ``if model.training: model(x)`` never runs after ``.eval()``
            v = history.value(call)
            if v is not None and v.h is H.YES:
                return True
            if v is not None and v.h is H.MAYBE and grad.entered_with_grad_here(call):
                return True  # a graph on the call of this module that runs it with grad on
            if history.eval_off_builds_graph(call.func, call):
                return True  # returns no history, yet works with grad on before its eval branch
        calls = self.facts.calls
        loops = self.facts.loops
        for call in calls.calls_in.get(info.scope, ()):
            callee = calls.resolve(call)
            if callee is not None and info.contains(loops.pos(call)):
                v = history.value(call)
                if v is not None and v.h is H.YES:
                    return True
                if self._helper_forwards(call, callee):
                    return True
        return False

    def _partly_off(self, call: cst.Call) -> bool:
        """``model(data, mode="inference")`` where every project class of
        ``model`` turns grad off for some of its ``forward`` (SPADE's
        ``Pix2PixModel``): the caller cannot tell whether it builds a graph."""
        project = self.facts.project
        if project is None or not project.partly_off:
            return False
        receiver = dotted_name(_module_of(call.func))
        scope = self.facts.loops.scope_of(call)
        if isinstance(scope, cst.FunctionDef):
            cls = self.facts.calls.class_of.get(scope)
            name = f"{cls.name.value}.{scope.name.value}" if cls is not None else scope.name.value
        else:
            name = ""
        return (name, receiver) in project.partly_off

    def _evaluating_helper(self, info) -> cst.FunctionDef | None:
        """The one function of this module the loop calls per step that runs
        the loop's only forwards (``_helper_forwards``), when it is named for
        evaluation (``inference``, ``predict_one``), is not a method, escapes
        nowhere, hands back no graph and is only called from evaluation
        loops (and by no caller elsewhere that backpropagates): decorating it
        takes a graph from nobody."""
        history = self.facts.history
        if any((history.value(c) or _NONE).h is H.YES for c in info.model_calls):
            return None  # the loop runs a model itself
        calls = self.facts.calls
        loops = self.facts.loops
        found = {
            callee
            for call in calls.calls_in.get(info.scope, ())
            if (callee := calls.resolve(call)) is not None
            and info.contains(loops.pos(call))
            and self._helper_forwards(call, callee)
        }
        if len(found) != 1:
            return None
        helper = found.pop()
        if not loops.eval_named(helper) or helper in calls.escapes or helper in calls.class_of:
            return None  # a method's callers in other modules are not all known
        if history.returns(helper).h is not H.NO:
            return None
        # Every call runs in an evaluation loop, here and elsewhere: a graph the
        # helper leaves behind (``self.out = net(x)``) serves no backward.
        for site in calls.call_sites.get(helper, ()):
            around = loops.loop_of(site)
            if around is None or around.role != "eval":
                return None
        if any(caller.backward for caller in self.facts.grad_mode.external_callers(helper)):
            return None
        return helper

    def _helper_forwards(self, call: cst.Call, callee: cst.FunctionDef) -> bool:
        """``self._process_one_batch(x)`` or ``inference(net, image)`` called
        per step: a function of this module (a sibling method, one inherited
        from a class defined here) whose own body runs a model with autograd
        on. What it hands back may have lost its history on the way
        (``.numpy()``, an opaque ``inverse_transform``), yet the graph was
        built for every step. The loop's own facts (it trains nothing, needs
        no grad) already cover the callee's. Only a callee with no loop of
        its own counts: one that loops (``extract_feature(model, loader)``,
        an ``edit()`` whose inner evaluation loops are reported) is judged,
        and reported, there."""
        facts = self.facts
        grad = facts.grad_mode
        if grad.mode_at(call) is not GradMode.ENABLED or grad.local_mode(call) is GradMode.ENABLED:
            return False
        loops = facts.loops
        body = loops.scope_facts(callee)
        if body is None or not body.model_calls or body.loops or loops.serves_forward(callee):
            return False
        history = facts.history
        return any(
            (history.value(c) or _NONE).h is H.YES
            and grad.local_mode(c) is not GradMode.DISABLED
            and not runs_only_in_training(c, self.parent)  # its ``else`` runs it under ``no_grad``
            for c in body.model_calls
        )

    def _mc_dropout(self, info) -> bool:
        """Monte-Carlo dropout or BN recalibration: the model is put in train
        mode on purpose for this loop (``.train()`` with no training since),
        or an opaque call such as ``enable_dropout(model)`` runs before it."""
        loops = self.facts.loops
        receivers = frozenset(n for n in (dotted_name(_module_of(c.func)) for c in info.model_calls) if n)
        names = frozenset(dotted_name(_module_of(c.func)) for c in info.model_calls)
        state = loops.mode_before(info.node, receivers) if receivers and None not in names else "unknown"
        if state == "eval":
            # ``train_one_epoch(model, ...)`` then ``model.eval()``: whatever
            # the opaque call did, the switch after it decides the mode.
            return False
        events = loops.mode_events(info.scope)
        if any(e.kind == "unknown" and e.pos < info.start for e in events):
            return True
        return bool(receivers) and state == "train-fresh"

    valid = [
        Valid(
            """\
import torch
def forward_pass(model, batch):
    if model.training:
        out = model(batch)
    else:
        with torch.no_grad():
            out = model(batch)
    return out.mean()
def validate(model, loader):
    model.eval()
    total = 0.0
    for batch in loader:
        total += forward_pass(model, batch).item()
    return total
""",
            "the helper runs the model with grad on only while it trains; after `.eval()` it runs it under `no_grad`",
        ),
        Valid(
            """\
import torch
from torch import nn
class Learner:
    def __init__(self, n_words):
        self.embeddings = nn.Embedding(n_words, 16)

    def fake_weights(self):
        classes_to_create = list(range(self.n_classes, self.total_classes))
        self.embeddings.eval()
        weights = []
        for class_id in classes_to_create:
            labels = self.class_labels(class_id).to(self.device)
            weights.append(self.embeddings(labels).mean(dim=0, keepdim=True))
        self.embeddings.train()
        return torch.cat(weights)
""",
            "a loop over the task's classes, not a loader: one classifier weight per class, whose graph the "
            "caller may train through",
        ),
        Valid(
            """\
import torch


def val(model, ema, loader):
    for p_ema, p in zip(ema.parameters(), model.parameters()):
        p_ema.requires_grad = False
    ema.eval()
    correct = 0
    for x, y in loader:
        correct += (ema(x).argmax(1) == y).sum().item()
    return correct
""",
            "a zip over an EMA copy and its model that freezes the copy's side: equal lists, the copy is frozen",
        ),
        Valid(
            # The class comes from a module named at run time: without the project,
            # nothing says what ``model`` is (project/dynamic_classes.py).
            """\
import importlib
import torch
def create_model(name):
    return getattr(importlib.import_module("models." + name + "_model"), "Model")()
model = create_model("fusion")
model.setup_to_test("weights")
for data in torch.utils.data.DataLoader(dataset):
    model.colorize(data)
"""
        ),
        Valid(
            """\
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.convolutions = nn.ModuleList([nn.Conv1d(4, 4, 5, padding=2) for _ in range(3)])

    def inference(self, x):
        for conv in self.convolutions:
            x = F.dropout(F.relu(conv(x)), 0.5, self.training)
        return x
""",
            "the loop threads one input through the model's layers (`x = f(conv(x))`): the layers of one"
            " forward, not evaluation steps (mellotron's Encoder.inference)",
        ),
        Valid(
            """\
import torch


def smart_inference_mode(torch_1_9=True):
    def decorate(fn):
        return (torch.inference_mode if torch_1_9 else torch.no_grad)()(fn)

    return decorate


@smart_inference_mode()
def run(model, loader):
    model.eval()
    return [model(x).argmax(1) for x in loader]
""",
            "a decorator of the module's own that applies `torch.inference_mode()` or `torch.no_grad()` on "
            "either branch of a version test (yolov5's `smart_inference_mode`): `run` starts with grad off",
        ),
        Valid(
            """\
import torch

frozen = torch.no_grad()


def off(fn):
    return torch.no_grad()(fn)


@frozen
def evaluate(model, loader):
    model.eval()
    for x in loader:
        print(model(x).argmax(1))


@off
def predict(model, loader):
    model.eval()
    for x in loader:
        print(model(x).argmax(1))
""",
            "a name bound to `torch.no_grad()` and a function returning `torch.no_grad()(fn)`, used as decorators",
        ),
        Valid(
            """\
import torch


def make_nograd_func(func):
    def wrapper(*f_args, **f_kwargs):
        with torch.no_grad():
            ret = func(*f_args, **f_kwargs)
        return ret

    return wrapper


@make_nograd_func
def test_sample(model, sample):
    model.eval()
    return model(sample)


def test(model, loader):
    for sample in loader:
        test_sample(model, sample)
""",
            "a decorator of the module's own whose nested wrapper calls the function only under "
            "`torch.no_grad()` (GwcNet's `make_nograd_func`): `test_sample` runs with grad off",
        ),
        Valid(
            """\
import os
import torch
class Trainer(object):
    VALIDATION_METRICS = ["bleu", "ppl"]
    def __init__(self, encoder, dump_path):
        self.encoder = encoder
        self.dump_path = dump_path
        self.best = {}
    def save_model(self, name):
        torch.save({"enc": self.encoder}, os.path.join(self.dump_path, "%s.pth" % name))
    def save_best_model(self, scores):
        for metric in self.VALIDATION_METRICS:
            if scores[metric] > self.best.get(metric, 0):
                self.best[metric] = scores[metric]
                self.save_model("best-%s" % metric)
""",
            "a loop over metric names calling a method of the class that returns nothing (a save): no forward",
        ),
        Valid(
            """\
import torch
from syncnet import *


class SyncNetInstance(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.__S__ = S(num_layers=1024)

    def evaluate(self, batches):
        self.__S__.eval()
        feats = []
        for batch in batches:
            feats.append(self.__S__(batch.cuda()).data.cpu())
        return torch.cat(feats, 0)
""",
            "`S` comes from a star import no module of the project answers and is never moved to a device: "
            "`.eval()` alone does not prove it is a module (an evaluator object may define `eval` too)",
        ),
        Valid(
            """\
import torch.nn as nn
def model_summary(model, *inputs):
    sizes = []
    hooks = []
    def add_hooks(module):
        def hook(module, inp, out):
            sizes.append(list(out.size()))
        if not isinstance(module, nn.Sequential) and module is not model:
            hooks.append(module.register_forward_hook(hook))
    model.eval()
    model.apply(add_hooks)
    model(*inputs)
    for hook in hooks:
        hook.remove()
    return sizes
def main(model, dummy):
    print(model_summary(model, dummy))
""",
            "one forward for the hooks it registered (a model summary; its `model.apply(add_hooks)` switches "
            "no mode), its output never read, in a function no caller runs in a loop: one passing peak",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def weights_init(m):
    if isinstance(m, nn.Dropout):
        m.eval()
def train(loader, val_loader, steps):
    critic = nn.Linear(4, 1).cuda()
    critic.apply(weights_init)
    opt = torch.optim.Adam(critic.parameters())
    for it in range(steps):
        for x in loader:
            opt.zero_grad()
            critic(x).mean().backward()
            opt.step()
        costs = []
        for _, images in enumerate(val_loader):
            out = critic(images.cuda())
            costs.append(-out.mean().item())
""",
            "`model.apply(fn)` with a function that may switch a submodule's mode (here it does): the loop's "
            "mode is unknown (MC dropout may be meant); an initialiser that switches nothing is no switch",
        ),
        Valid(
            """\
import torch
class Trainer:
    def evaluate(self, loader):
        self.model.eval()
        acc = 0.0
        for x, y in loader:
            x_adv = self.eval_attack.perturb(x, y)
            acc += (self.model(x_adv).argmax(1) == y).float().mean()
        return acc
""",
            "an attack object's method differentiates the loss with respect to the input: it needs gradients",
        ),
        Valid(
            """\
import torch
from torch.autograd import Variable
from model import BetaVAE


class Solver:
    def __init__(self, loader):
        self.net = BetaVAE(10)
        self.optim = torch.optim.Adam(self.net.parameters())
        self.loader = loader

    def net_mode(self, train):
        if train:
            self.net.train()
        else:
            self.net.eval()

    def viz_traverse(self, z):
        self.net_mode(train=True)
        decoder = self.net.decoder
        samples = []
        for val in torch.arange(-3, 3):
            z[:, 0] = val
            samples.append(torch.sigmoid(decoder(z)).data)
        self.net_mode(train=True)
        return samples
""",
            "net_mode(train=True) runs only the train branch of the helper: no evidence of evaluation",
        ),
        Valid(
            """\
import torch
from torch.autograd import Variable
from model import BetaVAE


class Solver:
    def __init__(self, loader):
        self.net = BetaVAE(10)
        self.optim = torch.optim.Adam(self.net.parameters())
        self.loader = loader

    def net_mode(self, train):
        train = not train
        if train:
            self.net.train()
        else:
            self.net.eval()

    def viz_traverse(self, z):
        self.net_mode(train=False)
        decoder = self.net.decoder
        samples = []
        for val in torch.arange(-3, 3):
            z[:, 0] = val
            samples.append(torch.sigmoid(decoder(z)).data)
        self.net_mode(train=True)
        return samples
""",
            "the helper rebinds its flag before testing it: which branch runs is not known",
        ),
        Valid(
            """\
import torch
from torch.autograd import Variable
from model import VSE


def encode_data(model, data_loader):
    embs = []
    for images, captions in data_loader:
        img_emb = model.forward_emb(images, captions, volatile=False)
        embs.append(img_emb.data.cpu())
    return embs
""",
            "volatile=False asks for a graph (and names no evaluation): nothing says this loop evaluates",
        ),
        Valid(
            """\
import torch
class AlignmentTrainer:
    def train(self):
        for epoch in range(self.epochs):
            self._train_epoch(epoch)
            with torch.no_grad():
                val_dict = self._valid_epoch()
class ContrastiveLossTrainer(AlignmentTrainer):
    def _train_epoch(self, epoch):
        for x in self.data_loader:
            self.optimizer.zero_grad()
            self.model(x).sum().backward()
            self.optimizer.step()
    def _valid_epoch(self):
        self.model.eval()
        hits = 0
        for x, y in self.val_data_loader:
            hits += (self.model(x).argmax(1) == y).sum().item()
        return hits
""",
            "FCGF: the subclass's `_valid_epoch` runs only from the base class's `train`, which it inherits, "
            "under no_grad",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
from pointnet.model import PointNetCls
classifier = PointNetCls(k=10)
optimizer = torch.optim.Adam(classifier.parameters())
for epoch in range(10):
    for i, (points, target) in enumerate(train_loader):
        optimizer.zero_grad()
        classifier = classifier.train()
        pred = classifier(points)
        loss = F.nll_loss(pred, target)
        if i > 0:
            loss = loss + 0.1 * probe.mean()
        loss.backward()
        optimizer.step()
        if i % 10 == 0:
            classifier = classifier.eval()
            probe = classifier(anchor)
""",
            "the test batch inside the training loop feeds the next iteration's loss: its graph is backpropagated",
        ),
        Valid(
            """\
import torch
from torch import nn


class Spectrogram(nn.Module):
    def __init__(self, n_fft=512):
        super().__init__()
        self.register_buffer("window", torch.hann_window(n_fft))
        self.n_fft = n_fft

    def forward(self, audio):
        return torch.stft(audio, self.n_fft, window=self.window, return_complex=True).abs()


spec = Spectrogram().cuda()
spec.eval()
feats = [spec(x.cuda()) for x in test_loader]
for x in test_loader:
    feats.append(spec(x.cuda()))
""",
            "a module that owns no parameter (buffers and functional ops only) records no graph of its own",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
from torchvision import models

backbone = models.resnet18(pretrained=True)
backbone.fc = nn.Linear(backbone.fc.in_features, 2)
for param in backbone.parameters():
    param.requires_grad = False
encoder = models.resnet50(pretrained=True)
encoder.requires_grad_(False)
encoder.fc = nn.Identity()
backbone.eval()
encoder.eval()
feats = []
for img, label in val_loader:
    out = backbone(img)
    correct += (out.argmax(1) == label).sum().item()
    feats.append(encoder(img))
""",
            "frozen after its head is replaced, or given a head without parameters: the outputs carry no history",
        ),
        Valid(
            """\
import torch


class Agent:
    def __init__(self, actor):
        self.actor = actor

    def select_action(self, state):
        with torch.no_grad():
            return self.actor(state).numpy()


def eval_policy(policy, env, episodes=10):
    for _ in range(episodes):
        state, done = env.reset(), False
        while not done:
            state, reward, done = env.step(policy.select_action(state))


eval_policy(Agent(torch.nn.Linear(3, 1)), None)
""",
            "the typed argument's method runs its forward under no_grad",
        ),
        Valid(
            """\
import torch


class Greedy:
    def __init__(self):
        self.actor = torch.nn.Linear(3, 1)

    def select_action(self, state):
        return self.actor(state).detach().numpy()


class Careful:
    def __init__(self):
        self.actor = torch.nn.Linear(3, 1)

    def select_action(self, state):
        with torch.no_grad():
            return self.actor(state).numpy()


def eval_policy(policy, env, episodes=10):
    for _ in range(episodes):
        state, done = env.reset(), False
        while not done:
            state, reward, done = env.step(policy.select_action(state))


eval_policy(Greedy(), None)
eval_policy(Careful(), None)
""",
            "callers pass two classes and one runs its forward under no_grad: not every path builds a graph",
        ),
        Valid(
            """\
import torch


def make_train_step(net, criterion, opt):
    def train_step(inputs, targets):
        net.train()
        loss = criterion(net(inputs), targets)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss.item()

    return train_step


def make_val_step(net, criterion):
    def val_step(inputs, targets):
        net.eval()
        return criterion(net(inputs), targets).item()

    return val_step
""",
            "a step function handed out by its factory: whoever receives it chooses the grad mode"
            " (callers wrap the validation step in no_grad)",
        ),
        Valid(
            """\
import torch
import torchvision
device = "cuda"
scorer = torchvision.models.resnet18()
scorer.eval().requires_grad_(False).to(device)
def evaluate(loader):
    scorer.eval()
    scores = []
    for x in loader:
        scores.append(scorer(x.to(device)))
    return scores
""",
            "frozen in one chained statement at the top of the module: its outputs carry no history",
        ),
        Valid(
            """\
import copy
import torch
def generate(G, latents, device):
    G.train(False).requires_grad_(False).to(device)
    G_avg = copy.deepcopy(G).cuda()
    samples = []
    for z in latents:
        samples.append(G_avg(z.to(device)))
    return samples
""",
            "a copy of a model frozen in one chained statement is frozen too",
        ),
        Valid(
            """\
import copy
import torch
class Trainer:
    def __init__(self, net):
        self.net = net
        self.shadow = copy.deepcopy(net).eval()
        self.shadow.requires_grad_(False)
    def evaluate(self, loader):
        self.shadow.eval()
        preds = []
        for x, y in loader:
            preds.append(self.shadow(x))
        return preds
""",
            "the class freezes its averaged copy in __init__; another method evaluates it",
        ),
        Valid(
            """\
import torch
from torch.autograd import Variable
def optimize(policy_net, target_net, memory_loader, optimizer):
    for state, action, reward, next_state in memory_loader:
        next_q = target_net.forward_q(Variable(next_state, volatile=True)).max(1)[0]
        q = policy_net(Variable(state)).gather(1, action)
        loss = (q - (reward + 0.99 * next_q.detach())).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            "volatile=True for a target in a loop that trains",
        ),
        Valid(
            """\
import numpy as np
import torch
def encode_data(model, data_loader):
    model.val_start()
    img_embs = []
    with torch.no_grad():
        for images, captions, lengths, ids in data_loader:
            img_emb, cap_emb = model.forward_emb(images, captions, lengths, volatile=True)
            img_embs.append(img_emb.data.cpu().numpy().copy())
    return np.concatenate(img_embs)
""",
            "the volatile loop already runs under no_grad",
        ),
        Valid(
            """\
import numpy as np
import torch
class VSE:
    def forward_emb(self, images, captions, volatile=False):
        with torch.set_grad_enabled(not volatile):
            return self.img_enc(images), self.txt_enc(captions)
def encode_data(model: VSE, data_loader):
    img_embs = []
    for images, captions in data_loader:
        img_emb, cap_emb = model.forward_emb(images, captions, volatile=True)
        img_embs.append(img_emb.data.cpu().numpy().copy())
    return np.concatenate(img_embs)
""",
            "the method taking volatile is defined here and switches grad itself",
        ),
        Valid(
            """\
import torch.nn as nn
import torch.nn.functional as F
class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)
    def forward(self, x):
        return self.fc(x.flatten(1))
    def _test(self, loader):
        self.train()  # Monte-Carlo dropout
        samples = []
        for x, y in loader:
            samples.append(self.forward(x).softmax(-1).detach())
        return samples
""",
            "the module puts itself in train mode on purpose before its sampling loop",
        ),
        Valid(
            """\
import torch
import torchvision
def extract_feature(model, dataloaders):
    features = []
    for img, _ in dataloaders:
        features.append(model(img.cuda()))
    return torch.cat(features)
model = torchvision.models.resnet50()
model.eval()
feats = extract_feature(model, loader)
head(feats).sum().backward()
""",
            "the feature loop hands its outputs, graph and all, to a caller that backpropagates",
        ),
        Valid(
            """\
import torch
import torchvision
def extract_feature(model, dataloaders):
    features = []
    for img, _ in dataloaders:
        features.append(model(img.cuda()).data.cpu())
    return torch.cat(features)
model = torchvision.models.resnet50()
model.eval()
bank = extract_feature(model, gallery_loader)
model.train()
recalibrated = extract_feature(model, train_loader)
""",
            "one caller runs the loop in train mode",
        ),
        Valid(
            """\
import torch
import torchvision
def extract_feature(model, dataloaders):
    features = []
    for img, _ in dataloaders:
        features.append(model(img.cuda()).data.cpu())
    return torch.cat(features)
model = torchvision.models.resnet50()
model.eval()
with torch.no_grad():
    bank = extract_feature(model, gallery_loader)
""",
            "the caller runs the loop under no_grad",
        ),
        Valid(
            """\
import torch
import torchvision
def extract_feature(model, dataloaders):
    features = []
    for img, _ in dataloaders:
        features.append(model(img.cuda()).data.cpu())
    return torch.cat(features)
model = torchvision.models.resnet50()
bank = extract_feature(model, gallery_loader)
""",
            "no caller puts the model in eval mode",
        ),
        Valid(
            """\
import torch
import torchvision
def classify_video(model, loader, video_name, results):
    for clips in loader:
        results.append(model(clips.cuda()))
    return {"video": video_name, "outputs": results}
model = torchvision.models.resnet50()
model.eval()
result = classify_video(model, loader, "clip", [])
""",
            "what it hands back holds its forwards' graphs, through a list it was given and filled",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
def run_epoch(model, loader, optimizer, train=True):
    total = 0.0
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total / len(loader)
def fit(model, train_loader, val_loader, optimizer, epochs):
    for epoch in range(epochs):
        run_epoch(model, train_loader, optimizer)
        with torch.no_grad():
            val_loss = run_epoch(model, val_loader, optimizer, train=False)
""",
            "the evaluation call of the shared loop already runs under no_grad",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
def run_epoch(model, loader, optimizer, train=True):
    total = 0.0
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        if train:
            optimizer.step()
            optimizer.zero_grad()
        total += loss.item()
    return total / len(loader)
def fit(model, train_loader, val_loader, optimizer, epochs):
    for epoch in range(epochs):
        run_epoch(model, train_loader, optimizer)
        val_loss = run_epoch(model, val_loader, optimizer, train=False)
""",
            "backward runs outside the training flag: the evaluation call needs its graph",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
def run_epoch(model, loader, optimizer, train=True):
    total = 0.0
    for x, y in loader:
        with torch.set_grad_enabled(train):
            loss = F.cross_entropy(model(x), y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total / len(loader)
def fit(model, train_loader, val_loader, optimizer, epochs):
    for epoch in range(epochs):
        run_epoch(model, train_loader, optimizer)
        val_loss = run_epoch(model, val_loader, optimizer, train=False)
""",
            "the shared loop switches grad with set_grad_enabled(train) itself",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
def run_epoch(model, loader, optimizer, train=True):
    outs = []
    for x, y in loader:
        out = model(x)
        loss = F.cross_entropy(out, y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        outs.append(out)
    return torch.cat(outs)
def distill(model, student, loader, optimizer):
    soft = run_epoch(model, loader, optimizer, train=False)
    F.mse_loss(student(soft), soft).backward()
""",
            "the evaluation call returns outputs with their graph to a caller that backpropagates",
        ),
        Valid(
            """\
import torch.nn.functional as F
def run_epoch(model, loader, optimizer, train=True):
    total = 0.0
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total / len(loader)
def fit(model, train_loader, optimizer, epochs):
    for epoch in range(epochs):
        run_epoch(model, train_loader, optimizer, train=True)
""",
            "the training flag is on at every call",
        ),
        Valid(
            """\
class Solver:
    def train(self, epochs):
        for epoch in range(epochs):
            self._run_one_epoch(epoch, cross_valid=False)
    def _run_one_epoch(self, epoch, cross_valid=False):
        for x, y in self.loader:
            loss = self.criterion(self.model(x), y)
            if not cross_valid:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
""",
            "a negated training flag (`if not cross_valid:`) passed False at every call: every call trains",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
def run_epoch(model, loader, optimizer, train=True):
    total = 0.0
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total / len(loader)
@torch.no_grad()
def validate(model, val_loader, optimizer):
    return run_epoch(model, val_loader, optimizer, train=False)
""",
            "the only caller of the evaluation path is decorated with no_grad",
        ),
        Valid(
            """\
import torch
from torchvision import utils
class WGAN:
    def evaluate(self, test_loader, G_model_path):
        self.G.load_state_dict(torch.load(G_model_path, map_location="cpu"))
        self.G.eval()
        z = torch.randn(64, 100, 1, 1)
        samples = self.G(z)
        samples = samples.mul(0.5).add(0.5).data.cpu()
        utils.save_image(utils.make_grid(samples), "samples.png")
""",
            "one generator forward in a function run once: nothing is repeated",
        ),
        Valid(
            """\
import torch
def features_for_probe(backbone, x):
    backbone.eval()
    feats = backbone(x)
    return feats
""",
            "a forward after eval() whose result goes back to a caller that may backpropagate",
        ),
        Valid(
            """\
import torch
def _predict(model, loader):
    model.eval()
    outs = []
    for x in loader:
        outs.append(model(x).softmax(-1))
    return torch.cat(outs)
predict = torch.inference_mode()(_predict)
""",
            "inference_mode applied as a decorator by a call",
        ),
        Valid(
            """\
from contextlib import ExitStack
import torch
def predict(model, loader):
    model.eval()
    outs = []
    with ExitStack() as stack:
        stack.enter_context(torch.inference_mode())
        for x in loader:
            outs.append(model(x).cpu())
    return torch.cat(outs)
""",
            "inference_mode entered on an ExitStack before the loop",
        ),
        Valid(
            """\
import torch
def predict(model, loader):
    model.eval()
    grad_ctx = torch.no_grad()
    outs = []
    with grad_ctx:
        for x in loader:
            outs.append(model(x).argmax(1))
    return torch.cat(outs)
""",
            "the loop runs under a torch.no_grad() instance held in a variable",
        ),
        Valid(
            """\
def evaluate_frozen(model, loader):
    model.eval()
    model.requires_grad_(False)
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
""",
            "the model's parameters are frozen: its outputs carry no history",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class FrozenEncoder(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
    @torch.no_grad()
    def forward(self, x):
        return self.encoder(x)
def evaluate_knn(encoder, loader, device):
    feat_net = FrozenEncoder(encoder).to(device)
    feat_net.eval()
    bank = []
    for x, _ in loader:
        bank.append(feat_net(x))
    return torch.cat(bank)
""",
            "the only model called runs its forward under no_grad",
        ),
        Valid(
            """\
import torch
from transformers import Pipeline
class TableQA(Pipeline):
    def sequential_inference(self, **inputs):
        all_logits = []
        for index in range(inputs["input_ids"].shape[0]):
            outputs = self.model(input_ids=inputs["input_ids"][index].unsqueeze(0))
            all_logits.append(outputs.logits)
        return torch.cat(all_logits)
    def _forward(self, model_inputs, sequential=False):
        if sequential:
            return self.sequential_inference(**model_inputs)
        return self.model(**model_inputs)
""",
            "a transformers Pipeline runs _forward under its inference context",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class TriangleUpdate(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.linear_z = nn.Linear(d, d)
    def _inference_forward(self, z, n):
        for i in range(0, n, 4):
            z[i:i + 4] += self.linear_z(z[i:i + 4])
        return z
    def forward(self, z, n, inplace_safe=False):
        if inplace_safe:
            return self._inference_forward(z, n)
        return z + self.linear_z(z)
""",
            "a helper of the model's forward: its caller chooses the grad mode",
        ),
        Valid(
            """\
import torch
def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            out = model(x)
""",
            "under torch.no_grad()",
        ),
        Valid(
            """\
import torch
def saliency(model, loader):
    model.eval()
    for x, y in loader:
        x.requires_grad_()
        score = model(x).max()
        score.backward()
        yield x.grad.abs()
""",
            "saliency maps need gradients",
        ),
        Valid(
            """\
import torch
def grad_cam(model, loader, layer):
    model.eval()
    layer.register_full_backward_hook(save_grad)
    for x, y in loader:
        out = model(x)
        out[:, y].sum().backward()
""",
            "Grad-CAM needs gradients",
        ),
        Valid(
            """\
import torch
def test_adversarial(model, loader, eps):
    model.eval()
    for x, y in loader:
        x.requires_grad = True
        loss = criterion(model(x), y)
        grad = torch.autograd.grad(loss, x)[0]
        adv = x + eps * grad.sign()
        print(model(adv).argmax(1))
""",
            "adversarial examples need autograd.grad",
        ),
        Valid(
            """\
import torch
def evaluate_with_tta(model, loader, optimizer):
    model.eval()
    for x in loader:
        loss = entropy(model(x))
        loss.backward()
        optimizer.step()
""",
            "test-time adaptation trains while evaluating",
        ),
        Valid(
            """\
import torch
def validate(model, loader):
    model.eval()
    with torch.enable_grad():
        for x, y in loader:
            model(x)
""",
            "torch.enable_grad() asks for gradients explicitly",
        ),
        Valid(
            """\
import torch
import pytorch_lightning as pl
class Net(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        for x in batch:
            self(x)
""",
            "Lightning hooks already run without grad",
        ),
        Valid(
            """\
import torch
def evaluate(model, loader):
    model.eval()
    for x, y in loader:
        out = model(x)
def main():
    with torch.no_grad():
        evaluate(model, val_loader)
""",
            "only ever called under no_grad in this module",
        ),
        Valid(
            """\
import torch
def evaluate(loader):
    for x, y in loader:
        out = ema_model(x)
""",
            "a different module being evaluated (an EMA copy with frozen parameters)",
        ),
        Valid(
            """\
import torch
def predict_mc(model, x, n=20):
    model.eval()
    enable_dropout(model)
    for _ in range(n):
        model(x)
""",
            "MC-dropout on purpose",
        ),
        Valid(
            """\
import torch
from helpers import evaluating
def fit(model, train_loader, val_loader, criterion, opt):
    for epoch in range(10):
        model.train()
        for x, y in train_loader:
            opt.zero_grad()
            criterion(model(x), y).backward()
            opt.step()
        model.eval()
        with evaluating(model):
            for x, y in val_loader:
                print(model(x).argmax(1))
""",
            "a context manager from another module named for evaluation may turn grad off",
        ),
        Valid(
            """\
import contextlib
import torch
@contextlib.contextmanager
def no_grad_ctx():
    with torch.no_grad():
        yield
def fit(model, train_loader, val_loader, criterion, opt):
    for epoch in range(10):
        model.train()
        for x, y in train_loader:
            opt.zero_grad()
            criterion(model(x), y).backward()
            opt.step()
        model.eval()
        with no_grad_ctx():
            for x, y in val_loader:
                print(model(x).argmax(1))
""",
            "a context manager of this module that yields under torch.no_grad()",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
def compute_accuracy(net, data_loader):
    correct = 0
    for features, targets in data_loader:
        correct += (net(features).argmax(1) == targets).sum().item()
    return correct
def fit(net, train_loader, test_loader, optimizer):
    for epoch in range(10):
        for features, targets in train_loader:
            loss = F.cross_entropy(net(features), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(compute_accuracy(net, train_loader), compute_accuracy(net, test_loader))
""",
            "a helper also run on the training loader: not evidence of evaluation",
        ),
        Valid(
            """\
import torch
net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for epoch in range(2):
    for inputs, labels in trainloader:
        optimizer.zero_grad()
        loss = criterion(net(inputs), labels)
        loss.backward()
        optimizer.step()
torch.set_grad_enabled(False)
correct = 0
for images, labels in testloader:
    correct += (net(images).argmax(1) == labels).sum().item()
""",
            "torch.set_grad_enabled(False) in force at module level",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2))
model.eval()
x = X_test[:1].clone().requires_grad_(True)
out = model(x)
out[0, out.argmax()].backward()
saliency = x.grad.abs()
""",
            "a saliency map in the script body: the forward after eval() is backpropagated",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2))
optimizer = torch.optim.Adam(model.parameters())
model.eval()
baseline = model(X_val)
model.train()
for epoch in range(100):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(X_train), y_train)
    loss.backward()
    optimizer.step()
""",
            "a baseline forward before the script trains: training later may need grad (cannot tell)",
        ),
        Valid(
            """\
import numpy as np
import torch


def eval_model(attention, step, plot_dir):
    np.save(plot_dir + str(step), attention)


def train(model, loader, optimizer, hparams):
    for i, (x, y) in enumerate(loader):
        out, attention = model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        for sample_idx in range(hparams.eval_num_samples):
            eval_model(attention=attention[sample_idx].detach().cpu().numpy(), step=i, plot_dir="x")
""",
            "a helper of this module named eval_model only saves arrays: its body, not its name, says it runs no model",
        ),
        Valid(
            """\
import torch
class Experiment:
    def __init__(self, model):
        self.model = model

    def vali(self, loader, criterion):
        self.model.eval()
        losses = []
        for x, y in loader:
            pred = self._one_batch(x)
            losses.append(criterion(pred, y).item())
        self.model.train()
        return sum(losses) / len(losses)

    def _one_batch(self, x):
        with torch.no_grad():
            out = self.model(x.float())
        return self.scaler.inverse_transform(out)
""",
            "the sibling method the loop calls per step runs the model under no_grad itself",
        ),
        Valid(
            """\
import torch
def predict_one(net, image):
    image = torch.from_numpy(image).unsqueeze(0).requires_grad_(True)
    net(image).max().backward()
    return image.grad.abs().numpy()
def main(paths):
    net = build_net()
    net.load_state_dict(torch.load("net.pth", map_location="cpu"))
    net.eval()
    for path in paths:
        save(path, predict_one(net, read_image(path)))
""",
            "the per-image helper backpropagates to its input (a saliency map): it needs the graph",
        ),
        Valid(
            """\
import torch
from model import Net
net = Net()
net.load_state_dict(torch.load("net.pth", map_location="cpu"))
net.eval()
img = torch.zeros(1, 3, 288, 800)
y = net(img)  # dry run
ts = torch.jit.trace(net, img)
ts.save("net.pt")
""",
            "one dry-run forward in the script body whose output nobody reads (before tracing): a passing peak, nothing kept",
        ),
        Valid(
            """\
def run(args, loader, model, optimizer, is_validate=False):
    model.eval() if is_validate else model.train()
    for data, target in loader:
        loss = model(data, target).mean()
        if not is_validate or args.finetune_on_val:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return loss.item()
def main(args, model, optimizer, train_loader, val_loader):
    for epoch in range(10):
        run(args, train_loader, model, optimizer)
        run(args, val_loader, model, optimizer, is_validate=True)
""",
            "`not is_validate or ...` may train with the flag on: the validation call may backpropagate",
        ),
        Valid(
            """\
import paddle


def evaluate(model, data_loader):
    model.eval()
    for x, y in data_loader:
        print((model(x).argmax(1) == y).sum().item())
""",
            "paddle's `model.eval()` in a file importing no torch: the pre-filter's `.eval()` lets it in, and its "
            "loop evaluates no torch model",
        ),
        Valid(
            """\
def run_epoch(model, data_loader, optimizer):
    model.eval()
    for x, y in data_loader:
        loss = model(x, y)
        loss.backward()
        optimizer.step()
""",
            "no `import torch` and a loop that backpropagates and steps after `model.eval()`: training, not evaluation",
        ),
        Valid(
            """\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 4)
        self.epe = nn.L1Loss()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def update(self, x, gt, training=True):
        if training:
            self.train()
        else:
            self.eval()
        flows = self.net(x)
        loss_cons = 0
        for i in range(3):
            loss_cons += self.epe(self.net(flows), gt)
        loss = loss_cons.mean() * 0.01
        if training:
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        return flows, loss
""",
            "a loop summing a loss that its method backpropagates afterwards (on the training path of"
            " `if training: self.train() else: self.eval()`): part of a training step (RIFE's `update()`)",
        ),
        Valid(
            """\
import torch
import torch.nn as nn

MORAN = nn.Linear(4, 4)
optimizer = torch.optim.SGD(MORAN.parameters(), lr=0.1)


def val(loader, criterion):
    total = 0
    for x, y in loader:
        preds = MORAN(x)
        total += criterion(preds, y).item()
    return total


def train_batch(x, y, criterion):
    cost = criterion(MORAN(x), y)
    optimizer.zero_grad()
    cost.backward()
    optimizer.step()
    return cost


def main(loader, val_loader, criterion):
    for i, (x, y) in enumerate(loader):
        if i % 100 == 0:
            for p in MORAN.parameters():
                p.requires_grad = False
            MORAN.eval()
            acc = val(val_loader, criterion)
        for p in MORAN.parameters():
            p.requires_grad = True
        MORAN.train()
        train_batch(x, y, criterion)
""",
            "a function of the module called only right after its caller froze the model it runs"
            " (`p.requires_grad = False` over its parameters), thawed after: no graph (MORAN's `val()`)",
        ),
        Valid(
            """\
from basics import *


class DropoutAtTest(Callback):
    def before_validate(self):
        for m in [m for m in flatten_model(self.model) if "dropout" in type(m).__name__.lower()]:
            m.train()

    def after_validate(self):
        for m in flatten_model(self.model):
            m.eval()
""",
            "a loop over the layers a function named for what it does to a model returns"
            " (`flatten_model(self.model)`, fastai's): it switches modes and runs no forward",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
    def forward(self, x):
        return self.proj(x)
    def generate(self, x, max_len):
        cur_len = 1
        while cur_len < max_len:
            x = self.forward(x)
            cur_len += 1
        return x
""",
            "a method named for evaluation that nothing in the project calls, whose decoding loop iterates no data"
            " and that switches nothing to eval, is a helper its callers would decide (SymbolicMathematics' `generate`)",
        ),
        Valid(
            """\
import torch


def score(model, names):
    model.eval()
    scores = []
    for name in names:
        pad = torch.nn.ReplicationPad2d([0, 0, 4, 4])
        img = pad(torch.load(name))
        with torch.no_grad():
            out = model(img)
        scores.append(float(out.mean()))
    return scores
""",
            "the model runs under no_grad; the padding layer built in the loop owns no parameter: no graph",
        ),
        Valid(
            """\
import torch
import torch.nn as nn

model = nn.Linear(4, 4)
model.eval()
for name in open("list.txt"):
    act = nn.LeakyReLU(0.2)
    up = nn.Upsample(scale_factor=2)
    img = up(act(torch.load(name)))
    with torch.no_grad():
        print(model(img).mean().item())
""",
            "activation and upsampling layers own no parameter: frames read from disk get no history",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
net = nn.Linear(8, 8).cuda()
clock = Stopwatch()
def run(loader):
    _, _ = [x.eval() for x in (net, clock)]
    for batch in loader:
        print(net(batch[0].cuda()).argmax(1))
""",
            "a display switched in a comprehension counts only when every element is a module (`clock` may be anything)",
        ),
        Valid(
            """\
import torch
import torch.nn as nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def predict(self, preds):
        return preds.sigmoid()

    def forward(self, x):
        if self.training:
            return self.fc(x).sum()
        with torch.no_grad():
            res = self.predict(self.fc(x))
        return res


def train(loader, eval_loader):
    net = Detector()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for x in loader:
        loss = net(x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    detections = []
    for example in eval_loader:
        detections.append(net(example))
    return detections
""",
            "a model whose eval branch does all its work under `no_grad` builds no graph after `net.eval()`",
        ),
        Valid(
            """\
import torch


def validate(loader, model):
    model.eval()
    total = 0.0
    for x, y in loader:
        total += (model(x) - y).abs().sum().item()
    return total


def main(model, loader, optimizer, epochs, evaluate):
    if evaluate:
        with torch.no_grad():
            validate(loader, model)
        return
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            loss = (model(x) - y).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            validate(loader, model)
""",
            "every call of this module runs the helper under no_grad (`--evaluate` and the epoch loop alike)",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch


def test(model, loader_a, loader_b, save):
    model.eval()
    for n, (x, _) in enumerate(loader_a):
        save("a", n, model(x).cpu().numpy())
    for n, (x, _) in enumerate(loader_b):
        save("b", n, model(x).cpu().numpy())
""",
            """\
import torch


@torch.no_grad()
def test(model, loader_a, loader_b, save):
    model.eval()
    for n, (x, _) in enumerate(loader_a):
        save("a", n, model(x).cpu().numpy())
    for n, (x, _) in enumerate(loader_b):
        save("b", n, model(x).cpu().numpy())
""",
            count=2,
        ),
        Invalid(
            """\
import torch


def val(encoder, decoder, loader):
    for e, d in zip(encoder.parameters(), decoder.parameters()):
        e.requires_grad = False
        d.requires_grad = False
    encoder.eval()
    decoder.eval()
    correct = 0
    for x, y in loader:
        out = decoder(encoder(x))
        correct += (out.argmax(1) == y).sum().item()
    return correct
""",
            """\
import torch


def val(encoder, decoder, loader):
    for e, d in zip(encoder.parameters(), decoder.parameters()):
        e.requires_grad = False
        d.requires_grad = False
    encoder.eval()
    decoder.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            out = decoder(encoder(x))
            correct += (out.argmax(1) == y).sum().item()
    return correct
""",
        ),
        Invalid(
            """\
import torch


def validate(loader, model):
    model.eval()
    total = 0.0
    for x, y in loader:
        total += (model(x) - y).abs().sum().item()
    return total


def main(model, loader, optimizer, epochs, evaluate):
    if evaluate:
        validate(loader, model)
        return
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            loss = (model(x) - y).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            validate(loader, model)
""",
            """\
import torch


@torch.no_grad()
def validate(loader, model):
    model.eval()
    total = 0.0
    for x, y in loader:
        total += (model(x) - y).abs().sum().item()
    return total


def main(model, loader, optimizer, epochs, evaluate):
    if evaluate:
        validate(loader, model)
        return
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            loss = (model(x) - y).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            validate(loader, model)
""",
        ),
        Invalid(
            """\
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.convolutions = nn.ModuleList([nn.Conv1d(4, 4, 5, padding=2) for _ in range(3)])

    def inference(self, x):
        outs = []
        for conv in self.convolutions:
            outs.append(conv(x))
        return outs
""",
            """\
import torch.nn as nn
import torch


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.convolutions = nn.ModuleList([nn.Conv1d(4, 4, 5, padding=2) for _ in range(3)])

    @torch.no_grad()
    def inference(self, x):
        outs = []
        for conv in self.convolutions:
            outs.append(conv(x))
        return outs
""",
        ),
        Invalid(
            """\
import torch
import torch.nn.functional as F
from torch.autograd import Variable
def test(model, test_loader):
    model.eval()
    test_loss = 0
    for data, target in test_loader:
        data, target = Variable(data, volatile=True), Variable(target)
        output = model(data)
        test_loss += F.cross_entropy(output, target, size_average=False).item()
    return test_loss
""",
            """\
import torch
import torch.nn.functional as F
from torch.autograd import Variable
@torch.no_grad()
def test(model, test_loader):
    model.eval()
    test_loss = 0
    for data, target in test_loader:
        data, target = Variable(data, volatile=True), Variable(target)
        output = model(data)
        test_loss += F.cross_entropy(output, target, size_average=False).item()
    return test_loss
""",
        ),
        Invalid(
            """\
import torch
from torch.autograd import Variable
def predict(model, loader):
    model.eval()
    rows = []
    for data in loader:
        output = model(Variable(data, volatile=True))
        rows.append(output.cpu().data[0].numpy())
    return rows
""",
            """\
import torch
from torch.autograd import Variable
@torch.no_grad()
def predict(model, loader):
    model.eval()
    rows = []
    for data in loader:
        output = model(Variable(data, volatile=True))
        rows.append(output.cpu().data[0].numpy())
    return rows
""",
        ),
        Invalid(
            """\
import torch


def half_no_grad(func):
    def wrapper(*args):
        with torch.no_grad():
            func(*args)
        return func(*args)

    return wrapper


@half_no_grad
def evaluate(model, loader):
    model.eval()
    for x in loader:
        print(model(x).argmax(1))
""",
            """\
import torch


def half_no_grad(func):
    def wrapper(*args):
        with torch.no_grad():
            func(*args)
        return func(*args)

    return wrapper


@half_no_grad
@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    for x in loader:
        print(model(x).argmax(1))
""",
        ),
        Invalid(
            """\
import torch


def maybe_no_grad(enabled=True):
    def decorate(fn):
        if enabled:
            return torch.no_grad()(fn)
        return fn

    return decorate


@maybe_no_grad()
def evaluate(model, loader):
    model.eval()
    for x in loader:
        print(model(x).argmax(1))
""",
            """\
import torch


def maybe_no_grad(enabled=True):
    def decorate(fn):
        if enabled:
            return torch.no_grad()(fn)
        return fn

    return decorate


@maybe_no_grad()
def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        for x in loader:
            print(model(x).argmax(1))
""",
        ),
        Invalid(
            """\
import torch
class Evaluator(object):
    def __init__(self, model):
        self.model = model
    def show_model(self, x):
        print(self.model(x).argmax(1).tolist())
    def evaluate(self, loader):
        self.model.eval()
        for x, _ in loader:
            self.show_model(x)
""",
            """\
import torch
class Evaluator(object):
    def __init__(self, model):
        self.model = model
    def show_model(self, x):
        print(self.model(x).argmax(1).tolist())
    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        for x, _ in loader:
            self.show_model(x)
""",
        ),
        Invalid(
            """\
import torch
from syncnet import *


class SyncNetInstance(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.__S__ = S(num_layers=1024).cuda()

    def evaluate(self, batches):
        self.__S__.eval()
        feats = []
        for batch in batches:
            feats.append(self.__S__(batch.cuda()).data.cpu())
        return torch.cat(feats, 0)
""",
            """\
import torch
from syncnet import *


class SyncNetInstance(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.__S__ = S(num_layers=1024).cuda()

    @torch.no_grad()
    def evaluate(self, batches):
        self.__S__.eval()
        feats = []
        for batch in batches:
            feats.append(self.__S__(batch.cuda()).data.cpu())
        return torch.cat(feats, 0)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
def weights_init(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
def train(loader, val_loader, steps):
    critic = nn.Linear(4, 1).cuda()
    critic.apply(weights_init)
    opt = torch.optim.Adam(critic.parameters())
    for it in range(steps):
        for x in loader:
            opt.zero_grad()
            critic(x).mean().backward()
            opt.step()
        costs = []
        for _, images in enumerate(val_loader):
            out = critic(images.cuda())
            costs.append(-out.mean().item())
""",
            """\
import torch
import torch.nn as nn
def weights_init(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
def train(loader, val_loader, steps):
    critic = nn.Linear(4, 1).cuda()
    critic.apply(weights_init)
    opt = torch.optim.Adam(critic.parameters())
    for it in range(steps):
        for x in loader:
            opt.zero_grad()
            critic(x).mean().backward()
            opt.step()
        costs = []
        with torch.no_grad():
            for _, images in enumerate(val_loader):
                out = critic(images.cuda())
                costs.append(-out.mean().item())
""",
        ),
        Invalid(
            """\
import torch
class Trainer:
    def evaluate(self, loader):
        self.model.eval()
        acc = 0.0
        for x, y in loader:
            x_aug = self.eval_augment.perturb(x, y)
            acc += (self.model(x_aug).argmax(1) == y).float().mean()
        return acc
""",
            """\
import torch
class Trainer:
    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        acc = 0.0
        for x, y in loader:
            x_aug = self.eval_augment.perturb(x, y)
            acc += (self.model(x_aug).argmax(1) == y).float().mean()
        return acc
""",
        ),
        Invalid(
            """\
import torch
from torch.autograd import Variable
from model import BetaVAE


class Solver:
    def __init__(self, loader):
        self.net = BetaVAE(10)
        self.optim = torch.optim.Adam(self.net.parameters())
        self.loader = loader

    def net_mode(self, train):
        if train:
            self.net.train()
        else:
            self.net.eval()

    def viz_traverse(self, z):
        self.net_mode(train=False)
        decoder = self.net.decoder
        samples = []
        for val in torch.arange(-3, 3):
            z[:, 0] = val
            samples.append(torch.sigmoid(decoder(z)).data)
        self.net_mode(train=True)
        return samples
""",
            """\
import torch
from torch.autograd import Variable
from model import BetaVAE


class Solver:
    def __init__(self, loader):
        self.net = BetaVAE(10)
        self.optim = torch.optim.Adam(self.net.parameters())
        self.loader = loader

    def net_mode(self, train):
        if train:
            self.net.train()
        else:
            self.net.eval()

    def viz_traverse(self, z):
        self.net_mode(train=False)
        decoder = self.net.decoder
        samples = []
        with torch.no_grad():
            for val in torch.arange(-3, 3):
                z[:, 0] = val
                samples.append(torch.sigmoid(decoder(z)).data)
        self.net_mode(train=True)
        return samples
""",
        ),
        Invalid(
            """\
import torch
import torch.nn.functional as F
from pointnet.model import PointNetCls
classifier = PointNetCls(k=10)
optimizer = torch.optim.Adam(classifier.parameters())
for epoch in range(10):
    for i, (points, target) in enumerate(train_loader):
        optimizer.zero_grad()
        classifier = classifier.train()
        pred = classifier(points)
        loss = F.nll_loss(pred, target)
        loss.backward()
        optimizer.step()
        if i % 10 == 0:
            points, target = next(iter(test_loader))
            classifier = classifier.eval()
            pred, _ = classifier(points)
            loss = F.nll_loss(pred, target)
            print(loss.item())
""",
            """\
import torch
import torch.nn.functional as F
from pointnet.model import PointNetCls
classifier = PointNetCls(k=10)
optimizer = torch.optim.Adam(classifier.parameters())
for epoch in range(10):
    for i, (points, target) in enumerate(train_loader):
        optimizer.zero_grad()
        classifier = classifier.train()
        pred = classifier(points)
        loss = F.nll_loss(pred, target)
        loss.backward()
        optimizer.step()
        if i % 10 == 0:
            points, target = next(iter(test_loader))
            classifier = classifier.eval()
            with torch.no_grad():
                pred, _ = classifier(points)
            loss = F.nll_loss(pred, target)
            print(loss.item())
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
from torchvision import models

model = models.resnet18(pretrained=True)
for param in model.parameters():
    param.requires_grad = False
model.fc = nn.Linear(model.fc.in_features, 2)
optimizer = torch.optim.Adam(model.fc.parameters(), lr=1e-3)
for epoch in range(10):
    model.train()
    for img, label in train_loader:
        loss = criterion(model(img), label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    correct = 0
    for img, label in val_loader:
        out = model(img)
        correct += (out.argmax(1) == label).sum().item()
""",
            """\
import torch
import torch.nn as nn
from torchvision import models

model = models.resnet18(pretrained=True)
for param in model.parameters():
    param.requires_grad = False
model.fc = nn.Linear(model.fc.in_features, 2)
optimizer = torch.optim.Adam(model.fc.parameters(), lr=1e-3)
for epoch in range(10):
    model.train()
    for img, label in train_loader:
        loss = criterion(model(img), label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    correct = 0
    with torch.no_grad():
        for img, label in val_loader:
            out = model(img)
            correct += (out.argmax(1) == label).sum().item()
""",
        ),
        Invalid(
            """\
import torch
class M(torch.nn.Module):
    def run_epoch(self, iterator, val_iterator):
        for i, (x, y) in enumerate(iterator):
            self.optimizer.zero_grad()
            y_pred = self.__call__(x)
            loss = self.loss_op(y_pred, y)
            loss.backward()
            self.optimizer.step()
            if (i + 1) % 50 == 0:
                self.eval()
                all_preds = []
                for j, (x, y) in enumerate(val_iterator):
                    y_pred = self.__call__(x.cuda())
                    all_preds.extend(y_pred.argmax(1).numpy())
                self.train()
""",
            """\
import torch
class M(torch.nn.Module):
    def run_epoch(self, iterator, val_iterator):
        for i, (x, y) in enumerate(iterator):
            self.optimizer.zero_grad()
            y_pred = self.__call__(x)
            loss = self.loss_op(y_pred, y)
            loss.backward()
            self.optimizer.step()
            if (i + 1) % 50 == 0:
                self.eval()
                all_preds = []
                with torch.no_grad():
                    for j, (x, y) in enumerate(val_iterator):
                        y_pred = self.__call__(x.cuda())
                        all_preds.extend(y_pred.argmax(1).numpy())
                self.train()
""",
        ),
        Invalid(
            """\
import torch
from engine import train_one_epoch
if __name__ == "__main__":
    model = get_model(num_classes=2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(6):
        model.train()
        train_one_epoch(model, optimizer, train_loader, epoch)
    model.eval()
    for images, targets in test_loader:
        output = model(images)
        visualise(images, output)
""",
            """\
import torch
from engine import train_one_epoch
if __name__ == "__main__":
    model = get_model(num_classes=2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(6):
        model.train()
        train_one_epoch(model, optimizer, train_loader, epoch)
    model.eval()
    with torch.no_grad():
        for images, targets in test_loader:
            output = model(images)
            visualise(images, output)
""",
        ),
        Invalid(
            """\
import torch
def evaluate(model_path, make_env, episodes, Model, device="cpu"):
    envs = make_env()
    model = Model(envs).to(device)
    model.load_state_dict(torch.load(model_path, map_location=device))
    model.eval()
    obs, _ = envs.reset()
    returns = []
    while len(returns) < episodes:
        actions = model(torch.as_tensor(obs)).argmax(1).numpy()
        obs, _, done, _, info = envs.step(actions)
        if done.any():
            returns.append(info["return"])
    return returns
""",
            """\
import torch
@torch.no_grad()
def evaluate(model_path, make_env, episodes, Model, device="cpu"):
    envs = make_env()
    model = Model(envs).to(device)
    model.load_state_dict(torch.load(model_path, map_location=device))
    model.eval()
    obs, _ = envs.reset()
    returns = []
    while len(returns) < episodes:
        actions = model(torch.as_tensor(obs)).argmax(1).numpy()
        obs, _, done, _, info = envs.step(actions)
        if done.any():
            returns.append(info["return"])
    return returns
""",
        ),
        Invalid(
            """\
import torch
def evaluate(model, loader):
    model.eval()
    model.requires_grad_(False)
    model.head.requires_grad_(True)
    preds = []
    for x, y in loader:
        preds.append(model(x).argmax(1))
    return preds
""",
            """\
import torch
def evaluate(model, loader):
    model.eval()
    model.requires_grad_(False)
    model.head.requires_grad_(True)
    preds = []
    with torch.no_grad():
        for x, y in loader:
            preds.append(model(x).argmax(1))
    return preds
""",
        ),
        Invalid(
            """\
import torch
import numpy as np
def encode_data(model, data_loader):
    model.val_start()
    img_embs = []
    for images, captions, lengths, ids in data_loader:
        img_emb, cap_emb = model.forward_emb(images, captions, lengths, volatile=True)
        img_embs.append(img_emb.data.cpu().numpy().copy())
    return np.concatenate(img_embs)
""",
            """\
import torch
import numpy as np
def encode_data(model, data_loader):
    model.val_start()
    img_embs = []
    with torch.no_grad():
        for images, captions, lengths, ids in data_loader:
            img_emb, cap_emb = model.forward_emb(images, captions, lengths, volatile=True)
            img_embs.append(img_emb.data.cpu().numpy().copy())
    return np.concatenate(img_embs)
""",
        ),
        Invalid(
            """\
import torch.nn as nn
import torch.nn.functional as F
class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)
    def forward(self, x):
        return self.fc(x.flatten(1))
    def _test(self, loader):
        self.eval()
        correct = 0
        for x, y in loader:
            prediction = self.forward(x)
            correct += (prediction.argmax(1) == y).sum().item()
        return correct
""",
            """\
import torch.nn as nn
import torch.nn.functional as F
import torch
class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)
    def forward(self, x):
        return self.fc(x.flatten(1))
    @torch.no_grad()
    def _test(self, loader):
        self.eval()
        correct = 0
        for x, y in loader:
            prediction = self.forward(x)
            correct += (prediction.argmax(1) == y).sum().item()
        return correct
""",
        ),
        Invalid(
            """\
import torch
import torchvision
def extract_feature(model, dataloaders):
    features = []
    for img, _ in dataloaders:
        outputs = model(img.cuda())
        features.append(outputs.data.cpu())
    return torch.cat(features)
for path in checkpoints:
    model = torchvision.models.resnet50()
    model.load_state_dict(torch.load(path, map_location="cpu"))
    model = model.eval()
    gallery_feature = extract_feature(model, gallery_loader)
    query_feature = extract_feature(model, query_loader)
""",
            """\
import torch
import torchvision
def extract_feature(model, dataloaders):
    features = []
    with torch.no_grad():
        for img, _ in dataloaders:
            outputs = model(img.cuda())
            features.append(outputs.data.cpu())
    return torch.cat(features)
for path in checkpoints:
    model = torchvision.models.resnet50()
    model.load_state_dict(torch.load(path, map_location="cpu"))
    model = model.eval()
    gallery_feature = extract_feature(model, gallery_loader)
    query_feature = extract_feature(model, query_loader)
""",
        ),
        Invalid(
            """\
import torch
import torchvision
def classify_video(model, loader, video_name, class_names):
    outputs = []
    for clips in loader:
        outputs.append(model(clips.cuda()).cpu().data)
    scores = torch.cat(outputs)
    return {"video": video_name, "labels": [class_names[i] for i in scores.argmax(1).tolist()]}
model = torchvision.models.resnet50()
model.eval()
for name in videos:
    result = classify_video(model, make_loader(name), name, names)
""",
            """\
import torch
import torchvision
def classify_video(model, loader, video_name, class_names):
    outputs = []
    with torch.no_grad():
        for clips in loader:
            outputs.append(model(clips.cuda()).cpu().data)
    scores = torch.cat(outputs)
    return {"video": video_name, "labels": [class_names[i] for i in scores.argmax(1).tolist()]}
model = torchvision.models.resnet50()
model.eval()
for name in videos:
    result = classify_video(model, make_loader(name), name, names)
""",
        ),
        Invalid(
            """\
class Solver:
    def train(self, epochs):
        for epoch in range(epochs):
            self.model.train()
            tr_loss = self._run_one_epoch(epoch)
            self.model.eval()
            val_loss = self._run_one_epoch(epoch, cross_valid=True)
    def _run_one_epoch(self, epoch, cross_valid=False):
        total = 0.0
        loader = self.tr_loader if not cross_valid else self.cv_loader
        for x, y in loader:
            loss = self.criterion(self.model(x), y)
            if not cross_valid:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            total += loss.item()
        return total / len(loader)
""",
            """\
import torch
class Solver:
    def train(self, epochs):
        for epoch in range(epochs):
            self.model.train()
            tr_loss = self._run_one_epoch(epoch)
            self.model.eval()
            with torch.no_grad():
                val_loss = self._run_one_epoch(epoch, cross_valid=True)
    def _run_one_epoch(self, epoch, cross_valid=False):
        total = 0.0
        loader = self.tr_loader if not cross_valid else self.cv_loader
        for x, y in loader:
            loss = self.criterion(self.model(x), y)
            if not cross_valid:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            total += loss.item()
        return total / len(loader)
""",
        ),
        Invalid(
            """\
import torch
from model import Seq2Seq
model = Seq2Seq()
model.load_state_dict(torch.load("s2s.pth", map_location="cpu"))
model.eval()
_ = model(source_seq)
alphas = model.decoder.attn.alphas
def show(weights):
    print(weights.shape)
""",
            """\
import torch
from model import Seq2Seq
model = Seq2Seq()
model.load_state_dict(torch.load("s2s.pth", map_location="cpu"))
model.eval()
with torch.no_grad():
    _ = model(source_seq)
alphas = model.decoder.attn.alphas
def show(weights):
    print(weights.shape)
""",
        ),
        Invalid(
            """\
def run(args, loader, model, optimizer, is_validate=False):
    total = 0.0
    if is_validate:
        model.eval()
    else:
        model.train()
    for data, target in loader:
        optimizer.zero_grad() if not is_validate else None
        loss = model(data, target).mean()
        total += loss.item()
        if not is_validate and args.fp16:
            (loss * args.loss_scale).backward()
            optimizer.step()
        elif not is_validate:
            loss.backward()
            optimizer.step()
    return total
def main(args, model, optimizer, train_loader, val_loader):
    for epoch in range(10):
        run(args, train_loader, model, optimizer)
        val = run(args, val_loader, model, optimizer, is_validate=True)
""",
            """\
import torch
def run(args, loader, model, optimizer, is_validate=False):
    total = 0.0
    if is_validate:
        model.eval()
    else:
        model.train()
    for data, target in loader:
        optimizer.zero_grad() if not is_validate else None
        loss = model(data, target).mean()
        total += loss.item()
        if not is_validate and args.fp16:
            (loss * args.loss_scale).backward()
            optimizer.step()
        elif not is_validate:
            loss.backward()
            optimizer.step()
    return total
def main(args, model, optimizer, train_loader, val_loader):
    for epoch in range(10):
        run(args, train_loader, model, optimizer)
        with torch.no_grad():
            val = run(args, val_loader, model, optimizer, is_validate=True)
""",
        ),
        Invalid(
            """\
import torch
class Trainer:
    def __init__(self, model, optimizer, criterion, train_loader, test_loader):
        self.model = model
        self.optim = optimizer
        self.criterion = criterion
        self.train_data = train_loader
        self.test_data = test_loader
    def train(self, epoch):
        self.iteration(epoch, self.train_data)
    def test(self, epoch):
        self.iteration(epoch, self.test_data, train=False)
    def iteration(self, epoch, data_loader, train=True):
        total = 0.0
        for i, (x, y) in enumerate(data_loader):
            loss = self.criterion(self.model(x), y)
            if train:
                self.optim.zero_grad()
                loss.backward()
                self.optim.step()
            total += loss.item()
        print(epoch, total / len(data_loader))
""",
            """\
import torch
class Trainer:
    def __init__(self, model, optimizer, criterion, train_loader, test_loader):
        self.model = model
        self.optim = optimizer
        self.criterion = criterion
        self.train_data = train_loader
        self.test_data = test_loader
    def train(self, epoch):
        self.iteration(epoch, self.train_data)
    def test(self, epoch):
        with torch.no_grad():
            self.iteration(epoch, self.test_data, train=False)
    def iteration(self, epoch, data_loader, train=True):
        total = 0.0
        for i, (x, y) in enumerate(data_loader):
            loss = self.criterion(self.model(x), y)
            if train:
                self.optim.zero_grad()
                loss.backward()
                self.optim.step()
            total += loss.item()
        print(epoch, total / len(data_loader))
""",
        ),
        Invalid(
            """\
import torch.nn.functional as F
def run_epoch(model, loader, optimizer, is_train):
    total = 0.0
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        if is_train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total / len(loader)
def fit(model, train_loader, val_loader, optimizer, epochs):
    for epoch in range(epochs):
        model.train()
        train_loss = run_epoch(model, train_loader, optimizer, True)
        model.eval()
        val_loss = run_epoch(model, val_loader, optimizer, False)
""",
            """\
import torch.nn.functional as F
import torch
def run_epoch(model, loader, optimizer, is_train):
    total = 0.0
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        if is_train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total / len(loader)
def fit(model, train_loader, val_loader, optimizer, epochs):
    for epoch in range(epochs):
        model.train()
        train_loss = run_epoch(model, train_loader, optimizer, True)
        model.eval()
        with torch.no_grad():
            val_loss = run_epoch(model, val_loader, optimizer, False)
""",
        ),
        Invalid(
            """\
import torch
def test(args, test_loader, model):
    model.eval()
    data_list = []
    for i, (input, label) in enumerate(test_loader):
        with torch.no_grad():
            input_var = input.cuda()
        output = model(input_var)
        data_list.append(output.cpu().data[0].numpy())
    return data_list
""",
            """\
import torch
@torch.no_grad()
def test(args, test_loader, model):
    model.eval()
    data_list = []
    for i, (input, label) in enumerate(test_loader):
        with torch.no_grad():
            input_var = input.cuda()
        output = model(input_var)
        data_list.append(output.cpu().data[0].numpy())
    return data_list
""",
        ),
        Invalid(
            """\
import timm
import torch
model = timm.create_model("resnet50", num_classes=5)
model.load_state_dict(torch.load(path, map_location="cpu"))
model.eval()
dataset = ImageFolder(root, transform=build_eval_transform(384))
probs = []
for images, _ in DataLoader(dataset, batch_size=64):
    probs.append(torch.softmax(model(images), dim=1).cpu().numpy())
""",
            """\
import timm
import torch
model = timm.create_model("resnet50", num_classes=5)
model.load_state_dict(torch.load(path, map_location="cpu"))
model.eval()
dataset = ImageFolder(root, transform=build_eval_transform(384))
probs = []
with torch.no_grad():
    for images, _ in DataLoader(dataset, batch_size=64):
        probs.append(torch.softmax(model(images), dim=1).cpu().numpy())
""",
        ),
        Invalid(
            """\
import torch
def test(model, data):
    model.eval()
    pred = model(data.x, data.edge_index).argmax(dim=-1)
    return [int((pred[m] == data.y[m]).sum()) for m in (data.val_mask, data.test_mask)]
for epoch in range(200):
    train(model, data)
    val_acc, test_acc = test(model, data)
""",
            """\
import torch
@torch.no_grad()
def test(model, data):
    model.eval()
    pred = model(data.x, data.edge_index).argmax(dim=-1)
    return [int((pred[m] == data.y[m]).sum()) for m in (data.val_mask, data.test_mask)]
for epoch in range(200):
    train(model, data)
    val_acc, test_acc = test(model, data)
""",
        ),
        Invalid(
            """\
import torch
def evaluate(model, loader):
    model.eval()
    correct = 0
    # every batch
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
""",
            """\
import torch
@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = 0
    # every batch
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
""",
        ),
        Invalid(
            """\
import torch as T
for epoch in range(10):
    model.train()
    for x, y in train_loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    model.eval()
    # validation
    for x, y in val_loader:
        val_loss = criterion(model(x), y).item()
""",
            """\
import torch as T
for epoch in range(10):
    model.train()
    for x, y in train_loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    model.eval()
    # validation
    with T.no_grad():
        for x, y in val_loader:
            val_loss = criterion(model(x), y).item()
""",
        ),
        Invalid(
            """\
import torch
for epoch in range(3):
    model.train()
    for xb, yb in train_dl:
        loss_func(model(xb), yb).backward()
        opt.step()
    model.eval()
    valid_loss = sum(loss_func(model(xb), yb) for xb, yb in valid_dl)
    print(epoch, valid_loss / len(valid_dl))
""",
            """\
import torch
for epoch in range(3):
    model.train()
    for xb, yb in train_dl:
        loss_func(model(xb), yb).backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        valid_loss = sum(loss_func(model(xb), yb) for xb, yb in valid_dl)
    print(epoch, valid_loss / len(valid_dl))
""",
        ),
        Invalid(
            """\
import numpy as np
from torch import nn
def predict(net, test_loader):
    preds = []
    for batch in test_loader:
        preds.append(net(batch).argmax(-1).cpu().numpy())
    return np.concatenate(preds)
""",
            """\
import numpy as np
from torch import nn
import torch
@torch.no_grad()
def predict(net, test_loader):
    preds = []
    for batch in test_loader:
        preds.append(net(batch).argmax(-1).cpu().numpy())
    return np.concatenate(preds)
""",
        ),
        Invalid(
            """\
import torch
net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for epoch in range(2):
    for inputs, labels in trainloader:
        optimizer.zero_grad()
        loss = criterion(net(inputs), labels)
        loss.backward()
        optimizer.step()
correct = 0
for images, labels in testloader:
    outputs = net(images)
    correct += (outputs.argmax(1) == labels).sum().item()
print(correct)
""",
            """\
import torch
net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for epoch in range(2):
    for inputs, labels in trainloader:
        optimizer.zero_grad()
        loss = criterion(net(inputs), labels)
        loss.backward()
        optimizer.step()
correct = 0
with torch.no_grad():
    for images, labels in testloader:
        outputs = net(images)
        correct += (outputs.argmax(1) == labels).sum().item()
print(correct)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn.functional as F
def compute_accuracy(net, data_loader):
    correct = 0
    for features, targets in data_loader:
        correct += (net(features).argmax(1) == targets).sum().item()
    return correct / len(data_loader.dataset)
def fit(net, train_loader, test_loader, optimizer):
    for epoch in range(10):
        for features, targets in train_loader:
            loss = F.cross_entropy(net(features), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(compute_accuracy(net, test_loader))
""",
            """\
import torch
import torch.nn.functional as F
def compute_accuracy(net, data_loader):
    correct = 0
    with torch.no_grad():
        for features, targets in data_loader:
            correct += (net(features).argmax(1) == targets).sum().item()
    return correct / len(data_loader.dataset)
def fit(net, train_loader, test_loader, optimizer):
    for epoch in range(10):
        for features, targets in train_loader:
            loss = F.cross_entropy(net(features), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(compute_accuracy(net, test_loader))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 2))
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(100):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(X_train), y_train)
    loss.backward()
    optimizer.step()
model.eval()
y_pred = model(X_test)
print((y_pred.argmax(1) == y_test).float().mean())
""",
            """\
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 2))
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(100):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(X_train), y_train)
    loss.backward()
    optimizer.step()
model.eval()
with torch.no_grad():
    y_pred = model(X_test)
print((y_pred.argmax(1) == y_test).float().mean())
""",
        ),
        Invalid(
            """\
import numpy as np
import torch


def eval_model(model, x):
    return model(x)


def train(model, loader, optimizer, hparams):
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        for sample_idx in range(hparams.eval_num_samples):
            np.save("out", eval_model(model, x[sample_idx]).detach().cpu().numpy())
""",
            """\
import numpy as np
import torch


def eval_model(model, x):
    return model(x)


def train(model, loader, optimizer, hparams):
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            for sample_idx in range(hparams.eval_num_samples):
                np.save("out", eval_model(model, x[sample_idx]).detach().cpu().numpy())
""",
        ),
        Invalid(
            """\
import torch
class Experiment:
    def __init__(self, model, scaler):
        self.model = model
        self.scaler = scaler

    def vali(self, loader, criterion):
        self.model.eval()
        losses = []
        for x, y in loader:
            pred = self._one_batch(x)
            losses.append(criterion(pred.detach(), y).item())
        self.model.train()
        return sum(losses) / len(losses)

    def _one_batch(self, x):
        out = self.model(x.float())
        return self.scaler.inverse_transform(out)
""",
            """\
import torch
class Experiment:
    def __init__(self, model, scaler):
        self.model = model
        self.scaler = scaler

    def vali(self, loader, criterion):
        self.model.eval()
        losses = []
        with torch.no_grad():
            for x, y in loader:
                pred = self._one_batch(x)
                losses.append(criterion(pred.detach(), y).item())
        self.model.train()
        return sum(losses) / len(losses)

    def _one_batch(self, x):
        out = self.model(x.float())
        return self.scaler.inverse_transform(out)
""",
        ),
        Invalid(
            """\
import torch
def predict_one(net, image):
    pred = net(torch.from_numpy(image).unsqueeze(0))
    return pred.squeeze().cpu().data.numpy()
def main(paths):
    net = build_net()
    net.load_state_dict(torch.load("net.pth", map_location="cpu"))
    net.eval()
    for path in paths:
        save(path, predict_one(net, read_image(path)))
""",
            """\
import torch
@torch.no_grad()
def predict_one(net, image):
    pred = net(torch.from_numpy(image).unsqueeze(0))
    return pred.squeeze().cpu().data.numpy()
def main(paths):
    net = build_net()
    net.load_state_dict(torch.load("net.pth", map_location="cpu"))
    net.eval()
    for path in paths:
        save(path, predict_one(net, read_image(path)))
""",
        ),
        Invalid(
            """\
import torch
def run_net(net, image):
    pred = net(torch.from_numpy(image).unsqueeze(0))
    return pred.squeeze().cpu().data.numpy()
def main(paths):
    net = build_net()
    net.load_state_dict(torch.load("net.pth", map_location="cpu"))
    net.eval()
    for path in paths:
        save(path, run_net(net, read_image(path)))
""",
            """\
import torch
def run_net(net, image):
    pred = net(torch.from_numpy(image).unsqueeze(0))
    return pred.squeeze().cpu().data.numpy()
def main(paths):
    net = build_net()
    net.load_state_dict(torch.load("net.pth", map_location="cpu"))
    net.eval()
    with torch.no_grad():
        for path in paths:
            save(path, run_net(net, read_image(path)))
""",
        ),
        Invalid(
            """\
import torch
def predict_one(net, image):
    net.last = net(image)
    return net.last.argmax().item()
def train(net, loader, opt):
    for image, y in loader:
        predict_one(net, image)
        net.last.sum().backward()
        opt.step()
def main(net, paths):
    net.eval()
    for path in paths:
        save(path, predict_one(net, read_image(path)))
""",
            """\
import torch
def predict_one(net, image):
    net.last = net(image)
    return net.last.argmax().item()
def train(net, loader, opt):
    for image, y in loader:
        predict_one(net, image)
        net.last.sum().backward()
        opt.step()
def main(net, paths):
    net.eval()
    with torch.no_grad():
        for path in paths:
            save(path, predict_one(net, read_image(path)))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn


def fit(model, opt, loader, val_loader, crit):
    model.train()
    for x, y in loader:
        loss = 0
        loss += crit(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    for x, y in val_loader:
        loss += crit(model(x), y)
    return loss.item()
""",
            """\
import torch
import torch.nn as nn


def fit(model, opt, loader, val_loader, crit):
    model.train()
    for x, y in loader:
        loss = 0
        loss += crit(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        for x, y in val_loader:
            loss += crit(model(x), y)
    return loss.item()
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn

MORAN = nn.Linear(4, 4)
optimizer = torch.optim.SGD(MORAN.parameters(), lr=0.1)


def val(loader, criterion):
    total = 0
    for x, y in loader:
        preds = MORAN(x)
        total += criterion(preds, y).item()
    return total


def train_batch(x, y, criterion):
    cost = criterion(MORAN(x), y)
    optimizer.zero_grad()
    cost.backward()
    optimizer.step()
    return cost


def main(loader, val_loader, criterion):
    for i, (x, y) in enumerate(loader):
        if i % 100 == 0:
            for p in MORAN.parameters():
                p.requires_grad = False
            MORAN.eval()
            acc = val(val_loader, criterion)
        for p in MORAN.parameters():
            p.requires_grad = True
        MORAN.train()
        train_batch(x, y, criterion)
    MORAN.eval()
    return val(val_loader, criterion)
""",
            """\
import torch
import torch.nn as nn

MORAN = nn.Linear(4, 4)
optimizer = torch.optim.SGD(MORAN.parameters(), lr=0.1)


@torch.no_grad()
def val(loader, criterion):
    total = 0
    for x, y in loader:
        preds = MORAN(x)
        total += criterion(preds, y).item()
    return total


def train_batch(x, y, criterion):
    cost = criterion(MORAN(x), y)
    optimizer.zero_grad()
    cost.backward()
    optimizer.step()
    return cost


def main(loader, val_loader, criterion):
    for i, (x, y) in enumerate(loader):
        if i % 100 == 0:
            for p in MORAN.parameters():
                p.requires_grad = False
            MORAN.eval()
            acc = val(val_loader, criterion)
        for p in MORAN.parameters():
            p.requires_grad = True
        MORAN.train()
        train_batch(x, y, criterion)
    MORAN.eval()
    return val(val_loader, criterion)
""",
        ),
        Invalid(
            """\
from tqdm import tqdm


def evaluate(model, data_loader, meters):
    model.eval()
    for sample in tqdm(data_loader):
        output = model(sample)
        for field, meter in meters.items():
            meter.add(output[field].item())
    return meters
""",
            """\
from tqdm import tqdm
import torch


@torch.no_grad()
def evaluate(model, data_loader, meters):
    model.eval()
    for sample in tqdm(data_loader):
        output = model(sample)
        for field, meter in meters.items():
            meter.add(output[field].item())
    return meters
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, text, noise):
        return self.fc(text + noise)


class Trainer:
    def __init__(self, gpus):
        self.gpus = gpus

    def load_network(self):
        netG = Generator()
        netD = Generator()
        return netG, netD

    def sample(self, embeddings, batch_size):
        netG, _ = self.load_network()
        netG.eval()
        noise = torch.zeros(batch_size, 4)
        count = 0
        while count < len(embeddings):
            inputs = (torch.as_tensor(embeddings[count:count + batch_size]), noise)
            fake = nn.parallel.data_parallel(netG, inputs, self.gpus)
            save_images(fake.data.cpu().numpy())
            count += batch_size
""",
            """\
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, text, noise):
        return self.fc(text + noise)


class Trainer:
    def __init__(self, gpus):
        self.gpus = gpus

    def load_network(self):
        netG = Generator()
        netD = Generator()
        return netG, netD

    def sample(self, embeddings, batch_size):
        netG, _ = self.load_network()
        netG.eval()
        noise = torch.zeros(batch_size, 4)
        count = 0
        with torch.no_grad():
            while count < len(embeddings):
                inputs = (torch.as_tensor(embeddings[count:count + batch_size]), noise)
                fake = nn.parallel.data_parallel(netG, inputs, self.gpus)
                save_images(fake.data.cpu().numpy())
                count += batch_size
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
    def forward(self, x):
        return self.proj(x)
    def generate(self, x, max_len):
        self.eval()
        cur_len = 1
        while cur_len < max_len:
            x = self.forward(x)
            cur_len += 1
        return x
""",
            """\
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
    def forward(self, x):
        return self.proj(x)
    @torch.no_grad()
    def generate(self, x, max_len):
        self.eval()
        cur_len = 1
        while cur_len < max_len:
            x = self.forward(x)
            cur_len += 1
        return x
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
    def forward(self, x):
        return self.proj(x)
    def generate(self, loader):
        outs = []
        for x in loader:
            outs.append(self.forward(x).argmax(-1))
        return outs
""",
            """\
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
    def forward(self, x):
        return self.proj(x)
    @torch.no_grad()
    def generate(self, loader):
        outs = []
        for x in loader:
            outs.append(self.forward(x).argmax(-1))
        return outs
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
    def forward(self, x):
        return self.proj(x)
    def generate(self, x, max_len):
        cur_len = 1
        while cur_len < max_len:
            x = self.forward(x)
            cur_len += 1
        return x
def sample(decoder, x):
    return decoder.generate(x, 10)
""",
            """\
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
    def forward(self, x):
        return self.proj(x)
    @torch.no_grad()
    def generate(self, x, max_len):
        cur_len = 1
        while cur_len < max_len:
            x = self.forward(x)
            cur_len += 1
        return x
def sample(decoder, x):
    return decoder.generate(x, 10)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class GAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.G = nn.Linear(8, 8)
    def generate_latent_walk(self, z1, z2, steps):
        images = []
        for i in range(steps):
            alpha = i / steps
            images.append(self.G(z1 * alpha + z2 * (1 - alpha)).data.cpu())
        torch.save(images, "walk.pt")
""",
            """\
import torch
import torch.nn as nn
class GAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.G = nn.Linear(8, 8)
    @torch.no_grad()
    def generate_latent_walk(self, z1, z2, steps):
        images = []
        for i in range(steps):
            alpha = i / steps
            images.append(self.G(z1 * alpha + z2 * (1 - alpha)).data.cpu())
        torch.save(images, "walk.pt")
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
net = nn.Linear(8, 8).cuda()
head = nn.Linear(8, 2).cuda()
def run(val_loader):
    _, _ = [x.eval() for x in (net, head)]
    for batch in val_loader:
        out = head(net(batch[0].cuda()))
        print(out.argmax(1))
""",
            """\
import torch
import torch.nn as nn
net = nn.Linear(8, 8).cuda()
head = nn.Linear(8, 2).cuda()
def run(val_loader):
    _, _ = [x.eval() for x in (net, head)]
    with torch.no_grad():
        for batch in val_loader:
            out = head(net(batch[0].cuda()))
            print(out.argmax(1))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def predict(self, preds):
        return preds.sigmoid()

    def forward(self, x):
        preds = self.fc(x)
        if self.training:
            return preds.sum()
        with torch.no_grad():
            res = self.predict(preds)
        return res


def train(loader, eval_loader):
    net = Detector()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for x in loader:
        loss = net(x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    detections = []
    for example in eval_loader:
        detections.append(net(example))
    return detections
""",
            """\
import torch
import torch.nn as nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def predict(self, preds):
        return preds.sigmoid()

    def forward(self, x):
        preds = self.fc(x)
        if self.training:
            return preds.sum()
        with torch.no_grad():
            res = self.predict(preds)
        return res


def train(loader, eval_loader):
    net = Detector()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for x in loader:
        loss = net(x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    detections = []
    with torch.no_grad():
        for example in eval_loader:
            detections.append(net(example))
    return detections
""",
        ),
    ]


def _registers_forward_hooks(scope: cst.CSTNode) -> bool:
    """``scope`` (its nested functions included) registers forward hooks."""
    return spells_attribute(scope, ("register_forward_hook", "register_forward_pre_hook"))


def _module_of(func: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(func, cst.Attribute) and func.attr.value in ("forward", "__call__"):
        return func.value
    return func


def _forwards_its_input(fn: cst.FunctionDef, model_calls) -> bool:
    """A model call of ``fn`` is fed one of its parameters (``model(data.x)``,
    ``model(image.unsqueeze(0))``): it runs once per input a caller hands in."""
    params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
    params.discard("self")
    return any(mentions(arg.value, p) for c in model_calls for arg in c.args for p in params)


def _asks_for_eval(call: cst.Call) -> bool:
    """``agent.select_action(state, evaluate=True)``: a keyword named for
    evaluation set to True."""
    return any(a.keyword is not None and is_eval_name(a.keyword.value) and _is_true(a.value) for a in call.args)


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _is_false(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def _turns_training_off(value: cst.BaseExpression, param: str, guards: frozenset[str]) -> bool:
    """``train=False`` for a guard ``if train:``, ``cross_valid=True`` for
    a negated one, ``if not cross_valid:`` (loops.training_guards)."""
    if param in guards and _is_false(value):
        return True
    return "!" + param in guards and isinstance(value, cst.Name) and value.value == "True"
