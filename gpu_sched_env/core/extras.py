"""Optional dependencies: an import that fails for want of an extra says which extra to install.

``pip install gpu_sched_env`` brings what the simulators, the envs and ``gpu-sched compare /
trace / evaluate`` of a rule need; learning needs an extra (``pyproject.toml``: ``train``,
``jax``, ``gymnax``, ``jumanji``, ``ray``, ``sweep``). Every import of such a package, where a
command first needs it, is wrapped in :func:`needs_extra`::

    with needs_extra("gpu-sched evaluate of an SB3 zip"):
        from stable_baselines3 import PPO

A :class:`ModuleNotFoundError` for a package of :data:`EXTRA_OF` becomes a
:class:`MissingExtraError` naming the distribution and the extra; any other import error (a
missing module of this project, a broken install of the package) passes through unchanged.
``gpu-sched`` prints the message and exits with status 2 (:func:`gpu_sched_env.core.commands.dispatch`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

# top-level module -> (the distribution that provides it, the extra of pyproject.toml that brings it)
EXTRA_OF: dict[str, tuple[str, str]] = {
    "stable_baselines3": ("stable-baselines3", "train"),
    "sb3_contrib": ("sb3-contrib", "train"),
    "torch": ("torch", "train"),
    "hydra": ("hydra-core", "train"),
    "omegaconf": ("omegaconf", "train"),
    "tensorboard": ("tensorboard", "train"),
    "rich": ("rich", "train"),
    "jax": ("jax", "jax"),
    "jaxlib": ("jaxlib", "jax"),
    "flax": ("flax", "jax"),
    "optax": ("optax", "jax"),
    "gymnax": ("gymnax", "gymnax"),
    "jumanji": ("jumanji", "jumanji"),
    "ray": ("ray", "ray"),
    "optuna": ("optuna", "sweep"),
    "hydra_plugins": ("hydra-optuna-sweeper", "sweep"),
}
# torch from PyPI is the CUDA build (several GB with its nvidia-* wheels); on a machine without a GPU
# the CPU build installed first meets the extra's requirement
_HINT = {"torch": "; without a GPU, install PyTorch's CPU build first (from PyTorch's CPU wheel index)"}


class MissingExtraError(ModuleNotFoundError):
    """An optional dependency is not installed; the message names it and the extra that brings it.

    A :class:`ModuleNotFoundError` (hence an :class:`ImportError`), so an ``except ImportError``
    that handles a missing optional package still does. ``extra`` is the extra's name,
    ``name`` the missing module's (as :class:`ImportError` has it).
    """

    def __init__(self, what: str, module: str, extra: str) -> None:
        dist = EXTRA_OF.get(module, (module, extra))[0]
        super().__init__(
            f"{what} needs {dist}, which is not installed: pip install 'gpu_sched_env[{extra}]'{_HINT.get(module, '')}",
            name=module,
        )
        self.extra = extra


@contextmanager
def needs_extra(what: str, extra: str | None = None) -> Iterator[None]:
    """Turn the imports inside into a :class:`MissingExtraError` if a package of an extra is missing.

    Args:
        what: what needs the package, as the user asked for it ("gpu-sched evaluate of an SB3 zip",
            "executor=ray"); the message starts with it. Nested sites: the outermost's ``what``,
            the innermost's extra.
        extra: the extra to name; default: the one :data:`EXTRA_OF` gives for the missing module.
    """
    try:
        yield
    except MissingExtraError as e:  # an inner site named the extra; this one knows better what the user asked for
        raise MissingExtraError(what, e.name or "", extra or e.extra) from e.__cause__
    except ModuleNotFoundError as e:
        top = (e.name or "").split(".")[0]
        if top not in EXTRA_OF:
            raise
        raise MissingExtraError(what, top, extra or EXTRA_OF[top][1]) from e


__all__ = ["EXTRA_OF", "MissingExtraError", "needs_extra"]
