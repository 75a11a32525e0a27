"""ember.distributed (torch.distributed) for one process.

``init_process_group`` accepts a world of size 1 only (this process, rank 0); then the collectives
are what they are for a single rank: ``all_reduce``/``broadcast`` leave the tensor unchanged,
``all_gather`` copies it, ``barrier`` returns at once. A larger world raises an error naming the
unsupported API. Before initialization, rank queries raise torch's ValueError.
"""

from __future__ import annotations

import os
import sys as _sys
from datetime import timedelta
from enum import Enum

from ..dropin import NotImplementedByEmber

__all__ = [
    "Backend",
    "GroupMember",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "all_to_all",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_global_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "monitored_barrier",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "scatter_object_list",
    "send",
]

_NOT_INIT = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


class ReduceOp(Enum):
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"
    PREMUL_SUM = "premul_sum"


class Backend(str):
    """A backend name ('gloo', 'nccl', ...); ember runs every one as a single in-process rank."""

    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    UCC = "ucc"
    UNDEFINED = "undefined"

    def __new__(cls, name: str):
        return str.__new__(cls, str(name).lower())


class ProcessGroup:
    """The single-process group: rank 0 of a world of size 1."""

    def __init__(self, backend: str) -> None:
        self._backend = Backend(backend)

    def rank(self) -> int:
        return 0

    def size(self) -> int:
        return 1

    def name(self) -> str:
        return self._backend

    def __repr__(self) -> str:
        return f"<ember.distributed.ProcessGroup backend={self._backend} rank=0 size=1>"


class Work:
    """A finished asynchronous operation (everything completes at once in one process)."""

    def wait(self, timeout: timedelta | None = None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True

    def is_success(self) -> bool:
        return True


class GroupMember:
    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = -100


class group:
    WORLD: ProcessGroup | None = None


def is_available() -> bool:
    """True: the module is usable (for a world of one process)."""
    return True


def is_nccl_available() -> bool:
    return False


def is_mpi_available() -> bool:
    return False


def is_gloo_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    """Whether this process was started by torchrun (its environment says so)."""
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def is_initialized() -> bool:
    """Whether init_process_group() has been called (and not destroyed)."""
    return GroupMember.WORLD is not None


def _world() -> ProcessGroup:
    if GroupMember.WORLD is None:
        raise ValueError(_NOT_INIT)
    return GroupMember.WORLD


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store=None,
    group_name: str = "",
    pg_options=None,
    device_id=None,
) -> None:
    """Start the default group; ember supports one process (world_size 1, rank 0) only."""
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if world_size == -1:
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if rank == -1:
        rank = int(os.environ.get("RANK", "0"))
    if world_size != 1 or rank != 0:
        raise NotImplementedByEmber(
            "torch.distributed.init_process_group with world_size > 1",
            f"ember runs a single process: world_size=1, rank=0; got world_size={world_size}, "
            f"rank={rank}",
        )
    pg = ProcessGroup(backend or "gloo")
    GroupMember.WORLD = group.WORLD = pg


def destroy_process_group(group=None) -> None:
    """End the default group."""
    GroupMember.WORLD = globals()["group"].WORLD = None


def get_rank(group=None) -> int:
    """This process's rank: 0."""
    _world()
    return 0


def get_world_size(group=None) -> int:
    """The number of processes: 1."""
    _world()
    return 1


def get_backend(group=None) -> str:
    return _world().name()


def get_global_rank(group, group_rank: int) -> int:
    return group_rank


def get_process_group_ranks(group) -> list[int]:
    return [0]


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, **kwargs) -> ProcessGroup:
    """A group of this one process."""
    w = _world()
    if ranks is not None and list(ranks) not in ([], [0]):
        raise ValueError(f"new_group: ranks {list(ranks)} are not in a world of size 1")
    return ProcessGroup(backend or w.name())


def _done(async_op: bool):
    return Work() if async_op else None


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Return at once (one process)."""
    _world()
    return _done(async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks: bool = False) -> None:
    _world()


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """The reduction over one rank leaves ``tensor`` as it is."""
    _world()
    return _done(async_op)


def reduce(tensor, dst: int = 0, op=ReduceOp.SUM, group=None, async_op: bool = False):
    _world()
    return _done(async_op)


def broadcast(tensor, src: int = 0, group=None, async_op: bool = False):
    _world()
    return _done(async_op)


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """Fill the one-element ``tensor_list`` with ``tensor``."""
    _world()
    if len(tensor_list) != 1:
        raise ValueError("all_gather: tensor_list must hold world_size (1) tensors")
    from ..autograd.grad_mode import no_grad

    with no_grad():
        tensor_list[0].copy_(tensor)
    return _done(async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    _world()
    from ..autograd.grad_mode import no_grad

    with no_grad():
        output_tensor.copy_(input_tensor.reshape(output_tensor.shape))
    return _done(async_op)


def gather(tensor, gather_list=None, dst: int = 0, group=None, async_op: bool = False):
    return all_gather(gather_list, tensor, async_op=async_op) if gather_list else _done(async_op)


def scatter(tensor, scatter_list=None, src: int = 0, group=None, async_op: bool = False):
    _world()
    if scatter_list:
        from ..autograd.grad_mode import no_grad

        with no_grad():
            tensor.copy_(scatter_list[0])
    return _done(async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    return scatter(output, input_list, async_op=async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    return all_gather_into_tensor(output, input, async_op=async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    return all_gather(output_tensor_list, input_tensor_list[0], async_op=async_op)


def all_gather_object(object_list: list, obj, group=None) -> None:
    _world()
    object_list[0] = obj


def gather_object(obj, object_gather_list=None, dst: int = 0, group=None) -> None:
    _world()
    if object_gather_list is not None:
        object_gather_list[0] = obj


def broadcast_object_list(object_list: list, src: int = 0, group=None, device=None) -> None:
    _world()


def scatter_object_list(
    scatter_object_output_list, scatter_object_input_list, src=0, group=None
) -> None:
    _world()
    scatter_object_output_list[0] = scatter_object_input_list[0]


def send(tensor, dst: int, group=None, tag: int = 0):
    raise NotImplementedByEmber("torch.distributed.send", "a world of one process has no peer")


def recv(tensor, src: int | None = None, group=None, tag: int = 0):
    raise NotImplementedByEmber("torch.distributed.recv", "a world of one process has no peer")


# a folder named `distributed` in the checkout would shadow the PyPI package `distributed` for any
# process with the checkout on sys.path: the folder is distributed_, registered as ember.distributed
_sys.modules[__name__[:-1]] = _sys.modules[__name__]
