"""Parity regressions of the hundred-and-fifteenth wave: the utility APIs PyTorch scripts use
around a model, run unchanged under ``import ember as torch`` (data pipelines with worker
processes / samplers / collate / random_split, module introspection / hooks / state dicts /
optimizer state round trips / meta init, assert_close / anomaly mode / gradcheck / print
options / rng state / compile / jit / profiler / checkpoint, save / load of nested containers,
views, map_location, weights_only allow-lists, BytesIO, legacy format and mmap). It found:

* a transposed (or otherwise permuted) tensor saved alone loading contiguous (torch stores its
  whole storage and keeps its strides: ``load(save(x.t())).stride() == (1, n)``);
* ``serialization.safe_globals([...])`` restoring the allow-list as it was on exit (torch
  removes the block's globals, even ones allow-listed before it, and keeps ones
  ``add_safe_globals`` added inside the block);
* set_float32_matmul_precision's warning for a bad value spelling "the current
  setFloat32MatmulPrecision" (torch's text has no space: "the currentsetFloat32...");
* assert_close's "No comparison pair was able to handle inputs of type <class
  'ember.Tensor'> ..." (torch: ``<class 'torch.Tensor'>``, as torch spells each class).

Left: the shuffling order of a ``DataLoader(generator=...)`` / ``random_split`` and every other
random stream (ember's generator is not torch's Philox/MT bit stream; values reproduce within
ember), a slice saved alone storing only its own elements (ember's deliberate smaller files;
torch writes its whole storage), warnings' file/line and torch's "(Triggered internally at
...)" C++ suffixes, the profiler table's text.
"""

from __future__ import annotations

import io
import warnings

import pytest

torch = pytest.importorskip("torch")
import ember


def _round_trip(m, obj):
    buf = io.BytesIO()
    m.save(obj, buf)
    buf.seek(0)
    return m.load(buf)


def _layout(t) -> tuple:
    return (tuple(t.shape), t.stride(), t.storage_offset(), t.is_contiguous(), t.tolist())


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.arange(12.0).view(3, 4).t(),
        lambda m: m.arange(24.0).view(2, 3, 4).permute(2, 0, 1),
        lambda m: m.arange(6.0).view(2, 3).mT,
        lambda m: m.arange(12.0).view(3, 4).t()[1:],  # part of its base: values only
        lambda m: m.arange(16.0).view(4, 4)[::2],
        lambda m: m.arange(3.0).view(3, 1).expand(3, 4),
        lambda m: m.arange(6).view(2, 3),
    ],
)
def test_a_view_saved_alone_keeps_its_layout_when_it_shows_its_whole_base(make):
    te, ee = _round_trip(torch, make(torch)), _round_trip(ember, make(ember))
    assert str(ee.dtype).split(".")[-1] == str(te.dtype).split(".")[-1]
    if te.untyped_storage().nbytes() == ee.untyped_storage().nbytes():
        assert _layout(ee) == _layout(te)
    else:  # ember's deliberate deviation: a lone slice keeps only its own elements
        assert ee.tolist() == te.tolist() and ee.is_contiguous()


@pytest.mark.parametrize("in_dict", [False, True])
def test_a_saved_transpose_shares_and_keeps_strides_next_to_other_tensors(in_dict):
    def make(m):
        x = m.arange(6.0).view(2, 3)
        return {"t": x.t(), "y": m.ones(2)} if in_dict else [x.t(), x.t()]

    te, ee = _round_trip(torch, make(torch)), _round_trip(ember, make(ember))
    pairs = [(ee["t"], te["t"])] if in_dict else list(zip(ee, te))
    for e, t in pairs:
        assert _layout(e) == _layout(t)
    if not in_dict:
        ee[0][0, 0] = te[0][0, 0] = 100.0
        assert ee[1].tolist() == te[1].tolist()


class _Cfg:
    pass


class _Other:
    pass


@pytest.fixture
def restore_safe_globals():
    saved = {m: list(m.serialization.get_safe_globals()) for m in (torch, ember)}
    yield
    for m, items in saved.items():
        m.serialization.clear_safe_globals()
        m.serialization.add_safe_globals(items)


def _mine(m) -> list:
    return [g.__name__ for g in m.serialization.get_safe_globals() if g in (_Cfg, _Other)]


@pytest.mark.parametrize(
    "before, block, inside",
    [
        ([], [_Cfg], []),
        ([_Cfg], [_Cfg], []),  # torch drops it on exit though it was allow-listed before
        ([_Other], [_Cfg], []),
        ([], [_Cfg], [_Other]),  # added inside the block: kept
        ([_Cfg], [_Cfg, _Other], [_Other]),
    ],
)
def test_safe_globals_block_exit(restore_safe_globals, before, block, inside):
    out = {}
    for m in (torch, ember):
        items = [g for g in m.serialization.get_safe_globals() if g not in (_Cfg, _Other)]
        m.serialization.clear_safe_globals()
        m.serialization.add_safe_globals(items + before)
        with m.serialization.safe_globals(block):
            assert set(block) <= set(m.serialization.get_safe_globals())
            m.serialization.add_safe_globals(inside)
        out[m] = sorted(_mine(m))
    assert out[ember] == out[torch]


def test_matmul_precision_bad_value_warning_text():
    texts = {}
    for m in (torch, ember):
        old = m.get_float32_matmul_precision()
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            m.set_float32_matmul_precision("bogus")
        m.set_float32_matmul_precision(old)
        texts[m] = [str(w.message).split(" (Triggered internally")[0] for w in rec]
    assert texts[ember] == texts[torch]


@pytest.mark.parametrize(
    "make",
    [
        lambda m: (m.ones(2), [1.0, 1.0]),
        lambda m: (m.nn.Parameter(m.ones(2)), (1.0, 1.0)),
        lambda m: (m.Size([2]), m.ones(2)),
        lambda m: ("a", m.ones(1)),
    ],
)
def test_assert_close_unsupported_pair_names_torch_classes(make):
    texts = []
    for m in (torch, ember):
        with pytest.raises(TypeError) as info:
            m.testing.assert_close(*make(m))
        texts.append(str(info.value))
    assert texts[1] == texts[0]
