"""Editing the argument list of a call for fixes, keeping its layout.

libcst keeps the whitespace between arguments on the commas, and the
whitespace before the closing parenthesis on the last argument (on its
trailing comma when there is one). Adding or removing an argument therefore
means moving that whitespace, so that one-argument-per-line calls stay one per
line, trailing commas survive, and a comment stays on the line it was on.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

NO_SPACE = cst.SimpleWhitespace("")
ONE_SPACE = cst.SimpleWhitespace(" ")


def keyword_arg(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional_args(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def has_star_args(call: cst.Call) -> bool:
    return any(a.star == "*" for a in call.args)


def has_star_kwargs(call: cst.Call) -> bool:
    return any(a.star == "**" for a in call.args)


def make_keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value=value, keyword=cst.Name(name), equal=cst.AssignEqual(NO_SPACE, NO_SPACE))


def _bare(ws: cst.BaseParenthesizableWhitespace) -> cst.BaseParenthesizableWhitespace:
    """The same line break and indentation, without the comment it carried."""
    if isinstance(ws, cst.ParenthesizedWhitespace):
        return ws.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[])
    return ws


def _separator(call: cst.Call) -> cst.BaseParenthesizableWhitespace:
    """Whitespace that separates two arguments of this call in its own style."""
    args = call.args
    if len(args) >= 2 and isinstance(args[-2].comma, cst.Comma):
        return _bare(args[-2].comma.whitespace_after)
    if isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        return _bare(call.whitespace_before_args)
    return ONE_SPACE


def append_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """``f(a, b)`` -> ``f(a, b, name=value)``, trailing comma and layout kept."""
    new = make_keyword(name, value)
    if not call.args:
        return call.with_changes(args=[new])
    last = call.args[-1]
    sep = _separator(call)
    trailing = last.comma if isinstance(last.comma, cst.Comma) else None
    tail = trailing.whitespace_after if trailing else last.whitespace_after_arg
    if isinstance(sep, cst.ParenthesizedWhitespace) and isinstance(tail, cst.ParenthesizedWhitespace):
        # One argument per line: a comment after the old last argument stays on its line.
        between = sep.with_changes(first_line=tail.first_line, empty_lines=tail.empty_lines)
        tail = _bare(tail)
    else:
        between = sep
    before = trailing.whitespace_before if trailing else NO_SPACE
    if trailing:
        old_last = last.with_changes(comma=cst.Comma(before, between))
        new = new.with_changes(comma=cst.Comma(NO_SPACE, tail), whitespace_after_arg=last.whitespace_after_arg)
    else:
        old_last = last.with_changes(comma=cst.Comma(before, between), whitespace_after_arg=NO_SPACE)
        new = new.with_changes(whitespace_after_arg=tail)
    return call.with_changes(args=[*call.args[:-1], old_last, new])


def prepend_positional(call: cst.Call, value: cst.BaseExpression) -> cst.Call:
    """``f(a)`` -> ``f(value, a)``, in the layout of the call."""
    if not call.args:
        return call.with_changes(args=[cst.Arg(value=value)])
    first = call.args[0]
    if len(call.args) > 1 and isinstance(first.comma, cst.Comma):
        sep = _bare(first.comma.whitespace_after)
    elif isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        sep = _bare(call.whitespace_before_args)
    else:
        sep = ONE_SPACE
    new = cst.Arg(value=value, comma=cst.Comma(NO_SPACE, sep))
    return call.with_changes(args=[new, *call.args])


def positional_to_keywords(call: cst.Call, names: Sequence[str]) -> cst.Call | None:
    """Name the positional arguments after ``names``; None when there are more
    positional arguments than names, or a ``*args`` whose length is unknown."""
    if has_star_args(call):
        return None
    positional = positional_args(call)
    if len(positional) > len(names):
        return None
    args = []
    index = 0
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            arg = arg.with_changes(keyword=cst.Name(names[index]), equal=cst.AssignEqual(NO_SPACE, NO_SPACE))
            index += 1
        args.append(arg)
    return call.with_changes(args=args)


def remove_arg(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """The call without ``arg`` (matched by identity), commas kept valid."""
    args = list(call.args)
    index = next(i for i, a in enumerate(args) if a is arg)
    if len(args) == 1:
        return call.with_changes(args=[], whitespace_before_args=NO_SPACE)
    if index < len(args) - 1:
        # Its own comma and the comment on its line go with it.
        del args[index]
        return call.with_changes(args=args)
    prev = args[index - 1]
    trailing = arg.comma if isinstance(arg.comma, cst.Comma) else None
    tail = trailing.whitespace_after if trailing else arg.whitespace_after_arg
    prev_after = prev.comma.whitespace_after if isinstance(prev.comma, cst.Comma) else NO_SPACE
    comment_before = isinstance(prev_after, cst.ParenthesizedWhitespace) and prev_after.first_line.comment is not None
    if trailing or comment_before:
        # Keep the previous comma (now trailing) so a comment after it stays valid.
        if isinstance(prev_after, cst.ParenthesizedWhitespace):
            after = (
                prev_after.with_changes(indent=tail.indent, last_line=tail.last_line)
                if isinstance(tail, cst.ParenthesizedWhitespace)
                else prev_after
            )
        else:
            after = tail
        before = prev.comma.whitespace_before if isinstance(prev.comma, cst.Comma) else NO_SPACE
        rest = arg.whitespace_after_arg if trailing else NO_SPACE  # else ``tail`` is merged into ``after``
        args[index - 1] = prev.with_changes(comma=cst.Comma(before, after), whitespace_after_arg=rest)
    else:
        args[index - 1] = prev.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=tail)
    del args[index]
    return call.with_changes(args=args)
