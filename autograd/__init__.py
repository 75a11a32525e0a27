"""ember.autograd: the tape engine, grad modes, custom Functions, gradcheck, functional transforms."""

from . import functional
from .engine import backward, grad
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled)

__all__ = ["backward", "grad", "gradcheck", "gradgradcheck", "GradcheckError", "functional", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled"]
