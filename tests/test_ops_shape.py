"""Shape and view ops: parity with torch (values, dtypes, gradients), float64 gradcheck and
gradgradcheck, and torch's errors for bad inputs."""

import ember
import numpy as np
import pytest
from harness import A, Case, run_case, run_gradcheck

torch = pytest.importorskip("torch")

CASES = [
    Case("view", lambda m, x: x.view(4, 3), [A(3, 4)]),
    Case("view_infer", lambda m, x: x.view(-1, 2), [A(3, 4)]),
    Case("view_tuple", lambda m, x: x.view((2, 6)), [A(3, 4)]),
    Case("view_as", lambda m, x, y: x.view_as(y), [A(3, 4), A(6, 2, grad=False)]),
    Case("reshape", lambda m, x: m.reshape(x, (2, -1)), [A(3, 4)]),
    Case("reshape_noncontig", lambda m, x: x.t().reshape(12), [A(3, 4)]),
    Case("reshape_as", lambda m, x, y: x.t().reshape_as(y), [A(3, 4), A(2, 6, grad=False)]),
    Case("flatten", lambda m, x: x.flatten(), [A(2, 3, 4)]),
    Case("flatten_1_2", lambda m, x: m.flatten(x, 1, 2), [A(2, 3, 4, 2)]),
    Case("flatten_noncontig", lambda m, x: x.transpose(0, 2).flatten(0, 1), [A(2, 3, 4)]),
    Case("flatten_0d", lambda m, x: x.sum().flatten(), [A(2, 3)]),
    Case("ravel", lambda m, x: x.t().ravel(), [A(2, 3)]),
    Case("unflatten", lambda m, x: x.unflatten(1, (2, -1)), [A(3, 4)]),
    Case("unflatten_fn", lambda m, x: m.unflatten(x, -1, (2, 1, 2)), [A(3, 4)]),
    Case("permute", lambda m, x: x.permute(2, 0, 1), [A(2, 3, 4)]),
    Case("permute_list", lambda m, x: x.permute([1, -1, 0]), [A(2, 3, 4)]),
    Case("permute_fn", lambda m, x: m.permute(x, (1, 0, 2)), [A(2, 3, 4)]),
    Case("transpose", lambda m, x: x.transpose(0, -1), [A(2, 3, 4)]),
    Case("swapaxes", lambda m, x: m.swapaxes(x, 0, 1), [A(2, 3)]),
    Case("swapdims", lambda m, x: x.swapdims(1, 0), [A(2, 3)]),
    Case("t", lambda m, x: x.t(), [A(2, 3)]),
    Case("t_fn_1d", lambda m, x: m.t(x), [A(3)]),
    Case("T", lambda m, x: x.T, [A(2, 3)]),
    Case("mT", lambda m, x: x.mT, [A(2, 3, 4)]),
    Case("mH_real", lambda m, x: x.mH, [A(2, 3, 4)]),
    Case("H_real", lambda m, x: x.H, [A(3, 4)]),
    Case("adjoint", lambda m, x: m.adjoint(x), [A(2, 3, 4)]),
    Case("squeeze_all", lambda m, x: x.squeeze(), [A(2, 1, 3, 1)]),
    Case("squeeze_dim", lambda m, x: x.squeeze(1), [A(2, 1, 3, 1)]),
    Case("squeeze_noop", lambda m, x: x.squeeze(0), [A(2, 1, 3, 1)]),
    Case("squeeze_tuple", lambda m, x: x.squeeze((1, -1)), [A(2, 1, 3, 1)]),
    Case("unsqueeze", lambda m, x: x.unsqueeze(1), [A(2, 3)]),
    Case("unsqueeze_neg", lambda m, x: m.unsqueeze(x, -1), [A(2, 3)]),
    Case("expand", lambda m, x: x.expand(2, 3, 4), [A(3, 1)]),
    Case("expand_neg1", lambda m, x: x.expand(-1, 4), [A(3, 1)]),
    Case("expand_as", lambda m, x, y: x.expand_as(y), [A(1, 4), A(3, 4, grad=False)]),
    Case("broadcast_to", lambda m, x: m.broadcast_to(x, (2, 3, 4)), [A(4)]),
    Case("repeat", lambda m, x: x.repeat(2, 3), [A(2, 3)]),
    Case("repeat_more", lambda m, x: x.repeat(2, 1, 2), [A(2, 3)]),
    Case("tile", lambda m, x: x.tile((2,)), [A(2, 3)]),
    Case("tile_fn", lambda m, x: m.tile(x, (2, 1, 2)), [A(2, 3)]),
    Case("narrow", lambda m, x: x.narrow(1, 1, 2), [A(3, 4)]),
    Case("narrow_neg", lambda m, x: m.narrow(x, 0, -2, 2), [A(3, 4)]),
    Case("select", lambda m, x: x.select(1, 2), [A(3, 4)]),
    Case("select_neg", lambda m, x: m.select(x, 0, -1), [A(3, 4)]),
    Case("select_1d", lambda m, x: x.select(0, 1), [A(3)]),
    Case("unbind", lambda m, x: x.unbind(1), [A(3, 4)]),
    Case("unbind_fn", lambda m, x: m.unbind(x), [A(3, 2)]),
    Case("unbind_partial", lambda m, x: x.unbind(0)[1] * 2, [A(3, 4)]),
    Case("split_int", lambda m, x: x.split(2), [A(5, 3)]),
    Case("split_sizes", lambda m, x: m.split(x, [1, 2], 1), [A(5, 3)]),
    Case("split_partial", lambda m, x: x.split(2, 1)[0].sum(), [A(3, 5)]),
    Case("split_single", lambda m, x: x.split(5), [A(3, 2)]),
    Case("chunk", lambda m, x: x.chunk(3), [A(5, 2)]),
    Case("chunk_dim", lambda m, x: m.chunk(x, 2, -1), [A(2, 6)]),
    Case("tensor_split_n", lambda m, x: x.tensor_split(3), [A(7, 2)]),
    Case("tensor_split_idx", lambda m, x: m.tensor_split(x, [1, 4], 1), [A(2, 6)]),
    Case("cat", lambda m, x, y: m.cat([x, y]), [A(2, 3), A(4, 3)]),
    Case("cat_dim1", lambda m, x, y: m.cat((x, y), 1), [A(2, 3), A(2, 1)]),
    Case("cat_neg", lambda m, x, y, z: m.cat([x, y, z], -1), [A(2, 3), A(2, 1), A(2, 2)]),
    Case("cat_self", lambda m, x: m.cat([x, x * 2], 0), [A(2, 3)]),
    Case(
        "cat_promote", lambda m, x, y: m.cat([x, y]), [A(2, 3), A(2, 3, dtype="int64", grad=False)]
    ),
    Case(
        "cat_promote_int",
        lambda m, x, y: m.cat([x, y]),
        [A(2, dtype="bool", grad=False), A(2, dtype="uint8", grad=False)],
        grad=False,
    ),
    Case(
        "cat_half_int",
        lambda m, x, y: m.cat([x, y]),
        [A(2, dtype="int32", grad=False), A(2, dtype="float16", grad=False)],
        grad=False,
    ),
    Case("cat_empty_legacy", lambda m, x, y: m.cat([x, y]), [A(0, grad=False), A(2, 3)]),
    Case("concat", lambda m, x, y: m.concat([x, y], 1), [A(2, 3), A(2, 2)]),
    Case("concatenate", lambda m, x, y: m.concatenate([x, y], axis=0), [A(2, 3), A(1, 3)]),
    Case("stack", lambda m, x, y: m.stack([x, y]), [A(2, 3), A(2, 3)]),
    Case("stack_dim", lambda m, x, y: m.stack((x, y), 2), [A(2, 3), A(2, 3)]),
    Case("stack_neg", lambda m, x, y: m.stack([x, y], -1), [A(2, 3), A(2, 3)]),
    Case("hstack", lambda m, x, y: m.hstack([x, y]), [A(2), A(3)]),
    Case("hstack_2d", lambda m, x, y: m.hstack([x, y]), [A(2, 1), A(2, 3)]),
    Case("vstack", lambda m, x, y: m.vstack([x, y]), [A(3), A(2, 3)]),
    Case("dstack", lambda m, x, y: m.dstack([x, y]), [A(2, 3), A(2, 3)]),
    Case("dstack_1d", lambda m, x, y: m.dstack([x, y]), [A(3), A(3)]),
    Case("movedim", lambda m, x: x.movedim(0, 2), [A(2, 3, 4)]),
    Case("movedim_multi", lambda m, x: m.movedim(x, (0, 1), (2, 0)), [A(2, 3, 4)]),
    Case("moveaxis", lambda m, x: m.moveaxis(x, -1, 0), [A(2, 3, 4)]),
    Case("contiguous", lambda m, x: x.t().contiguous(), [A(2, 3)]),
    Case("flip", lambda m, x: x.flip(0), [A(2, 3)]),
    Case("flip_many", lambda m, x: m.flip(x, (0, -1)), [A(2, 3, 4)]),
    Case("flip_varargs", lambda m, x: x.flip(0, 2), [A(2, 3, 4)]),
    Case("fliplr", lambda m, x: m.fliplr(x), [A(2, 3)]),
    Case("flipud", lambda m, x: x.flipud(), [A(2, 3)]),
    Case("roll", lambda m, x: x.roll(1, 1), [A(2, 3)]),
    Case("roll_flat", lambda m, x: m.roll(x, -2), [A(2, 3)]),
    Case("roll_multi", lambda m, x: x.roll((1, -1), (0, 1)), [A(2, 3)]),
    Case("diagonal", lambda m, x: x.diagonal(), [A(3, 4)]),
    Case("diagonal_off", lambda m, x: m.diagonal(x, 1), [A(3, 4)]),
    Case("diagonal_neg", lambda m, x: x.diagonal(-1), [A(3, 4)]),
    Case("diagonal_dims", lambda m, x: x.diagonal(0, 0, 2), [A(2, 3, 4)]),
    Case("diagonal_dims_rev", lambda m, x: x.diagonal(1, -1, 0), [A(3, 2, 4)]),
    Case("diag_embed", lambda m, x: m.diag_embed(x), [A(2, 3)]),
    Case("diag_embed_off", lambda m, x: x.diag_embed(1, 0, 2), [A(2, 3)]),
    Case("tril", lambda m, x: x.tril(), [A(3, 4)]),
    Case("tril_k", lambda m, x: m.tril(x, -1), [A(2, 3, 4)]),
    Case("triu", lambda m, x: x.triu(1), [A(3, 4)]),
    Case("triu_fn", lambda m, x: m.triu(x), [A(2, 4, 3)]),
    Case(
        "view_chain",
        lambda m, x: x.t().unsqueeze(0).expand(2, 4, 3).narrow(2, 1, 2).flatten(),
        [A(3, 4)],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_parity(case):
    run_case(case)


GRAD_CASES = [c for c in CASES if c.grad and c.name not in ("cat_promote_int", "cat_half_int")]


@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


def test_view_dtype_matches_torch():
    import numpy as np

    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    for d in ("int32", "float16", "uint8", "float64", "int64", "complex64"):
        e = ember.tensor(a).view(getattr(ember, d))
        t = torch.tensor(a).view(getattr(torch, d))
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype).replace(
            "torch", "ember"
        )
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    x = ember.tensor(a, requires_grad=True)
    assert not x.view(ember.float32).requires_grad  # view(dtype) is not differentiable


def test_tril_triu_inplace():
    import numpy as np

    a = np.arange(12.0).reshape(3, 4)
    e, t = ember.tensor(a), torch.tensor(a)
    e.tril_(1)
    t.tril_(1)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    e.triu_()
    t.triu_()
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_inplace_metadata_ops():
    import numpy as np

    a = np.arange(6.0).reshape(2, 1, 3)
    for name, args in (
        ("squeeze_", (1,)),
        ("unsqueeze_", (0,)),
        ("transpose_", (0, 2)),
        ("swapaxes_", (0, 1)),
    ):
        e, t = ember.tensor(a), torch.tensor(a)
        r = getattr(e, name)(*args)
        getattr(t, name)(*args)
        assert r is e and tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride()
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    e = ember.tensor(a[:, 0])
    e.t_()
    assert tuple(e.shape) == (3, 2)
    x = ember.tensor(a, requires_grad=True)
    y = x * 2
    y.squeeze_(1)
    y.sum().backward()
    assert tuple(x.grad.shape) == (2, 1, 3)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.squeeze_()


ERRORS = [
    (
        lambda m: m.zeros(2, 3).t().view(6),
        RuntimeError,
        "view size is not compatible with input tensor's size and stride",
    ),
    (
        lambda m: m.zeros(2, 3).view(5),
        RuntimeError,
        r"shape '\[5\]' is invalid for input of size 6",
    ),
    (
        lambda m: m.zeros(2, 3).view(4, -1),
        RuntimeError,
        r"shape '\[4, -1\]' is invalid for input of size 6",
    ),
    (lambda m: m.zeros(2, 3).view(-1, -1), RuntimeError, "only one dimension can be inferred"),
    (lambda m: m.zeros(2, 3).view(-2, 3), RuntimeError, "invalid shape dimension -2"),
    (
        lambda m: m.zeros(2, 3).view(2.5, 2),
        TypeError,
        r"view\(\) received an invalid combination of arguments - got \(float, int\)",
    ),
    (
        lambda m: m.zeros(2, 3).t().view(3, -1, 1, 5),
        RuntimeError,
        r"shape '\[3, -1, 1, 5\]' is invalid for input of size 6",
    ),
    (
        lambda m: m.zeros(2, 3).reshape(5),
        RuntimeError,
        r"shape '\[5\]' is invalid for input of size 6",
    ),
    (
        lambda m: m.zeros(3, 3).t().view(m.float16),
        RuntimeError,
        r"self.stride\(-1\) must be 1 to view Float as Half \(different element sizes\), but got 3",
    ),
    (
        lambda m: m.zeros(3, 3).view(m.float64),
        RuntimeError,
        r"self.size\(-1\) must be divisible by 2 to view Float as Double",
    ),
    (lambda m: m.cat([]), ValueError, "expected a non-empty list of Tensors"),
    (
        lambda m: m.cat([m.zeros(2, 3), m.zeros(3, 3)], 1),
        RuntimeError,
        (
            r"Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for "
            r"tensor number 1 in the list."
        ),
    ),
    (
        lambda m: m.cat([m.zeros(2, 3), m.zeros(2, 4)], 0),
        RuntimeError,
        "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4",
    ),
    (
        lambda m: m.cat([m.zeros(2, 3), m.zeros(2)]),
        RuntimeError,
        "Tensors must have same number of dimensions: got 2 and 1",
    ),
    (
        lambda m: m.cat([m.tensor(1.0), m.tensor(2.0)]),
        RuntimeError,
        r"zero-dimensional tensor \(at position 0\) cannot be concatenated",
    ),
    (
        lambda m: m.cat([m.zeros(2, 3), 3]),
        TypeError,
        "expected Tensor as element 1 in argument 0, but got int",
    ),
    (
        lambda m: m.cat([m.zeros(2, 3), [1]]),
        TypeError,
        "expected Tensor as element 1 in argument 0, but got list",
    ),
    (
        lambda m: m.cat([m.zeros(2, 3), m.zeros(2, 3)], 2),
        IndexError,
        r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
    ),
    (
        lambda m: m.stack([m.zeros(2, 3), m.zeros(3, 2)]),
        RuntimeError,
        (
            r"stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 and \[3, 2\] at "
            "entry 1"
        ),
    ),
    (lambda m: m.stack([]), RuntimeError, "stack expects a non-empty TensorList"),
    (lambda m: m.stack([m.zeros(2), m.zeros(2)], 2), IndexError, "Dimension out of range"),
    (
        lambda m: m.zeros(2, 3).expand(3),
        RuntimeError,
        (
            r"expand\(torch.FloatTensor\{\[2, 3\]\}, size=\[3\]\): the number of sizes provided \(1\) "
            r"must be greater or equal to the number of dimensions in the tensor \(2\)"
        ),
    ),
    (
        lambda m: m.zeros(2, 3).expand(4, 3),
        RuntimeError,
        (
            r"The expanded size of the tensor \(4\) must match the existing size \(2\) at non-singleton "
            r"dimension 0.  Target sizes: \[4, 3\].  Tensor sizes: \[2, 3\]"
        ),
    ),
    (
        lambda m: m.zeros(2, 3).expand(-1, 2, 3),
        RuntimeError,
        (
            r"The expanded size of the tensor \(-1\) isn't allowed in a leading, non-existing "
            "dimension 0"
        ),
    ),
    (
        lambda m: m.zeros(2, 3).permute(1),
        RuntimeError,
        (
            r"number of dimensions in the tensor input does not match the length of the desired "
            r"ordering of dimensions i.e. input.dim\(\) = 2 is not equal to len\(dims\) = 1"
        ),
    ),
    (
        lambda m: m.zeros(2, 3).permute(0, 0),
        RuntimeError,
        "permute\\(\\): duplicate dims are not allowed",
    ),
    (lambda m: m.zeros(2, 3).permute(0, 2), IndexError, "Dimension out of range"),
    (
        lambda m: m.zeros(2, 3).transpose(0, 2),
        IndexError,
        r"expected to be in range of \[-2, 1\], but got 2",
    ),
    (lambda m: m.zeros(2, 3).squeeze(2), IndexError, "Dimension out of range"),
    (lambda m: m.zeros(2, 3).squeeze((0, 0)), RuntimeError, "dim 0 appears multiple times"),
    (
        lambda m: m.zeros(2, 3).unsqueeze(3),
        IndexError,
        r"expected to be in range of \[-3, 2\], but got 3",
    ),
    (
        lambda m: m.zeros(2, 3).narrow(0, 1, 3),
        RuntimeError,
        r"start \(1\) \+ length \(3\) exceeds dimension size \(2\).",
    ),
    (
        lambda m: m.zeros(2, 3).narrow(0, 3, 0),
        IndexError,
        r"start out of range \(expected to be in range of \[-2, 2\], but got 3\)",
    ),
    (
        lambda m: m.zeros(2, 3).narrow(0, 0, -1),
        RuntimeError,
        "narrow\\(\\): length must be non-negative",
    ),
    (
        lambda m: m.zeros(2, 3).select(0, 2),
        IndexError,
        r"select\(\): index 2 out of range for tensor of size \[2, 3\] at dimension 0",
    ),
    (lambda m: m.zeros(2, 3).select(0, -3), IndexError, "index -3 out of range"),
    (
        lambda m: m.zeros(2, 3).split(0),
        RuntimeError,
        "split_size can only be 0 if dimension size is 0, but got dimension size of 2",
    ),
    (
        lambda m: m.zeros(2, 3).split(-1),
        RuntimeError,
        "split expects split_size be non-negative, but got split_size=-1",
    ),
    (
        lambda m: m.zeros(2, 3).split([1, 2]),
        RuntimeError,
        (
            r"split_with_sizes expects split_sizes to sum exactly to 2 \(input tensor's size at "
            r"dimension 0\), but got split_sizes=\[1, 2\]"
        ),
    ),
    (lambda m: m.zeros(2, 3).split([-1, 3]), RuntimeError, "only non-negative entries"),
    (
        lambda m: m.zeros(2, 3).chunk(0),
        RuntimeError,
        "chunk expects `chunks` to be greater than 0, got: 0",
    ),
    (
        lambda m: m.zeros(5).tensor_split(0),
        RuntimeError,
        "number of sections must be larger than 0, got 0",
    ),
    (
        lambda m: m.zeros(2, 3).repeat(2),
        RuntimeError,
        "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
    ),
    (
        lambda m: m.zeros(2, 3).flatten(1, 0),
        RuntimeError,
        "flatten\\(\\) has invalid args: start_dim cannot come after end_dim",
    ),
    (lambda m: m.zeros(2, 3).flatten(0, 5), IndexError, "Dimension out of range"),
    (
        lambda m: m.zeros(2, 3).unflatten(1, (2, 2)),
        RuntimeError,
        (
            r"unflatten: Provided sizes \[2, 2\] don't multiply up to the size of dim 1 \(3\) in the "
            "input tensor"
        ),
    ),
    (
        lambda m: m.zeros(2, 3).unflatten(1, (-1, -1)),
        RuntimeError,
        "only one dimension can be inferred",
    ),
    (lambda m: m.zeros(2, 3).unflatten(1, ()), RuntimeError, "unflatten: sizes must be non-empty"),
    (
        lambda m: m.zeros(2, 3).movedim((0, 1), (0,)),
        RuntimeError,
        (
            r"movedim: Invalid source or destination dims: source \(\[0, 1\] dims\) should contain the "
            r"same number of dims as destination \(\[0\] dims\)"
        ),
    ),
    (
        lambda m: m.zeros(2, 3).movedim((0, 0), (0, 1)),
        RuntimeError,
        r"movedim: repeated dim in `source` \(\[0, 0\]\)",
    ),
    (
        lambda m: m.zeros(3, 3, 3).t(),
        RuntimeError,
        "t\\(\\) expects a tensor with <= 2 dimensions, but self is 3D",
    ),
    (
        lambda m: m.zeros(3).mT,
        RuntimeError,
        "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.",
    ),
    (
        lambda m: m.zeros(3).H,
        RuntimeError,
        r"tensor.H is only supported on matrices \(2-D tensors\). Got 1-D tensor.",
    ),
    (
        lambda m: m.zeros(3, 3, 3).H,
        RuntimeError,
        "For batches of matrices, consider using tensor.mH",
    ),
    (lambda m: m.zeros(3).mH, RuntimeError, "tensor.mH is only supported on matrices or batches"),
    (
        lambda m: m.zeros(2, 3).roll(1, (0, 1)),
        RuntimeError,
        "shifts and dimensions must align. shifts: 1, dims:2",
    ),
    (
        lambda m: m.zeros(2, 3).roll((1, 2)),
        RuntimeError,
        "shifts and dimensions must align. shifts: 2, dims:0",
    ),
    (
        lambda m: m.zeros(2, 3).flip(0, 0),
        RuntimeError,
        "dim 0 appears multiple times in the list of dims",
    ),
    (lambda m: m.zeros(2, 3).flip(), TypeError, "missing 1 required positional arguments"),
    (lambda m: m.zeros(3).fliplr(), RuntimeError, "Input must be >= 2-d."),
    (
        lambda m: m.zeros(3).tril(),
        RuntimeError,
        "tril: input tensor must have at least 2 dimensions",
    ),
    (
        lambda m: m.zeros(3).triu(),
        RuntimeError,
        "triu: input tensor must have at least 2 dimensions",
    ),
    (lambda m: m.zeros(3).diagonal(), IndexError, "Dimension out of range"),
    (
        lambda m: m.zeros(2, 3, 4).diagonal(0, 1, 1),
        RuntimeError,
        "diagonal dimensions cannot be identical 1, 1",
    ),
    (lambda m: m.zeros(2, 3).unbind(2), IndexError, "Dimension out of range"),
]


@pytest.mark.parametrize("fn,exc,msg", ERRORS, ids=[f"err{i}" for i in range(len(ERRORS))])
def test_errors(fn, exc, msg):
    with pytest.raises(exc, match=msg):
        fn(ember)
    with pytest.raises(exc, match=msg):  # the pattern is torch's own message
        fn(torch)


# ---------------------------------------------------------------------- as_strided
AS_STRIDED = [
    Case("as_strided_overlap", lambda m, x: x.as_strided((3, 3), (2, 1), 1), [A(12)]),
    Case("as_strided_of_transpose", lambda m, x: x.t().as_strided((2, 2), (1, 2)), [A(2, 3)]),
    Case("as_strided_fn", lambda m, x: m.as_strided(x, (2, 3), (1, 2)), [A(8)]),
]


@pytest.mark.parametrize("case", AS_STRIDED, ids=str)
def test_as_strided_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", AS_STRIDED, ids=str)
def test_as_strided_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


def test_as_strided_shares_memory_and_names_p39():
    x = ember.zeros(2, 3, 4, 5, names=("N", "C", "H", "W"))
    v = x.as_strided([120], [1])
    assert v.names == (None,)
    v[7] = 1.0
    assert x.rename(None).reshape(-1)[7].item() == 1.0


@pytest.mark.parametrize(
    "args",
    [((3, 3), (1, 1), 5), ((2,), (-1,)), ((2, 2), (1,))],
    ids=["out_of_bounds", "negative_stride", "length_mismatch"],
)
def test_as_strided_errors_like_torch(args):
    msgs = []
    for m in (ember, torch):
        with pytest.raises(RuntimeError) as e:
            m.arange(6.0).as_strided(*args)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_zero_dim_integer_tensors_as_dims_and_sizes():
    # torch reads a 0-d integer tensor where an int dim, index or size goes
    a = np.arange(24.0).reshape(2, 3, 4)
    calls = [
        lambda m, x: x.view(m.tensor(24)),
        lambda m, x: x.view(m.tensor(6), 4),
        lambda m, x: x.narrow(m.tensor(2), m.tensor(1), 2),
        lambda m, x: x.select(m.tensor(1), m.tensor(2)),
        lambda m, x: x.sum(m.tensor(0)),
        lambda m, x: x.softmax(m.tensor(-1)),
        lambda m, x: (x + 2).mvlgamma(m.tensor(2)),
    ]
    for call in calls:
        e, t = call(ember, ember.tensor(a)), call(torch, torch.tensor(a))
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)
