"""All module classes (torch.nn.modules)."""

from .activation import *
from .container import (
    Container,
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from .distance import *
from .dropout import *
from .flatten import *
from .lazy import LazyModuleMixin
from .linear import *
from .loss import *
from .module import Module
from .sparse import *
