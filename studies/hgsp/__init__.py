"""HGSP studies.

The report (:mod:`.cli`; tables and figures in :mod:`.report`), the orderings against the study
(:mod:`.orderings`) and why tasks1 misfits the study (:mod:`.tasks1`).
"""
