"""``python -m studies generalise`` (studies.cgrsp.generalise) on a tiny mixed-day run trained by train.py's path."""

import pytest

from tests.hydra_conf import cfg_for
from tests.rl.helpers import TINY_PPO


@pytest.mark.e2e
def test_a_mixed_day_run_trains_and_is_judged_on_the_hectic_day_and_generalises(tmp_path):
    import gpu_sched_agents.rl.train as tr
    from studies.cgrsp import generalise

    run = tmp_path / "run"
    # 100 jobs a day (a full hectic day has several hundred): the evaluations on the hectic day and
    # in generalise.py play whole days of every heuristic, and the asserted files and rows do not
    # depend on the day's length
    cfg = cfg_for(
        "day=mixed",
        "+env.params.n_jobs=100",
        "train.total_timesteps=128",
        "train.eval_freq=128",
        "train.checkpoint_freq=128",
        "train.eval_seeds=[10000]",
        "train.final_eval_seeds=2",
        "train.progress_bar=false",
        *TINY_PPO,
        f"run_dir={run}",
    )
    tr.train(cfg)
    assert "hectic day" in (run / "final_eval.md").read_text()
    assert generalise.main([str(run), "--seeds", "2", "--settings", "normal", "hectic_cmax7"]) == 0
    text = (run / "generalisation.md").read_text()
    assert "hectic_cmax7" in text and "normal" in text
    assert (run / "gen_hectic_cmax7.csv").exists()
