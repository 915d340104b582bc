"""MIG studies.

The experiment (:mod:`.experiment`, its tables in :mod:`.report` and :mod:`.published`) and the
generator's histograms (:mod:`.histograms`); ``python -m studies mig-experiment`` and ``mig-histograms`` run them.
"""
