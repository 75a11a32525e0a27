"""torch._dynamo.config: the options scripts commonly set before torch.compile.

ember compiles nothing (``ember.compile`` runs the model as it is), so an option set here changes
no behaviour; the names and defaults are torch's, and an unknown name raises torch's error, so a
typo is still caught.
"""

from __future__ import annotations

import sys
import types

suppress_errors = False
cache_size_limit = 8
recompile_limit = 8
accumulated_cache_size_limit = 256
accumulated_recompile_limit = 256
fail_on_recompile_limit_hit = False
verbose = False
automatic_dynamic_shapes = True
assume_static_by_default = True
dynamic_shapes = True
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
optimize_ddp = True
specialize_int = False
specialize_float = False
guard_nn_modules = True
error_on_recompile = False
force_parameter_static_shapes = True
allow_unspec_int_on_nn_module = False
raise_on_ctx_manager_usage = True
replay_record_enabled = False
skip_nnmodule_hook_guards = True
compiled_autograd = False
log_compilation_metrics = True
prefer_deferred_runtime_asserts_over_guards = False
use_graph_deduplication = False
enable_compiler_collectives = False


# torch's renamed options: each old name and its new one are one setting
_ALIASES = {
    "cache_size_limit": "recompile_limit",
    "accumulated_cache_size_limit": "accumulated_recompile_limit",
}
_ALIASES.update({v: k for k, v in _ALIASES.items()})


class _Config(types.ModuleType):
    """Refuses options torch does not have (assignment to a plain module would accept them)."""

    def __setattr__(self, name: str, value) -> None:
        if not name.startswith("_") and name not in self.__dict__:
            raise AttributeError(f"torch._dynamo.config.{name} does not exist")
        super().__setattr__(name, value)
        if name in _ALIASES:
            super().__setattr__(_ALIASES[name], value)


sys.modules[__name__].__class__ = _Config
