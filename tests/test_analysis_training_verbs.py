"""facts.verbs: the training verbs of a module, in order, with their branches."""

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from memlint.analysis.facts import ModuleFacts
from memlint.analysis.training.training_verbs import VerbKind, accumulation_divisor


def facts_of(src: str) -> ModuleFacts:
    return ModuleFacts(MetadataWrapper(cst.parse_module(textwrap.dedent(src)), unsafe_skip_copy=True))


def kinds(facts):
    return [(v.kind, v.target, v.scaler) for v in facts.verbs.verbs if v.kind is not VerbKind.CALL]


def test_classifies_the_training_verbs():
    facts = facts_of(
        """
        import torch
        from torch import optim
        optimizer = optim.SGD(model.parameters(), lr=0.1)
        scheduler = optim.lr_scheduler.StepLR(optimizer, 1)
        scaler = torch.amp.GradScaler("cuda")
        for x, y in loader:
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            for p in model.parameters():
                p.grad = None
        """
    )
    assert kinds(facts) == [
        (VerbKind.ZERO_GRAD, "optimizer", None),
        (VerbKind.BACKWARD, None, "scaler"),
        (VerbKind.SCALE, None, "scaler"),
        (VerbKind.UNSCALE, "optimizer", "scaler"),
        (VerbKind.CLIP, None, None),
        (VerbKind.STEP, "optimizer", "scaler"),
        (VerbKind.UPDATE, None, "scaler"),
        (VerbKind.SCHED_STEP, "scheduler", None),
        (VerbKind.ZERO_GRAD, None, None),
    ]


def test_env_step_is_not_an_optimizer_step_and_frameworks_are_marked():
    facts = facts_of(
        """
        for episode in range(10):
            state, reward, done, info = env.step(action)
            accelerator.backward(loss)
            model_engine.backward(loss)
            optimizer.step(closure)
        """
    )
    verbs = [v for v in facts.verbs.verbs if v.kind is not VerbKind.CALL]
    assert [(v.kind, v.framework) for v in verbs[:2]] == [(VerbKind.BACKWARD, True), (VerbKind.BACKWARD, True)]
    assert verbs[2].kind is VerbKind.STEP and verbs[2].closure


def test_paths_follow_branches_elif_else_try_and_loops():
    facts = facts_of(
        """
        for i, b in enumerate(loader):
            if i % 2 == 0:
                loss.backward()
            elif i == 3:
                optimizer.step()
            else:
                scheduler.step()
            try:
                scaler.update()
            except RuntimeError:
                model.zero_grad()
            with ctx:
                if ready: optimizer.step()
        else:
            optimizer.step()
        """
    )
    paths = [[(type(n).__name__, f) for n, f in v.path] for v in facts.verbs.verbs]
    assert paths == [
        [("For", "body"), ("If", "body")],
        [("For", "body"), ("If", "orelse"), ("If", "body")],
        [("For", "body"), ("If", "orelse"), ("If", "orelse")],
        [("For", "body"), ("Try", "body")],
        [("For", "body"), ("Try", "handlers")],
        [("For", "body"), ("With", "body"), ("If", "body")],
        [("For", "orelse")],
    ]
    assert [len(v.loops) for v in facts.verbs.verbs] == [1, 1, 1, 1, 1, 1, 0]


def test_conditions_and_dominance():
    facts = facts_of(
        """
        for i, (x, y) in enumerate(loader):
            optimizer.zero_grad()
            with autocast():
                loss.backward()
            if (i + 1) % 4 == 0:
                optimizer.step()
        """
    )
    verbs = facts.verbs
    zero, backward, step = verbs.verbs
    loop = step.loop
    assert verbs.conditions(backward, loop) == ()  # ``with`` always runs
    assert len(verbs.conditions(step, loop)) == 1
    assert verbs.dominates(zero, step, loop) and verbs.dominates(zero, backward, loop)
    assert not verbs.dominates(step, zero, loop)
    assert verbs.region(step) is loop and verbs.in_iteration(loop) == [zero, backward, step]


def test_reached_follows_local_functions():
    facts = facts_of(
        """
        def train(epoch):
            for x in loader:
                optimizer.step()

        for epoch in range(3):
            scheduler.step()
            train(epoch)
        """
    )
    verbs = facts.verbs
    loop = [v for v in verbs.verbs if v.kind is VerbKind.CALL][0].loop
    reached = verbs.reached(verbs.in_loop(loop))
    assert VerbKind.STEP in {v.kind for v in reached}


def test_accumulation_divisor():
    def divisor(test):
        found = accumulation_divisor(cst.parse_expression(test))
        return None if found is None else cst.Module([]).code_for_node(found)

    assert divisor("(i + 1) % accum == 0") == "accum"
    assert divisor("step % args.gradient_accumulation_steps == 0 or step == last") == "args.gradient_accumulation_steps"
    assert divisor("not (i + 1) % 4") == "4"
    assert divisor("i % 1 == 0") is None
    assert divisor("i % n != 0") is None
    assert divisor("epoch > 0") is None


def test_pairs_per_optimizer():
    facts = facts_of(
        """
        import torch.optim as optim
        opt_d = optim.Adam(netD.parameters())
        opt_g = optim.Adam(netG.parameters())
        for real in loader:
            netD.zero_grad()
            opt_g.zero_grad()
            loss_d.backward()
            opt_d.step()
            opt_g.step()
        """
    )
    verbs = facts.verbs
    d_zero, g_zero, _, d_step, g_step = verbs.verbs
    steps = [d_step, g_step]
    assert verbs.pairs(d_zero, d_step, steps) is True
    assert verbs.pairs(d_zero, g_step, steps) is False
    assert verbs.pairs(g_zero, g_step, steps) is True
    assert verbs.pairs(g_zero, d_step, steps) is False


def test_scaler_disabled_is_read_in_the_function_that_uses_it():
    facts = facts_of(
        """
        import torch
        def a():
            scaler = torch.amp.GradScaler("cuda", enabled=False)
            scaler.step(opt)
        def b():
            scaler = torch.amp.GradScaler("cuda")
            scaler.step(opt)
        """
    )
    verbs = facts.verbs
    step_a, step_b = [v for v in verbs.verbs if v.kind is VerbKind.STEP]
    assert verbs.scaler_disabled("scaler", step_a.scope)
    assert not verbs.scaler_disabled("scaler", step_b.scope)


def test_lambda_bodies_are_not_recorded():
    facts = facts_of("optimizer.step(lambda: loss.backward())\n")
    assert [v.kind for v in facts.verbs.verbs] == [VerbKind.STEP]


def test_optimizer_modules_names_the_modules_whose_parameters_it_owns():
    facts = facts_of(
        """
        import itertools
        import torch
        opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
        opt_g = torch.optim.Adam(itertools.chain(G.parameters(), E.parameters()))
        params = list(self.head.parameters())
        opt_h = torch.optim.SGD(params, lr=0.1)
        opt_x = make_optimizer(cfg)
        """
    )
    verbs = facts.verbs
    assert verbs.optimizer_modules("opt_d") == {"D"}
    assert verbs.optimizer_modules("opt_g") == {"G", "E"}
    assert verbs.optimizer_modules("opt_h") == {"self.head"}
    assert verbs.optimizer_modules("opt_x") is None
    assert verbs.optimizer_modules("opt_unknown") is None


def test_follows_a_verb_that_runs_after_it_on_every_path():
    facts = facts_of(
        """
        for i, x in enumerate(loader):
            if i % 5 == 0:
                opt_a.step()
            if skip:
                opt_b.step()
                continue
            if other:
                opt_c.step()
            loss.backward()
            if late:
                torch.autograd.backward(late_loss)
        """
    )
    verbs = facts.verbs
    loop = facts.module.body[0]
    steps = {v.call.func.value.value: v for v in verbs.verbs if v.kind is VerbKind.STEP}
    first, last = [v for v in verbs.verbs if v.kind is VerbKind.BACKWARD]
    assert verbs.follows(steps["opt_a"], first, loop)
    assert verbs.follows(steps["opt_c"], first, loop)
    assert not verbs.follows(steps["opt_b"], first, loop)  # ``continue`` skips it
    assert not verbs.follows(steps["opt_a"], last, loop)  # under its own ``if``
    assert not verbs.follows(first, steps["opt_a"], loop)  # before it


@pytest.mark.parametrize(
    "second, expected",
    [
        ("if i % g_every == 0:", True),  # both hold at a multiple of both periods
        ("if 0 == i % 3:", True),
        ("if i % g_every == 1:", False),  # may exclude the first
        ("if epoch % g_every == 0:", False),  # another counter
        ("if phase == 'g':", False),
    ],
)
def test_co_occur_on_one_counter(second, expected):
    facts = facts_of(
        f"""
        for i, (x, y) in enumerate(loader):
            if i % d_every == 0:
                d_loss.backward()
                opt_d.step()
            {second}
                g_loss.backward()
        """
    )
    verbs = facts.verbs
    _, step, g_backward = verbs.verbs
    assert verbs.co_occur(step, g_backward, step.loop) is expected
    assert not verbs.follows(step, g_backward, step.loop)


def test_co_occur_stops_at_a_jump():
    facts = facts_of(
        """
        for i, (x, y) in enumerate(loader):
            if i % d_every == 0:
                opt_d.step()
                continue
            if i % g_every == 0:
                g_loss.backward()
        """
    )
    step, g_backward = facts.verbs.verbs
    assert not facts.verbs.co_occur(step, g_backward, step.loop)
