"""ember.profiler / ember.autograd.profiler against torch's: events, tables, schedules, traces."""

import json
import re
import sys

import ember
import pytest
from ember.profiler import ProfilerAction, profile, record_function, schedule

torch = pytest.importorskip("torch")


def _model(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(8, 16), m.nn.ReLU(), m.nn.Linear(16, 2))


def _headers(table: str) -> list:
    return re.split(r"\s{2,}", table.splitlines()[1].strip())


def _run(m, prof_mod, **kw):
    net = _model(m)
    x = m.randn(4, 8)
    with prof_mod.profile(**kw) as prof:
        with prof_mod.record_function("model_inference"):
            y = net(x)
        y.sum().backward()
    return prof


@pytest.mark.parametrize(
    "kw, avg_kw",
    [
        ({}, {}),
        ({"profile_memory": True}, {}),
        ({"record_shapes": True}, {"group_by_input_shape": True}),
        ({"with_flops": True}, {}),
    ],
)
def test_table_columns_match_torch(kw, avg_kw):
    e = _run(ember, ember.profiler, **kw).key_averages(**avg_kw).table(sort_by="cpu_time_total")
    t = _run(torch, torch.profiler, **kw).key_averages(**avg_kw).table(sort_by="cpu_time_total")
    assert _headers(e)[:-1] == _headers(t)[:-1]
    assert _headers(e)[-1].split()[0] == _headers(t)[-1].split()[0]  # "Total KFLOPs" etc.
    assert e.splitlines()[-1].startswith("Self CPU time total: ")
    assert "model_inference" in e


def test_events_nest_and_times_add_up():
    prof = _run(ember, ember.profiler)
    events = prof.events()
    names = [ev.name for ev in events]
    assert names[0] == "model_inference"
    top = events[0]
    linear = [ev for ev in events if ev.name == "ember::linear"]
    assert len(linear) == 2 and all(ev.cpu_parent is top for ev in linear)
    assert "ember::relu" in names and "AddmmBackward0" in names
    for ev in events:
        assert 0 <= ev.self_cpu_time_total <= ev.cpu_time_total
        assert ev.start_us <= ev.end_us
        for c in ev.cpu_children:
            assert ev.start_us <= c.start_us and c.end_us <= ev.end_us
    roots = sum(ev.cpu_time_total for ev in events if ev.cpu_parent is None)
    assert prof.self_cpu_time_total == pytest.approx(roots, rel=1e-9)
    avg = {a.key: a for a in prof.key_averages()}
    assert avg["ember::linear"].count == 2
    assert avg["ember::linear"].cpu_time == pytest.approx(avg["ember::linear"].cpu_time_total / 2)
    assert prof.key_averages().total_average().key == "Total"


def test_op_counts_inplace_names_and_no_duplicate_wrapper_events():
    x = ember.ones(3)
    with profile() as prof:
        for _ in range(3):
            y = x + 1
        y.add_(2)
        ember.nn.functional.relu(y)  # F.relu runs the relu op: one event, as in torch
    counts = {a.key: a.count for a in prof.key_averages()}
    assert counts["ember::add"] == 3
    assert counts["ember::add_"] == 1
    assert counts["ember::relu"] == 1


def test_record_shapes_and_flops_match_torch():
    def shapes_and_flops(m, mod):
        a, b = m.ones(4, 5), m.ones(5, 6)
        with mod.profile(record_shapes=True, with_flops=True) as prof:
            m.mm(a, b)
            m.matmul(m.ones(3, 4, 5), b)
            m.nn.functional.conv2d(m.ones(2, 3, 8, 8), m.ones(4, 3, 3, 3))
        out = {}
        for ev in prof.events():
            key = ev.name.split("::")[-1]
            if key in ("mm", "matmul", "conv2d") and key not in out:
                out[key] = ev.flops
                out[key + "_shapes"] = ev.input_shapes[:2]
        return out

    e = shapes_and_flops(ember, ember.profiler)
    t = shapes_and_flops(torch, torch.profiler)
    assert e["mm"] == t["mm"] == 240
    assert e["mm_shapes"] == t["mm_shapes"] == [[4, 5], [5, 6]]
    assert e["conv2d"] == t["conv2d"]
    assert e["matmul_shapes"] == [[3, 4, 5], [5, 6]]
    assert e["matmul"] == 2 * 3 * 4 * 5 * 6


@pytest.mark.parametrize(
    "kw",
    [
        {"wait": 1, "warmup": 1, "active": 2, "repeat": 1},
        {"wait": 0, "warmup": 2, "active": 1, "repeat": 0, "skip_first": 3},
        {"wait": 2, "warmup": 1, "active": 3, "repeat": 2, "skip_first": 1},
    ],
)
def test_schedule_actions_match_torch(kw):
    e, t = schedule(**kw), torch.profiler.schedule(**kw)
    assert [e(i).name for i in range(20)] == [t(i).name for i in range(20)]


def test_schedule_errors():
    with pytest.raises(AssertionError, match=r"Invalid profiler schedule arguments\. Got wait=1"):
        schedule(wait=1, warmup=1, active=0)
    with pytest.raises(AssertionError, match="Step must be non-negative. Got -1."):
        schedule(wait=1, warmup=1, active=1)(-1)


def test_on_trace_ready_cycles_match_torch():
    def cycles(m, mod):
        got = []
        x = m.ones(3)
        sched = mod.schedule(wait=1, warmup=1, active=2, repeat=2)
        with mod.profile(
            schedule=sched,
            on_trace_ready=lambda p: got.append(
                (p.step_num, sorted((a.key.split("::")[-1], a.count) for a in p.key_averages()))
            ),
        ) as prof:
            for _ in range(9):
                y = x + 1
                y = y * 2
                prof.step()
        return got

    e = cycles(ember, ember.profiler)
    t = cycles(torch, torch.profiler)
    assert [s for s, _ in e] == [s for s, _ in t] == [4, 8]
    for (_, ek), (_, tk) in zip(e, t):
        ed, td = dict(ek), dict(tk)
        assert ed["ProfilerStep*"] == td["ProfilerStep*"] == 2
        assert ed["add"] == td["add"] and ed["mul"] == td["mul"]


def test_chrome_trace_and_tensorboard_handler(tmp_path):
    handler = ember.profiler.tensorboard_trace_handler(str(tmp_path), "w")
    with profile(on_trace_ready=handler) as p, record_function("block"):
        ember.ones(2) * 3
    path = tmp_path / "trace.json"
    p.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    names = [ev["name"] for ev in trace]
    assert names[0] == "block" and "ember::mul" in names
    assert all(ev["ph"] == "X" and ev["dur"] >= 0 for ev in trace)
    written = list(tmp_path.glob("w.*.pt.trace.json"))
    assert len(written) == 1 and json.loads(written[0].read_text())["traceEvents"]


def test_stacks(tmp_path):
    with profile() as p:
        ember.ones(2) + 1
    with pytest.raises(AssertionError, match=r"export_stacks\(\) requires with_stack=True"):
        p.export_stacks(str(tmp_path / "s.txt"))
    with profile(with_stack=True) as p:
        ember.ones(2) + 1
    p.export_stacks(str(tmp_path / "s.txt"))
    lines = (tmp_path / "s.txt").read_text().splitlines()
    assert any("test_stacks" in ln and ln.split(";")[-1].startswith("ember::add ") for ln in lines)
    table = p.key_averages(group_by_stack_n=2).table()
    assert "Source Location" in table and "test_profiler.py" in table


def test_profile_memory_counts_the_ops_allocations():
    with profile(profile_memory=True) as p:
        ember.zeros(512, 512)  # 1 MiB of float32
    ev = next(e for e in p.events() if e.name == "ember::zeros")
    assert ev.cpu_memory_usage >= 1 << 20
    with profile(profile_memory=True) as p:
        ember.ones(3)
    assert next(e for e in p.events() if e.name == "ember::ones").cpu_memory_usage < 1 << 20


def test_hook_is_removed_after_the_block_and_on_errors():
    before = sys.getprofile()
    with pytest.raises(ValueError), profile() as p, record_function("outer"):
        ember.ones(2) + 1
        raise ValueError("boom")
    assert sys.getprofile() is before
    names = [e.name for e in p.events()]
    assert names[0] == "outer" and "ember::add" in names
    with ember.autograd.profiler.profile() as q:
        pass
    assert sys.getprofile() is before and len(q.function_events) == 0


def test_legacy_autograd_profiler_and_record_function_decorator():
    @record_function("step")
    def step(x):
        return (x * 2).sum()

    x = ember.ones(3)
    with ember.autograd.profiler.profile(record_shapes=True) as prof:
        step(x)
    keys = [a.key for a in prof.key_averages()]
    assert keys[0] == "step" and "ember::mul" in keys and "ember::sum" in keys
    assert str(prof).splitlines()[1].split()[0] == "Name"
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        ember.autograd.profiler.profile().key_averages()


def test_schedule_actions_are_profiler_actions():
    s = schedule(wait=0, warmup=1, active=1)
    assert s(0) is ProfilerAction.WARMUP and s(1) is ProfilerAction.RECORD_AND_SAVE
    assert ember.profiler.supported_activities() == {ember.profiler.ProfilerActivity.CPU}


class _ProfiledInWorker(ember.data.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return ember.tensor([float(sys.getprofile() is not None)])


def test_dataloader_workers_do_not_inherit_the_profiling_hook():
    with profile():
        batches = list(ember.data.DataLoader(_ProfiledInWorker(), batch_size=2, num_workers=2))
    assert [b.view(-1).tolist() for b in batches] == [[0.0, 0.0], [0.0, 0.0]]
