"""ember.backends (torch.backends): the backend flags PyTorch scripts set and query.

ember computes with numpy (cpu) or cupy (cuda); it does not use cuDNN, MKL-DNN, MPS or OpenMP
itself. The flags are kept so that scripts which set them run unchanged; the ``is_available()``
answers say truthfully what ember uses.
"""

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
