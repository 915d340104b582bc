"""Hand-made edge tasks on one Orin NX (the head node beside it), shared by the simulator's and the report's tests."""

from gpu_sched_env.edge.model import Profile, Task, jetson_cluster

ONE_ORIN = jetson_cluster(include_head=True, units={"orin_nx": 1})


def hand_task(name, minutes, gpu, mem=1.0):
    """A task that runs only on the Orin NX: ``minutes`` long, ``gpu`` % of its GPU, ``mem`` GB."""
    return Task(name, name, {"orin_nx": Profile(minutes * 60.0, gpu, mem)})
