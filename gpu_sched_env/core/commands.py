"""The command machinery of both doors (``gpu-sched`` and ``python -m studies``): commands as data.

A :class:`Command` names its function as a ``"package.module:function"`` string, resolved by
:func:`pkgutil.resolve_name` only when the command runs, so a table costs no import and a heavy
command (PyTorch, JAX) loads nothing until it is called. A :class:`Group` is a table of commands
and of nested groups (``bench``); :func:`dispatch` walks it: ``--help`` at every
level, an unknown name gets the usage with the allowed names (exit status 2), and a command's
``argparse`` usage line reads as the words a user typed (``sys.argv[0]`` is set to them while it
runs). Every function behind a command takes ``argv`` and returns its exit status (``None`` = 0).

A group with a ``flag`` is one command with parts: a question answered in several ways (``python
-m studies reward --part scale``, ``versus-rule --engine jax``), each part a module of its own. The
part is chosen by the flag, anywhere among the arguments, and a group with a ``default`` runs that
part when the flag is not given, so the command named alone does its main job.

A string target is also how ``gpu-sched`` reaches a command implemented in the agents layer
(``evaluate``) without ``gpu_sched_env`` importing ``gpu_sched_agents``: when that module is not
installed, the command says so (exit status 2) instead of failing on import.
"""

from __future__ import annotations

import pkgutil
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.extras import MissingExtraError

Main = Callable[[list[str]], "int | None"]


class CommandUnavailable(ConfigError):
    """A command's module is not installed here (e.g. a plug-in of another package)."""


@dataclass(frozen=True)
class Command:
    """One command: ``target`` = ``"package.module:function"`` (imported when run), one line of help."""

    target: str
    help: str

    def __post_init__(self) -> None:
        mod, sep, func = self.target.partition(":")
        if not (mod and sep and func):
            raise ConfigError(f"Command.target = {self.target!r}: must be 'package.module:function'")

    @property
    def module(self) -> str:
        """The module that holds the function."""
        return self.target.partition(":")[0]

    def load(self) -> Main:
        """Import the module and return the function; :class:`CommandUnavailable` if the module is missing."""
        try:
            return pkgutil.resolve_name(self.target)
        except ModuleNotFoundError as e:
            # only the target's own package missing means "not installed"; a missing dependency
            # deeper down is a real error and keeps its traceback
            if e.name and (self.module == e.name or self.module.startswith(e.name + ".")):
                raise CommandUnavailable(f"module {self.module} is not installed here ({e})") from e
            raise


@dataclass(frozen=True)
class Group:
    """A table of commands and nested groups, with its one-line ``help`` and a ``note`` under its usage."""

    help: str
    commands: Mapping[str, Command | Group]
    what: str = "command"  # how the usage names an entry ("benchmark", "diagnostic")
    note: str = ""
    aside: Mapping[str, str] = field(default_factory=dict)  # name -> the door that has it ("python -m studies")
    flag: str = ""  # "--part": the entries are parts of one command, chosen by this option (not a word)
    default: str = ""  # with a flag: the part run when the flag is not given ("": the flag is required)

    def __post_init__(self) -> None:
        if self.default and (not self.flag or self.default not in self.commands):
            raise ConfigError(f"Group.default = {self.default!r}: needs a flag and one of {list(self.commands)}")

    def usage(self, prog: str) -> str:
        """The usage text: the entries with their help, then the note."""
        width = max(map(len, self.commands))
        lines = "\n".join(
            f"  {n:{width}s}  {c.help}{' (the default)' if n == self.default else ''}" for n, c in self.commands.items()
        )
        if self.flag:
            opt = f"[{self.flag} NAME]" if self.default else f"{self.flag} NAME"
            text = (
                f"usage: {prog} {opt} [ARGS...]\n\n{self.help}\n\n{self.what}s ({self.flag}):\n{lines}\n\n"
                f"`{prog} {self.flag} NAME --help` for its options."
            )
        else:
            text = f"usage: {prog} NAME [ARGS...]\n\n{self.what}s:\n{lines}\n\n`{prog} NAME --help` for its options."
        return f"{text}\n{self.note}" if self.note else text

    def pick(self, args: list[str]) -> tuple[str | None, list[str]]:
        """A flagged group's part among ``args`` (``--part X`` or ``--part=X``) and the other arguments."""
        for i, a in enumerate(args):
            if a == self.flag:
                return (args[i + 1] if i + 1 < len(args) else ""), args[:i] + args[i + 2 :]
            if a.startswith(self.flag + "="):
                return a.partition("=")[2], args[:i] + args[i + 1 :]
        return None, args


def dispatch(group: Group, argv: Sequence[str] | None, prog: str) -> int:
    """Run the command ``argv`` names in ``group`` (through nested groups); returns the exit status.

    No name: the usage on stderr, status 2; ``-h``/``--help``: the usage on stdout, status 0; an
    unknown name: what is allowed and the usage on stderr, status 2 (a name in ``group.aside``
    gets its spelling at the other door instead).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if group.flag:
        return _dispatch_part(group, args, prog)
    if not args or args[0] in ("-h", "--help"):
        print(group.usage(prog), file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in group.commands:
        if name in group.aside:
            spelling = " ".join([group.aside[name], *args])
            print(f"{prog}: {name!r} is not a command of {prog}; run: {spelling}\n{group.note}", file=sys.stderr)
        else:
            allowed = ", ".join(group.commands)
            print(f"{prog}: unknown {group.what} {name!r}; allowed: {allowed}\n\n{group.usage(prog)}", file=sys.stderr)
        return 2
    return _run(group.commands[name], rest, f"{prog} {name}")


def _dispatch_part(group: Group, args: list[str], prog: str) -> int:
    """A flagged group: the part its flag names (or its default) runs with the other arguments."""
    if args in (["-h"], ["--help"]):
        print(group.usage(prog))
        if not group.default:
            return 0
        print(f"\nthe default part ({group.default}):")
        sys.stdout.flush()
        return _run(group.commands[group.default], args, prog)  # its own --help, under the one spelling
    part, rest = group.pick(args)
    if part is None and group.default:
        return _run(group.commands[group.default], rest, prog)  # spelled as typed: no flag
    if part not in group.commands:
        allowed = ", ".join(group.commands)
        said = f"{group.flag} = {part!r}" if part is not None else f"{group.flag} is required"
        print(f"{prog}: {said}; allowed: {allowed}\n\n{group.usage(prog)}", file=sys.stderr)
        return 2
    return _run(group.commands[part], rest, f"{prog} {group.flag} {part}")


def _run(entry: Command | Group, rest: list[str], prog: str) -> int:
    """Run one entry (a command, or a nested group) under its full spelling ``prog``."""
    if isinstance(entry, Group):
        return dispatch(entry, rest, prog)
    try:
        fn = entry.load()
    except CommandUnavailable as e:
        print(f"{prog}: not available: {e}", file=sys.stderr)
        return 2
    except MissingExtraError as e:  # an optional package this command imports: the message names its extra
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    argv0 = sys.argv[0] if sys.argv else ""
    sys.argv[:1] = [prog]  # argparse names the program after sys.argv[0]
    try:
        return int(fn(rest) or 0)
    except (MissingExtraError, ConfigError) as e:  # a command that leaves its refusals to the dispatcher
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a path the command could not read or write: one sentence naming it, not a traceback
        where = f"{e.filename!r}: " if e.filename else ""
        print(f"{prog}: {where}{e.strerror or e} ({type(e).__name__})", file=sys.stderr)
        return 2
    finally:
        sys.argv[:1] = [argv0]


def walk(group: Group, prog: str) -> Iterator[tuple[str, Command]]:
    """Every command under ``group`` with its one spelling (``"python -m studies bench sim"``).

    A part is spelled with its flag (``"python -m studies reward --part scale"``); a default part
    without it (``"python -m studies reward"``), as it runs when the flag is not given.
    """
    for name, entry in group.commands.items():
        if group.flag:
            spelling = prog if name == group.default else f"{prog} {group.flag} {name}"
        else:
            spelling = f"{prog} {name}"
        if isinstance(entry, Group):
            yield from walk(entry, spelling)
        else:
            yield spelling, entry


def find(group: Group, words: Sequence[str]) -> tuple[int, Command | Group]:
    """How many of ``words`` name an entry of ``group`` (through nested groups), and that entry.

    A flagged group's part is two words (``--part scale``); where the words name none, its default
    part is the entry (the command as named runs it).
    """
    words = list(words)
    entry: Command | Group = group
    n = 0
    while isinstance(entry, Group):
        if entry.flag:
            if words[n : n + 1] == [entry.flag] and n + 1 < len(words) and words[n + 1] in entry.commands:
                entry, n = entry.commands[words[n + 1]], n + 2
            elif entry.default:
                entry = entry.commands[entry.default]
            else:
                break
        elif n < len(words) and words[n] in entry.commands:
            entry, n = entry.commands[words[n]], n + 1
        else:
            break
    return n, entry


__all__ = ["Command", "CommandUnavailable", "Group", "Main", "dispatch", "find", "walk"]
