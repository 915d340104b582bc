"""The rollout planner's questions: its screen horizon vs full days (:mod:`.calibration`), its cost (:mod:`.cost`)."""
