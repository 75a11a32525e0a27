"""ember.optim: optimizers (torch.optim)."""

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import (
    Optimizer,
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = [
    "ASGD",
    "LBFGS",
    "SGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Muon",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SparseAdam",
    "register_optimizer_step_post_hook",
    "register_optimizer_step_pre_hook",
]
