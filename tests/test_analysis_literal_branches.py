"""analysis/scope/literal_branches.py: the arms a literal every call passes decides."""

import textwrap

import libcst as cst

from memlint.analysis.scope.literal_branches import (
    UNKNOWN,
    agreed_values,
    bound_values,
    decided_branches,
    fixed_values,
    literal_value,
    truth_of,
)


def _fn(src: str) -> tuple[cst.Module, cst.FunctionDef]:
    module = cst.parse_module(textwrap.dedent(src))
    fn = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    return module, fn


def _calls(module: cst.Module, fn: cst.FunctionDef) -> list[dict[str, object]]:
    calls: list[cst.Call] = []

    class _Find(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == fn.name.value:
                calls.append(node)

    module.visit(_Find())
    return [bound_values(call, fn) for call in calls]


def _expr(src: str) -> cst.BaseExpression:
    return cst.parse_expression(src)


def test_literal_values():
    assert literal_value(_expr('"cpu"')) == "cpu"
    assert literal_value(_expr("-1")) == -1
    assert literal_value(_expr("2.5")) == 2.5
    assert literal_value(_expr("True")) is True
    assert literal_value(_expr("None")) is None
    for src in ("device", "args.device", 'f"{x}"', "b'cpu'", "~1", "[1]", "x or 'cpu'"):
        assert literal_value(_expr(src)) is UNKNOWN, src
    assert literal_value(None) is UNKNOWN


def test_every_call_agrees_positional_keyword_or_default():
    module, fn = _fn(
        """
        def init_nets(cfg, n, device='cpu', flag=True):
            pass
        init_nets(cfg, 3, device='cpu')
        init_nets(cfg, 4, 'cpu', True)
        init_nets(cfg, 5)
        """
    )
    # ``n`` differs, ``cfg`` is a name: only the agreed literals are kept.
    assert agreed_values(fn, _calls(module, fn)) == {"device": "cpu", "flag": True}


def test_disagreeing_callers_variables_and_splats_decide_nothing():
    module, fn = _fn(
        """
        def init_nets(n, device='cpu', is_eval=False, mode=None):
            pass
        init_nets(1, device='cpu', is_eval=flag)
        init_nets(2, device='cuda', **opts)
        """
    )
    calls = _calls(module, fn)
    assert calls[1]["is_eval"] is UNKNOWN and calls[1]["mode"] is UNKNOWN  # the splat may fill them
    assert agreed_values(fn, calls) == {}
    assert agreed_values(fn, []) == {}  # no call: nothing is known


def test_true_and_one_are_not_the_same_literal():
    module, fn = _fn(
        """
        def f(flag=None):
            pass
        f(flag=True)
        f(flag=1)
        """
    )
    assert agreed_values(fn, _calls(module, fn)) == {}


def test_decided_tests():
    values = {"device": "cpu", "is_eval": True, "path": None, "n": 0}

    def truth(src: str) -> object:
        return truth_of(_expr(src), values)

    assert truth("device == 'cpu'") is True
    assert truth("'cuda' == device") is False
    assert truth("device != 'cpu'") is False
    assert truth("is_eval") is True
    assert truth("not is_eval") is False
    assert truth("n") is False
    assert truth("path is None") is True
    assert truth("path is not None") is False
    assert truth("device in ('cpu', 'mps')") is True
    assert truth("device not in ['cpu']") is False
    for src in ("other == 'cpu'", "device == other", "'a' == 'a'", "is_eval and x", "device.startswith('c')"):
        assert truth(src) is UNKNOWN, src
    assert truth("device is 'cpu'") is UNKNOWN  # identity of strings: not read


def test_decided_branches_of_the_function_only():
    module, fn = _fn(
        """
        def init_nets(n, device='cpu', is_eval=False):
            for i in range(n):
                if device == 'cpu':
                    net.to(device)
                elif device == 'mps':
                    pass
                else:
                    net = net.cuda()
                if is_eval:
                    net.eval()
                if n:
                    pass
            def inner():
                if device == 'cpu':
                    pass
        """
    )
    decided = decided_branches(fn, {"device": "cuda", "is_eval": True})
    tests = {cst.Module([]).code_for_node(node.test): taken for node, taken in decided.items()}
    assert tests == {"device == 'cpu'": False, "device == 'mps'": False, "is_eval": True}


def test_a_rebound_parameter_decides_nothing():
    module, fn = _fn(
        """
        def build(device='cpu', flag=True):
            if not torch.cuda.is_available():
                device = 'cpu'
            if device == 'cpu':
                pass
            if flag:
                pass
        """
    )
    assert fixed_values(fn, {"device": "cuda", "flag": True}) == {"flag": True}
    decided = decided_branches(fn, {"device": "cuda", "flag": True})
    assert [cst.Module([]).code_for_node(node.test) for node in decided] == ["flag"]
    for target in ("for device in x: pass", "with a as device: pass", "device += 'x'", "del device"):
        _, other = _fn(f"def g(device='cpu'):\n    {target}\n")
        assert fixed_values(other, {"device": "cpu"}) == {}, target
