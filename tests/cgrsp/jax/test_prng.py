"""The env's written-out threefry draws give ``jax.random``'s bits (fold_in, uniform, exponential)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gpu_sched_env.cgrsp.jax import core


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_draws_equal_jax_random_bit_for_bit(dtype):
    for seed in range(5):
        key = jax.random.fold_in(jax.random.PRNGKey(seed), 99)
        for d in (0, 1, 7, 12345, 2**31 - 1):
            want = np.asarray(jax.random.fold_in(key, d))
            np.testing.assert_array_equal(np.asarray(core.fold_in(key, d)), want)
            np.testing.assert_array_equal(np.asarray(jax.jit(core.fold_in)(key, jnp.int32(d))), want)
        for n in (None, 1, 4, 7):
            want = jax.random.uniform(key, () if n is None else (n,), dtype)
            got = jax.jit(core.uniform, static_argnums=(1, 2))(key, n, dtype)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        np.testing.assert_array_equal(
            np.asarray(core.exponential(key, dtype)), np.asarray(jax.random.exponential(key, (), dtype))
        )
    # vmapped, as the env draws them
    keys = jax.random.split(jax.random.PRNGKey(3), 64)
    got = jax.jit(jax.vmap(lambda k: core.uniform(core.fold_in(k, 5), 4, dtype)))(keys)
    want = jax.vmap(lambda k: jax.random.uniform(jax.random.fold_in(k, 5), (4,), dtype))(keys)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_new_style_keys_draw_through_jax_random():
    key = jax.random.key(4)
    np.testing.assert_array_equal(
        jax.random.key_data(core.fold_in(key, 3)), jax.random.key_data(jax.random.fold_in(key, 3))
    )
    np.testing.assert_array_equal(
        np.asarray(core.uniform(key, 4, jnp.float32)), jax.random.uniform(key, (4,), jnp.float32)
    )
    assert 0 <= int(core.pool_row(key, 7)) < 7
