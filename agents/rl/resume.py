"""Exact resume: a checkpoint holds everything the rest of a run depends on.

A run killed at any point and resumed (``resume=true`` or ``resume_from=DIR``) from its last
checkpoint writes the same ``learning_curve.csv`` rows, ``best.json`` and ``final_eval.*`` as
the run left alone. Checkpoint N of a run folder is ``checkpoints/model_<N>_steps.*``:

* ``model_<N>_steps.state``: a pickle of what the model file does not hold (:func:`snapshot`
  for the SB3 learners: the training envs, each with its simulator, random generator and day
  counter, the VecNormalize statistics with the running return, the global random streams of
  Python, NumPy and torch, the model's counters and rollout position, the logger's pending
  values, the callbacks' state: the evaluation's best value, schedule and curve rows, the
  episode metrics; ``algo=ppo_jax``: the evaluator's best key, curve rows and candidates);
* ``model_vecnormalize_<N>_steps.pkl`` (SB3's VecNormalize file, with reward normalisation)
  and ``model_replay_buffer_<N>_steps.pkl`` (DQN);
* ``model_<N>_steps.zip`` (SB3: network and optimiser) or ``.npz`` (``algo=ppo_jax``: the
  runner state), written last.

Every file is written atomically (a temporary file renamed into place) and the model file
last, so a model file means its checkpoint is complete; a kill while checkpoint N is written
leaves N's companions without its model file, and resume takes checkpoint N − 1.

An SB3 checkpoint is taken at a rollout boundary (when a rollout starts, after the update on
the one before, and at the end of training), where the rollout buffer is empty and nothing is
half done: the first one at or after every ``train.checkpoint_freq`` steps. A model file
without its ``.state`` (a checkpoint written before checkpoints held the run's state) is
resumed inexactly, with a warning saying what starts over.
"""

from __future__ import annotations

import io
import logging
import pickle
import random
from pathlib import Path
from typing import Any

import numpy as np
import torch as th
from stable_baselines3.common.callbacks import BaseCallback

from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.io import atomic_write_bytes

log = logging.getLogger(__name__)
STATE_SUFFIX = ".state"
FORMAT = 1  # the layout of a .state pickle; a file of another format is refused
# The model's attributes its zip holds but SB3's load resets or reseeds (or that decide the next
# rollout): counters, the rollout position, the episode buffers, MaskedDQN's exploration stream.
MODEL_ATTRS = (
    "num_timesteps",
    "_n_updates",
    "_episode_num",
    "_n_calls",
    "_last_obs",
    "_last_episode_starts",
    "_last_original_obs",
    "ep_info_buffer",
    "ep_success_buffer",
    "_current_progress_remaining",
    "exploration_rate",
    "_mask_rng",
)
VEC_ENV_ATTRS = ("_seeds", "_options", "reset_infos")  # the VecEnv's seeds and options for its next reset


def state_path(model_file: Path) -> Path:
    """The ``.state`` file of a checkpoint's model file (``model_N_steps.zip`` → ``model_N_steps.state``)."""
    return Path(model_file).with_suffix(STATE_SUFFIX)


def write_state(model_file: Path, state: dict[str, Any]) -> None:
    """Write checkpoint ``model_file``'s state (atomically), before its model file."""
    atomic_write_bytes(state_path(model_file), pickle.dumps({"format": FORMAT, **state}, pickle.HIGHEST_PROTOCOL))


def read_state(model_file: Path) -> dict[str, Any] | None:
    """A checkpoint's state, or None (with a warning) for a checkpoint written before states were kept."""
    path = state_path(model_file)
    if not path.exists():
        log.warning(
            f"resume: {Path(model_file).name} has no {path.name} (a checkpoint written before checkpoints held the "
            "run's state); resuming inexactly: the training envs start new days, the random streams, the reward "
            "normaliser's running return and the evaluation schedule start over, and the learning curve and best "
            "model continue from learning_curve.csv and best.json"
        )
        return None
    with open(path, "rb") as fh:
        state = pickle.load(fh)
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise ConfigError(f"resume: {path} is not a checkpoint state of format {FORMAT}; start a new run")
    return state


def rng_state() -> dict[str, Any]:
    """The global random streams: Python's, NumPy's, torch's (and CUDA's where it is in use)."""
    out = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": th.get_rng_state()}
    if th.cuda.is_available() and th.cuda.is_initialized():
        out["cuda"] = th.cuda.get_rng_state_all()
    return out


def set_rng_state(state: dict[str, Any]) -> None:
    """Put back :func:`rng_state`'s streams."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    th.set_rng_state(state["torch"])
    if "cuda" in state and th.cuda.is_available():
        th.cuda.set_rng_state_all(state["cuda"])


def _space_rng(space: Any) -> Any:
    rng = getattr(space, "_np_random", None)
    return None if rng is None else rng.bit_generator.state


def snapshot(model: Any, parts: dict[str, Any]) -> dict[str, Any]:
    """What an SB3 run's continuation depends on beyond the model file (see the module docstring).

    ``parts``: name → callback with ``resume_state()``. The envs are read through
    ``get_attr("__dict__")``, which works in this process (DummyVecEnv) and across the pipe
    (SubprocVecEnv, the worker pickles its env).
    """
    venv = model.get_env()
    norm = model.get_vec_normalize_env()
    logger = model.logger
    return {
        "timesteps": int(model.num_timesteps),
        "model": {k: model.__dict__[k] for k in MODEL_ATTRS if k in model.__dict__},
        "spaces": {k: _space_rng(getattr(model, k)) for k in ("action_space", "observation_space")},
        "envs": venv.get_attr("__dict__"),
        "vec_env": {k: getattr(venv.unwrapped, k) for k in VEC_ENV_ATTRS if hasattr(venv.unwrapped, k)},
        "vec_normalize": None
        if norm is None
        else {k: v for k, v in norm.__dict__.items() if k not in ("venv", "class_attributes")},
        "rng": rng_state(),
        "logger": {
            "value": dict(logger.name_to_value),
            "count": dict(logger.name_to_count),
            "excluded": dict(logger.name_to_excluded),
        },
        "callbacks": {name: cb.resume_state() for name, cb in parts.items()},
    }


def restore(model: Any, state: dict[str, Any], parts: dict[str, Any]) -> None:
    """Put :func:`snapshot`'s ``state`` back into a loaded ``model``, its envs and the callbacks ``parts``."""
    venv = model.get_env()
    if len(state["envs"]) != venv.num_envs:
        raise ConfigError(
            f"resume: the checkpoint holds {len(state['envs'])} training envs, this run builds {venv.num_envs}"
        )
    for i, env_dict in enumerate(state["envs"]):
        venv.set_attr("__dict__", env_dict, indices=[i])
    for k, v in state["vec_env"].items():
        setattr(venv.unwrapped, k, v)
    norm = model.get_vec_normalize_env()
    if (norm is None) != (state["vec_normalize"] is None):
        raise ConfigError("resume: the checkpoint and this run differ in train.normalize_reward")
    if norm is not None:
        norm.__dict__.update(state["vec_normalize"])
    model.__dict__.update(state["model"])
    for k, rng in state["spaces"].items():
        if rng is not None:
            getattr(model, k).np_random.bit_generator.state = rng
    logger = model.logger
    logger.name_to_value.update(state["logger"]["value"])
    logger.name_to_count.update(state["logger"]["count"])
    logger.name_to_excluded.update(state["logger"]["excluded"])
    for name, cb in parts.items():
        cb.restore_state(state["callbacks"][name])
    set_rng_state(state["rng"])


def _pickled(save: Any) -> bytes:
    """The bytes ``save(file)`` writes (SB3's savers take a file object as well as a path)."""
    buf = io.BytesIO()
    save(buf)
    return buf.getvalue()


class ExactCheckpoint(BaseCallback):
    """Checkpoints an SB3 run can be resumed from exactly (module docstring); restores one on resume.

    ``every``: steps between checkpoints (``train.checkpoint_freq``): one at the first rollout
    boundary at or after each multiple, and one when the budget is reached. ``parts``: name →
    callback whose ``resume_state()`` the checkpoint keeps and ``restore_state()`` puts back.
    ``resume``: the state of the checkpoint this run continues (:func:`read_state`), restored
    when training starts, after every other callback has set itself up; None for a fresh run.
    """

    def __init__(
        self,
        every: int,
        folder: Path,
        parts: dict[str, Any],
        replay_buffer: bool = False,
        resume: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.every = int(every)
        self.folder = Path(folder)
        self.parts = dict(parts)
        self.replay_buffer = bool(replay_buffer)
        self.resume = resume
        self._last = 0

    def _on_training_start(self) -> None:
        if self.resume is not None:
            restore(self.model, self.resume, self.parts)
            self.resume = None
        self._last = int(self.model.num_timesteps)

    def _on_step(self) -> bool:
        return True

    def _on_rollout_start(self) -> None:
        if self.model.num_timesteps // self.every > self._last // self.every:
            self.save()

    def _on_training_end(self) -> None:
        # the budget reached (not a callback's stop in mid-rollout) and not saved at this step yet
        if self.model.num_timesteps >= self.model._total_timesteps and self.model.num_timesteps != self._last:
            self.save()

    def save(self) -> Path:
        """Write checkpoint ``model_<steps>_steps``: its companions and state, then the model file."""
        steps = int(self.model.num_timesteps)
        zip_path = self.folder / f"model_{steps}_steps.zip"
        norm = self.model.get_vec_normalize_env()
        if norm is not None:  # SB3's own file, beside the state (which also holds the running return)
            atomic_write_bytes(self.folder / f"model_vecnormalize_{steps}_steps.pkl", pickle.dumps(norm))
        if self.replay_buffer:
            data = _pickled(self.model.save_replay_buffer)
            atomic_write_bytes(self.folder / f"model_replay_buffer_{steps}_steps.pkl", data)
        write_state(zip_path, snapshot(self.model, self.parts))
        atomic_write_bytes(zip_path, _pickled(self.model.save))
        self._last = steps
        return zip_path


__all__ = [
    "ExactCheckpoint",
    "read_state",
    "restore",
    "rng_state",
    "set_rng_state",
    "snapshot",
    "state_path",
    "write_state",
]
