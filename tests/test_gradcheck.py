"""autograd.gradcheck / gradgradcheck themselves, against torch: which faults each check finds
(wrong backward, non-reentrant backward, backward ignoring grad_output, wrong forward-mode
Jacobian, wrong gradient dtype), the messages (per output, Jacobians printed as tensors),
raise_exception=False, and torch's keyword arguments."""

from __future__ import annotations

from typing import ClassVar

import ember
import pytest

torch = pytest.importorskip("torch")


def _functions(m):
    """The same faulty custom Functions, written for torch (m=torch) or ember."""

    class Wrong(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x * 3

    class Nondet(m.autograd.Function):
        calls: ClassVar[list] = [0]

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            Nondet.calls[0] += 1
            return g * (2 + 1e-9 * Nondet.calls[0])

    class NoMul(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 0 + 2

    class Two(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 4

    return {"wrong": Wrong.apply, "nondet": Nondet.apply, "two": Two.apply, "nomul": NoMul.apply}


def _err(m, name, **kw):
    x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
    with pytest.raises(Exception) as e:
        m.autograd.gradcheck(_functions(m)[name], (x,), **kw)
    return type(e.value).__name__, str(e.value).replace("torch.", "ember.")


@pytest.mark.parametrize(
    "name, kw",
    [("wrong", {}), ("two", {}), ("nomul", {})],
)
def test_failures_and_messages_match_torch(name, kw):
    assert _err(ember, name, **kw) == _err(torch, name, **kw)


def test_non_reentrant_backward():
    kind, msg = _err(ember, "nondet")
    first = _err(torch, "nondet")[1].split("\n")[0]
    assert kind == "GradcheckError" and msg.split("\n")[0] == first
    x = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(_functions(ember)["nondet"], (x,), nondet_tol=1e-3)


def test_forward_mode_check():
    x = ember.tensor([0.5, -1.0, 2.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: a.sin() * a, (x,), check_forward_ad=True)
    # a custom Function without a jvp has no forward mode: torch's NotImplementedError
    with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
        ember.autograd.gradcheck(
            _functions(ember)["two"], (x,), check_forward_ad=True, check_backward_ad=False
        )

    def wrong_jvp(m):
        class Triple(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 3

            @staticmethod
            def backward(ctx, g):
                return g * 3

            @staticmethod
            def jvp(ctx, t):
                return t * 2  # wrong: forward mode runs the jvp, so the forward check finds it

        xm = m.tensor([0.5, -1.0, 2.0], dtype=m.float64, requires_grad=True)
        try:
            m.autograd.gradcheck(Triple.apply, (xm,), check_forward_ad=True)
        except Exception as e:  # noqa: BLE001 - the outcome is compared
            return type(e).__name__, str(e).split("\n")[0]
        return "passed"

    assert wrong_jvp(ember) == wrong_jvp(torch)
    assert wrong_jvp(ember)[0] == "GradcheckError"


def test_float32_message_prints_float32_tensors():
    def msg(m):
        x = m.tensor([1.0], requires_grad=True)
        with (
            pytest.warns(UserWarning, match="not a double precision"),
            pytest.raises(Exception) as e,
        ):
            m.autograd.gradcheck(lambda a: a * 2, (x,))
        return str(e.value)

    assert msg(ember) == msg(torch)


def test_raise_exception_false_and_unknown_keywords():
    x = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    assert (
        ember.autograd.gradcheck(_functions(ember)["wrong"], (x,), raise_exception=False) is False
    )
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        ember.autograd.gradcheck(lambda a: a, (x,), foo=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        ember.autograd.gradgradcheck(lambda a: a, (x,), foo=1)
    kw = {
        "fast_mode": True,
        "check_batched_grad": True,
        "check_undefined_grad": False,
        "check_grad_dtypes": True,
        "masked": False,
    }
    assert ember.autograd.gradcheck(lambda a: a.exp(), (x,), **kw)
    assert ember.autograd.gradgradcheck(
        lambda a: a.exp() * a, (x,), check_fwd_over_rev=True, gen_non_contig_grad_outputs=True
    )
