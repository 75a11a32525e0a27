"""Named-dimension sweep over every public callable (names spec 4.1-4.3).

Every public callable of ``ember``, ``ember.nn.functional``, ``ember.linalg``, ``ember.special``,
``ember.fft``, every ``Tensor`` method, every ``ember.nn`` layer and every distribution (its
sample and log_prob) is either called here (a table row: which inputs, how to call) or listed in
SKIP with a reason. Each row runs once on unnamed inputs and once on the same data named by role
((2,3) is ('N','C'), (2,3,4,5) is ('N','C','H','W'), ...), and checks:

(a) the named call does not raise, and warns no more than the unnamed one (rule 4.2);
(b) it computes the unnamed call's values;
(c) each result's names are the generic fallback's (a result with the first named input's shape
    keeps its names, any other result is unnamed), or the better names of a specific rule, which
    must be plausible: every name comes from an input and sits on a dim of that name's size (a
    row in RESIZES keeps a dim's role while changing its length);
(d) after backward with a non-uniform upstream gradient, every named leaf's gradient carries its
    names and the unnamed run's values (rule 4.1).

Documented deviations from the fallback (a family's own rule) are listed in OWN_RULE with where
they are decided; violations not fixed yet in KNOWN. Random callables run under the same seed in
both calls. The last section holds the parity tests of the fixes the sweep led to.
"""

from __future__ import annotations

import ast
import inspect
import warnings

import ember
import ember.distributions
import ember.nn.functional as F
import numpy as np
import pytest

# input specs: shape, dtype, kind of values, names (each name sits on its own size, so a name on
# a dim of another size is a misplaced name)
SPECS = {
    "x": ((2, 3), "float32", "pos", ("N", "C")),
    "y": ((2, 3), "float32", "pos", ("N", "C")),
    "z": ((2, 3), "float32", "pos", ("N", "C")),
    "v": ((5,), "float32", "pos", ("W",)),
    "w": ((5,), "float32", "pos", ("W",)),
    "x3": ((2, 3, 4), "float32", "pos", ("N", "C", "L")),
    "x4": ((2, 3, 4, 5), "float32", "pos", ("N", "C", "H", "W")),
    "x5": ((2, 3, 4, 5, 6), "float32", "pos", ("N", "C", "D", "H", "W")),
    "sq": ((3, 3), "float64", "spd", ("A", "B")),
    "xi": ((2, 3), "int64", "int", ("N", "C")),
    "yi": ((2, 3), "int64", "int", ("N", "C")),
    "vi": ((5,), "int64", "int", ("W",)),
    "xb": ((2, 3), "bool", "bool", ("N", "C")),
    "m": ((3, 4), "float32", "pos", ("C", "H")),
    "xc": ((2, 3), "complex64", "pos", ("N", "C")),
    "x2": ((2, 2), "float32", "pos", ("N", "C")),
    "x64": ((2, 3), "float64", "pos", ("N", "C")),
    "s": ((1,), "float32", "pos", ("N",)),
    "n": ((2,), "float32", "pos", ("N",)),
    "c": ((3,), "float32", "pos", ("C",)),
    "xh": ((2, 4), "float32", "pos", ("N", "H")),
    "m2": ((4, 3), "float32", "pos", ("H", "C")),
    "xd": ((4, 3), "float32", "pos", ("D", "C")),
    "x3b": ((2, 4, 5), "float32", "pos", ("N", "L", "W")),
    "x3c": ((2, 3, 5), "float32", "pos", ("N", "C", "W")),
    "cw": ((3, 5), "float32", "pos", ("C", "W")),
    "x3f": ((2, 12, 4), "float32", "pos", ("N", "C", "L")),
    "b3": ((3, 2), "float64", "pos", ("B", "K")),
    "t62": ((6, 2, 3), "float64", "tinv", ("K", "N", "C")),
    "b6": ((6,), "float64", "pos", ("K",)),
    "th": ((2, 2, 3), "float32", "pos", ("N", "R", "K")),
    "seq": ((5, 2, 4), "float32", "pos", ("T", "N", "E")),
    "sig": ((16,), "float32", "pos", ("T",)),
    "spec": ((3, 5), "complex64", "pos", ("F", "T")),
    "lp": ((4, 2, 3), "float32", "pos", ("T", "N", "C")),
    "idx": ((2, 3), "int64", "idx", ("N", "C")),
    "px": ((2, 4, 2, 6), "float32", "pos", ("N", "C", "H", "W")),
    "t45": ((2, 4, 5), "int64", "idx", ("N", "H", "W")),
    "sg2": ((2, 3), "float32", "sign", ("N", "C")),
    "tn": ((2,), "int64", "idx", ("N",)),
    "sgn": ((2,), "float32", "sign", ("N",)),
    # unnamed operands: weights, index tensors, running statistics
    "u": ((2, 3), "float32", "pos", None),
    "u2": ((4, 3), "float32", "pos", None),
    "t3": ((3,), "float64", "pos", None),
    "i2": ((2,), "int64", "idx", None),
    "ix": ((2, 3), "int64", "idx", None),
    "cu": ((3,), "float32", "pos", None),
    "cup": ((3,), "float32", "pos", None),
    "grid": ((2, 3, 3, 2), "float32", "pos", None),
    "grid3": ((2, 2, 3, 2, 3), "float32", "pos", None),
    "ctgt": ((2, 2), "int64", "int", None),
    "wemb": ((4, 5), "float32", "pos", None),
    "wbil": ((4, 3, 3), "float32", "pos", None),
    "wri": ((4, 3), "float32", "pos", None),
    "wrh": ((4, 4), "float32", "pos", None),
    "wgi": ((12, 3), "float32", "pos", None),
    "wgh": ((12, 4), "float32", "pos", None),
    "wli": ((16, 3), "float32", "pos", None),
    "wlh": ((16, 4), "float32", "pos", None),
    "wtbc": ((2, 4, 3), "float32", "pos", None),
    "w3": ((4, 3, 2), "float32", "pos", None),
    "w4": ((4, 3, 2, 2), "float32", "pos", None),
    "w5": ((4, 3, 2, 2, 2), "float32", "pos", None),
    "wt3": ((3, 4, 2), "float32", "pos", None),
    "wt4": ((3, 4, 2, 2), "float32", "pos", None),
    "wt5": ((3, 4, 2, 2, 2), "float32", "pos", None),
}


def _array(shape, dtype, kind, seed):
    r = np.random.default_rng(seed)
    if kind == "spd":  # well-conditioned, symmetric positive-definite: every linalg op runs
        a = r.uniform(-1, 1, shape)
        return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)
    if kind == "tinv":  # an invertible (prod(shape[:1]), prod(shape[1:])) operator
        n = shape[0]
        a = r.uniform(-1, 1, (n, n))
        return (a @ a.T + n * np.eye(n)).reshape(shape).astype(dtype)
    if kind in ("int", "idx"):  # idx: valid indices into any dim of the specs
        return r.integers(*((1, 3) if kind == "int" else (0, 2)), shape).astype(dtype)
    if kind == "sign":
        return np.where(r.random(shape) > 0.5, 1.0, -1.0).astype(dtype)
    if kind == "bool":
        return r.random(shape) > 0.5
    a = r.uniform(0.1, 0.9, shape)  # inside every pointwise domain (log, acos, atanh, logit)
    if dtype.startswith("complex"):
        a = a + 1j * r.uniform(0.1, 0.9, shape)
    return a.astype(dtype)


def _tensor(spec, named, grad, seed):
    shape, dtype, kind, names = SPECS[spec]
    t = ember.tensor(_array(shape, dtype, kind, seed), names=names if named else None)
    return t.requires_grad_(True) if grad and dtype.startswith(("float", "complex")) else t


def _parse(pattern):
    """'x y 1' -> the input specs and literals of a row (a token not in SPECS is a literal)."""
    return [tok if tok in SPECS else ast.literal_eval(tok) for tok in pattern.split()]


_NAMESPACES = {"ember": ember, "F": F, "linalg": ember.linalg, "special": ember.special,
               "fft": ember.fft}  # fmt: skip
# classes swept too: nn layers and distributions (rows build one, then call it)
_CLASSES = {"nn": (ember.nn, ember.nn.Module),
            "distributions": (ember.distributions, ember.distributions.Distribution)}  # fmt: skip


def _resolve(key):
    ns, name = key.split(".", 1)
    if ns in _CLASSES:
        return getattr(_CLASSES[ns][0], name)
    return getattr(ember.Tensor if ns == "Tensor" else _NAMESPACES[ns], name)


# rows whose inputs are one of the patterns below: f(*inputs)
GENERIC = {
    "x 1": """
    F.adaptive_avg_pool1d F.adaptive_max_pool1d F.adaptive_max_pool1d_with_indices F.avg_pool1d
    ember.adaptive_avg_pool1d ember.adaptive_max_pool1d
    F.group_norm F.max_pool1d F.max_pool1d_with_indices Tensor.chunk Tensor.cummax Tensor.cummin
    Tensor.cumprod Tensor.cumprod_ Tensor.cumsum Tensor.cumsum_ Tensor.fill_ Tensor.flip
    Tensor.hsplit Tensor.kthvalue Tensor.log_softmax Tensor.logcumsumexp Tensor.logsumexp
    Tensor.multinomial Tensor.mvlgamma Tensor.mvlgamma_ Tensor.nanquantile Tensor.polygamma
    Tensor.quantile Tensor.repeat_interleave Tensor.roll Tensor.softmax Tensor.split
    Tensor.tensor_split Tensor.to_sparse_bsc
    Tensor.to_sparse_bsr Tensor.topk Tensor.unsafe_chunk Tensor.unsafe_split Tensor.unsqueeze
    Tensor.unsqueeze_ Tensor.vsplit ember.avg_pool1d ember.chunk ember.cummax ember.cummin
    ember.cumprod ember.cumsum ember.fill ember.fill_ ember.full_like
    ember.group_norm ember.histogramdd ember.hsplit ember.kthvalue ember.log_softmax
    ember.logcumsumexp ember.logsumexp ember.max_pool1d ember.max_pool1d_with_indices
    ember.multinomial ember.mvlgamma ember.nanquantile ember.quantile ember.randint_like
    ember.repeat_interleave ember.roll ember.softmax ember.split ember.split_copy
    ember.tensor_split ember.topk ember.unsafe_chunk ember.unsafe_split
    ember.unsqueeze ember.unsqueeze_copy ember.vsplit fft.normalize_dim fft.roll
    special.log_softmax special.logsumexp special.multigammaln special.softmax
    """,
    "x": """
    F.alpha_dropout F.celu F.celu_ F.dropout F.dropout1d F.dropout2d F.dropout3d F.elu F.elu_
    F.feature_alpha_dropout F.gelu F.gumbel_softmax F.hardshrink F.hardsigmoid F.hardswish
    F.hardtanh F.hardtanh_ F.leaky_relu F.leaky_relu_ F.log_softmax F.logsigmoid F.mish
    F.normalize F.pdist F.relu F.relu6 F.relu_ F.rrelu F.rrelu_ F.selu F.selu_ F.sigmoid F.silu
    F.softmax F.softmin F.softplus F.softshrink F.softsign F.tanh F.tanhshrink Tensor.abs
    Tensor.abs_ Tensor.absolute Tensor.absolute_ Tensor.acos Tensor.acos_ Tensor.acosh
    Tensor.acosh_ Tensor.adjoint Tensor.all Tensor.amax Tensor.amin Tensor.aminmax Tensor.angle
    Tensor.any Tensor.arccos Tensor.arccos_ Tensor.arccosh Tensor.arccosh_ Tensor.arcsin
    Tensor.arcsin_ Tensor.arcsinh Tensor.arcsinh_ Tensor.arctan Tensor.arctan_ Tensor.arctanh
    Tensor.arctanh_ Tensor.argmax Tensor.argmin Tensor.argsort Tensor.argwhere Tensor.as_strided
    Tensor.asin Tensor.asin_ Tensor.asinh Tensor.asinh_ Tensor.atan Tensor.atan_ Tensor.atanh
    Tensor.atanh_ Tensor.bernoulli Tensor.bernoulli_ Tensor.bfloat16 Tensor.bool Tensor.byte
    Tensor.cauchy_ Tensor.cdouble Tensor.ceil Tensor.ceil_ Tensor.cfloat Tensor.char
    Tensor.clone Tensor.conj Tensor.conj_physical Tensor.conj_physical_ Tensor.contiguous
    Tensor.corrcoef Tensor.cos Tensor.cos_ Tensor.cosh Tensor.cosh_ Tensor.count_nonzero
    Tensor.cov Tensor.cpu Tensor.deg2rad Tensor.deg2rad_ Tensor.dense_dim Tensor.dequantize
    Tensor.detach Tensor.detach_ Tensor.diag Tensor.diag_embed Tensor.diagflat Tensor.diagonal
    Tensor.diff Tensor.digamma Tensor.digamma_ Tensor.dim Tensor.dim_order Tensor.double
    Tensor.element_size Tensor.erf Tensor.erf_ Tensor.erfc Tensor.erfc_ Tensor.erfinv
    Tensor.erfinv_ Tensor.exp Tensor.exp2 Tensor.exp2_ Tensor.exp_ Tensor.expm1 Tensor.expm1_
    Tensor.exponential_ Tensor.fill_diagonal_ Tensor.fix Tensor.fix_ Tensor.flatten
    Tensor.fliplr Tensor.flipud Tensor.float Tensor.floor Tensor.floor_ Tensor.frac Tensor.frac_
    Tensor.frexp Tensor.geqrf Tensor.get_device Tensor.half Tensor.hardshrink Tensor.hash_tensor
    Tensor.histc Tensor.histogram Tensor.i0 Tensor.i0_ Tensor.int Tensor.is_complex
    Tensor.is_conj Tensor.is_contiguous Tensor.is_distributed Tensor.is_floating_point
    Tensor.is_inference Tensor.is_neg Tensor.is_pinned Tensor.is_shared Tensor.is_signed
    Tensor.isfinite Tensor.isinf Tensor.isnan Tensor.isneginf Tensor.isposinf Tensor.isreal
    Tensor.lgamma Tensor.lgamma_ Tensor.log Tensor.log10 Tensor.log10_ Tensor.log1p
    Tensor.log1p_ Tensor.log2 Tensor.log2_ Tensor.log_ Tensor.log_normal_ Tensor.logical_not
    Tensor.logical_not_ Tensor.logit Tensor.logit_ Tensor.long Tensor.lu Tensor.max Tensor.mean
    Tensor.median Tensor.min Tensor.mode Tensor.msort Tensor.nan_to_num Tensor.nan_to_num_
    Tensor.nanmean Tensor.nanmedian Tensor.nansum Tensor.ndimension Tensor.neg Tensor.neg_
    Tensor.negative Tensor.negative_ Tensor.nelement Tensor.new
    Tensor.nonzero Tensor.norm Tensor.normal_ Tensor.numel Tensor.pinverse
    Tensor.polygamma_ Tensor.positive Tensor.prod Tensor.qr Tensor.rad2deg Tensor.rad2deg_
    Tensor.random_ Tensor.ravel Tensor.reciprocal Tensor.reciprocal_ Tensor.relu Tensor.relu_
    Tensor.resolve_conj Tensor.resolve_neg Tensor.rot90 Tensor.round Tensor.round_ Tensor.rsqrt
    Tensor.rsqrt_ Tensor.sgn Tensor.sgn_ Tensor.short Tensor.sigmoid Tensor.sigmoid_ Tensor.sign
    Tensor.sign_ Tensor.signbit Tensor.sin Tensor.sin_ Tensor.sinc Tensor.sinc_ Tensor.sinh
    Tensor.sinh_ Tensor.size Tensor.sort Tensor.sparse_dim Tensor.sqrt Tensor.sqrt_
    Tensor.square Tensor.square_ Tensor.squeeze Tensor.squeeze_ Tensor.std Tensor.std_mean
    Tensor.storage_offset Tensor.stride Tensor.sum Tensor.sum_to_size Tensor.svd Tensor.t
    Tensor.t_ Tensor.tan Tensor.tan_ Tensor.tanh Tensor.tanh_ Tensor.to
    Tensor.to_dense Tensor.to_sparse Tensor.to_sparse_coo Tensor.to_sparse_csc
    Tensor.to_sparse_csr Tensor.tolist Tensor.trace Tensor.tril Tensor.tril_ Tensor.triu
    Tensor.triu_ Tensor.trunc Tensor.trunc_ Tensor.unbind Tensor.uniform_ Tensor.unique
    Tensor.unique_consecutive Tensor.var Tensor.var_mean Tensor.zero_ ember.abs ember.abs_
    ember.absolute ember.acos ember.acos_ ember.acosh ember.acosh_
    ember.adjoint ember.alias_copy ember.all ember.amax ember.amin ember.is_distributed
    ember.aminmax ember.angle ember.any ember.arccos ember.arccos_ ember.arccosh ember.arccosh_
    ember.arcsin ember.arcsin_ ember.arcsinh ember.arcsinh_ ember.arctan ember.arctan_
    ember.arctanh ember.arctanh_ ember.argmax ember.argmin ember.argsort ember.argwhere
    ember.as_strided ember.as_strided_copy ember.as_tensor ember.asarray ember.asin ember.asin_
    ember.asinh ember.asinh_ ember.atan ember.atan_ ember.atanh ember.atanh_ ember.atleast_1d
    ember.atleast_2d ember.atleast_3d ember.bernoulli ember.block_diag ember.broadcast_tensors
    ember.ceil ember.ceil_ ember.celu ember.celu_ ember.chain_matmul ember.clone ember.conj
    ember.conj_physical ember.conj_physical_ ember.constant_pad_nd ember.corrcoef ember.cos
    ember.cos_ ember.cosh ember.cosh_ ember.count_nonzero ember.cov ember.cumulative_trapezoid
    ember.deg2rad ember.deg2rad_ ember.dequantize ember.detach ember.detach_ ember.detach_copy
    ember.diag ember.diag_embed ember.diagflat ember.diagonal ember.diagonal_copy ember.diff
    ember.digamma ember.empty_like ember.erf ember.erf_ ember.erfc ember.erfc_ ember.erfinv
    ember.exp ember.exp2 ember.exp2_ ember.exp_ ember.expm1 ember.expm1_ ember.fix ember.fix_
    ember.flatten ember.fliplr ember.flipud ember.floor ember.floor_ ember.frac ember.frac_
    ember.frexp ember.from_dlpack ember.geqrf ember.get_device ember.gradient ember.hardshrink
    ember.hash_tensor ember.histc ember.histogram ember.i0 ember.i0_ ember.is_autocast_enabled
    ember.is_complex ember.is_conj ember.is_floating_point ember.is_inference ember.is_neg
    ember.is_signed ember.is_storage ember.is_tensor ember.isfinite ember.isinf ember.isnan
    ember.isneginf ember.isposinf ember.isreal ember.lgamma ember.log ember.log10 ember.log10_
    ember.log1p ember.log1p_ ember.log2 ember.log2_ ember.log_ ember.logical_not ember.logit
    ember.logit_ ember.lu ember.max ember.mean ember.median ember.min ember.mode ember.msort
    ember.nan_to_num ember.nan_to_num_ ember.nanmean ember.nanmedian ember.nansum ember.neg
    ember.neg_ ember.negative ember.negative_ ember.nonzero ember.norm ember.nuclear_norm ember.normal ember.numel
    ember.ones_like ember.pca_lowrank ember.pdist ember.pinverse ember.poisson ember.positive
    ember.prod ember.qr ember.rad2deg ember.rad2deg_ ember.rand_like ember.randn_like
    ember.ravel ember.real ember.reciprocal ember.reciprocal_ ember.relu ember.relu_
    ember.resolve_conj ember.resolve_neg ember.rot90 ember.round ember.round_ ember.rrelu
    ember.rrelu_ ember.rsqrt ember.rsqrt_ ember.selu ember.selu_ ember.sgn ember.sigmoid
    ember.sigmoid_ ember.sign ember.signbit ember.sin ember.sin_ ember.sinc ember.sinc_
    ember.sinh ember.sinh_ ember.slice_copy ember.sort ember.sqrt ember.sqrt_ ember.square
    ember.square_ ember.squeeze ember.squeeze_copy ember.std ember.std_mean ember.sum
    ember.sum_to_size ember.svd ember.svd_lowrank ember.sym_sum ember.t ember.t_copy ember.tan
    ember.tan_ ember.tanh ember.tanh_ ember.tensor ember.trace ember.trapezoid
    ember.trapz ember.tril ember.triu ember.trunc ember.trunc_ ember.unbind ember.unbind_copy
    ember.unique ember.unique_consecutive ember.var ember.var_mean ember.where ember.zero_
    ember.zeros_like fft.conj_physical fft.fft fft.fft2 fft.fftn fft.fftshift fft.hfft fft.hfft2
    fft.hfftn fft.ifft fft.ifft2 fft.ifftn fft.ifftshift fft.ihfft fft.ihfft2 fft.ihfftn
    fft.irfft fft.irfft2 fft.irfftn fft.rfft fft.rfft2 fft.rfftn linalg.cond linalg.diagonal
    linalg.lu linalg.lu_factor linalg.lu_factor_ex linalg.matrix_norm linalg.matrix_rank
    linalg.multi_dot linalg.norm linalg.pinv linalg.qr linalg.svd linalg.svdvals linalg.vander
    linalg.vector_norm special.airy_ai special.bessel_j0 special.bessel_j1 special.bessel_y0
    special.bessel_y1 special.digamma special.entr special.erf special.erfc special.erfcx
    special.erfinv special.exp2 special.expit special.expm1 special.gammaln special.i0
    special.i0e special.i1 special.i1e special.log1p special.log_ndtr special.logit
    special.modified_bessel_i0 special.modified_bessel_i1 special.modified_bessel_k0
    special.modified_bessel_k1 special.ndtr special.ndtri special.psi special.round
    special.scaled_modified_bessel_k0 special.scaled_modified_bessel_k1 special.sinc
    special.spherical_bessel_j0
    """,
    "x y": """
    F.binary_cross_entropy F.binary_cross_entropy_with_logits F.cosine_similarity
    F.cross_entropy F.hinge_embedding_loss F.huber_loss F.kl_div F.l1_loss F.mse_loss
    F.multilabel_soft_margin_loss F.pairwise_distance
    F.poisson_nll_loss F.smooth_l1_loss Tensor.add Tensor.add_
    Tensor.allclose Tensor.arctan2 Tensor.arctan2_ Tensor.atan2 Tensor.atan2_ Tensor.clamp
    Tensor.clamp_ Tensor.clamp_max Tensor.clamp_max_ Tensor.clamp_min Tensor.clamp_min_
    Tensor.clip Tensor.clip_ Tensor.copy_ Tensor.copysign Tensor.copysign_ Tensor.cross
    Tensor.dist Tensor.div Tensor.div_ Tensor.divide Tensor.divide_ Tensor.eq Tensor.eq_
    Tensor.equal Tensor.expand_as Tensor.float_power Tensor.floor_divide Tensor.floor_divide_
    Tensor.fmax Tensor.fmin Tensor.fmod Tensor.fmod_ Tensor.ge Tensor.ge_ Tensor.greater
    Tensor.greater_ Tensor.greater_equal Tensor.greater_equal_ Tensor.gt Tensor.gt_
    Tensor.heaviside Tensor.heaviside_ Tensor.hypot Tensor.hypot_ Tensor.igamma Tensor.igamma_
    Tensor.igammac Tensor.igammac_ Tensor.is_same_size Tensor.is_set_to Tensor.isclose
    Tensor.kron Tensor.ldexp Tensor.ldexp_ Tensor.le Tensor.le_ Tensor.less Tensor.less_
    Tensor.less_equal Tensor.less_equal_ Tensor.logaddexp Tensor.logaddexp2 Tensor.logical_and
    Tensor.logical_and_ Tensor.logical_or Tensor.logical_or_ Tensor.logical_xor
    Tensor.logical_xor_ Tensor.lt Tensor.lt_ Tensor.maximum Tensor.minimum Tensor.module_load
    Tensor.mul Tensor.mul_ Tensor.multiply Tensor.multiply_ Tensor.ne Tensor.ne_
    Tensor.new_tensor Tensor.nextafter Tensor.nextafter_ Tensor.not_equal Tensor.not_equal_
    Tensor.pow Tensor.pow_ Tensor.remainder Tensor.remainder_ Tensor.reshape_as Tensor.resize_as
    Tensor.rsub Tensor.slice_scatter Tensor.sub Tensor.sub_ Tensor.subtract Tensor.subtract_
    Tensor.true_divide Tensor.true_divide_ Tensor.type_as Tensor.view_as Tensor.xlogy
    Tensor.xlogy_ ember.add ember.allclose ember.arctan2 ember.atan2
    ember.binary_cross_entropy_with_logits ember.binomial ember.clamp ember.clamp_ ember.clamp_max
    ember.clamp_max_ ember.clamp_min ember.clamp_min_ ember.clip ember.clip_ ember.complex
    ember.copysign ember.cosine_similarity ember.cross ember.dist ember.div ember.divide
    ember.eq ember.equal ember.float_power ember.floor_divide ember.fmax ember.fmin ember.fmod
    ember.ge ember.greater ember.greater_equal ember.gt ember.heaviside
    ember.hinge_embedding_loss ember.hypot ember.igamma ember.igammac ember.is_same_size
    ember.isclose ember.isin ember.kl_div ember.kron ember.ldexp ember.ldexp_ ember.le
    ember.less ember.less_equal ember.logaddexp ember.logaddexp2 ember.logical_and
    ember.logical_or ember.logical_xor ember.lt ember.maximum ember.minimum ember.mul
    ember.multiply ember.ne ember.nextafter ember.not_equal ember.pairwise_distance ember.polar
    ember.pow ember.remainder ember.rsub ember.searchsorted ember.slice_scatter ember.sub
    ember.subtract ember.tensordot ember.true_divide ember.xlogy ember.xlogy_ linalg.cross
    linalg.lstsq linalg.vecdot special.chebyshev_polynomial_t special.chebyshev_polynomial_u
    special.chebyshev_polynomial_v special.chebyshev_polynomial_w special.gammainc
    special.gammaincc special.hermite_polynomial_h special.hermite_polynomial_he
    special.laguerre_polynomial_l special.legendre_polynomial_p
    special.shifted_chebyshev_polynomial_t special.shifted_chebyshev_polynomial_u
    special.shifted_chebyshev_polynomial_v special.shifted_chebyshev_polynomial_w
    special.xlog1py special.xlogy special.zeta
    """,
    "x4": """
    F.channel_shuffle F.instance_norm F.native_channel_shuffle F.pixel_shuffle F.pixel_unshuffle
    ember.channel_shuffle ember.native_channel_shuffle ember.pixel_shuffle ember.pixel_unshuffle
    """,
    "x y z": """
    F.gaussian_nll_loss F.margin_ranking_loss F.scaled_dot_product_attention
    F.triplet_margin_loss F.triplet_margin_with_distance_loss Tensor.addcdiv Tensor.addcdiv_
    Tensor.addcmul Tensor.addcmul_ Tensor.lerp Tensor.lerp_ ember.addcdiv ember.addcmul
    ember.lerp ember.margin_ranking_loss ember.triplet_margin_loss
    """,
    "x3": """
    F.glu
    """,
    "x 1 1": """
    F.lp_pool1d F.threshold F.threshold_ Tensor.threshold Tensor.threshold_ ember.threshold
    Tensor.moveaxis Tensor.movedim
    Tensor.repeat Tensor.select Tensor.swapaxes Tensor.swapaxes_ Tensor.swapdims
    Tensor.swapdims_ Tensor.transpose Tensor.transpose_ ember.moveaxis ember.movedim ember.repeat
    ember.select ember.select_copy ember.swapaxes ember.swapdims ember.threshold_
    ember.transpose ember.transpose_copy
    """,
    "x 1 True": """
    ember.alpha_dropout ember.alpha_dropout_ ember.dropout ember.dropout_
    ember.feature_alpha_dropout ember.feature_alpha_dropout_ ember.feature_dropout
    ember.feature_dropout_
    """,
    "xi": """
    F.one_hot Tensor.bitwise_not Tensor.bitwise_not_ ember.bitwise_not
    """,
    "xi yi": """
    Tensor.bitwise_and Tensor.bitwise_and_ Tensor.bitwise_left_shift Tensor.bitwise_left_shift_
    Tensor.bitwise_or Tensor.bitwise_or_ Tensor.bitwise_right_shift Tensor.bitwise_right_shift_
    Tensor.bitwise_xor Tensor.bitwise_xor_ Tensor.gcd Tensor.gcd_ Tensor.lcm Tensor.lcm_
    Tensor.take Tensor.take_along_dim ember.bitwise_and ember.bitwise_left_shift
    ember.bitwise_or ember.bitwise_right_shift ember.bitwise_xor ember.gcd ember.gcd_ ember.lcm
    ember.lcm_ ember.take ember.take_along_dim
    """,
    "sq": """
    Tensor.cholesky Tensor.cholesky_inverse Tensor.det Tensor.inverse Tensor.logdet
    Tensor.matrix_exp Tensor.slogdet ember.cholesky ember.cholesky_inverse ember.det
    ember.inverse ember.lobpcg ember.logdet ember.matrix_exp ember.slogdet linalg.cholesky
    linalg.cholesky_ex linalg.det linalg.eig linalg.eigh linalg.eigvals linalg.eigvalsh
    linalg.inv linalg.inv_ex linalg.matrix_exp linalg.slogdet
    """,
    "v w": """
    Tensor.dot Tensor.prelu Tensor.vdot ember.bucketize ember.dot ember.vdot
    """,
    "x 0.5": """
    Tensor.geometric_
    """,
    "x (1,)": """
    Tensor.tile ember.flip ember.tile
    """,
    "x m": """
    Tensor.matmul Tensor.mm ember.matmul ember.mm ember.spmm
    linalg.matmul
    """,
    "v": """
    ember.cartesian_prod ember.combinations ember.meshgrid ember.vander
    """,
    "xc": """
    ember.imag ember.view_as_real
    """,
}


def _same(keys: str, pattern: str, how=None) -> dict:
    """One row for several spellings of one call (``ember.f(x, ...)``, ``Tensor.f(x, ...)``)."""
    return {k: (pattern, how) for k in keys.split()}


_LIST = lambda f, x, y, *rest: f([x, y], *rest)  # cat/stack-style: a sequence of tensors
_h0 = lambda h: ember.full((1, 3, h), 0.1)  # an (unnamed) initial state of x3 as (T, B, I)
_DIM1_SIZES = lambda f, x: f(x, [1, 2], 1)
_SCATTER = lambda f, x, i, s: f(x, 1, i, s)

# rows that need particular inputs: key -> (input pattern, how to call: f(*inputs) when None)
EXPLICIT = {
    # products (the contracted operand named apart, so the result can keep both names)
    **_same("ember.addmm Tensor.addmm Tensor.addmm_", "xh x m"),
    **_same("ember.addmv ember.addmv_ Tensor.addmv Tensor.addmv_", "n x c"),
    **_same("ember.addr Tensor.addr Tensor.addr_", "x n c"),
    **_same("ember.bmm Tensor.bmm", "x3 x3b"),
    **_same("ember.baddbmm Tensor.baddbmm Tensor.baddbmm_", "x3c x3 x3b"),
    **_same("ember.addbmm Tensor.addbmm Tensor.addbmm_", "cw x3 x3b"),
    **_same("ember.mv Tensor.mv", "x c"),
    **_same("ember.outer ember.ger Tensor.outer Tensor.ger", "n c"),
    **_same("ember.inner Tensor.inner", "x m2"),
    "ember.cdist": ("x xd", None),
    "ember.frobenius_norm": ("x", lambda f, x: f(x, (0, 1))),
    "ember.sparse_coo_tensor": ("ix c", lambda f, i, v: f(i, v, (2, 2))),
    "ember.einsum": ("x m", lambda f, x, m: f("nc,ch->nh", x, m)),
    "F.linear": ("x u2", None),
    "F.linear_cross_entropy": ("x u2 tn", lambda f, x, w, t: f(x, w, t, reduction="none")),
    # torch refuses a target that requires grad (no derivative for it)
    "F.soft_margin_loss": ("x y", lambda f, x, t: f(x, t.detach())),
    "F.bilinear": ("x x wbil", None),
    "ember.bilinear": ("x x wbil", None),
    **_same("ember.matrix_power linalg.matrix_power Tensor.matrix_power", "sq 2"),
    # joining and splitting
    **_same("ember.cat ember.concat ember.concatenate fft.cat", "x y 1", _LIST),
    **_same("ember.stack ember.hstack ember.vstack ember.dstack ember.row_stack", "x y", _LIST),
    "ember.column_stack": ("x y", _LIST),
    **_same(
        "ember.split_with_sizes ember.split_with_sizes_copy ember.unsafe_split_with_sizes "
        "Tensor.split_with_sizes Tensor.unsafe_split_with_sizes",
        "x",
        _DIM1_SIZES,
    ),
    **_same("ember.dsplit Tensor.dsplit", "x3 2"),
    # shape and views
    **_same("ember.reshape Tensor.reshape ember.view_copy Tensor.view", "x3 2 12"),
    "ember.view": ("x3 2 12", None),
    # factories on a tensor (torch requires their size)
    **_same("Tensor.new_ones Tensor.new_zeros", "x", lambda f, x: f(x, (4,))),
    "Tensor.new_empty": ("x", lambda f, x: f(x, (0,))),  # (no values to compare)
    "Tensor.new_full": ("x", lambda f, x: f(x, (1,), 1)),
    **_same("ember.permute ember.permute_copy Tensor.permute", "x3 (2,0,1)"),
    **_same(
        "ember.expand ember.expand_copy Tensor.expand ember.broadcast_to Tensor.broadcast_to",
        "c (2,3)",
    ),
    **_same("ember.unflatten Tensor.unflatten", "x3 2 (2,2)"),
    **_same("ember.narrow ember.narrow_copy Tensor.narrow Tensor.narrow_copy", "x3 2 1 2"),
    "ember.unfold_copy": ("x3 2 2 1", None),
    "Tensor.unfold": ("x3 2 2 1", None),
    **_same("ember.as_strided_ Tensor.as_strided_", "x (3,2) (1,3)"),
    **_same("ember.view_as_complex ember.view_as_complex_copy", "x2"),
    "ember.view_as_real_copy": ("xc", None),
    # indexing and scattering (index tensors unnamed; the indexed input named)
    **_same("ember.index_select Tensor.index_select", "x 1 i2"),
    **_same("ember.gather Tensor.gather", "x 1 ix"),
    **_same(
        "ember.scatter Tensor.scatter Tensor.scatter_ ember.scatter_add Tensor.scatter_add "
        "Tensor.scatter_add_",
        "x ix y",
        _SCATTER,
    ),
    **_same(
        "ember.scatter_reduce Tensor.scatter_reduce Tensor.scatter_reduce_",
        "x ix y",
        lambda f, x, i, s: f(x, 1, i, s, "amax"),
    ),
    **_same(
        "ember.index_add Tensor.index_add Tensor.index_add_ ember.index_copy "
        "Tensor.index_copy Tensor.index_copy_",
        "x i2 x2",
        _SCATTER,
    ),
    **_same("ember.index_fill Tensor.index_fill Tensor.index_fill_", "x 1 i2 0.5"),
    **_same(
        "ember.index_reduce Tensor.index_reduce Tensor.index_reduce_",
        "x i2 x2",
        lambda f, x, i, s: f(x, 1, i, s, "prod"),
    ),
    **_same(
        "ember.index_put ember.index_put_ Tensor.index_put Tensor.index_put_",
        "x i2 n",
        lambda f, x, i, s: f(x, (i,), s.unsqueeze(1)),
    ),
    **_same("ember.put Tensor.put Tensor.put_", "x i2 n"),
    **_same("ember.masked_fill Tensor.masked_fill Tensor.masked_fill_", "x xb 0.5"),
    **_same("ember.masked_scatter Tensor.masked_scatter Tensor.masked_scatter_", "x xb y"),
    **_same("ember.masked_select Tensor.masked_select", "x xb"),
    **_same("ember.select_scatter Tensor.select_scatter", "x n 1 0"),
    **_same("ember.diagonal_scatter Tensor.diagonal_scatter", "x n"),
    **_same("ember.as_strided_scatter Tensor.as_strided_scatter", "x x2 (2,2) (3,1)"),
    **_same("ember.nonzero_static Tensor.nonzero_static", "x", lambda f, x: f(x, size=4)),
    "Tensor.where": ("x xb y", lambda f, x, c, y: f(x, c, y)),
    **_same("ember.bincount Tensor.bincount", "vi"),
    "ember.segment_reduce": ("x", lambda f, x: f(x, "amax", lengths=ember.tensor([1, 1]))),
    "ember.unravel_index": ("vi", lambda f, i: f(i, (2, 3))),
    **_same("ember.renorm Tensor.renorm Tensor.renorm_", "x 2 0 0.5"),
    "Tensor.float_power_": ("x64 2", None),
    # solvers and factorizations
    **_same("ember.cholesky_solve Tensor.cholesky_solve", "b3 sq"),
    **_same("ember.triangular_solve Tensor.triangular_solve", "b3 sq"),
    **_same("linalg.solve linalg.solve_ex", "sq b3"),
    "linalg.solve_triangular": ("sq b3", lambda f, a, b: f(a, b, upper=True)),
    **_same(
        "ember.lu_solve Tensor.lu_solve", "b3 sq", lambda f, b, a: f(b, *ember.linalg.lu_factor(a))
    ),
    "linalg.lu_solve": ("sq b3", lambda f, a, b: f(*ember.linalg.lu_factor(a), b)),
    "ember.lu_unpack": ("sq", lambda f, a: f(*ember.linalg.lu_factor(a))),
    **_same(
        "ember.orgqr Tensor.orgqr linalg.householder_product", "sq t3", lambda f, a, t: f(a, t)
    ),
    **_same("ember.ormqr Tensor.ormqr", "sq t3 sq", lambda f, a, t, c: f(a, t, c)),
    **_same("linalg.ldl_factor linalg.ldl_factor_ex", "sq"),
    "linalg.ldl_solve": ("sq b3", lambda f, a, b: f(*ember.linalg.ldl_factor(a), b)),
    "linalg.tensorinv": ("t62", lambda f, a: f(a, 1)),
    "linalg.tensorsolve": ("t62 b6", None),
    # random, rounding-free specials
    **_same("ember.polygamma special.polygamma", "x", lambda f, x: f(1, x)),
    # nn: layers keep the roles of the dims they leave alone (4.3)
    **_same("ember.conv1d F.conv1d", "x3 w3"),
    **_same("ember.conv2d F.conv2d", "x4 w4"),
    **_same("ember.conv3d F.conv3d", "x5 w5"),
    **_same("ember.conv_transpose1d F.conv_transpose1d", "x3 wt3"),
    **_same("ember.conv_transpose2d F.conv_transpose2d", "x4 wt4"),
    **_same("ember.conv_transpose3d F.conv_transpose3d", "x5 wt5"),
    **_same("ember.conv_tbc F.conv_tbc", "seq wtbc cu"),
    "ember.convolution": (
        "x4 w4",
        lambda f, x, w: f(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1),
    ),
    "F.lp_pool2d": ("x4 2 2", None),
    "F.lp_pool3d": ("x5 2 2", None),
    **_same(
        "F.max_pool2d F.max_pool2d_with_indices F.avg_pool2d ember.max_pool2d "
        "F.adaptive_avg_pool2d F.adaptive_max_pool2d F.adaptive_max_pool2d_with_indices",
        "x4 2",
    ),
    **_same(
        "F.max_pool3d F.max_pool3d_with_indices F.avg_pool3d ember.max_pool3d "
        "F.adaptive_avg_pool3d F.adaptive_max_pool3d F.adaptive_max_pool3d_with_indices",
        "x5 2",
    ),
    **_same(
        "F.fractional_max_pool2d F.fractional_max_pool2d_with_indices",
        "x4",
        lambda f, x: f(x, 2, output_size=2),
    ),
    **_same(
        "F.fractional_max_pool3d F.fractional_max_pool3d_with_indices",
        "x5",
        lambda f, x: f(x, 2, output_size=2),
    ),
    "F.max_unpool1d": ("x3", lambda f, x: f(*F.max_pool1d(x, 2, return_indices=True), 2)),
    "F.max_unpool2d": (
        "x4",
        lambda f, x: f(*F.max_pool2d(x, 2, return_indices=True), 2, 2, 0, x.shape[2:]),
    ),
    "F.max_unpool3d": (
        "x5",
        lambda f, x: f(*F.max_pool3d(x, 2, return_indices=True), 2, 2, 0, x.shape[2:]),
    ),
    **_same("F.interpolate F.upsample F.upsample_nearest", "x4", lambda f, x: f(x, scale_factor=2)),
    "F.upsample_bilinear": ("x4", lambda f, x: f(x, scale_factor=2)),
    "F.pad": ("x4 (1,2)", None),
    "F.local_response_norm": ("x4 2", None),
    "F.unfold": ("x4 2", None),
    "F.fold": ("x3f", lambda f, x: f(x, (3, 3), 2)),
    "F.affine_grid": ("th", lambda f, t: f(t, [2, 3, 4, 5], align_corners=False)),
    "ember.affine_grid_generator": ("th", lambda f, t: f(t, [2, 3, 4, 5], False)),
    "F.grid_sample": ("x4 grid", lambda f, x, g: f(x, g, align_corners=False)),
    "ember.grid_sampler": ("x4 grid", lambda f, x, g: f(x, g, 0, 0, False)),
    "ember.grid_sampler_2d": ("x4 grid", lambda f, x, g: f(x, g, 0, 0, False)),
    "ember.grid_sampler_3d": ("x5 grid3", lambda f, x, g: f(x, g, 0, 0, False)),
    # (running statistics are buffers: torch refuses them requiring grad)
    **_same(
        "F.batch_norm", "x4 cu cup", lambda f, x, m, v: f(x, m.detach(), v.detach(), training=True)
    ),
    "ember.batch_norm": (
        "x4 cu cup",
        lambda f, x, m, v: f(x, None, None, m.detach(), v.detach(), True, 0.1, 1e-5),
    ),
    "ember.native_batch_norm": (
        "x4 cu cup",
        lambda f, x, m, v: f(x, None, None, m.detach(), v.detach(), True, 0.1, 1e-5),
    ),
    "ember.instance_norm": ("x4", lambda f, x: f(x, None, None, None, None, True, 0.1, 1e-5)),
    "ember.native_group_norm": ("x4", lambda f, x: f(x, None, None, 2, 3, 20, 1, 1e-5)),
    **_same(
        "F.layer_norm ember.layer_norm F.rms_norm ember.rms_norm", "x4", lambda f, x: f(x, [5])
    ),
    "ember.native_layer_norm": ("x4", lambda f, x: f(x, [5], None, None, 1e-5)),
    **_same("F.prelu ember.prelu", "x4 cu"),
    **_same("F.embedding", "idx wemb"),
    "ember.embedding": ("wemb idx", None),
    "F.embedding_bag": ("idx wemb", lambda f, i, w: f(i, w, mode="sum")),
    "F.nll_loss": ("x tn", lambda f, x, t: f(x, t, reduction="none")),
    "F.multi_margin_loss": ("x tn", lambda f, x, t: f(x, t, reduction="none")),
    # class-index targets: torch refuses any dtype but int64
    "F.multilabel_margin_loss": ("x idx", None),
    "F.cosine_embedding_loss": ("x y sgn", lambda f, x, y, t: f(x, y, t, reduction="none")),
    "ember.cosine_embedding_loss": ("x y sgn", lambda f, x, y, t: f(x, y, t, 0.0, 0)),
    "ember.poisson_nll_loss": ("x y", lambda f, x, y: f(x, y, True, False, 1e-8, 0)),
    **_same("F.ctc_loss ember.ctc_loss", "lp ctgt", lambda f, lp, t: f(lp, t, [4, 4], [2, 2])),
    **_same("ember.rnn_tanh_cell ember.rnn_relu_cell", "x xh wri wrh"),
    "ember.gru_cell": ("x xh wgi wgh", None),
    "ember.lstm_cell": ("x xh wli wlh", lambda f, x, h, wi, wh: f(x, (h, h), wi, wh)),
    # torch.lstm / gru / rnn_*: x3 as (T, B, I=4) and square input weights (I = H = 4)
    "ember.lstm": (
        "x3 wlh",
        lambda f, x, w: f(x, (_h0(4), _h0(4)), [w, w], False, 1, 0.0, False, False, False),
    ),
    "ember.gru": (
        "x3 wgh",
        lambda f, x, w: f(x, _h0(4), [w, w], False, 1, 0.0, False, False, False),
    ),
    **_same(
        "ember.rnn_tanh ember.rnn_relu",
        "x3 wrh",
        lambda f, x, w: f(x, _h0(4), [w, w], False, 1, 0.0, False, False, False),
    ),
    "ember.native_dropout": ("x", lambda f, x: f(x, 0.5, True)),
    "ember.embedding_bag": ("wemb vi", lambda f, w, i: f(w, i, ember.tensor([0, 2]), False, 1)),
    "ember.norm_except_dim": ("x3", lambda f, x: f(x, 2, 1)),
    "F.multi_head_attention_forward": ("seq", lambda f, q: _mha(f, q)),
    # spectral
    **_same(
        "ember.stft Tensor.stft",
        "sig",
        lambda f, x: f(x, 4, window=ember.hann_window(4), return_complex=True),
    ),
    **_same("ember.istft Tensor.istft", "spec", lambda f, x: f(x, 4, window=ember.hann_window(4))),
    # quantization: a quantized result carries no names; the call must accept named input
    **_same("ember.quantize_per_tensor", "x", lambda f, x: f(x, 0.1, 0, ember.quint8)),
    **_same(
        "ember.quantize_per_channel",
        "x",
        lambda f, x: f(x, ember.tensor([0.1, 0.2]), ember.tensor([0, 0]), 0, ember.quint8),
    ),
    "ember.quantize_per_tensor_dynamic": ("x", lambda f, x: f(x, ember.quint8, False)),
    "ember.fake_quantize_per_tensor_affine": ("x", lambda f, x: f(x, 0.1, 0, 0, 255)),
    "ember.fake_quantize_per_channel_affine": (
        "x",
        lambda f, x: f(
            x, ember.tensor([0.1, 0.2]), ember.tensor([0, 0], dtype=ember.int32), 0, 0, 255
        ),
    ),
    # the names API itself (its own rules: test_names_api.py)
    **_same("Tensor.rename Tensor.rename_", "x", lambda f, x: f(x, "A", "B")),
    "Tensor.refine_names": ("x", lambda f, x: f(x, "N", "C")),
    # plain values, not tensors: the same answer named and unnamed
    "ember.result_type": ("x xi", None),
    "ember.typename": ("x", None),
    **_same("ember.is_nonzero Tensor.is_nonzero Tensor.item", "s"),
    "Tensor.numpy": ("x", lambda f, x: ember.tensor(f(x))),
    "Tensor.type": ("x", lambda f, x: f(x, ember.float64)),
    "Tensor.map_": ("x y", lambda f, x, y: f(x, x, lambda a, b: a + b)),
    "Tensor.apply_": ("x", lambda f, x: f(x, lambda a: a * 2)),
    "Tensor.map2_": ("x y z", lambda f, x, y, z: f(x, y, z, lambda a, b, c: a + b * c)),
    "Tensor.as_subclass": ("x", lambda f, x: f(x, ember.Tensor)),
    **_same("Tensor.resize_ Tensor.resize", "x 2 3"),
    # dunders written outside the registry (indexing, reflected operators, conversions)
    "Tensor.__getitem__": ("x3", lambda f, x: f(x, (0, slice(1, 3), None))),
    "Tensor.__setitem__": ("x y", lambda f, x, y: (f(x, 0, y[1]), x)[1]),
    **_same("Tensor.__rsub__ Tensor.__rtruediv__ Tensor.__rpow__ Tensor.__rfloordiv__", "x 2.0"),
    "Tensor.__rmatmul__": ("m x", None),
    **_same("Tensor.__abs__ Tensor.__neg__ Tensor.__pos__ Tensor.__reversed__", "x"),
    "Tensor.__invert__": ("xi", None),
    "Tensor.__iter__": ("x", lambda f, x: list(f(x))),
    **_same("Tensor.__len__ Tensor.__float__ Tensor.__bool__ Tensor.__int__", "s"),
    "Tensor.__deepcopy__": ("x", lambda f, x: f(x, {})),
    "ember.resize_as_": ("u x", None),
    "Tensor.resize_as_": ("u x", None),
}


def _mha(f, q):
    r = np.random.default_rng(3)
    w = lambda *s: ember.tensor(r.uniform(-0.5, 0.5, s).astype("float32"))
    return f(q, q, q, 4, 2, w(12, 4), w(12), None, None, False, 0.0, w(4, 4), w(4),
             need_weights=False)  # fmt: skip


_NO_TENSOR = "takes no tensor (state, configuration or a utility)"
_FACTORY = "a factory: no tensor input (names only through names=, test_names_api.py)"
_SPARSE = "needs a sparse input (sparse layouts carry no names)"
_QUANT = "needs a quantized input (quantized tensors carry no names)"
_SKIPPED = {
    _NO_TENSOR: """
    ember.are_deterministic_algorithms_enabled ember.broadcast_shapes ember.can_cast
    ember.autocast_decrement_nesting ember.autocast_increment_nesting ember.clear_autocast_cache
    ember.is_autocast_cache_enabled ember.set_autocast_cache_enabled ember.set_autocast_dtype
    ember.set_autocast_enabled ember.get_autocast_cpu_dtype ember.get_autocast_gpu_dtype
    ember.is_autocast_cpu_enabled ember.set_autocast_cpu_dtype ember.set_autocast_cpu_enabled
    ember.set_autocast_gpu_dtype
    ember.compile ember.compiled_with_cxx11_abi ember.fork_rng ember.from_file ember.from_numpy
    ember.frombuffer ember.get_autocast_dtype ember.get_default_device ember.get_default_dtype
    ember.get_deterministic_debug_mode ember.get_device_module ember.get_float32_matmul_precision
    ember.get_num_interop_threads ember.get_num_threads ember.get_rng_state ember.initial_seed
    ember.is_anomaly_check_nan_enabled ember.is_anomaly_enabled
    ember.is_deterministic_algorithms_warn_only_enabled ember.is_grad_enabled
    ember.is_inference_mode_enabled ember.is_warn_always_enabled ember.load ember.manual_seed
    ember.promote_types ember.save ember.seed ember.set_default_device ember.set_default_dtype
    ember.set_default_tensor_type ember.set_deterministic_debug_mode
    ember.set_float32_matmul_precision ember.set_flush_denormal ember.set_num_interop_threads
    ember.set_num_threads ember.set_printoptions ember.set_rng_state ember.set_warn_always
    ember.sym_float ember.sym_int ember.sym_max ember.sym_min ember.sym_not
    ember.use_deterministic_algorithms F.scalar_name ember.init_num_threads
    ember.set_anomaly_enabled
    """,
    "a transform or control flow over Python callables (names flow through the ops it runs)": (
        "ember.vmap ember.cond"
    ),
    _FACTORY: """
    ember.arange ember.bartlett_window ember.blackman_window ember.empty ember.empty_permuted
    ember.empty_strided
    ember.eye ember.full ember.hamming_window ember.hann_window ember.kaiser_window ember.linspace
    ember.logspace ember.ones ember.rand ember.randint ember.randn ember.randperm ember.range
    ember.scalar_tensor ember.tril_indices ember.triu_indices ember.zeros fft.fftfreq
    fft.rfftfreq Tensor.new_empty_strided
    """,
    _SPARSE: """
    ember.ccol_indices ember.ccol_indices_copy ember.col_indices ember.col_indices_copy
    ember.crow_indices ember.crow_indices_copy ember.indices ember.indices_copy ember.row_indices
    ember.row_indices_copy ember.values ember.values_copy ember.smm ember.sspaddmm ember.hspmm
    ember.sparse_bsc_tensor ember.sparse_bsr_tensor ember.sparse_compressed_tensor
    ember.sparse_csc_tensor ember.sparse_csr_tensor Tensor.ccol_indices Tensor.col_indices
    Tensor.crow_indices Tensor.indices Tensor.values Tensor.row_indices Tensor.coalesce
    Tensor.is_coalesced Tensor.smm Tensor.sspaddmm Tensor.sparse_mask Tensor.sparse_resize_
    Tensor.sparse_resize_and_clear_ Tensor.resize_as_sparse_
    """,
    _QUANT: """
    ember.q_per_channel_axis ember.q_per_channel_scales ember.q_per_channel_zero_points
    ember.q_scale ember.q_zero_point ember.int_repr ember.quantized_batch_norm
    ember.quantized_max_pool1d ember.quantized_max_pool2d ember.quantized_max_pool3d
    Tensor.int_repr Tensor.q_per_channel_axis Tensor.q_per_channel_scales
    Tensor.q_per_channel_zero_points Tensor.q_scale Tensor.q_zero_point Tensor.qscheme
    """,
    "a device this machine lacks": "Tensor.cuda Tensor.ipu Tensor.mtia Tensor.xpu",
    "ember has no complex32 dtype (raises for any input)": "Tensor.chalf",
    "removed from torch (raises for any input, as torch does)": (
        "Tensor.eig Tensor.symeig Tensor.solve Tensor.lstsq ember.eig ember.symeig ember.solve "
        "ember.lstsq ember.matrix_rank"
    ),
    "the names API needs named dims by definition (its rules: test_names_api.py)": (
        "Tensor.align_to Tensor.align_as"
    ),
    "says whether names are present: differs by design (test_names_api.py)": "Tensor.has_names",
    "a storage address (differs between any two tensors)": "Tensor.data_ptr Tensor.const_data_ptr",
    "storage, memory or hook plumbing (no result to name)": """
    Tensor.pin_memory Tensor.share_memory_ Tensor.record_stream Tensor.storage
    Tensor.untyped_storage Tensor.storage_type Tensor.set_ Tensor.register_hook
    Tensor.register_post_accumulate_grad_hook Tensor.requires_grad_ Tensor.retain_grad
    Tensor.reinforce
    """,
    "the sweep's own gradient check (d) calls it": "Tensor.backward",
    "a __torch_function__ protocol helper (answers a bool or dispatches; nothing to name)": (
        "F.handle_torch_function F.has_torch_function F.has_torch_function_unary "
        "F.has_torch_function_variadic"
    ),
    "returns a DLPack capsule (no tensor: names do not travel through DLPack)": "ember.to_dlpack",
}


def _mods(names: str, pattern: str, make) -> dict:
    """Rows for nn modules: ``make(cls)`` builds the layer (under the row's seed), then it runs."""
    return {f"nn.{n}": (pattern, lambda cls, *xs, make=make: make(cls)(*xs)) for n in names.split()}


def _dist(d):
    """A distribution's (sample, log_prob of it): rsample where it has one."""
    s = d.rsample() if d.has_rsample else d.sample()
    return s, d.log_prob(s.detach())


def _dists(names: str, pattern: str, make=None) -> dict:
    make = make or (lambda cls, *xs: cls(*xs))
    return {
        f"distributions.{n}": (pattern, lambda cls, *xs, make=make: _dist(make(cls, *xs)))
        for n in names.split()
    }


_PLAIN = lambda cls: cls()
_NONE = lambda cls: cls(reduction="none")
_PAD = lambda cls: cls(1)
_LOSSES = """BCELoss BCEWithLogitsLoss HuberLoss KLDivLoss L1Loss MSELoss MultiLabelSoftMarginLoss
    PoissonNLLLoss SmoothL1Loss"""
MODULES = {
    **_mods(
        "CELU ELU GELU Hardshrink Hardsigmoid Hardswish Hardtanh Identity LeakyReLU LogSigmoid "
        "Mish ReLU ReLU6 RReLU SELU SiLU Sigmoid Softplus Softshrink Softsign Tanh Tanhshrink "
        "AlphaDropout Dropout Dropout2d FeatureAlphaDropout Softmax2d PReLU Flatten",
        "x4",
        _PLAIN,
    ),
    **_mods("Softmax LogSoftmax Softmin", "x4", lambda cls: cls(dim=1)),
    "nn.Threshold": ("x4", lambda cls, x: cls(0.5, 0.0)(x)),
    **_mods("GLU Dropout1d", "x3", _PLAIN),
    "nn.Dropout3d": ("x5", lambda cls, x: cls()(x)),
    **_mods("AdaptiveAvgPool1d AdaptiveMaxPool1d AvgPool1d MaxPool1d", "x3", lambda cls: cls(2)),
    **_mods("AdaptiveAvgPool2d AdaptiveMaxPool2d AvgPool2d MaxPool2d", "x4", lambda cls: cls(2)),
    **_mods("AdaptiveAvgPool3d AdaptiveMaxPool3d AvgPool3d MaxPool3d", "x5", lambda cls: cls(2)),
    "nn.LPPool1d": ("x3", lambda cls, x: cls(2, 2)(x)),
    "nn.LPPool2d": ("x4", lambda cls, x: cls(2, 2)(x)),
    "nn.LPPool3d": ("x5", lambda cls, x: cls(2, 2)(x)),
    **_mods("FractionalMaxPool2d", "x4", lambda cls: cls(2, output_size=2)),
    **_mods("FractionalMaxPool3d", "x5", lambda cls: cls(2, output_size=2)),
    "nn.MaxUnpool1d": ("x3", lambda cls, x: cls(2)(*F.max_pool1d(x, 2, return_indices=True))),
    "nn.MaxUnpool2d": (
        "x4",
        lambda cls, x: cls(2)(*F.max_pool2d(x, 2, return_indices=True), output_size=x.shape[2:]),
    ),
    "nn.MaxUnpool3d": (
        "x5",
        lambda cls, x: cls(2)(*F.max_pool3d(x, 2, return_indices=True), output_size=x.shape[2:]),
    ),
    **_mods("CircularPad1d ReflectionPad1d ReplicationPad1d ZeroPad1d", "x3", _PAD),
    **_mods("CircularPad2d ReflectionPad2d ReplicationPad2d ZeroPad2d", "x4", _PAD),
    **_mods("CircularPad3d ReflectionPad3d ReplicationPad3d ZeroPad3d", "x5", _PAD),
    "nn.ConstantPad1d": ("x3", lambda cls, x: cls(1, 0.5)(x)),
    "nn.ConstantPad2d": ("x4", lambda cls, x: cls(1, 0.5)(x)),
    "nn.ConstantPad3d": ("x5", lambda cls, x: cls(1, 0.5)(x)),
    **_mods("BatchNorm1d InstanceNorm1d", "x3", lambda cls: cls(3)),
    **_mods("BatchNorm2d InstanceNorm2d", "x4", lambda cls: cls(3)),
    **_mods("BatchNorm3d InstanceNorm3d", "x5", lambda cls: cls(3)),
    **_mods("LazyBatchNorm1d LazyInstanceNorm1d", "x3", _PLAIN),
    **_mods("LazyBatchNorm2d LazyInstanceNorm2d", "x4", _PLAIN),
    **_mods("LazyBatchNorm3d LazyInstanceNorm3d", "x5", _PLAIN),
    "nn.GroupNorm": ("x4", lambda cls, x: cls(1, 3)(x)),
    **_mods("LayerNorm RMSNorm", "x4", lambda cls: cls(5)),
    **_mods("LocalResponseNorm CrossMapLRN2d", "x4", lambda cls: cls(3)),
    **_mods("Conv1d ConvTranspose1d", "x3", lambda cls: cls(3, 4, 2)),
    **_mods("Conv2d ConvTranspose2d", "x4", lambda cls: cls(3, 4, 2)),
    **_mods("Conv3d ConvTranspose3d", "x5", lambda cls: cls(3, 4, 2)),
    **_mods("LazyConv1d LazyConvTranspose1d", "x3", lambda cls: cls(4, 2)),
    **_mods("LazyConv2d LazyConvTranspose2d", "x4", lambda cls: cls(4, 2)),
    **_mods("LazyConv3d LazyConvTranspose3d", "x5", lambda cls: cls(4, 2)),
    **_mods("Linear NonDynamicallyQuantizableLinear", "x", lambda cls: cls(3, 4)),
    "nn.LazyLinear": ("x", lambda cls, x: cls(4)(x)),
    "nn.Bilinear": ("x y", lambda cls, x, y: cls(3, 3, 4)(x, y)),
    "nn.Sequential": ("x", lambda cls, x: cls(ember.nn.Linear(3, 4), ember.nn.ReLU())(x)),
    "nn.DataParallel": ("x", lambda cls, x: cls(ember.nn.Linear(3, 4))(x)),
    **_mods("Embedding EmbeddingBag", "idx", lambda cls: cls(4, 5)),
    "nn.Unflatten": ("x3", lambda cls, x: cls(2, (2, 2))(x)),
    "nn.Fold": ("x3f", lambda cls, x: cls((3, 3), 2)(x)),
    "nn.Unfold": ("x4", lambda cls, x: cls(2)(x)),
    **_mods("PixelShuffle PixelUnshuffle ChannelShuffle", "px", lambda cls: cls(2)),
    **_mods(
        "Upsample UpsamplingBilinear2d UpsamplingNearest2d", "x4", lambda cls: cls(scale_factor=2)
    ),
    **_mods("CosineSimilarity PairwiseDistance", "x y", _PLAIN),
    **_mods("RNN LSTM GRU", "x3", lambda cls: cls(4, 5)),
    **_mods("RNNCell LSTMCell GRUCell", "x", lambda cls: cls(3, 4)),
    "nn.MultiheadAttention": ("seq", lambda cls, q: cls(4, 2)(q, q, q)),
    "nn.TransformerEncoderLayer": ("seq", lambda cls, q: cls(4, 2, 8, 0.0)(q)),
    "nn.TransformerDecoderLayer": ("seq", lambda cls, q: cls(4, 2, 8, 0.0)(q, q)),
    "nn.TransformerEncoder": (
        "seq",
        lambda cls, q: cls(ember.nn.TransformerEncoderLayer(4, 2, 8, 0.0), 1)(q),
    ),
    "nn.TransformerDecoder": (
        "seq",
        lambda cls, q: cls(ember.nn.TransformerDecoderLayer(4, 2, 8, 0.0), 1)(q, q),
    ),
    "nn.Transformer": ("seq", lambda cls, q: cls(4, 2, 1, 1, 8, 0.0)(q, q)),
    "nn.AdaptiveLogSoftmaxWithLoss": ("x tn", lambda cls, x, t: cls(3, 6, [2, 4])(x, t)),
    "nn.LinearCrossEntropyLoss": ("x tn", lambda cls, x, t: cls(3, 4, reduction="none")(x, t)),
    # losses: reduction='none' keeps the batch names (spec 4.3)
    **_mods(_LOSSES, "x y", _NONE),
    **_mods("CrossEntropyLoss NLLLoss MultiMarginLoss", "x tn", _NONE),
    "nn.NLLLoss2d": ("x4 t45", lambda cls, x, t: cls(reduction="none")(x, t)),
    "nn.MultiLabelMarginLoss": ("x ix", lambda cls, x, t: cls(reduction="none")(x, t)),
    **_mods("HingeEmbeddingLoss", "x sg2", _NONE),
    "nn.SoftMarginLoss": ("x sg2", lambda cls, x, t: cls(reduction="none")(x, t.detach())),
    "nn.CosineEmbeddingLoss": ("x y sgn", lambda cls, *xs: cls(reduction="none")(*xs)),
    "nn.MarginRankingLoss": ("n n sgn", lambda cls, *xs: cls(reduction="none")(*xs)),
    **_mods("GaussianNLLLoss TripletMarginLoss TripletMarginWithDistanceLoss", "x y z", _NONE),
    "nn.CTCLoss": ("lp ctgt", lambda cls, lp, t: cls(reduction="none")(lp, t, [4, 4], [2, 2])),
}
DISTRIBUTIONS = {
    **_dists(
        "Normal LogNormal Laplace Cauchy Gumbel Gamma Beta InverseGamma Kumaraswamy Pareto "
        "Weibull FisherSnedecor VonMises LogisticNormal",
        "x y",
    ),
    **_dists("Exponential Chi2 HalfNormal HalfCauchy Poisson Dirichlet", "x"),
    **_dists("StudentT GeneralizedPareto", "x y z"),
    "distributions.Uniform": ("x y", lambda cls, a, b: _dist(cls(a, a + b))),
    **_dists(
        "Bernoulli ContinuousBernoulli Geometric Categorical OneHotCategorical "
        "OneHotCategoricalStraightThrough",
        "x",
        lambda cls, p: cls(probs=p),
    ),
    **_dists("Binomial NegativeBinomial Multinomial", "x", lambda cls, p: cls(2, probs=p)),
    **_dists("RelaxedBernoulli RelaxedOneHotCategorical", "x", lambda cls, p: cls(0.5, probs=p)),
}
EXPLICIT.update(MODULES)
EXPLICIT.update(DISTRIBUTIONS)
_SKIPPED.update(
    {
        "a base class or a container with no computation of its own": """
    nn.Module nn.Container nn.ModuleDict nn.ModuleList nn.ParameterDict nn.ParameterList
    nn.RNNBase nn.RNNCellBase distributions.Distribution distributions.ExponentialFamily
    """,
        "needs a process group (torch raises on cpu too)": "nn.SyncBatchNorm",
        "wraps another distribution (the rows of its base cover the computation)": """
    distributions.Independent distributions.MixtureSameFamily distributions.TransformedDistribution
    """,
        "a matrix-valued parameter (covariance, Cholesky factor): no table input fits yet": """
    distributions.MultivariateNormal distributions.LowRankMultivariateNormal distributions.Wishart
    distributions.LKJCholesky
    """,
    }
)
SKIP = {k: why for why, keys in _SKIPPED.items() for k in keys.split()}
# layers that keep a dim's role while changing its length: pooling, padding, resampling, the
# features/channels a layer maps, a recurrent layer's hidden features (spec 4.3)
_RESIZING_MODULES = """
    GLU AdaptiveAvgPool1d AdaptiveMaxPool1d AvgPool1d MaxPool1d AdaptiveAvgPool2d
    AdaptiveMaxPool2d AvgPool2d MaxPool2d AdaptiveAvgPool3d AdaptiveMaxPool3d AvgPool3d MaxPool3d
    LPPool1d LPPool2d LPPool3d FractionalMaxPool2d FractionalMaxPool3d CircularPad1d
    ReflectionPad1d ReplicationPad1d ZeroPad1d CircularPad2d ReflectionPad2d ReplicationPad2d
    ZeroPad2d CircularPad3d ReflectionPad3d ReplicationPad3d ZeroPad3d ConstantPad1d
    ConstantPad2d ConstantPad3d Conv1d ConvTranspose1d Conv2d ConvTranspose2d Conv3d
    ConvTranspose3d LazyConv1d LazyConvTranspose1d LazyConv2d LazyConvTranspose2d LazyConv3d
    LazyConvTranspose3d Linear NonDynamicallyQuantizableLinear LazyLinear Sequential DataParallel
    PixelShuffle PixelUnshuffle Upsample UpsamplingBilinear2d UpsamplingNearest2d RNN LSTM GRU
    RNNCell LSTMCell GRUCell
"""


def _words(text: str) -> list:
    return text.split()


_MATRIX = (
    "core/ops/decompositions.py: batch dims keep their names, a result's matrix dims are unnamed"
)
_UNNAMED_KIND = "a result kind that carries no names (sparse, quantized, numpy)"
# result names that differ from the fallback by a family's own, documented rule
OWN_RULE = {
    **dict.fromkeys(
        _words("""
    ember.cholesky ember.cholesky_inverse ember.cholesky_solve ember.inverse ember.matrix_exp
    ember.geqrf ember.lu ember.lu_solve ember.lu_unpack ember.ormqr ember.qr
    ember.triangular_solve Tensor.cholesky Tensor.cholesky_inverse Tensor.cholesky_solve
    Tensor.inverse Tensor.matrix_exp Tensor.geqrf Tensor.lu Tensor.lu_solve Tensor.ormqr
    Tensor.qr Tensor.triangular_solve linalg.cholesky linalg.cholesky_ex linalg.eig linalg.eigh
    linalg.inv linalg.inv_ex linalg.ldl_factor linalg.ldl_factor_ex linalg.lu linalg.lu_factor
    linalg.lu_factor_ex linalg.matrix_exp linalg.qr
    """),
        _MATRIX,
    ),
    **dict.fromkeys(
        _words("""
    Tensor.to_sparse Tensor.to_sparse_bsc Tensor.to_sparse_bsr Tensor.to_sparse_coo
    Tensor.to_sparse_csc Tensor.to_sparse_csr ember.quantize_per_channel
    ember.quantize_per_tensor ember.quantize_per_tensor_dynamic Tensor.numpy
    """),
        _UNNAMED_KIND,
    ),
    "Tensor.new_tensor": "a factory (data copied into a new tensor, like ember.tensor)",
    "ember.segment_reduce": "the segment dim is a new dim (unnamed), the others keep their names "
    "(core/ops/misc.py)",
    "Tensor.rename": "the names API sets names (test_names_api.py)",
    "Tensor.rename_": "the names API sets names (test_names_api.py)",
    **dict.fromkeys(
        ("distributions.OneHotCategorical", "distributions.Multinomial"),
        "drawn through multinomial and one_hot, whose other-shaped results are unnamed (the "
        "fallback): step by step, the names drop",
    ),
}
# rows that keep a dim's role (its name) while changing its length: slicing, joining, pooling,
# resampling, and the dims a layer transforms (spec 4.3)
RESIZES = set(
    _words("""
    F.adaptive_avg_pool2d F.adaptive_avg_pool3d F.adaptive_max_pool2d
    F.adaptive_max_pool2d_with_indices F.adaptive_max_pool3d F.adaptive_max_pool3d_with_indices
    F.avg_pool2d F.avg_pool3d F.max_pool2d F.max_pool2d_with_indices F.max_pool3d
    F.max_pool3d_with_indices ember.max_pool2d ember.max_pool3d F.fractional_max_pool2d
    F.fractional_max_pool2d_with_indices F.fractional_max_pool3d
    F.fractional_max_pool3d_with_indices F.lp_pool2d F.lp_pool3d F.interpolate F.upsample
    F.upsample_bilinear F.upsample_nearest F.pad F.glu F.linear
    F.conv1d F.conv2d F.conv3d F.conv_transpose1d F.conv_transpose2d F.conv_transpose3d
    ember.conv1d ember.conv2d ember.conv3d ember.conv_transpose1d ember.conv_transpose2d
    ember.conv_transpose3d ember.convolution ember.conv_tbc F.conv_tbc
    ember.diff Tensor.diff ember.cumulative_trapezoid ember.dsplit Tensor.dsplit ember.narrow
    ember.narrow_copy Tensor.narrow Tensor.narrow_copy ember.index_select Tensor.index_select
    ember.split_with_sizes ember.split_with_sizes_copy ember.unsafe_split_with_sizes
    Tensor.split_with_sizes Tensor.unsafe_split_with_sizes
    ember.cat ember.concat ember.concatenate fft.cat ember.column_stack ember.hstack ember.vstack
    ember.row_stack distributions.LogisticNormal Tensor.__getitem__
""")
) | {f"nn.{n}" for n in _words(_RESIZING_MODULES)}
# rows whose backward fails unnamed too (so (d) has nothing to compare), with the reason
NO_BACKWARD = {
    **dict.fromkeys(
        _words("""
        ember.igamma ember.igammac Tensor.igamma Tensor.igamma_ Tensor.igammac Tensor.igammac_
        special.gammainc special.gammaincc special.zeta linalg.ldl_factor linalg.ldl_factor_ex
        linalg.ldl_solve ember.geqrf Tensor.geqrf ember.binomial ember.heaviside Tensor.heaviside
        Tensor.heaviside_ ember.floor_divide Tensor.floor_divide Tensor.floor_divide_
        Tensor.__rfloordiv__
        """),
        "no derivative (torch has none either)",
    ),
    "linalg.eig": "a random upstream gradient of the eigenvectors depends on their free phases: "
    "torch's backward refuses it",
    **dict.fromkeys(
        _words("""
        Tensor.apply_ Tensor.map_ Tensor.map2_ Tensor.numpy Tensor.resize_ Tensor.resize_as_
        ember.resize_as_
        """),
        "refuses a tensor that requires grad, as torch does",
    ),
    **dict.fromkeys(
        _words("""
        Tensor.to_sparse Tensor.to_sparse_bsc Tensor.to_sparse_bsr Tensor.to_sparse_coo
        Tensor.to_sparse_csc Tensor.to_sparse_csr ember.sparse_coo_tensor
        """),
        "a sparse result: backward from it needs .to_dense() first",
    ),
    "Tensor.__deepcopy__": "the gradient run passes non-leaf copies; deepcopy refuses those",
}
# violations found and not fixed yet (an xfail that must keep failing)
KNOWN: dict[str, str] = {}


# ====================================================================== the sweep
def _rows() -> dict:
    rows = {}
    for pattern, keys in GENERIC.items():
        for key in keys.split():
            rows[key] = (pattern, None)
    rows.update(EXPLICIT)
    return rows


ROWS = _rows()


def _leaves(out):
    """The tensors and plain values of a result (tuples, lists, named tuples: flattened)."""
    if isinstance(out, (tuple, list)):
        return [v for o in out for v in _leaves(o)]
    return [out]


def _values(t):
    if t.layout is not ember.strided:
        t = t.to_dense()
    if t.is_quantized:
        t = t.dequantize()
    t = t.detach()
    return (t.float() if t.dtype == ember.bfloat16 else t).numpy()  # (numpy() refuses bf16)


def _call(key, named, grad):
    """Run a row: (the tensor inputs' (names, shape) before the call, the result, the warnings,
    the leaves needing gradients)."""
    pattern, how = ROWS[key]
    args = [
        _tensor(a, named, grad, seed=k) if isinstance(a, str) else a
        for k, a in enumerate(_parse(pattern))
    ]
    leaves = [a for a in args if isinstance(a, ember.Tensor) and a.requires_grad]
    if grad:  # run on copies, so in-place methods are allowed; the leaves collect gradients
        args = [a.clone() if isinstance(a, ember.Tensor) and a.requires_grad else a for a in args]
    # taken before the call: an in-place method may rename its input
    before = [(t.names, tuple(t.shape)) for t in args if isinstance(t, ember.Tensor)]
    fn = _resolve(key)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ember.manual_seed(0)
        out = fn(*args) if how is None else how(fn, *args)
    return before, out, [str(w.message) for w in caught], leaves


def _clean(names):
    return None if names is None or all(n is None for n in names) else tuple(names)


def _names_problem(key, ins, res) -> str | None:
    """Why ``res``'s names break rule 4.2 (None when they are the fallback's or plausible);
    ``ins``: the inputs' (names, shape)."""
    src_names, src_shape = next((n, s) for n, s in ins if _clean(n) is not None)
    got = _clean(res.names) if res.ndim else None
    fallback = _clean(src_names) if tuple(res.shape) == src_shape else None
    if got == fallback or key in OWN_RULE:
        return None
    if got is None:
        return f"result {tuple(res.shape)} is unnamed; the fallback keeps {fallback}"
    sizes = {n: s for names, shape in ins for n, s in zip(names, shape) if n is not None}
    for n, s in zip(got, res.shape):
        if n is None:
            continue
        if n not in sizes:
            return f"result names {got}: {n!r} names no input dim"
        if s not in (sizes[n], 1) and key not in RESIZES:
            return f"result names {got} {tuple(res.shape)}: {n!r} sits on a dim of size {s}"
    return None


def _forward_problems(key) -> list:
    _, plain, plain_warns, _ = _call(key, named=False, grad=False)
    try:
        before, out, warns, _ = _call(key, named=True, grad=False)
    except Exception as e:  # noqa: BLE001  (a): the unnamed call ran, so any error is a refusal
        return [f"raises on named inputs: {type(e).__name__}: {e}"]
    problems = []
    if len(warns) > len(plain_warns):
        problems.append(f"warns on named inputs: {warns[-1]}")
    a, b = _leaves(plain), _leaves(out)
    if len(a) != len(b):
        return [*problems, f"{len(b)} results named, {len(a)} unnamed"]
    for k, (u, n) in enumerate(zip(a, b)):
        if not isinstance(n, ember.Tensor):
            if isinstance(u, (bool, int, float, str, tuple, ember.dtype, type(None))) and u != n:
                problems.append(f"result {k}: {n!r} named, {u!r} unnamed")
            continue
        np.testing.assert_allclose(_values(n), _values(u), equal_nan=True, err_msg=key)
        why = _names_problem(key, before, n)
        if why:
            problems.append(f"result {k}: {why}")
    return problems


def _backward(key, named):
    """Backward of a row with a fixed non-uniform upstream gradient: the leaves, or None when the
    row has no differentiable result."""
    _, out, _, leaves = _call(key, named, grad=True)
    outs = [o for o in _leaves(out) if isinstance(o, ember.Tensor) and o.requires_grad]
    if not leaves or not outs:
        return None
    r = np.random.default_rng(7)
    ups = []
    for o in outs:
        u = r.uniform(0.5, 1.5, tuple(o.shape))
        if o.is_complex():
            u = u + 1j * r.uniform(0.5, 1.5, tuple(o.shape))
        ups.append(ember.tensor(u.astype(_values(o).dtype)))
    ember.autograd.backward(outs, ups)
    return leaves


@pytest.mark.parametrize("key", sorted(ROWS))
def test_named_call(key):
    problems = _forward_problems(key)  # (a), (b), (c)
    if key in KNOWN:
        assert problems, f"{key} passes now: delete it from KNOWN"
        pytest.xfail(KNOWN[key])
    assert problems == []
    if key in NO_BACKWARD:  # the reason must stay true: the unnamed backward fails too
        with pytest.raises((RuntimeError, NotImplementedError)):
            _backward(key, named=False)
        return
    plain = _backward(key, named=False)  # (d)
    if plain is None:
        return
    named = _backward(key, named=True)
    for p, n in zip(plain, named):
        assert (n.grad is None) == (p.grad is None), f"{key}: gradient given only one way"
        if n.grad is None:
            continue
        assert n.grad.names == n.names, f"{key}: grad names {n.grad.names} != {n.names}"
        np.testing.assert_allclose(_values(n.grad), _values(p.grad), rtol=1e-5, err_msg=key)


def _public() -> set:
    keys = set()
    for ns, mod in _NAMESPACES.items():
        for n in dir(mod):
            obj = getattr(mod, n)
            if not n.startswith("_") and callable(obj) and not inspect.isclass(obj):
                keys.add(f"{ns}.{n}")
    for n in dir(ember.Tensor):
        if n.startswith("_") or isinstance(inspect.getattr_static(ember.Tensor, n), property):
            continue
        if callable(getattr(ember.Tensor, n, None)):
            keys.add(f"Tensor.{n}")
    for ns, (mod, base) in _CLASSES.items():
        for n in dir(mod):
            obj = getattr(mod, n)
            if not n.startswith("_") and inspect.isclass(obj) and issubclass(obj, base):
                keys.add(f"{ns}.{n}")
    return keys


def test_every_public_callable_is_swept_or_skipped():
    # the tables stay honest: a new callable needs a row (or a reason to skip), a gone one leaves
    public = _public()
    missing = sorted(public - set(ROWS) - set(SKIP))
    assert not missing, f"public callables with no sweep row and no SKIP reason: {missing}"
    dunders = {k for k in ROWS if k.split(".", 1)[1].startswith("__")}  # not enumerated
    assert sorted((set(ROWS) | set(SKIP)) - public - dunders) == []
    assert sorted(set(ROWS) & set(SKIP)) == []
    assert sorted((set(KNOWN) | set(NO_BACKWARD)) - set(ROWS)) == []


# ====================================================================== fixes the sweep led to
try:
    import torch
except ImportError:  # the sweep runs without the oracle; these parity checks skip
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch (the oracle) is not installed")


def _t64(shape, names=None, seed=0, grad=False):
    a = np.random.default_rng(seed).uniform(0.1, 0.9, shape)
    return ember.tensor(a, names=names, requires_grad=grad), torch.tensor(a, requires_grad=grad)


@needs_torch
def test_combinations_result_dims_are_created():
    # 4.2: the rows (one per combination) and the columns are new dims: unnamed, not the input's
    e, t = _t64((4,), ("W",), grad=True)
    r = ember.combinations(e, 2)
    want = torch.combinations(t, 2)
    assert r.names == (None, None) and tuple(r.shape) == (6, 2)
    np.testing.assert_allclose(r.detach().numpy(), want.detach().numpy())
    up = np.random.default_rng(1).uniform(0.5, 1.5, (6, 2))
    r.backward(ember.tensor(up))
    want.backward(torch.tensor(up))
    assert e.grad.names == ("W",)
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy())
    assert ember.autograd.gradcheck(lambda x: ember.combinations(x, 3), [e])


@needs_torch
def test_unravel_index_coordinates_keep_the_indices_names():
    idx = np.array([[0, 5], [4, 2]])
    r = ember.unravel_index(ember.tensor(idx, names=("N", "K")), (2, 3))
    want = torch.unravel_index(torch.tensor(idx), (2, 3))
    for a, b in zip(r, want, strict=True):
        assert a.names == ("N", "K")
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@needs_torch
def test_ormqr_differentiates_named_inputs():
    # the reflector products used for the gradient ran on the names and met duplicate names
    a, ta = _t64((3, 3), ("A", "B"), seed=2, grad=True)
    tau, ttau = _t64((3,), None, seed=3, grad=True)
    c, tc = _t64((3, 2), ("A", "K"), seed=4, grad=True)
    r = ember.ormqr(a, tau, c)
    want = torch.ormqr(ta, ttau, tc)
    np.testing.assert_allclose(r.detach().numpy(), want.detach().numpy(), rtol=1e-10)
    assert r.names == ember.ormqr(a.detach(), tau.detach(), c.detach()).names
    up = np.random.default_rng(5).uniform(0.5, 1.5, (3, 2))
    r.backward(ember.tensor(up))
    want.backward(torch.tensor(up))
    for e, t in ((a, ta), (tau, ttau), (c, tc)):
        assert e.grad.names == e.names
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-8, atol=1e-12)
    assert ember.autograd.gradcheck(ember.ormqr, [a, tau, c])


@pytest.mark.parametrize("make", [
    lambda a: ember.distributions.Chi2(a),
    lambda a: ember.distributions.Dirichlet(a),
    lambda a: ember.distributions.Beta(a, a.detach() + 1),
    lambda a: ember.distributions.Gamma(a, 2.0),
], ids=["Chi2", "Dirichlet", "Beta", "Gamma"])  # fmt: skip
def test_gamma_draws_keep_the_parameters_names(make):
    # the Gamma sampler (behind Chi2, Dirichlet, Beta) drew one value per element, unnamed
    a = ember.tensor(np.random.default_rng(6).uniform(0.5, 2.0, (2, 3)), names=("N", "C"))
    a.requires_grad_(True)
    ember.manual_seed(0)
    s = make(a).rsample()
    assert s.names == ("N", "C")
    ember.manual_seed(0)
    plain = make(a.detach().rename(None).requires_grad_(True)).rsample()
    np.testing.assert_array_equal(s.detach().numpy(), plain.detach().numpy())
    s.sum().backward()
    assert a.grad.names == ("N", "C")


_X2 = np.random.default_rng(9).uniform(-1, 1, (2, 3))
_SIGNS = np.array([1.0, -1.0])


@needs_torch
@pytest.mark.parametrize("loss, others", [
    ("multi_margin_loss", [np.array([0, 2])]),
    ("multilabel_margin_loss", [np.array([[0, 2, -1], [1, -1, 0]])]),
    ("multilabel_soft_margin_loss", [np.array([[0.0, 1, 1], [1, 0, 0]])]),
    ("cosine_embedding_loss", [_X2, _SIGNS]),
    ("triplet_margin_loss", [_X2, _X2[::-1].copy()]),
    ("triplet_margin_with_distance_loss", [_X2, _X2[::-1].copy()]),
], ids=lambda v: v if isinstance(v, str) else "")  # fmt: skip
def test_losses_unify_the_batch_names_of_every_argument(loss, others):
    # 4.3: a per-sample loss (reduction='none') unifies the target's (and the other inputs')
    # names with the input's; these losses read only the input's names
    x = np.random.default_rng(8).uniform(-1, 1, (2, 3))
    named = [ember.tensor(a, names=("N",) + (None,) * (a.ndim - 1)) for a in others]
    e = getattr(F, loss)(ember.tensor(x), *named, reduction="none")
    want = getattr(torch.nn.functional, loss)(
        torch.tensor(x), *[torch.tensor(a) for a in others], reduction="none"
    )
    assert e.names == ("N",)
    np.testing.assert_allclose(e.numpy(), want.numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="dim 'M' and dim 'N' are at the same position"):
        getattr(F, loss)(ember.tensor(x, names=("M", "C")), *named, reduction="none")


@needs_torch
def test_adaptive_log_softmax_unifies_the_target_batch_name():
    from nn_harness import copy_state

    torch.manual_seed(0)
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(3, 6, [2, 4])
    em = ember.nn.AdaptiveLogSoftmaxWithLoss(3, 6, [2, 4])
    copy_state(tm, em)
    x, target = np.random.default_rng(10).uniform(-1, 1, (2, 3)), np.array([0, 4])
    e = em(ember.tensor(x, dtype=ember.float32), ember.tensor(target, names=("N",)))
    want = tm(torch.tensor(x, dtype=torch.float32), torch.tensor(target))
    assert e.output.names == ("N",)
    np.testing.assert_allclose(e.output.detach().numpy(), want.output.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(e.loss.item(), want.loss.item(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="dim 'M' and dim 'N' are at the same position"):
        em(
            ember.tensor(x, names=("M", "C"), dtype=ember.float32),
            ember.tensor(target, names=("N",)),
        )
