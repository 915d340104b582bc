"""gpu_sched_env: GPU-cluster scheduling simulators, heuristics and Gymnasium environments.

Importing the package registers the environment ids (``CGRSP-v0`` and its day presets,
``HGSP-v0``, ``LLMServe-v0``, ``MIG-v0``, ``EdgeBatch-v0``); registration is idempotent.
"""

from gpu_sched_env._registration import ENV_TABLE, register_envs

__version__ = "0.1.0"

ENV_IDS = register_envs()

__all__ = ["ENV_IDS", "ENV_TABLE", "__version__", "register_envs"]
