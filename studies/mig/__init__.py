"""MIG studies.

The experiment (:mod:`.experiment`, its tables in :mod:`.report` and :mod:`.published`) and the
generator's histograms (:mod:`.histograms`); ``scripts/mig_*.py`` are shims.
"""
