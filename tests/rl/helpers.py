"""What the RL tests share: the tiny MaskablePPO settings and TensorBoard tags of a run folder."""

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

# MaskablePPO small enough for a test: one epoch over one 64-step rollout, a 16-unit network
TINY_PPO = ["algo.n_steps=64", "algo.batch_size=64", "algo.n_epochs=1", "algo.net_arch=[16]"]


def scalar_tags(path):
    """The scalar tags TensorBoard finds in the event files under ``path``."""
    ea = EventAccumulator(str(path))
    ea.Reload()
    return set(ea.Tags()["scalars"])
