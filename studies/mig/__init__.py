"""The MIG experiment (:mod:`.experiment`) and the generator's histograms (:mod:`.histograms`); ``scripts/mig_*.py`` are shims."""
