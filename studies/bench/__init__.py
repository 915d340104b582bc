"""The benchmarks, one module per benchmark, each with ``main(argv)``.

``python -m studies bench NAME [ARGS...]`` runs one (the table is :data:`studies.commands.BENCH`);
``NAME --help`` lists its options. Speed is measured here, never in timed tests.
"""
