"""API coverage: every ``torch.*`` and ``torch.Tensor.*`` name of the project's API list
(shared/spec/torch_api.tsv) exists in ember, except those in EXPECTED_MISSING (names that belong to
later issues, each with its family). The list must stay honest: a listed name that now exists
fails the test too, so whoever adds it also deletes its entry here."""

from __future__ import annotations

import pathlib

import ember
import pytest

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

# shared/ sits beside the checkout: <root>/shared/spec/torch_api.tsv, <root>/<checkout>/tests/...
SPEC = pathlib.Path(__file__).resolve().parents[2] / "shared" / "spec" / "torch_api.tsv"

# The spec's pointwise list stops at log2; its header says the rest of torch's pointwise ops
# (the torch.html "Pointwise Ops" section, log_softmax .. xlogy) belong to the surface too.
POINTWISE_REST = """
    logaddexp logaddexp2 logical_and logical_not logical_or logical_xor logit hypot i0 igamma
    igammac mul multiply mvlgamma nan_to_num neg negative nextafter polygamma positive pow
    quantized_batch_norm quantized_max_pool1d quantized_max_pool2d rad2deg real reciprocal
    remainder round rsqrt sigmoid sign sgn signbit sin sinc sinh softmax sqrt square sub subtract
    tan tanh true_divide trunc xlogy log_softmax
""".split()  # noqa: SIM905

# name ("torch:<name>" or "Tensor:<name>") -> the family (a later issue) it belongs to
EXPECTED_MISSING = {}


def _spec_names() -> list[str]:
    names = []
    for line in SPEC.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith(("#", "namespace\t")):
            continue
        ns, name = line.split("\t")[:2]
        if ns in ("torch", "Tensor"):
            names.append(f"{ns}:{name}")
    return names


def _all_names() -> list[str]:
    names = _spec_names()
    seen = set(names)
    names += [f"torch:{n}" for n in POINTWISE_REST if f"torch:{n}" not in seen]
    return names


def _exists(key: str) -> bool:
    ns, name = key.split(":", 1)
    obj = ember if ns == "torch" else ember.Tensor
    for part in name.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


needs_spec = pytest.mark.skipif(
    not SPEC.is_file(), reason=f"the API list {SPEC} is not there (shared/ beside the checkout)"
)


def _suggestion(keys) -> str:
    return "\n".join(f'    "{k}": "{EXPECTED_MISSING.get(k, "?")}",' for k in sorted(keys))


@needs_spec
def test_every_listed_name_exists():
    missing = [k for k in _all_names() if not _exists(k) and k not in EXPECTED_MISSING]
    assert not missing, (
        f"{len(missing)} names of the API list are missing from ember (implement them, or list "
        f"them in EXPECTED_MISSING with their family):\n{_suggestion(missing)}"
    )


@needs_spec
def test_expected_missing_is_honest():
    listed = set(_all_names())
    stale = [k for k in EXPECTED_MISSING if _exists(k)]
    assert not stale, (
        f"these names exist now: delete them from EXPECTED_MISSING:\n{_suggestion(stale)}"
    )
    unknown = [k for k in EXPECTED_MISSING if k not in listed]
    assert not unknown, f"EXPECTED_MISSING names that are not in the API list: {unknown}"


@needs_spec
def test_the_spec_is_read():
    names = _spec_names()
    assert len(names) > 300  # the file's torch + Tensor rows: a parser bug would drop them
    assert "torch:stft" in names and "Tensor:abs_" in names


@pytest.mark.skipif(torch is None, reason="torch is not installed (the parity oracle)")
def test_pointwise_rest_are_torch_names():
    # the extra names must be real torch names, or the list above has a typo
    assert [n for n in POINTWISE_REST if not hasattr(torch, n)] == []


@pytest.mark.parametrize("family", ["fft", "special"])
@pytest.mark.skipif(torch is None, reason="torch is not installed (the parity oracle)")
def test_namespaces_mirror_torch(family):
    # ember.fft / ember.special offer every public function of torch.fft / torch.special
    tmod, emod = getattr(torch, family), getattr(ember, family)
    skip = {"Tensor", "torch", "common_args", "multi_dim_common", "factory_common_args"}
    names = [n for n in dir(tmod) if not n.startswith("_") and n not in skip]
    names = [n for n in names if callable(getattr(tmod, n))]
    assert [n for n in names if not hasattr(emod, n)] == []


@pytest.mark.skipif(torch is None, reason="torch is not installed (the parity oracle)")
def test_foreach_ops_mirror_torch():
    names = [n for n in dir(torch) if n.startswith("_foreach_")]
    assert [n for n in names if not hasattr(ember, n)] == []


# public torch.Tensor names (dir(torch.Tensor)) that ember.Tensor lacks on purpose -> family
EXPECTED_MISSING_TENSOR = {
    "to_mkldnn": "mkldnn layout (oneDNN's opaque tensors: a torch build detail)",
    "to_padded_tensor": "nested tensors (torch.nested)",
    "index": "first-class dims (functorch.dim)",
    "slice_inverse": "compiler internals (torch.compile's functionalization)",
}


@pytest.mark.skipif(torch is None, reason="torch is not installed (the parity oracle)")
def test_every_tensor_method_exists():
    # every public name of torch.Tensor exists on ember.Tensor, or is listed with its family;
    # a listed name that exists now fails too, so whoever adds it also deletes its entry
    public = [n for n in dir(torch.Tensor) if not n.startswith("_")]
    missing = [n for n in public if not hasattr(ember.Tensor, n)]
    unlisted = [n for n in missing if n not in EXPECTED_MISSING_TENSOR]
    assert not unlisted, (
        f"{len(unlisted)} public torch.Tensor names are missing from ember.Tensor (implement "
        f"them, or list them in EXPECTED_MISSING_TENSOR with their family): {sorted(unlisted)}"
    )
    stale = [n for n in EXPECTED_MISSING_TENSOR if hasattr(ember.Tensor, n)]
    assert not stale, f"these exist now: delete them from EXPECTED_MISSING_TENSOR: {stale}"
    unknown = [n for n in EXPECTED_MISSING_TENSOR if n not in public]
    assert not unknown, f"EXPECTED_MISSING_TENSOR names that torch.Tensor lacks: {unknown}"


def _nn_spec_names() -> list[tuple[str, str]]:
    rows = []
    for line in SPEC.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith(("#", "namespace\t")):
            continue
        ns, name = line.split("\t")[:2]
        if ns in ("nn", "F", "nn.utils"):
            rows.append((ns, name))
    return rows


def _nn_exists(ns: str, name: str) -> bool:
    import ember.nn.functional as F

    obj = {"nn": ember.nn, "F": F, "nn.utils": ember.nn.utils}[ns]
    if name.startswith("torch."):  # a full path (F's data_parallel row): torch -> ember
        obj, name = ember, name[len("torch.") :]
    for part in name.split("."):
        if not hasattr(obj, part):
            # the spec's nn.utils namespace reads "ember.nn.utils.* or ember.nn.*"
            return ns == "nn.utils" and hasattr(ember.nn, name)
        obj = getattr(obj, part)
    return True


@needs_spec
def test_every_nn_name_exists():
    rows = _nn_spec_names()
    assert len(rows) > 300  # nn, F and nn.utils rows: a parser bug would drop them
    missing = [f"{ns}.{name}" for ns, name in rows if not _nn_exists(ns, name)]
    assert missing == [], f"nn / F / nn.utils names of the API list missing from ember: {missing}"
