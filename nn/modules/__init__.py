"""All module classes (torch.nn.modules)."""

from ._multihead import *
from .activation import *
from .batchnorm import *
from .channelshuffle import *
from .container import (
    Container,
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from .conv import *
from .distance import *
from .dropout import *
from .flatten import *
from .fold import *
from .instancenorm import *
from .lazy import LazyModuleMixin
from .linear import *
from .linear_cross_entropy import *
from .loss import *
from .module import Module
from .normalization import *
from .padding import *
from .pixelshuffle import *
from .pooling import *
from .rnn import *
from .sparse import *
from .transformer import *
from .upsampling import *
