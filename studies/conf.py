"""The studies' name for the library's config composer, :mod:`gpu_sched_agents.rl.compose`.

``compose_config`` / ``composed_env`` / ``CONF`` are defined there (Hydra over the checkout's
``conf/``, as ``train.py`` composes), so a study, a test and ``train.py`` read a named design such
as ``env=markov`` the same way; this module only re-exports them for the studies' imports.
"""

from __future__ import annotations

from gpu_sched_agents.rl.compose import CONF, compose_config, composed_env

__all__ = ["CONF", "compose_config", "composed_env"]
