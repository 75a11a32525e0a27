"""Parity regressions found by the sixty-seventh wave, a seeded fuzz of chains of one to five
shape and view ops (view/reshape, flatten/unflatten, squeeze/unsqueeze, permutes and transposes,
expand, narrow/select/slicing, the splits, diagonal/diag_embed, unfold, as_strided, flip/roll/
rot90, repeat/repeat_interleave/tile, the joins, atleast_nd, ravel, view(dtype)) on contiguous,
transposed, step-sliced, expanded and channels_last tensors of zero to five dims with size-0 and
size-1 dims, comparing values, shapes, strides, contiguity, aliasing, errors and the gradient of
``(chain(x) * w).sum()`` with torch: ``flip`` of only size-1 dims returned the input's memory
with a negative stride (writes went through), rot90 by one or three quarter turns was a view of a
temporary (torch's is none), the gradient of ``tensor_split`` at indices that go back (its pieces
overlap) had the wrong shape, ``ravel`` and ``repeat_interleave`` by a number did not view a copy
as torch's do (``_base``; a permuted input's repeat came out permuted), ``.T`` of a 0-D or 1-D
tensor was the tensor itself, not a view, ``mT``/``mH``/``adjoint`` of a 0-D tensor raised
where torch warns (``H`` did not warn), ``movedim`` of a 0-D tensor crashed, ``view`` of a non-contiguous tensor and
``expand`` of a 0-D one gave size-1 dims other strides, ``view(dtype)`` let a size-1 last dim of
stride > 1 through and, to a wider dtype, an odd offset or stride (numpy then reported wrong
strides), ``cat`` of channels_last inputs with a size-1 dim came out row-major and of inputs
of mixed formats channels_last (torch: the format all inputs suggest, else contiguous),
``as_strided`` with a zero stride let writes through, a 0-D tensor's ``unfold`` of
size 0 kept its element, and the texts of reshape's ambiguous -1 with zero elements,
a negative size, ``view()``, ``x.permute()``, ``view(2.5)``, ``select``'s out-of-range dim, ``adjoint`` of a 1-D
tensor and repeat_interleave's output_size."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import results_or_same_error, same_error, same_grads_or_error, upstream

LIBS = (torch, ember)


def _grads(build):
    """``build(m, x)`` -> y; the gradient of ``(y * w).sum()`` for a non-uniform ``w``."""

    def f(m):
        x = m.arange(1.0, 25.0, dtype=m.float64).reshape(2, 3, 4).requires_grad_()
        y = build(m, x)
        (y * upstream(m, y)).sum().backward()
        return [x.grad]

    return same_grads_or_error(f)


# ---------------------------------------------------------------------- flip / rot90
def test_flip_of_size_one_dims_is_a_copy_with_torch_strides():
    for make in (
        lambda m: m.zeros(1, 1),
        lambda m: m.zeros(3, 1),
        lambda m: m.zeros(1, 3).T,
        lambda m: m.zeros(3, 2).T,
        lambda m: m.zeros(3, 1, 2).permute(2, 1, 0),
    ):
        for dims in ([], [0], [1], [0, 1]):
            got = {}
            for m in LIBS:
                x = make(m)
                y = x.flip(dims)
                y.add_(1)
                got[m] = (_layout(y), x.sum().item(), y.data_ptr() == x.data_ptr())
            assert got[ember] == got[torch]


def test_rot90_is_no_view():
    for k in (-1, 1, 3):
        got = [
            (r._base is None, r.stride(), r.tolist())
            for r in (m.rot90(m.arange(6.0).reshape(2, 3), k) for m in LIBS)
        ]
        assert got[0] == got[1]
    assert _grads(lambda m, x: m.rot90(x, 1, (0, 2)))


# ---------------------------------------------------------------------- splits
@pytest.mark.parametrize("ids", [[1, 0], [-1, 0, 3], [2, 1, 1, 0]])
def test_tensor_split_gradient_with_overlapping_pieces(ids):
    def build(m, x):
        ps = x.tensor_split(m.tensor(ids) if ids == [1, 0] else ids, 1)
        return m.cat([p.reshape(-1) * (i + 1) for i, p in enumerate(ps)])

    assert _grads(build)


# ---------------------------------------------------------------------- views of copies
def test_ravel_views_a_contiguous_copy():
    for m in LIBS:
        x = m.ones(2, 3, requires_grad=True)
        r = x.T.ravel()
        assert r._base is not None and r._base is not x
        assert type(r.grad_fn).__name__ == "ViewBackward0"
        assert type(r.grad_fn.next_functions[0][0]).__name__ == "CloneBackward0"
        assert m.ravel(x)._base is x
    assert _grads(lambda m, x: x.transpose(0, 2).ravel())


def test_repeat_interleave_by_a_number_views_a_row_major_copy():
    for dim in (None, 0, 1, -1):
        got = []
        for m in LIBS:
            x = m.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)
            r = x.repeat_interleave(2, dim)
            got.append((r.stride(), r._base is not None, tuple(r._base.shape), r.tolist()))
        assert got[0] == got[1]
    assert _grads(lambda m, x: x.transpose(0, 1).repeat_interleave(3, 1))
    same_error(lambda m: m.ones(2, 3).repeat_interleave(2, 0, output_size=5), RuntimeError)


# ---------------------------------------------------------------------- transposes of < 2 dims
def test_T_of_0d_and_1d_is_a_view():
    for shape in ((), (3,)):
        got = []
        for m in LIBS:
            x = m.ones(shape, requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                y = x.T
            got.append((y is x, y._base is x, type(y.grad_fn).__name__))
        assert got[0] == got[1]


@pytest.mark.parametrize("attr", ["mT", "mH", "adjoint"])
def test_matrix_transposes_of_a_0d_tensor(attr):
    got = []
    for m in LIBS:
        z = m.tensor(1 + 2j)
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            r = z.adjoint() if attr == "adjoint" else getattr(z, attr)
        got.append(complex(r.resolve_conj().item()))
    assert got[0] == got[1]


def test_adjoint_of_a_1d_tensor_names_adjoint():
    same_error(lambda m: m.ones(3).adjoint(), RuntimeError)
    same_error(lambda m: m.adjoint(m.ones(3)), RuntimeError)


def test_movedim_of_a_0d_tensor():
    for args in ((0, 0), (-1, 0), ([0], [-1]), ([], [])):
        for want, got in results_or_same_error(lambda m, a=args: m.movedim(m.tensor(2.0), *a)):
            assert got.shape == want.shape and got.item() == want.item()
            assert got._base is not None
    same_error(lambda m: m.movedim(m.tensor(2.0), 1, 0), IndexError)


# ---------------------------------------------------------------------- strides
def test_view_of_a_non_contiguous_tensor_strides_size_one_dims_like_torch():
    cases = [
        (lambda m: m.arange(24.0).reshape(1, 6, 4)[:, 1::2][:, 1:2, ::2], (1, 1, 2)),
        (lambda m: m.arange(24.0).reshape(2, 3, 4)[:, 1:, ::2], (2, 1, 2, 2)),
        (lambda m: m.arange(24.0).reshape(2, 3, 4)[:, :1, ::2], (2, 1, 1, 2)),
        (lambda m: m.arange(12.0).reshape(3, 4)[:, :2], (1, 3, 2)),
        (lambda m: m.arange(12.0).reshape(3, 4)[:, :2], (3, 2, 1, 1)),
        (lambda m: m.arange(6.0).reshape(3, 2)[::3], (1, 1, 2)),
    ]
    for make, shape in cases:
        for want, got in results_or_same_error(lambda m, f=make, s=shape: f(m).view(s)):
            assert got.stride() == want.stride() and got.tolist() == want.tolist()


def test_expand_of_a_0d_tensor_strides():
    for sizes in ((1,), (1, 1), (2, 1), (1, 2)):
        assert ember.tensor(1.0).expand(sizes).stride() == torch.tensor(1.0).expand(sizes).stride()
        assert (
            ember.broadcast_to(ember.tensor(1.0), sizes).stride()
            == torch.broadcast_to(torch.tensor(1.0), sizes).stride()
        )


def test_cat_of_channels_last_inputs_follows_torch_format():
    def cl(m, *shape):
        x = m.arange(float(np.prod(shape))).reshape(shape)
        return x.contiguous(memory_format=m.channels_last)

    for fn in (
        lambda m: m.cat([cl(m, 2, 4, 1, 2)] * 2, 1),  # a size-1 dim: numpy went row-major
        lambda m: m.hstack([cl(m, 2, 4, 1, 2)] * 2),
        lambda m: m.cat([cl(m, 2, 4, 1, 2), m.zeros(0)], 1),  # a legacy empty: contiguous
        lambda m: m.cat([cl(m, 2, 4, 3, 2), cl(m, 2, 4, 3, 2)[:, :, ::2]], 2),  # mixed formats
        lambda m: m.cat([cl(m, 2, 4, 3, 2)] * 2, 1),
    ):
        for want, got in results_or_same_error(fn):
            assert got.stride() == want.stride() and got.tolist() == want.tolist()


# ---------------------------------------------------------------------- aliasing and dtype views
def test_as_strided_with_a_zero_stride_refuses_writes():
    for size, stride in (((3, 1), (0, 0)), ((3,), (0,))):
        same_error(lambda m, a=size, b=stride: m.ones(4).as_strided(a, b).add_(1), RuntimeError)
        same_error(
            lambda m, a=size, b=stride: m.ones(4).as_strided(a, b).copy_(m.zeros(a)), RuntimeError
        )
    for want, got in results_or_same_error(lambda m: m.ones(4).as_strided((1, 2), (0, 1)).add_(1)):
        assert got.tolist() == want.tolist()


def test_view_dtype_checks_like_torch():
    # a size-1 last dim's stride; the offset and the other strides of a view to a wider dtype
    # (numpy read them in halves of an element and reported wrong strides)
    for fn in (
        lambda m: m.zeros(1, 4, dtype=m.float64).T.view(m.float32),
        lambda m: m.zeros(1, 4).T.view(m.int16),
        lambda m: m.zeros(5)[1:].view(m.float64),
        lambda m: m.zeros(5, dtype=m.uint8)[1:].view(m.float32),
        lambda m: m.zeros(3, 5)[:, :4].view(m.float64),
        lambda m: m.zeros(3, 5, dtype=m.float64)[:, :4].view(m.complex128),
        lambda m: m.zeros(4, 6)[:, ::2].view(m.float64),  # the size is checked first
        lambda m: m.zeros(3, 8)[:, 1::2].view(m.float64),  # then the offset
        lambda m: m.zeros(4, 8)[:, ::2].view(m.float64),
    ):
        same_error(fn, RuntimeError)
    for fn in (
        lambda m: m.zeros(4)[:, None].view(m.int16),
        lambda m: m.zeros(3, 6)[:, 2:].view(m.float64),
        lambda m: m.zeros(0, 4).view(m.float64),
    ):
        for want, got in results_or_same_error(fn):
            assert _layout(got)[:3] == _layout(want)[:3]  # (torch gives a dtype view no _base)


def test_unfold_of_a_0d_tensor():
    for size in (0, 1):
        for want, got in results_or_same_error(lambda m, k=size: m.tensor(2.0).unfold(0, k, 1)):
            assert got.shape == want.shape

        def f(m, size=size):
            x = m.tensor(2.0, dtype=m.float64, requires_grad=True)
            x.unfold(0, size, 1).sum().backward()
            return [x.grad]

        same_grads_or_error(f)


# ---------------------------------------------------------------------- error texts
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(0, 4).reshape(0, -1),
        lambda m: m.zeros(0, 4).view(-1, 0),
        lambda m: m.zeros(0, 4).T.reshape(2, 0, -1),
        lambda m: m.ones(6).reshape(3, -2),
        lambda m: m.ones(6, 2)[:, 0].view(-3, -2),
        lambda m: m.ones(2, 3).select(-1, 5),
        lambda m: m.ones(2, 3).select(-2, -3),
    ],
)
def test_shape_error_texts(fn):
    same_error(fn)


def test_view_and_permute_without_sizes_and_with_a_float():
    same_error(lambda m: m.ones(2, 3).view(), TypeError)
    same_error(lambda m: m.tensor(1.0).permute(), TypeError)
    # (torch's text goes on with a "didn't match" line per overload, which ember leaves out)
    same_error(lambda m: m.ones(6).view(2.5), TypeError, first_line=True)
    same_error(lambda m: m.ones(6, 2)[:, 0].view(2.5), TypeError, first_line=True)


# ---------------------------------------------------------------------- a seeded mini-fuzz
def _start(rng):
    shape = tuple(int(s) for s in rng.choice([0, 1, 1, 2, 3, 4], int(rng.integers(0, 5))))
    kind = int(rng.integers(0, 4))
    nd = len(shape)
    if kind == 1 and nd >= 2:
        return shape[::-1], lambda m, x: x.permute(*range(nd - 1, -1, -1))
    if kind == 2 and nd >= 1:
        return (shape[0] * 2 + 1,) + shape[1:], lambda m, x: x[1::2]
    if kind == 3 and nd >= 1:
        return (1,) + shape[1:], lambda m, x: x.expand(shape)
    return shape, lambda m, x: x


_OPS = [
    "view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose",
    "movedim", "mT", "expand", "narrow", "select", "slice", "split", "tensor_split", "unbind",
    "diagonal", "unfold", "contiguous", "flip", "roll", "rot90", "repeat", "repeat_interleave",
    "cat", "stack", "ravel",
]  # fmt: skip


def _op(rng, shape):
    n = len(shape)
    numel = int(np.prod(shape))

    def dim(extra=0):
        k = n + extra
        return int(rng.integers(-k, k)) if k else 0

    name = str(rng.choice(_OPS))
    if name in ("view", "reshape"):
        s = [numel] if numel else [0]
        if numel % 2 == 0 and numel:
            s = [2, numel // 2]
        s = [1] * int(rng.integers(0, 2)) + s
        if rng.random() < 0.5:
            s[int(rng.integers(0, len(s)))] = -1
        return lambda m, x: getattr(x, name)(*s)
    if name == "flatten" and n:
        a, b = sorted((dim() % n, dim() % n))
        return lambda m, x: x.flatten(a, b)
    if name == "unflatten" and n:
        d = dim()
        sz = shape[d]
        sizes = (1, sz) if rng.random() < 0.5 else (sz, -1) if sz else (0, 2)
        return lambda m, x: x.unflatten(d, sizes)
    if name == "squeeze":
        d = dim()
        return lambda m, x: x.squeeze(d)
    if name == "unsqueeze":
        d = dim(1)
        return lambda m, x: x.unsqueeze(d)
    if name == "permute":
        p = [int(v) for v in rng.permutation(n)]
        return lambda m, x: x.permute(*p)
    if name in ("transpose", "movedim"):
        a, b = dim(), dim()
        return lambda m, x: getattr(x, name)(a, b)
    if name == "mT":
        return lambda m, x: x.mT
    if name == "expand" and n:
        new = [int(rng.integers(0, 3)) if s == 1 else s for s in shape]
        return lambda m, x: x.expand(2, *new)
    if name == "narrow" and n:
        d = dim()
        st = int(rng.integers(0, shape[d] + 1))
        ln = int(rng.integers(0, shape[d] - st + 1))
        return lambda m, x: x.narrow(d, st, ln)
    if name == "select" and n:
        d = dim()
        i = int(rng.integers(-shape[d], shape[d])) if shape[d] else 0
        return lambda m, x: x.select(d, i)
    if name == "slice" and n:
        key = tuple(slice(int(rng.integers(-3, 3)), None, int(rng.integers(1, 3))) for _ in shape)
        return lambda m, x: x[key]
    if name in ("split", "tensor_split", "unbind") and n:
        d, pick = dim(), int(rng.integers(0, 4))
        arg = {"split": 2, "unbind": None}.get(name, [int(v) for v in rng.integers(-1, 4, 2)])

        def f(m, x):
            ps = x.unbind(d) if arg is None else getattr(x, name)(arg, d)
            return ps[pick % len(ps)] if ps else x

        return f
    if name == "diagonal" and n >= 2:
        o, a, b = int(rng.integers(-2, 3)), dim(), dim()
        return lambda m, x: x.diagonal(o, a, b)
    if name == "unfold":
        d = dim()
        size, step = int(rng.integers(0, 3)), int(rng.integers(1, 3))
        return lambda m, x: x.unfold(d, size, step)
    if name == "contiguous":
        return lambda m, x: x.contiguous()
    if name == "flip":
        dims = sorted({dim() for _ in range(int(rng.integers(0, 3)))})
        return lambda m, x: x.flip(dims)
    if name == "roll" and n:
        s, d = int(rng.integers(-3, 4)), dim()
        return lambda m, x: x.roll(s, d)
    if name == "rot90" and n >= 2:
        k = int(rng.integers(-2, 4))
        return lambda m, x: m.rot90(x, k, (0, -1))
    if name == "repeat":
        reps = tuple(int(v) for v in rng.integers(0, 3, n + int(rng.integers(0, 2))))
        return lambda m, x: x.repeat(*reps) if reps else x
    if name == "repeat_interleave":
        k, d = int(rng.integers(0, 3)), (dim() if n and rng.random() < 0.7 else None)
        return lambda m, x: x.repeat_interleave(k, d)
    if name in ("cat", "stack"):
        d = dim(name == "stack")
        return lambda m, x: getattr(m, name)([x, x.contiguous() * 2], d)
    if name == "ravel":
        return lambda m, x: x.ravel()
    return None


def _layout(t):
    big = [i for i, s in enumerate(t.shape) if s > 1]  # size-1 strides: see below
    dense = [t.stride(i) for i in big] if t.numel() else None
    return tuple(t.shape), dense, t.is_contiguous(), t._base is not None


def _chain(seed):
    rng = np.random.default_rng(seed)
    bshape, start = _start(rng)
    data = rng.standard_normal(bshape)
    ops, t = [], start(torch, torch.tensor(data))
    for _ in range(int(rng.integers(1, 6))):
        f = _op(rng, tuple(t.shape))
        if f is None:
            continue
        ops.append(f)
        try:
            t = f(torch, t)
        except (RuntimeError, IndexError, TypeError):
            break

    def run(m, grad):
        x = m.tensor(data, requires_grad=grad)
        y, trace = start(m, x), []
        for f in ops:
            y = f(m, y)
            trace.append(_layout(y))
        return x, y, trace

    return run


@pytest.mark.parametrize("block", range(5))
def test_seeded_mini_fuzz_of_view_chains(block):
    """30 chains a block: same values, shapes, strides of dims > 1 (a size-1 dim's stride and an
    empty tensor's are left to numpy), contiguity, view-ness, errors and gradients."""
    for seed in range(block * 30, block * 30 + 30):
        run = _chain(seed)
        pairs = results_or_same_error(lambda m, run=run: run(m, False))
        if not pairs:
            continue
        _, (yt, ye), (lt, le) = pairs
        assert le == lt, seed
        np.testing.assert_allclose(ye.numpy(), yt.numpy())

        def grads(m, run=run, seed=seed):
            x, y, _ = run(m, True)
            w = m.tensor(np.random.default_rng(seed).standard_normal(tuple(y.shape)))
            (y * w).sum().backward()
            return [x.grad]

        same_grads_or_error(grads)
