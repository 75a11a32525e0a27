"""Parity regressions found by the fifty-ninth wave, error texts of in-place methods and of
aliases (torch is the oracle; the types already matched):

* an in-place method given arguments none of its overloads takes named the out-of-place op and
  counted self as position 1 (``add(): argument 'other' (position 2)``, ``add() missing required
  argument 'other'``, Python's ``acos() takes 2 positional arguments but 3 were given``) where
  torch's parser names the method (``add_``), counts from its first argument, lists the in-place
  overloads (``got (), but expected (Tensor other, *, Number alpha = 1)``), marks the arguments
  a lone overload does not take (``!Tensor!``), reports keywords it has no room for, and says
  ``TensorBase.exp_() takes no arguments (1 given)`` for a unary method;
* an alias printed the name of the op it shares (``acos()`` for ``torch.arccos``, ``mul()`` for
  ``multiply``, ``transpose()`` and ``dim0`` for ``swapaxes``' ``axis0``, ``sigmoid()`` for
  ``special.expit``, whose torch name is ``special_expit``), listed the op's overloads or none
  where torch lists the alias's own (multiply, divide, true_divide, subtract, moveaxis), and
  ``torch.clip("a")`` / ``torch.clamp("a")`` raised the "At least one of 'min' or 'max'"
  RuntimeError where torch's parser refuses the input first; ``concat`` / ``concatenate`` of a
  str or a number gave the element error or Python's "'int' object is not iterable".

Each row is a call, spelled as a user writes it (an alias is told apart by the call's source),
with torch's type and message; both frameworks must raise exactly that. Where torch lists
"didn't match because ..." lines under an overload, those are left out of the comparison."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _raised(m, call) -> tuple:
    with pytest.raises(Exception) as info:
        call(m, m.arange(6.0).reshape(2, 3))
    lines = str(info.value).split("\n")
    return type(info.value), "\n".join(s for s in lines if not s.startswith("      didn't match"))


CASES = [
    # in-place methods: torch's parser names the method and counts from its first argument
    (
        "add_no_args",
        lambda m, x: x.add_(),
        TypeError,
        "add_() received an invalid combination of arguments - got (), but expected (Tensor other, *, Number alpha = 1)",
    ),
    (
        "add_str",
        lambda m, x: x.add_("a"),
        TypeError,
        "add_(): argument 'other' (position 1) must be Tensor, not str",
    ),
    (
        "add_two_positional",
        lambda m, x: x.add_(x, "a"),
        TypeError,
        "add_() takes 1 positional argument but 2 were given",
    ),
    (
        "add_one_too_many",
        lambda m, x: x.add_(x, x, x),
        TypeError,
        "add_() received an invalid combination of arguments - got (Tensor, !Tensor!, !Tensor!), but expected (Tensor other, *, Number alpha = 1)",
    ),
    (
        "add_many",
        lambda m, x: x.add_(x, x, x, x, x),
        TypeError,
        "add_() received an invalid combination of arguments - got (Tensor, Tensor, Tensor, Tensor, Tensor), but expected (Tensor other, *, Number alpha = 1)",
    ),
    (
        "add_unknown_keyword",
        lambda m, x: x.add_(foo=1),
        TypeError,
        'add_() missing 1 required positional arguments: "other"',
    ),
    (
        "add_alpha_taken",
        lambda m, x: x.add_(x, x, alpha=1),
        TypeError,
        "add_() received an invalid combination of arguments - got unrecognized keyword arguments: alpha",
    ),
    (
        "sub_none",
        lambda m, x: x.sub_(None),
        TypeError,
        "sub_(): argument 'other' (position 1) must be Tensor, not NoneType",
    ),
    (
        "mul_no_args",
        lambda m, x: x.mul_(),
        TypeError,
        'mul_() missing 1 required positional arguments: "other"',
    ),
    (
        "mul_str",
        lambda m, x: x.mul_("a"),
        TypeError,
        "mul_(): argument 'other' (position 1) must be Tensor, not str",
    ),
    (
        "mul_two",
        lambda m, x: x.mul_(x, x),
        TypeError,
        "mul_() takes 1 positional argument but 2 were given",
    ),
    (
        "div_list",
        lambda m, x: x.div_([1]),
        TypeError,
        "div_(): argument 'other' (position 1) must be Tensor, not list",
    ),
    (
        "addmm_str",
        lambda m, x: x.addmm_("a"),
        TypeError,
        "addmm_() received an invalid combination of arguments - got (str), but expected (Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1)",
    ),
    (
        "addmm_three",
        lambda m, x: x.addmm_(x, x, x),
        TypeError,
        "addmm_() takes 2 positional arguments but 3 were given",
    ),
    (
        "addcdiv_one_too_many",
        lambda m, x: x.addcdiv_(x, x, x, x),
        TypeError,
        "addcdiv_() received an invalid combination of arguments - got (Tensor, Tensor, !Tensor!, !Tensor!), but expected (Tensor tensor1, Tensor tensor2, *, Number value = 1)",
    ),
    (
        "exp_argument",
        lambda m, x: x.exp_(1),
        TypeError,
        "TensorBase.exp_() takes no arguments (1 given)",
    ),
    (
        "exp_keyword",
        lambda m, x: x.exp_(foo=1),
        TypeError,
        "TensorBase.exp_() takes no keyword arguments",
    ),
    (
        "sigmoid_two",
        lambda m, x: x.sigmoid_(x, 2),
        TypeError,
        "TensorBase.sigmoid_() takes no arguments (2 given)",
    ),
    (
        "arccos_alias",
        lambda m, x: x.arccos_(1),
        TypeError,
        "TensorBase.arccos_() takes no arguments (1 given)",
    ),
    (
        "negative_alias",
        lambda m, x: x.negative_(x),
        TypeError,
        "TensorBase.negative_() takes no arguments (1 given)",
    ),
    (
        "fill_str",
        lambda m, x: x.fill_("a"),
        TypeError,
        "fill_() received an invalid combination of arguments - got (str), but expected one of:\n * (Tensor value)\n * (Number value)\n",
    ),
    (
        "eq_str",
        lambda m, x: x.eq_("a"),
        TypeError,
        "eq_() received an invalid combination of arguments - got (str), but expected one of:\n * (Tensor other)\n * (Number other)\n",
    ),
    (
        "greater_alias",
        lambda m, x: x.greater_("a"),
        TypeError,
        "greater_() received an invalid combination of arguments - got (str), but expected one of:\n * (Tensor other)\n * (Number other)\n",
    ),
    (
        "less_equal_alias",
        lambda m, x: x.less_equal_(None),
        TypeError,
        "less_equal_() received an invalid combination of arguments - got (NoneType), but expected one of:\n * (Tensor other)\n * (Number other)\n",
    ),
    (
        "lerp_one",
        lambda m, x: x.lerp_(x),
        TypeError,
        "lerp_() received an invalid combination of arguments - got (Tensor), but expected one of:\n * (Tensor end, Tensor weight)\n * (Tensor end, Number weight)\n",
    ),
    (
        "pow_str",
        lambda m, x: x.pow_("a"),
        TypeError,
        "pow_() received an invalid combination of arguments - got (str), but expected one of:\n * (Tensor exponent)\n * (Number exponent)\n",
    ),
    (
        "clamp_min_str",
        lambda m, x: x.clamp_min_("a"),
        TypeError,
        "clamp_min_() received an invalid combination of arguments - got (str), but expected one of:\n * (Tensor min)\n * (Number min)\n",
    ),
    (
        "bitwise_and_str",
        lambda m, x: x.bitwise_and_("a"),
        TypeError,
        "bitwise_and_() received an invalid combination of arguments - got (str), but expected one of:\n * (Tensor other)\n * (Number other)\n",
    ),
    (
        "fmod_many",
        lambda m, x: x.fmod_(x, x, x),
        TypeError,
        "fmod_() received an invalid combination of arguments - got (Tensor, Tensor, Tensor), but expected one of:\n * (Tensor other)\n * (Number other)\n",
    ),
    # aliases: torch names the spelling called
    (
        "arccos",
        lambda m, x: m.arccos("a"),
        TypeError,
        "arccos(): argument 'input' (position 1) must be Tensor, not str",
    ),
    (
        "absolute",
        lambda m, x: m.absolute("a"),
        TypeError,
        "absolute(): argument 'input' (position 1) must be Tensor, not str",
    ),
    (
        "fix",
        lambda m, x: m.fix("a"),
        TypeError,
        "fix(): argument 'input' (position 1) must be Tensor, not str",
    ),
    (
        "negative",
        lambda m, x: m.negative("a"),
        TypeError,
        "negative(): argument 'input' (position 1) must be Tensor, not str",
    ),
    (
        "multiply",
        lambda m, x: m.multiply("a", x),
        TypeError,
        "multiply() received an invalid combination of arguments - got (str, Tensor), but expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor input, Number other)\n",
    ),
    (
        "multiply_other",
        lambda m, x: m.multiply(x, "a"),
        TypeError,
        "multiply() received an invalid combination of arguments - got (Tensor, str), but expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor input, Number other)\n",
    ),
    (
        "divide",
        lambda m, x: m.divide(x, "a"),
        TypeError,
        "divide() received an invalid combination of arguments - got (Tensor, str), but expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor input, Tensor other, *, str rounding_mode, Tensor out = None)\n * (Tensor input, Number other)\n * (Tensor input, Number other, *, str rounding_mode)\n",
    ),
    (
        "true_divide",
        lambda m, x: m.true_divide("a", x),
        TypeError,
        "true_divide() received an invalid combination of arguments - got (str, Tensor), but expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor input, Number other)\n",
    ),
    (
        "subtract",
        lambda m, x: m.subtract(x, "a"),
        TypeError,
        "subtract() received an invalid combination of arguments - got (Tensor, str), but expected one of:\n * (Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)\n * (Tensor input, Number other, Number alpha = 1)\n",
    ),
    (
        "greater",
        lambda m, x: m.greater("a", x),
        TypeError,
        "greater() received an invalid combination of arguments - got (str, Tensor), but expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor input, Number other, *, Tensor out = None)\n",
    ),
    (
        "less_equal",
        lambda m, x: m.less_equal("a", x),
        TypeError,
        "less_equal() received an invalid combination of arguments - got (str, Tensor), but expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor input, Number other, *, Tensor out = None)\n",
    ),
    (
        "moveaxis_dim",
        lambda m, x: m.moveaxis(x, 1.5, 0),
        TypeError,
        "moveaxis() received an invalid combination of arguments - got (Tensor, float, int), but expected one of:\n * (Tensor input, int source, int destination)\n * (Tensor input, tuple of ints source, tuple of ints destination)\n",
    ),
    (
        "moveaxis_input",
        lambda m, x: m.moveaxis("a", 0, 1),
        TypeError,
        "moveaxis() received an invalid combination of arguments - got (str, int, int), but expected one of:\n * (Tensor input, int source, int destination)\n * (Tensor input, tuple of ints source, tuple of ints destination)\n",
    ),
    (
        "swapaxes_dim",
        lambda m, x: m.swapaxes(x, 1.5, 0),
        TypeError,
        "swapaxes(): argument 'axis0' (position 2) must be int, not float",
    ),
    (
        "swapaxes_dim1",
        lambda m, x: m.swapaxes(x, 0, 0.5),
        TypeError,
        "swapaxes(): argument 'axis1' (position 3) must be int, not float",
    ),
    (
        "swapaxes_input",
        lambda m, x: m.swapaxes("a", 0, 1),
        TypeError,
        "swapaxes(): argument 'input' (position 1) must be Tensor, not str",
    ),
    (
        "swapdims_dim",
        lambda m, x: m.swapdims(x, 1.5, 0),
        TypeError,
        "swapdims(): argument 'dim0' (position 2) must be int, not float",
    ),
    (
        "concat",
        lambda m, x: m.concat("a"),
        TypeError,
        "concat(): argument 'tensors' (position 1) must be tuple of Tensors, not str",
    ),
    (
        "concatenate",
        lambda m, x: m.concatenate("a"),
        TypeError,
        "concatenate(): argument 'tensors' (position 1) must be tuple of Tensors, not str",
    ),
    (
        "concatenate_tensor",
        lambda m, x: m.concatenate(x),
        TypeError,
        "concatenate(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor",
    ),
    (
        "cat_int",
        lambda m, x: m.cat(5),
        TypeError,
        "cat(): argument 'tensors' (position 1) must be tuple of Tensors, not int",
    ),
    (
        "special_expit",
        lambda m, x: m.special.expit("a"),
        TypeError,
        "special_expit(): argument 'input' (position 1) must be Tensor, not str",
    ),
    (
        "special_erf",
        lambda m, x: m.special.erf("a"),
        TypeError,
        "special_erf(): argument 'input' (position 1) must be Tensor, not str",
    ),
    (
        "special_gammaln",
        lambda m, x: m.special.gammaln("a"),
        TypeError,
        "special_gammaln(): argument 'input' (position 1) must be Tensor, not str",
    ),
    (
        "ger",
        lambda m, x: m.ger("a", x),
        TypeError,
        "ger(): argument 'input' (position 1) must be Tensor, not str",
    ),
    (
        "ger_vec2",
        lambda m, x: m.ger(x, "a"),
        TypeError,
        "ger(): argument 'vec2' (position 2) must be Tensor, not str",
    ),
    (
        "clip",
        lambda m, x: m.clip("a"),
        TypeError,
        "clip() received an invalid combination of arguments - got (str), but expected one of:\n * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n",
    ),
    (
        "clip_bound",
        lambda m, x: m.clip("a", 0),
        TypeError,
        "clip() received an invalid combination of arguments - got (str, int), but expected one of:\n * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n",
    ),
    (
        "clamp",
        lambda m, x: m.clamp("a"),
        TypeError,
        "clamp() received an invalid combination of arguments - got (str), but expected one of:\n * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n",
    ),
    # the ops' own spellings keep their names
    (
        "acos",
        lambda m, x: m.acos("a"),
        TypeError,
        "acos(): argument 'input' (position 1) must be Tensor, not str",
    ),
    (
        "mul",
        lambda m, x: m.mul("a", x),
        TypeError,
        "mul(): argument 'input' (position 1) must be Tensor, not str",
    ),
    (
        "erf",
        lambda m, x: m.erf("a"),
        TypeError,
        "erf(): argument 'input' (position 1) must be Tensor, not str",
    ),
    (
        "sigmoid",
        lambda m, x: m.sigmoid("a"),
        TypeError,
        "sigmoid(): argument 'input' (position 1) must be Tensor, not str",
    ),
    (
        "transpose_dim",
        lambda m, x: m.transpose(x, 1.5, 0),
        TypeError,
        "transpose(): argument 'dim0' (position 2) must be int, not float",
    ),
    (
        "outer_vec2",
        lambda m, x: m.outer(x, "a"),
        TypeError,
        "outer(): argument 'vec2' (position 2) must be Tensor, not str",
    ),
    (
        "cat",
        lambda m, x: m.cat("a"),
        TypeError,
        "cat(): argument 'tensors' (position 1) must be tuple of Tensors, not str",
    ),
]


@pytest.mark.parametrize(("name", "call", "kind", "message"), CASES, ids=[c[0] for c in CASES])
def test_error_text(name, call, kind, message):
    assert _raised(torch, call) == (kind, message)
    assert _raised(ember, call) == (kind, message)


def test_bound_method_names_tensor():
    # a method bound before the call (kept, or called with *args): Python names the class of
    # self, where a plain x.exp_(1) names the defining class (TensorBase, in the table above)
    args = (1,)
    for m in (torch, ember):
        x = m.ones(2)
        exp_ = x.exp_
        with pytest.raises(TypeError, match=r"^Tensor\.exp_\(\) takes no arguments \(1 given\)$"):
            exp_(1)
        with pytest.raises(TypeError, match=r"^Tensor\.exp_\(\) takes no arguments \(1 given\)$"):
            x.exp_(*args)


def test_aliases_are_the_ops_themselves():
    # the alias costs its op nothing: the same function object, told apart only on error
    assert ember.arccos is ember.acos
    assert ember.multiply is ember.mul
    assert ember.swapaxes is ember.transpose
    assert ember.special.expit is ember.sigmoid
    assert ember.ger is ember.outer
    assert ember.Tensor.greater_ is ember.Tensor.gt_


def test_alias_values_and_gradients():
    rs = np.random.RandomState(0)
    a = rs.uniform(-0.9, 0.9, (2, 3))
    b = rs.uniform(0.5, 2.0, (2, 3))
    up = rs.uniform(0.5, 2.0, (2, 3))
    got = {}
    for m in (torch, ember):
        x = m.tensor(a, requires_grad=True)
        y = m.tensor(b, requires_grad=True)
        outs = [
            m.arccos(x),
            m.multiply(x, y),
            m.divide(x, y),
            m.special.expit(x),
            m.swapaxes(x, 0, 1).transpose(0, 1),
            m.clip(x, -0.5, 0.5),
            m.concat([x, y]).narrow(0, 0, 2),
        ]
        total = sum((o * m.tensor(up)).sum() for o in outs)
        total.backward()
        got[m] = [o.detach().numpy() for o in outs] + [x.grad.numpy(), y.grad.numpy()]
        for o in outs:
            assert o.dtype == m.float64 and tuple(o.shape) == (2, 3)
    for e, t in zip(got[ember], got[torch]):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)


def test_inplace_valid_calls_still_work():
    for m in (torch, ember):
        x = m.arange(6.0).reshape(2, 3)
        x.add_(1).mul_(2).sub_(x, alpha=0.5).clamp_(0, 5).exp_()
        x.greater_(1.0)
        assert x.tolist() == [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
