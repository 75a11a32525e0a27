"""torch.utils.benchmark as ember provides it: Measurement statistics and printing against
torch's (same raw times), TaskSpec titles, merge, select_unit, and Timer runs on real code."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.utils import benchmark as eb

torch = pytest.importorskip("torch")
tb = pytest.importorskip("torch.utils.benchmark")

CASES = [
    (1000, [0.0062]),
    (1000, [0.0058, 0.0061, 0.0059, 0.0060, 0.0075]),
    (1000, [0.0058, 0.0061, 0.0159, 0.0060, 0.0075, 0.001]),
    (10, [1.5, 1.6, 1.55, 1.52]),
    (1, [1.0, 1.5, 1.2]),
    (1, [1.0, 1.5]),
    (1, [1.0, 1.02, 1.01]),
    (7, [3e-8, 3.1e-8, 2.9e-8, 3.3e-8, 9e-8]),
]
SPECS = [
    {"label": "add", "sub_label": "small", "description": "d"},
    {},
    {"label": "L"},
    {"sub_label": "S", "num_threads": 2},
]


def _repr_body(m) -> str:
    return repr(m).split("\n", 1)[1]


@pytest.mark.parametrize("number, raw", CASES)
@pytest.mark.parametrize("spec", SPECS)
def test_measurement_matches_torch(number, raw, spec):
    want = tb.Measurement(number, raw, tb.TaskSpec("x + 1", "pass", **spec))
    got = eb.Measurement(number, raw, eb.TaskSpec("x + 1", "pass", **spec))
    assert _repr_body(got) == _repr_body(want)
    for attr in ("median", "mean", "iqr"):
        assert getattr(got, attr) == pytest.approx(getattr(want, attr), rel=1e-12)
    assert got.times == pytest.approx(want.times)
    assert got.has_warnings == want.has_warnings
    assert got.meets_confidence() == want.meets_confidence()
    assert got.meets_confidence(0.01) == want.meets_confidence(0.01)
    assert got.title == want.title


def test_multiline_statement_title_and_merge():
    raw = [1.0]
    want = tb.Measurement(1, raw, tb.TaskSpec("a\nb", "pass"))
    got = eb.Measurement(1, raw, eb.TaskSpec("a\nb", "pass"))
    assert _repr_body(got) == _repr_body(want)
    ts, es = tb.TaskSpec("s", "pass"), eb.TaskSpec("s", "pass")
    want = tb.Measurement.merge([tb.Measurement(5, [1.0, 1.2], ts), tb.Measurement(5, [1.1], ts)])
    got = eb.Measurement.merge([eb.Measurement(5, [1.0, 1.2], es), eb.Measurement(5, [1.1], es)])
    assert len(got) == len(want) == 1
    assert got[0].times == pytest.approx(want[0].times)


@pytest.mark.parametrize("t", [2e-9, 6e-6, 3.2e-3, 3.2])
def test_select_unit(t):
    assert eb.select_unit(t) == tb.select_unit(t)


def test_timer_times_real_code_on_the_asked_threads():
    x = ember.ones(64)
    seen = []
    ember.set_num_threads(2)
    t = eb.Timer(
        "seen.append(ember.get_num_threads()); y = x * 2",
        globals={"x": x, "ember": ember, "seen": seen},
        label="mul",
        num_threads=1,
    )
    m = t.timeit(50)
    assert m.number_per_run == 50 and len(m.times) == 1 and m.times[0] > 0
    assert set(seen) == {1} and ember.get_num_threads() == 2
    calls = []
    m = t.blocked_autorange(callback=lambda n, s: calls.append((n, s)), min_run_time=0.01)
    assert sum(m.raw_times) >= 0.01 and len(calls) == len(m.raw_times)
    assert all(n == m.number_per_run for n, _ in calls)
    m = t.adaptive_autorange(threshold=0.5, max_run_time=0.5)
    assert sum(m.raw_times) >= 0.01
    assert "mul" in str(eb.Compare([m]))


def test_timer_errors_match_torch():
    for mod in (tb, eb):
        with pytest.raises(ValueError, match="Invalid language `rust`."):
            mod.Timer("pass", language="rust")
        t = mod.Timer("pass")
        for call in (t.repeat, t.autorange):
            with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
                call()
    with pytest.raises(NotImplementedError, match="Python statements only"):
        eb.Timer("pass", language="c++")


def test_statement_errors_surface():
    with pytest.raises(NameError):
        eb.Timer("undefined_name + 1").timeit(1)
    np.testing.assert_equal(eb.Timer("pass").timeit(10).number_per_run, 10)
