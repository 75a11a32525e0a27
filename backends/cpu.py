"""torch.backends.cpu: the cpu's SIMD capability as far as numpy reports it."""

from ..core.runtime import cpu_features

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """ "AVX512", "AVX2" or "DEFAULT", from the features numpy's dispatcher found."""
    f = cpu_features()
    if f.get("AVX512F"):
        return "AVX512"
    if f.get("AVX2"):
        return "AVX2"
    return "DEFAULT"
