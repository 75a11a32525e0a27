"""Cupy ``ElementwiseKernel`` bodies compiled with the host's C++ compiler (a test harness).

The fused kernels of core/kernels/ are plain C over one index ``i`` of linearly indexed raw
arrays. Each body here becomes ``extern "C" void name(ptrdiff_t n, <params>)``, a loop over
``i < n`` with the signature its ``PARAMS`` entry declares, and is called like cupy's kernel:
its params in order, then ``size=``. The ops' fused drivers run with these on numpy arrays, so
the math and the drivers are checked on every machine; only cupy's compile waits for a GPU.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import numpy as np

CXX = shutil.which("c++") or shutil.which("g++")

_SCALARS = {
    "int64": ("long long", ctypes.c_longlong),
    "int32": ("int", ctypes.c_int),
    "float64": ("double", ctypes.c_double),
}
_ARRAYS = {"int8": "signed char"}
_PRELUDE = "#include <cmath>\n#include <cstddef>\nusing std::sqrt;\nusing std::tanh;\n"


def _params(in_out):
    """[(name, C declaration, ctypes type or None for an array)] of a body's in + out params."""
    out = []
    for decl in ", ".join(in_out).split(", "):
        words = decl.split()
        if words[0] == "raw":
            ctype = "T" if words[1] == "T" else _ARRAYS[words[1]]
            out.append((words[2], f"{ctype}* {words[2]}", None))
        else:
            ctype, cls = _SCALARS[words[0]]
            out.append((words[1], f"{ctype} {words[1]}", cls))
    return out


class HostKernel:
    """A compiled body called like cupy's ElementwiseKernel: its params in order, then
    ``size=``. Raw arrays must be contiguous (the bodies index them linearly)."""

    def __init__(self, fn, params) -> None:
        self.fn, self.params = fn, params

    def __call__(self, *args, size):
        assert len(args) == len(self.params)
        conv = []
        for (name, _decl, cls), a in zip(self.params, args):
            if cls is not None:
                conv.append(cls(a))
            else:
                assert a.flags.c_contiguous, f"{name} is not contiguous"
                conv.append(ctypes.c_void_p(a.ctypes.data))
        self.fn(ctypes.c_ssize_t(size), *conv)


def compile_bodies(bodies: dict, params: dict, workdir) -> dict:
    """{(name, dtype): HostKernel} for every ``name -> body`` and float32/float64 as T;
    ``params[body]`` is the body's (in params, out params) as cupy declares them."""
    out = {}
    for dtype, ctype in ((np.float32, "float"), (np.float64, "double")):
        src = [_PRELUDE, f"typedef {ctype} T;\n"]
        for name, body in bodies.items():
            sig = ", ".join(d for _n, d, _c in _params(params[body]))
            src.append(
                f'extern "C" void {name}(ptrdiff_t n, {sig}) {{\n'
                f"    for (ptrdiff_t i = 0; i < n; i++) {{ {body} }}\n}}\n"
            )
        d = workdir / ctype
        d.mkdir(exist_ok=True)
        (d / "kernels.cpp").write_text("".join(src))
        lib = d / "kernels.so"
        cmd = [CXX, "-O1", "-shared", "-fPIC", "-o", str(lib), str(d / "kernels.cpp")]
        subprocess.run(cmd, check=True)
        so = ctypes.CDLL(str(lib))
        for name, body in bodies.items():
            out[name, np.dtype(dtype)] = HostKernel(getattr(so, name), _params(params[body]))
    return out


def kernel_sets(bodies: list, params: dict, workdir, build) -> dict:
    """{dtype: build(kernel, ...)}: ``bodies`` compiled for float32 and float64 as T, passed to
    ``build`` in their order (a fused module's kernel class, say)."""
    host = compile_bodies({f"k{n}": b for n, b in enumerate(bodies)}, params, workdir)
    return {
        np.dtype(dt): build(*(host[f"k{n}", np.dtype(dt)] for n in range(len(bodies))))
        for dt in (np.float32, np.float64)
    }


def numpy_kernel_sets(module, cls, tmp_path_factory) -> dict:
    """{dtype: cls(numpy, *kernels)}: every body of a fused module, in its PARAMS order (the
    order its kernel class takes them), host-compiled to run on numpy arrays."""
    workdir = tmp_path_factory.mktemp(module.__name__.rsplit(".", 1)[-1])
    return kernel_sets(list(module.PARAMS), module.PARAMS, workdir, lambda *k: cls(np, *k))
