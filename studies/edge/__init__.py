"""The edge cluster experiment (:mod:`.experiment`); ``scripts/edge_experiment.py`` is a shim."""
