"""Command-line values shared by the CLIs (gpu_sched_env/core/cliargs.py)."""

import pytest

from gpu_sched_env.core.cliargs import literal, parse_param, parse_params, split_top
from gpu_sched_env.core.errors import ConfigError


@pytest.mark.parametrize(
    "text, value",
    [
        ("3", 3),
        ("2.5", 2.5),
        ("1e-3", 1e-3),
        ("True", True),
        ("(1, 2)", (1, 2)),
        ("spt", "spt"),
        ("[cadr_defer_exp,spt]", ["cadr_defer_exp", "spt"]),
        ("[a, 2, [b,c]]", ["a", 2, ["b", "c"]]),
        ("[]", []),
        ("['x', 'y']", ["x", "y"]),
    ],
)
def test_literal(text, value):
    assert literal(text) == value


def test_split_top_keeps_brackets_whole():
    assert split_top("a=1,b=[x,y],c=(1,2)") == ["a=1", "b=[x,y]", "c=(1,2)"]
    assert split_top("") == [""]


def test_parse_param_names_its_flag_and_what_is_allowed():
    assert parse_param(" n = 4") == ("n", 4)
    assert parse_params(["a=1", "a=2", "b=[x,y]"]) == {"a": 2, "b": ["x", "y"]}
    with pytest.raises(ConfigError, match=r"--knob 'n': expected NAME=VALUE with NAME a rollout knob"):
        parse_params(["n"], "a rollout knob", flag="--knob")
    with pytest.raises(ConfigError, match=r"--param '=3'"):
        parse_param("=3", lambda: "anything")


def _unwritable(argv):
    open("/nonexistent_gpu_sched_dir/x.md", "w")


def _refusing(argv):
    from gpu_sched_env.core.errors import ConfigError

    raise ConfigError("--n 0: allowed: an integer ≥ 1")


def test_the_dispatcher_turns_a_commands_oserror_and_configerror_into_one_line(capsys):
    """A command that lets an OSError or a ConfigError escape: one line naming it, exit 2, no traceback."""
    from gpu_sched_env.core.commands import Command, Group, dispatch

    here = "tests.core.test_cliargs"
    group = Group("tool", {"write": Command(f"{here}:_unwritable", "w"), "check": Command(f"{here}:_refusing", "c")})
    assert dispatch(group, ["write"], "tool") == 2
    err = capsys.readouterr().err.strip()
    assert err == "tool write: '/nonexistent_gpu_sched_dir/x.md': No such file or directory (FileNotFoundError)"
    assert dispatch(group, ["check"], "tool") == 2
    assert capsys.readouterr().err.strip() == "tool check: --n 0: allowed: an integer ≥ 1"
