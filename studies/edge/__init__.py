"""Edge cluster studies.

The experiment (:mod:`.experiment`), its tables and figures (:mod:`.report`) and the study's
published figures beside ours (:mod:`.study`); ``scripts/edge_experiment.py`` is a shim.
"""
