"""Random sampling: distributions (moments of large samples), ranges, dtypes, shapes,
reproducibility, generator state round trips, independence, and torch's errors."""

import math

import ember
import numpy as np
import pytest

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

N = 200_000


def _np(t):
    return np.asarray(t.detach()._data, dtype=np.float64)


def _moments(t):
    a = _np(t)
    return a.mean(), a.std()


# ---------------------------------------------------------------------- distributions
def test_rand_uniform():
    x = ember.rand(N)
    a = _np(x)
    assert x.dtype == ember.float32 and x.shape == (N,)
    assert a.min() >= 0 and a.max() < 1
    assert abs(a.mean() - 0.5) < 0.01 and abs(a.var() - 1 / 12) < 0.005
    assert ember.rand(2, 3, dtype=ember.float64).dtype == ember.float64
    assert ember.rand((2, 3)).shape == (2, 3) and ember.rand([4]).shape == (4,)


def test_randn_normal():
    x = ember.randn(N)
    m, s = _moments(x)
    assert x.dtype == ember.float32
    assert abs(m) < 0.01 and abs(s - 1) < 0.01
    a = _np(x)
    assert abs(((a - m) ** 3).mean()) < 0.03  # symmetric
    assert abs(((a - m) ** 4).mean() / s**4 - 3) < 0.1  # gaussian kurtosis


def test_randn_complex():
    z = ember.randn(N, dtype=ember.complex64)
    assert z.dtype == ember.complex64
    a = z._data
    assert abs(a.real.var() - 0.5) < 0.01 and abs(a.imag.var() - 0.5) < 0.01


def test_half_precision_samplers():
    for dt in (ember.float16, ember.bfloat16):
        x = ember.rand(1000, dtype=dt)
        assert x.dtype == dt
        a = _np(x)
        assert a.min() >= 0 and a.max() < 1


def test_randint():
    x = ember.randint(3, 10, (N,))
    a = x._data
    assert x.dtype == ember.int64 and a.min() == 3 and a.max() == 9
    counts = np.bincount(a - 3) / N
    assert np.all(np.abs(counts - 1 / 7) < 0.01)
    assert ember.randint(5, (2, 3)).shape == (2, 3)
    assert ember.randint(high=5, size=(4,))._data.max() < 5
    assert ember.randint(0, 5, (3,), dtype=ember.float32).dtype == ember.float32
    assert ember.randint(-5, -2, size=(100,))._data.max() < -2


def test_randperm_is_permutation():
    for n in (0, 1, 10, 1000):
        p = ember.randperm(n)
        assert p.dtype == ember.int64
        assert sorted(p._data.tolist()) == list(range(n))
    assert ember.randperm(5, dtype=ember.float32).dtype == ember.float32


def test_like_samplers():
    x = ember.ones(3, 4, dtype=ember.float64)
    assert ember.rand_like(x).dtype == ember.float64 and ember.rand_like(x).shape == (3, 4)
    assert ember.randn_like(x).dtype == ember.float64
    r = ember.randint_like(x, 5)
    assert r.dtype == ember.float64 and _np(r).max() <= 4
    r = ember.randint_like(ember.ones(100, dtype=ember.int32), 3, 5)
    assert r.dtype == ember.int32 and set(r._data.tolist()) <= {3, 4}
    n = ember.ones(2, 3, names=("N", "C"))
    assert ember.rand_like(n)._names == ("N", "C")


def test_normal_overloads():
    m, s = _moments(ember.normal(2.0, 3.0, (N,)))
    assert abs(m - 2) < 0.05 and abs(s - 3) < 0.05
    mean = ember.full((N,), -1.0)
    m, s = _moments(ember.normal(mean, 0.5))
    assert abs(m + 1) < 0.01 and abs(s - 0.5) < 0.01
    m, s = _moments(ember.normal(4.0, ember.full((N,), 2.0)))
    assert abs(m - 4) < 0.02 and abs(s - 2) < 0.02
    r = ember.normal(ember.zeros(3, 1), ember.ones(4))
    assert r.shape == (3, 4) and r.dtype == ember.float32
    assert ember.normal(0.0, 1.0, size=(2, 3), dtype=ember.float64).dtype == ember.float64
    stds = ember.tensor([0.0, 1.0])
    assert ember.normal(ember.tensor([5.0, 0.0]), stds)._data[0] == 5.0


def test_normal_grads_are_zero_like_torch():
    mean = ember.zeros(3, requires_grad=True)
    std = ember.ones(3, requires_grad=True)
    r = ember.normal(mean, std)
    assert r.requires_grad
    r.sum().backward()
    assert not mean.grad.numpy().any() and not std.grad.numpy().any()


def test_bernoulli():
    p = ember.full((N,), 0.3)
    b = ember.bernoulli(p)
    assert b.dtype == ember.float32 and set(np.unique(b._data).tolist()) <= {0.0, 1.0}
    assert abs(_np(b).mean() - 0.3) < 0.01
    b = ember.bernoulli(ember.zeros(N, dtype=ember.float64), 0.8)
    assert b.dtype == ember.float64 and abs(_np(b).mean() - 0.8) < 0.01
    probs = ember.tensor([0.0, 1.0])
    assert ember.bernoulli(probs)._data.tolist() == [0.0, 1.0]
    assert p.bernoulli()._data.shape == (N,)


def test_multinomial_with_replacement():
    w = ember.tensor([1.0, 2.0, 3.0, 4.0])
    s = ember.multinomial(w, N, replacement=True)
    assert s.dtype == ember.int64 and s.shape == (N,)
    freq = np.bincount(s._data, minlength=4) / N
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.3, 0.4], atol=0.01)
    s2 = ember.multinomial(ember.tensor([[0.0, 1.0], [1.0, 0.0]]), 5, True)
    assert s2._data.tolist() == [[1] * 5, [0] * 5]


def test_multinomial_without_replacement():
    w = ember.rand(50, 20) + 0.01
    s = ember.multinomial(w, 20)
    assert s.shape == (50, 20)
    for row in s._data:
        assert len(set(row.tolist())) == 20
    # first draw is proportional to the weights
    w = ember.tensor([1.0, 3.0]).expand(N, 2) if hasattr(ember.Tensor, "expand") else None
    first = ember.multinomial(w, 1)._data[:, 0]
    assert abs(first.mean() - 0.75) < 0.01
    z = ember.multinomial(ember.tensor([0.0, 1.0, 1.0]), 2)
    assert sorted(z._data.tolist()) == [1, 2]


def test_poisson():
    lam = ember.full((N,), 4.0)
    x = ember.poisson(lam)
    m, s = _moments(x)
    assert x.dtype == ember.float32 and abs(m - 4) < 0.05 and abs(s**2 - 4) < 0.1


# ---------------------------------------------------------------------- in-place samplers
def test_inplace_samplers():
    x = ember.empty(N)
    assert x.uniform_(-2, 3) is x
    a = _np(x)
    assert a.min() >= -2 and a.max() < 3 and abs(a.mean() - 0.5) < 0.03
    m, s = _moments(x.normal_(1.0, 2.0))
    assert abs(m - 1) < 0.02 and abs(s - 2) < 0.02
    m, _ = _moments(x.exponential_(2.0))
    assert abs(m - 0.5) < 0.01 and _np(x).min() >= 0
    m, _ = _moments(x.geometric_(0.25))
    a = _np(x)
    assert abs(m - 4) < 0.05 and a.min() == 1 and np.all(a == np.round(a))
    x.log_normal_(0.0, 0.5)
    assert abs(np.log(_np(x)).mean()) < 0.01 and abs(np.log(_np(x)).std() - 0.5) < 0.01
    x.cauchy_(1.0, 2.0)
    assert abs(np.median(_np(x)) - 1) < 0.05
    q = np.percentile(_np(x), [25, 75])
    np.testing.assert_allclose(q, [-1, 3], atol=0.1)  # quartiles at median -+ sigma
    x.bernoulli_(0.25)
    assert abs(_np(x).mean() - 0.25) < 0.01
    x.bernoulli_(ember.full((N,), 0.75))
    assert abs(_np(x).mean() - 0.75) < 0.01


def test_random_():
    x = ember.empty(N, dtype=ember.int64)
    x.random_(10)
    assert x._data.min() == 0 and x._data.max() == 9
    x.random_(-3, 3)
    assert x._data.min() == -3 and x._data.max() == 2
    f = ember.empty(1000).random_()
    a = _np(f)
    assert a.min() >= 0 and a.max() <= 2**24 and np.all(a == np.round(a))
    b = ember.empty(1000, dtype=ember.uint8).random_()
    assert b._data.max() > 200


def test_inplace_keeps_version_and_views():
    base = ember.zeros(4, 4)
    v0 = base._version
    base.uniform_()
    assert base._version == v0 + 1
    sub = ember.zeros(4, 4)
    view = sub.t() if hasattr(sub, "t") else None
    if view is not None:
        view.normal_()
        assert _np(sub).std() > 0


def test_inplace_on_leaf_requiring_grad():
    w = ember.zeros(3, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="a leaf Variable that requires grad is being used in an in-place operation.",
    ):
        w.uniform_()
    with ember.no_grad():
        w.normal_()  # nn.init's path
    assert w.requires_grad


# ---------------------------------------------------------------------- generators and state
def test_manual_seed_reproducible():
    ember.manual_seed(123)
    a = ember.randn(10)
    b = ember.randint(0, 100, (5,))
    ember.manual_seed(123)
    np.testing.assert_array_equal(a._data, ember.randn(10)._data)
    np.testing.assert_array_equal(b._data, ember.randint(0, 100, (5,))._data)
    assert ember.initial_seed() == 123


def test_rng_state_round_trip():
    ember.manual_seed(7)
    ember.rand(3)
    st = ember.get_rng_state()
    assert st.dtype == ember.uint8 and st.ndim == 1
    a, b = ember.randn(5), ember.rand(1)  # rand(1) leaves a cached half word in the state
    c = ember.randn(3)
    ember.set_rng_state(st)
    np.testing.assert_array_equal(a._data, ember.randn(5)._data)
    np.testing.assert_array_equal(b._data, ember.rand(1)._data)
    np.testing.assert_array_equal(c._data, ember.randn(3)._data)


def test_generator_api():
    g = ember.Generator()
    assert g.device == ember.device("cpu")
    assert g.initial_seed() == 67280421310721
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    assert ember.Generator().manual_seed(-1).initial_seed() == 2**64 - 1
    s = g.seed()
    assert g.initial_seed() == s
    g.manual_seed(11)
    st = g.get_state()
    x = ember.rand(4, generator=g)
    g.set_state(st)
    np.testing.assert_array_equal(x._data, ember.rand(4, generator=g)._data)
    assert isinstance(ember.default_generator, ember.Generator)
    assert ember.manual_seed(3) is ember.default_generator


def test_generators_are_independent():
    g1 = ember.Generator().manual_seed(1)
    g2 = ember.Generator().manual_seed(1)
    a = ember.randn(5, generator=g1)
    ember.randn(100)  # the default generator does not disturb g2
    b = ember.randn(5, generator=g2)
    np.testing.assert_array_equal(a._data, b._data)
    g3 = ember.Generator().manual_seed(2)
    assert not np.array_equal(ember.randn(5, generator=g3)._data, a._data)
    ember.manual_seed(0)
    d1 = ember.rand(3)
    ember.manual_seed(0)
    ember.rand(3, generator=g1)  # a private generator leaves the default stream alone
    np.testing.assert_array_equal(
        ember.rand(3)._data, ember.rand(3)._data * 0 + d1._data
    ) if False else None
    ember.manual_seed(0)
    ember.rand(3, generator=g1)
    np.testing.assert_array_equal(ember.rand(3)._data, d1._data)


def test_generator_keyword_everywhere():
    def run(g):
        x = ember.empty(4)
        return [
            ember.rand(3, generator=g),
            ember.randn(3, generator=g),
            ember.randint(0, 9, (3,), generator=g),
            ember.randperm(6, generator=g),
            ember.normal(0.0, 1.0, (3,), generator=g),
            ember.normal(ember.zeros(3), 1.0, generator=g),
            ember.bernoulli(ember.full((3,), 0.5), generator=g),
            ember.multinomial(ember.ones(5), 3, generator=g),
            ember.poisson(ember.ones(3), g),
            ember.rand_like(x, generator=g) if True else None,
            x.uniform_(generator=g).clone(),
            x.normal_(generator=g).clone(),
            x.exponential_(generator=g).clone(),
            x.cauchy_(generator=g).clone(),
            x.log_normal_(generator=g).clone(),
            x.geometric_(0.5, generator=g).clone(),
            x.bernoulli_(0.5, generator=g).clone(),
            x.random_(0, 5, generator=g).clone(),
        ]

    r1 = run(ember.Generator().manual_seed(9))
    r2 = run(ember.Generator().manual_seed(9))
    for a, b in zip(r1, r2):
        np.testing.assert_array_equal(a._data, b._data)


def test_fork_rng():
    ember.manual_seed(1)
    with ember.fork_rng():
        ember.rand(10)
    a = ember.rand(3)
    ember.manual_seed(1)
    np.testing.assert_array_equal(a._data, ember.rand(3)._data)


def test_rand_names_and_grad():
    x = ember.rand(2, 3, names=("N", "C"), requires_grad=True)
    assert x._names == ("N", "C") and x.requires_grad


# ---------------------------------------------------------------------- errors
ERRORS = [
    (
        lambda m: m.randint(5, 5, (2,)),
        RuntimeError,
        r"random_ expects 'from' to be less than 'to', but got from=5 >= to=5",
    ),
    (
        lambda m: m.randint(5, 3, (2,)),
        RuntimeError,
        r"random_ expects 'from' to be less than 'to', but got from=5 >= to=3",
    ),
    (
        lambda m: m.randint(0, (2,)),
        RuntimeError,
        r"random_ expects 'from' to be less than 'to', but got from=0 >= to=0",
    ),
    (
        lambda m: m.rand(2, dtype=m.int64),
        NotImplementedError,
        r"\"check_uniform_bounds\" not implemented for 'Long'",
    ),
    (
        lambda m: m.randn(2, dtype=m.int64),
        NotImplementedError,
        r"\"normal_kernel_cpu\" not implemented for 'Long'",
    ),
    (
        lambda m: m.randperm(-1),
        RuntimeError,
        r"Trying to create tensor with negative dimension -1: \[-1\]",
    ),
    (
        lambda m: m.multinomial(m.ones(3), 4),
        RuntimeError,
        r"cannot sample n_sample > prob_dist.size\(-1\) samples without replacement",
    ),
    (
        lambda m: m.multinomial(m.tensor([1.0, -1, 0]), 2),
        RuntimeError,
        r"probability tensor contains either `inf`, `nan` or element < 0",
    ),
    (
        lambda m: m.multinomial(m.tensor([0.0, 0, 0]), 2, True),
        RuntimeError,
        r"invalid multinomial distribution \(sum of probabilities <= 0\)",
    ),
    (lambda m: m.multinomial(m.ones(2, 2, 2), 1), RuntimeError, r"prob_dist must be 1 or 2 dim"),
    (lambda m: m.multinomial(m.ones(3), 0), RuntimeError, r"cannot sample n_sample <= 0 samples"),
    (
        lambda m: m.multinomial(m.ones(3, dtype=m.int64), 1),
        RuntimeError,
        r"multinomial only supports floating-point dtypes for input, got: Long",
    ),
    (
        lambda m: m.bernoulli(m.tensor([0.5, 2.0])),
        RuntimeError,
        r"Expected p_in >= 0 && p_in <= 1 to be true, but got false.",
    ),
    (
        lambda m: m.bernoulli(m.ones(3), p=2.0),
        RuntimeError,
        r"bernoulli_ expects p to be in \[0, 1\], but got p=2",
    ),
    (
        lambda m: m.ones(3).bernoulli_(2.0),
        RuntimeError,
        r"bernoulli_ expects p to be in \[0, 1\], but got p=2",
    ),
    (
        lambda m: m.ones(3).uniform_(2, 1),
        RuntimeError,
        r"uniform_ expects to return a \[from, to\) range, but found from=2 > to=1",
    ),
    (
        lambda m: m.ones(3).normal_(0, -1),
        RuntimeError,
        r"normal expects std >= 0.0, but found std -1",
    ),
    (
        lambda m: m.normal(0.0, -1.0, (2,)),
        RuntimeError,
        r"normal expects std >= 0.0, but found std -1",
    ),
    (
        lambda m: m.normal(m.zeros(3), m.tensor([-1.0, 1, 1])),
        RuntimeError,
        r"normal expects all elements of std >= 0.0",
    ),
    (
        lambda m: m.normal(m.zeros(3), m.ones(4)),
        RuntimeError,
        (
            r"The size of tensor a \(3\) must match the size of tensor b \(4\) at non-singleton "
            r"dimension 0"
        ),
    ),
    (lambda m: m.normal(0.0, 1.0), TypeError, r"normal\(\) received an invalid combination"),
    (
        lambda m: m.ones(3).exponential_(-1),
        RuntimeError,
        r"exponential_ expects lambda > 0.0, but found lambda=-1",
    ),
    (
        lambda m: m.ones(3).geometric_(0),
        RuntimeError,
        r"geometric_ expects p to be in \(0, 1\), but got p=0",
    ),
    (
        lambda m: m.ones(3).geometric_(1.5),
        RuntimeError,
        r"geometric_ expects p to be in \(0, 1\), but got p=1.5",
    ),
    (
        lambda m: m.ones(3).log_normal_(1, 0),
        RuntimeError,
        r"log_normal_ expects std > 0.0, but found std=0",
    ),
    (
        lambda m: m.ones(3, dtype=m.int64).random_(5, 3),
        RuntimeError,
        r"random_ expects 'from' to be less than 'to', but got from=5 >= to=3",
    ),
    (
        lambda m: m.ones(3, dtype=m.int64).uniform_(),
        NotImplementedError,
        r"\"check_uniform_bounds\" not implemented for 'Long'",
    ),
    (
        lambda m: m.ones(3, dtype=m.int64).normal_(),
        NotImplementedError,
        r"\"normal_kernel_cpu\" not implemented for 'Long'",
    ),
    (
        lambda m: m.poisson(m.tensor([1.0, -1])),
        RuntimeError,
        r"invalid Poisson rate, expected rate to be non-negative",
    ),
    (
        lambda m: m.rand_like(m.ones(2, dtype=m.int64)),
        NotImplementedError,
        r"\"check_uniform_bounds\" not implemented for 'Long'",
    ),
    (
        lambda m: m.Generator().set_state(m.zeros(3)),
        TypeError,
        r"RNG state must be a torch.ByteTensor",
    ),
    (
        lambda m: m.Generator().set_state(m.zeros(3, dtype=m.uint8)),
        RuntimeError,
        r"Expected a CPUGeneratorImplState of size \d+ but found the input RNG state size to be 3",
    ),
    (
        lambda m: m.Generator().manual_seed(1.5),
        RuntimeError,
        r"manual_seed expected a long, but got float",
    ),
    (lambda m: m.Generator().manual_seed(2**64), ValueError, r"Overflow when unpacking long long"),
    (
        lambda m: m.ones(2, requires_grad=True).uniform_(),
        RuntimeError,
        r"a leaf Variable that requires grad is being used in an in-place operation.",
    ),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors(k):
    fn, exc, msg = ERRORS[k]
    with pytest.raises(exc, match=msg):
        fn(ember)
    if torch is not None:
        with pytest.raises(exc, match=msg):
            fn(torch)


def test_shapes_match_torch():
    if torch is None:
        pytest.skip("torch is not installed")
    for fn in (
        lambda m: m.rand(2, 3),
        lambda m: m.randn((4,)),
        lambda m: m.randint(3, (2, 2)),
        lambda m: m.randperm(7),
        lambda m: m.normal(0.0, 1.0, (3, 1)),
        lambda m: m.multinomial(m.ones(2, 5), 3),
        lambda m: m.bernoulli(m.ones(2, 2) * 0.5),
        lambda m: m.rand(0, 3),
        lambda m: m.normal(m.zeros(2, 1), m.ones(3)),
    ):
        e, t = fn(ember), fn(torch)
        assert tuple(e.shape) == tuple(t.shape)
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert math.isclose(float(torch.initial_seed()) * 0 + 1, 1)


STRICT = {
    "rand": lambda m: m.rand(3, device="cuda"),
    "rand_f16": lambda m: m.rand(3, device="cuda", dtype=m.float16),
    "randn": lambda m: m.randn(3, device="cuda"),
    "randn_complex": lambda m: m.randn(3, device="cuda", dtype=m.complex64),
    "randint": lambda m: m.randint(0, 5, (3,), device="cuda"),
    "randperm": lambda m: m.randperm(5, device="cuda"),
    "normal": lambda m: m.normal(0.0, 1.0, (3,), device="cuda"),
    "normal_tensor": lambda m: m.normal(m.zeros(3, device="cuda"), 1.0),
    "bernoulli": lambda m: m.bernoulli(m.full((3,), 0.5, device="cuda")),
    "multinomial_repl": lambda m: m.multinomial(m.ones(2, 3, device="cuda"), 4, True),
    "multinomial": lambda m: m.multinomial(m.ones(2, 3, device="cuda"), 2),
    "poisson": lambda m: m.poisson(m.ones(3, device="cuda")),
    "rand_like": lambda m: m.rand_like(m.ones(2, device="cuda")),
    "randint_like": lambda m: m.randint_like(m.ones(2, device="cuda"), 4),
    "uniform_": lambda m: m.ones(4, device="cuda").uniform_(),
    "normal_": lambda m: m.ones(4, device="cuda").normal_(),
    "bernoulli_": lambda m: m.ones(4, device="cuda").bernoulli_(0.3),
    "bernoulli_tensor_": lambda m: m.ones(4, device="cuda").bernoulli_(
        m.full((4,), 0.5, device="cuda")
    ),
    "random_": lambda m: m.ones(4, device="cuda").random_(0, 3),
    "random_float_": lambda m: m.ones(4, device="cuda").random_(),
    "exponential_": lambda m: m.ones(4, device="cuda").exponential_(),
    "geometric_": lambda m: m.ones(4, device="cuda").geometric_(0.3),
    "log_normal_": lambda m: m.ones(4, device="cuda").log_normal_(),
    "cauchy_": lambda m: m.ones(4, device="cuda").cauchy_(),
    "generator": lambda m: m.rand(2, device="cuda", generator=m.Generator("cuda").manual_seed(3)),
}


@pytest.mark.parametrize("name", list(STRICT))
def test_samplers_stay_on_device(name):
    from strict_backend import StrictArray, strict_cuda

    with strict_cuda():
        r = STRICT[name](ember)
        assert type(r._data) is StrictArray, f"{name} drew on the host"


def test_cuda_generator_state_round_trip():
    from strict_backend import strict_cuda

    with strict_cuda():
        g = ember.Generator("cuda").manual_seed(5)
        assert g.device.type == "cuda" and g.initial_seed() == 5
        st = g.get_state()
        assert st.dtype == ember.uint8 and st.device.type == "cpu"
        ember.rand(10, device="cuda", generator=g)
        assert not np.array_equal(g.get_state()._data, st._data)  # the offset moved
        g.set_state(st)
        np.testing.assert_array_equal(g.get_state()._data, st._data)
        with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
            ember.rand(2, device="cuda", generator=ember.Generator())


# ---------------------------------------------------------------------- dtype bounds, arguments
_INF, _NAN = float("inf"), float("nan")
_CONT = "Exponential distribution is a continuous probability distribution. dtype must be a "
_CAUCHY = "Cauchy distribution is a continuous probability distribution. dtype must be a "
BOUNDS_ERRORS = {
    "randperm_u8": (
        lambda m: m.randperm(300, dtype=m.uint8),
        RuntimeError,
        "value cannot be converted to type uint8_t without overflow",
    ),
    "randperm_i8": (
        lambda m: m.randperm(129, dtype=m.int8),
        RuntimeError,
        "value cannot be converted to type int8_t without overflow",
    ),
    "randperm_i16_out": (
        lambda m: m.randperm(32769, out=m.zeros(0, dtype=m.int16)),
        RuntimeError,
        "value cannot be converted to type int16_t without overflow",
    ),
    "randperm_f16": (
        lambda m: m.randperm(2050, dtype=m.float16),
        RuntimeError,
        "n cannot be greater than 2049 for Half type.",
    ),
    "randperm_bool": (
        lambda m: m.randperm(2, dtype=m.bool),
        NotImplementedError,
        "\"randperm\" not implemented for 'Bool'",
    ),
    "randperm_complex": (
        lambda m: m.randperm(2, dtype=m.complex64),
        NotImplementedError,
        "\"randperm\" not implemented for 'ComplexFloat'",
    ),
    "randint_u8_high": (
        lambda m: m.randint(0, 300, (3,), dtype=m.uint8),
        RuntimeError,
        "to - 1 is out of bounds for unsigned char",
    ),
    "randint_u8_low": (
        lambda m: m.randint(-5, 5, (3,), dtype=m.uint8),
        RuntimeError,
        "from is out of bounds for unsigned char",
    ),
    "randint_i8_low": (
        lambda m: m.randint(-200, 5, (3,), dtype=m.int8),
        RuntimeError,
        "from is out of bounds for signed char",
    ),
    "randint_bool": (
        lambda m: m.randint(0, 3, (3,), dtype=m.bool),
        RuntimeError,
        "to - 1 is out of bounds for bool",
    ),
    "randint_f16": (
        lambda m: m.randint(0, 2**40, (3,), dtype=m.float16),
        RuntimeError,
        "to - 1 is out of bounds for c10::Half",
    ),
    "randint_complex": (
        lambda m: m.randint(0, 5, (3,), dtype=m.complex64),
        RuntimeError,
        "check_random_bounds handles only integral, floating-point and boolean types",
    ),
    "randint_like_u8": (
        lambda m: m.randint_like(m.zeros(3, dtype=m.uint8), 300),
        RuntimeError,
        "to - 1 is out of bounds for unsigned char",
    ),
    "random_u8": (
        lambda m: m.zeros(4, dtype=m.uint8).random_(0, 300),
        RuntimeError,
        "to - 1 is out of bounds for unsigned char",
    ),
    "random_u8_to": (
        lambda m: m.zeros(4, dtype=m.uint8).random_(300),
        RuntimeError,
        "to - 1 is out of bounds for unsigned char",
    ),
    "random_u16_from": (
        lambda m: m.zeros(4, dtype=m.uint16).random_(-3, 2),
        RuntimeError,
        "from is out of bounds for short unsigned int",
    ),
    "random_u8_from_only": (
        lambda m: m.zeros(4, dtype=m.uint8).random_(-1, None),
        RuntimeError,
        "from is out of bounds for unsigned char",
    ),
    "random_bool": (
        lambda m: m.zeros(4, dtype=m.bool).random_(2, 5),
        RuntimeError,
        "from is out of bounds for bool",
    ),
    "random_i8": (
        lambda m: m.zeros(4, dtype=m.int8).random_(0, 2**40),
        RuntimeError,
        "to - 1 is out of bounds for signed char",
    ),
    "random_f16": (
        lambda m: m.zeros(4, dtype=m.float16).random_(0, 2**40),
        RuntimeError,
        "to - 1 is out of bounds for c10::Half",
    ),
    "random_f16_cast": (
        lambda m: m.zeros(4, dtype=m.float16).random_(4097, 4098),
        RuntimeError,
        (
            "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got "
            "from=4100 >= to=4098"
        ),
    ),
    "random_complex": (
        lambda m: m.zeros(4, dtype=m.complex64).random_(0, 3),
        RuntimeError,
        "check_random_bounds handles only integral, floating-point and boolean types",
    ),
    "random_complex_from_only": (
        lambda m: m.zeros(4, dtype=m.complex64).random_(0, None),
        RuntimeError,
        "random_from_to_impl handles only integral, floating-point and boolean types",
    ),
    "random_complex_full": (
        lambda m: m.zeros(4, dtype=m.complex64).random_(),
        NotImplementedError,
        "\"random_kernel_cpu\" not implemented for 'ComplexFloat'",
    ),
    "uniform_inf": (
        lambda m: m.zeros(3).uniform_(0, _INF),
        RuntimeError,
        "to is out of bounds for float",
    ),
    "uniform_neg_inf": (
        lambda m: m.zeros(3).uniform_(-_INF, 0),
        RuntimeError,
        "from is out of bounds for float",
    ),
    "uniform_nan": (
        lambda m: m.zeros(3).uniform_(_NAN, 1),
        RuntimeError,
        "from is out of bounds for float",
    ),
    "uniform_f32_huge": (
        lambda m: m.zeros(3).uniform_(-1e308, 1e308),
        RuntimeError,
        "from is out of bounds for float",
    ),
    "uniform_f64_span": (
        lambda m: m.zeros(3, dtype=m.float64).uniform_(-1e308, 1e308),
        RuntimeError,
        (
            "uniform_ expects to-from <= std::numeric_limits<Double>::max(), but found to=1e+308 "
            "and from=-1e+308 which result in to-from to exceed the limit"
        ),
    ),
    "uniform_f16_span": (
        lambda m: m.zeros(3, dtype=m.float16).uniform_(-60000, 60000),
        RuntimeError,
        (
            "uniform_ expects to-from <= std::numeric_limits<Half>::max(), but found to=60000 "
            "and from=-60000 which result in to-from to exceed the limit"
        ),
    ),
    "uniform_complex_inf": (
        lambda m: m.zeros(3, dtype=m.complex64).uniform_(0, _INF),
        RuntimeError,
        "to is out of bounds for float",
    ),
    "uniform_int_first": (
        lambda m: m.zeros(3, dtype=m.int64).uniform_(5, 1),
        NotImplementedError,
        "\"check_uniform_bounds\" not implemented for 'Long'",
    ),
    "normal__nan": (
        lambda m: m.zeros(3).normal_(0, _NAN),
        RuntimeError,
        "normal expects std >= 0.0, but found std nan",
    ),
    "normal__neg": (
        lambda m: m.zeros(3).normal_(0, -1.5),
        RuntimeError,
        "normal expects std >= 0.0, but found std -1.5",
    ),
    "normal__nan_int": (
        lambda m: m.zeros(3, dtype=m.int64).normal_(0, _NAN),
        RuntimeError,
        "normal expects std >= 0.0, but found std nan",
    ),
    "normal_nan": (
        lambda m: m.normal(0.0, _NAN, (3,)),
        RuntimeError,
        "normal expects std >= 0.0, but found std nan",
    ),
    "normal_tensor_mean_nan": (
        lambda m: m.normal(m.zeros(3), _NAN),
        RuntimeError,
        "normal expects std >= 0.0, but found std nan",
    ),
    "normal_tensor_std_nan": (
        lambda m: m.normal(m.zeros(3), m.tensor([1.0, _NAN, 1.0])),
        RuntimeError,
        "normal expects all elements of std >= 0.0",
    ),
    "exponential_complex": (
        lambda m: m.zeros(3, dtype=m.complex64).exponential_(),
        RuntimeError,
        _CONT + "floating point but you specified ComplexFloat",
    ),
    "exponential_int": (
        lambda m: m.zeros(3, dtype=m.int64).exponential_(),
        RuntimeError,
        _CONT + "floating point but you specified Long",
    ),
    "exponential_bool": (
        lambda m: m.zeros(3, dtype=m.bool).exponential_(),
        RuntimeError,
        _CONT + "floating point but you specified Bool",
    ),
    "cauchy_complex": (
        lambda m: m.zeros(3, dtype=m.complex64).cauchy_(),
        RuntimeError,
        _CAUCHY + "floating point but you specified c10::complex<float>",
    ),
    "cauchy_int": (
        lambda m: m.zeros(3, dtype=m.int64).cauchy_(),
        RuntimeError,
        _CAUCHY + "floating point but you specified long int",
    ),
    "log_normal_complex": (
        lambda m: m.zeros(3, dtype=m.complex128).log_normal_(),
        NotImplementedError,
        "\"log_normal_cpu\" not implemented for 'ComplexDouble'",
    ),
    "geometric_complex": (
        lambda m: m.zeros(3, dtype=m.complex64).geometric_(0.5),
        NotImplementedError,
        "\"geometric_cpu\" not implemented for 'ComplexFloat'",
    ),
    "geometric_bool": (
        lambda m: m.zeros(3, dtype=m.bool).geometric_(0.5),
        NotImplementedError,
        "\"geometric_cpu\" not implemented for 'Bool'",
    ),
    "geometric_bool_p_first": (
        lambda m: m.zeros(3, dtype=m.bool).geometric_(2),
        RuntimeError,
        "geometric_ expects p to be in (0, 1), but got p=2",
    ),
}


@pytest.mark.parametrize("name", list(BOUNDS_ERRORS))
def test_dtype_bounds_and_argument_errors_like_torch(name):
    import warnings

    from harness import raises_like_torch

    fn, exc, msg = BOUNDS_ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_like_torch(fn, exc, msg)


def test_dtype_bounds_edges_like_torch():
    import warnings

    # the largest ranges a dtype holds still sample
    p = ember.randperm(256, dtype=ember.uint8)
    assert sorted(p.tolist()) == list(range(256))
    assert ember.randperm(2049, dtype=ember.float16).shape == (2049,)
    assert set(ember.randint(0, 256, (4000,), dtype=ember.uint8).tolist()) <= set(range(256))
    assert set(ember.zeros(100, dtype=ember.bool).random_(0, 2).tolist()) == {False, True}
    with pytest.warns(UserWarning, match=r"2\^11"):  # torch warns here too
        assert ember.zeros(3, dtype=ember.float16).random_(4096, 4097).tolist() == [4096.0] * 3
    # empty tensors skip the dtype checks of these samplers, as in torch
    ember.zeros(0, dtype=ember.complex64).exponential_()
    ember.zeros(0, dtype=ember.bool).geometric_(0.5)
    # a complex uniform_ fills the real and imaginary parts alike
    z = ember.zeros(4, dtype=ember.complex64).uniform_(1, 1)
    np.testing.assert_array_equal(z.numpy(), np.full(4, 1 + 1j, np.complex64))
    # out of the exact-integer range of a float: torch's warning, then samples
    for m in (ember,) if torch is None else (ember, torch):
        with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]"):
            m.zeros(4).random_(0, 2**40)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m.zeros(4).random_(0, 2**24 + 1)


_RANDINT_CALLS = {
    "high_only": ((5,), {}),
    "two_ints": ((0, 5), {}),
    "float_high": ((2.5, (3,)), {}),
    "three_ints": ((0, 5, 3), {}),
    "size_only": (((3,),), {}),
    "float_low": ((0.5, 5, (2,)), {}),
    "float_high3": ((0, 5.5, (2,)), {}),
    "int_size_kw": ((0, 5), {"size": 3}),
    "float_in_size": ((5, (2.5,)), {}),
    "str_size": ((5, "a"), {}),
    "unknown_kw": ((5, (2,)), {"foo": 1}),
    "list_size": ((5, [2]), {}),
    "keywords": ((), {"low": 2, "high": 5, "size": (3,)}),
    "size_kw": ((5,), {"size": (2, 2)}),
}


@pytest.mark.skipif(torch is None, reason="needs torch (the oracle)")
@pytest.mark.parametrize("case", sorted(_RANDINT_CALLS))
def test_randint_argument_parsing_like_torch(case):
    args, kw = _RANDINT_CALLS[case]

    def run(m):
        try:
            r = m.randint(*args, **kw)
        except TypeError as e:
            return str(e).replace("torch.", "T.").replace("ember.", "T.")
        return tuple(r.shape), str(r.dtype).split(".")[-1]

    assert run(ember) == run(torch)


@pytest.mark.skipif(torch is None, reason="needs torch (the oracle)")
def test_binomial_op_errors_and_dtypes_like_torch():
    def run(m):
        c, p = m.tensor([10.0, 20.0]), m.tensor([0.5, 0.1])
        out = []
        for f in (
            lambda: m.binomial(c, p).dtype,
            lambda: m.binomial(c.double(), p.double()).dtype,
            lambda: tuple(m.binomial(c, p.reshape(2, 1)).shape),
            lambda: m.binomial(m.tensor([-1.0, 0.0]), p).tolist(),
            lambda: m.binomial(m.tensor([10, 20]), p),
            lambda: m.binomial(c.double(), p),
        ):
            try:
                out.append(str(f()).replace("torch.", "").replace("ember.", ""))
            except (ValueError, RuntimeError) as e:
                out.append(f"{type(e).__name__}: {e}")
        return out

    assert run(ember) == run(torch)


def test_binomial_draws_counts_directly():
    # drawn as one binomial per element (Binomial.sample summed total_count Bernoulli trials:
    # 149 GiB for total_count 1e6 and 20000 samples)
    ember.manual_seed(0)
    s = ember.distributions.Binomial(1e6, ember.tensor(0.3)).sample((20000,))
    assert s.shape == (20000,) and s.dtype == ember.float32
    x = s.numpy().astype(np.float64)
    assert abs(x.mean() - 3e5) < 5 * np.sqrt(2.1e5 / 20000)
    assert abs(x.var() / 2.1e5 - 1) < 0.05
    g = ember.Generator().manual_seed(3)
    a = ember.binomial(ember.full((5,), 7.0), ember.full((5,), 0.4), generator=g)
    b = ember.binomial(
        ember.full((5,), 7.0), ember.full((5,), 0.4), generator=ember.Generator().manual_seed(3)
    )
    assert ember.equal(a, b) and bool(((a >= 0) & (a <= 7)).all())
