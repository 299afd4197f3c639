"""CpuStateFrames: what both CPU-save proofs (cpu_saves.py on libcst,
project/checkpoint_files.py on ast) keep per function."""

from __future__ import annotations

from memlint.vocabulary.cpu_states import CpuStateFrames, holds_no_weights, plain_name


def test_a_move_is_read_through_the_nearest_owner():
    frames = CpuStateFrames()
    frames.moved("net", True)
    assert frames.last_move_to_cpu("net.module")
    frames.moved("net.module", False)
    assert not frames.last_move_to_cpu("net.module")
    assert not frames.last_move_to_cpu("other")


def test_a_rebinding_forgets_the_old_object_and_its_parts():
    frames = CpuStateFrames()
    frames.moved("net", True)
    frames.moved("net.module", True)
    frames.set_cpu_state("net.sd", True)
    frames.rebound("net", None, same_object=False)  # ``net = build()``
    assert not frames.last_move_to_cpu("net.module")
    assert not frames.is_cpu_state("net.sd")


def test_the_same_object_and_a_moved_new_one():
    frames = CpuStateFrames()
    frames.moved("net", True)
    frames.rebound("net", None, same_object=True)  # ``net = net.eval()``
    assert frames.last_move_to_cpu("net")
    frames.rebound("net", False, same_object=False)  # ``net = net.cuda()``
    assert not frames.last_move_to_cpu("net")


def test_a_function_has_its_own_frame():
    frames = CpuStateFrames()
    frames.set_cpu_state("sd", True)
    frames.enter()
    assert not frames.is_cpu_state("sd")
    frames.leave()
    assert frames.is_cpu_state("sd")


def test_plain_names_and_names_holding_no_weights():
    assert plain_name("self._cur_task")
    assert not plain_name("model_state")
    assert not plain_name("optim_cfg", ("optim",))
    assert holds_no_weights("self.optimizer_G")
    assert not holds_no_weights("model")
