"""The headroom map (:mod:`.study`, ``python -m studies diagnose headroom``) and its bounds (:mod:`.bounds`)."""
