"""The headroom map (:mod:`.study`, ``python -m studies headroom``).

The rule against its bounds (:mod:`studies.cgrsp.bounds`) and the planner against the rule.
``lent.sh`` extends the map on a lent 16-core machine within its time limit (both layers, then
the store back under ``$OUT``).
"""
