"""Does the reward teach what the objective scores? (``python -m studies reward``).

One module per part, each with ``main(argv)``: :mod:`.reward` (the step reward of dispatch and idle by
stock), :mod:`.advantages` (PPO's advantages there), :mod:`.reward_scale` (the JAX shaping term by
time of day), :mod:`.regime_scale` (the judged regimes' scales) and :mod:`.reward_alignment` (whether
reward presets rank the heuristics as the objective does).
"""
