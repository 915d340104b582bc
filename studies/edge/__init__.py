"""Edge cluster studies.

The experiment (:mod:`.experiment`), its tables and figures (:mod:`.report`) and the study's
published figures beside ours (:mod:`.study`); ``python -m studies edge-experiment`` runs it.
"""
