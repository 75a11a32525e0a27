"""torch.backends.cpu: the cpu's SIMD capability as far as numpy reports it."""

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """ "AVX512", "AVX2" or "DEFAULT", from the features numpy's dispatcher found."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as f
    except ImportError:  # numpy < 2
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as f
        except ImportError:
            return "DEFAULT"
    if f.get("AVX512F"):
        return "AVX512"
    if f.get("AVX2"):
        return "AVX2"
    return "DEFAULT"
