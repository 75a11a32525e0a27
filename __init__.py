"""ember: a PyTorch-compatible deep learning framework with named dimensions everywhere.

``import ember as torch`` runs PyTorch code; ``ember.*`` mirrors ``torch.*``.
"""
# ruff: noqa: I001  (order matters: registered ops first, then the families' __all__ refine them)

from .core import allocator as _allocator  # keeps freed array buffers for reuse (speed)
from .core.device import OutOfMemoryError, device, get_default_device, set_default_device
from .core.dtype import (
    bfloat16,
    bool_ as bool,
    can_cast,
    complex64,
    complex128,
    dtype,
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    is_complex,
    is_floating_point,
    promote_types,
    result_type,
    set_default_dtype,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .core.layout import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    legacy_contiguous_format,
    memory_format,
    preserve_format,
    sparse_bsc,
    sparse_bsr,
    sparse_coo,
    sparse_csc,
    sparse_csr,
    strided,
)
from .core.printing import set_printoptions
from .core.tensor import (
    Size,
    Tensor,
    detach,
    get_device,
    is_conj,
    is_nonzero,
    is_signed,
    is_tensor,
    numel,
)
from .core.registry import OPS as _OPS
from .core import ops as _ops

# every registered op is a function of the ember namespace (ember.add, ember.exp, ...); the family
# modules' __all__ (imported next) add their other public functions and may refine an op's entry
globals().update({_n: _od.public for _n, _od in _OPS.items() if not _n.startswith("_")})

from .core.ops.arithmetic import *
from .core.ops.comparison import *
from .core.ops.creation import *
from .core.ops.indexing import *
from .core.ops.linalg import *
from .core.ops.pointwise import *
from .core.ops.random import *
from .core.ops.reduction import *
from .core.ops.shape import *
from .core.ops.decompositions import *
from .core import linalg  # torch.linalg
from .core.ops.spectral import *
from .core.ops.joining import *
from .core.ops.misc import *
from .core.ops.sorting import *
from .core.ops.statistics import *
from .core import fft  # torch.fft
from .core import special  # torch.special
from .core.ops.foreach import *  # torch._foreach_*
from .core.ops.tensor_methods import *  # the rest of torch.Tensor's methods
from .core.ops.leftovers import *  # range, frombuffer, from_file, geqrf, ormqr
from .core.ops.vision import *  # grid_sampler, affine_grid_generator
from .core.ops.hashing import *  # hash_tensor
from .core.ops.recurrent import *  # lstm_cell, gru_cell, rnn_*_cell; fused RNN layers
from .core.ops.normalization import *  # layer_norm, batch_norm, group_norm, ...
from .core.ops.convolution import *  # conv1d/2d/3d, conv_transpose*, convolution
from .core.ops.method_aliases import *  # neg_(x), permute_copy(x, d), typename, ...
from .core.sparse import *  # sparse_coo_tensor, sparse_csr_tensor, ..., smm, sspaddmm
from . import sparse  # torch.sparse: mm, addmm, sum, softmax, log_softmax, spdiags
from .core.quantized import *  # quantize_per_tensor, fake_quantize_*, qint8, ...
from .core.runtime import *  # threads, determinism and precision flags
from .core.storage import *  # UntypedStorage, TypedStorage, is_storage, FloatStorage, ...
from .core.symbolic import *  # sym_int, sym_float, ..., cond
from .core.vmap import vmap
from .core.lobpcg import lobpcg
from .core.streams import *  # Stream, Event, get_device_module
from . import cpu  # torch.cpu
from .core import random  # torch.random: manual_seed, fork_rng, get_rng_state, ...
from .core import named  # ember.named: broadcast_by_name() and other named-tensor extras
from .core import quasirandom  # torch.quasirandom: SobolEngine
from .core import serialization  # ember.save / ember.load (safetensors + pickle)
from .core.serialization import load, save
from . import autograd
from .autograd.anomaly import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from .core.legacy_types import CPU_TYPES as _legacy_types

globals().update(_legacy_types)  # torch.FloatTensor, torch.LongTensor, ... (core/legacy_types.py)
from . import nn  # torch.nn
from .nn.functional import (  # the F functions torch also has at top level, same signatures
    celu,
    celu_,
    cosine_similarity,
    pairwise_distance,
    pdist,
    prelu,
    rrelu,
    rrelu_,
    selu,
    selu_,
    threshold_,
)
from .nn.aten_functions import *  # torch.dropout(x, p, train), torch.kl_div(..., 1), ...
from . import optim  # torch.optim
from . import data  # torch.utils.data (also ember.utils.data, below)

from . import utils  # torch.utils: ember.utils.data IS ember.data; checkpoint, tensorboard
from .utils.dlpack import to_dlpack  # torch.to_dlpack is torch.utils.dlpack.to_dlpack
from . import accelerator, amp, backends, compiler  # drop-in parts: torch.accelerator, ...
from . import func, jit, testing, version  # torch.func, torch.jit (pass-through), ...
from .library import Tag, ops  # torch.ops (ember.ops), torch.Tag; also binds torch.library
from . import distributions  # torch.distributions
from .distributions.gamma_sampling import (  # torch._standard_gamma, ... (private ops)
    _sample_dirichlet,
    _standard_gamma,
    _standard_gamma_grad,
)
from . import hub  # torch.hub: checkpoints from URLs, hubconf.py entry points
from . import profiler  # torch.profiler (CPU time of each op)
from . import cuda_ as cuda, distributed_ as distributed, onnx_ as onnx  # (see their files)
from . import signal_ as signal  # torch.signal.windows
from . import types_ as types  # torch.types: annotation aliases
from . import multiprocessing_ as multiprocessing  # torch.multiprocessing (see the file)
from .amp import GradScaler  # torch.GradScaler is torch.amp.GradScaler
from .amp.autocast_mode import (
    autocast,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
    set_autocast_gpu_dtype,
)
from .compiler import compile  # torch.compile: returns a callable running the model as is
from . import _dynamo  # torch loads it on first access (torch._dynamo.reset() in recipes)
from . import _C  # torch._C: only the JIT fusion switches scripts set at start-up
from . import future_ as __future__  # torch.__future__: module-conversion flags
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

inf, nan, pi, e = float("inf"), float("nan"), 3.141592653589793, 2.718281828459045
newaxis = None

half, float, double = float16, float32, float64
cfloat, cdouble = complex64, complex128
short, int, long = int16, int32, int64

from .version import __version__  # one place: ember/version.py
from . import functional, torch_version  # torch.functional (einsum, split, ...), TorchVersion
