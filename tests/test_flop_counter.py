"""ember.utils.flop_counter.FlopCounterMode against torch's: the flops of products and
convolutions, forward and backward, under torch's op names, per module (the same module names),
and the table. The same models run in both frameworks from the same weights."""

import warnings

import ember
import pytest
from ember.utils.flop_counter import FlopCounterMode

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode as TorchFlopCounterMode


def _counts(m, build, shape, input_grad=True, train=True):
    """(total, {module: {op: flops}}) of one forward (and backward) in framework ``m``."""
    m.manual_seed(0)
    net = build(m)
    x = m.linspace(-1, 1, int(__import__("math").prod(shape))).reshape(shape)
    x.requires_grad_(input_grad)
    mode = (FlopCounterMode if m is ember else TorchFlopCounterMode)(display=False)
    with mode as fc:
        if train:
            net(x).sum().backward()
        else:
            with m.no_grad():
                net(x)
    counts = {k: {str(op): v for op, v in d.items()} for k, d in fc.get_flop_counts().items()}
    return fc.get_total_flops(), counts


class _Net:
    """An MLP inside a named module tree (nested names: Net.enc.0), built in either framework."""

    def __new__(cls, m):
        class Net(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = m.nn.Sequential(m.nn.Linear(4, 8), m.nn.Tanh())
                self.head = m.nn.Linear(8, 2, bias=False)

            def forward(self, x):
                return self.head(self.enc(x))

        return Net()


MODELS = {
    "mlp": (lambda m: _Net(m), (3, 4)),
    "sequential": (
        lambda m: m.nn.Sequential(m.nn.Linear(8, 16), m.nn.ReLU(), m.nn.Linear(16, 4, bias=False)),
        (5, 8),
    ),
    "conv-stack": (
        lambda m: m.nn.Sequential(
            m.nn.Conv2d(3, 4, 3), m.nn.ReLU(), m.nn.Conv2d(4, 2, 1, bias=False)
        ),
        (2, 3, 8, 8),
    ),
    "winograd": (lambda m: m.nn.Conv2d(32, 32, 3, padding=1), (8, 32, 16, 16)),
    "depthwise-stride2": (lambda m: m.nn.Conv2d(8, 8, 3, groups=8, stride=2), (2, 8, 9, 9)),
    "grouped-dilated": (lambda m: m.nn.Conv2d(6, 4, 3, groups=2, dilation=2), (2, 6, 10, 10)),
    "conv1d": (lambda m: m.nn.Conv1d(3, 5, 4, stride=2), (2, 3, 20)),
    "conv3d": (lambda m: m.nn.Conv3d(2, 3, 2), (1, 2, 4, 4, 4)),
    "conv-transpose": (lambda m: m.nn.ConvTranspose2d(4, 3, 3, stride=2), (2, 4, 5, 5)),
}


@pytest.mark.parametrize("input_grad", [True, False], ids=["input-grad", "no-input-grad"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_training_step_flops_match_torch(name, input_grad):
    build, shape = MODELS[name]
    assert _counts(ember, build, shape, input_grad) == _counts(torch, build, shape, input_grad)


@pytest.mark.parametrize("name", ["sequential", "conv-stack", "conv-transpose"])
def test_forward_under_no_grad(name):
    build, shape = MODELS[name]
    assert _counts(ember, build, shape, train=False) == _counts(torch, build, shape, train=False)


def _products(m):
    r = lambda *s: m.ones(*s)
    m.bmm(r(3, 4, 5), r(3, 5, 6))
    m.mm(r(4, 5), r(5, 6))
    m.addmm(r(4, 6), r(4, 5), r(5, 6))
    m.baddbmm(r(3, 4, 6), r(3, 4, 5), r(3, 5, 6))
    _ = r(4, 5) @ r(5, 6), r(5) @ r(5, 3), r(4, 5) @ r(5), r(5) @ r(5)  # mv and dot: no formula
    _ = r(2, 3, 4, 5) @ r(5, 6), r(2, 3, 4, 5) @ r(2, 3, 5, 6)  # folded into mm; batched


def test_products_count_as_torchs_kernels():
    got = []
    for m, mode in ((ember, FlopCounterMode), (torch, TorchFlopCounterMode)):
        with mode(display=False) as fc:
            _products(m)
        got.append({k: {str(o): v for o, v in d.items()} for k, d in fc.get_flop_counts().items()})
    assert got[0] == got[1]


def test_transformer_layer_total_matches_torch():
    # the total matches; torch names its attention's packed projection mm or addmm by the
    # input's layout and files some backward products under the dropout modules
    def run(m, mode):
        m.manual_seed(0)
        layer = m.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
        with mode(display=False) as fc:
            layer(m.ones(2, 5, 16, requires_grad=True)).sum().backward()
        return fc.get_total_flops()

    assert run(ember, FlopCounterMode) == run(torch, TorchFlopCounterMode) == 122880


def test_mods_argument_warns_as_torch():
    for mode, m in ((FlopCounterMode, ember), (TorchFlopCounterMode, torch)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            mode(m.nn.Linear(2, 2), display=False)
        assert [str(x.message) for x in w] == [
            "mods argument is not needed anymore, you can stop passing it"
        ]


def test_table_printed_on_exit(capsys):
    net = _Net(ember)
    with FlopCounterMode(depth=2) as fc:
        net(ember.ones(3, 4, requires_grad=True)).sum().backward()
    printed = capsys.readouterr().out
    assert printed.strip() == fc.get_table(2)
    lines = printed.splitlines()
    total, counts = _counts(torch, MODELS["mlp"][0], MODELS["mlp"][1])
    assert lines[0].split() == ["Module", "FLOP", "%", "Total"]
    assert lines[1].split() == ["Global", str(total), "100.00%"]
    enc = str(sum(counts["Net.enc"].values()))
    assert any(line.split()[:2] == ["Net.enc", enc] for line in lines)
    assert not any("Net.enc.0" in line for line in lines)  # deeper than depth 2
    assert "Net.enc.0" in fc.get_table(3)


def test_counting_stops_at_exit_and_restarts_clean():
    fc = FlopCounterMode(display=False)
    with fc:
        ember.mm(ember.ones(2, 3), ember.ones(3, 4))
    ember.mm(ember.ones(2, 3), ember.ones(3, 4))
    assert fc.get_total_flops() == 48
    with fc:
        pass
    assert fc.get_total_flops() == 0
