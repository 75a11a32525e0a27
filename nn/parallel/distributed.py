"""DistributedDataParallel for a single-process group (world size 1).

With one process there is nothing to all-reduce: gradients are already the global ones. The
wrapper requires an initialized default process group (ember.distributed.init_process_group),
like torch, and then forwards to the module; ``no_sync()`` and ``join()`` are accepted.
"""

from __future__ import annotations

import contextlib

from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


def _initialized() -> bool:
    try:
        from ... import distributed
    except ImportError:  # no ember.distributed: no process group can exist
        return False
    fn = getattr(distributed, "is_initialized", None)
    return bool(fn()) if fn is not None else False


class DistributedDataParallel(Module):
    """Wraps ``module`` for data-parallel training in a one-process group: forwards to it;
    ``.module`` is the wrapped module and state_dict keys get the ``module.`` prefix."""

    def __init__(
        self,
        module: Module,
        device_ids=None,
        output_device=None,
        dim: int = 0,
        broadcast_buffers: bool | None = None,
        init_sync: bool = True,
        process_group=None,
        bucket_cap_mb=None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        delay_all_reduce_named_params=None,
        param_to_hook_all_reduce=None,
        mixed_precision=None,
        device_mesh=None,
        skip_all_reduce_unused_params: bool = False,
        **kwargs,
    ) -> None:
        super().__init__()
        if process_group is None and device_mesh is None and not _initialized():
            raise ValueError(
                "Default process group has not been initialized, please make sure to call "
                "init_process_group."
            )
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any "
                "parameter that requires a gradient."
            )
        self.module = module
        self.device_ids = None if device_ids is None else list(device_ids)
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = True if broadcast_buffers is None else broadcast_buffers
        self.process_group = process_group
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.mixed_precision = mixed_precision
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._comm_hooks: list = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Skip gradient synchronization inside the block (nothing to sync on one process)."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    @contextlib.contextmanager
    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False):  # fmt: skip
        """Uneven-inputs context (a no-op with one process)."""
        yield

    def register_comm_hook(self, state, hook) -> None:
        """Records a communication hook (never needed with one process)."""
        self._comm_hooks.append((state, hook))

    def _set_static_graph(self) -> None:
        self.static_graph = True
