"""Methods of another module's class that run a whole pass over data per
call (project/data_passes.py): PyTorch-RL's ``agent.collect_samples(n)``
rolls a policy out for a whole batch of environment steps, so the loop
calling it once per iteration is no batch loop, and MEM702 leaves its
``torch.cuda.empty_cache()`` alone (eighth batch, a2c_gym.py / trpo_gym.py)."""

from __future__ import annotations

import ast
import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.data_passes import passing
from memlint.project.object_types import object_types
from memlint.project.summary import summarise

_AGENT = """
    import torch

    def collect_samples(env, policy, min_batch_size):
        num_steps = 0
        memory = []
        while num_steps < min_batch_size:
            state = env.reset()
            for t in range(10000):
                with torch.no_grad():
                    action = policy(torch.tensor(state))
                state, reward, done, _ = env.step(action)
                memory.append((state, reward))
                num_steps += 1
                if done:
                    break
        return memory

    class Agent:
        def __init__(self, env, policy):
            self.env = env
            self.policy = policy

        def collect_samples(self, min_batch_size):
            self.policy.cpu()
            return collect_samples(self.env, self.policy, min_batch_size)

        def sample_once(self, state):
            return self.policy(torch.tensor(state))
"""

_MAIN = """
    import torch
    from core.agent import Agent

    agent = Agent(env, policy_net)

    def main_loop():
        for i_iter in range(args.max_iter_num):
            batch = agent.{method}(args.min_batch_size)
            update_params(batch)
            torch.cuda.empty_cache()

    main_loop()
"""


def _project(tmp_path, method: str, agent: str = _AGENT):
    write_project(
        tmp_path,
        {"setup.py": "", "core/__init__.py": "", "core/agent.py": agent, "main.py": _MAIN.format(method=method)},
    )
    return tmp_path / "main.py"


def test_a_loop_running_a_rollout_method_of_another_module_is_no_batch_loop(tmp_path):
    assert finding_lines(_project(tmp_path, "collect_samples"), "MEM702") == []


def test_a_method_without_a_pass_leaves_the_loop_a_batch_loop(tmp_path):
    """``sample_once`` runs the policy once: each iteration may be one step."""
    assert finding_lines(_project(tmp_path, "sample_once"), "MEM702") == [11]


def test_a_method_the_class_does_not_define_is_not_known(tmp_path):
    """An inherited or missing method: nothing is known of it."""
    assert finding_lines(_project(tmp_path, "collect"), "MEM702") == [11]


def test_a_name_some_function_rebinds_through_global_is_not_typed(tmp_path):
    reset = "\n    def reset():\n        global agent\n        agent = make_agent()\n"
    main = _MAIN.format(method="collect_samples") + reset
    write_project(tmp_path, {"setup.py": "", "core/__init__.py": "", "core/agent.py": _AGENT, "main.py": main})
    assert finding_lines(tmp_path / "main.py", "MEM702") == [11]


def test_passes_through_module_functions_and_self_methods():
    tree = ast.parse(textwrap.dedent(_AGENT))
    facts = {f.name: f.passes for f in summarise(tree).functions}
    assert facts == {
        "Agent.__init__": False,
        "Agent.collect_samples": True,
        "Agent.sample_once": False,
        "collect_samples": True,
    }


def test_passing_walks_callers_back():
    own = {"a": False, "b": False, "c": True, "d": False}
    calls = {"a": {"b"}, "b": {"c"}, "d": {"a", "x"}}
    assert passing(own, calls) == {"a", "b", "c", "d"}
    assert passing({"a": False}, {"a": {"a"}}) == set()


def test_a_module_level_typed_name_is_typed_in_the_functions_that_read_it():
    tree = ast.parse(textwrap.dedent(_MAIN.format(method="collect_samples")))
    objects = object_types(tree, {"Agent": "core.agent.Agent"}, False)
    assert ("main_loop", "agent", ("core.agent.Agent",)) in objects.bound
    assert ("main_loop", "agent", "collect_samples") in objects.receivers
