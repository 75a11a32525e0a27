"""Runtime utilities of the torch namespace: thread counts, determinism and precision flags.

Intra-op threads are the BLAS threads numpy/scipy use (set through threadpoolctl). ember has no
inter-op thread pool: ``set_num_interop_threads`` keeps the value so that
``get_num_interop_threads`` returns it, and nothing else changes. The flags are process-wide, like
torch's, and only recorded: ember's kernels are deterministic on cpu already.
"""

from __future__ import annotations

import os

__all__ = [
    "_assert",
    "are_deterministic_algorithms_enabled",
    "compiled_with_cxx11_abi",
    "get_deterministic_debug_mode",
    "get_float32_matmul_precision",
    "get_num_interop_threads",
    "get_num_threads",
    "has_lapack",
    "has_mkl",
    "has_openmp",
    "has_spectral",
    "init_num_threads",
    "is_deterministic_algorithms_warn_only_enabled",
    "is_distributed",
    "is_warn_always_enabled",
    "set_deterministic_debug_mode",
    "set_float32_matmul_precision",
    "set_flush_denormal",
    "set_num_interop_threads",
    "set_num_threads",
    "set_warn_always",
    "use_deterministic_algorithms",
]

_state = {
    "deterministic": False,
    "warn_only": False,
    "matmul_precision": "highest",
    "warn_always": False,
    "interop": None,  # None: not set yet (default: the cpu count)
    "threads": None,  # fallback when no BLAS library is found
}


def cpu_features() -> dict:
    """The SIMD features numpy's dispatcher found on this cpu ({"AVX2": True, ...}; empty when
    numpy does not say), read by torch.backends.cpu and by the choices torch makes by cpu."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as f
    except ImportError:  # numpy < 2
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as f
        except ImportError:
            return {}
    return f


def onednn_bf16() -> bool:
    """Whether torch's cpu build runs bfloat16 through oneDNN here: it does where the cpu has
    AVX-512 BW, VL and DQ (an AVX2-only cpu takes the native kernels, whose errors differ)."""
    f = cpu_features()
    return bool(f.get("AVX512BW") and f.get("AVX512VL") and f.get("AVX512DQ"))


def onednn_fp16() -> bool:
    """Whether torch's cpu build runs float16 convolutions through oneDNN here: only where the cpu
    has AVX-512 FP16 (Sapphire Rapids and later); elsewhere the native kernels take them."""
    return bool(cpu_features().get("AVX512FP16"))


def _check_count(fname: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        # torch raises RuntimeError for these type errors
        raise RuntimeError(f"{fname} expects an int, but got {type(n).__name__}")  # noqa: TRY004
    if n <= 0:
        raise RuntimeError(f"{fname} expects a positive integer")
    return n


def _blas():
    # threadpoolctl is imported lazily: scanning the loaded libraries costs a few ms
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(user_api="blas")


def get_num_threads() -> int:
    """The number of threads used for intra-op parallelism (numpy's BLAS threads)."""
    info = _blas().info()
    if info:
        return int(info[0]["num_threads"])
    return _state["threads"] or os.cpu_count() or 1


def set_num_threads(int: int) -> None:
    """Set the number of threads used for intra-op parallelism (numpy's BLAS threads)."""
    n = _check_count("set_num_threads", int)
    _state["threads"] = n
    _blas().limit(limits=n)


def init_num_threads() -> None:
    """Initializes the number of parallel threads used on the current thread.

    torch calls this in a new thread to copy ``set_num_threads``'s value into it; numpy's BLAS
    pool is shared by every thread, so there is nothing to copy and it does nothing."""


def get_num_interop_threads() -> int:
    """The number of inter-op threads (ember has no inter-op pool: the value last set)."""
    return _state["interop"] or os.cpu_count() or 1


def set_num_interop_threads(int: int) -> None:
    """Record the number of inter-op threads (ember runs ops one after another: kept only)."""
    _state["interop"] = _check_count("set_num_interop_threads", int)


def _bool_arg(fname: str, arg: str, pos: str, v) -> bool:
    if not isinstance(v, bool):
        from .arg_errors import type_name  # the C type's tp_name: numpy.bool, not bool

        raise TypeError(f"{fname}(): argument '{arg}'{pos} must be bool, not {type_name(v)}")
    return v


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms (recorded; ember's cpu kernels are deterministic)."""
    fname = "_set_deterministic_algorithms"
    _state["deterministic"] = _bool_arg(fname, "mode", " (position 1)", mode)
    _state["warn_only"] = _bool_arg(fname, "warn_only", "", warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in force."""
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether deterministic mode only warns (``warn_only=True``)."""
    return _state["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode) -> None:
    """0/"default": off, 1/"warn": deterministic with warnings, 2/"error": deterministic."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`, but "
                f"got {debug_mode}"
            )
        debug_mode = _DEBUG_MODES[debug_mode]
    elif isinstance(debug_mode, int) and not isinstance(debug_mode, bool):
        if debug_mode not in (0, 1, 2):
            raise RuntimeError(
                f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
            )
    else:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    _state["deterministic"] = debug_mode != 0
    _state["warn_only"] = debug_mode == 1


def get_deterministic_debug_mode() -> int:
    """The deterministic debug mode: 0 (off), 1 (warn) or 2 (error)."""
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    """Record the float32 matmul precision ("highest", "high" or "medium"); numpy always
    computes in full float32, so "highest" is what ember does whatever the setting."""
    if not isinstance(precision, str):
        raise RuntimeError(  # noqa: TRY004
            f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}"
        )
    if precision not in ("highest", "high", "medium"):
        import warnings

        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
            "setFloat32MatmulPrecision call has no effect.",
            UserWarning,
            stacklevel=2,
        )
        return
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision last set (default "highest")."""
    return _state["matmul_precision"]


def set_warn_always(b: bool) -> None:
    """Whether once-only warnings are issued every time (recorded for libraries that ask)."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")  # noqa: TRY004
    _state["warn_always"] = b


def is_warn_always_enabled() -> bool:
    """Whether ``set_warn_always(True)`` is in force."""
    return _state["warn_always"]


_WARNED_ONCE: set = set()


def _warn_once(key: str, msg: str) -> None:
    """torch's TORCH_WARN_ONCE: a UserWarning the first time in the process (every time under
    ``set_warn_always(True)``), pointing at the user's line."""
    if key in _WARNED_ONCE and not _state["warn_always"]:
        return
    _WARNED_ONCE.add(key)
    from .ops.conversion import warn_user

    warn_user(msg)


def set_flush_denormal(mode: bool) -> bool:
    """Denormal flushing is not controllable from numpy: returns False (unsupported) and changes
    nothing, which is what torch does on a cpu without the SSE3 control bits."""
    return False


# what this build can do, as torch's build flags say it: linalg runs on numpy's LAPACK and fft on
# numpy's pocketfft (True); ember links neither MKL nor an OpenMP runtime of its own (False)
has_lapack: bool = True
has_spectral: bool = True
has_mkl: bool = False
has_openmp: bool = False


def is_distributed(input) -> bool:
    """Whether ``input`` is a distributed tensor: never in ember (as in torch, whose plain
    tensors always answer False)."""
    return False


def compiled_with_cxx11_abi() -> bool:
    """ember is pure Python: there is no C++ ABI; True matches torch's current wheels."""
    return True


def _assert(condition, message) -> None:
    """``assert condition, message`` that tracing tools can see (a bool, number or tensor)."""
    if not condition:
        raise AssertionError(message)
