"""A test-only array backend that behaves like cupy where it matters: it refuses to mix with numpy.

``StrictArray`` is an ndarray subclass whose ``__array_ufunc__`` / ``__array_function__`` raise when
a plain ``numpy.ndarray`` (or a list) meets backend arrays, and whose results are always
StrictArrays (0-d arrays instead of numpy scalars, like cupy). ``strict_xp`` is a module-like
object exposing numpy's API that produces StrictArrays, plus the small ``cuda`` surface ember uses
(``cuda.Device``, ``cuda.runtime.getDeviceCount``).

``strict_cuda()`` installs it as ember's ``cuda`` backend (through ``core.device.register_backend``
and the cupy slot of core/device.py) for the duration of a ``with`` block. A kernel that calls
``numpy.*`` on data instead of ``xp.*`` then fails loudly, or returns a plain ndarray, exactly where
it would break (or silently run on the host) with cupy on a GPU.
"""

from __future__ import annotations

import contextlib
import types

import ember
import numpy as np
from ember.core import device as _devmod
from ember.core import random as _random
from ember.core.meta import ArrayNamespace, plain, plain_deep

_current = [0]  # the "current cuda device" of the strict backend


class MixedBackendError(TypeError):
    """A plain numpy array met a StrictArray (the cupy equivalent raises TypeError too)."""


class _Dev:
    __slots__ = ("id",)

    def __init__(self, i: int) -> None:
        self.id = i


class StrictArray(np.ndarray):
    """An ndarray that pretends to live on a device: it never mixes with plain numpy arrays."""

    def __array_finalize__(self, obj) -> None:
        self._dev_id = getattr(obj, "_dev_id", _current[0])

    @property
    def device(self):  # cupy: arr.device.id
        return _Dev(self._dev_id)

    def get(self) -> np.ndarray:
        """A host copy (cupy's ndarray.get())."""
        return np.array(self.view(np.ndarray))

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        for x in inputs + (out or ()):
            _check(x, f"{ufunc.__name__}.{method}")
        args = [plain(x) for x in inputs]
        if out is not None:
            kwargs["out"] = tuple(plain(o) for o in out)
        res = getattr(ufunc, method)(*args, **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(res, self._dev_id)

    def __array_function__(self, func, types_, args, kwargs):
        if np.ndarray in types_:
            raise MixedBackendError(
                f"strict backend: numpy.{func.__name__} got a plain numpy array together with "
                "device arrays (a kernel used numpy on data, or built a host array)"
            )
        for t in types_:
            if not issubclass(t, StrictArray):
                return NotImplemented
        res = func(*plain_deep(args), **plain_deep(kwargs))
        return _wrap(res, self._dev_id)

    def __reduce__(self):  # pickling a device array is not a thing: force .get()
        raise TypeError("strict backend arrays cannot be pickled; call .get() first")


def _check(x, where: str) -> None:
    if type(x) is np.ndarray or isinstance(x, (list, tuple)):
        raise MixedBackendError(
            f"strict backend: {where} got a {type(x).__name__} together with device arrays "
            "(a kernel used numpy on data, or built a host array)"
        )


def _wrap(res, dev_id: int):
    if type(res) is np.ndarray:
        r = res.view(StrictArray)
        r._dev_id = dev_id
        return r
    if isinstance(res, np.generic):  # cupy never hands back numpy scalars
        r = np.asarray(res).view(StrictArray)
        r._dev_id = dev_id
        return r
    if isinstance(res, tuple):
        return (
            type(res)(_wrap(v, dev_id) for v in res)
            if not hasattr(res, "_fields")
            else type(res)(*(_wrap(v, dev_id) for v in res))
        )
    if isinstance(res, list):
        return [_wrap(v, dev_id) for v in res]
    return res


class _Device:
    """cupy.cuda.Device: a context manager selecting the current device."""

    def __init__(self, i: int = 0) -> None:
        self.id = i
        self._prev = None

    def __enter__(self):
        self._prev = _current[0]
        _current[0] = self.id
        return self

    def __exit__(self, *exc) -> None:
        _current[0] = self._prev

    def use(self) -> None:
        _current[0] = self.id

    def synchronize(self) -> None:
        pass


class StrictXP(ArrayNamespace):
    """numpy's namespace, producing StrictArrays (``xp`` of the strict backend)."""

    def __init__(self, mod=np, name: str = "strict_xp") -> None:
        super().__init__(mod, name)

    @staticmethod
    def _convert(result):
        return _wrap(result, _current[0])

    def _special(self, name: str):
        if name == "ndarray":
            return StrictArray
        if name == "cuda" and self._mod is np:
            return types.SimpleNamespace(
                Device=_Device,
                runtime=types.SimpleNamespace(getDeviceCount=lambda: 2),
                get_current_stream=lambda: types.SimpleNamespace(synchronize=lambda: None),
            )
        if name == "RandomState" and self._mod is np.random:
            return _RandomState
        return None


strict_xp = StrictXP()


# ---------------------------------------------------------------- the cupy-only modules ember uses
class _Philox:
    """The curand generator handle: its stream position, as ``curand.setGeneratorOffset`` sets."""

    def __init__(self, seed: int) -> None:
        self.seed, self.offset = seed, 0


class _RandomState:
    """cupy.random.RandomState(seed, method=...): draws on the device (here: StrictArrays). Like
    curand's Philox, a draw depends only on the seed and the offset set before it (what ember's
    cuda generators rely on to save and restore their state)."""

    def __init__(self, seed=None, method=None) -> None:
        seed = int(np.random.SeedSequence().entropy) if seed is None else int(seed)
        self._generator = _Philox(seed)

    def __getattr__(self, name):
        def draw(*args, dtype=None, **kwargs):
            g = self._generator
            words = [(v >> s) & 0xFFFFFFFF for v in (g.seed, g.offset) for s in (0, 32)]
            f = getattr(np.random.RandomState(words), name)
            for a in args:
                if type(a) is np.ndarray:  # shapes may be tuples; data must be device arrays
                    _check(a, f"RandomState.{name}")
            r = np.asarray(f(*plain_deep(args), **plain_deep(kwargs)))
            g.offset += 2 * r.size + 4  # the stream moves on past what was drawn
            if dtype is not None:
                r = r.astype(dtype, copy=False)
            return _wrap(r, _current[0])

        return draw


def _scatter(ufunc):
    def scatter(a, key, v) -> None:
        for x in (a, v):
            if not isinstance(x, (StrictArray, int, float, complex, np.generic)):
                _check(x, f"cupyx.scatter ({ufunc.__name__})")
                raise MixedBackendError(
                    f"strict backend: scatter target/values must be device "
                    f"arrays, got {type(x).__name__}"
                )
        ufunc.at(plain(a), plain_deep(key), plain(v))

    return scatter


def _fake_modules() -> dict:
    import scipy.special

    curand = types.ModuleType("cupy.cuda.curand")
    curand.CURAND_RNG_PSEUDO_PHILOX4_32_10 = 0
    curand.setGeneratorOffset = lambda gen, offset: setattr(gen, "offset", offset)
    cuda = types.ModuleType("cupy.cuda")
    cuda.curand = curand
    cuda.Device = _Device
    cupy = types.ModuleType("cupy")
    cupy.cuda = cuda
    special = StrictXP(scipy.special, "cupyx.scipy.special")
    scipy_ = types.ModuleType("cupyx.scipy")
    scipy_.special = special
    cupyx = types.ModuleType("cupyx")
    cupyx.scipy = scipy_
    cupyx.scatter_add = _scatter(np.add)
    cupyx.scatter_max = _scatter(np.maximum)
    cupyx.scatter_min = _scatter(np.minimum)
    return {
        "cupy": cupy,
        "cupy.cuda": cuda,
        "cupy.cuda.curand": curand,
        "cupyx": cupyx,
        "cupyx.scipy": scipy_,
        "cupyx.scipy.special": special,
    }


_FAKES: dict = {}


def _device_fn(arr):
    return ember.device("cuda", arr._dev_id)


@contextlib.contextmanager
def strict_cuda():
    """Inside the block, 'cuda' means the strict backend (ember's cupy slot points at strict_xp)."""
    import sys

    if not _FAKES:
        _FAKES.update(_fake_modules())
    saved = _devmod._cupy, dict(_devmod._XP), dict(_devmod._DEVICE_OF), _devmod._SEVERAL_GPUS[0]
    saved_mods = {k: sys.modules.get(k) for k in _FAKES}
    # the cuda default generators made inside belong to the strict backend: a real GPU's must
    # not see them afterwards (nor these the real ones)
    saved_gens = dict(_random._cuda_defaults)
    _random._cuda_defaults.clear()
    sys.modules.update(_FAKES)  # `import cupyx.scipy.special` etc. find the strict stand-ins
    _devmod.register_backend(StrictArray, strict_xp, _device_fn)
    _devmod._cupy = strict_xp
    try:
        yield strict_xp
    finally:
        for k, m in saved_mods.items():
            if m is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = m
        _devmod._cupy = saved[0]
        _devmod._XP.clear()
        _devmod._XP.update(saved[1])
        _devmod._DEVICE_OF.clear()
        _devmod._DEVICE_OF.update(saved[2])
        _devmod._SEVERAL_GPUS[0] = saved[3]  # the strict backend's second GPU is its own
        _random._cuda_defaults.clear()
        _random._cuda_defaults.update(saved_gens)
        _current[0] = 0
