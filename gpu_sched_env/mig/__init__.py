"""MIG scenario: a reproducible GPU job-set generator and single-GPU MIG scheduling.

``generator`` reads and writes the file formats of the existing Java job generator;
``model``/``sim``/``cpsat`` schedule a job set on one GPU split into MIG instances.
"""
