"""UndoEnv: the map history's walk keeps, with changes undone per branch."""

import pytest

from memlint.analysis.scope.undo_env import ABSENT, UndoEnv


def env_of(**values):
    env = UndoEnv()
    for k, v in values.items():
        env[k.replace("__", ".")] = v
    return env


def test_undo_restores_the_state_at_the_mark_and_lists_what_changed():
    env = env_of(a=1, b=2, x__w=3)
    mark = env.mark()
    env["a"] = 10
    env["a"] = 11
    env["c"] = 5
    del env["b"]
    assert env.pop("x.w") == 3
    changed = env.undo(mark)
    assert changed == {"a": 11, "c": 5, "b": ABSENT, "x.w": ABSENT}
    assert dict(env) == {"a": 1, "b": 2, "x.w": 3}
    assert env.keys_under("x") == ["x.w"]


def test_marks_nest():
    env = env_of(a=1)
    outer = env.mark()
    env["a"] = 2
    inner = env.mark()
    env["a"] = 3
    env["b"] = 4
    assert env.undo(inner) == {"a": 3, "b": 4}
    assert dict(env) == {"a": 2}
    env["c"] = 5
    assert env.undo(outer) == {"a": 2, "c": 5}
    assert dict(env) == {"a": 1}


def test_changes_outside_marks_are_not_recorded():
    env = env_of(a=1)
    env["a"] = 2
    assert env._log == []
    mark = env.mark()
    assert env.undo(mark) == {}
    assert dict(env) == {"a": 2}


def test_keys_under_a_name_follow_sets_deletes_and_undo():
    env = env_of(x=1, x__a=2, x__a__b=3, xy__c=4)
    assert sorted(env.keys_under("x")) == ["x.a", "x.a.b"]
    assert env.keys_under("x.a") == ["x.a.b"]
    mark = env.mark()
    del env["x.a"]
    env["x.d"] = 5
    assert sorted(env.keys_under("x")) == ["x.a.b", "x.d"]
    env.undo(mark)
    assert sorted(env.keys_under("x")) == ["x.a", "x.a.b"]


def test_missing_keys():
    env = UndoEnv()
    assert env.pop("a", None) is None
    with pytest.raises(KeyError):
        del env["a"]
    with pytest.raises(KeyError):
        env.pop("a")
