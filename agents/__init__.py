"""The heuristics and learned schedulers; this folder installs as ``gpu_sched_agents``.

``pyproject.toml`` maps the package name to this folder (``[tool.setuptools.package-dir]``), in
the wheel and in an editable install alike, so that nothing named ``agents`` is installed to
collide with ``openai-agents`` or the ``agents`` distribution.
"""
