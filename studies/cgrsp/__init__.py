"""CGRSP studies, by question.

* :mod:`.programme`: the publication's tables and figures (spec §5): experiment grids, the
  resumable runner, statistics, figures, ``docs/results.md`` (``python -m studies experiments``).
* :mod:`.learning`: the learners against the strongest rule (``parity``, ``tune``, ``generalist``).
* :mod:`.headroom`: how far the strongest rule is from what any policy could reach (``headroom``).
* :mod:`.planner`: the rollout planner's screen calibration and cost (parts of ``headroom``).
* :mod:`.versus_rule`: where and why a learner differs from the strongest rule (``versus-rule``).
* :mod:`.reward`: whether the reward teaches what the objective scores (``reward``).
* :mod:`.strong_rules` (with :mod:`.rule_fix`, :mod:`.defer_scale`, :mod:`.rh_reservation` as its parts),
  :mod:`.persistence`, :mod:`.generalise`, :mod:`.learner_table`: one module per question, each a
  ``python -m studies`` command.
"""
