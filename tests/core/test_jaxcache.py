"""JAX's persistent compilation cache: the folder, the opt-out, and JAX's config told after import."""

from pathlib import Path

from gpu_sched_env.core import jaxcache


def test_folder_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert jaxcache.cache_dir() == tmp_path / "gpu_sched_env" / "jax"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert jaxcache.cache_dir() == Path.home() / ".cache" / "gpu_sched_env" / "jax"


def test_opt_out_turns_nothing_on(monkeypatch):
    monkeypatch.setenv("GPU_SCHED_JAX_CACHE", "0")
    assert jaxcache.use_compile_cache() is None


def test_a_chosen_folder_reaches_jax_after_import(monkeypatch, tmp_path):
    import jax

    before = jax.config.jax_compilation_cache_dir
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path))
    try:
        assert jaxcache.use_compile_cache() == tmp_path
        assert jax.config.jax_compilation_cache_dir == str(tmp_path)
    finally:
        jax.config.update("jax_compilation_cache_dir", before)
