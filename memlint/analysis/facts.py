"""ModuleFacts: the one place rules ask questions about a module.

Every analysis is computed lazily on first use and cached for the module, so a
file whose enabled rules only need import resolution never pays for dataflow.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst
from libcst.metadata import MetadataWrapper

from memlint.analysis.scope.names import ImportTable

if TYPE_CHECKING:
    import ast

    from memlint.analysis.scope.callgraph import CallGraph
    from memlint.analysis.scope.class_trees import ClassTrees
    from memlint.analysis.scope.objects import ObjectTable
    from memlint.project.view import ProjectView


class ModuleFacts:
    def __init__(
        self, wrapper: MetadataWrapper, project: ProjectView | None = None, python_tree: ast.Module | None = None
    ) -> None:
        self.wrapper = wrapper
        self.module: cst.Module = wrapper.module
        # The module's ``ast`` tree when the caller parsed one (the gate's):
        # analyses that read ``ast`` facts use it instead of parsing again.
        self.python_tree = python_tree
        # What other modules of the project say (project/view.py): callers of
        # this module's functions, names a star import brings, trackers. None
        # when the file was linted alone; rules read it through the analyses
        # below or directly, and stay silent when it is None.
        self.project = project

    def release(self) -> None:
        """Drop every analysis computed so far (each is recomputed if asked
        again). The analyses refer to these facts and to one another (``lambda:
        self.bindings``, ``RecurrentAnalysis(self)``): reference cycles that
        hold the whole tree, so without this a lint's objects are freed only
        by the cyclic collector, which walks them all first (a long-lived
        process such as ``memlint server`` pays that on every lint)."""
        for name in [n for n in vars(self) if n not in ("wrapper", "module", "project", "python_tree")]:
            del self.__dict__[name]

    @cached_property
    def names(self) -> ImportTable:
        return ImportTable(self.module, self.project.star_bindings if self.project is not None else ())

    @cached_property
    def calls(self) -> CallGraph:
        """Functions of this module and their call sites (analysis/callgraph.py)."""
        from memlint.analysis.scope.callgraph import CallGraph

        return CallGraph(self.module)

    @cached_property
    def class_trees(self) -> ClassTrees:
        """This module's classes as ``ast`` reads them, from ``python_tree``
        when there is one (analysis/scope/class_trees.py)."""
        from memlint.analysis.scope.class_trees import ClassTrees

        return ClassTrees(self.module, self.calls.classes, self.python_tree)

    @cached_property
    def objects(self) -> ObjectTable:
        """What kind of torch object a name holds: ``facts.objects.kind_of(expr)``
        -> ``Kind.MODULE/OPTIMIZER/SCALER/SCHEDULER/LOSS/LOADER`` or None
        (analysis/objects.py)."""
        from memlint.analysis.scope.objects import ObjectTable

        classes = frozenset(self.project.model_classes) if self.project is not None else frozenset()
        schedulers = frozenset(self.project.scheduler_classes) if self.project is not None else frozenset()
        parameterless = frozenset(self.project.parameterless_classes) if self.project is not None else frozenset()
        typed = self.project.types_of if self.project is not None and self.project.object_types else None
        trainers = frozenset(self.project.trainer_classes) if self.project is not None else frozenset()
        forwards = frozenset(self.project.forward_methods) if self.project is not None else frozenset()
        items = {n: (k, frozenset(p)) for n, k, p in self.project.forward_items} if self.project is not None else {}
        by_name = frozenset(self.project.forward_names) if self.project is not None else frozenset()
        return ObjectTable(
            self.wrapper,
            self.names,
            self.calls,
            schedulers,
            classes,
            parameterless,
            typed,
            trainers,
            forwards,
            items,
            forward_names=by_name,
            object_evals=frozenset(self.project.object_evals) if self.project is not None else frozenset(),
            method_evals=frozenset(self.project.method_evals) if self.project is not None else frozenset(),
            class_trees=self.class_trees,
            mode_classes=frozenset(self.project.mode_classes) if self.project is not None else frozenset(),
        )

    @cached_property
    def grad_mode(self):
        """Whether autograd records where a statement runs: ``mode_at(node)``
        -> ``GradMode.ENABLED/DISABLED/UNKNOWN`` (analysis/grad_mode.py)."""
        from memlint.analysis.autograd.grad_mode import GradModeAnalysis

        return GradModeAnalysis(self.wrapper, self.names, self.calls, lambda: self.bindings, self.project)

    @cached_property
    def loops(self):
        """Training/evaluation/batch loops and what outlives an iteration:
        ``info(loop)``, ``loop_of(node)``, ``carried_across(target, stmt)``
        (analysis/loops.py)."""
        from memlint.analysis.training.loops import LoopAnalysis

        return LoopAnalysis(self.wrapper, self.names, self.calls, self.objects, self.project)

    @cached_property
    def history(self):
        """Which values carry autograd history: ``value(expr)``,
        ``carries_history(expr)`` (analysis/history.py)."""
        from memlint.analysis.autograd.history import HistoryAnalysis

        return HistoryAnalysis(
            self.module,
            self.names,
            self.calls,
            self.objects,
            self.grad_mode,
            lambda: self.bindings,
            lambda: self.verbs,
            lambda: self.frozen,
            frozenset(self.project.off_forwards) if self.project is not None else frozenset(),
            self.project.object_returns if self.project is not None else (),
            lambda: self.eval_off_calls,
            self.project.object_backwards if self.project is not None else (),
        )

    @cached_property
    def eval_off_calls(self):
        """Model calls that return no history in eval mode
        (analysis/autograd/eval_off_calls.py)."""
        from memlint.analysis.autograd.eval_off_calls import EvalOffCalls

        return EvalOffCalls(
            self.module,
            self.calls,
            self.objects,
            lambda: self.bindings,
            lambda: self.loops,
            frozenset(self.project.eval_off) if self.project is not None else frozenset(),
            self.class_trees,
        )

    @cached_property
    def usage(self):
        """Where values go: into a backward, a return, numeric uses only
        (analysis/usage.py)."""
        from memlint.analysis.training.usage import UsageAnalysis

        return UsageAnalysis(self.wrapper, self.objects, self.calls)

    @cached_property
    def recurrent(self):
        """State fed back into a model across training iterations (RNN hidden
        state): ``carried_states(loop)`` (analysis/recurrent.py)."""
        from memlint.analysis.training.recurrent import RecurrentAnalysis

        return RecurrentAnalysis(self)

    @cached_property
    def blocks(self):
        """A statement's place in its block, what comes before and after it
        (analysis/blocks.py)."""
        from memlint.analysis.scope.blocks import Blocks
        from memlint.parse.traversal import ParentMap

        return Blocks(ParentMap(self.module))

    @cached_property
    def bindings(self):
        """What was assigned to a name, by spelling (analysis/bindings.py)."""
        from memlint.analysis.scope.bindings import Bindings

        return Bindings(self.module, self.names)

    @cached_property
    def verbs(self):
        """zero_grad/backward/step/scaler/scheduler/clip calls in order, with
        the branches they run under (analysis/training_verbs.py)."""
        from memlint.analysis.training.training_verbs import TrainingVerbs

        return TrainingVerbs(self.module, self.names, self.objects, self.bindings, self.calls, self.project)

    @cached_property
    def instance_calls(self):
        """Call sites of a method, ``inst.method(...)`` on a local instance
        included: ``sites(method)`` or None (analysis/instance_calls.py)."""
        from memlint.analysis.scope.instance_calls import InstanceCalls

        return InstanceCalls(self)

    @cached_property
    def leaves(self):
        """Leaf tensors requiring grad created in another scope: module-level
        weights, lists of them (analysis/leaves.py)."""
        from memlint.analysis.autograd.leaves import LeafTable

        return LeafTable(self)

    @cached_property
    def tensor_optimizers(self):
        """Optimizers over tensors made here, no module's parameters
        (analysis/training/tensor_optimizers.py)."""
        from memlint.analysis.training.tensor_optimizers import TensorOptimizers

        return TensorOptimizers(self)

    @cached_property
    def module_params(self):
        """In-place writes into a module's ``.weight``/``.bias``
        (analysis/module_params.py)."""
        from memlint.analysis.training.module_params import ParameterWrites

        return ParameterWrites(self)

    @cached_property
    def frozen(self):
        """Models whose parameters are all frozen: ``is_frozen(key, scope)``,
        ``ever_frozen_key(key)``, and the module's freezing helpers
        (analysis/autograd/frozen.py)."""
        from memlint.analysis.autograd.frozen import FrozenModules

        return FrozenModules(self.module, self.calls)

    @cached_property
    def options(self):
        """The module's own command-line options, read in one walk for the
        facts that ask them: integer defaults (``OptionDefaults``, MEM304)
        and the objects an option may hold (``OptionChoices``, the state
        loads) (analysis/scope/options.py)."""
        from memlint.analysis.scope.options import ModuleOptions

        return ModuleOptions(self.module)

    @cached_property
    def checkpoints(self):
        """Whether the module saves CPU-only checkpoints (``saves_only_cpu``),
        loads into a model still on the CPU (``into_cpu_model(call)``), hands
        a state dict to a helper that loads it (``helper_loads(call, arg)``)
        (analysis/training/state_loads.py)."""
        from memlint.analysis.training.state_loads import Checkpoints

        cpu_classes = frozenset(self.project.cpu_classes) if self.project is not None else frozenset()
        return Checkpoints(
            self.module,
            self.names,
            self.calls,
            imported_cpu_classes=cpu_classes,
            objects=self.objects,
            project=self.project,
            python_tree=self.python_tree,
            options=self.options,
        )

    @cached_property
    def tensor_trackers(self):
        """Tracker objects whose ``update``/``add`` keeps the tensor handed to
        them, in this module or another: ``kept(receiver, method, scope)``
        (analysis/training/tensor_trackers.py)."""
        from memlint.analysis.training.tensor_trackers import TensorTrackers

        return TensorTrackers(self.module, self.bindings, self.project, self.python_tree)

    @cached_property
    def autocast(self):
        """Which calls run inside an enabled ``autocast`` block (analysis/autocast.py)."""
        from memlint.analysis.autograd.autocast import AutocastScopes

        return AutocastScopes(self.module, self.names)
