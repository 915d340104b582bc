import pytest

from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.edge.model import jetson_cluster
from gpu_sched_env.edge.profiles import default_profiles, load_profiles
from gpu_sched_env.edge.workload import (
    LIGHT,
    REFERENCE_WORKLOADS,
    make_task,
    memory_batches,
    split_task,
    split_tasks,
)

HEADER = "workload,device_type,time_min,gpu_pct,mem_gb\n"


def test_cluster_preset_and_head_option():
    c = jetson_cluster()
    assert [d.dtype for d in c.devices].count("nano") == 4
    assert [d.dtype for d in c.devices].count("xavier_nx") == 2
    assert [d.dtype for d in c.devices].count("orin_nx") == 1
    assert c.n == 7 and c.total_mem_gb == 64.0 and c.min_mem_gb == 4.0
    assert not any(d.is_head for d in c.devices)
    h = jetson_cluster(include_head=True)
    assert h.n == 8 and sum(d.is_head for d in h.devices) == 1 and h.total_mem_gb == 80.0


def test_cluster_bad_units():
    with pytest.raises(ConfigError, match="tpu"):
        jetson_cluster(units={"tpu": 1, "orin_nx": 1})
    with pytest.raises(ConfigError, match="orin_nx"):
        jetson_cluster(units={"nano": 2, "orin_nx": 0})


def test_default_profiles_match_the_spec_and_study_facts():
    tab = default_profiles()
    c = jetson_cluster()
    assert set(tab.workloads) == set(REFERENCE_WORKLOADS)
    for w in REFERENCE_WORKLOADS:  # Orin faster than Xavier faster than Nano
        r = {dt: tab.rows[(w, dt)] for dt in ("nano", "xavier_nx", "orin_nx")}
        assert r["orin_nx"].time_s < r["xavier_nx"].time_s < r["nano"].time_s
        assert r["orin_nx"].gpu_pct <= r["xavier_nx"].gpu_pct <= r["nano"].gpu_pct
    # Chest X-ray is the heaviest workload (time on every device, memory)
    for dt in ("nano", "xavier_nx", "orin_nx"):
        assert max(REFERENCE_WORKLOADS, key=lambda w: tab.rows[(w, dt)].time_s) == "chest_xray"
    assert make_task("x", "chest_xray", tab, c).mem_gb > 1.5 * 4.0  # far more than a Nano has
    # the study splits only Chest X-ray in the five-task example: everything else fits 4 GB
    for w in (*LIGHT, "ham10000"):
        assert make_task("x", w, tab, c).mem_gb <= c.min_mem_gb
    # Chest X-ray in two sub-tasks: ~70 min on an Orin (the 4 GB one), ~115 min on a Xavier (the other)
    shards = split_task(make_task("cxr", "chest_xray", tab, c), c.min_mem_gb)
    assert [s.mem_gb for s in shards] == pytest.approx([4.0, 3.0])
    assert shards[0].profile["orin_nx"].time_s == pytest.approx(70 * 60)
    assert shards[1].profile["xavier_nx"].time_s == pytest.approx(115 * 60, abs=1)  # table in 0.01 min
    # ... and both on the Orin one after another (64 % GPU each): 122.5 min ~ the study's 123
    assert shards[0].profile["orin_nx"].gpu_pct == 64
    assert sum(s.profile["orin_nx"].time_s for s in shards) / 60 == pytest.approx(122.5)
    assert tab.rows[("cifar10", "nano")].gpu_pct == 90


def test_unprofiled_task_gets_the_average():
    tab = default_profiles()
    c = jetson_cluster()
    t = make_task("x", "imagenet_subset", tab, c)
    assert not t.profiled
    mean_orin = sum(tab.rows[(w, "orin_nx")].time_s for w in REFERENCE_WORKLOADS) / 5
    assert t.profile["orin_nx"].time_s == pytest.approx(mean_orin)
    assert make_task("y", "mnist", tab, c).profiled


def test_splitting_rules():
    tab = default_profiles()
    c = jetson_cluster()
    cxr = make_task("cxr", "chest_xray", tab, c)  # 7.0 GB
    parts = split_task(cxr, 3.0)
    assert [p.mem_gb for p in parts] == pytest.approx([3.0, 3.0, 1.0])  # filled up to the threshold
    assert sum(p.mem_gb for p in parts) == pytest.approx(cxr.mem_gb)
    for dt in c.types:
        assert sum(p.profile[dt].time_s for p in parts) == pytest.approx(cxr.profile[dt].time_s)
        assert parts[2].profile[dt].time_s == pytest.approx(cxr.profile[dt].time_s / 7)
        assert all(p.profile[dt].gpu_pct == cxr.profile[dt].gpu_pct for p in parts)
    assert [p.part for p in parts] == [1, 2, 3] and {p.parent for p in parts} == {"cxr"}
    assert [p.data_key for p in parts] == ["chest_xray#1/3", "chest_xray#2/3", "chest_xray#3/3"]
    assert len(split_task(cxr, 3.5)) == 2  # exact multiple: no empty remainder shard
    light = make_task("m", "mnist", tab, c)
    assert split_task(light, 4.0) == [light] and light.data_key == "mnist"
    assert split_task(cxr, 7.0) == [cxr]  # exactly at the threshold: not split
    with pytest.raises(ConfigError, match="already a shard"):
        split_task(parts[0], 1.0)
    with pytest.raises(ConfigError, match="split_threshold_gb"):
        split_task(cxr, 0.0)
    # order kept: shards sit where their parent arrived
    seq = split_tasks([light, cxr, light], 4.0)
    assert [t.id for t in seq] == ["m", "cxr.1", "cxr.2", "m"]


def _mem_task(i, mem):
    from gpu_sched_env.edge.model import Profile, Task

    return Task(f"t{i}", "w", {"nano": Profile(60.0, 50.0, mem)}, arrival=i)


def test_memory_batching_hand_case():
    tasks = [_mem_task(i, m) for i, m in enumerate([30, 30, 10, 70, 5, 4])]
    b = memory_batches(tasks, 64.0)
    assert [[t.mem_gb for t in x] for x in b] == [[30, 30], [10], [70], [5, 4]]
    assert [t for x in b for t in x] == tasks  # nothing dropped, order kept
    assert memory_batches([], 64.0) == []
    assert len(memory_batches(tasks, 1000.0)) == 1


def test_load_csv_and_yaml(tmp_path):
    p = tmp_path / "p.csv"
    p.write_text(HEADER + "mnist,nano,30,60,0.8\nmnist,orin_nx,10,35,0.8\n")
    tab = load_profiles(p)
    assert tab.rows[("mnist", "nano")].time_s == 1800.0
    y = tmp_path / "p.yaml"
    y.write_text("profiles:\n  - {workload: mnist, device_type: nano, time_min: 30, gpu_pct: 60, mem_gb: 0.8}\n")
    assert load_profiles(y).rows[("mnist", "nano")].gpu_pct == 60


@pytest.mark.parametrize(
    "body, pattern",
    [
        ("mnist,nano,30,60,0.8\nmnist,orin_nx,-5,35,0.8\n", r"row 2 \(line 3\).*time_min = '-5'.*out of range"),
        ("mnist,tx2,30,60,0.8\n", r"row 1.*device_type = 'tx2'.*allowed: nano"),
        ("mnist,nano,30,120,0.8\n", r"row 1.*gpu_pct = '120'.*\(0, 100\]"),
        ("mnist,nano,abc,60,0.8\n", r"row 1.*time_min = 'abc' is not a number"),
        ("mnist,nano,30,60,\n", r"row 1.*mem_gb is missing"),
        ("mnist,nano,30,60,0.8\nmnist,nano,31,60,0.8\n", r"row 2.*duplicate"),
        ("", r"no rows"),
    ],
)
def test_csv_validation_names_row_and_field(tmp_path, body, pattern):
    p = tmp_path / "bad.csv"
    p.write_text(HEADER + body)
    with pytest.raises(ConfigError, match=pattern):
        load_profiles(p)


def test_other_file_errors(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("workload,device,time_min,gpu_pct,mem_gb\nmnist,nano,1,1,1\n")
    with pytest.raises(ConfigError, match="header"):
        load_profiles(p)
    y = tmp_path / "b.yaml"
    y.write_text("- {workload: mnist, device_type: nano, time_min: 30, gpu_pct: 60, mem_gb: 0.8, extra: 1}\n")
    with pytest.raises(ConfigError, match=r"row 1.*unknown field\(s\) extra"):
        load_profiles(y)
    t = tmp_path / "x.txt"
    t.write_text("x")
    with pytest.raises(ConfigError, match="suffix"):
        load_profiles(t)
    with pytest.raises(ConfigError, match="does not exist"):
        load_profiles(tmp_path / "missing.csv")
