"""Parity regressions found by the forty-ninth wave, a sweep of the strides and contiguity of
results across the op set (every op called with contiguous, transposed, permuted, step-sliced,
expanded and channels_last inputs; torch is the oracle): a copy of an expanded tensor (clone,
``.float()``/``.half()``/``.to(dtype)``/``.type()``/``.bool()``, relu, float_power, flip, the
scipy-backed special functions) put the broadcast (stride-0) dims fastest in memory as numpy's
'K' order does, where torch's copy keeps the dims in place and is contiguous, so ``.view(-1)``
raised; ``*_like`` of a non-dense tensor came back row-major where torch keeps the input's dim
order; ``roll``, ``stack``, ``tril``/``triu``, ``repeat``/``tile`` by ones, batched ``cdist``,
``einsum``, ``tensordot``, batched ``matmul``, ``gather`` with a permuted index, ``cross``,
``searchsorted``, ``mvlgamma``, ``layer_norm`` of a transposed matrix, ``group_norm`` of a
permuted 3-d input and ``logsigmoid`` kept numpy's permuted layout where torch's results are
contiguous (``rot90`` of a transposed matrix too, through ``flip``, which now keeps the input's
layout as torch's does); ``x[:, idx]`` of a permuted, step-sliced, expanded or channels_last
tensor came back with the indexed dims outermost (wave 36 fixed only contiguous inputs);
``nonzero(as_tuple=True)`` and ``where(condition)`` gave strided columns of one array where
torch's are contiguous rows; the reductions ``nansum``, ``nanmean``, ``prod``, ``aminmax``,
``mode``, ``var_mean``, ``std_mean``, ``norm``, ``count_nonzero``, ``all``/``any``,
``hash_tensor``, the half-precision ``sum``/``mean``, the scans ``logcumsumexp``/``cummax``/
``cummin``, ``renorm`` and batched ``det``/``slogdet``/``svdvals``/``eigvalsh``/``eigvals``/
``geqrf`` kept a permuted input's (batch) order; pooling of a permuted input kept its order,
while the 1-d pools of a channels-fastest input and the 3-d average/adaptive pools of a
channels_last_3d one did not follow torch (channels-fastest results for the former, contiguous
for the latter), ``instance_norm`` of a channels_last input and ``rrelu`` in eval mode kept the
input's layout, ``dropout`` and 3-d nearest upsampling lost channels_last(_3d), and SDPA of a
query with a strided last dim kept a permuted layout; ``linalg.svd``'s U and Vh were row-major
where torch's are column-major (so ``torch.svd``'s V was not contiguous); the ``*_copy`` view
ops kept the view's layout; the ``.grad`` of a non-dense leaf was transposed where torch's
layout contract makes it contiguous; ``clone(memory_format=contiguous_format)``,
``linalg.matrix_power(x, 1)``, ``diff(x, n=0)`` and a one-block ``block_diag`` returned the
input's own memory; ``rot90(x, 0)`` kept the input's layout and took a float ``k``;
``contiguous(memory_format=preserve_format)`` raised for a contiguous tensor, which torch
returns as is; ``as_strided`` of a clone of a transposed tensor read its storage in row-major
order instead of memory order; and ``resize_`` ignored ``memory_format`` and filled a new shape
in logical order instead of the storage's."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(49)


def _arr(*shape) -> np.ndarray:
    return _RNG.standard_normal(shape).astype(np.float32)


def _make(m, a: np.ndarray, kind: str):
    """``a`` as a tensor of module ``m`` laid out as ``kind``: c (contiguous), t (last two dims
    transposed), p (all dims reversed), s (every other element of the last dim), e (dim 0
    expanded from size 1), cl (channels_last)."""
    if kind == "c":
        return m.tensor(a)
    if kind == "t":
        return m.tensor(np.ascontiguousarray(a.swapaxes(-1, -2))).transpose(-1, -2)
    if kind == "p":
        perm = tuple(range(a.ndim))[::-1]
        return m.tensor(np.ascontiguousarray(a.transpose(perm))).permute(*perm)
    if kind == "s":
        return m.tensor(np.repeat(a, 2, axis=-1))[..., ::2]
    if kind == "e":
        return m.tensor(a[:1].copy()).expand(*a.shape)
    return m.tensor(a).contiguous(memory_format=m.channels_last)


def _check(e, t) -> None:
    """Same values, dtype, shape, strides (of the dims of size > 1) and contiguity; ``.view(-1)``
    works in ember when it works in torch."""
    if isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _check(a, b)
        return
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    # a size-1 dim's stride is arbitrary (numpy and torch pick different ones)
    big = [i for i, n in enumerate(t.shape) if n > 1]
    assert [e.stride(i) for i in big] == [t.stride(i) for i in big]
    assert e.is_contiguous() == t.is_contiguous()
    if t.is_contiguous():
        e.view(-1)
    te, tt = e.detach(), t.detach()
    if tt.dtype == torch.bool:
        np.testing.assert_array_equal(te.numpy(), tt.numpy())
    else:
        np.testing.assert_allclose(
            te.double().numpy(), tt.double().numpy(), rtol=1e-5, atol=1e-5, equal_nan=True
        )


def _both(fn, arrays, kind):
    return tuple(fn(m, *(_make(m, a, kind) for a in arrays)) for m in (ember, torch))


# ------------------------------------------------------------ copies of expanded tensors
_COPIES = {
    "clone": lambda m, x: x.clone(),
    "clone_preserve": lambda m, x: x.clone(memory_format=m.preserve_format),
    "double": lambda m, x: x.double(),
    "half": lambda m, x: x.half(),
    "to_int32": lambda m, x: x.to(m.int32),
    "type": lambda m, x: x.type(m.float64),
    "bool": lambda m, x: x.bool(),
    "to_copy": lambda m, x: x.to(m.float32, copy=True),
    "relu": lambda m, x: x.relu(),
    "float_power": lambda m, x: m.float_power(x, 2),
    "flip": lambda m, x: x.flip(-1),
}


@pytest.mark.parametrize("name", list(_COPIES))
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (2, 3, 4, 5)])
def test_copy_of_expanded_tensor_is_contiguous(name, shape):
    e, t = _both(_COPIES[name], [_arr(*shape)], "e")
    assert t.is_contiguous()
    _check(e, t)


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.zeros(4, 3).t()[None].expand(2, 3, 4),  # stride 0 outermost, then permuted
        lambda m: m.zeros(2, 1, 4).expand(2, 3, 4),  # a middle stride-0 dim
        lambda m: m.zeros(1, 3, 1, 5).expand(2, 3, 4, 5),
        lambda m: m.zeros(()).expand(2, 3),
    ],
)
def test_clone_and_cast_of_broadcast_views_follow_torch(make):
    for f in (lambda x: x.clone(), lambda x: x.double(), lambda x: x.relu(), lambda x: x.flip(0)):
        _check(f(make(ember)), f(make(torch)))


# ------------------------------------------------------------ *_like of non-dense tensors
_NON_DENSE = [
    lambda m: m.zeros(4, 6).t()[::2],  # transposed, then every other row
    lambda m: m.zeros(4, 3).t()[None].expand(2, 3, 4),
    lambda m: m.zeros(2, 3, 4, 5).contiguous(memory_format=m.channels_last)[..., ::2],
    lambda m: m.zeros(8, 3).t()[:, ::2],
]
_LIKES = {
    "empty_like": lambda m, x: m.empty_like(x),
    "zeros_like": lambda m, x: m.zeros_like(x),
    "ones_like": lambda m, x: m.ones_like(x),
    "full_like": lambda m, x: m.full_like(x, 2.0),
    "rand_like": lambda m, x: m.rand_like(x),
    "randint_like": lambda m, x: m.randint_like(x, 4),
}


@pytest.mark.parametrize("make", _NON_DENSE)
@pytest.mark.parametrize("name", list(_LIKES))
def test_like_of_non_dense_tensor_keeps_dim_order(make, name):
    e, t = _LIKES[name](ember, make(ember)), _LIKES[name](torch, make(torch))
    assert e.stride() == t.stride() and e.is_contiguous() == t.is_contiguous()
    if name in ("zeros_like", "ones_like", "full_like"):
        _check(e, t)


# ------------------------------------------------------------ shape ops of permuted inputs
_SHAPE_OPS = {
    "roll": lambda m, x: x.roll(1, 0),
    "roll2": lambda m, x: x.roll((1, 1), (0, 1)),
    "rot90": lambda m, x: x.rot90(1, (0, 1)),
    "rot90_3": lambda m, x: x.rot90(3, (-2, -1)),
    "stack": lambda m, x: m.stack([x, x]),
    "stack1": lambda m, x: m.stack([x, x], 1),
    "stack_last": lambda m, x: m.stack([x, x], -1),
    "tril": lambda m, x: x.tril(),
    "triu": lambda m, x: x.triu(1),
    "cdist": lambda m, x: m.cdist(x, x),
    "einsum": lambda m, x: m.einsum("...ij,...jk->...ik", x, x),
    "einsum_sum": lambda m, x: m.einsum("...ij->...i", x),
    "tensordot": lambda m, x: m.tensordot(x, x, dims=([x.ndim - 1], [x.ndim - 2])),
    "flip": lambda m, x: x.flip(0),
}


@pytest.mark.parametrize("name", list(_SHAPE_OPS))
@pytest.mark.parametrize("kind", ["c", "t", "p", "s", "e"])
@pytest.mark.parametrize("shape", [(4, 4), (2, 4, 4)])
def test_shape_op_layouts_match_torch(name, kind, shape):
    if name == "tensordot" and kind == "e" and len(shape) == 3:
        shape = (4, 4)
    e, t = _both(_SHAPE_OPS[name], [_arr(*shape)], kind)
    _check(e, t)


@pytest.mark.parametrize("dim", [0, 1, 2, 3, 4])
def test_stack_of_channels_last_at_dims_0_and_last(dim):
    x = _arr(2, 3, 4, 5)
    e, t = _both(lambda m, a: m.stack([a, a], dim), [x], "cl")
    _check(e.contiguous(), t.contiguous())
    if dim in (0, 4):  # torch's stack keeps channels_last slabs at dim 0, is contiguous at the end
        _check(e, t)


@pytest.mark.parametrize("kind", ["c", "t", "cl"])
def test_roll_keeps_the_suggested_memory_format(kind):
    e, t = _both(lambda m, x: x.roll(1, 1), [_arr(2, 3, 4, 5)], kind)
    _check(e, t)


# ------------------------------------------------------------ advanced indexing
_INDEXING = {
    "dim1": lambda m, x: x[:, m.tensor([1, 0])],
    "last": lambda m, x: x[..., m.tensor([1, 0])],
    "dim0": lambda m, x: x[m.tensor([1, 0])],
    "two_d": lambda m, x: x[:, m.tensor([[0, 1], [1, 0]])],
    "mask_row": lambda m, x: x[:, m.tensor([True, False, True])],
    "pair": lambda m, x: x[m.tensor([1, 0]), m.tensor([0, 1])],
    "separated": lambda m, x: x[m.tensor([1, 0]), :, m.tensor([0, 1])],
    "int_then_adv": lambda m, x: x[0, :, m.tensor([0, 1])],
    "newaxis": lambda m, x: x[None, :, m.tensor([0, 2])],
}


@pytest.mark.parametrize("name", list(_INDEXING))
@pytest.mark.parametrize("kind", ["c", "t", "p", "s", "e", "cl"])
def test_advanced_index_layout_matches_torch(name, kind):
    e, t = _both(_INDEXING[name], [_arr(2, 3, 4, 5)], kind)
    _check(e, t)


@pytest.mark.parametrize("kind", ["t", "p", "s", "cl"])
def test_advanced_index_gradient_of_permuted_input(kind):
    a = _arr(2, 3, 4, 5)
    g = np.arange(2 * 2 * 4 * 5, dtype=np.float32).reshape(2, 2, 4, 5) / 7
    grads = []
    for m in (ember, torch):
        x = _make(m, a, kind).detach().requires_grad_()
        y = x[:, m.tensor([2, 0])]
        y.backward(m.tensor(g))
        grads.append((y, x.grad))
    _check(grads[0][0], grads[1][0])
    _check(grads[0][1], grads[1][1])


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4)])
def test_nonzero_as_tuple_gives_contiguous_rows(shape):
    x = _arr(*shape)
    e = (ember.tensor(x) > 0).nonzero(as_tuple=True)
    t = (torch.tensor(x) > 0).nonzero(as_tuple=True)
    _check(e, t)


# ------------------------------------------------------------ reductions and scans
_REDUCTIONS = {
    "nansum": lambda m, x: x.nansum(1),
    "prod": lambda m, x: x.prod(1),
    "aminmax": lambda m, x: tuple(m.aminmax(x, dim=1)),
    "mode": lambda m, x: tuple(x.round().mode(1)),
    "median": lambda m, x: tuple(x.median(1)),
    "var_mean": lambda m, x: m.var_mean(x, 1),
    "std_mean": lambda m, x: m.std_mean(x, 0),
    "norm": lambda m, x: x.norm(dim=1),
    "count_nonzero": lambda m, x: m.count_nonzero(x > 0, 1),
    "all": lambda m, x: (x > 0).all(1),
    "any": lambda m, x: (x > 0).any(-1),
    "half_sum": lambda m, x: x.half().sum(1),
    "half_mean": lambda m, x: x.half().mean(1),
    "logcumsumexp": lambda m, x: x.logcumsumexp(1),
    "cummax": lambda m, x: tuple(x.cummax(1)),
    "cummin": lambda m, x: tuple(x.cummin(0)),
    "renorm": lambda m, x: x.renorm(2, 0, 1.0),
}


@pytest.mark.parametrize("name", list(_REDUCTIONS))
@pytest.mark.parametrize("kind", ["t", "p", "e", "cl"])
def test_reduction_and_scan_results_are_contiguous(name, kind):
    e, t = _both(_REDUCTIONS[name], [_arr(2, 3, 4, 5)], kind)
    _check(e, t)


@pytest.mark.parametrize("name", ["logcumsumexp", "cummax", "renorm", "prod", "norm"])
def test_reduction_gradients_of_permuted_input(name):
    a = _arr(2, 3, 4, 5)
    out = []
    for m in (ember, torch):
        x = _make(m, a, "p").detach().requires_grad_()
        y = _REDUCTIONS[name](m, x)
        y = y[0] if isinstance(y, tuple) else y
        y.backward(m.tensor(np.arange(y.numel(), dtype=np.float32).reshape(tuple(y.shape)) / 9))
        out.append(x.grad)
    _check(out[0], out[1])


# ------------------------------------------------------------ nn ops
_NN = {
    "max_pool_idx": lambda m, x: tuple(m.nn.functional.max_pool2d(x, 2, return_indices=True)),
    "avg_pool": lambda m, x: m.nn.functional.avg_pool2d(x, 2),
    "adaptive_max": lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 3),
    "lp_pool": lambda m, x: m.nn.functional.lp_pool2d(x, 2, 2),
    "max_pool1d": lambda m, x: m.nn.functional.max_pool1d(x.flatten(2), 2),
    "avg_pool1d": lambda m, x: m.nn.functional.avg_pool1d(x.flatten(2), 2),
    "instance_norm": lambda m, x: m.nn.functional.instance_norm(x),
    "rrelu_eval": lambda m, x: m.nn.functional.rrelu(x),
    "max_pool": lambda m, x: m.nn.functional.max_pool2d(x, 2),
    "conv_relu": lambda m, x: m.nn.functional.relu(m.nn.functional.conv2d(x, m.ones(4, 3, 3, 3))),
}


@pytest.mark.parametrize("name", list(_NN))
@pytest.mark.parametrize("kind", ["c", "t", "p", "cl"])
def test_nn_op_layouts_match_torch(name, kind):
    e, t = _both(_NN[name], [_arr(2, 3, 6, 6)], kind)
    _check(e, t)


_POOL1D = {
    "max": lambda m, x: m.nn.functional.max_pool1d(x, 2),
    "max_idx": lambda m, x: tuple(m.nn.functional.max_pool1d(x, 2, return_indices=True)),
    "avg": lambda m, x: m.nn.functional.avg_pool1d(x, 2),
    "lp": lambda m, x: m.nn.functional.lp_pool1d(x, 2, 2),
    "adaptive_avg": lambda m, x: m.nn.functional.adaptive_avg_pool1d(x, 3),
    "adaptive_max": lambda m, x: tuple(m.nn.functional.adaptive_max_pool1d(x, 3, True)),
    "reflect_pad": lambda m, x: m.nn.functional.pad(x, (1, 1), mode="reflect"),
}


@pytest.mark.parametrize("name", list(_POOL1D))
@pytest.mark.parametrize("kind", ["c", "channels_fastest", "p", "t"])
def test_1d_pool_layouts_match_torch(name, kind):
    # torch runs most 1-d pools as 2-d pools of height 1: an (N, C, L) input whose channels
    # are fastest is channels_last there, and so is the result (not max_pool1d's own kernel)
    a = _arr(2, 3, 8)
    out = []
    for m in (ember, torch):
        if kind == "channels_fastest":
            x = m.tensor(np.ascontiguousarray(a.transpose(0, 2, 1))).transpose(1, 2)
        else:
            x = _make(m, a, kind)
        out.append(_POOL1D[name](m, x))
    _check(out[0], out[1])


@pytest.mark.parametrize("name", ["avg_pool", "lp_pool", "max_pool_idx", "instance_norm"])
def test_nn_op_gradients_of_permuted_input(name):
    a = _arr(2, 3, 6, 6)
    out = []
    for m in (ember, torch):
        x = _make(m, a, "t").detach().requires_grad_()
        y = _NN[name](m, x)
        y = y[0] if isinstance(y, tuple) else y
        y.backward(m.tensor(np.arange(y.numel(), dtype=np.float32).reshape(tuple(y.shape)) / 11))
        out.append(x.grad)
    _check(out[0], out[1])


_MORE = {
    "gather_transposed_index": lambda m, x: x[0, 0].gather(1, m.zeros(2, 4, dtype=m.long).t()),
    "layer_norm": lambda m, x: m.nn.functional.layer_norm(x[0, 0, :4].t(), (4,)),
    "group_norm_3d": lambda m, x: m.nn.functional.group_norm(x[0].transpose(1, 2), 1),
    "matmul_batch_permuted": lambda m, x: x.permute(1, 0, 2, 3) @ m.ones(6, 2),
    "matmul_half_permuted": lambda m, x: x.half().permute(1, 0, 2, 3) @ m.ones(6, 2).half(),
    "dropout_cl": lambda m, x: m.nn.functional.dropout(x.contiguous(memory_format=m.channels_last)),
}


@pytest.mark.parametrize("name", list(_MORE))
def test_more_results_follow_torch_layout(name):
    e, t = _both(_MORE[name], [_arr(2, 3, 6, 6)], "c")
    if name == "dropout_cl":  # random masks: the layout, not the values
        assert e.stride() == t.stride() and e.is_contiguous() == t.is_contiguous()
        return
    _check(e, t)


_CL3D = {
    "nearest": lambda m, x: m.nn.functional.interpolate(x, scale_factor=2),
    "trilinear": lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode="trilinear"),
    "area": lambda m, x: m.nn.functional.interpolate(x, size=(3, 3, 3), mode="area"),
    "avg_pool3d": lambda m, x: m.nn.functional.avg_pool3d(x, 2),
    "adaptive_avg3d": lambda m, x: m.nn.functional.adaptive_avg_pool3d(x, 3),
    "adaptive_max3d": lambda m, x: tuple(m.nn.functional.adaptive_max_pool3d(x, 2, True)),
    "max_pool3d": lambda m, x: tuple(m.nn.functional.max_pool3d(x, 2, return_indices=True)),
}


@pytest.mark.parametrize("name", list(_CL3D))
def test_channels_last_3d_through_resampling_and_pools(name):
    a = _arr(2, 3, 4, 4, 4)
    e, t = (
        _CL3D[name](m, m.tensor(a).contiguous(memory_format=m.channels_last_3d))
        for m in (ember, torch)
    )
    _check(e, t)


_SWEEP = {
    "rot90_k0": lambda m, x: m.rot90(x, 0),
    "rot90_k4": lambda m, x: m.rot90(x, 4),
    "unsqueeze_copy": lambda m, x: m.unsqueeze_copy(x, 1),
    "squeeze_copy": lambda m, x: m.squeeze_copy(x),
    "permute_copy": lambda m, x: m.permute_copy(x, tuple(range(x.ndim))),
    "detach_copy": lambda m, x: m.detach_copy(x),
    "alias_copy": lambda m, x: m.alias_copy(x),
    "slice_copy": lambda m, x: m.slice_copy(x, 0, 0, 1),
    "unbind_copy": lambda m, x: tuple(m.unbind_copy(x, 1)),
    "split_copy": lambda m, x: tuple(m.split_copy(x, 1)),
    "where_condition": lambda m, x: m.where(x > 0.5),
    "diff_n0": lambda m, x: m.diff(x, n=0),
    "mvlgamma": lambda m, x: m.mvlgamma(x + 1, 2),
    "searchsorted": lambda m, x: m.searchsorted(m.tensor([0.25, 0.5, 0.75]), x),
    "nanmean": lambda m, x: x.nanmean(1),
    "hash_tensor": lambda m, x: m.hash_tensor(x, 1),
    "tile_ones": lambda m, x: x.tile(1),
    "repeat_ones": lambda m, x: x.repeat(*([1] * x.ndim)),
    "logsigmoid": lambda m, x: m.nn.functional.logsigmoid(x),
    "svd": lambda m, x: tuple(m.svd(x)),
    "linalg_svd": lambda m, x: tuple(m.linalg.svd(x)[::2]),  # U and Vh (S: see test below)
    "det": lambda m, x: m.linalg.det(x),
    "slogdet": lambda m, x: tuple(m.linalg.slogdet(x)),
    "geqrf_tau": lambda m, x: m.geqrf(x)[1],
    "sdpa": lambda m, x: m.nn.functional.scaled_dot_product_attention(x, x, x),
    "xlog1py": lambda m, x: m.special.xlog1py(x, x),
    "chebyshev_t": lambda m, x: m.special.chebyshev_polynomial_t(x, x * 4),
    "svdvals": lambda m, x: m.linalg.svdvals(x),
    "eigvalsh": lambda m, x: m.linalg.eigvalsh(x + x.mT),
    "eigvals": lambda m, x: m.linalg.eigvals(x),
}
_LAYOUT_ONLY = ("svd", "linalg_svd", "hash_tensor", "eigvals")


@pytest.mark.parametrize("name", list(_SWEEP))
@pytest.mark.parametrize("kind", ["t", "p", "e", "cl"])
def test_namespace_sweep_results_follow_torch_layout(name, kind):
    a = (np.random.default_rng(7).random((2, 3, 4, 4)) * 0.8 + 0.1).astype(np.float32)
    e, t = _both(_SWEEP[name], [a], kind)
    if name in _LAYOUT_ONLY:
        # singular vectors may differ in sign, eigenvalues in order (and hashes of float32
        # widen differently): the layouts may not
        for x, y in zip(e if isinstance(e, tuple) else (e,), t if isinstance(t, tuple) else (t,)):
            assert x.stride() == y.stride() and x.is_contiguous() == y.is_contiguous()
            x.reshape(-1)
            if y.is_contiguous():
                x.view(-1)
        return
    _check(e, t)


def test_view_copies_and_helpers_own_their_memory():
    def run(m):
        x = m.tensor(_arr(4, 3)).t()
        ys = (m.diff(x, n=0), m.block_diag(x), m.rot90(x, 0), m.alias_copy(x))
        assert all(y.data_ptr() != x.data_ptr() for y in ys)
        with pytest.raises(TypeError, match=r"rot90\(\): argument 'k' \(position 2\) must be int"):
            m.rot90(x, 1.5)
        return ys

    state = _RNG.bit_generator.state
    e = run(ember)
    _RNG.bit_generator.state = state
    _check(e, run(torch))


def test_cross_of_channels_last_is_contiguous():
    a, b = _arr(2, 3, 4, 5), _arr(2, 3, 4, 5)
    e, t = (
        m.linalg.cross(
            m.tensor(a).contiguous(memory_format=m.channels_last),
            m.tensor(b).contiguous(memory_format=m.channels_last),
            dim=1,
        )
        for m in (ember, torch)
    )
    _check(e, t)


# ------------------------------------------------------------ gradients of non-dense leaves
def test_grad_of_step_sliced_leaf_is_contiguous():
    a = _arr(3, 8)
    grads = []
    for m in (ember, torch):
        x = m.tensor(a)[:, ::2].requires_grad_()
        y = x.t() * 2
        y.backward(m.tensor(np.arange(12, dtype=np.float32).reshape(4, 3)))
        grads.append(x.grad)
    _check(grads[0], grads[1])


# ------------------------------------------------------------ memory sharing and storage order
def test_clone_contiguous_format_owns_its_memory():
    for m in (ember, torch):
        x = m.zeros(2, 3)
        y = x.clone(memory_format=m.contiguous_format)
        assert y.data_ptr() != x.data_ptr()
        y.fill_(1.0)
        assert x.sum().item() == 0.0


def test_matrix_power_one_is_a_new_contiguous_tensor():
    a = _arr(3, 3)
    for kind in ("c", "t"):
        e, t = _both(lambda m, x: m.linalg.matrix_power(x, 1), [a], kind)
        _check(e, t)
    x = ember.tensor(a).requires_grad_()
    y = ember.linalg.matrix_power(x, 1)
    assert y.data_ptr() != x.data_ptr()
    g = np.arange(9, dtype=np.float32).reshape(3, 3)
    y.backward(ember.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), g)


def test_contiguous_preserve_format_returns_a_row_major_tensor():
    for m in (ember, torch):
        x = m.zeros(2, 3)
        assert x.contiguous(memory_format=m.preserve_format) is x
        with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
            x.t().contiguous(memory_format=m.preserve_format)
        with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
            m.empty(2, 3, 4, 5, memory_format=m.channels_last).contiguous(
                memory_format=m.preserve_format
            )


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.arange(16.0).view(4, 4).t().clone(),
        lambda m: m.arange(24.0).view(2, 3, 4).permute(2, 0, 1).clone(),
        lambda m: m.arange(120.0).view(2, 3, 4, 5).contiguous(memory_format=m.channels_last),
    ],
)
def test_as_strided_reads_the_storage_in_memory_order(make):
    for size, stride, off in (((2, 2), (1, 2), None), ((3,), (1,), 1), ((2, 3), (3, 1), 2)):
        e = make(ember).as_strided(size, stride, off)
        t = make(torch).as_strided(size, stride, off)
        _check(e, t)
    e = make(ember).as_strided_((2, 2), (1, 2))
    t = make(torch).as_strided_((2, 2), (1, 2))
    _check(e, t)


def test_resize_follows_memory_format_and_storage_order():
    def run(m):
        x = m.arange(120.0).view(2, 3, 4, 5)
        a = x.clone().resize_(2, 3, 4, 5, memory_format=m.channels_last)
        b = x.clone().permute(0, 1, 3, 2).resize_(2, 3, 5, 4, memory_format=m.contiguous_format)
        c = x.clone().permute(0, 1, 3, 2).resize_(2, 3, 5, 4)  # same shape: strides kept
        d = x.clone().permute(0, 1, 3, 2).resize_(6, 20)
        return a, b, c, d

    _check(run(ember), run(torch))
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="Unsupported memory formatPreserve"):
            m.zeros(2, 3).resize_(3, 2, memory_format=m.preserve_format)
        with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
            m.zeros(2, 3).resize_(3, 2, memory_format=m.channels_last)


def test_dense_order_strides_matches_torch_empty_like():
    from ember.core.layout import dense_order_strides

    cases = [
        ((2, 3, 4), (0, 1, 3)),
        ((2, 3, 4), (4, 0, 1)),
        ((3, 4), (2, 6)),
        ((2, 3, 4, 5), (60, 1, 15, 6)),
        ((2, 3, 4, 5), (0, 5, 0, 1)),
        ((2, 2, 3), (3, 3, 1)),  # equal strides: the smaller size is the faster dim
        ((4, 3, 2), (1, 0, 4)),
    ]
    for shape, strides in cases:
        base = torch.zeros(200)
        t = torch.empty_like(base.as_strided(shape, strides))
        assert dense_order_strides(shape, strides) == t.stride(), (shape, strides)
