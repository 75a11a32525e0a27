"""Parity regressions found by the fortieth wave, which ran other people's model code unchanged
(karpathy's nanoGPT model.py, in a fork with RMSNorm and a base-2 "Softermax", and its train.py
loop; makemore; pytorch/examples' word_language_model, time_sequence_prediction, super_resolution,
siamese_network, dcgan, imagenet, regression, actor_critic, fast_neural_style and mnist_hogwild;
the PyTorch tutorials' chatbot, translation transformer, spatial transformer, BiLSTM-CRF,
ensembling and per-sample-gradient programs; timm's std_conv/grn/evo_norm layers; lucidrains'
vit, PaLM and 1-D denoising diffusion; torchvision's resnet18, mobilenet_v3 and vision_transformer;
meta's llama model.py; HiFi-GAN; TransUNet; Pytorch-UNet; Megatron-LM's fused bias-gelu; weights
copied from torch, outputs, losses, gradients and optimizer steps compared; torch is the oracle).

What differed:

- a ``bool`` passed as a dim. The nanoGPT fork builds
  ``Softermax(config.use_softermax_xmax_subtract)``, so its ``dim`` is ``True`` and it calls
  ``x.max(dim=True, keepdim=True)``; torch's argument parser refuses a bool for an int dim
  (TypeError), ember took ``True`` for dim 1 (bool has ``__index__``) and silently reduced the
  wrong axis in the reductions, softmax and sorting families;
- HiFi-GAN wraps dozens of convolutions in ``torch.nn.utils.weight_norm``: torch attributes its
  deprecation FutureWarning to its own ``weight_norm`` function (shown once by the default filter),
  ember to each calling line of the user's model (one warning per line);
- nanoGPT's train.py batches come from an ``np.memmap``, and a slice's ``astype(np.int64)`` is still
  a memmap: ``from_numpy``/``as_tensor`` of a numpy subclass (memmap, matrix) made a tensor no op
  could use ("unsupported array type memmap"), where torch reads the plain array in that memory;
- Megatron-LM's ``set_jit_fusion_options`` flips TorchScript's fusion switches in ``torch._C``:
  ember had no ``_C`` ("torch._C is not implemented by ember");
- TransUNet (like many custom conv and pooling layers) imports ``_pair`` from
  ``torch.nn.modules.utils``, older model files call ``torch.utils.model_zoo.load_url``, and
  checkpointing code saves ``torch.cuda.random.get_rng_state_all()`` (``[]`` without a GPU): ember
  had none of them;
- mnist_hogwild: ``model.share_memory()``, then ``mp.set_start_method('spawn')`` workers train the
  shared model. ember's shared memory was an anonymous mapping that only forked children inherit; a
  spawned child got a pickled copy, so the parent's model never changed (silently)."""

from __future__ import annotations

import gc
import multiprocessing
import operator
import os
import pickle
import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(40)

# (label, call) pairs: every call passes True (or False) where torch wants an int dim
BOOL_DIM_CALLS = [
    ("max_kw", lambda m, x: x.max(dim=True, keepdim=True)),
    ("max_pos", lambda m, x: x.max(True, True)),
    ("min", lambda m, x: x.min(True)),
    ("sum", lambda m, x: x.sum(True)),
    ("mean", lambda m, x: x.mean(dim=True)),
    ("prod", lambda m, x: x.prod(True)),
    ("amax", lambda m, x: x.amax(True)),
    ("nansum", lambda m, x: x.nansum(True)),
    ("logsumexp", lambda m, x: x.logsumexp(True)),
    ("argmax", lambda m, x: x.argmax(True)),
    ("aminmax", lambda m, x: x.aminmax(dim=True)),
    ("count_nonzero", lambda m, x: x.count_nonzero(False)),
    ("softmax", lambda m, x: x.softmax(True)),
    ("log_softmax", lambda m, x: m.log_softmax(x, True)),
    ("nn_softmax", lambda m, x: m.nn.Softmax(dim=True)(x)),
    ("cumsum", lambda m, x: x.cumsum(True)),
    ("cumprod", lambda m, x: x.cumprod(True)),
    ("cummax", lambda m, x: x.cummax(True)),
    ("sort", lambda m, x: x.sort(True)),
    ("argsort", lambda m, x: x.argsort(True)),
    ("topk", lambda m, x: x.topk(1, True)),
    ("kthvalue", lambda m, x: x.kthvalue(1, True)),
    ("median", lambda m, x: x.median(True)),
    ("mode", lambda m, x: x.mode(True)),
]


@pytest.mark.parametrize("label,call", BOOL_DIM_CALLS, ids=[c[0] for c in BOOL_DIM_CALLS])
def test_bool_dim_is_a_type_error(label, call):
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    with pytest.raises(TypeError) as te:
        call(torch, torch.from_numpy(a))
    with pytest.raises(TypeError) as ee:
        call(ember, ember.tensor(a))
    # torch names the bool (either "must be int, not bool" or, for an op it overloads on its
    # dim, "invalid combination of arguments - got (..., bool)"); so does ember. A method form
    # is answered as its function form (one function serves both): torch's x.max(True, True)
    # has one overload with room for two arguments ("must be int"), torch.max(x, True, True)
    # lists its overloads, as ember does for both
    assert "bool" in str(te.value)
    msg = str(ee.value)
    if "invalid combination" in str(te.value) or label.startswith("max"):
        # (a call of keywords only ends its list with ", )", as torch's)
        assert "invalid combination" in msg and ("bool)" in msg or "bool, )" in msg)
    else:
        assert "not bool" in msg


@pytest.mark.parametrize("name", ["softmax", "argmax", "cumsum", "topk", "cummax", "median"])
def test_bool_dim_message_names_the_dim_argument(name):
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    args = (1, True) if name == "topk" else (True,)
    with pytest.raises(
        TypeError, match=r"^" + name + r"\(\): argument 'dim' .*must be int, not bool$"
    ):
        getattr(ember.tensor(a), name)(*args)
    with pytest.raises(
        TypeError, match=r"^" + name + r"\(\): argument 'dim' .*must be int, not bool$"
    ):
        getattr(torch.from_numpy(a), name)(*args)


@pytest.mark.parametrize("dim", [1, -1, np.int64(1), np.int32(-1)])
def test_integer_like_dims_still_accepted(dim):
    # the bool check must not catch ints or numpy integers (which torch accepts via __index__)
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    for fn in ("softmax", "cumsum", "argmax", "logsumexp"):
        e = getattr(ember.tensor(a), fn)(dim)
        t = getattr(torch.from_numpy(a), fn)(int(dim))
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=1e-6)
    ev, ei = ember.tensor(a).max(dim=dim, keepdim=True)
    tv, ti = torch.from_numpy(a).max(dim=int(dim), keepdim=True)
    np.testing.assert_array_equal(ev.numpy(), tv.numpy())
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())


def test_softermax_base_two_softmax_values_and_gradient():
    # the nanoGPT fork's Softermax with a proper dim: max-subtracted 2**x over its sum
    a = RNG.standard_normal((2, 2, 5, 5)) * 3
    g = RNG.standard_normal((2, 2, 5, 5))

    def softermax(m, x):
        x = x - x.max(dim=-1, keepdim=True).values
        e = m.pow(2.0, x)
        return e / e.sum(dim=-1, keepdim=True)

    te = torch.tensor(a, requires_grad=True)
    ee = ember.tensor(a, requires_grad=True)
    rt, re_ = softermax(torch, te), softermax(ember, ee)
    np.testing.assert_allclose(re_.detach().numpy(), rt.detach().numpy(), rtol=1e-12)
    rt.backward(torch.tensor(g))
    re_.backward(ember.tensor(g))
    np.testing.assert_allclose(ee.grad.numpy(), te.grad.numpy(), rtol=1e-10, atol=1e-12)


def _weight_norm_warnings(mod):
    """The FutureWarnings of three weight_norm calls from three different lines."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        mod.nn.utils.weight_norm(mod.nn.Conv1d(2, 3, 3))
        mod.nn.utils.weight_norm(mod.nn.Linear(2, 3))
        mod.nn.utils.weight_norm(mod.nn.Conv2d(2, 3, 1), dim=None)
    return [w for w in rec if issubclass(w.category, FutureWarning)]


def test_weight_norm_deprecation_points_inside_the_library():
    here = os.path.abspath(__file__)
    for mod in (torch, ember):
        ws = _weight_norm_warnings(mod)
        assert len(ws) == 3
        assert "`torch.nn.utils.weight_norm` is deprecated" in str(ws[0].message)
        # one place for every call (so the default filter shows it once), and not the caller's
        assert len({(w.filename, w.lineno) for w in ws}) == 1
        assert os.path.abspath(ws[0].filename) != here
        assert os.path.basename(ws[0].filename) == "weight_norm.py"


def _memmap(tmp_path, dtype, n=12, mode="w+"):
    m = np.memmap(tmp_path / "data.bin", dtype=dtype, mode=mode, shape=(n,))
    m[:] = np.arange(n)
    return m


@pytest.mark.parametrize("convert", ["from_numpy", "as_tensor"])
def test_numpy_memmap_slice_becomes_a_usable_tensor(tmp_path, convert):
    data = _memmap(tmp_path, np.uint16)
    rows = [data[i : i + 4].astype(np.int64) for i in (0, 3, 7)]
    assert type(rows[0]) is np.memmap  # what nanoGPT's get_batch hands to torch
    outs = []
    for mod in (torch, ember):
        x = mod.stack([getattr(mod, convert)(r) for r in rows])
        outs.append(((x * 2 + 1).sum(1), x.dtype, type(x.numpy())))
    np.testing.assert_array_equal(outs[1][0].numpy(), outs[0][0].numpy())
    assert str(outs[1][1]).split(".")[-1] == str(outs[0][1]).split(".")[-1] == "int64"
    assert outs[1][2] is outs[0][2] is np.ndarray


@pytest.mark.parametrize("convert", ["from_numpy", "as_tensor"])
def test_memmap_tensor_shares_the_mapped_memory(tmp_path, convert):
    m = _memmap(tmp_path, np.float32, n=5)
    t = getattr(ember, convert)(m)
    t += 1.5
    t[0] = -1.0
    np.testing.assert_array_equal(np.asarray(m), [-1.0, 2.5, 3.5, 4.5, 5.5])
    assert t.dtype == ember.float32 and t.shape == (5,)


def test_numpy_matrix_from_numpy_is_a_plain_two_dim_tensor():
    a = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    t, e = torch.from_numpy(a), ember.from_numpy(a)
    assert tuple(e.shape) == tuple(t.shape) == (2, 2)
    np.testing.assert_array_equal((e @ e).numpy(), (t @ t).numpy())
    assert e.dtype == ember.float64


def _jit_switch_answers(C):
    """Return values of a Megatron-like sequence of torch._C JIT calls, settings restored."""
    out = [
        C._jit_set_profiling_executor(False),
        C._jit_set_profiling_executor(True),
        C._jit_set_profiling_mode(0),
        C._jit_set_profiling_mode(1),
        C._jit_override_can_fuse_on_cpu(True),
        C._jit_can_fuse_on_cpu(),
        C._jit_override_can_fuse_on_cpu(False),
        C._jit_can_fuse_on_cpu(),
        C._jit_override_can_fuse_on_gpu(False),
        C._jit_can_fuse_on_gpu(),
        C._jit_set_texpr_fuser_enabled(False),
        C._jit_texpr_fuser_enabled(),
        C._jit_set_texpr_fuser_enabled(True),
        C._jit_texpr_fuser_enabled(),
        C._debug_set_autodiff_subgraph_inlining(False),
        C._debug_set_autodiff_subgraph_inlining(True),
        C._jit_set_llga_enabled(True),
        C._jit_llga_enabled(),
        C._jit_set_llga_enabled(False),
    ]
    return out


def test_jit_fusion_switches_answer_like_torch():
    assert _jit_switch_answers(ember._C) == _jit_switch_answers(torch._C)


def test_jit_fusion_switches_reachable_as_torch_c_in_drop_in_mode():
    from ember import dropin

    finder = dropin.install("torch_wave40")
    try:
        import torch_wave40  # the alias of ember, as ``import torch`` is in drop-in mode

        C = torch_wave40._C
        assert C._jit_set_profiling_mode(True) is True
        assert C._jit_set_nvfuser_enabled(True) is None
        with pytest.raises(AttributeError, match="_no_such_binding"):
            C._no_such_binding  # noqa: B018
    finally:
        dropin.uninstall("torch_wave40")
        del finder


def test_nn_modules_utils_tuple_helpers_match_torch():
    from ember.nn.modules import utils as eu
    from torch.nn.modules import utils as tu

    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for v in (3, 0.5, (1, 2), [4, 5, 6], "ab", range(2)):
            assert getattr(eu, name)(v) == getattr(tu, name)(v), (name, v)
        assert getattr(eu, name).__name__ == getattr(tu, name).__name__
    assert eu._ntuple(3, "x")(7) == tu._ntuple(3, "x")(7)
    assert eu._ntuple(3, "x").__name__ == "x"
    for t, n in (((1, 2), 2), ((3, 1, 2), 1), ((), 2)):
        assert eu._reverse_repeat_tuple(t, n) == tu._reverse_repeat_tuple(t, n)
    for out, dflt in (([None, 4], (5, 6, 7)), ([2, None], [8, 9, 10]), (5, (1, 2))):
        assert eu._list_with_default(out, dflt) == tu._list_with_default(out, dflt)
    for mod in (tu, eu):
        with pytest.raises(ValueError, match="^Input dimension should be at least 3$"):
            mod._list_with_default([None, 4], (5, 6))


def test_pair_drives_a_conv_like_transunet_embeddings():
    from ember.nn.modules.utils import _pair as epair
    from torch.nn.modules.utils import _pair as tpair

    a = RNG.standard_normal((1, 3, 8, 8)).astype(np.float32)
    outs = []
    for mod, pair in ((torch, tpair), (ember, epair)):
        mod.manual_seed(0)
        conv = mod.nn.Conv2d(3, 4, kernel_size=pair(4), stride=pair(4))
        assert conv.kernel_size == (4, 4) and conv.stride == (4, 4)
        outs.append(conv)
    outs[1].load_state_dict(
        {k: ember.tensor(v.detach().numpy()) for k, v in outs[0].state_dict().items()}
    )
    np.testing.assert_allclose(
        outs[1](ember.tensor(a)).detach().numpy(),
        outs[0](torch.from_numpy(a)).detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


def test_model_zoo_load_url_is_hubs_loader():
    import ember.hub
    import ember.utils.model_zoo as mz

    assert mz.load_url is ember.hub.load_state_dict_from_url
    assert mz.__all__ == ["load_url"]


def test_cuda_rng_state_all_without_a_gpu():
    import ember.cuda_.random as ecr
    import torch.cuda.random as tcr

    assert not torch.cuda.is_available() or ember.cuda.is_available()
    if not ember.cuda.is_available():
        assert ember.cuda.get_rng_state_all() == torch.cuda.get_rng_state_all() == []
        assert ember.cuda.set_rng_state_all([]) is None
        assert ecr.get_rng_state_all() == tcr.get_rng_state_all() == []
    for name in ecr.__all__:
        assert getattr(ecr, name) is getattr(ember.cuda, name)
        assert hasattr(tcr, name)


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_shared_parameter_written_by_a_child_process(method):
    import ember.multiprocessing  # registers the tensor reducers, as ``import torch`` does

    assert ember.multiprocessing.get_sharing_strategy() in ("file_descriptor", "file_system")
    ctx = multiprocessing.get_context(method)
    lin = ember.nn.Linear(3, 2)
    lin.share_memory()
    before = lin.weight.detach().numpy().copy()
    bias_before = lin.bias.detach().numpy().copy()
    view = lin.bias[1:]  # a view into the shared memory travels as one too
    for t, v in ((lin.weight, 0.5), (view, 2.0)):
        p = ctx.Process(target=operator.iadd, args=(t.data, v))
        p.start()
        p.join(60)
        assert p.exitcode == 0
    np.testing.assert_allclose(lin.weight.detach().numpy(), before + 0.5)
    np.testing.assert_allclose(lin.bias.detach().numpy(), bias_before + [0.0, 2.0])
    assert lin.weight.is_shared() and isinstance(lin.weight, ember.nn.Parameter)


def test_shared_tensor_pickles_by_value_outside_multiprocessing(tmp_path):
    t = ember.arange(4.0).share_memory_()
    u = pickle.loads(pickle.dumps(t))
    ember.save(t, tmp_path / "t.pt")
    w = ember.load(tmp_path / "t.pt")
    t += 10
    np.testing.assert_array_equal(u.numpy(), [0.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(w.numpy(), [0.0, 1.0, 2.0, 3.0])
    assert not u.is_shared()


def test_shared_memory_is_released_with_its_tensor():
    from ember.core import shared_memory

    t = ember.ones(5).share_memory_()
    path, offset = shared_memory._segment_of(t._data)
    assert offset == 0 and os.path.exists(path)
    assert t.is_shared() and t.share_memory_() is t
    del t
    gc.collect()
    assert not os.path.exists(path)
