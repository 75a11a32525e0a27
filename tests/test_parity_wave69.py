"""Parity regressions found by the sixty-ninth wave, which swept what users test and debug with:
torch.testing (assert_close's options, containers, scalars, numpy arrays, sparse tensors and its
mismatch reports; make_tensor's ranges and errors), gradcheck/gradgradcheck's keywords and
failure texts, anomaly detection, checkpoint/checkpoint_sequential, saved-tensor hooks, multi-grad
and node hooks, the profilers and benchmark.Timer. Found: assert_close compared sparse tensors
densely (torch compares sparse dims, nnz, then indices for equality and values for closeness,
"Sparse COO values are not close!", "Sparse CSR crow_indices are not equal!") and read values of a
meta tensor against a cpu one under ``check_device=False``; make_tensor accepted float sizes (torch
leaves the size to its factory's error), crashed on an unsupported dtype instead of torch's
TypeError, and worded the ``low==high`` warning differently; gradcheck compared outputs that do not
require grad (a false failure for ``(x.detach(), f(x))`` or an integer output; torch ignores them,
and with none left checks the numerical gradient is zero), accepted both check modes off,
numbered inputs among all inputs and checked inputs outer (torch: among those requiring grad,
outputs outer), reported complex Jacobians as real ones (torch: complex entries, imaginary then
real parts of complex outputs, "While considering the imaginary part of complex outputs only"),
lacked the fast-mode report and made gradgradcheck's random grad_outputs float64 for any output;
a pack hook that modified its input in place went unreported; register_multi_grad_hook (mode
"all") accepted tensors without grad and increment_version non-tensors; torch.profiler.profile's
results before it ran raised RuntimeError (torch: AssertionError, "must be initialized") and its
reuse did not warn that events are cleared; ``torch.autograd.anomaly_mode`` was missing."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import same_error


def _sp(T, idx, val, size=(3, 3)):
    return T.sparse_coo_tensor(T.tensor(idx), T.tensor(val), size)


def _dense(T, rows, layout):
    t = T.tensor(rows)
    return getattr(t, f"to_sparse_{layout}")() if layout else t


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch's sparse beta/invariants notices
@pytest.mark.parametrize(
    "pair",
    [
        lambda T: (_sp(T, [[0, 1], [1, 0]], [1.0, 2.0]), _sp(T, [[0, 1], [1, 0]], [1.0, 3.0])),
        lambda T: (_sp(T, [[0, 1], [1, 0]], [1, 2]), _sp(T, [[0, 1], [1, 0]], [1, 3])),
        lambda T: (_sp(T, [[0, 1], [1, 0]], [1.0, 2.0]), _sp(T, [[0, 1], [1, 2]], [1.0, 2.0])),
        lambda T: (_sp(T, [[0, 1], [1, 0]], [1.0, 2.0]), _sp(T, [[0], [1]], [1.0])),
        lambda T: (_sp(T, [[0, 0], [1, 1]], [1.0, 2.0]), _sp(T, [[0], [1]], [3.0])),  # uncoalesced
        lambda T: (
            _sp(T, [[0, 1], [1, 0]], [1.0, 2.0]),
            _sp(T, [[0, 1], [1, 0]], [1.0, 2.0]).to_dense().to_sparse(1),
        ),
        lambda T: (T.tensor(1.0).to_sparse(), T.tensor(2.0).to_sparse()),
        lambda T: (_dense(T, [[0.0, 1.0], [2.0, 0.0]], "csr"), _dense(T, [[0.0, 1.0], [3.0, 0.0]], "csr")),
        lambda T: (_dense(T, [[0.0, 1.0], [2.0, 0.0]], "csr"), _dense(T, [[0.0, 1.0], [0.0, 0.0]], "csr")),
        lambda T: (_dense(T, [[0.0, 1.0], [2.0, 0.0]], "csr"), _dense(T, [[0.0, 1.0], [0.0, 2.0]], "csr")),
        lambda T: (_dense(T, [[0.0, 1.0], [2.0, 0.0]], "csr"), _dense(T, [[1.0, 1.0], [0.0, 0.0]], "csr")),
        lambda T: (_dense(T, [[0.0, 1.0], [2.0, 0.0]], "csc"), _dense(T, [[0.0, 1.0], [0.0, 2.0]], "csc")),
    ],
    ids=["coo-values", "coo-int-values", "coo-indices", "coo-nnz", "coo-uncoalesced",
         "coo-sparse-dims", "coo-0d", "csr-values", "csr-nnz", "csr-col", "csr-crow", "csc-row"],
)  # fmt: skip
def test_assert_close_sparse_reports(pair):
    """Sparse pairs: torch's checks in torch's order, each with its own report."""
    same_error(lambda T: T.testing.assert_close(*pair(T)), AssertionError)
    same_error(lambda T: T.testing.assert_close([pair(T)[0]], [pair(T)[1]]), AssertionError)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_assert_close_sparse_equal_and_mixed_dtype():
    for T in (torch, ember):
        a = _sp(T, [[0, 1], [1, 0]], [1.0, 2.0])
        T.testing.assert_close(a, _sp(T, [[0, 1], [1, 0]], [1.0, 2.0]))
        T.testing.assert_close(a, a.to_dense(), check_layout=False)
    same_error(
        lambda T: T.testing.assert_close(
            _sp(T, [[0, 1], [1, 0]], [1, 2]),
            _sp(T, [[0, 1], [1, 0]], [1.0, 3.0]),
            check_dtype=False,
        ),
        AssertionError,
    )


def test_assert_close_meta_against_cpu_without_device_check():
    """A meta tensor has no values: only the metadata is compared, whatever the other side."""
    for T in (torch, ember):
        T.testing.assert_close(T.zeros(2, device="meta"), T.zeros(2), check_device=False)


def test_assert_close_bool_against_int_text():
    same_error(lambda T: T.testing.assert_close(True, 1), RuntimeError)


@pytest.mark.parametrize(
    "shape", [(2.0,), ([2.0, 3],), ((2,), 3)], ids=["float", "float-list", "nested"]
)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_make_tensor_size_checked_by_the_factory(shape, dtype):
    def f(T):
        return T.testing.make_tensor(*shape, dtype=getattr(T, dtype), device="cpu")

    with pytest.raises(TypeError) as te:
        f(torch)
    with pytest.raises(TypeError) as ee:
        f(ember)
    # the factory's own text (randint's lists torch's keywords after "got", ember's does not)
    want = str(te.value).split(" - got ")[0]
    assert str(ee.value).startswith(want)


def test_make_tensor_noncontiguous_shape_and_values():
    for T in (torch, ember):
        t = T.testing.make_tensor(2, 3, dtype=T.float32, device="cpu", noncontiguous=True)
        assert t.shape == (2, 3) and not t.is_contiguous() and t.stride() == (6, 2)
        one = T.testing.make_tensor(1, dtype=T.float32, device="cpu", noncontiguous=True)
        assert one.is_contiguous()


def test_make_tensor_unsupported_dtype():
    with pytest.raises(TypeError) as te:
        torch.testing.make_tensor(2, dtype=torch.quint8, device="cpu")
    with pytest.raises(TypeError) as ee:
        ember.testing.make_tensor(2, dtype=ember.quint8, device="cpu")
    assert str(ee.value) == str(te.value).replace("torch.quint8", "ember.quint8")
    same_error(lambda T: T.testing.make_tensor(2, dtype="float32", device="cpu"), TypeError)


def test_make_tensor_low_equal_high_warning():
    texts = []
    for T in (torch, ember):
        with pytest.warns(FutureWarning) as rec:
            T.testing.make_tensor(2, dtype=T.float32, device="cpu", low=2, high=2)
        texts.append(str(rec[0].message))
    assert texts[0] == texts[1]


def _x(T):
    return T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)


def _half_grad(T):
    """x * x with half its true gradient."""

    class F(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x

    return F.apply


@pytest.mark.parametrize(
    "fn, torch_forward_ok",
    [
        # torch's forward-mode check numbers this case's outputs inconsistently and reports a
        # false mismatch of its own; ember passes it, as torch's backward-mode check does
        (lambda T, x: (x.detach() * 2, x * 3), False),
        (lambda T, x: (x.sin(), (x * 2).long()), True),
        (lambda T, x: (x * 2).long(), True),
        (lambda T, x: x.detach() * 0, True),
    ],
    ids=["detached-first", "integer-last", "integer-only", "constant"],
)
@pytest.mark.parametrize("fwd", [False, True])
def test_gradcheck_ignores_outputs_without_grad(fn, torch_forward_ok, fwd):
    for T in (torch, ember) if torch_forward_ok or not fwd else (ember,):
        assert T.autograd.gradcheck(lambda x, T=T: fn(T, x), (_x(T),), check_forward_ad=fwd)


def test_gradgradcheck_ignores_outputs_without_grad():
    for T in (torch, ember):
        assert T.autograd.gradgradcheck(lambda x: (x.detach(), x.sin() * x, x.long()), (_x(T),))


@pytest.mark.parametrize(
    "fn",
    [lambda T, x: x.detach() * 2, lambda T, x: x.detach().floor(), lambda T, x: ((x * 2).long(), x.detach())],
    ids=["detached", "floor", "integer-and-detached"],
)  # fmt: skip
@pytest.mark.parametrize("mode", [{}, {"check_forward_ad": True, "check_backward_ad": False}])
def test_gradcheck_no_differentiable_output_must_be_constant(fn, mode):
    same_error(lambda T: T.autograd.gradcheck(lambda x: fn(T, x), (_x(T),), **mode), RuntimeError)
    for T in (torch, ember):
        f = lambda x, T=T: fn(T, x)
        assert T.autograd.gradcheck(f, (_x(T),), raise_exception=False, **mode) is False


def test_gradcheck_mixed_outputs_report_the_wrong_one():
    """Output numbering counts the differentiable outputs only, as torch's."""
    with pytest.raises(RuntimeError) as te:
        torch.autograd.gradcheck(lambda x: (x.detach() * 2, _half_grad(torch)(x)), (_x(torch),))
    with pytest.raises(RuntimeError) as ee:
        ember.autograd.gradcheck(lambda x: (x.detach() * 2, _half_grad(ember)(x)), (_x(ember),))
    assert str(ee.value) == str(te.value).replace("torch.", "ember.")


def test_gradcheck_needs_a_mode():
    same_error(
        lambda T: T.autograd.gradcheck(lambda x: x, (_x(T),), check_backward_ad=False),
        AssertionError,
    )
    same_error(
        lambda T: T.autograd.gradgradcheck(lambda x: x * x, (_x(T),), check_rev_over_rev=False),
        AssertionError,
    )


@pytest.mark.parametrize("via", ["op", "function"])
def test_pack_hook_modifying_its_input(via):
    def f(T):
        def pack(t):
            t.add_(1)
            return t

        x = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = x.clone()
            if via == "op":
                y.sin()
            else:
                _half_grad(T)(y)

    same_error(f, RuntimeError)


def test_pack_hook_reading_its_input_is_fine():
    for T in (torch, ember):
        x = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            y = (x.sin() * x).sum()
        y.backward()
        np.testing.assert_allclose(
            x.grad.numpy(), (np.sin([1.0, 2.0]) + [1.0, 2.0] * np.cos([1.0, 2.0]))
        )


@pytest.mark.parametrize(
    "call",
    [
        lambda p, path: p.events(),
        lambda p, path: p.key_averages(),
        lambda p, path: p.export_chrome_trace(path),
        lambda p, path: p.export_stacks(path),
    ],
    ids=["events", "key_averages", "export_chrome_trace", "export_stacks"],
)
def test_profiler_results_before_it_ran(call, tmp_path):
    same_error(lambda T: call(T.profiler.profile(), str(tmp_path / "t.json")), AssertionError)


def _wrong_jvp(T):
    """x * x with a right backward and half the true forward-mode derivative."""

    class F(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.x = x
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

        @staticmethod
        def jvp(ctx, t):
            return ctx.x * t

    return F.apply


def _fast_mode_report(T, fn, **kw) -> tuple[str, str]:
    """The head line and the slow-mode part of the report of a failing fast-mode gradcheck (the
    projections between them use each library's own random vectors)."""
    with pytest.raises(RuntimeError) as info:
        T.autograd.gradcheck(fn(T), (_x(T),), fast_mode=True, **kw)
    text = str(info.value).replace("torch.", "ember.")
    head, rest = text.split("\nnumerical:", 1)
    projected, slow = rest.split("\n\nThe above quantities", 1)
    assert ("tensor(" in projected) == ("forward" in head)  # forward mode projects to a vector
    return head, slow


@pytest.mark.parametrize(
    "fn, kw",
    [(_half_grad, {}), (_wrong_jvp, {"check_forward_ad": True})],
    ids=["backward", "forward"],
)
def test_gradcheck_fast_mode_report(fn, kw):
    assert _fast_mode_report(ember, fn, **kw) == _fast_mode_report(torch, fn, **kw)


def test_multi_grad_hook_all_needs_every_tensor_to_require_grad():
    for ts in (lambda T: (T.ones(2),), lambda T: (T.ones(1, requires_grad=True), T.ones(2))):
        same_error(
            lambda T, ts=ts: T.autograd.graph.register_multi_grad_hook(ts(T), lambda g: None),
            AssertionError,
        )
    for T in (torch, ember):  # mode="any" hooks the tensors that can fire
        T.autograd.graph.register_multi_grad_hook((T.ones(2),), lambda g: None, mode="any")


@pytest.mark.parametrize(
    "arg", [lambda T: 3, lambda T: None, lambda T: [1], lambda T: "ab", lambda T: [T.ones(1), 1]]
)
def test_increment_version_rejects_non_tensors(arg):
    same_error(lambda T: T.autograd.graph.increment_version(arg(T)), RuntimeError)


def _wrong_complex(T, kind: str):
    """A Function with a wrong backward: complex -> complex (``cc``), complex -> real (``cr``),
    real -> complex (``rc``)."""

    class F(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            if kind == "cr":
                return (x * x.conj()).real
            return x * x if kind == "cc" else x * (1 + 2j)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            if kind == "cc":
                return g * x.conj()
            return g * x if kind == "cr" else (g * (1 - 2j)).real * 0.5

    return F.apply


@pytest.mark.parametrize("kind", ["cc", "cr", "rc"])
def test_gradcheck_complex_report(kind):
    """torch's complex view: complex entries d/d re + 1j d/d im for a complex input, the
    imaginary then the real part of complex outputs, each report saying which."""

    def f(T):
        x = [1 + 1j, 2 - 1j] if kind != "rc" else [1.0, 2.0]
        dt = T.complex128 if kind != "rc" else T.float64
        T.autograd.gradcheck(_wrong_complex(T, kind), (T.tensor(x, dtype=dt, requires_grad=True),))

    with pytest.raises(RuntimeError) as te:
        f(torch)
    with pytest.raises(RuntimeError) as ee:
        f(ember)
    assert str(ee.value) == str(te.value).replace("torch.", "ember.")


@pytest.mark.parametrize(
    "fn, args",
    [
        (lambda T, a, b: _half_grad(T)(b), lambda T: (T.ones(2, dtype=T.float64), _x(T))),
        (lambda T, b, c: (b * 2 + _half_grad(T)(c), _half_grad(T)(b) + c * 3), lambda T: (_x(T), _x(T))),
    ],
    ids=["input-without-grad-first", "two-wrong-pairs"],
)  # fmt: skip
def test_gradcheck_report_numbering_and_order(fn, args):
    """Inputs are numbered among those requiring grad; outputs are checked outer, inputs
    inner (the first wrong pair reported is torch's)."""
    with pytest.raises(RuntimeError) as te:
        torch.autograd.gradcheck(lambda *a: fn(torch, *a), args(torch))
    with pytest.raises(RuntimeError) as ee:
        ember.autograd.gradcheck(lambda *a: fn(ember, *a), args(ember))
    assert str(ee.value) == str(te.value).replace("torch.", "ember.")


def test_gradgradcheck_random_grad_outputs_take_the_output_dtype():
    """A float32 output gets float32 grad_outputs: the non-double warning names them too."""
    texts = []
    for T in (torch, ember):
        x = T.tensor([1.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            T.autograd.gradgradcheck(lambda x: x.sin(), (x,), raise_exception=False)
        texts.append([str(w.message) for w in rec if "double precision" in str(w.message)])
    assert texts[0] == texts[1] and len(texts[0]) == 2


def test_profiler_reuse_warns_once_that_events_are_cleared():
    import ember.profiler as eprof
    import torch.profiler.profiler as tprof

    texts = []
    for T, shown in ((torch, tprof._WARNINGS_SHOWN), (ember, eprof._WARNINGS_SHOWN)):
        shown.clear()  # the notice is once per process: start from a clean slate
        p = T.profiler.profile()
        with p:
            T.ones(2).exp()
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            with p:
                T.ones(2).exp()
            with p:  # the second notice is not repeated
                T.ones(2).exp()
        texts.append([str(w.message) for w in rec if "cycle" in str(w.message)])
        shown.clear()
        q = T.profiler.profile(acc_events=True)
        with warnings.catch_warnings(record=True) as kept:
            warnings.simplefilter("always")
            with q:
                pass
            with q:  # events kept: nothing to warn about
                pass
        assert not [w for w in kept if "cycle" in str(w.message)]
    assert texts[0] == texts[1] and len(texts[0]) == 1


def test_anomaly_mode_module_path():
    import importlib

    for name in ("torch", "ember"):
        mod = importlib.import_module(f"{name}.autograd.anomaly_mode")
        assert sorted(mod.__all__) == ["detect_anomaly", "set_detect_anomaly"]
        assert mod.detect_anomaly is importlib.import_module(name).autograd.detect_anomaly
