"""plain_args: the arguments of a call that are settings (a literal, or a
read of a configuration object's attribute), never a caller's graph."""

import ast

import pytest

from memlint.project.plain_args import plain_args


def _plain(src: str) -> tuple[str, ...]:
    call = ast.parse(src).body[0].value
    assert isinstance(call, ast.Call)
    return plain_args(call)


@pytest.mark.parametrize(
    "src, expected",
    [
        ("f(real, fake, D, self.config.lambdaGP, backward=True)", ("3", "backward")),
        ("f(x, 10.0, -1, None, 'mean')", ("1", "2", "3", "4")),
        ("f(x, args.gp_weight, w=cfg.train.weight)", ("1", "w")),
        ("f(x, weight)", ()),  # a name: what it holds is not known
        ("f(x, self.weight, self.config)", ()),  # an attribute of no settings object; the object itself
        ("f(x, 2 * args.w, args.w.clone())", ()),  # an expression, a call
        ("f(*rest, args.w)", ()),  # after ``*rest`` the positions are not known
        ("f(x, opt.lambda_gp, **kw)", ("1",)),
    ],
)
def test_plain_args(src, expected):
    assert _plain(src) == expected
