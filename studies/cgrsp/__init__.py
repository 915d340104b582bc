"""CGRSP studies, by question.

* :mod:`.programme`: the publication's tables and figures (spec §5): experiment grids, the
  resumable runner, statistics, figures, ``docs/results.md`` (``python -m studies experiments``).
* :mod:`.learning`: the learners against the strongest rule (``parity``, ``tune``, ``generalist``).
* :mod:`.headroom`: how far the strongest rule is from what any policy could reach (``diagnose headroom``).
* :mod:`.planner`: the rollout planner's screen calibration and cost (``diagnose planner-calibration|planner-cost``).
* :mod:`.strong_rules`, :mod:`.persistence`, :mod:`.rule_fix`, :mod:`.generalise`,
  :mod:`.learner_table`: one module per question, each a ``python -m studies`` command.
"""
