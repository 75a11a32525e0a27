"""Checkpoints: ``ember.save`` / ``ember.load`` (safe, atomic, named, interoperable).

Two on-disk formats:

* Safe (the default whenever possible): tensors, state_dicts and nested dict / list / tuple /
  OrderedDict containers of tensors, numbers, strings, bools and None are written as a
  safetensors file. The tensors are the file's entries; the container structure and each
  tensor's names are JSON in the header's ``__metadata__``. Loading it never executes code, and
  ``safetensors`` readers of other frameworks read its tensors.
* Pickle (anything else: a Module, a numpy array, an argparse Namespace...): a magic prefix, a
  pickle stream whose tensors are persistent ids, then the tensors' raw bytes. Loading it needs
  ``weights_only=False`` unless every global it names is allow-listed
  (:func:`add_safe_globals` / :func:`safe_globals`).

Writes to a path are atomic: a temp file in the same folder, flush + fsync, ``os.replace``.
"""

from __future__ import annotations

import builtins
import codecs
import collections
import contextlib
import enum
import io
import json
import mmap as _mmap
import os
import pickle
import re
import struct
import sys
import tempfile
import warnings
from typing import Any

import numpy as np

from . import dtype as _dt
from . import layout as _layout
from .device import device as _device
from .tensor import Size, Tensor, _wrap

__all__ = [
    "LoadEndianness",
    "SourceChangeWarning",
    "add_safe_globals",
    "clear_safe_globals",
    "get_default_load_endianness",
    "get_safe_globals",
    "get_unsafe_globals_in_checkpoint",
    "load",
    "load_safetensors",
    "safe_globals",
    "save",
    "save_safetensors",
    "set_default_load_endianness",
]

DEFAULT_PROTOCOL = 2  # torch.serialization's; ember's own pickles use the highest protocol
_PICKLE_MAGIC = b"EMBERPK1"
# save(..., _use_new_zipfile_serialization=False): the same formats, marked so that loading them
# with mmap=True fails as torch's legacy files do
_PICKLE_MAGIC_LEGACY = b"EMBERPL1"
_META_LEGACY = "ember.legacy"
_MAX_HEADER = 100_000_000  # safetensors' own limit on the JSON header
_META_STRUCT = "ember.structure"
_META_NAMES = "ember.names"

# safetensors dtype codes <-> ember dtypes
_ST_CODES = {
    _dt.float64: "F64",
    _dt.float32: "F32",
    _dt.float16: "F16",
    _dt.bfloat16: "BF16",
    _dt.int64: "I64",
    _dt.int32: "I32",
    _dt.int16: "I16",
    _dt.int8: "I8",
    _dt.uint8: "U8",
    _dt.uint16: "U16",
    _dt.uint32: "U32",
    _dt.uint64: "U64",
    _dt.bool_: "BOOL",
    _dt.complex64: "C64",
    _dt.complex128: "C128",  # not a safetensors code: other readers reject it
}
_FROM_CODE = {v: k for k, v in _ST_CODES.items()}


class SourceChangeWarning(Warning):
    """torch's warning that a pickled module's source changed since it was saved (ember rebuilds
    modules from its own classes and never warns it; scripts filter it by this name)."""


class LoadEndianness(enum.Enum):
    """The byte order :func:`set_default_load_endianness` takes for a torch checkpoint that does
    not record its own."""

    NATIVE = 1
    LITTLE = 2
    BIG = 3


_LOAD_ENDIANNESS: list = [None]  # None: native, as torch's default


def get_default_load_endianness() -> LoadEndianness | None:
    """The byte order assumed for a torch checkpoint without a byteorder record (None: native)."""
    return _LOAD_ENDIANNESS[0]


def set_default_load_endianness(endianness: LoadEndianness | None) -> None:
    """Set the byte order assumed for a torch checkpoint without a byteorder record."""
    if not isinstance(endianness, LoadEndianness) and endianness is not None:
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _LOAD_ENDIANNESS[0] = endianness


def _fallback_byteorder() -> str:
    e = _LOAD_ENDIANNESS[0]
    if e is None or e is LoadEndianness.NATIVE:
        return sys.byteorder
    return "big" if e is LoadEndianness.BIG else "little"


class _SafeUnsupported(Exception):
    """The object does not fit the safe (safetensors) format."""


# ------------------------------------------------------------------------------ errors / files
def _fname(f) -> str:
    if isinstance(f, (str, os.PathLike)):
        return os.fspath(f)
    return getattr(f, "name", None) or repr(f)


def _bad(f, problem: str) -> RuntimeError:
    return RuntimeError(f"ember.load: '{_fname(f)}' is not a valid checkpoint: {problem}")


@contextlib.contextmanager
def _atomic_writer(f, errors: str | None = None):
    """Yield a binary file to write. For a path: a temp file in the same folder that replaces the
    destination only once it is completely written and fsynced (the old file is untouched on any
    error or crash). ``errors``: whose errors a bad path gets: torch.save's zip writer's ('zip'),
    those of the open(f, 'wb') of its legacy format ('open'), else ember's."""
    if not isinstance(f, (str, os.PathLike)):
        if not hasattr(f, "write"):  # before anything is pickled (torch's check)
            raise AttributeError(
                "expected 'f' to be string, path, or a file-like object with a 'write' attribute"
            )
        yield f
        if hasattr(f, "flush"):
            f.flush()
        return
    name = os.fspath(f)
    zip_errors = errors == "zip"
    if zip_errors and not os.path.basename(name):  # '' or a trailing '/': checked first
        raise RuntimeError(f"[enforce fail at inline_container.cc:720] . invalid file name: {name}")
    parent = os.path.dirname(name)
    if errors == "open" and (
        not os.path.basename(name) or (parent and not os.path.isdir(parent)) or os.path.isdir(name)
    ):
        open(name, "ab").close()  # fails, with open's own error ("ab": no harm if it did not)
    if parent and not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {parent} does not exist.")  # torch's check
    path = os.path.realpath(name)  # through a symlink: the link stays, its target changes
    if os.path.exists(path) and not os.path.isfile(path):
        if zip_errors and os.path.isdir(path):
            raise RuntimeError(
                "[enforce fail at inline_container.cc:747] . open file failed with strerror: "
                "Is a directory"
            )
        with open(path, "wb") as out:  # a device or FIFO (/dev/null): written, never replaced
            yield out
        return
    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        os.chmod(tmp, _new_file_mode(path))  # mkstemp's 0600 would hide it from other users
        with os.fdopen(fd, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def _new_file_mode(path: str) -> int:
    """The mode open(path, 'wb') would leave: the old file's, else 0666 less the umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _cpu_array(t: Tensor) -> np.ndarray:
    a = t._data if type(t._data) is np.ndarray else t.detach().cpu()._data
    return a if a.flags.c_contiguous else a.copy()  # ascontiguousarray makes 0-d arrays 1-d


# ------------------------------------------------------------------------------ safetensors
def _write_safetensors(out, entries: list, metadata: dict[str, str] | None) -> None:
    """entries: (key, array) pairs, arrays C-contiguous cpu numpy."""
    header: dict[str, Any] = {}
    if metadata:
        header["__metadata__"] = metadata
    off = 0
    for key, a in entries:
        code = _ST_CODES[_dt._FROM_NP[a.dtype]]
        header[key] = {"dtype": code, "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        off += a.nbytes
    hb = json.dumps(header, separators=(",", ":")).encode()
    hb += b" " * (-len(hb) % 8)  # like safetensors: the data starts 8-byte aligned
    # memoryviews, as torch writes: a text-mode file's TypeError then reads as torch's
    out.write(memoryview(struct.pack("<Q", len(hb))))
    out.write(memoryview(hb))
    for _, a in entries:
        if a.nbytes:
            out.write(a.reshape(-1).view(np.uint8).data)


def _read_safetensors(f, mmap: bool):
    """(header dict, metadata dict, {key: numpy array}) of a safetensors file or file object.
    Everything the header claims is checked against the file's real size before any read."""
    is_path = isinstance(f, (str, os.PathLike))
    if is_path:
        try:
            fh = open(f, "rb")  # noqa: SIM115
        except FileNotFoundError:
            raise FileNotFoundError(f"ember.load: no such file: '{os.fspath(f)}'") from None
    else:
        fh = f
    try:
        start = fh.tell() if hasattr(fh, "tell") else 0
        try:
            size = os.fstat(fh.fileno()).st_size - start
        except (AttributeError, OSError, io.UnsupportedOperation):
            cur = fh.tell()
            size = fh.seek(0, 2) - cur
            fh.seek(cur)
        head = fh.read(8)
        if len(head) < 8:
            err = _bad(f, f"the file is too short ({len(head)} bytes) to hold a header")
            if not head:  # torch.load of an empty file raises EOFError: code may catch it
                raise EOFError(str(err))
            raise err
        n = struct.unpack("<Q", head)[0]
        if n > _MAX_HEADER or n > size - 8:
            raise _bad(
                f,
                f"the header claims {n} bytes but the file has {size} bytes "
                "(truncated, or not a checkpoint)",
            )
        try:
            header = json.loads(fh.read(n).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise _bad(f, f"corrupt header ({e})") from None
        if not isinstance(header, dict):
            raise _bad(f, "corrupt header (not a JSON object)")
        meta = header.pop("__metadata__", None) or {}
        avail = size - 8 - n
        specs = []
        for key, e in header.items():
            try:
                dt = _FROM_CODE[e["dtype"]]
                shape = tuple(int(s) for s in e["shape"])
                b, end = (int(x) for x in e["data_offsets"])
            except (KeyError, TypeError, ValueError):
                raise _bad(f, f"corrupt header entry for tensor '{key}': {e!r}") from None
            if any(s < 0 for s in shape) or not 0 <= b <= end:
                raise _bad(f, f"corrupt header entry for tensor '{key}': {e!r}")
            nbytes = dt.np.itemsize * int(np.prod(shape, dtype=object))
            if end - b != nbytes:
                raise _bad(
                    f,
                    f"tensor '{key}' has shape {list(shape)} ({nbytes} bytes) but "
                    f"data_offsets span {end - b} bytes",
                )
            if end > avail:
                raise _bad(
                    f,
                    f"tensor '{key}' needs bytes up to {end} but the file has only {avail} "
                    "bytes of data (truncated?)",
                )
            specs.append((key, dt, shape, b))
        base = 8 + n
        buf = None
        if mmap and is_path:
            buf = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY) if size else b""
            base += start
        elif mmap and hasattr(fh, "fileno"):
            try:
                buf = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY)
                base += start
            except (OSError, io.UnsupportedOperation, ValueError):
                buf = None
        if buf is None:
            buf = bytearray(avail)  # one buffer: the tensors are views of it (no second copy)
            base = 0
            got = fh.readinto(buf) if hasattr(fh, "readinto") else None
            if got is None:
                data = fh.read(avail)
                got = len(data)
                buf[:got] = data
            if got < avail:
                raise _bad(f, "the file is truncated")
        arrays = {}
        for key, dt, shape, b in specs:
            count = int(np.prod(shape, dtype=np.int64))
            a = (
                np.frombuffer(buf, dtype=dt.np, count=count, offset=base + b)
                if count
                else (np.empty(0, dt.np))
            )
            arrays[key] = a.reshape(shape)
        return meta, arrays
    finally:
        if is_path:
            fh.close()


def save_safetensors(
    tensors: dict[str, Tensor], path, metadata: dict[str, str] | None = None
) -> None:
    """Write a flat ``{name: tensor}`` dict as a safetensors file readable by
    ``safetensors.torch.load_file`` (and the other safetensors readers). Tensors' dimension names
    go in the header's ``__metadata__`` (other readers ignore them). The write is atomic."""
    meta = dict(metadata or {})
    for k, v in meta.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError("save_safetensors: metadata must be a dict of str to str")
    entries, names = [], {}
    for k, t in tensors.items():
        if not isinstance(k, str) or not isinstance(t, Tensor):
            raise TypeError(
                f"save_safetensors: expected a dict of str to Tensor, got {k!r}: {type(t).__name__}"
            )
        entries.append((k, _cpu_array(t)))
        if t._names is not None:
            names[k] = list(t._names)
    if names:
        meta[_META_NAMES] = json.dumps(names)
    with _atomic_writer(path) as out:
        _write_safetensors(out, entries, meta or None)


def load_safetensors(path, *, mmap: bool = False) -> dict[str, Tensor]:
    """Read a safetensors file (written by ember or any safetensors writer) as ``{name: tensor}``;
    names stored by ember are restored, files without them load unnamed."""
    meta, arrays = _read_safetensors(path, mmap)
    names = _json_meta(path, meta, _META_NAMES) or {}
    return {k: _wrap(a, _names_of(names.get(k))) for k, a in arrays.items()}


def _json_meta(f, meta, key):
    s = meta.get(key)
    if s is None:
        return None
    try:
        return json.loads(s)
    except (TypeError, json.JSONDecodeError):
        raise _bad(f, f"corrupt '{key}' metadata") from None


def _names_of(n):
    return None if n is None else tuple(n)


# ------------------------------------------------------------------------------ safe structure
class _Encoder:
    """Encode a container tree as JSON nodes; tensors become safetensors entries."""

    def __init__(self):
        self.pending: list = []  # (entry key, tensor) in order; finish() makes the entries
        # (pointer, shape, strides, dtype, device) -> entry key: a tensor and the detached
        # copies a state_dict holds of it (tied weights) are stored once, and load sharing memory
        self.keys: dict[tuple, str] = {}
        self.nodes: dict[str, list] = {}  # entry key -> its nodes (finish() may repoint them)
        self.refs: dict[int, int] = {}  # id(tensor) -> which distinct tensor of its entry
        self.count: dict[str, int] = {}  # entry key -> distinct tensors seen on it
        self.used: set = set()
        self.keep: list = []  # keep tensors alive so ids stay unique
        # ids of the lists and dicts met: one met twice is shared or holds itself, which only
        # pickle's memo rebuilds as torch's load does (the same object, once)
        self.mutables: set[int] = set()

    def key_for(self, path: str) -> str:
        k = path or "tensor"
        i = 1
        while k in self.used:
            k, i = f"{path}#{i}", i + 1
        self.used.add(k)
        return k

    def enc(self, obj, path: str):
        t = type(obj)
        if obj is None or t is bool or t is str or t is int:
            return obj
        if t is float:
            return {"float": repr(obj)}
        if isinstance(obj, Tensor):
            if type(obj) not in _SAFE_TENSOR_TYPES:
                raise _SafeUnsupported
            if obj.is_meta:  # no data: its shape and dtype, as torch writes a meta tensor
                meta = [list(obj.shape), list(obj.stride()), obj.dtype.name]
                return self._tagged({"meta": meta}, obj)
            mem = _mem_key(obj)
            k = self.keys.get(mem)
            if k is None:
                k = self.keys[mem] = self.key_for(path)
                self.pending.append((k, obj))
            ref = self.refs.get(id(obj))
            if ref is None:
                ref = self.refs[id(obj)] = self.count.get(k, 0)
                self.count[k] = ref + 1
                self.keep.append(obj)
            node = {"tensor": k, "device": str(obj.device)}
            if ref:
                node["ref"] = ref
            self.nodes.setdefault(k, []).append(node)
            return self._tagged(node, obj)
        if t is dict or t is collections.OrderedDict or t is list:
            if id(obj) in self.mutables:
                raise _SafeUnsupported
            self.mutables.add(id(obj))
        if t is dict or t is collections.OrderedDict:
            items = [
                [self.enc(k, ""), self.enc(v, f"{path}.{k}" if path else str(k))]
                for k, v in obj.items()
                if self._key_ok(k)
            ]
            node = {"odict" if t is collections.OrderedDict else "dict": items}
            md = getattr(obj, "_metadata", None)
            if md is not None:
                node["_metadata"] = self.enc(md, path + "._metadata")
            return node
        if t is list or t is tuple:
            return {
                t.__name__: [
                    self.enc(v, f"{path}.{i}" if path else str(i)) for i, v in enumerate(obj)
                ]
            }
        raise _SafeUnsupported

    @staticmethod
    def _tagged(node: dict, t: Tensor) -> dict:
        """``node`` with what a tensor's node says besides its data: requires_grad, names, class."""
        if t.requires_grad:
            node["requires_grad"] = True
        if t._names is not None:
            node["names"] = list(t._names)
        if type(t) is not Tensor:
            node["cls"] = "Parameter"
        return node

    def finish(self) -> list:
        """The (key, array) entries; views of one base share one entry (see _share_views), their
        nodes saying which view of it they are."""
        entries, views = _share_views(self.pending, lambda k: self.key_for(k + ".storage"))
        for k, (root, view) in views.items():
            for node in self.nodes[k]:
                node["tensor"], node["view"] = root, view
        return [(k, _cpu_array(t)) for k, t in entries]

    @staticmethod
    def _key_ok(k):
        if k is None or type(k) in (str, int, bool, float):
            return True
        raise _SafeUnsupported


_MIXED_DTYPES = (
    "Cannot save multiple tensors or storages that view the same data as different types"
)


def _mixed_dtypes(tensors) -> bool:
    """Whether two of ``tensors`` view one memory (one base) as different dtypes (x and
    x.view(int32)): torch refuses to save that, its storages having one dtype each."""
    dtypes: dict[int, Any] = {}
    keep = []  # the bases stay alive: their ids stay unique
    for t in tensors:
        base = t._extra.get("base") if t._extra else None
        base = t if base is None else base
        keep.append(base)
        if dtypes.setdefault(id(base), t.dtype) != t.dtype:
            return True
    return False


def _mem_key(t: Tensor) -> tuple:
    """(pointer, shape, strides, dtype, device): equal for tensors showing the same elements."""
    a = t._data
    iface = getattr(a, "__array_interface__", None) or a.__cuda_array_interface__
    return (iface["data"][0], a.shape, a.strides, a.dtype.str, str(t.device))


def _share_views(pending: list, new_key) -> tuple[list, dict]:
    """What to store for ``pending``, (key, tensor) pairs of distinct memory in saving order.

    Distinct views of one base (a tensor and its slices, or two slices of one tensor) are
    stored once, as the base (under the key of the member that is all of it, else under
    ``new_key(first member's key)``), so they load as views sharing memory, as torch's storages
    do; a view saved alone keeps only its own elements, unless it shows all its base's (a
    transpose keeps its strides, an expanded tensor stores its base, as torch's). Returns
    ``(entries, views)``: the (key, tensor to store) pairs, and {key: (stored key, [shape,
    stride, storage_offset])} for the members stored as views of another entry."""
    groups: dict[int, tuple] = {}
    for k, t in pending:
        base = _shareable_base(t)
        if base is not None:
            groups.setdefault(id(base), (base, []))[1].append((k, t))
    root_of: dict = {}
    for base, members in groups.values():
        if len(members) < 2 and members[0][1].numel() < base.numel():
            continue  # a view of part of its base: stored alone (ember's choice, smaller files)
        root = next((k for k, t in members if _is_whole(t, base)), None)
        if root is None:
            root = new_key(members[0][0])
        for k, _ in members:
            root_of[k] = (root, base)
    entries, views, done = [], {}, set()
    for k, t in pending:
        if k not in root_of:
            entries.append((k, t))
            continue
        root, base = root_of[k]
        if root not in done:
            done.add(root)
            entries.append((root, base))
        if k != root:
            views[k] = (root, [list(t.shape), list(t.stride()), t.storage_offset()])
    return entries, views


def _shareable_base(t: Tensor):
    """The tensor whose memory ``t`` views (itself when it is no view), if loading could rebuild
    ``t`` as a view of it: cpu tensors of one dtype, a contiguous unnamed base holding all of
    ``t``'s elements. None otherwise (``t`` is then saved on its own)."""
    base = t._extra.get("base") if t._extra else None
    if base is None:
        base = t
    if type(t._data) is not np.ndarray or type(base._data) is not np.ndarray:
        return None  # cpu memory only: device tensors are saved on their own
    if base._data.dtype != t._data.dtype:
        return None
    if t._names is not None or base._names is not None or not base.is_contiguous():
        return None
    off = t.storage_offset()
    if off < 0 or t.numel() == 0:
        return None
    last = off + sum((n - 1) * st for n, st in zip(t.shape, t.stride()))
    if min(t.stride(), default=0) < 0 or last >= base.numel():
        return None
    return base


def _is_whole(t: Tensor, base: Tensor) -> bool:
    """Whether ``t`` is all of ``base`` (same elements, shape and layout)."""
    return t.storage_offset() == 0 and t.shape == base.shape and t.stride() == base.stride()


def _safe_tensor_types():
    from ..nn.parameter import Parameter

    return (Tensor, Parameter)


_SAFE_TENSOR_TYPES: tuple = ()


def _decode(node, arrays, f, place, made):
    if node is None or isinstance(node, (bool, int, str)):
        return node
    if isinstance(node, list):
        raise _bad(f, "corrupt structure metadata")
    if "float" in node:
        return builtins.float(node["float"])
    if "meta" in node:  # a meta tensor loads as one, whatever map_location says (as torch's)
        shape, stride, dt = node["meta"]
        if dt not in _dt._NAMES:
            raise _bad(f, f"unknown dtype '{dt}'")
        t = meta_tensor(shape, stride, _dt._by_name(dt))
        if node.get("names") is not None:
            t = t.rename(*_names_of(node["names"]))
        return _loaded_as(t, node)
    if "tensor" in node:
        k = node["tensor"]
        if k not in arrays:
            raise _bad(f, f"the structure names a missing tensor '{k}'")
        view = node.get("view")
        memo_key = (
            k,
            node.get("cls"),
            bool(node.get("requires_grad")),
            node.get("ref"),
            json.dumps(view),
        )
        if memo_key in made:
            return made[memo_key]
        if view is not None:  # a view of the entry (see _Encoder.finish): share its memory
            base = made.get(k)
            if base is None:
                base = made[k] = place(_wrap(arrays[k]), node.get("device", "cpu"))
            from ..autograd.grad_mode import no_grad

            with no_grad():  # sharing memory only: torch's loaded tensors are no autograd views
                t = base.as_strided(view[0], view[1], view[2]).detach()
        elif node.get("names") is None and not node.get("ref"):
            # the entry itself: the base its views (loaded before or after) are made of
            t = made.get(k)
            if t is None:
                t = made[k] = place(_wrap(arrays[k]), node.get("device", "cpu"))
        else:
            t = place(_wrap(arrays[k], _names_of(node.get("names"))), node.get("device", "cpu"))
        made[memo_key] = t = _loaded_as(t, node)
        return t
    for kind in ("dict", "odict"):
        if kind in node:
            d = {} if kind == "dict" else collections.OrderedDict()
            for k, v in node[kind]:
                d[_decode(k, arrays, f, place, made)] = _decode(v, arrays, f, place, made)
            if "_metadata" in node:
                d._metadata = _decode(node["_metadata"], arrays, f, place, made)  # type: ignore
            return d
    if "list" in node:
        return [_decode(v, arrays, f, place, made) for v in node["list"]]
    if "tuple" in node:
        return tuple(_decode(v, arrays, f, place, made) for v in node["tuple"])
    raise _bad(f, "corrupt structure metadata")


def meta_tensor(shape, stride, dtype) -> Tensor:
    """A loaded meta tensor (ember's files and torch's): its shape, strides and dtype, no data."""
    from .meta import meta_empty

    t = _wrap(meta_empty(tuple(shape), dtype.np))
    return t if tuple(stride) == t.stride() else t.as_strided(tuple(shape), tuple(stride))


def _loaded_as(t: Tensor, node: dict) -> Tensor:
    """``t`` as the node saved it: a Parameter, or requiring grad."""
    if node.get("cls") == "Parameter":
        from ..nn.parameter import Parameter

        return Parameter(t, requires_grad=bool(node.get("requires_grad")))
    if node.get("requires_grad"):
        t.requires_grad_(True)
    return t


# ------------------------------------------------------------------------------ map_location
def _to(t: Tensor, dst) -> Tensor:
    """``t`` on device ``dst``; torch's advice when the checkpoint wants a GPU there is none of,
    or one past the last."""
    d = _device(dst)
    if d.type == "cuda":
        from ..cuda_ import device_count, is_available

        if not is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
                "is False. If you are running on a CPU-only machine, please use torch.load with "
                "map_location=torch.device('cpu') to map your storages to the CPU."
            )
        n = device_count()
        if (d.index or 0) >= n:
            raise RuntimeError(
                f"Attempting to deserialize object on CUDA device {d.index or 0} but "
                f"torch.cuda.device_count() is {n}. Please use torch.load with map_location to "
                "map your storages to an existing device."
            )
    return t.to(d)


def _restore(t: Tensor, location) -> Tensor:
    """``t`` (loaded on the cpu) where the location tag ``location`` says, by torch's rules for
    tags: 'cpu' and 'meta' exactly, 'cuda' alone or before ':' or a digit (torch's other
    backends: ember's error that it has no such device); any other tag is torch's error. A tag
    that is no str fails in ``re.match`` with torch's TypeError."""
    if location == "cpu":
        return t
    if location == "meta" or re.match("cuda(:|[0-9]|$)", location):
        return _to(t, location)
    if location.startswith("mps") or re.match("(xpu|hpu|mtia)(:|[0-9]|$)", location):
        raise RuntimeError(_absent_backend(location))
    raise RuntimeError(
        "don't know how to restore data location of torch.storage.UntypedStorage "
        f"(tagged with {location})"
    )


def _absent_backend(location: str) -> str:
    """torch's text for a tag of a backend it knows but this build lacks (as a cpu build)."""
    if location.startswith("mps"):
        return "torch.UntypedStorage(): Storage device not recognized: mps"
    cpu_advice = (
        "If you are running on a CPU-only machine, please use torch.load with "
        "map_location=torch.device('cpu') to map your storages to the CPU."
    )
    if location.startswith("hpu"):
        return f"The HPU device module is not registered. {cpu_advice}"
    kind = location[:4] if location.startswith("mtia") else location[:3]
    if not re.fullmatch(f"{kind}(:(0|[1-9][0-9]*))?", location):
        return f"Invalid device string: '{location}'"
    if location == "mtia":
        return "Cannot execute getCurrentDevice() without MTIA backend."
    return (
        f"Attempting to deserialize object on a {kind.upper()} device but "
        f"torch.{kind}.is_available() is False. {cpu_advice}"
    )


def _placer(map_location):
    """A function (cpu tensor, saved location tag) -> tensor where ``map_location`` says: as
    torch's, it checks ``map_location`` only when a tensor is placed (a checkpoint without
    tensors loads whatever it is), and anything but None, a dict, a str or a device is called.
    A dict's values may be devices too (torch takes only tags)."""
    if map_location is None:
        return _restore
    if isinstance(map_location, dict):

        def place(t, loc):
            dst = map_location.get(loc, loc)
            return _restore(t, str(dst) if isinstance(dst, _device) else dst)  # ember: a device

        return place
    if isinstance(map_location, (str, bytes, _device)):
        location = map_location if isinstance(map_location, (str, bytes)) else str(map_location)
        return lambda t, loc: _restore(t, location)

    def place(t, loc):
        r = map_location(t, loc)
        return _restore(t, loc) if r is None else r

    return place


class _PlaceFailed(Exception):
    """map_location's placing failed while a safe file's structure was decoded: its error is
    the caller's, not a sign of a corrupt file (``__cause__`` holds it)."""


def _escaping(place):
    def run(t, loc):
        try:
            return place(t, loc)
        except Exception as e:
            raise _PlaceFailed from e

    return run


# ------------------------------------------------------------------------------ pickle format
_SAFE_ITEMS: dict = {}  # the allow-listed items as given (an ordered set, like torch's set)


def _default_safe():
    from ..nn.parameter import Parameter
    from .quantized import _rebuild as _rebuild_quantized
    from .sparse import _rebuild_sparse

    d = {
        (_rebuild_sparse.__module__, "_rebuild_sparse"): _rebuild_sparse,
        (_rebuild_quantized.__module__, "_rebuild"): _rebuild_quantized,
        ("collections", "OrderedDict"): collections.OrderedDict,
        (Parameter.__module__, "Parameter"): Parameter,
        (Tensor.__module__, "Tensor"): Tensor,
        # torch's builtins (frozenset and slice stay out: its weights_only load refuses them)
        ("builtins", "set"): set,
        ("builtins", "complex"): complex,
        ("builtins", "bytearray"): bytearray,
        ("_codecs", "encode"): codecs.encode,  # how protocol-2 pickles (torch.save's) hold bytes
        ("collections", "Counter"): collections.Counter,
        # the plain values a checkpoint's config holds, as torch allows them
        (_dt._by_name.__module__, "_by_name"): _dt._by_name,  # dtypes
        (_device.__module__, "device"): _device,
        (Size.__module__, "Size"): Size,
    }
    for name in _layout.__all__:
        obj = getattr(_layout, name)
        if isinstance(obj, (_layout.layout, _layout.memory_format)):
            d[(_layout.__name__, name)] = obj
    return d


def add_safe_globals(safe_globals: list) -> None:
    """Allow-list globals (classes, functions) so that ``ember.load(weights_only=True)`` may load
    pickle checkpoints naming them. Items are objects or ``(object, "module.qualname")``; like
    torch's, they are checked when a load reads them."""
    _SAFE_ITEMS.update(dict.fromkeys(safe_globals))


def _user_globals() -> dict:
    """{(module, name): object} of the allow-listed globals (torch's errors for bad items)."""
    out = {}
    for g in _SAFE_ITEMS:
        if isinstance(g, tuple):
            if len(g) != 2:
                raise ValueError(
                    "Expected tuple of length 2 (global, str of callable full path), but got "
                    f"tuple of length: {len(g)}"
                )
            if type(g[1]) is not str:
                raise TypeError(
                    "Expected second item in tuple to be str of callable full path, but got: "
                    f"{type(g[1])}"
                )
            obj, full = g
            mod, _, name = full.rpartition(".")
        elif isinstance(g, (_dt.dtype, _device, _layout.layout, _layout.memory_format)):
            continue  # instances, not globals: loadable by default already
        else:
            obj, mod, name = g, g.__module__, g.__qualname__
        out[(mod, name)] = obj
    return out


def _allowed_global(allowed: dict, module: str, name: str):
    """What a weights_only load may use for the global ``module.name``: a default (``allowed``),
    else the user's allow-listed one (read only then, as torch reads them), else refused."""
    obj = allowed.get((module, name))
    if obj is None:
        obj = _user_globals().get((module, name))
        if obj is None:
            raise pickle.UnpicklingError(_weights_only_message(module, name))
    return obj


def get_safe_globals() -> list:
    """The user's allow-listed globals, as they were given to :func:`add_safe_globals`."""
    return list(_SAFE_ITEMS)


def clear_safe_globals() -> None:
    """Forget every allow-listed global."""
    _SAFE_ITEMS.clear()


class safe_globals:
    """Context manager: the given globals are allow-listed inside the block only."""

    def __init__(self, safe_globals: list):
        self.globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.globals)

    def __exit__(self, *exc):
        # torch removes the block's globals, even ones allow-listed before it, and keeps ones
        # add_safe_globals added inside it
        for g in self.globals:
            _SAFE_ITEMS.pop(g, None)


class _Pickler(pickle.Pickler):
    """Tensors become persistent ids. Without a plan (the first pass) it only collects them; with
    one ({id(tensor): (stored key, view, serial)} and {stored key: tensor to store}) it writes
    their ids, and the stored tensors' arrays on first use (a tensor the first pass saw only as a
    temporary, as a sparse tensor's __reduce__ makes them, costs nothing)."""

    def __init__(self, file, plan=None, stored=None):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.plan, self.stored = plan, stored
        self.arrays: list = []
        self.index: dict = {}  # stored key -> position in arrays
        self.seen: dict[int, Tensor] = {}  # id(tensor as pickled) -> tensor (detached)

    def persistent_id(self, obj):
        if not isinstance(obj, Tensor) or type(obj) not in _SAFE_TENSOR_TYPES or obj.is_meta:
            return None  # a meta tensor pickles as its shape and dtype
        if self.plan is None:
            if id(obj) not in self.seen:
                self.seen[id(obj)] = obj.detach() if obj._grad_fn is not None else obj
            return ("ember.probe",)
        entry = self.plan.get(id(obj))
        if entry is None:  # made by a __reduce__ in this pass: stored on its own
            self.seen[id(obj)] = obj  # alive until the dump ends: its id names only it
            key = ("new", len(self.plan))
            self.stored[key] = obj.detach() if obj._grad_fn is not None else obj
            entry = self.plan[id(obj)] = (key, None, len(self.plan))
        key, view, serial = entry
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.arrays)
            self.arrays.append(_cpu_array(self.stored[key]))
        a = self.arrays[i]
        return (
            "ember.tensor",
            i,
            a.dtype.str if a.dtype != _dt.bfloat16.np else "bf16",
            a.shape,
            str(obj.device),
            obj.requires_grad,
            obj._names,
            type(obj) is not Tensor,
            view,
            serial,
        )


def _pickle_bytes(obj) -> tuple[bytes, list]:
    probe = _Pickler(io.BytesIO())
    probe.dump(obj)  # probe.seen keeps its tensors alive: no id is reused by the second pass
    if _mixed_dtypes(probe.seen.values()):
        raise RuntimeError(_MIXED_DTYPES)
    keys: dict[tuple, int] = {}  # memory -> pending key
    pending, key_of = [], {}
    for oid, t in probe.seen.items():
        k = keys.setdefault(_mem_key(t), len(keys))
        if k == len(pending):
            pending.append((k, t))
        key_of[oid] = k
    fresh = iter(range(len(keys), 2 * len(keys) + 1))
    entries, views = _share_views(pending, lambda k: next(fresh))
    plan = {}
    for serial, (oid, k) in enumerate(key_of.items()):
        root, view = views.get(k, (k, None))
        plan[oid] = (root, view, serial)
    bio = io.BytesIO()
    writer = _Pickler(bio, plan, dict(entries))
    writer.dump(obj)
    return bio.getvalue(), writer.arrays


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, region, place, weights_only):
        super().__init__(file)
        self.region, self.place, self.weights_only = region, place, weights_only
        self.offsets: list = []
        self.made: dict = {}
        if weights_only:
            self.allowed = _default_safe()

    def find_class(self, module, name):
        if not self.weights_only:
            return super().find_class(module, name)
        return _allowed_global(self.allowed, module, name)

    def persistent_load(self, pid):
        # 8 fields: files of earlier ember versions (one array per tensor)
        if not (isinstance(pid, tuple) and len(pid) in (8, 10) and pid[0] == "ember.tensor"):
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        _, i, dts, shape, dev, rg, names, is_param = pid[:8]
        view, serial = pid[8:] if len(pid) == 10 else (None, ("legacy", i))
        if serial in self.made:
            return self.made[serial]
        dt = _dt.bfloat16.np if dts == "bf16" else np.dtype(dts)
        off = self.offsets[i]
        count = int(np.prod(shape, dtype=np.int64))
        a = (
            np.frombuffer(self.region, dtype=dt, count=count, offset=off)
            if count
            else np.empty(0, dt)
        ).reshape(shape)
        whole = view is None and names is None and ("claimed", i) not in self.made
        if view is not None or whole:
            base = self.made.get(("array", i))  # what the other views of the array are made of
            if base is None:
                base = self.made[("array", i)] = self.place(_wrap(a), dev)
            if whole:  # the first tensor that is all of the array is the base itself
                self.made[("claimed", i)] = True
                t = base
            else:
                from ..autograd.grad_mode import no_grad

                with no_grad():  # sharing memory only, as in _decode
                    t = base.as_strided(*view).detach()
        else:  # another tensor on the same memory (a detached copy), or a named one
            t = self.place(_wrap(a, _names_of(names)), dev)
        if is_param:
            from ..nn.parameter import Parameter

            t = Parameter(t, requires_grad=rg)
        elif rg:
            t.requires_grad_(True)
        self.made[serial] = t
        return t


_BLOCKED_MODULES = ("os", "posix", "nt", "sys")  # the modules torch's weights_only load blocks
_WO_LEAD = (
    "Weights only load failed. In PyTorch 2.6, we changed the default value of the "
    "`weights_only` argument in `torch.load` from `False` to `True`. Re-running `torch.load` "
    "with `weights_only` set to `False` will likely succeed, but it can result in arbitrary code "
    "execution. Do it only if you got the file from a trusted source."
)
_WO_TAIL = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default "
    "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)


def _weights_only_message(module, name) -> str:
    """torch.load's message for a global outside the weights_only allowlist (word for word:
    ``import ember as torch`` makes its advice work as written)."""
    full = name if module == "builtins" else f"{module}.{name}"
    if module in _BLOCKED_MODULES:  # torch names these modules outright, with no advice
        return (
            f"{_WO_LEAD}\n\n\nTrying to load unsupported GLOBAL {module}.{name} whose module "
            f"{module} is blocked.{_WO_TAIL}"
        )
    return (
        "Weights only load failed. This file can still be loaded, to do so you have two options, "
        "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. \n\t(1) In "
        "PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
        "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
        "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
        "file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please "
        "check the recommended steps in the following error message.\n\tWeightsUnpickler error: "
        f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{full}])` or the "
        f"`torch.serialization.safe_globals([{full}])` context manager to allowlist this global "
        "if you trust this class/function.\n\nCheck the documentation of torch.load to learn more "
        "about types accepted by default with weights_only "
        "https://pytorch.org/docs/stable/generated/torch.load.html."
    )


def _write_pickle(out, obj, magic: bytes = _PICKLE_MAGIC) -> None:
    blob, arrays = _pickle_bytes(obj)
    # layout: magic, pickle length, pickle, table (count, then nbytes per array), raw data
    out.write(memoryview(magic))  # a memoryview, as in _write_safetensors
    out.write(struct.pack("<QQ", len(blob), len(arrays)))
    out.write(blob)
    out.write(struct.pack(f"<{len(arrays)}Q", *(a.nbytes for a in arrays)))
    for a in arrays:
        if a.nbytes:
            out.write(a.reshape(-1).view(np.uint8).data)


def _check_frozensets(blob: bytes, allowed: dict) -> None:
    """Refuse a frozenset as torch's weights_only load does (its protocol-2 files name the global
    ``builtins.frozenset``; ember's protocol builds it with an opcode no global check sees)."""
    import pickletools

    if any(op.name == "FROZENSET" for op, _, _ in pickletools.genops(blob)):
        _allowed_global(allowed, "builtins", "frozenset")


def _read_pickle(f, fh, size, place, weights_only, mmap):
    hdr = fh.read(16)
    if len(hdr) < 16:
        raise _bad(f, "the file is truncated (pickle header)")
    nblob, narr = struct.unpack("<QQ", hdr)
    if nblob + 8 * narr > size - 24:
        raise _bad(
            f,
            f"the header claims {nblob + 8 * narr} bytes but the file has {size} bytes "
            "(truncated?)",
        )
    blob = fh.read(nblob)
    sizes = struct.unpack(f"<{narr}Q", fh.read(8 * narr))
    data_start = 24 + nblob + 8 * narr
    total = sum(sizes)
    if total > size - data_start:
        raise _bad(
            f,
            f"the tensors need {total} bytes but the file has {size - data_start} bytes "
            "of data (truncated?)",
        )
    region = None
    base = 0
    if mmap and hasattr(fh, "fileno"):
        try:
            region = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY)
            base = fh.tell()
        except (OSError, io.UnsupportedOperation, ValueError):
            region = None
    if region is None:
        region = bytearray(total)
        got = fh.readinto(region) if hasattr(fh, "readinto") else None
        if got is None:
            data = fh.read(total)
            got = len(data)
            region[:got] = data
        if got < total:
            raise _bad(f, "the file is truncated")
    up = _Unpickler(io.BytesIO(blob), region, place, weights_only)
    if weights_only and b"\x91" in blob:  # maybe a FROZENSET opcode (protocol 4+)
        _check_frozensets(blob, up.allowed)
    off = base
    for s in sizes:
        up.offsets.append(off)
        off += s
    try:
        return up.load()
    except (EOFError, struct.error) as e:
        raise _bad(f, f"corrupt pickle data ({e})") from None


# ------------------------------------------------------------------------------ save / load
def save(
    obj: object,
    f,
    pickle_module: Any = None,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
) -> None:
    """Save ``obj`` to ``f`` (a path or a writable binary file object).

    Tensors, state_dicts and nested dict/list/tuple/OrderedDict containers of tensors, numbers,
    strings, bools and None are written as a safetensors file (loading it never runs code);
    anything else is pickled, tensors stored as raw bytes. Writing to a path is atomic: the
    destination keeps its old content unless the new file was completely written."""
    global _SAFE_TENSOR_TYPES
    if not _SAFE_TENSOR_TYPES:
        _SAFE_TENSOR_TYPES = _safe_tensor_types()
    if pickle_module is not None:
        pickle_module.__name__  # noqa: B018  (torch reads it before anything: its AttributeError)
    enc = _Encoder()
    try:
        struct_node = enc.enc(obj, "")
        mixed = _mixed_dtypes(t for _, t in enc.pending)
        entries = enc.finish()
    except _SafeUnsupported:
        struct_node = None
    with _atomic_writer(f, "zip" if _use_new_zipfile_serialization else "open") as out:
        # torch makes its pickler once f is checked: a bad protocol fails here, nothing written
        (pickle_module or pickle).Pickler(io.BytesIO(), protocol=pickle_protocol)
        if struct_node is not None and mixed:
            raise RuntimeError(_MIXED_DTYPES)
        if struct_node is None:
            _write_pickle(
                out, obj, _PICKLE_MAGIC if _use_new_zipfile_serialization else _PICKLE_MAGIC_LEGACY
            )
        else:
            names = _named_entries(struct_node)
            meta = {"format": "pt", _META_STRUCT: json.dumps(struct_node)}
            if not _use_new_zipfile_serialization:
                meta[_META_LEGACY] = "1"
            if names:
                meta[_META_NAMES] = json.dumps(names)
            _write_safetensors(out, entries, meta)


def _named_entries(node, acc=None) -> dict:
    acc = {} if acc is None else acc
    if isinstance(node, dict):
        if "tensor" in node:
            if "names" in node:
                acc[node["tensor"]] = node["names"]
            return acc
        for v in node.values():
            _named_entries(v, acc)
    elif isinstance(node, list):
        for v in node:
            _named_entries(v, acc)
    return acc


def _pickle_globals(blob: bytes) -> list[tuple[str, str]]:
    """The (module, name) pairs a pickle stream looks up, read from its opcodes without running
    it. STACK_GLOBAL takes the two values pushed just before it: strings, or memo entries."""
    import pickletools

    found: list = []
    memo: dict = {}
    last: list = [None, None]  # the values of the two latest pushes (None: not a string)
    for op, arg, _ in pickletools.genops(blob):
        name = op.name
        if name in ("MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT"):
            memo[len(memo) if name == "MEMOIZE" else arg] = last[-1]
            continue
        if name in ("FRAME", "PROTO", "MARK"):
            continue
        value = None
        if name in ("GLOBAL", "INST"):
            module, _, qualname = arg.partition(" ")
            found.append((module, qualname))
        elif name == "STACK_GLOBAL":
            found.append((last[-2], last[-1]))
        elif name in ("GET", "BINGET", "LONG_BINGET"):
            value = memo.get(arg)
        elif isinstance(arg, str) and ("UNICODE" in name or "STRING" in name):
            value = arg
        last = [last[-1], value]
    return found


def get_unsafe_globals_in_checkpoint(f) -> list[str]:
    """The functions and classes (``"module.name"``) a checkpoint names that a
    ``weights_only=True`` load refuses: what :func:`add_safe_globals` would need, read without
    running any of the checkpoint's code. A safe-format (safetensors) file names none. Raises
    ValueError for anything that is not a checkpoint."""
    import _compat_pickle
    import zipfile

    from .torch_zip import _TorchUnpickler

    if hasattr(f, "read"):
        data = f.read()
    else:
        with open(f, "rb") as fh:
            data = fh.read()
    allowed = set(_default_safe()) | set(_user_globals())
    if data[:8] in (_PICKLE_MAGIC, _PICKLE_MAGIC_LEGACY) and len(data) >= 24:
        nblob = struct.unpack("<Q", data[8:16])[0]
        blob = data[24 : 24 + nblob]
    elif data[:2] == b"PK":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                pkls = [n for n in zf.namelist() if n == "data.pkl" or n.endswith("/data.pkl")]
                blob = zf.read(pkls[0]) if pkls else None
        except zipfile.BadZipFile:
            blob = None
        if blob is None:
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        allowed |= set(_TorchUnpickler(io.BytesIO(), f, None, None, True, False).allowed)
    else:
        try:
            _read_safetensors(io.BytesIO(data), False)
        except (RuntimeError, EOFError, ValueError):
            raise ValueError("Expected input to be a checkpoint returned by torch.save") from None
        return []
    out: list[str] = []
    for module, name in _pickle_globals(blob):
        # protocol 2 pickles name some builtins by their Python 2 homes
        module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        full = f"{module}.{name}"
        if (module, name) not in allowed and full not in out:
            out.append(full)
    return out


class _InertUnpickler(pickle.Unpickler):
    """Reads a file of no known format as torch does (as a legacy checkpoint's leading pickle)
    for its errors; imports nothing but weights_only's allowed globals (torch's own load would
    import anything, without weights_only)."""

    def __init__(self, file, weights_only: bool):
        super().__init__(file)
        self.weights_only = weights_only

    def find_class(self, module, name):
        if (module, name) in _default_safe():
            raise _Refused(None)  # torch would go on, to find no magic number
        if self.weights_only:  # torch's refusal, word for word
            try:
                _allowed_global({}, module, name)
            except pickle.UnpicklingError as e:
                raise _Refused(e) from None
            raise _Refused(None)
        raise pickle.UnpicklingError(f"ember.load: not a checkpoint (it names {module}.{name})")


class _Refused(Exception):
    """The unpickling stopped at a global: weights_only's error for it, or None (allowed)."""


def _not_a_checkpoint(fh, head: bytes, weights_only: bool) -> Exception:
    """torch's error for a file of no checkpoint format: EOFError for an empty one, else what its
    unpickler meets in the bytes (torch's weights_only unpickler wraps it in its own message), or
    a bad magic number when they do unpickle."""
    if not head:
        return EOFError("" if weights_only else "Ran out of input")
    if weights_only and head[:1] == b"\x80" and head[2:3] == b"\x95":
        inner = "Unsupported operand 149"  # protocol 4+: torch's unpickler has no FRAME
    else:
        try:
            _InertUnpickler(fh, weights_only).load()
        except _Refused as r:
            return r.args[0] or RuntimeError("Invalid magic number; corrupt file?")
        except Exception as e:  # noqa: BLE001  (what the bytes make pickle raise: torch's error)
            if not weights_only:
                return e
            inner = str(e)
            m = re.fullmatch(r"invalid load key, '(.*)'\.", inner, re.DOTALL)
            if m and isinstance(e, pickle.UnpicklingError):  # torch's words: an unknown opcode
                inner = f"Unsupported operand {ord(m.group(1).encode().decode('unicode_escape'))}"
            m = re.fullmatch(r"Memo value not found at index (\d+)", inner)
            if m:  # torch's unpickler looks its memo up as a dict
                return KeyError(int(m.group(1)))
        else:
            return RuntimeError("Invalid magic number; corrupt file?")
    return pickle.UnpicklingError(
        f"{_WO_LEAD}\nPlease file an issue with the following so that we can make "
        "`weights_only=True` compatible with your use case: WeightsUnpickler error: "
        f"\n\n{inner}{_WO_TAIL}"
    )


def _mmap_legacy_error(f) -> RuntimeError:
    f_name = f"{f}, " if isinstance(f, str) else ""
    return RuntimeError(
        "mmap can only be used with files saved with "
        f"`torch.save({f_name}_use_new_zipfile_serialization=True), "
        "please torch.save your checkpoint with this option in order to use mmap."
    )


def _check_pickle_load_args(kwargs: dict, weights_only: bool) -> None:
    """torch's warning that ``weights_only`` loads ignore them, and its TypeError for a keyword
    its unpickler takes not (``encoding`` only under ``weights_only``, also
    ``errors``/``fix_imports``/``buffers`` without it)."""
    if weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=3)
    known = ("encoding",) if weights_only else ("encoding", "errors", "fix_imports", "buffers")
    for k in kwargs:
        if k not in known:
            raise TypeError(
                f"Unpickler.__init__() got an unexpected keyword argument '{k}'"
                if weights_only
                else f"'{k}' is an invalid keyword argument for Unpickler()"
            )


def load(
    f,
    map_location=None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args,
) -> Any:
    """Load what :func:`save` wrote (or any safetensors file: a flat ``{name: tensor}`` dict).

    ``map_location``: None (the saved devices), 'cpu', 'cuda', an ember.device, a dict
    ``{saved: target}``, or a callable ``(tensor, saved_location) -> tensor or None``.
    ``weights_only`` (default True, False when a ``pickle_module`` is given, as in torch): pickle
    checkpoints load only if every global they name is allow-listed; pass ``weights_only=False``
    for trusted files holding arbitrary objects. ``mmap`` needs ``f`` to be a path.
    ``mmap=True`` maps the file (copy-on-write) instead of reading it: the tensors are views of the
    mapping, so loading adds only the pages touched to the resident memory (a test bounds the peak
    RSS growth of loading a 200 MB checkpoint without touching it at under 30 MB; reading it all,
    ``mmap=False``, costs one copy of the data, never two)."""
    global _SAFE_TENSOR_TYPES
    if not _SAFE_TENSOR_TYPES:
        _SAFE_TENSOR_TYPES = _safe_tensor_types()
    place = _placer(map_location)
    if weights_only is None:
        weights_only = pickle_module is None  # an explicit pickle module means a trusted file
    elif weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_module is not None:  # torch reads these first (their AttributeErrors), uses neither
        pickle_module.__name__  # noqa: B018
        pickle_module.Unpickler  # noqa: B018
    if pickle_load_args:
        _check_pickle_load_args(pickle_load_args, weights_only)
    is_path = isinstance(f, (str, os.PathLike))
    if mmap and not is_path:
        raise ValueError("f must be a file path in order to use the mmap argument")
    if is_path:
        fh = open(f, "rb")  # noqa: SIM115  (a missing file or a folder: open's own errors)
    else:
        fh = f
        if not hasattr(f, "seek"):  # torch's error for bytes, None, an int...
            raise AttributeError(
                f"'{type(f).__name__}' object has no attribute 'seek'. You can only torch.load "
                "from a file that is seekable. Please pre-load the data into a buffer like "
                "io.BytesIO and try to load from it instead."
            )
    try:
        start = fh.tell()
        head = fh.read(32)
        magic = head[:8]
        fh.seek(start)
        if magic == _PICKLE_MAGIC or magic == _PICKLE_MAGIC_LEGACY:
            if mmap and magic == _PICKLE_MAGIC_LEGACY:
                raise _mmap_legacy_error(f)
            fh.seek(start + 8)
            try:
                size = os.fstat(fh.fileno()).st_size - start
            except (AttributeError, OSError, io.UnsupportedOperation):
                size = fh.seek(0, 2) - start
                fh.seek(start + 8)
            return _read_pickle(f, fh, size, place, weights_only, bool(mmap))
        if magic[:4] == b"PK\x03\x04":  # torch.save's zip (mmap: ignored, storages are read)
            from .torch_zip import load_torch_zip

            return load_torch_zip(f, fh, place, weights_only)
        from .torch_zip import is_torch_legacy, load_torch_legacy

        if is_torch_legacy(head):  # torch.save(..., _use_new_zipfile_serialization=False)
            if mmap:  # its storages are interleaved with pickles: nothing to map (torch's error)
                raise _mmap_legacy_error(f)
            return load_torch_legacy(f, fh, place, weights_only)
        if head[8:9] != b"{":  # no safetensors header: torch's errors for it
            raise _not_a_checkpoint(fh, head, weights_only)
        meta, arrays = _read_safetensors(fh if not is_path else f, bool(mmap))
        if mmap and meta.get(_META_LEGACY):
            raise _mmap_legacy_error(f)
    finally:
        if is_path:
            fh.close()
    struct_node = _json_meta(f, meta, _META_STRUCT)
    if struct_node is None:  # a plain safetensors file (written by another framework)
        names = _json_meta(f, meta, _META_NAMES) or {}
        return {k: place(_wrap(a, _names_of(names.get(k))), "cpu") for k, a in arrays.items()}
    try:
        return _decode(struct_node, arrays, f, _escaping(place), {})
    except _PlaceFailed as e:
        raise e.__cause__ from None
    except (TypeError, ValueError, KeyError, AttributeError) as e:
        raise _bad(f, f"corrupt structure metadata ({e})") from e


# `import ember.serialization` / `from ember.serialization import ...` (torch.serialization)
sys.modules.setdefault(__name__.rsplit(".", 2)[0] + ".serialization", sys.modules[__name__])
