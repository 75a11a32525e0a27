import sys

import pytest
from harness import A, Case, run_case, run_gradcheck

CASES = [
    Case("add", lambda m, x, y: x + y, [A(3, 4), A(4)]),
    Case("mul_scalar", lambda m, x: x * 2.5, [A(3, 4)]),
    Case("div", lambda m, x, y: x / y, [A(3, 4), A(3, 1, low=0.5, high=2)]),
    Case("matmul", lambda m, x, y: x @ y, [A(3, 4), A(4, 5)]),
    Case("sum_dim", lambda m, x: x.sum(1), [A(3, 4)]),
    Case("mean", lambda m, x: x.mean((0, 1), keepdim=True), [A(3, 4)]),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


def test_no_duplicate_package_import():
    # the repo root is the package: pytest must not import it again under the checkout's name
    import ember

    copies = [
        name
        for name, mod in list(sys.modules.items())  # a lazy module's getattr may import more
        if name != "ember" and getattr(mod, "__file__", None) == ember.__file__
    ]
    assert copies == [], f"ember imported twice as {copies}"
