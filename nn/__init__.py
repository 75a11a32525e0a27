"""ember.nn: modules, parameters, functional, init and utils (torch.nn)."""

from . import (
    functional,
    grad,
    init,
    modules,
    parameter,
    utils,
)
from .modules import *
from .modules import utils as _modules_utils  # binds nn.modules.utils, as in torch
from .modules.module import (
    Module,
    register_module_backward_hook,
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)
from .parallel import DataParallel  # also binds nn.parallel
from .parameter import (
    Buffer,
    Parameter,
    UninitializedBuffer,
    UninitializedParameter,
)
