"""Wave 86: nn.Module API and layer constructors against torch (argument errors, deprecation
warnings, state_dict's positional form, non-full backward hook warnings, LayerNorm shapes)."""

import warnings

import ember
import pytest

torch = pytest.importorskip("torch")


def _outcome(fn):
    """(result or (error type, message), [(warning category, message)]) of ``fn()``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = ("ok", fn())
        except Exception as e:  # noqa: BLE001
            out = (type(e).__name__, str(e))
    return out, [(w.category.__name__, str(w.message)) for w in caught]


def _both(make):
    """``make(lib)`` run on torch and ember; ember's answer as torch would spell it."""
    t = _outcome(lambda: make(torch))
    e = _outcome(lambda: make(ember))
    out = e[0]
    if out[0] != "ok":
        out = (out[0], out[1].replace("ember", "torch"))
    return t, (out, [(c, m.replace("ember", "torch")) for c, m in e[1]])


# ---------------------------------------------------------------- argument errors name the layer
_LAYERS = sorted(
    n
    for n in dir(torch.nn)
    if isinstance(getattr(torch.nn, n), type)
    and issubclass(getattr(torch.nn, n), torch.nn.Module)
    and hasattr(ember.nn, n)
    and n not in ("Container", "NLLLoss2d")  # deprecated: tested below with their warnings
)


@pytest.mark.parametrize(
    "call",
    [
        lambda cls: cls(),
        lambda cls: cls(*[1] * 16),
        lambda cls: cls(bogus_kw=1),
    ],
    ids=["missing", "too_many", "bad_keyword"],
)
def test_layer_argument_errors_name_the_layer(call):
    # Python's own TypeError names the __init__ that ran: torch's per-layer (or _BatchNorm's)
    bad = []
    for name in _LAYERS:
        t, e = _both(lambda lib, name=name: repr(call(getattr(lib.nn, name))))
        if t[0][0] == "TypeError" and t != e:
            bad.append((name, t[0], e[0]))
    assert not bad


def test_layer_init_qualnames_match_torch():
    # (Module and the layers inheriting its __init__ are left out: torch.compile's dynamo
    # replaces Module.__init__ with a wrapper of another name once any test has compiled)
    bad = [
        n
        for n in _LAYERS
        if n != "Module"
        and "__init__" in vars(getattr(torch.nn, n))
        and getattr(torch.nn, n).__init__.__code__.co_qualname
        != getattr(ember.nn, n).__init__.__code__.co_qualname
    ]
    assert not bad, bad


def test_user_subclass_keeps_the_base_init_name():
    for lib in (torch, ember):

        class MyConv(lib.nn.Conv2d):
            pass

        with pytest.raises(TypeError) as info:
            MyConv()
        assert str(info.value).startswith("Conv2d.__init__() missing 3")


def test_lazy_conv_argument_error():
    t, e = _both(lambda lib: lib.nn.LazyConv2d())
    assert t == e
    assert t[0][1].startswith("LazyConv2d.__init__()")


# ---------------------------------------------------------------- deprecated layers
@pytest.mark.parametrize(
    "make",
    [
        lambda lib: repr(lib.nn.Container()),
        lambda lib: repr(lib.nn.Container(a=lib.nn.ReLU())),
        lambda lib: repr(lib.nn.Container(bogus=1)),
        lambda lib: repr(lib.nn.Container(1, 2)),
        lambda lib: repr(lib.nn.NLLLoss2d()),
        lambda lib: repr(lib.nn.NLLLoss2d(bogus_kw=1)),
        lambda lib: repr(lib.nn.NLLLoss2d(*[1] * 9)),
    ],
)
def test_deprecated_layers_warn_on_construction(make):
    # torch's @deprecated: a FutureWarning before the arguments are bound (a bad call warns too)
    t, e = _both(make)
    assert t == e
    assert t[1] and t[1][0][0] == "FutureWarning"


# ---------------------------------------------------------------- state_dict's positional form
@pytest.mark.parametrize("nargs", [1, 2, 3, 4])
def test_state_dict_positional_args(nargs):
    # torch reads the first three positional args and ignores the rest (with a FutureWarning)
    def make(lib):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        args = (None, "p.", True, "extra")[:nargs]
        return [(k, type(v).__name__) for k, v in m.state_dict(*args).items()]

    t, e = _both(make)
    assert t == e


# ---------------------------------------------------------------- non-full backward hooks
def _hooked_linear(lib, pre_hook=False):
    m = lib.nn.Linear(2, 2)
    with lib.no_grad():
        m.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, -4.0]]))
    log = []
    m.register_backward_hook(lambda mod, gi, go: log.append(len(go)))
    if pre_hook:
        m.register_full_backward_pre_hook(lambda mod, go: None)
    return m, log


def test_non_full_hook_without_input_grad_does_not_warn_full_hook_firing():
    def make(lib):
        m, log = _hooked_linear(lib)
        m(lib.ones(1, 2)).sum().backward()
        return log, m.weight.grad.tolist()

    t, e = _both(make)
    assert t == e
    assert not any("Full backward hook is firing" in msg for _, msg in e[1])


@pytest.mark.parametrize("two_outputs", [False, True])
def test_non_full_hook_with_pre_hook_reads_the_wrapped_output(two_outputs):
    # with a full backward pre-hook too, torch inspects the output its BackwardHookFunction made
    def make(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.l = lib.nn.Linear(2, 2)
                with lib.no_grad():
                    self.l.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, -4.0]]))

            def forward(self, x, y):
                out = self.l(x) + y
                return (out, out * 2) if two_outputs else out

        m = M()
        m.register_full_backward_pre_hook(lambda mod, go: None)
        m.register_backward_hook(lambda mod, gi, go: None)
        x = lib.ones(1, 2, requires_grad=True)
        y = lib.tensor([[0.5, -1.5]], requires_grad=True)
        o = m(x, y)
        (o[0] if two_outputs else o).sum().backward()
        return x.grad.tolist(), y.grad.tolist()

    t, e = _both(make)
    assert t == e


# ---------------------------------------------------------------- LayerNorm / RMSNorm shapes
@pytest.mark.parametrize("cls", ["LayerNorm", "RMSNorm"])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize(
    "shape",
    [
        lambda lib: "a",
        lambda lib: ["a"],
        lambda lib: [2.0],
        lambda lib: (True,),
        lambda lib: True,
        lambda lib: [None],
        lambda lib: [2, "a"],
        lambda lib: [3, 2],
        lambda lib: lib.Size([2, 3]),
    ],
)
def test_norm_normalized_shape_kept_as_given(cls, affine, shape):
    # torch keeps normalized_shape as given: a bad entry is empty()'s TypeError
    def make(lib):
        m = getattr(lib.nn, cls)(shape(lib), elementwise_affine=affine)
        sd = [(k, tuple(v.shape)) for k, v in m.state_dict().items()]
        return repr(m), m.normalized_shape, [type(k).__name__ for k in m.normalized_shape], sd

    t, e = _both(make)
    assert t == e


def test_layer_norm_numpy_int_shape_forward():
    np = pytest.importorskip("numpy")
    x = [[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]]
    m_t = torch.nn.LayerNorm(np.int64(3))
    m_e = ember.nn.LayerNorm(np.int64(3))
    got = m_e(ember.tensor(x)).detach().numpy()
    want = m_t(torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(got, want, atol=1e-6)


# ---------------------------------------------------------------- PackedSequence
def test_packed_sequence_without_batch_sizes_message():
    t, e = _both(lambda lib: lib.nn.utils.rnn.PackedSequence(lib.ones(3)))
    assert t == e


# ---------------------------------------------------------------- constructor checks
@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.nn.LSTM(4, 2, 3, 1),
        lambda lib: lib.nn.GRU(4, 2, bias=None),
        lambda lib: lib.nn.RNN(4, 2, batch_first=1),
        lambda lib: lib.nn.RNN(4, 2, batch_first="x", bias=0),
        lambda lib: lib.nn.RNN(4, 2, dropout=0.5, bias=1),
        lambda lib: lib.nn.RNNBase(4, 2, 3, 1),
        lambda lib: lib.nn.LSTM(4.0, 2, bias=1),
        lambda lib: lib.nn.GRU(4, 2, True, True),
    ],
)
def test_rnn_bias_and_batch_first_must_be_bool(make):
    t, e = _both(lambda lib: repr(make(lib)))
    assert t == e


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.nn.Hardtanh(min_value=-2),
        lambda lib: lib.nn.Hardtanh(max_value=2),
        lambda lib: lib.nn.Hardtanh(-1, 1, False, -3, 3),
        lambda lib: lib.nn.Hardtanh(min_value=5),
        lambda lib: lib.nn.Hardtanh(float("nan"), 1),
        lambda lib: lib.nn.Hardtanh(-1, float("nan")),
        lambda lib: lib.nn.Hardtanh((2, 3)),
        lambda lib: lib.nn.Hardtanh(0, 0),
    ],
)
def test_hardtanh_deprecated_bounds_and_check(make):
    t, e = _both(lambda lib: repr(make(lib)))
    assert t == e


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.nn.FractionalMaxPool3d(0),
        lambda lib: lib.nn.FractionalMaxPool3d(-1, output_size=2),
        lambda lib: lib.nn.FractionalMaxPool3d((2, 0, 1), output_size=2),
        lambda lib: lib.nn.FractionalMaxPool3d([2, 2, 2], output_ratio=0.5),
        lambda lib: lib.nn.FractionalMaxPool2d(0, output_size=2),
    ],
)
def test_fractional_max_pool_kernel_check(make):
    t, e = _both(lambda lib: repr(make(lib)))
    assert t == e


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.nn.LinearCrossEntropyLoss(0.5, True),
        lambda lib: lib.nn.LinearCrossEntropyLoss(3, 4, weight=lib.ones(3)),
        lambda lib: lib.nn.LinearCrossEntropyLoss(3, 4, weight=lib.ones(4, 1)),
        lambda lib: lib.nn.LinearCrossEntropyLoss(3, 4, label_smoothing=2),
        lambda lib: lib.nn.LinearCrossEntropyLoss(3, 4, label_smoothing=-0.1, weight=lib.ones(2)),
        lambda lib: lib.nn.LinearCrossEntropyLoss(3, 4, weight=lib.ones(4), out_features=(2,)),
    ],
)
def test_linear_cross_entropy_loss_constructor_checks(make):
    def run(lib):
        m = make(lib)
        return repr(m), [(k, tuple(v.shape)) for k, v in m.state_dict().items()]

    t, e = _both(run)
    assert t == e


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.nn.Unflatten(0.5, True),
        lambda lib: lib.nn.Unflatten(0.5, (2, 3)),
        lambda lib: lib.nn.Unflatten(None, [2]),
        lambda lib: lib.nn.Unflatten(1, (2, "a")),
    ],
)
def test_unflatten_checks_only_the_sizes_of_a_non_named_dim(make):
    t, e = _both(lambda lib: repr(make(lib)))
    assert t == e


def test_module_has_t_destination():
    assert hasattr(ember.nn.Module, "T_destination") == hasattr(torch.nn.Module, "T_destination")


@pytest.mark.parametrize("size", [0, 1, 2, 3])
def test_load_scalar_buffer_from_vector(size):
    # only a 1-element vector stands for a scalar (old checkpoints); others are size mismatches
    def make(lib):
        m = lib.nn.Module()
        m.register_buffer("sc", lib.tensor(1.0))
        r = m.load_state_dict({"sc": lib.arange(float(size)) + 5})
        return str(r), m.sc.item()

    t, e = _both(make)
    assert t == e
