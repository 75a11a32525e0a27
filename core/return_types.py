"""``ember.return_types``: the named tuples that multi-output ops return (like torch.return_types)."""

from __future__ import annotations

import collections

from .dtype import DISPLAY


class _ReturnType(tuple):
    """Base of the (values, indices)-style results, printed like torch.return_types."""

    __slots__ = ()

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"{DISPLAY[0]}.return_types.{type(self).__name__}(\n{body})"


def _return_type(name: str, fields: tuple = ("values", "indices")):
    base = collections.namedtuple(name, fields)
    cls = type(name, (_ReturnType, base), {"__slots__": (), "__repr__": _ReturnType.__repr__})
    cls.__module__ = "ember.return_types"
    return cls


class _ReturnTypes:
    """The named tuple classes, as attributes (``ember.return_types.max``)."""

    max = _return_type("max")
    min = _return_type("min")
    median = _return_type("median")
    mode = _return_type("mode")
    aminmax = _return_type("aminmax", ("min", "max"))
    frexp = _return_type("frexp", ("mantissa", "exponent"))
    # linear algebra (core/ops/decompositions.py, core/linalg.py)
    slogdet = _return_type("slogdet", ("sign", "logabsdet"))
    linalg_slogdet = _return_type("linalg_slogdet", ("sign", "logabsdet"))
    linalg_inv_ex = _return_type("linalg_inv_ex", ("inverse", "info"))
    linalg_cholesky_ex = _return_type("linalg_cholesky_ex", ("L", "info"))
    linalg_solve_ex = _return_type("linalg_solve_ex", ("result", "info"))
    linalg_eigh = _return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
    linalg_eig = _return_type("linalg_eig", ("eigenvalues", "eigenvectors"))
    linalg_svd = _return_type("linalg_svd", ("U", "S", "Vh"))
    svd = _return_type("svd", ("U", "S", "V"))
    linalg_qr = _return_type("linalg_qr", ("Q", "R"))
    qr = _return_type("qr", ("Q", "R"))
    linalg_lu_factor = _return_type("linalg_lu_factor", ("LU", "pivots"))
    linalg_lu_factor_ex = _return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
    linalg_lu = _return_type("linalg_lu", ("P", "L", "U"))
    linalg_ldl_factor = _return_type("linalg_ldl_factor", ("LD", "pivots"))
    linalg_ldl_factor_ex = _return_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
    lu_unpack = _return_type("lu_unpack", ("P", "L", "U"))
    _lu_with_info = _return_type("_lu_with_info", ("LU", "pivots", "info"))  # torch.lu's infos
    linalg_lstsq = _return_type(
        "linalg_lstsq", ("solution", "residuals", "rank", "singular_values")
    )
    triangular_solve = _return_type("triangular_solve", ("solution", "cloned_coefficient"))
    sort = _return_type("sort")
    topk = _return_type("topk")
    kthvalue = _return_type("kthvalue")
    nanmedian = _return_type("nanmedian")
    histogram = _return_type("histogram", ("hist", "bin_edges"))
    histogramdd = _return_type("histogramdd", ("hist", "bin_edges"))
    cummax = _return_type("cummax")
    cummin = _return_type("cummin")


return_types = _ReturnTypes()


def out_variant(cls):
    """The named tuple an op's ``out=`` form returns: torch's ``<name>_out`` (same fields, its
    own class: ``torch.max(x, 0, out=(v, i))`` is a ``return_types.max_out``)."""
    name = cls.__name__ + "_out"
    v = _ReturnTypes.__dict__.get(name)
    if v is None:
        v = _return_type(name, cls._fields)
        setattr(_ReturnTypes, name, v)
    return v
