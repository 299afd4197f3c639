"""facts.loops: training, evaluation and batch loops; what outlives an iteration."""

import libcst as cst
from analysis_helpers import facts_of, find


def loop_infos(src: str):
    facts = facts_of(src)
    return facts, facts.loops.all


def test_training_loop_directly_and_through_functions():
    src = """
    import torch
    def step(model, batch, opt):
        loss = model(batch).mean()
        loss.backward()
        opt.step()
    for epoch in range(3):
        for batch in loader:
            step(model, batch, optimizer)
    for batch in loader:
        optimizer.zero_grad()
        criterion(model(batch), y).backward()
    """
    facts, (epoch, inner, direct) = loop_infos(src)
    assert epoch.trains and inner.trains and direct.trains
    assert inner.role == "train"


def test_eval_loop_evidence():
    src = """
    import torch
    def validate(model, loader):
        for x, y in loader:
            model(x)
    def run(model, loader):
        model.eval()
        for x, y in loader:
            model(x)
    def other(model, val_loader):
        for x, y in val_loader:
            model(x)
    def plain(model, loader):
        for x, y in loader:
            model(x)
    def after_train(model, loader):
        model.eval()
        model.train()
        for x, y in loader:
            model(x)
    """
    facts, loops = loop_infos(src)
    assert [l.role for l in loops] == ["eval", "eval", "eval", None, None]


def test_helpers_of_forward_are_not_evaluation():
    """``_inference_forward`` is the model's own computation (called from
    ``forward``, directly or through another helper); its caller chooses the
    grad mode. The same name outside a model still evaluates."""
    src = """
    import torch
    class Tri(torch.nn.Module):
        def _inference_forward(self, z):
            for i in range(4):
                self.linear(z[i])
        def _chunked(self, z):
            return self._inference_forward(z)
        def forward(self, z, fast=False):
            return self._chunked(z) if fast else self.linear(z)
    def inference(model, loader):
        for x in loader:
            model(x)
    """
    facts, loops = loop_infos(src)
    assert [l.role for l in loops] == [None, "eval"]
    assert [facts.loops.eval_named(l.scope) for l in loops] == [False, True]


def test_gradient_needs_prevent_eval_role():
    src = """
    import torch
    def evaluate_saliency(model, loader):
        for x, y in loader:
            x.requires_grad_()
            model(x).sum().backward()
    def test_attack(model, loader):
        for x, y in loader:
            g = torch.autograd.grad(model(x).sum(), x)
    def validate_cam(model, loader):
        for x, y in loader:
            model(x)
            print(x.grad)
    """
    facts, loops = loop_infos(src)
    assert [l.role for l in loops] == ["train", "train", None]
    assert all(l.needs_grad for l in loops)


def test_batch_loops_and_time_step_loops():
    src = """
    import torch
    for epoch in range(epochs):
        for i in range(seq_len):
            h = cell(x[i], h)
    for t in range(x.size(0)):
        y = f(t)
    for step in range(num_steps):
        pass
    """
    facts, (epoch, time, size, steps) = loop_infos(src)
    assert epoch.is_batch_loop and not time.is_batch_loop and not size.is_batch_loop and steps.is_batch_loop


def test_carried_across_and_reinitialisation():
    src = """
    import torch
    total = 0
    for epoch in range(3):
        per_epoch = 0
        for x, y in loader:
            per_batch = 0
            loss = criterion(model(x), y)
            loss.backward()
            total += loss
            per_epoch += loss
            per_batch += loss
            x += 1
    """
    facts = facts_of(src)
    loops = facts.loops
    stmt = lambda text: find(facts.module, text, cst.AugAssign)
    inner = loops.all[1]
    assert loops.carried_across("total", stmt("total += loss")) is inner
    assert loops.carried_across("per_epoch", stmt("per_epoch += loss")) is inner
    assert loops.carried_across("per_batch", stmt("per_batch += loss")) is None


def test_a_value_reset_each_training_step_is_not_carried_across_its_counted_parts():
    # Judged against the loop that rebinds it: a step that backpropagates and
    # steps in its own body, the inner loop counting the batch's samples or
    # the discriminators; a loop over batches (``range(num_batches)``, one
    # that draws ``next(it)``) or one under an epoch loop still carries it.
    src = """
    import torch
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        per_step = 0
        per_val = 0
        for ii in range(args.batch_size):
            per_step += model(x[ii])
        for i in range(num_batches):
            per_val += model(next(val_iter))
    for epoch in range(3):
        per_epoch = 0
        for i in range(100):
            out = model(sample())
            out.backward()
            optimizer.step()
            per_epoch += out
    """
    facts = facts_of(src)
    loops = facts.loops
    stmt = lambda text: find(facts.module, text, cst.AugAssign)
    assert loops.carried_across("per_step", stmt("per_step += model(x[ii])")) is None
    assert loops.carried_across("per_val", stmt("per_val += model(next(val_iter))")) is loops.all[2]
    assert loops.carried_across("per_epoch", stmt("per_epoch += out")) is loops.all[4]


def test_counted_parts_of_a_step():
    from memlint.analysis.training.step_parts import counted_part

    def first_loop(src):
        return cst.parse_module(src).body[0]

    assert counted_part(first_loop("for i in range(len(netsD)):\n    pass\n"))
    assert counted_part(first_loop("for ii in range(args.batch_size):\n    pass\n"))
    assert not counted_part(first_loop("for i in range(num_batches):\n    pass\n"))
    assert not counted_part(first_loop("for i in range(len(loader)):\n    pass\n"))
    assert not counted_part(first_loop("for i in range(k):\n    x = it.next()\n"))
    assert not counted_part(first_loop("for x in xs:\n    pass\n"))
    assert not counted_part(first_loop("while k:\n    pass\n"))


def test_carried_across_self_attributes_in_a_per_batch_method():
    src = """
    import torch
    class Trainer:
        def step(self, batch):
            loss = self.model(batch).mean()
            loss.backward()
            self.history.append(loss)
            local = []
            local.append(loss)
        def fit(self):
            for batch in self.loader:
                self.step(batch)
    """
    facts = facts_of(src)
    loops = facts.loops
    append = find(facts.module, "self.history.append(loss)", cst.Call)
    local = find(facts.module, "local.append(loss)", cst.Call)
    assert loops.carried_across("self.history", append) is loops.all[0]
    assert loops.carried_across("local", local) is None
    step = facts.calls.functions[0]
    assert loops.per_iteration(step)


def test_carried_by_framework_in_a_lightning_training_step():
    src = """
    import lightning as L
    class Lit(L.LightningModule):
        def training_step(self, batch, batch_idx):
            self.outputs.append(batch)
            self.fresh = []
            self.fresh.append(batch)
            local = []
            local.append(batch)
            for part in batch:
                self.parts.append(part)
            for part in batch:
                self.scratch.append(part)
            self.scratch.clear()
    class Plain(Base):
        def training_step(self, batch, batch_idx):
            self.outputs.append(batch)
    """
    facts = facts_of(src)
    loops = facts.loops
    stmt = lambda text, i=0: facts.calls.parents[find(facts.module, text, cst.Call, i)]  # noqa: E731
    assert loops.carried_by_framework("self.outputs", stmt("self.outputs.append(batch)"))
    assert not loops.carried_by_framework("self.fresh", stmt("self.fresh.append(batch)"))  # re-bound first
    assert not loops.carried_by_framework("local", stmt("local.append(batch)"))
    # In a loop over the batch's samples: the hook never resets the list, so it outlives the step.
    assert loops.carried_by_framework("self.parts", stmt("self.parts.append(part)"))
    assert not loops.carried_by_framework("self.scratch", stmt("self.scratch.append(part)"))  # cleared in the step
    assert not loops.carried_by_framework("self.outputs", stmt("self.outputs.append(batch)", 1))  # not Lightning


def test_mode_events_and_mode_before():
    src = """
    import torch
    def validate(model, loader):
        with torch.no_grad():
            for x, y in loader:
                model(x)
    for epoch in range(3):
        model.train()
        for x, y in train_loader:
            criterion(model(x), y).backward()
            optimizer.step()
        validate(model, val_loader)
    """
    facts = facts_of(src)
    loops = facts.loops
    eval_loop = loops.all[0]
    assert loops.mode_before(eval_loop.node, frozenset({"model"})) == "train-trained"
    kinds = [e.kind for e in loops.mode_events(facts.module)]
    assert kinds == ["training-phase", "train", "training-phase"]


def test_mode_before_eval_and_fresh_train():
    src = """
    import torch
    import torch.nn as nn
    net = nn.Linear(2, 2)
    for x in loader:
        net(x)
    net.eval()
    for x in loader:
        net(x)
    net.train()
    for x in loader:
        net(x)
    """
    facts = facts_of(src)
    loops = facts.loops
    first, second, third = loops.all
    receivers = frozenset({"net"})
    assert loops.mode_before(first.node, receivers) == "default-fresh"
    assert loops.mode_before(second.node, receivers) == "eval"
    assert loops.mode_before(third.node, receivers) == "train-fresh"


def test_outer_loops():
    """Epoch, fold and model loops run whole batch loops per iteration."""
    src = """
    import torch
    def train_one_epoch(model, loader, opt):
        for x, y in loader:
            model(x).sum().backward()
            opt.step()
    def fit(model, loader, opt):
        for epoch in range(10):
            train_one_epoch(model, loader, opt)
    def nested(model, loader, opt):
        for e in range(3):
            for x, y in loader:
                model(x).sum().backward()
                opt.step()
    def folds(splits, make_model, train):
        for fold, (train_loader, val_loader) in enumerate(splits):
            train(make_model(), train_loader)
    """
    facts, loops = loop_infos(src)
    assert [facts.loops.outer_loop(l) for l in loops] == [False, True, True, False, True]


def test_outer_loop_ignores_a_pass_run_every_n_steps():
    """A training-step loop that validates every N steps stays a step loop;
    a round that runs a training pass every iteration is still outer."""
    src = """
    import torch
    def evaluate(model, val_loader):
        for x, y in val_loader:
            model(x)
    def steps(model, train_loader, val_loader, opt):
        for step, (x, y) in enumerate(train_loader):
            model(x).sum().backward()
            opt.step()
            if step == 1 or step % 100 == 0:
                evaluate(model, val_loader)
    def rounds(model, train_loader, val_loader, opt, n):
        for r in range(n):
            evaluate(model, train_loader)
            if r % 5 == 0:
                evaluate(model, val_loader)
    """
    facts, loops = loop_infos(src)
    assert [facts.loops.outer_loop(l) for l in loops] == [False, False, True]


def test_outer_loop_is_a_step_loop_when_its_inner_loop_accumulates():
    """An inner loop that backpropagates micro-batches and steps nothing,
    followed by the optimizer's step: each outer iteration is one training
    step. An inner loop that steps, or an outer loop that steps only a
    scheduler, keeps the outer loop an epoch loop."""
    src = """
    import torch
    def accumulate(model, opt, it, n, k):
        for step in range(n):
            for i in range(k):
                x, y = next(it)
                model(x).sum().backward()
            opt.step()
    def epochs(model, opt, sched, loader, n):
        for epoch in range(n):
            for x, y in loader:
                model(x).sum().backward()
                opt.step()
            sched.step()
    """
    facts, loops = loop_infos(src)
    outer = [facts.loops.outer_loop(l) for l in loops if l.parent is None]
    assert outer == [False, True]


def test_name_tokens_split_one_word_data_names():
    from memlint.vocabulary.tokens import name_tokens

    assert {"test", "loader"} <= name_tokens("testloader")
    assert {"val", "set"} <= name_tokens("valset")
    assert name_tokens("testament") == {"testament"}


def test_sample_tokens_name_loops_over_single_inputs():
    from memlint.vocabulary.tokens import SAMPLE_TOKENS

    _, (images, batches, imgs) = loop_infos(
        """
    for img in val_images:
        model(img)
    for x, y in train_loader:
        model(x)
    for i, im in enumerate(imgs):
        model(im)
    """
    )
    assert images.data_tokens & SAMPLE_TOKENS and imgs.data_tokens & SAMPLE_TOKENS
    assert not batches.data_tokens & SAMPLE_TOKENS


def test_eval_evidence_from_the_loaders_callers_pass():
    src = """
    def accuracy(net, data_loader):
        for x, y in data_loader:
            net(x)
    def mixed(net, data_loader):
        for x, y in data_loader:
            net(x)
    def fit(net, test_loader, train_loader):
        accuracy(net, test_loader)
        accuracy(net, data_loader=testloader)
        mixed(net, test_loader)
        mixed(net, train_loader)
    """
    _, (accuracy_loop, mixed_loop) = loop_infos(src)
    assert accuracy_loop.role == "eval"
    assert mixed_loop.role is None


def test_holds_comprehension():
    from memlint.analysis.training.loops import LoopAnalysis

    stmt = lambda s: cst.parse_statement(s)  # noqa: E731
    assert LoopAnalysis.holds_comprehension(stmt("x = sum(f(a) for a in b)\n"))
    assert LoopAnalysis.holds_comprehension(stmt("key = lambda t: t[0]\n"))
    assert not LoopAnalysis.holds_comprehension(stmt("y = model(x)\n"))


def test_a_no_grad_block_inside_a_loop_is_not_a_need_for_gradients():
    src = """
    import torch
    def test(loader, model):
        model.eval()
        for x, y in loader:
            with torch.no_grad():
                x = x.cuda()
            model(x)
        for x, y in loader:
            with torch.set_grad_enabled(flag):
                model(x)
    """
    _, (first, second) = loop_infos(src)
    assert not first.needs_grad and first.role == "eval"
    assert second.needs_grad  # grad may be switched on: it may need it


def test_training_guards_of_a_loop_shared_by_training_and_evaluation():
    src = """
    import torch
    def iteration(model, loader, opt, train=True):
        for x, y in loader:
            loss = model(x).mean()
            if train:
                opt.zero_grad()
                loss.backward()
                opt.step()
    def half_guarded(model, loader, opt, train=True):
        for x, y in loader:
            loss = model(x).mean()
            loss.backward()
            if train:
                opt.step()
    def never_trains(model, loader, train=True):
        for x, y in loader:
            model(x)
    def nested_guard(model, loader, opt, train, log):
        for x, y in loader:
            loss = model(x).mean()
            if log:
                print(loss.item())
            if train:
                if log:
                    loss.backward()
                opt.step()
    """
    facts = facts_of(src)
    fns = {fn.name.value: fn for fn in facts.calls.functions}
    loops = facts.loops
    assert loops.training_guards(fns["iteration"]) == {"train"}
    assert loops.training_guards(fns["half_guarded"]) == frozenset()
    assert loops.training_guards(fns["never_trains"]) == frozenset()
    assert loops.training_guards(fns["nested_guard"]) == {"train"}


def test_training_guards_read_a_negated_flag():
    """Conv-TasNet: ``if not cross_valid:`` guards the backward and step."""
    src = """
    def run_one_epoch(model, loader, opt, cross_valid=False):
        for x, y in loader:
            loss = model(x).mean()
            if not cross_valid:
                opt.zero_grad()
                loss.backward()
                opt.step()
    def not_of_an_expression(model, loader, opt, cross_valid=False):
        for x, y in loader:
            loss = model(x).mean()
            if not (cross_valid and x):
                loss.backward()
                opt.step()
    """
    facts = facts_of(src)
    fns = {fn.name.value: fn for fn in facts.calls.functions}
    assert facts.loops.training_guards(fns["run_one_epoch"]) == {"!cross_valid"}
    assert facts.loops.training_guards(fns["not_of_an_expression"]) == frozenset()


def test_training_guards_read_a_conjunction_an_elif_and_a_conditional_expression():
    """flownet2's ``train(..., is_validate=False)``: the training runs under
    ``if not is_validate and args.fp16:``, ``elif not is_validate:`` and
    ``optimizer.zero_grad() if not is_validate else None``."""
    src = """
    def train(args, model, loader, opt, is_validate=False):
        for x, y in loader:
            opt.zero_grad() if not is_validate else None
            loss = model(x).mean()
            if not is_validate and args.fp16:
                loss.backward()
                opt.step()
            elif not is_validate:
                loss.backward()
                opt.step()
    def either(args, model, loader, opt, is_validate=False):
        for x, y in loader:
            loss = model(x).mean()
            if not is_validate or args.tune:
                loss.backward()
                opt.step()
    def else_branch(model, loader, opt, is_validate=False):
        for x, y in loader:
            loss = model(x).mean()
            opt.zero_grad() if is_validate else opt.step()
            if not is_validate:
                loss.backward()
    """
    facts = facts_of(src)
    fns = {fn.name.value: fn for fn in facts.calls.functions}
    assert facts.loops.training_guards(fns["train"]) == {"!is_validate"}
    assert facts.loops.training_guards(fns["either"]) == frozenset()
    assert facts.loops.training_guards(fns["else_branch"]) == frozenset()  # the ``else`` arm is no guarded body


def test_runs_repeatedly_through_callers():
    src = """
    def test(model, data):
        return model(data)
    def once(model, data):
        return model(data)
    def epoch(model, data):
        test(model, data)
    for e in range(200):
        epoch(model, data)
    once(model, data)
    """
    facts = facts_of(src)
    fns = {fn.name.value: fn for fn in facts.calls.functions}
    assert facts.loops.runs_repeatedly(fns["test"])
    assert facts.loops.runs_repeatedly(fns["epoch"])
    assert not facts.loops.runs_repeatedly(fns["once"])


def test_mode_events_of_a_helper_follow_a_literal_flag():
    """``self.net_mode(train=False)`` runs only the ``else`` of the helper's
    ``if train:``; a flag the helper rebinds, or one not given as a literal,
    keeps both branches."""
    src = """
    class Solver:
        def net_mode(self, train):
            if train:
                self.net.train()
            else:
                self.net.eval()

        def flipped(self, train):
            train = not train
            if train:
                self.net.train()
            else:
                self.net.eval()

        def negated(self, train):
            if not train:
                self.net.eval()

        def run(self, flag):
            self.net_mode(train=False)
            self.net_mode(True)
            self.flipped(train=False)
            self.net_mode(flag)
            self.negated(True)
    """
    facts = facts_of(src)
    run = next(fn for fn in facts.calls.functions if fn.name.value == "run")
    kinds = [e.kind for e in facts.loops.mode_events(run)]
    assert kinds == ["eval", "train", "train", "eval", "train", "eval"]


def test_steps_each_iteration_only_for_a_step_in_the_loops_own_body():
    """The step of an inner loop (an epoch loop over batches) does not make
    the outer loop step each iteration; a step after an accumulation loop
    does, and so does a step in a batch loop's body."""
    from memlint.analysis.training.step_loops import steps_each_iteration

    src = """
    import torch
    def accumulate(model, opt, it, n, k):
        for step in range(n):
            for i in range(k):
                x, y = next(it)
                model(x).sum().backward()
            opt.step()
    def epochs(model, opt, loader, n):
        for epoch in range(n):
            for x, y in loader:
                model(x).sum().backward()
                opt.step()
    def predict(model, paths):
        for p in paths:
            model(p)
    """
    facts, loops = loop_infos(src)
    assert [steps_each_iteration(facts.loops, l) for l in loops] == [True, False, False, True, False]


def test_a_loop_threading_one_input_through_layers_is_no_evaluation_loop():
    src = """
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
        def predict(self, x):
            outs = []
            for conv in self.convolutions:
                outs.append(conv(x))
            return outs
    """
    facts, (layers, ensemble) = loop_infos(src)
    assert layers.role is None and not layers.is_batch_loop
    assert ensemble.role == "eval"
