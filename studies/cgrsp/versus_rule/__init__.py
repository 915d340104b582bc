"""Where and why a learned CGRSP policy differs from the strongest rule (``python -m studies versus-rule``).

One module per part, each with ``main(argv)``: :mod:`.versus_rule` (an SB3 run in CGRSP-v0) and
:mod:`.versus_rule_jax` (a ``ppo_jax`` actor in JAX) ask whether it loses on when or on which job
(``--engine numpy|jax``); :mod:`.timing_jax` where it waits and the rule dispatches, :mod:`.misses`
which jobs it misses, :mod:`.policy` why an SB3 policy waits, :mod:`.design_cost` what an action
design costs the rule itself (``--part NAME``).
"""
