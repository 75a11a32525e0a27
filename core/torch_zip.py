"""Read checkpoints written by PyTorch's ``torch.save`` (its zip format) into ember tensors.

The archive holds ``<name>/data.pkl`` (a pickle whose tensors are persistent ids naming storages),
each storage's raw bytes as ``<name>/data/<key>``, and ``<name>/byteorder``. torch's globals are
mapped to ember equivalents here (a whole pickled model's ``torch.nn`` classes are ember's, with
``weights_only=False``): torch is never imported, and with ``weights_only=True`` only the
tensor-rebuild functions, storage types, dtypes, ``torch.device`` / ``torch.Size``, OrderedDict,
plain containers and the user's allow-listed globals load; anything else raises
``pickle.UnpicklingError`` before it runs. Tensors viewing one storage share memory (on cpu).
``mmap`` is ignored: each storage is read into memory once.
"""

from __future__ import annotations

import _compat_pickle
import io
import pickle
import struct
import zipfile
import zlib

import numpy as np

from . import dtype as _dt
from .device import device as _device
from .serialization import _allowed_global, _bad, _default_safe, _fallback_byteorder, meta_tensor
from .tensor import Size, Tensor, _wrap

__all__ = ["is_torch_legacy", "load_torch_legacy", "load_torch_zip"]

# torch's legacy typed storage classes -> the dtype of their elements
_STORAGE_DTYPES = {
    "DoubleStorage": _dt.float64,
    "FloatStorage": _dt.float32,
    "HalfStorage": _dt.float16,
    "BFloat16Storage": _dt.bfloat16,
    "LongStorage": _dt.int64,
    "IntStorage": _dt.int32,
    "ShortStorage": _dt.int16,
    "CharStorage": _dt.int8,
    "ByteStorage": _dt.uint8,
    "BoolStorage": _dt.bool_,
    "ComplexFloatStorage": _dt.complex64,
    "ComplexDoubleStorage": _dt.complex128,
}


# globals torch's weights_only load allows that ember cannot rebuild (dtypes it lacks, quantized,
# nested and subclass tensors): refused as unsupported, since allow-listing them would not help
_TORCH_SAFE_UNSUPPORTED = {
    "torch": {
        "complex32",
        "float8_e4m3fn",
        "float8_e4m3fnuz",
        "float8_e5m2",
        "float8_e5m2fnuz",
        "float8_e8m0fnu",
        "float4_e2m1fn_x2",
        "qint8",
        "quint8",
        "qint32",
        "quint4x2",
        "quint2x4",
        "QInt8Storage",
        "QUInt8Storage",
        "QInt32Storage",
        "QUInt4x2Storage",
        "QUInt2x4Storage",
        "bits1x8",
        "bits2x4",
        "bits4x2",
        "bits8",
        "bits16",
        *(f"{u}int{i}" for u in ("", "u") for i in range(1, 8)),
    },
    "torch._utils": {
        "_rebuild_qtensor",
        "_rebuild_nested_tensor",
        "_rebuild_wrapper_subclass",
        "_rebuild_device_tensor_from_numpy",
        "_rebuild_device_tensor_from_cpu_tensor",
    },
}


class _StorageType:
    """What a pickled ``torch.FloatStorage`` (etc.) global becomes: its element dtype."""

    def __init__(self, name: str, dtype):
        self.name, self.dtype = name, dtype

    def __repr__(self):
        return f"<torch storage type {self.name}>"


class _Storage:
    """A loaded storage: its bytes (a flat uint8 numpy array), element dtype and saved device."""

    def __init__(self, buf: np.ndarray, dtype, location: str):
        self.buf, self.dtype, self.location = buf, dtype, location


def _int_tuple(x, what: str) -> tuple:
    if not isinstance(x, (tuple, list)) or not all(type(v) is int for v in x):
        raise pickle.UnpicklingError(f"torch checkpoint: bad tensor {what} {x!r}")
    return tuple(x)


# torch's C namespaces -> the public module of their functions, and the prefix their names carry
_C_NAMESPACES = {
    "torch._C._nn": ("torch.nn.functional", ""),
    "torch._C._special": ("torch.special", "special_"),
    "torch._C._linalg": ("torch.linalg", "linalg_"),
    "torch._C._fft": ("torch.fft", "fft_"),
}


def _ember_global(module: str, name: str):
    """ember's counterpart of torch's global ``module.name`` (a whole pickled model names
    ``torch.nn.modules.linear.Linear``), or None. The module is imported by its ember path (not
    looked up in ``sys.modules['torch...']``, which may be the real torch); a name that lives
    elsewhere in ember is looked up in the enclosing packages (torch's
    ``nn.modules.linear.NonDynamicallyQuantizableLinear`` is ember's ``nn.modules``')."""
    import importlib

    from ..dropin import RENAMES

    if module in _C_NAMESPACES:  # a builtin function torch binds in C (F.gelu, torch.special.erf)
        public, prefix = _C_NAMESPACES[module]
        return _ember_global(public, name.removeprefix(prefix))
    if module == "torch._C" and name == "_VariableFunctionsClass":
        return importlib.import_module("ember")  # torch.tanh pickles as getattr(<this>, 'tanh')
    if module == "torch._C" and name in ("TensorBase", "_TensorBase"):
        return Tensor  # a Tensor method pickles as getattr(torch._C.TensorBase, 'add')
    target = "ember" + module[len("torch") :]
    for tname, ename in RENAMES.items():
        if module == tname or module.startswith(tname + "."):
            target = ename + module[len(tname) :]
    while True:
        try:
            obj = importlib.import_module(target)
        except ImportError:
            obj = None
        for part in name.split(".") if obj is not None else ():  # protocol 4: a qualname
            obj = getattr(obj, part, None)
        if obj is not None:
            return obj
        target = target.rpartition(".")[0]
        if "." not in target:  # ember's top level answers for torch's top level only
            return None


class _TorchUnpickler(pickle.Unpickler):
    def __init__(self, file, f, read_storage, place, weights_only, big_endian):
        super().__init__(file)
        self.f, self.read_storage, self.place = f, read_storage, place
        self.weights_only, self.big_endian = weights_only, big_endian
        self.storages: dict = {}
        self.bases: dict = {}  # (id(storage bytes), dtype) -> (its whole tensor, the bytes)
        torch_map = {
            ("torch._utils", "_rebuild_tensor"): self._rebuild_tensor,
            ("torch._utils", "_rebuild_tensor_v2"): self._rebuild_tensor_v2,
            ("torch._utils", "_rebuild_tensor_v3"): self._rebuild_tensor_v3,
            ("torch._utils", "_rebuild_parameter"): self._rebuild_parameter,
            ("torch._utils", "_rebuild_parameter_with_state"): self._rebuild_parameter_with_state,
            ("torch._utils", "_rebuild_meta_tensor_no_storage"): self._rebuild_meta,
            ("torch._utils", "_rebuild_sparse_tensor"): _rebuild_sparse_tensor,
            ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
            ("torch", "Tensor"): Tensor,
            ("torch.serialization", "_get_layout"): _get_layout,
            ("torch", "device"): _device,
            ("torch", "Size"): Size,
            ("torch", "UntypedStorage"): _StorageType("UntypedStorage", _dt.uint8),
            ("torch.storage", "UntypedStorage"): _StorageType("UntypedStorage", _dt.uint8),
            ("collections", "OrderedDict"): __import__("collections").OrderedDict,
        }
        for name, dt in _STORAGE_DTYPES.items():
            torch_map[("torch", name)] = _StorageType(name, dt)
        for d in _dt.ALL:
            torch_map[("torch", d.name)] = d
        self.torch_map = torch_map
        if weights_only:
            self.allowed = {**_default_safe(), **torch_map}

    def find_class(self, module, name):
        if (module, name) in _compat_pickle.NAME_MAPPING:  # protocol 2's Python 2 names
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        if self.weights_only:
            try:
                return _allowed_global(self.allowed, module, name)
            except pickle.UnpicklingError:
                if name in _TORCH_SAFE_UNSUPPORTED.get(module, ()):
                    raise self._no_counterpart(module, name) from None
                raise
        obj = self.torch_map.get((module, name))
        if obj is not None:
            return obj
        if module == "torch" or module.startswith("torch."):
            obj = _ember_global(module, name)
            if obj is not None:
                return obj
            raise self._no_counterpart(module, name)
        return super().find_class(module, name)

    def _no_counterpart(self, module: str, name: str) -> pickle.UnpicklingError:
        return pickle.UnpicklingError(
            f"ember.load: '{module}.{name}' in '{self.f}' is a torch object ember has no "
            "counterpart for (ember rebuilds tensors, storages, dtypes, devices, containers "
            "and the torch classes and functions it implements)"
        )

    # ---------------------------------------------------------------- storages
    def persistent_load(self, pid):
        # zip: ('storage', type, key, location, numel); legacy adds a view: (key, offset, numel)
        # and names each nn.Module class as ('module', class, source file, source)
        if isinstance(pid, tuple) and len(pid) == 4 and pid[0] == "module":
            return pid[1]
        if not (isinstance(pid, tuple) and len(pid) in (5, 6) and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"torch checkpoint: unsupported persistent id {pid!r}")
        _, stype, key, location, numel = pid[:5]
        view = pid[5] if len(pid) == 6 else None
        if not isinstance(stype, _StorageType) or type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError(f"torch checkpoint: bad storage id {pid!r}")
        key, location = str(key), str(location)
        st = self.storages.get(key)
        if st is None:
            name, raw = self.read_storage(key)  # writable: tensors are views of it
            need = numel * stype.dtype.np.itemsize
            if len(raw) < need:
                raise _bad(
                    self.f,
                    f"storage '{name}' holds {len(raw)} bytes but {need} are needed (truncated?)",
                )
            st = _Storage(np.frombuffer(raw, dtype=np.uint8), stype.dtype, location)
            self.storages[key] = st
        if view is not None:
            isz = stype.dtype.np.itemsize
            _, offset, size = view
            return _Storage(st.buf[offset * isz : (offset + size) * isz], stype.dtype, location)
        return st if st.dtype is stype.dtype else _Storage(st.buf, stype.dtype, st.location)

    # ---------------------------------------------------------------- tensors
    def _view(self, storage, offset, size, stride, dtype):
        if not isinstance(storage, _Storage):
            raise pickle.UnpicklingError("torch checkpoint: a tensor's storage is not a storage")
        if dtype is None or getattr(dtype, "np", None) is None:
            raise pickle.UnpicklingError(f"torch checkpoint: unsupported tensor dtype {dtype!r}")
        size, stride = _int_tuple(size, "size"), _int_tuple(stride, "stride")
        if (
            type(offset) is not int
            or offset < 0
            or len(size) != len(stride)
            or any(s < 0 for s in size + stride)
        ):
            raise pickle.UnpicklingError(
                f"torch checkpoint: bad tensor view (offset {offset!r}, size {size}, "
                f"stride {stride})"
            )
        npd = dtype.np
        isz = npd.itemsize
        big = self.big_endian and isz > 1
        nbytes = storage.buf.nbytes
        if 0 in size:
            return self.place(_wrap(np.empty(size, dtype.np)), storage.location)
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if (last + 1) * isz > nbytes:
            raise _bad(
                self.f,
                f"a tensor (offset {offset}, size {list(size)}, stride {list(stride)}) "
                f"reaches past its storage's {nbytes} bytes",
            )
        if not big and nbytes % isz == 0:
            # a view of the whole storage: tensors of one storage share memory, with torch's
            # storage offsets and strides (a detached as_strided view: no autograd base)
            key = (id(storage.buf), npd)
            base = self.bases.get(key)
            if base is None:
                whole = _wrap(np.frombuffer(storage.buf, dtype=npd))
                base = self.place(whole, storage.location)
                self.bases[key] = (base, storage.buf)  # the buffer: its id stays unique
            else:
                base = base[0]
            from ..autograd.grad_mode import no_grad

            with no_grad():
                return base.as_strided(size, stride, offset).detach()
        arr = np.ndarray(
            size,
            dtype=npd.newbyteorder(">") if big else npd,
            buffer=storage.buf,
            offset=offset * isz,
            strides=tuple(s * isz for s in stride),
        )
        if big:  # big-endian file: a native copy (no sharing)
            arr = arr.astype(dtype.np)
        return self.place(_wrap(arr), storage.location)

    def _finish(self, t, requires_grad):
        if requires_grad:
            t.requires_grad_(True)
        return t

    def _rebuild_tensor(self, storage, storage_offset, size, stride):
        dtype = storage.dtype if isinstance(storage, _Storage) else None
        return self._view(storage, storage_offset, size, stride, dtype)

    def _rebuild_tensor_v2(
        self, storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None
    ):
        t = self._rebuild_tensor(storage, storage_offset, size, stride)
        return self._finish(t, bool(requires_grad))

    def _rebuild_tensor_v3(
        self,
        storage,
        storage_offset,
        size,
        stride,
        requires_grad,
        backward_hooks,
        dtype,
        metadata=None,
    ):
        t = self._view(storage, storage_offset, size, stride, dtype)
        return self._finish(t, bool(requires_grad))

    def _rebuild_meta(self, dtype, size, stride, requires_grad):
        """torch's meta tensor: no storage, and meta whatever map_location says (as torch's)."""
        return self._finish(meta_tensor(size, stride, dtype), bool(requires_grad))

    def _rebuild_parameter(self, data, requires_grad, backward_hooks):
        from ..nn.parameter import Parameter

        return Parameter(data, requires_grad=bool(requires_grad))

    def _rebuild_parameter_with_state(self, data, requires_grad, backward_hooks, state):
        return self._rebuild_parameter(data, requires_grad, backward_hooks)  # state: ignored


def _rebuild_from_type_v2(func, new_type, args, state):
    """A tensor torch pickled with its Python attributes (``t.foo = 3``): the tensor. ember's
    tensors hold no attribute dict, so the attributes are dropped."""
    t = func(*args)
    if isinstance(new_type, type) and issubclass(new_type, Tensor) and not isinstance(t, new_type):
        t = t.as_subclass(new_type)
    return t


def _get_layout(name: str):
    """The layout a pickled ``torch.sparse_coo`` (etc.) names: torch pickles layouts by name."""
    from . import layout as _layout

    lay = getattr(_layout, str(name).removeprefix("torch."), None)
    if not isinstance(lay, _layout.layout):
        raise pickle.UnpicklingError(f"torch checkpoint: unknown layout {name!r}")
    return lay


def _rebuild_sparse_tensor(layout, data):
    """A sparse tensor torch pickled as its layout and (indices..., values, size) tensors, these
    already placed by map_location."""
    from . import layout as _layout
    from .sparse import sparse_compressed_tensor, sparse_coo_tensor

    if layout is _layout.sparse_coo:
        indices, values, size = data[:3]
        coalesced = data[3] if len(data) > 3 else None  # older files: 3 fields
        return sparse_coo_tensor(indices, values, size, is_coalesced=coalesced)
    if layout in (_layout.sparse_csr, _layout.sparse_csc, _layout.sparse_bsr, _layout.sparse_bsc):
        compressed, plain, values, size = data
        return sparse_compressed_tensor(compressed, plain, values, size, layout=layout)
    raise NotImplementedError(f"rebuilding sparse tensor for layout {layout}")


def _zip_reader_error(fh, what=None) -> RuntimeError:
    """torch's error for a zip it cannot read (a truncated checkpoint, mostly): too short for an
    end record (22 bytes) is "not a ZIP archive", else the central directory is missing."""
    if what is None:
        try:
            fh.seek(0, 2)
            short = fh.tell() < 22
        except (OSError, ValueError, AttributeError):
            short = False
        what = "reading zip archive: " + (
            "not a ZIP archive" if short else "failed finding central directory"
        )
    return RuntimeError(
        f"PytorchStreamReader failed {what}. This is an internal miniz "
        "error. If you are seeing this error, there is a high likelihood that your checkpoint "
        "file is corrupted. This can happen if the checkpoint was not saved properly, was "
        "transferred incorrectly, or the file was modified after saving."
    )


def load_torch_zip(f, fh, place, weights_only: bool):
    """Load the ``torch.save`` zip checkpoint open as ``fh`` (``f``: its path or file object, for
    messages); ``place``: serialization's map_location placer."""
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError):
        raise _zip_reader_error(fh) from None
    with zf:
        names = zf.namelist()
        pkls = [n for n in names if n == "data.pkl" or n.endswith("/data.pkl")]
        if not pkls:  # torch's texts for a zip that is no checkpoint
            top = next((n for n in names if "/" not in n), None)
            if top is not None:
                raise RuntimeError(
                    "[enforce fail at inline_container.cc:180] . file in archive is not in a "
                    f"subdirectory: {top}"
                )
            if not names or names[0].split("/")[0] + "/version" not in names:
                raise RuntimeError(
                    'Expected hasRecord("version") to be true, but got false.  (Could this error '
                    "message be improved?  If so, please report an enhancement request to "
                    "PyTorch.)"
                )
            raise _zip_reader_error(fh, "locating file data.pkl: file not found")
        prefix = pkls[0][: -len("data.pkl")]
        try:
            order = zf.read(prefix + "byteorder").decode().strip()
        except KeyError:  # files from before torch wrote it: the default set for them
            order = _fallback_byteorder()
        except (zipfile.BadZipFile, zlib.error, UnicodeDecodeError, EOFError) as e:
            raise _bad(f, f"a corrupt zip archive ({e})") from None
        if order not in ("little", "big"):
            raise _bad(f, f"unknown byteorder {order!r}")

        def read_storage(key):
            name = f"{prefix}data/{key}"
            try:
                return name, bytearray(zf.read(name))
            except KeyError:
                raise _bad(f, f"the archive has no storage entry '{name}'") from None

        try:
            blob = zf.read(pkls[0])
            up = _TorchUnpickler(
                io.BytesIO(blob), f, read_storage, place, weights_only, order == "big"
            )
            return up.load()
        except (zipfile.BadZipFile, zlib.error, EOFError, struct.error) as e:
            raise _bad(f, f"a truncated or corrupt zip archive ({e})") from None


# ------------------------------------------------------------------ the legacy (pre-1.6) format
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_MAGIC_BYTES = _LEGACY_MAGIC.to_bytes(10, "little")
_LEGACY_PROTOCOL = 1001


def is_torch_legacy(head: bytes) -> bool:
    """Whether a file starting with ``head`` (32 bytes) is ``torch.save(...,
    _use_new_zipfile_serialization=False)``'s output: a pickled magic number first."""
    return head[:1] == b"\x80" and _LEGACY_MAGIC_BYTES in head[:32]


class _PlainUnpickler(pickle.Unpickler):
    # the header records and the storage-key list hold no globals
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"torch checkpoint: unexpected global {module}.{name}")


class _Inert:
    """Stands for every object while the storages' dtypes are collected: it runs no code."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __call__(self, *args, **kwargs):
        return _Inert()

    def __setstate__(self, state) -> None:
        pass

    def __setitem__(self, key, value) -> None:
        pass

    def append(self, value) -> None:
        pass

    def extend(self, values) -> None:
        pass


class _StorageDtypes(pickle.Unpickler):
    """A dry pass over the main pickle: the dtype of each storage key (the raw storages that
    follow the pickle record element counts, so their byte sizes need the dtypes)."""

    def __init__(self, file) -> None:
        super().__init__(file)
        self.dtypes: dict = {}

    def find_class(self, module, name):
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(name, _STORAGE_DTYPES[name])
        return _Inert

    def persistent_load(self, pid):
        if isinstance(pid, tuple) and len(pid) == 6 and isinstance(pid[1], _StorageType):
            self.dtypes[str(pid[2])] = pid[1].dtype
            return _Inert()
        return _Inert  # ('module', class, file, source): a class


def load_torch_legacy(f, fh, place, weights_only: bool):
    """Load a legacy ``torch.save`` file open as ``fh``: three header pickles (magic number,
    protocol, system info), the object pickle, the list of storage keys, then each storage as an
    element count (int64) followed by its bytes."""
    import pickletools

    try:
        magic, protocol, info = (_PlainUnpickler(fh).load() for _ in range(3))
        if magic != _LEGACY_MAGIC or protocol != _LEGACY_PROTOCOL or not isinstance(info, dict):
            raise _bad(f, "not a legacy torch checkpoint (bad magic number or protocol)")
        start = fh.tell()
        for _ in pickletools.genops(fh):  # walks to the object pickle's end, running nothing
            pass
        end = fh.tell()
        fh.seek(start)
        blob = fh.read(end - start)
        keys = _PlainUnpickler(fh).load()
        dry = _StorageDtypes(io.BytesIO(blob))
        dry.load()
        order = "<" if info.get("little_endian", True) else ">"
        raw = {}
        for key in keys:
            (numel,) = struct.unpack(order + "q", fh.read(8))
            dtype = dry.dtypes.get(str(key))
            if dtype is None or numel < 0:
                raise _bad(f, f"storage '{key}' has no dtype or a bad size")
            raw[str(key)] = bytearray(fh.read(numel * dtype.np.itemsize))
    except RuntimeError:
        raise
    except Exception as e:  # noqa: BLE001 - any failure of the header or the dry pass
        raise _bad(f, f"a truncated or corrupt legacy torch checkpoint ({e})") from None

    def read_storage(key):
        if key not in raw:
            raise _bad(f, f"the file has no data for storage '{key}'")
        return key, raw[key]

    up = _TorchUnpickler(io.BytesIO(blob), f, read_storage, place, weights_only, order == ">")
    return up.load()
