"""torch's signatures of the in-place Tensor methods that have several overloads, as its
argument parser lists them in an "invalid combination of arguments" error (hidden overloads
left out): what ``x.add_()`` or ``x.fill_("a")`` report. Read only on the error path
(core/registry.py's in-place methods, through core/arg_errors.parser_error)."""

from __future__ import annotations

INPLACE_SIGNATURES: dict[str, tuple[str, ...]] = {
    "add_": ("(Tensor other, *, Number alpha = 1)",),
    "addbmm_": ("(Tensor batch1, Tensor batch2, *, Number beta = 1, Number alpha = 1)",),
    "addcdiv_": ("(Tensor tensor1, Tensor tensor2, *, Number value = 1)",),
    "addcmul_": ("(Tensor tensor1, Tensor tensor2, *, Number value = 1)",),
    "addmm_": ("(Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1)",),
    "addmv_": ("(Tensor mat, Tensor vec, *, Number beta = 1, Number alpha = 1)",),
    "addr_": ("(Tensor vec1, Tensor vec2, *, Number beta = 1, Number alpha = 1)",),
    "baddbmm_": ("(Tensor batch1, Tensor batch2, *, Number beta = 1, Number alpha = 1)",),
    "bernoulli_": (
        "(Tensor p, *, torch.Generator generator = None)",
        "(float p = 0.5, *, torch.Generator generator = None)",
    ),
    "bitwise_and_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "bitwise_left_shift_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "bitwise_or_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "bitwise_right_shift_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "bitwise_xor_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "clamp_": (
        "(Tensor min = None, Tensor max = None)",
        "(Number min = None, Number max = None)",
    ),
    "clamp_max_": (
        "(Tensor max)",
        "(Number max)",
    ),
    "clamp_min_": (
        "(Tensor min)",
        "(Number min)",
    ),
    "clip_": (
        "(Tensor min = None, Tensor max = None)",
        "(Number min = None, Number max = None)",
    ),
    "copy_": ("(Tensor other, bool non_blocking = False)",),
    "copysign_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "div_": (
        "(Tensor other)",
        "(Tensor other, *, str rounding_mode)",
        "(Number other, *, str rounding_mode)",
    ),
    "divide_": (
        "(Tensor other)",
        "(Tensor other, *, str rounding_mode)",
        "(Number other)",
        "(Number other, *, str rounding_mode)",
    ),
    "eq_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "fill_": (
        "(Tensor value)",
        "(Number value)",
    ),
    "float_power_": (
        "(Tensor exponent)",
        "(Number exponent)",
    ),
    "floor_divide_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "fmod_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "ge_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "greater_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "greater_equal_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "gt_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "index_fill_": (
        "(int dim, Tensor index, Tensor value)",
        "(int dim, Tensor index, Number value)",
    ),
    "le_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "lerp_": (
        "(Tensor end, Tensor weight)",
        "(Tensor end, Number weight)",
    ),
    "less_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "less_equal_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "lt_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "masked_fill_": (
        "(Tensor mask, Tensor value)",
        "(Tensor mask, Number value)",
    ),
    "multiply_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "ne_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "not_equal_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "pow_": (
        "(Tensor exponent)",
        "(Number exponent)",
    ),
    "random_": (
        "(*, torch.Generator generator = None)",
        "(int from, int to, *, torch.Generator generator = None)",
        "(int to, *, torch.Generator generator = None)",
    ),
    "remainder_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "round_": (
        "()",
        "(*, int decimals)",
    ),
    "scatter_": (
        "(int dim, Tensor index, Tensor src)",
        "(int dim, Tensor index, Tensor src, *, str reduce)",
        "(int dim, Tensor index, Number value)",
        "(int dim, Tensor index, Number value, *, str reduce)",
    ),
    "set_": (
        "()",
        "(torch.Storage source)",
        "(torch.Storage source, int storage_offset, tuple of ints size, tuple of ints stride = None)",
        "(Tensor source)",
        "(Tensor source, int storage_offset, tuple of ints size, tuple of ints stride = None)",
    ),
    "squeeze_": (
        "()",
        "(int dim)",
        "(tuple of ints dim)",
    ),
    "sub_": ("(Tensor other, *, Number alpha = 1)",),
    "subtract_": (
        "(Tensor other, *, Number alpha = 1)",
        "(Number other, Number alpha = 1)",
    ),
    "true_divide_": (
        "(Tensor other)",
        "(Number other)",
    ),
    "xlogy_": (
        "(Tensor other)",
        "(Number other)",
    ),
}
