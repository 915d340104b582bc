"""Diagnostics behind readings in the docs, one module per diagnostic, each with ``main(argv)``.

``python -m studies diagnose NAME [ARGS...]`` runs one (the table is :data:`studies.commands.DIAGNOSE`,
which also holds the diagnostics that live with their study: ``headroom``, ``rule-fix``, the
planner's, ``hgsp-tasks1``); ``NAME --help`` lists its options.
"""
