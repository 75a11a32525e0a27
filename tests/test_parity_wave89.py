"""Wave 89: shape ops, joining, creation and conversion: argument fuzz against torch.

Each case runs the same expression through ember and torch and compares the first error (type
and message) or the result (dtype, shape, values). Expressions are source text so that a Tensor
method and its function are told apart the way torch tells them (positions after self)."""

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _env(lib):
    def g(*s):
        return lib.arange(int(np.prod(s)), dtype=lib.float32).reshape(*s)

    return {
        "T": lib,
        "x": g(2, 3),
        "y": g(2, 3, 4),
        "z": g(4),
        "s": lib.tensor(3.0),
        "u": g(1, 3),
        "m": g(3, 3),
    }


def _norm(text: str) -> str:
    return text.replace("torch.", "").replace("ember.", "")


def _run(lib, code):
    try:
        r = eval(code, _env(lib))
    except Exception as e:  # noqa: BLE001 (the error is the result compared)
        return ("error", type(e).__name__, _norm(str(e)))
    rs = r if isinstance(r, tuple) else (r,)
    return tuple(("tensor", _norm(str(t.dtype)), tuple(t.shape), t.tolist()) for t in rs)


def _same(code):
    assert _run(ember, code) == _run(torch, code), code


# a float (or bool) where torch parses an int: ember truncated it and returned a result
FLOAT_INTS = [
    "x.tril(1.5)",
    "x.triu_(1.5)",
    "T.triu(x, 1.5)",
    "x.diagonal(1.5)",
    "x.diag_embed(1.5)",
    "x.diag(1.5)",
    "T.diag(x, 1.5)",
    "T.diagflat(x, 1.5)",
    "x.tril(True)",
    "x.repeat_interleave(1.5)",
    "x.repeat_interleave(1.5, 0)",
    "T.repeat_interleave(x, 1.5)",
    "x.repeat_interleave(2, 1.5)",
    "x.repeat(1.5)",
    "x.repeat((1.5, 2))",
    "x.repeat(2, 1.5)",
    "x.repeat(1.5, 2)",
    "x.tile(1.5)",
    "T.tile(x, (1.5,))",
    "x.roll(1.5)",
    "x.roll((1.5,), (0,))",
    "x.roll(1, (1.5,))",
    "T.roll(x, 1, 1.5)",
    "x.tensor_split(1.5)",
    "T.hsplit(x, 1.5)",
    "x.unflatten(1, (1.5, 2))",
    "x.unflatten(1, [3.0])",
    "x.unsqueeze(True)",
    "x.split([1.5, 1.5], 1)",
    "x.split_with_sizes([1.5, 1.5], 1)",
    "x.expand(2, 1.5)",
    "u.expand(1.5, 3)",
    "u.expand('a')",
    "x.reshape(3.0, 2)",
]


@pytest.mark.parametrize("code", FLOAT_INTS)
def test_no_int_is_refused(code):
    _same(code)


# a Tensor method counts its arguments after self (the function counts the input)
METHOD_POSITIONS = [
    "x.select(1, 1.0)",
    "x.chunk(1.5)",
    "x.rot90(1.5)",
    "x.reshape('a')",
    "x.reshape(None)",
    "T.reshape(x, None)",
    "x.unsqueeze(1.0)",
    "x.unsqueeze((0, 1))",
    "x.transpose(0, 1.5)",
    "x.transpose(0, None)",
    "x.t().transpose(0, (1,))",
    "x.narrow(1, 1.0, 1)",
    "x.split_with_sizes(3, 1)",
]


@pytest.mark.parametrize("code", METHOD_POSITIONS)
def test_method_argument_positions(code):
    _same(code)


CASES = [
    # view / reshape
    "x.view(None)",
    "x.view(2.5)",
    "x.view((2, 3.0))",
    "x.view(-1, -1)",
    "x.t().view(6)",
    "x.reshape()",
    "x.repeat()",
    # expand: a size below -1 (torch's numel overflow), -1 in a new leading dim
    "u.expand(-2, 3)",
    "x.expand(-2, 2, 3)",
    "x.expand(-1, 2, 3)",
    "x.expand(2, -2)",
    "T.broadcast_to(u, (-2, 3))",
    # 0-d inputs of split/chunk/unbind (numpy's IndexError leaked)
    "s.split(1)",
    "s.chunk(1)",
    "s.unbind()",
    "s.unbind(0)",
    # split sizes
    "x.split(T.tensor([1, 2]), 1)",
    "x.split(T.tensor(2), 1)",
    "x.split_with_sizes([3, -1], 1)",
    "x.split_with_sizes([1, 2], 1)",
    # repeat's negative sizes: torch names the result's size
    "x.repeat(-1, 2)",
    "x.tile(-1)",
    "T.zeros(0, 3).repeat(-1, 1)",
    "T.zeros(0, 3).repeat(1, -1)",
    "x.repeat_interleave(T.tensor([1, 2]), 1)",
    # the private joining ops name the public ones
    "T.cat([x, x], [1])",
    "T.stack([x, x], 1.5)",
    "T.cat([x, x], 1.5)",
    # a tuple where a dim is an int
    "m.select((0, 1), 0)",
    "y.diagonal(0, (0, 1), 2)",
    # fill values past int64
    "T.full((2,), 2**63)",
    "T.full((2,), 2**64)",
    "T.full((2,), -(2**63) - 1)",
    "T.full((2,), 2**63, dtype=T.float32)",
    "T.full((2,), 2**64, dtype=T.float32)",
    "T.full_like(x, 2**64)",
    "x.new_full((2,), -(2**64))",
]


@pytest.mark.parametrize("code", CASES)
def test_parity(code):
    _same(code)


def test_good_calls_unchanged():
    for code in [
        "x.tril(T.tensor(1))",
        "x.triu(np.int64(-1))",
        "x.diagonal(np.int64(1))",
        "x.repeat_interleave(np.int64(2), 1)",
        "x.repeat(np.int64(2), 1)",
        "x.roll((1, -1), (0, 1))",
        "x.tile((2,))",
        "u.expand(T.Size([4, 3]))",
        "u.expand(4, T.tensor(3))",
        "x.split_with_sizes((1, 2), -1)",
        "x.tensor_split(T.tensor([1]), 1)",
        "x.unflatten(-1, (3, -1))",
        "x.rot90(np.int64(3), [1, 0])",
        "x.view(np.int64(6))",
    ]:
        _env_np = dict(_env(ember), np=np)
        a = eval(code, _env_np)
        b = eval(code, dict(_env(torch), np=np))
        for p, q in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
            assert tuple(p.shape) == tuple(q.shape) and p.tolist() == q.tolist(), code


def test_named_dims_still_work():
    x = ember.arange(6.0).reshape(2, 3).rename("a", "b")
    assert x.roll(1, "b").tolist() == [[2.0, 0.0, 1.0], [5.0, 3.0, 4.0]]
    assert x.roll((1, 1), ("a", "b")).names == ("a", "b")
    assert x.unsqueeze(0).shape == (1, 2, 3)


def test_gradients_of_checked_paths():
    # the ops whose argument checks changed keep their derivatives (float64, uneven upstream)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    fns = [
        lambda t: t.tril(1),
        lambda t: t.triu(np.int64(-1)),
        lambda t: t.diagonal(1),
        lambda t: t.unsqueeze(0).expand(2, 3, 4),
        lambda t: t.repeat(2, 1),
        lambda t: t.roll((1, 2), (0, 1)),
        lambda t: t.tile((2,)),
        lambda t: t.diag_embed(1),
        lambda t: t.unflatten(1, (2, -1)),
        lambda t: t.repeat_interleave(2, 1),
    ]
    for f in fns:
        te = ember.tensor(a, dtype=ember.float64, requires_grad=True)
        tt = torch.tensor(a, dtype=torch.float64, requires_grad=True)
        oe, ot = f(te), f(tt)
        up = rng.standard_normal(tuple(ot.shape))
        oe.backward(ember.tensor(up))
        ot.backward(torch.tensor(up))
        np.testing.assert_allclose(te.grad.numpy(), tt.grad.numpy(), rtol=1e-12, atol=1e-12)
        assert ember.autograd.gradcheck(f, (ember.tensor(a, requires_grad=True),))
