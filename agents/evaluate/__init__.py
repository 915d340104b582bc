"""``gpu-sched evaluate``: one command that scores any CGRSP policy on the standard protocol.

A plug-in of the agents layer: ``gpu_sched_env.cli`` names :func:`gpu_sched_agents.evaluate.cli.main`
as a string and imports it when the command runs (``gpu_sched_env`` never imports this package).
Modules: ``policy`` (POLICY → something that plays days), ``protocol`` (what is played),
``judge`` (CIs, paired tests, Holm), ``report`` (report.md / .json / .png), ``leaderboard``
(docs/leaderboard.md from stored reports), ``cli`` (the command line). Also
``python -m gpu_sched_agents.evaluate POLICY``.
"""
