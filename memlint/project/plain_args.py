"""The arguments of a call that hold no autograd graph: settings, not tensors.

A penalty helper of another module (``WGANGPGradientPenalty(real, fake, D,
weight)``) backpropagates a graph that runs through its ``weight``; whether a
caller could backpropagate through that graph again depends on what it
passes. ``self.config.lambdaGP``, ``args.gp_weight``, ``10.0`` are settings:
no caller's graph can reach the helper's through them (MEM103 across modules).

An argument counts when it is a literal (a number, a string, a bool, None,
possibly negated) or a dotted read whose receiver chain names a settings
object (``config``, ``cfg``, ``args``, ``opt``, ``hparams``...), as in
``self.config.lambdaGP``; the last attribute alone does not count
(``self.args`` itself is read as the object). Anything else (a name, a call,
arithmetic) is not known and stays out. Read on Python's ``ast`` by the
module summary, once per call of another module's function.
"""

from __future__ import annotations

import ast

# Receivers whose attributes are settings: a configuration object, an
# argparse namespace, a hyper-parameter table.
SETTINGS_RECEIVERS = frozenset(
    {"config", "cfg", "conf", "configs", "args", "opt", "opts", "options", "hparams", "hp", "hyperparams", "settings"}
)


def plain_args(call: ast.Call) -> tuple[str, ...]:
    """The parameter keys ("0", "1"... by position, else the keyword) to
    which ``call`` passes a literal or a settings value; none after a
    ``*args`` (the positions after it are not known)."""
    out: list[str] = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        if _plain(arg):
            out.append(str(i))
    out.extend(k.arg for k in call.keywords if k.arg is not None and _plain(k.value))
    return tuple(out)


def _plain(expr: ast.expr) -> bool:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        expr = expr.operand
    if isinstance(expr, ast.Constant):
        return True
    if not isinstance(expr, ast.Attribute):
        return False
    cur: ast.expr = expr.value
    while isinstance(cur, ast.Attribute):
        if cur.attr in SETTINGS_RECEIVERS:
            return True
        cur = cur.value
    return isinstance(cur, ast.Name) and cur.id in SETTINGS_RECEIVERS
