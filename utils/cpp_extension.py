"""ember.utils.cpp_extension (torch.utils.cpp_extension): building C++/CUDA extensions.

ember is pure Python (numpy kernels on cpu, cupy on cuda): it has no libtorch and no C++ tensor
ABI for an extension to compile and link against. Every builder therefore raises a
NotImplementedError that says so, as soon as it is called (before any compiler runs), and the
toolkit locations a setup script probes are None, as on a machine without CUDA or ROCm.
"""

from __future__ import annotations

from typing import Any, NoReturn

from ..dropin import unsupported

__all__ = [
    "CUDA_HOME",
    "ROCM_HOME",
    "BuildExtension",
    "CUDAExtension",
    "CppExtension",
    "load",
    "load_inline",
]

CUDA_HOME: str | None = None
ROCM_HOME: str | None = None

_WHY = "ember has no C++ ABI to build extensions against; write the op in Python on ember tensors"


def _refuse(api: str) -> NoReturn:
    raise unsupported(f"torch.utils.cpp_extension.{api}", _WHY)


def load(name: str, sources: Any, *args: Any, **kwargs: Any) -> NoReturn:
    """JIT-compile and import a C++/CUDA extension: not possible with ember (raises)."""
    _refuse("load")


def load_inline(name: str, cpp_sources: Any, *args: Any, **kwargs: Any) -> NoReturn:
    """JIT-compile inline C++/CUDA source: not possible with ember (raises)."""
    _refuse("load_inline")


def CppExtension(name: str, sources: Any, *args: Any, **kwargs: Any) -> NoReturn:
    """A setuptools Extension for a C++ extension: not possible with ember (raises)."""
    _refuse("CppExtension")


def CUDAExtension(name: str, sources: Any, *args: Any, **kwargs: Any) -> NoReturn:
    """A setuptools Extension for a CUDA extension: not possible with ember (raises)."""
    _refuse("CUDAExtension")


class BuildExtension:
    """setuptools' ``build_ext`` command for extensions: not possible with ember (raises)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _refuse("BuildExtension")

    @classmethod
    def with_options(cls, **options: Any) -> NoReturn:
        """``BuildExtension`` with options bound: not possible with ember (raises)."""
        _refuse("BuildExtension")
