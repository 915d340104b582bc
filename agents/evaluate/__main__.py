"""``python -m gpu_sched_agents.evaluate POLICY`` (the same command as ``gpu-sched evaluate``)."""

from gpu_sched_agents.evaluate.cli import main

raise SystemExit(main())
