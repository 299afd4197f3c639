"""Each rule's card: what the screening reads of a rule, without importing it.

A rule's class (``rules/``) is a libcst visitor, so importing it imports
libcst and the analyses: most of a one-file check's time. The screening (the
token pre-filter, then the gate on Python's ``ast`` tree) needs only the
rule's code, tokens, gate and whether it reads the project, so those live
here, in a module that imports nothing of libcst: a file on which no card
passes is checked without importing a rule at all (lint/screen.py).

The card is where a rule's ``tokens``, ``gate`` and ``reads_project`` are
written: ``Rule`` gives every rule class its card's (rule/__init__.py), and
tests/test_cards.py requires the card's code, name, fix safety and default
to equal the class's, so the two cannot drift.

- ``tokens``: substrings a file must contain for the rule to possibly fire
  (the pre-filter); ``TRAINING_CODE_TOKENS`` is ``torch`` or a training verb.
- ``gate``: a condition on ``GateFacts`` (facts.py) that every file holding a
  finding of the rule satisfies: necessary, never a heuristic; None never
  skips the rule. tests/test_gate.py lints every example and corpus with the
  gate on and off and requires the same findings and fixes.
- ``reads_project``: the rule asks ``facts.project`` (other modules of the
  project), so the engine builds the file's project view for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memlint.gate.caller_evals import hands_a_model_in_eval, may_evaluate_for_callers
from memlint.gate.grad_clears import may_clear_gradients
from memlint.gate.method_stores import stores_a_method_result
from memlint.gate.moves import PER_CALL_METHODS
from memlint.gate.object_calls import calls_a_switch_method, may_evaluate_a_typed_object
from memlint.gate.sched_steps import keyed_scheduler_step, registers_a_hook
from memlint.vocabulary.input_readers import may_read_inputs
from memlint.vocabulary.kinds import BARE_METHOD_NAMES
from memlint.vocabulary.ops import CONTEXT_ONLY_NAMES
from memlint.vocabulary.tokens import TRAINING_CODE_TOKENS, names_samples

if TYPE_CHECKING:
    from memlint.gate.facts import GateFacts

Gate = Callable[["GateFacts"], bool]


@dataclass(frozen=True)
class Card:
    code: str
    name: str
    fix_safety: str  # Safety's value: "safe", "unsafe" or "none"
    tokens: tuple[str, ...]
    gate: Gate | None
    default_enabled: bool = True
    reads_project: bool = False
    # A gate that passes a file only for what another module may hold is
    # checked again once the file's project view is known (lint/engine.py
    # with_project), before libcst: ``local_gate`` is the gate without its
    # project part, ``project_matters`` what the view must hold for that part.
    local_gate: Gate | None = None
    project_matters: Callable[[Any], bool] | None = None  # of a project.view.ProjectView (a later stage)
    # A project part made of paths that read different facts of the view:
    # per path, what the file's facts need for it (a part of ``gate``) and
    # what the view must hold for it (a part of ``project_matters``). A file
    # whose local gate fails waits for the paths its facts allow only
    # (gate/project_gate.py ``held_parts``): a view holding what another
    # path needs is no reason to run the rule.
    project_parts: tuple[tuple[Gate, Callable[[Any], bool]], ...] = ()


def _mem201_gate(g: GateFacts) -> bool:
    """MEM201's gate without the project: evidence of evaluation in the file."""
    return bool(
        g.batch_evidence
        and (g.loops or g.comprehensions or g.eval_call or g.step_hooks)
        and g.loop_sites.evaluates
        and g.evaluates_with_grad
    )


def _may_evaluate_a_project_object(g: GateFacts) -> bool:
    """MEM201's path through a typed project object (``_object_forward``):
    a loop and its evidence of evaluation: a function named for it holding
    a loop, a callee or keyword named for it (``model.inference(x)``,
    ``evaluate=True``), or a switch to eval (``trainer.eval()``,
    ``.train(False)``). No import is asked for: a parameter is typed by its
    call sites in other modules (``eval_policy(agent, env)`` called from
    ``main.py`` with ``TD3()``), and its module need import nothing."""
    if not g.loops:
        return False
    # ``trainer.eval()`` before ``trainer.gen_a.encode(x)``: an eval switch (eval_call);
    # ``model.setup_to_test(p)``: a method that may switch (project/method_evals.py).
    if not (g.eval_function_loops or g.asks_an_object_to_evaluate or g.eval_call or calls_a_switch_method(g)):
        return False
    # Then a loop call that may carry it (gate/object_calls.py).
    return may_evaluate_a_typed_object(g)


def _may_run_a_named_forward(g: GateFacts) -> bool:
    """MEM201's path through a method every project class defining it runs
    a layer in (``self.model.extract_feature(x)``, ProjectView.forward_methods):
    such a call is only one more forward, and every report but
    ``_object_forward``'s (the path above) is of a batch loop, or of an
    evaluation named or switched to eval (``_mem201_gate``'s batch_evidence:
    what LoopInfo.is_batch_loop needs at least one of, none of it a forward)."""
    return bool(g.loops and g.batch_evidence and g.calls_a_model_method)


def _names_a_scheduler(g: GateFacts) -> bool:
    """A name, attribute or import part spells a scheduler (the pre-filter's
    ``sched``/``LR`` tokens, in code only): without one, a file's own steps
    order no scheduler, and only the project path (a loop, a project import)
    is left. Keeps plain training files (``optimizer.step()``) off the
    second pass."""
    return any("sched" in i or "Sched" in i or "LR" in i for i in g.idents) or keyed_scheduler_step(g)


def _ignite_handler(g: GateFacts) -> bool:
    """MEM802's ignite path (analysis/training/ignite_events.py): a ``.step()``
    with no argument, ignite imported, and an event fired before the process
    function spelled (``Events.EPOCH_STARTED``), where a scheduler is named.
    The handler's step may be last in its function, where steps_in_a_loop
    does not look."""
    return (
        "step" in g.called
        and "ignite" in g.idents
        and ("EPOCH_STARTED" in g.idents or "ITERATION_STARTED" in g.idents)
        and _names_a_scheduler(g)
    )


def _hook_handler(g: GateFacts) -> bool:
    """MEM802's engine-hook path (analysis/training/engine_hooks.py): a
    ``.step()`` with no argument and a function registered by name on an
    engine (``engine.hooks['on_start_epoch'] = on_start_epoch``), where a
    scheduler is named. The hook's step may be last in its function, where
    steps_in_a_loop does not look."""
    return "step" in g.called and registers_a_hook(g) and _names_a_scheduler(g)


def _mem202_gate(g: GateFacts, project: bool) -> bool:
    """MEM202's gate; without ``project``, its part that needs no other module
    (_may_hand_a_model_in_training_mode: a view that may supply a model in
    training mode)."""
    # Flagged states (loops.mode_before) need a ``.train()`` call or a module built here,
    # or, from another module, a caller handing a model in training mode or a function
    # called that switches one to it; and a loop grad_mode may find running without grad:
    # a fresh module counts only where mode_before may read it for that loop (the cheaper
    # builds_module first), a helper with parameters may get its mode from callers in other
    # modules; or a sampler with no loop (the rule's visit_FunctionDef), found by its name.
    return bool(
        g.grad_off
        and (g.train_call or bool(g.def_names) or g.builds_module)
        and (
            (
                g.loops
                and g.loop_may_run_without_grad
                and (
                    g.train_call
                    or (g.builds_module and g.module_built_for_a_loop_without_grad)
                    or (project and g.helper_loop_without_grad)
                    or g.plain_class_loop_without_grad
                )
            )
            or (g.sampler_def and (project or g.train_call or g.builds_module))
        )
    )


def _mem701_local(g: GateFacts) -> bool:
    """MEM701's evidence in the file: it calls ``load_state_dict`` (or peft's),
    or names it (``load_func = model.load_state_dict; load_func(sd)``:
    analysis/training/bound_loads.py)."""
    return bool(g.called & {"load_state_dict", "set_peft_model_state_dict"}) or "load_state_dict" in g.idents


def _may_hand_a_model_in_training_mode(view: Any) -> bool:
    """What of another module may put a model in training mode for MEM202:
    a caller handing one of this module's functions a model in training mode
    (Caller.modes, read by loops.external_modes; "eval" and unknown are never
    flagged), or a function called here that switches a model to training
    mode and can be read (loops._external_events; an opaque one adds only an
    unknown event)."""
    return any(mode.startswith("train") for _fn, sites in view.callers for c in sites for _key, mode in c.modes) or any(
        not f.opaque and any(kind == "train" for _r, kind in f.switches) for _name, f in view.callees
    )


def _switches_or_trains(view: Any) -> bool:
    """Some function of another module this module calls steps an optimizer
    (loops.loop_steps), or switches a model to eval or trains it and can be
    read (loops._external_events): an opaque one adds only an unknown event,
    which silences MEM203, and one that only calls ``.train()`` undoes a switch."""
    return any(
        f.steps or (not f.opaque and any(kind in ("eval", "training-phase") for _r, kind in f.switches))
        for _name, f in view.callees
    )


# MEM402: every finding involves an op whose backward needs its output (or an
# in-place flag); generic tokens such as "+=" would let every file through.
# "exp" and "elu" alone would match "except" and "help".
_OUTPUT_SAVING_TOKENS = (
    "inplace",
    "sigmoid",
    "Sigmoid",
    "tanh",
    "Tanh",
    "relu",
    "ReLU",
    "softmax",
    "Softmax",
    "softmin",
    "Softmin",
    "exp(",
    "exp_(",
    "exp2",
    "expm1",
    "sqrt",
    "reciprocal",
    "elu(",
    "elu_(",
    "ELU",
    "LU(",
)

_ZERO_GRAD_TOKENS = ("zero_grad", ".grad = None", ".grad.zero_")
# A loop may clear the gradients or step through a function of another module
# (``utils.train_step(model, opt, batch)``, project/step_helpers.py
# step_sequence). Every such finding needs a step in the iteration and a
# zero_grad: written here, or in a function the loop calls, named for what
# it does in practice (``train_step``, ``backward``). A file whose every verb
# comes from functions of other modules named otherwise is not read (the
# limit of a necessary token).
_SPLIT_STEP_TOKENS = (*_ZERO_GRAD_TOKENS, "step(", "backward")


def _may_clear_gradients_here_or_through_the_project(g: GateFacts) -> bool:
    """A ZERO_GRAD verb written here (the local gate), or a call handing
    something to a function a project import brings: a step written there
    is read at the call (training_verbs._project_call) and clears only what
    the call hands over, so a call with no argument, or one under a head
    that never names a project module (``np.stack(x)``: the summary keeps
    no such call, ProjectView.step_sequences never holds it), clears nothing."""
    return may_clear_gradients(g) or g.calls_project(with_args=True)


_CARDS = (
    Card(
        "MEM101",
        "tensor-accumulated-across-iterations",
        "safe",
        TRAINING_CODE_TOKENS,
        lambda g: g.across_iterations and g.loop_sites.accumulates,
    ),
    Card(
        "MEM102",
        "tensor-with-history-stored-across-iterations",
        "safe",
        TRAINING_CODE_TOKENS,
        lambda g: g.across_iterations and (g.loop_sites.stores or stores_a_method_result(g)),
        # A tracker class of another module may keep what ``meter.update(loss)`` hands it.
        reads_project=True,
        local_gate=lambda g: g.across_iterations and g.loop_sites.stores,
        # ``loss, p = model.train_step(x)`` stored: history only when the
        # method, in another module, returns the loss it backpropagated
        # (project/backward_returns.py).
        project_matters=lambda view: bool(view.object_backwards),
        project_parts=(
            (lambda g: g.across_iterations and stores_a_method_result(g), lambda view: bool(view.object_backwards)),
        ),
    ),
    Card(
        "MEM103",
        "retain-graph-without-second-backward",
        "unsafe",
        ("retain_graph",),
        lambda g: "retain_graph" in g.keywords,
        # A helper's callers may be in other modules (project/closed_instances.py).
        reads_project=True,
    ),
    Card("MEM104", "hidden-state-carried-across-batches", "unsafe", TRAINING_CODE_TOKENS, lambda g: g.carries_state),
    Card(
        "MEM201",
        "inference-without-no-grad",
        "safe",
        # ``model.eval()``: a module handed a model by another module needs
        # no ``import torch`` to evaluate it (protonets' utils/model.py).
        (*TRAINING_CODE_TOKENS, ".eval()"),
        lambda g: (
            _mem201_gate(g)
            or _may_evaluate_a_project_object(g)
            or _may_run_a_named_forward(g)
            or may_evaluate_for_callers(g)
        ),
        # Callers in other modules (project/): a helper that a caller elsewhere
        # runs under ``no_grad``, or backpropagates through, is not reported.
        reads_project=True,
        # A loop calling a method of a project object (``policy.select_action``)
        # is an evaluation only for what the project says of the object's
        # class (project/typed_objects.py): without such a call, the local gate.
        local_gate=_mem201_gate,
        # ``self.model.extract_feature(x)``: a method every project class
        # defining it runs a layer in (project/typed_objects.named_forward).
        # ``extract_feature(model, loader)``: every caller switched the model to
        # eval in another module (gate/caller_evals.py).
        project_matters=lambda view: bool(
            view.object_forwards or view.forward_methods or view.forward_names or hands_a_model_in_eval(view)
        ),
        # Without the local gate, only ``_object_forward`` reports through a
        # typed object (object_forwards); a named forward is one more model
        # call, read only by reports that need batch evidence
        # (_may_run_a_named_forward): a modeling file whose loop over layers
        # calls ``self.altup.predict(x)`` has no use for ``self.altup.correct``
        # being a forward.
        project_parts=(
            (_may_evaluate_a_project_object, lambda view: bool(view.object_forwards)),
            (_may_run_a_named_forward, lambda view: bool(view.forward_methods or view.forward_names)),
            (may_evaluate_for_callers, hands_a_model_in_eval),
        ),
    ),
    Card(
        "MEM202",
        "no-grad-without-eval",
        "unsafe",
        TRAINING_CODE_TOKENS,
        # Flagged states need a ``.train()`` call or a module built here (loops.mode_before),
        # and a loop grad_mode may find running without grad; a fresh module counts only
        # where mode_before may read it for that loop (the cheaper builds_module first);
        # a helper with parameters may get its mode from callers in other modules;
        # a sampler with no loop (the rule's visit_FunctionDef) needs only its name.
        lambda g: _mem202_gate(g, project=True),
        reads_project=True,
        local_gate=lambda g: _mem202_gate(g, project=False),
        project_matters=lambda view: _may_hand_a_model_in_training_mode(view),
    ),
    Card(
        "MEM203",
        "eval-mode-never-undone",
        "unsafe",
        # A loop that steps here may call another module's ``validate(model)``
        # that switches to eval: this file need not spell "eval".
        ("eval", "backward", "step"),
        # A function of another project module called in a loop may switch the mode or
        # train; its switch reaches this file only through an argument (no eval here).
        lambda g: (
            g.loops
            and ((g.eval_call and g.trains) or (g.project_imports and g.loop_calls_project(with_args=not g.eval_call)))
        ),
        reads_project=True,
        # loops.external_callee reads only ProjectView.callees (functions that
        # switch a mode, step or cannot be read): with none, only the file's
        # own switches and training count.
        local_gate=lambda g: g.loops and g.eval_call and g.trains,
        project_matters=lambda view: _switches_or_trains(view),
    ),
    Card(
        "MEM204",
        "grad-mode-call-without-with",
        "none",
        ("no_grad", "inference_mode", "enable_grad", "autocast"),
        lambda g: bool(g.bare_calls & CONTEXT_ONLY_NAMES),
    ),
    Card(
        "MEM301",
        "zero-grad-discards-accumulation",
        "unsafe",
        _SPLIT_STEP_TOKENS,
        _may_clear_gradients_here_or_through_the_project,
        reads_project=True,
        local_gate=may_clear_gradients,
        project_matters=lambda view: bool(view.step_sequences),
    ),
    # An unscaled loss only matters where it is backpropagated.
    Card("MEM302", "accumulated-loss-not-scaled", "unsafe", ("backward",), lambda g: g.backward),
    Card(
        "MEM303",
        "zero-grad-between-backward-and-step",
        "unsafe",
        _SPLIT_STEP_TOKENS,
        _may_clear_gradients_here_or_through_the_project,
        reads_project=True,
        local_gate=may_clear_gradients,
        project_matters=lambda view: bool(view.step_sequences),
    ),
    # reads_project: another module's function may be the loop's step
    # (``utils.optimizer_step(opt)``, project/step_helpers.py).
    Card("MEM304", "missing-zero-grad", "none", ("backward",), lambda g: g.backward, reads_project=True),
    Card(
        "MEM305",
        "method-referenced-not-called",
        "unsafe",
        tuple(sorted(BARE_METHOD_NAMES)),
        lambda g: bool(g.bare_attributes & BARE_METHOD_NAMES),
    ),
    Card(
        "MEM401",
        "in-place-on-leaf-requiring-grad",
        "safe",
        ("parameters()", "requires_grad", "Parameter", ".weight", ".bias"),
        lambda g: (
            (bool(g.inplace_names & g.leaf_names) or g.inplace_parameter_attr)
            and (g.grad_on_writes.inplace_parameter_attr or g.leaf_written_with_grad)
        ),
        # A weight loader (``unit.load_from(w)``) whose every caller in the
        # project holds the ``no_grad`` (summary.loading_grad_uses).
        reads_project=True,
    ),
    Card(
        "MEM402",
        "in-place-on-saved-output",
        "safe",
        _OUTPUT_SAVING_TOKENS,
        lambda g: g.inplace_after_saver or g.saved_output_written_in_place,
    ),
    Card(
        "MEM403",
        "in-place-activation-opportunity",
        "safe",
        ("Sequential",),
        lambda g: "Sequential" in g.idents,
        default_enabled=False,
    ),
    Card(
        "MEM404",
        "optimizer-step-before-shared-backward",
        "none",
        ("backward",),
        lambda g: "step" in g.called and bool(g.backward),
    ),
    # ``torch.cuda.amp``, ``cuda.amp``, ``import amp``, ``import (amp)``, ``x,amp``;
    # a bare "amp" would also match every "sample" and "clamp".
    Card("MEM501", "deprecated-cuda-amp", "safe", (".amp", " amp", "(amp", ",amp"), lambda g: "amp" in g.idents),
    Card(
        "MEM502",
        "backward-inside-autocast",
        "safe",
        ("autocast",),
        lambda g: "autocast" in g.idents and g.backward,
    ),
    Card("MEM503", "scaler-step-without-update", "safe", ("scaler", "Scaler"), lambda g: "step" in g.called),
    Card(
        "MEM504",
        "optimizer-step-bypasses-scaler",
        "unsafe",
        ("scale(",),
        lambda g: "scale" in g.called and "step" in g.called,
    ),
    Card(
        "MEM505",
        "unscaled-backward-with-scaler",
        "unsafe",
        ("scaler", "Scaler"),
        lambda g: "step" in g.called and g.backward,
    ),
    Card(
        "MEM506",
        "clip-without-unscale",
        "unsafe",
        ("clip_grad",),
        lambda g: "scale" in g.called and any(i.startswith("clip_grad") for i in g.idents),
    ),
    Card(
        "MEM507",
        "half-precision-training",
        "none",
        ("half", "float16"),
        lambda g: g.trains and bool(g.idents & {"half", "float16"}),
    ),
    Card(
        "MEM601",
        "checkpoint-sequential-single-segment",
        "none",
        ("checkpoint_sequential",),
        lambda g: "checkpoint_sequential" in g.idents,
    ),
    # A call of either function; a bare "checkpoint" matches every file that saves one.
    Card(
        "MEM602",
        "checkpoint-without-use-reentrant",
        "unsafe",
        ("checkpoint(", "checkpoint_sequential"),
        lambda g: g.checkpoint_without_reentrant and "utils" in g.idents,
    ),
    # Every report is of a load _is_load_without_map_location accepts, found
    # from a ``.load_state_dict(...)`` call (_state_dict_arg) or feeding one,
    # or handed to a helper that calls it (one of this file: its body calls
    # load_state_dict; or a library's, state_loads.LIBRARY_LOADERS); or
    # returned by a function whose caller in another module loads it into a
    # model on a GPU (Caller.gpu_state, gpu_items for an element of a returned
    # tuple), or by a method whose every call in another module does
    # (ProjectView.gpu_method_callers); or handed to a function of another
    # module that loads it (ProjectView.state_loaders, a script without a
    # ``def`` too); or the call of another module's function returning such
    # a load, in a file that calls load_state_dict (ProjectView.mixed_loaders):
    # "load" is spelled by every such file.
    Card(
        "MEM701",
        "load-without-map-location",
        "safe",
        ("load",),
        lambda g: g.load_without_map_location or _mem701_local(g),
        # A model class of another module that moves nothing builds on the CPU.
        reads_project=True,
        local_gate=lambda g: g.load_without_map_location and _mem701_local(g),
        project_matters=lambda view: (
            bool(view.state_loaders or view.mixed_loaders or view.gpu_method_callers)
            or any(c.gpu_state or c.gpu_items for _fn, sites in view.callers for c in sites)
        ),
    ),
    # Reads the project: a loop calling a method of another module's class
    # that runs a whole pass per call (ProjectView.object_passes) is no batch loop.
    Card(
        "MEM702", "empty-cache-in-loop", "safe", ("empty_cache",), lambda g: g.empty_cache_in_loop, reads_project=True
    ),
    Card(
        "MEM703",
        "loop-invariant-device-move",
        "none",
        (".to(", ".cuda("),
        lambda g: (
            g.loops
            and bool(g.called & {"to", "cuda"})
            and (
                g.batch_evidence
                or g.names_loader
                or names_samples(g.iter_tokens)
                or g.queue_gets
                or may_read_inputs(g.called, g.idents)
            )
            and g.loop_sites.moves
            or bool(g.called & {"to", "cuda"})
            and bool(g.def_names & PER_CALL_METHODS)
            and g.constant_move_in_method
            or bool(g.called & {"to", "cuda"})
            and g.constant_move_in_function
        ),
        # Classes other modules call or build once per batch, and functions they call so.
        reads_project=True,
        # The per-call path (the rule's _per_call) reports only for a class the
        # view says another module calls or builds once per batch.
        local_gate=lambda g: (
            g.loops
            and bool(g.called & {"to", "cuda"})
            and (
                g.batch_evidence
                or g.names_loader
                or names_samples(g.iter_tokens)
                or g.queue_gets
                or may_read_inputs(g.called, g.idents)
            )
            and g.loop_sites.moves
        ),
        project_matters=lambda view: bool(view.called_per_batch or view.built_per_batch or view.functions_per_batch),
    ),
    Card(
        "MEM801",
        "best-weights-by-reference",
        "unsafe",
        ("state_dict",),
        lambda g: g.state_dict_snapshot and g.best_snapshot,
    ),
    Card(
        "MEM802",
        "scheduler-before-optimizer-step",
        "unsafe",
        ("sched", "Sched", "LR", *TRAINING_CODE_TOKENS),
        # The scheduler's step: a ``.step()`` with no argument in a loop (gate/sched_steps.py);
        # through the project, that step on a typed object, or a bare method call the view
        # may say steps only schedulers (``trainer.update_learning_rate()``).
        lambda g: (g.steps_in_a_loop and _names_a_scheduler(g))
        or _ignite_handler(g)
        or _hook_handler(g)
        or bool(g.loops and g.project_imports and (g.steps_in_a_loop or g.object_method_in_a_loop)),
        # ``self.scheduler`` typed by the constructor's call sites (project/typed_objects.py).
        reads_project=True,
        # A loop calling a project object's method that steps its schedulers
        # (``trainer.update_learning_rate()``, typed_objects.method_steps):
        # without such a ``.step()`` here, only what the view says of such methods.
        local_gate=lambda g: g.steps_in_a_loop or _ignite_handler(g) or _hook_handler(g),
        project_matters=lambda view: any(set(kinds) == {"s"} for *_, kinds in view.object_steps),
    ),
    Card(
        "MEM803",
        "plateau-step-without-metric",
        "none",
        ("lr_scheduler", "LR", "Plateau"),
        lambda g: "step" in g.called,
    ),
    # A callee named ``torch.optim.lr_scheduler.X`` needs ``lr_scheduler`` in an import or the call.
    Card(
        "MEM804",
        "scheduler-verbose-deprecated",
        "safe",
        ("verbose",),
        lambda g: "verbose" in g.keywords and "lr_scheduler" in g.idents,
    ),
)

# Every rule's card by code, in code order (the order rules run and report in).
CARDS: dict[str, Card] = {card.code: card for card in _CARDS}
