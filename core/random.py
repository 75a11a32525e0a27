"""Random number generators: ember.Generator (torch.Generator's API) and the default generators.

A cpu Generator wraps numpy's PCG64; a cuda Generator wraps cupy's Philox generator driven by an
explicit (seed, offset) pair, so both have a state that can be saved and restored exactly. Streams
are not bit-identical with torch's; the distributions are the same.
"""

from __future__ import annotations

import os

import numpy as np

from .device import device as _device
from .device import module_for, to_device

DEFAULT_SEED = 67280421310721  # torch's default seed for a new generator
_MASK = (1 << 64) - 1
_CPU_STATE_SIZE = (
    56  # bytes: PCG64 state (16) + inc (16) + has_uint32 (8) + uinteger (8) + seed (8)
)
_CUDA_STATE_SIZE = 16  # bytes: seed (8) + offset (8)


def _check_seed(seed) -> int:
    from .tensor import Tensor

    # a tensor seed is refused like torch's C++ parser does (ember.manual_seed int()s it first)
    if isinstance(seed, (float, bool, Tensor)) or not hasattr(seed, "__index__"):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if seed >= 1 << 64 or seed < -(1 << 63):
        raise ValueError("Overflow when unpacking long long")
    return seed & _MASK


class Generator:
    """A source of pseudo-random numbers (torch.Generator): seedable, with a restorable state."""

    def __init__(self, device="cpu"):
        self._device = to_device(device)
        if self._device.type == "meta":
            raise RuntimeError("META device type not an accelerator.")
        if self._device.type == "cuda" and self._device.index is None:
            from .device import cupy

            self._device = _device("cuda", cupy().cuda.Device().id)
        self._reset(DEFAULT_SEED)

    # ---------------------------------------------------------------- torch.Generator API
    @property
    def device(self):
        return self._device

    def manual_seed(self, seed) -> Generator:
        """Seed the generator (any int that fits 64 bits; negatives wrap like torch). Returns self."""
        self._reset(_check_seed(seed))
        return self

    def seed(self) -> int:
        """Seed from the OS's entropy source; returns the seed used."""
        s = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
        self._reset(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        """The generator's state as a uint8 tensor (restore it with set_state)."""
        from .tensor import _wrap

        if self._cuda:
            raw = self._seed.to_bytes(8, "little") + self._offset.to_bytes(8, "little")
        else:
            st = self._bg.state
            raw = (
                st["state"]["state"].to_bytes(16, "little")
                + st["state"]["inc"].to_bytes(16, "little")
                + int(st["has_uint32"]).to_bytes(8, "little")
                + int(st["uinteger"]).to_bytes(8, "little")
                + self._seed.to_bytes(8, "little")
            )
        return _wrap(np.frombuffer(raw, np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        """Restore a state returned by get_state."""
        from .tensor import Tensor

        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = bytes(np.asarray(new_state.detach().cpu()._data).reshape(-1))
        size = _CUDA_STATE_SIZE if self._cuda else _CPU_STATE_SIZE
        kind = "CUDAGeneratorImplState" if self._cuda else "CPUGeneratorImplState"
        if len(raw) != size:
            raise RuntimeError(
                f"Expected a {kind} of size {size} but found the input RNG state "
                f"size to be {len(raw)}"
            )
        if self._cuda:
            self._reset(int.from_bytes(raw[:8], "little"))
            self._offset = int.from_bytes(raw[8:], "little")
            return self
        seed = int.from_bytes(raw[48:56], "little")
        self._reset(seed)
        self._bg.state = {
            "bit_generator": "PCG64",
            "state": {
                "state": int.from_bytes(raw[:16], "little"),
                "inc": int.from_bytes(raw[16:32], "little"),
            },
            "has_uint32": int.from_bytes(raw[32:40], "little"),
            "uinteger": int.from_bytes(raw[40:48], "little"),
        }
        return self

    def graphsafe_get_state(self) -> Generator:
        """A Generator holding this (cuda) generator's state, for CUDA graph capture; a cpu
        generator has no graph-safe state (NotImplementedError, like torch)."""
        if not self._cuda:
            raise NotImplementedError("graphsafe_get_state is not supported in this Generator")
        return self.clone_state()

    def graphsafe_set_state(self, state) -> Generator:
        """Take the state of ``state`` (a Generator from graphsafe_get_state); cuda only."""
        if not isinstance(state, Generator):
            raise TypeError(f"expected a Generator, but got {type(state).__name__}")
        if not self._cuda:
            raise NotImplementedError("graphsafe_set_state is not supported in this Generator")
        return self.set_state(state.get_state())

    def clone_state(self) -> Generator:
        g = Generator(self._device)
        g.set_state(self.get_state())
        return g

    def __repr__(self) -> str:
        return f"<ember.Generator object (device={self._device})>"

    def __getstate__(self):
        return {"device": str(self._device), "state": self.get_state()._data.tobytes()}

    def __setstate__(self, d):
        from .tensor import _wrap

        self.__init__(d["device"])
        self.set_state(_wrap(np.frombuffer(d["state"], np.uint8).copy()))

    # ---------------------------------------------------------------- internals
    def _reset(self, seed: int) -> None:
        self._seed = seed
        self._cuda = self._device.type == "cuda"
        if self._cuda:
            self._offset = 0
            self._crs = None  # the cupy RandomState, made on first use
        else:
            self._bg = np.random.PCG64(seed)
            self.rng = np.random.Generator(self._bg)

    def _cupy_rs(self, n: int):
        """cupy's Philox RandomState positioned at this generator's offset; reserves n draws."""
        cp = module_for(self._device)
        if self._crs is None:
            from cupy.cuda import curand

            with cp.cuda.Device(self._device.index or 0):
                self._crs = cp.random.RandomState(
                    self._seed & ((1 << 63) - 1), method=curand.CURAND_RNG_PSEUDO_PHILOX4_32_10
                )
        from cupy.cuda import curand

        curand.setGeneratorOffset(self._crs._generator, self._offset)
        # each value may take two 32-bit draws (doubles, Box-Muller pairs, rejection): reserve enough
        self._offset += 4 * ((2 * n + 7) // 4) + 4
        return self._crs

    # draws: arrays on the generator's device ------------------------------------------------
    def _uniform(self, shape, npd):
        """Uniform [0, 1) in dtype npd (float32 drawn directly in float32)."""
        npd = np.dtype(npd)
        work = npd if npd in (np.float32, np.float64) else np.dtype(np.float32)
        if self._cuda:
            r = self._cupy_rs(_numel(shape)).random_sample(shape, dtype=work)
        else:
            r = self.rng.random(shape, dtype=work)
        if work != npd:
            # rounding to a narrower type could reach 1.0: clamp to the largest value below 1 first
            from .dtype import finfo, from_numpy_dtype

            below_one = 1.0 - finfo(from_numpy_dtype(npd)).eps / 2
            mod = module_for(self._device) if self._cuda else np
            r = mod.minimum(r, work.type(below_one)).astype(npd)
        return r

    def _normal(self, shape, npd):
        npd = np.dtype(npd)
        work = npd if npd in (np.float32, np.float64) else np.dtype(np.float32)
        if self._cuda:
            r = self._cupy_rs(_numel(shape)).standard_normal(shape, dtype=work)
        else:
            r = self.rng.standard_normal(shape, dtype=work)
        return r if work == npd else r.astype(npd)

    def _exponential(self, shape, npd):
        npd = np.dtype(npd)
        work = npd if npd in (np.float32, np.float64) else np.dtype(np.float32)
        if self._cuda:
            r = self._cupy_rs(_numel(shape)).standard_exponential(shape, dtype=work)
        else:
            r = self.rng.standard_exponential(shape, dtype=work)
        return r if work == npd else r.astype(npd)

    def _integers(self, low: int, high: int, shape, npd):
        """Integers in [low, high), returned as dtype npd."""
        if self._cuda:
            r = self._cupy_rs(_numel(shape)).randint(low, high, size=shape, dtype=np.int64)
        else:
            r = self.rng.integers(low, high, size=shape, dtype=np.int64)
        return r if np.dtype(npd) == np.int64 else r.astype(npd)

    def _permutation(self, n: int):
        if self._cuda:
            return self._cupy_rs(n).permutation(n).astype(np.int64)
        return self.rng.permutation(n)

    def _poisson(self, lam):
        if self._cuda:
            return self._cupy_rs(lam.size).poisson(lam)
        return np.asarray(self.rng.poisson(lam))  # a 0-d rate gives a Python int

    def _binomial(self, n, p):
        """Binomial draws for int64 trial counts ``n`` and float64 probabilities ``p``."""
        if self._cuda:
            return self._cupy_rs(n.size).binomial(n, p)
        return np.asarray(self.rng.binomial(n, p))


def _numel(shape) -> int:
    n = 1
    for s in shape if isinstance(shape, tuple) else (shape,):
        n *= s
    return n


# ---------------------------------------------------------------------- default generators
default_generator = Generator("cpu")
default_generator.manual_seed(DEFAULT_SEED)
_cuda_defaults: dict = {}


def default_generator_for(device) -> Generator:
    """The default generator of ``device`` (one per cuda device, made on first use)."""
    if device.type == "cpu":
        return default_generator
    if device.type == "meta":
        from .meta import meta_generator

        return meta_generator
    idx = device.index
    if idx is None:
        from .device import cupy

        idx = cupy().cuda.Device().id
    g = _cuda_defaults.get(idx)
    if g is None:
        g = _cuda_defaults[idx] = Generator(_device("cuda", idx))
        g.manual_seed(default_generator.initial_seed())
    return g


def manual_seed(seed) -> Generator:
    """Seed every default generator (cpu and cuda); returns the cpu one, like torch. Unlike
    ``Generator.manual_seed``, anything ``int()`` takes is a seed (1.5, "7", True), as in torch."""
    s = _check_seed(int(seed))
    default_generator.manual_seed(s)
    for g in _cuda_defaults.values():
        g.manual_seed(s)
    return default_generator


def seed() -> int:
    """Seed the default generators from the OS's entropy; returns the seed."""
    s = default_generator.seed()
    for g in _cuda_defaults.values():
        g.manual_seed(s)
    return s


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    """The cpu default generator's state (a uint8 tensor)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore the cpu default generator's state from get_rng_state()."""
    default_generator.set_state(new_state)


def fork_rng(
    devices=None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str | None = None,
):
    """A context manager that restores the default generators' states on exit: the cpu one
    always, and those of the cuda ``devices`` (by default every one in use). ``device_type``
    names the accelerator ("meta" forks nothing); ``_caller``/``_devices_kw`` are torch's
    internal arguments, accepted for its callers."""
    import contextlib

    @contextlib.contextmanager
    def ctx():
        if device_type == "meta":
            yield
            return
        if device_type is not None:
            to_device(device_type)  # torch's error for a device type it does not know
        if not enabled:
            yield
            return
        keep = (
            None
            if devices is None
            else {_device(d).index if not isinstance(d, int) else d for d in devices}
        )
        cpu = default_generator.get_state()
        cuda = {k: g.get_state() for k, g in _cuda_defaults.items() if keep is None or k in keep}
        try:
            yield
        finally:
            default_generator.set_state(cpu)
            for k, st in cuda.items():
                _cuda_defaults[k].set_state(st)

    return ctx()
