"""``Tensor.real`` / ``Tensor.imag`` assignment: torch's ``z.real.copy_(v)`` (writes into z),
and its errors. (Gradients through a write into a real/imag view are wrong in the view-write
machinery itself, ``b.imag.copy_(v)`` alike: not covered here.)"""

import warnings

import ember
import pytest
from harness import assert_same, needs_torch, raises_like_torch, torch


@needs_torch
@pytest.mark.parametrize(
    "part,value",
    [
        ("real", lambda m: m.tensor([5.0, 6.0])),
        ("imag", lambda m: m.tensor([5.0, 6.0])),
        ("imag", lambda m: 7),
        ("real", lambda m: m.tensor([1, 2])),  # cast like copy_
        ("real", lambda m: m.tensor(3.5)),  # broadcast like copy_
    ],
)
def test_setter_writes_into_tensor_like_torch(part, value):
    res = []
    for m in (ember, torch):
        z = m.tensor([1 + 2j, 3 + 4j])
        setattr(z, part, value(m))
        res.append(z)
    assert_same(*res)


@needs_torch
def test_real_setter_on_real_tensor_copies_like_torch():
    res = []
    for m in (ember, torch):
        x = m.tensor([1.0, 2.0])
        x.real = m.tensor([3.0, 4.0])
        res.append(x)
    assert_same(*res)


@pytest.mark.parametrize(
    "fn,exc,msg",
    [
        (
            lambda m: setattr(m.tensor([1.0, 2.0]), "imag", m.tensor([1.0, 2.0])),
            RuntimeError,
            "imag is not implemented for tensors with non-complex dtypes.",
        ),
        (
            lambda m: setattr(m.tensor([1 + 1j, 2]), "real", m.tensor([1.0, 2.0, 3.0])),
            RuntimeError,
            (
                "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
                "dimension 0"
            ),
        ),
        (
            lambda m: setattr(m.tensor([1 + 1j, 2]), "real", "a"),
            TypeError,
            "can't assign a str to a torch.FloatTensor",
        ),
    ],
)
def test_setter_errors_like_torch(fn, exc, msg):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_like_torch(fn, exc, msg)


def _write_imag(m, a, v):
    b = a * 2
    b.imag.copy_(v)
    return b


def _scale_real(m, a, v):
    b = a * 2
    b.real.mul_(v)
    return b


def _scale_parts(m, a, v):
    b = a * 1
    m.view_as_real(b)[:, 1].mul_(v)
    return b


@needs_torch
@pytest.mark.parametrize("write", [_write_imag, _scale_real, _scale_parts])
def test_gradients_through_writes_into_part_views(write):
    """The base's history takes the write at the written real or imaginary parts (torch's
    CopySlices on a view of another dtype)."""

    def run(m):
        a = m.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        v = m.tensor([5.0, 6.0], requires_grad=True)
        b = write(m, a, v)
        (b * m.tensor([1 + 1j, 2 - 1j])).real.sum().backward()
        return a.grad, v.grad

    for e, t in zip(run(ember), run(torch)):
        assert_same(e, t)
