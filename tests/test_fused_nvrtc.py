"""Every fused kernel body of core/kernels/ compiles with NVRTC (the compiler cupy uses) inside a
cupy-style elementwise wrapper, for float and double, against the installed cupy's headers.

Runs wherever cupy and its NVRTC library are installed, GPU or not (compiling to PTX needs no
device): on a machine without a GPU it is the closest check of the kernel text to cupy's own
compile; on a GPU the layers' real-cuda rows then run the kernels."""

from __future__ import annotations

import os

import pytest
from ember.core.kernels.launch import fused_modules

cupy = pytest.importorskip("cupy", reason="cupy is not installed")
try:
    from cupy_backends.cuda.libs import nvrtc

    nvrtc.getVersion()
except Exception:  # noqa: BLE001 - no NVRTC library found
    pytest.skip("cupy's NVRTC library is not installed", allow_module_level=True)

MODULES = fused_modules()
_SCALARS = {"int64": "long long", "int32": "int", "float64": "double"}
_ARRAYS = {"T": "T", "int8": "signed char"}


def _source(body, params, ctype: str) -> str:
    """``body`` as cupy's ElementwiseKernel lays it out: raw arrays as CArrays, scalars as
    const parameters, a grid-stride loop over ``i``."""
    decls = []
    for decl in ", ".join(params).split(", "):
        words = decl.split()
        if words[0] == "raw":
            decls.append(f"CArray<{_ARRAYS[words[1]]}, 1, true, true> {words[2]}")
        else:
            decls.append(f"const {_SCALARS[words[0]]} {words[1]}")
    decls.append("CIndexer<1, true> _ind")
    return (
        f"#include <cupy/carray.cuh>\ntypedef {ctype} T;\n"
        f'extern "C" __global__ void kernel({", ".join(decls)}) {{\n'
        f"  CUPY_FOR(i, _ind.size()) {{\n    _ind.set(i);\n{body}\n  }}\n}}\n"
    )


ROWS = [
    (m.__name__.rsplit(".", 1)[-1], n, ctype)
    for m in MODULES
    for n in range(len(m.PARAMS))
    for ctype in ("float", "double")
]


@pytest.mark.parametrize(("module", "index", "ctype"), ROWS)
def test_fused_body_compiles_with_nvrtc(module, index, ctype):
    mod = next(m for m in MODULES if m.__name__.endswith(module))
    body = list(mod.PARAMS)[index]
    include = os.path.join(os.path.dirname(cupy.__file__), "_core", "include")
    options = (
        f"-I{include}",
        f"-I{os.path.join(include, 'cupy', '_cccl', 'libcudacxx', 'include')}",
        "--std=c++17",
        "-arch=compute_90",
    )
    prog = nvrtc.createProgram(_source(body, mod.PARAMS[body], ctype), "kernel.cu", (), ())
    try:
        nvrtc.compileProgram(prog, options)
    except Exception as e:  # noqa: BLE001 - the compiler's log says what failed
        pytest.fail(f"{e}\n{nvrtc.getProgramLog(prog)}")
    assert b".entry kernel" in nvrtc.getPTX(prog)
