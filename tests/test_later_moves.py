"""later_moves.py: a model built, loaded, then moved by the same scope."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.training.later_moves import moved_after_load, scope_body


def _judge(source: str, name: str = "net", may_move=lambda func: False, stays=lambda call: False) -> bool:
    module = cst.parse_module(source)
    fn = module.body[-1]
    assert isinstance(fn, cst.FunctionDef)
    body = scope_body(fn)
    assert body is not None
    load = next(s for s in body if "load_state_dict" in module.code_for_node(s))
    return moved_after_load(body, load, name, may_move, stays)


def test_built_loaded_then_moved():
    assert _judge("def f(p):\n    net = Net()\n    net.load_state_dict(torch.load(p))\n    net = net.cuda()\n")


def test_wrapped_and_moved_after_the_load():
    src = "def f(p):\n    net = make()\n    if p:\n        net.load_state_dict(torch.load(p))\n    net = nn.DataParallel(net).cuda()\n"
    assert _judge(src)


def test_moved_in_place_after_the_load():
    assert _judge("def f(p, d):\n    net = Net()\n    net.load_state_dict(torch.load(p))\n    net.to(d)\n")


def test_no_move_after_the_load():
    assert not _judge("def f(p):\n    net = Net()\n    net.load_state_dict(torch.load(p))\n    return net\n")


def test_move_only_in_a_branch_after_the_load():
    src = "def f(p, c):\n    net = Net()\n    net.load_state_dict(torch.load(p))\n    if c:\n        net = net.cuda()\n"
    assert not _judge(src)


def test_moved_before_the_load():
    src = "def f(p):\n    net = Net()\n    if p:\n        net.cuda()\n    net.load_state_dict(torch.load(p))\n    net = net.cuda()\n"
    assert not _judge(src)


def test_constructor_given_a_device():
    src = "def f(p, d):\n    net = Net(device=d)\n    net.load_state_dict(torch.load(p))\n    net = net.cuda()\n"
    assert not _judge(src)


def test_constructor_that_may_move():
    src = "def f(p):\n    net = Net()\n    net.load_state_dict(torch.load(p))\n    net = net.cuda()\n"
    assert not _judge(src, may_move=lambda func: True)


def test_handed_to_other_code_before_the_load():
    src = "def f(p):\n    net = Net()\n    t = Trainer(net)\n    net.load_state_dict(torch.load(p))\n    net = net.cuda()\n"
    assert not _judge(src)
    assert _judge(src, stays=lambda call: True)


def test_rebuilt_by_a_call_that_stays():
    src = "def f(p, c):\n    net = Net()\n    if c:\n        net = half(net)\n    net.load_state_dict(torch.load(p))\n    net = net.cuda()\n"
    assert not _judge(src)
    assert _judge(src, stays=lambda call: True)


def test_rebound_to_another_model_before_the_load():
    src = "def f(p, other):\n    net = Net()\n    net = other\n    net.load_state_dict(torch.load(p))\n    net = net.cuda()\n"
    assert not _judge(src)


def test_a_moved_part_handed_to_the_constructor():
    src = "def f(p):\n    base = Base()\n    base.cuda()\n    net = Net(base)\n    net.load_state_dict(torch.load(p))\n    net = net.cuda()\n"
    assert not _judge(src)


def test_a_move_in_a_nested_function_does_not_count():
    src = (
        "def f(p):\n    net = Net()\n    net.load_state_dict(torch.load(p))\n    def g():\n        return net.cuda()\n"
    )
    assert not _judge(src)


def test_logged_and_wrapped_on_several_gpus_before_the_load():
    src = (
        "def f(p, n):\n    net = Net()\n    logger.info(net)\n    if n > 1:\n        net = nn.DataParallel(net)\n"
        "    net.load_state_dict(torch.load(p))\n    net = net.to(d)\n"
    )
    assert _judge(src)


def test_wrapped_with_device_ids_before_the_load():
    src = (
        "def f(p, ids):\n    net = Net()\n    net = nn.DataParallel(net, device_ids=ids)\n"
        "    net.load_state_dict(torch.load(p))\n    net = net.cuda()\n"
    )
    assert not _judge(src)


def test_built_on_both_branches_of_an_if_else():
    src = "def f(p, c):\n    if c:\n        net = Net(1)\n    else:\n        net = Net()\n    net.load_state_dict(torch.load(p))\n    net = net.cuda()\n"
    assert _judge(src)


def test_an_if_without_else_or_a_moving_branch_is_no_build():
    no_else = "def f(p, c, net):\n    if c:\n        net = Net(1)\n    net.load_state_dict(torch.load(p))\n    net = net.cuda()\n"
    moving = "def f(p, c):\n    if c:\n        net = Net(1)\n    else:\n        net = Net().cuda()\n    net.load_state_dict(torch.load(p))\n    net = net.cuda()\n"
    assert not _judge(no_else)
    assert not _judge(moving)
