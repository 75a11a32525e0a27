"""ember.nn: modules, parameters, functional, init and utils (torch.nn)."""

from . import modules  # noqa: F401
from . import parameter  # noqa: F401
from .modules import *  # noqa: F403
from .modules.module import (  # noqa: F401  (the global hooks: also ember.nn.*, per the API list)
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
from .parameter import (  # noqa: F401
    Buffer,
    Parameter,
    UninitializedBuffer,
    UninitializedParameter,
)
from . import init, utils  # noqa: E402, F401
from . import functional  # noqa: E402, F401
