"""CGRSP learning studies: can a learner reach the strongest rule (parity, tuning curves, the generalist, ablations)."""
