"""Shared cpu memory for ``Tensor.share_memory_`` that survives the ``spawn`` start method.

A shared tensor's data lives in a file mapping (in ``/dev/shm`` where there is one): forked children
inherit the mapping, and a child started by ``spawn`` or ``forkserver`` receives, instead of a copy
of the values, the file's name plus the tensor's place in it and maps the same memory. That is what
Hogwild training relies on (pytorch/examples mnist_hogwild: ``model.share_memory()`` then
``mp.set_start_method('spawn')``): each worker's optimizer steps write the parent's parameters.

Only multiprocessing's pickler sends the reference (``reduce_for_process``, registered by
ember.multiprocessing); ``torch.save`` and plain ``pickle`` still store the values.
"""

from __future__ import annotations

import mmap
import os
import tempfile
import uuid
import weakref

import numpy as np

# the mappings this process made or opened: id(mmap) -> (weak ref to the mmap, path, address);
# a mapping is freed with the last array on it, as before sharing existed
_SEGMENTS: dict[int, tuple[weakref.ref, str, int]] = {}
# the mappings opened in a child, by path, so every tensor of one segment shares one mapping
_OPENED: dict[str, mmap.mmap] = {}


def _folder() -> str:
    return "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()


def _map(path: str, size: int, create: bool) -> mmap.mmap:
    flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
    fd = os.open(path, flags, 0o600)
    try:
        if create:
            os.ftruncate(fd, size)
        return mmap.mmap(fd, size)
    finally:
        os.close(fd)  # the mapping keeps the memory


def _register(mm: mmap.mmap, path: str) -> np.ndarray:
    whole = np.frombuffer(mm, dtype=np.uint8)
    key = id(mm)
    _SEGMENTS[key] = (weakref.ref(mm), path, whole.ctypes.data)
    weakref.finalize(mm, _SEGMENTS.pop, key, None)
    return whole


def _unlink(pid: int, path: str) -> None:
    # only the creating process removes the name (a forked child inherits the finalizer); a
    # mapping stays valid after it, and a child must have opened the file by then
    if os.getpid() == pid:
        try:
            os.unlink(path)
        except OSError:
            pass


def shared_copy(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` in a new shared file mapping (C-contiguous, same dtype and shape)."""
    size = max(a.nbytes, 1)
    path = os.path.join(_folder(), f"ember_{os.getpid()}_{uuid.uuid4().hex}")
    mm = _map(path, size, create=True)
    whole = _register(mm, path)
    # the name goes when the memory does: its last array collected, or at exit
    weakref.finalize(mm, _unlink, os.getpid(), path)
    b = whole[: a.nbytes].view(a.dtype).reshape(a.shape)
    b[...] = a
    return b


def _segment_of(a: np.ndarray):
    """(path, byte offset of ``a`` in it) when ``a`` lies in one of this process's mappings."""
    base = a
    while isinstance(getattr(base, "base", None), np.ndarray):
        base = base.base
    b = getattr(base, "base", None)
    mm = b.obj if isinstance(b, memoryview) else b
    entry = _SEGMENTS.get(id(mm)) if isinstance(mm, mmap.mmap) else None
    if entry is None or entry[0]() is not mm:
        return None
    return entry[1], a.ctypes.data - entry[2]


def _open_shared(path: str, offset: int, dtype, shape: tuple, strides: tuple) -> np.ndarray:
    mm = _OPENED.get(path)
    if mm is None:
        mm = _map(path, os.path.getsize(path), create=False)
        _OPENED[path] = mm
        _register(mm, path)
    # a view of the whole mapping's uint8 array: Tensor.is_shared finds the mmap beneath it
    whole = np.frombuffer(mm, dtype=np.uint8)
    return np.ndarray(shape, np.dtype(dtype), buffer=whole, offset=offset, strides=strides)


def _rebuild_shared(cls, path, offset, dtype, shape, strides, requires_grad, names, state):
    from .tensor import _rebuild_tensor

    arr = _open_shared(path, offset, dtype, shape, strides)
    return _rebuild_tensor(cls, arr, "cpu", requires_grad, names, state)


def reduce_for_process(t):
    """multiprocessing's pickling of a tensor: a reference to its shared mapping when it has one,
    else the usual copy of the values."""
    a = t._data
    seg = _segment_of(a) if type(a) is np.ndarray else None
    if seg is None:
        return t.__reduce_ex__(4)
    path, offset = seg
    state = getattr(t, "__dict__", None) or None
    return (
        _rebuild_shared,
        (
            type(t),
            path,
            offset,
            a.dtype,
            a.shape,
            a.strides,
            t.requires_grad,
            t._names,
            state,
        ),
    )
