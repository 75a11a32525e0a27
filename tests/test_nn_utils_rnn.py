"""nn.utils.rnn vs torch: PackedSequence, pack_padded_sequence (enforce_sorted both ways,
batch_first), pad_packed_sequence, pad_sequence (batch_first, padding_side), pack_sequence,
unpack_sequence, unpad_sequence, invert_permutation; values, batch_sizes, indices, gradients
and torch's errors."""

import re

import ember
import numpy as np
import pytest
from harness import A, Case, assert_same, needs_torch, raises_like_torch, run_case, run_gradcheck

try:
    import torch
except ImportError:  # pragma: no cover - parity checks skip without the oracle
    torch = None


def R(m):
    return m.nn.utils.rnn


def _packed_tuple(p):
    """A PackedSequence's fields as a tuple (None fields dropped) for the harness."""
    return tuple(f for f in p if f is not None)


def _pack(lengths, batch_first=False, enforce_sorted=True):
    def fn(m, x):
        p = R(m).pack_padded_sequence(x, lengths, batch_first, enforce_sorted)
        return _packed_tuple(p)

    return fn


def _roundtrip(lengths, batch_first=False, padding_value=0.0, total_length=None, sort=True):
    def fn(m, x):
        p = R(m).pack_padded_sequence(x, lengths, batch_first, enforce_sorted=sort)
        return R(m).pad_packed_sequence(p, batch_first, padding_value, total_length)

    return fn


def _padseq(batch_first=False, padding_value=0.0, padding_side="right"):
    def fn(m, *xs):
        return R(m).pad_sequence(list(xs), batch_first, padding_value, padding_side)

    return fn


CASES = [
    Case("pack_sorted", _pack([4, 3, 1]), [A(4, 3, 2)]),
    Case(
        "pack_sorted_tensor_lengths",
        lambda m, x: _packed_tuple(R(m).pack_padded_sequence(x, m.tensor([4, 2, 2]))),
        [A(4, 3, 2)],
    ),
    Case("pack_unsorted", _pack([2, 4, 1], enforce_sorted=False), [A(4, 3, 2)]),
    Case("pack_unsorted_bf", _pack([2, 4, 1, 4], True, False), [A(4, 4, 3)]),
    Case("pack_bf_1d_steps", _pack([3, 3], True), [A(2, 3)]),
    Case("roundtrip", _roundtrip([4, 3, 1]), [A(4, 3, 2)]),
    Case("roundtrip_unsorted_bf", _roundtrip([1, 3, 2], True, sort=False), [A(3, 3, 2)]),
    Case("roundtrip_padval_total", _roundtrip([3, 1], False, -1.5, 6, sort=False), [A(3, 2, 4)]),
    Case("pad_sequence", _padseq(), [A(3, 2), A(5, 2), A(1, 2)]),
    Case("pad_sequence_bf", _padseq(True, 2.0), [A(3, 2, 2), A(5, 2, 2), A(1, 2, 2)]),
    Case("pad_sequence_left", _padseq(False, 0.0, "left"), [A(3, 2), A(5, 2), A(1, 2)]),
    Case("pad_sequence_left_bf", _padseq(True, -1.0, "left"), [A(3), A(5), A(1)]),
    Case(
        "pack_sequence_unsorted",
        lambda m, a, b, c: _packed_tuple(R(m).pack_sequence([a, b, c], enforce_sorted=False)),
        [A(2, 3), A(4, 3), A(3, 3)],
    ),
    Case(
        "pack_sequence_sorted",
        lambda m, a, b: _packed_tuple(R(m).pack_sequence([a, b])),
        [A(4, 3), A(2, 3)],
    ),
    Case(
        "unpack_sequence",
        lambda m, a, b, c: tuple(
            R(m).unpack_sequence(R(m).pack_sequence([a, b, c], enforce_sorted=False))
        ),
        [A(2, 3), A(4, 3), A(3, 3)],
    ),
    Case(
        "unpad_sequence",
        # torch transposes its argument in place: hand it a non-leaf
        lambda m, x: tuple(R(m).unpad_sequence(x * 1, m.tensor([3, 1, 2]))),
        [A(3, 3, 2)],
    ),
    Case(
        "unpad_sequence_bf",
        lambda m, x: tuple(R(m).unpad_sequence(x, m.tensor([3, 1]), batch_first=True)),
        [A(2, 4, 2)],
    ),
]


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=str)
def test_parity(case):
    run_case(case)


def _float_outputs(case):
    def fn(m, *xs):
        out = case.fn(m, *xs)
        out = out if isinstance(out, tuple) else (out,)
        return tuple(o for o in out if o.is_floating_point())

    return Case(case.name, fn, case.inputs)


@pytest.mark.parametrize("case", [c for c in CASES if "tensor_lengths" not in c.name], ids=str)
def test_gradcheck(case):
    run_gradcheck(_float_outputs(case), gradgrad=True)


@needs_torch
def test_packed_fields_and_indices():
    x = np.random.default_rng(0).standard_normal((5, 4, 2)).astype(np.float32)
    for lengths in ([5, 2, 4, 1], [1, 1, 5, 3]):
        e = R(ember).pack_padded_sequence(ember.tensor(x), lengths, enforce_sorted=False)
        t = R(torch).pack_padded_sequence(torch.tensor(x), lengths, enforce_sorted=False)
        assert isinstance(e, R(ember).PackedSequence) and isinstance(e, tuple)
        assert e._fields == t._fields
        for a, b in zip(e, t):
            assert_same(a, b)
        assert e.batch_sizes.dtype == ember.int64 and e.batch_sizes.device.type == "cpu"
    e = R(ember).pack_padded_sequence(ember.tensor(x), [5, 4, 2, 1])
    assert e.sorted_indices is None and e.unsorted_indices is None


@needs_torch
def test_packed_sequence_constructor_and_methods():
    d = ember.ones(3)
    p = R(ember).PackedSequence(d, ember.tensor([2, 1]), ember.tensor([1, 0]))
    assert p.unsorted_indices.tolist() == [1, 0]
    q = R(ember).PackedSequence((d, ember.tensor([2, 1])))
    assert q.batch_sizes.tolist() == [2, 1] and q.sorted_indices is None
    r = p.double()
    assert r.data.dtype == ember.float64 and r.batch_sizes is p.batch_sizes
    assert p.to(ember.float32) is p
    assert p.long().data.dtype == ember.int64 and p.half().data.dtype == ember.float16
    assert p.cpu() is p and not p.is_cuda and not p.is_pinned()
    assert R(ember).invert_permutation(None) is None
    perm = [2, 0, 3, 1]
    np.testing.assert_array_equal(
        R(ember).invert_permutation(ember.tensor(perm)).numpy(),
        R(torch).invert_permutation(torch.tensor(perm)).numpy(),
    )
    pe = R(ember).pack_sequence([ember.ones(2, 3), ember.ones(1, 3)])
    pt = R(torch).pack_sequence([torch.ones(2, 3), torch.ones(1, 3)])
    assert repr(pe).replace("ember", "torch") == repr(pt)


@needs_torch
def test_pad_packed_lengths_and_names():
    x = ember.randn(4, 3, 2).rename("T", "N", "C")
    p = R(ember).pack_padded_sequence(x, [2, 4, 3], enforce_sorted=False)
    pad, lens = R(ember).pad_packed_sequence(p)
    assert lens.tolist() == [2, 4, 3] and lens.dtype == ember.int64
    np.testing.assert_array_equal(pad[:2, 0].rename(None).numpy(), x[:2, 0].rename(None).numpy())
    assert float(pad[3, 0].abs().sum()) == 0


BAD = [
    (
        lambda m: R(m).pack_padded_sequence(m.randn(4, 3, 2), [4, 3, 5]),
        RuntimeError,
        "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True",
    ),
    (
        lambda m: R(m).pack_padded_sequence(m.randn(4, 3, 2), [4, 3]),
        RuntimeError,
        "Expected `len(lengths)` to be equal to batch_size, but got 2 (batch_size=3)",
    ),
    (
        lambda m: R(m).pack_padded_sequence(m.randn(4, 3, 2), [4, 0, 1], enforce_sorted=False),
        RuntimeError,
        "Length of all samples has to be greater than 0, but found an element in",
    ),
    (
        lambda m: R(m).pad_packed_sequence(
            R(m).pack_padded_sequence(m.randn(4, 3, 2), [4, 3, 1]), total_length=2
        ),
        ValueError,
        (
            "Expected total_length to be at least the length of the longest sequence in input, but "
            "got total_length=2 and max sequence length being 4"
        ),
    ),
    (
        lambda m: R(m).pad_sequence([m.ones(2, 3), m.ones(3, 3)], padding_side="mid"),
        RuntimeError,
        "Expected padding_side to be one of left or right, but got mid.",
    ),
    (
        lambda m: R(m).pad_sequence([m.ones(2, 3), m.ones(3, 2)]),
        RuntimeError,
        "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1",
    ),
    (lambda m: R(m).pad_sequence([]), RuntimeError, "received an empty list of sequences"),
    (
        lambda m: R(m).pack_sequence([m.ones(2, 3), m.ones(3, 3)]),
        RuntimeError,
        "must be sorted in decreasing order",
    ),
]


@pytest.mark.parametrize("k", range(len(BAD)))
def test_errors_like_torch(k):
    fn, exc, msg = BAD[k]
    raises_like_torch(fn, exc, msg)


def test_lengths_as_float_tensor_and_list_of_tensor_rows():
    x = ember.randn(4, 3, 2)
    p = R(ember).pack_padded_sequence(x, ember.tensor([4.0, 3.0, 1.0]))
    assert p.batch_sizes.tolist() == [3, 2, 2, 1]
    # a 2-D tensor is a sequence of rows (each a sequence of scalars)
    out = R(ember).pad_sequence(ember.ones(2, 3))
    assert tuple(out.shape) == (3, 2)
    assert re.fullmatch(r"PackedSequence_?", type(p).__mro__[1].__name__)


def test_strict_backend_dispatch():
    from strict_backend import StrictArray, strict_cuda

    with strict_cuda():
        x = ember.randn(4, 3, 2, device="cuda", requires_grad=True)
        p = R(ember).pack_padded_sequence(x, [2, 4, 3], enforce_sorted=False)
        assert type(p.data._data) is StrictArray
        pad, lens = R(ember).pad_packed_sequence(p, total_length=5, padding_value=1.0)
        assert type(pad._data) is StrictArray and lens.device.type == "cpu"
        s = R(ember).pad_sequence([x[0], x[1, :2]], padding_side="left")
        assert type(s._data) is StrictArray
        (pad.sum() + s.sum()).backward()
        assert type(x.grad._data) is StrictArray
