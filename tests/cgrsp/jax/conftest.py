"""The JAX env's tests run in float64 (jax_enable_x64 for each module only, so other tests keep JAX's defaults)."""

import pytest

jax = pytest.importorskip("jax")


@pytest.fixture(autouse=True, scope="module")
def x64():
    """Float64 for the equivalence path, per test module."""
    with jax.enable_x64(True):
        yield
