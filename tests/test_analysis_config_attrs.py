"""analysis/scope/config_attrs.py: ``self`` attributes that only hold plain numbers."""

import textwrap

import libcst as cst

from memlint.analysis.scope.config_attrs import plain_number_attributes


def attrs(src: str) -> set[str]:
    module = cst.parse_module(textwrap.dedent(src))
    cls = next(s for s in module.body if isinstance(s, cst.ClassDef))
    return set(plain_number_attributes(cls))


def test_numbers_and_numeric_init_parameters():
    src = """
    class Blur(nn.Module):
        def __init__(self, size=11, sigma=1.5, eps=-1e-6, name="blur"):
            self.size, self.sigma = size, sigma
            self.eps = eps
            self.k = 3
            self.name = name
    """
    assert attrs(src) == {"size", "sigma", "eps", "k"}


def test_a_parameter_or_tensor_anywhere_disqualifies():
    src = """
    class Blur(nn.Module):
        def __init__(self, sigma=1.5, learn=False, scale=2.0, t=0.1):
            self.sigma = sigma
            if learn:
                self.sigma = nn.Parameter(torch.tensor(sigma))
            self.scale = scale
            self.t = t
        def anneal(self):
            self.scale *= 0.9
            self.t, self.other = make()
    """
    assert attrs(src) == set()


def test_parameters_without_numeric_defaults_do_not_count():
    src = """
    class Head(nn.Module):
        def __init__(self, tau, weight: float = None):
            self.tau = tau
            self.weight = weight
    """
    assert attrs(src) == set()
