"""The recipes in examples/ run end to end, learn, checkpoint, and resume exactly.

Each recipe's ``main(argv)`` runs in-process with tiny settings (a few steps on a slice of the
data, one BLAS thread so a busy machine does not slow it down). The slow test trains the CNN
recipe fully and checks the accuracy the README promises.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import pathlib
import subprocess
import sys

import ember
import numpy as np
import pytest
from ember.examples import _recipe, char_transformer, cnn_digits, lstm_language_model

HAVE_SKLEARN = importlib.util.find_spec("sklearn") is not None  # the CNN recipe's data
HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None  # the curves

needs_sklearn = pytest.mark.skipif(not HAVE_SKLEARN, reason="scikit-learn is not installed")

COMMON = ["--quiet", "--threads", "1", "--seed", "3"]
# tiny settings: two epochs of a few steps each, dropout on (so the RNG state matters on resume)
TINY = {
    "cnn_digits": (
        cnn_digits,
        ["--epochs", "2", "--limit", "384", "--batch-size", "64", "--channels", "8", "16"],
        6,  # optimizer steps per epoch
    ),
    "char_transformer": (
        char_transformer,
        [
            "--epochs", "2", "--steps-per-epoch", "6", "--data-limit", "20000",
            "--block", "16", "--batch-size", "8", "--dim", "32", "--heads", "2",
            "--dropout", "0.1", "--warmup", "3", "--eval-batches", "1", "--sample-chars", "20",
        ],
        6,
    ),
    "lstm_language_model": (
        lstm_language_model,
        [
            "--epochs", "2", "--data-limit", "4000", "--batch-size", "8", "--bptt", "64",
            "--dim", "16", "--hidden", "32", "--dropout", "0.1", "--sample-chars", "20",
        ],
        # 4000 chars -> 3600 for training -> 8 streams of 450 -> 8 chunks of 64 (the last shorter)
        8,
    ),
}  # fmt: skip


def _run(name, out, *extra):
    module, args, _ = TINY[name]
    return module.main([*args, *COMMON, "--out", str(out), *extra])


def _checkpoint(out):
    return ember.load(out / _recipe.CHECKPOINT)


@pytest.fixture(params=["cpu", "cuda"])
def device(request):
    """The recipe's --device: the cpu, or cuda on the strict fake-cupy backend (every tensor of
    the run a device array: a GPU run's checkpoints, RNG states and resume, without a GPU)."""
    if request.param == "cpu":
        yield []
        return
    from strict_backend import strict_cuda

    with strict_cuda():
        yield ["--device", "cuda"]


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=needs_sklearn) if n == "cnn_digits" else n for n in TINY]
)
def test_recipe_learns_and_resumes_exactly(name, tmp_path, capsys, device):
    steps_per_epoch = TINY[name][2]
    full, part = tmp_path / "full", tmp_path / "part"

    # an uninterrupted run: the loss falls, files appear, the final line is printed
    metrics = _run(name, full, *device)
    out = capsys.readouterr().out
    assert metrics["epochs"] == 2 and metrics["steps"] == 2 * steps_per_epoch
    assert f"final {name}:" in out
    assert "('N', " in out  # the named axes shown at the start
    ck = _checkpoint(full)
    losses = ck["curves"]["train_loss"]
    assert len(losses) == 2 * steps_per_epoch
    assert np.mean(losses[-3:]) < np.mean(losses[:3]) - 0.1, losses
    if HAVE_MATPLOTLIB:
        assert (full / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((full / "metrics.json").read_text())["steps"] == metrics["steps"]

    # interrupted in the middle of epoch 2, then resumed: exactly the same weights and metrics
    _run(name, part, "--max-steps", str(steps_per_epoch + 2), *device)
    assert "--resume continues from the end of epoch 1" in capsys.readouterr().out
    assert _checkpoint(part)["epoch"] == 1  # the interrupted epoch wrote nothing
    resumed = _run(name, part, "--resume", *device)
    assert "resumed from" in capsys.readouterr().out
    ck2 = _checkpoint(part)
    assert ck2["model"].keys() == ck["model"].keys()
    for k, v in ck["model"].items():
        assert ember.equal(v, ck2["model"][k]), k
    assert ck2["curves"]["train_loss"] == losses
    assert {k: v for k, v in resumed.items() if k != "seconds"} == {
        k: v for k, v in metrics.items() if k != "seconds"
    }
    assert ("cuda" in ck2["rng"]) == bool(device)  # a GPU run keeps the device's RNG state too
    assert {v.device.type for v in ck2["model"].values()} == {"cuda" if device else "cpu"}


@needs_sklearn
def test_device_option(tmp_path):
    with pytest.raises(SystemExit, match="--device tpu: "):
        _run("cnn_digits", tmp_path, "--device", "tpu")
    if not ember.cuda.is_available():
        with pytest.raises(SystemExit, match="--device cuda: ember cannot use a GPU"):
            _run("cnn_digits", tmp_path, "--device", "cuda")


@needs_sklearn
def test_checkpoint_is_a_plain_safetensors_file(tmp_path):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    _run("cnn_digits", tmp_path, "--epochs", "1")
    path = tmp_path / _recipe.CHECKPOINT
    arrays = safetensors_numpy.load_file(str(path))  # another framework's reader
    model = cnn_digits.DigitsCNN((8, 16))
    state = model.state_dict()
    for k, v in state.items():
        assert arrays[f"model.{k}"].shape == tuple(v.shape)
    assert any(k.startswith("optimizer.state.") for k in arrays)
    assert "rng.ember" in arrays and "rng.data" in arrays
    # ember loads it back, names included, into a fresh model
    ck = ember.load(path)
    assert ck["model"]["classifier.weight"].names == ("digit", "feature")
    model.load_state_dict(ck["model"])
    assert ck["recipe"] == "cnn_digits" and ck["epoch"] == 1


@needs_sklearn
def test_resume_without_checkpoint_starts_fresh(tmp_path, capsys):
    metrics = _run("cnn_digits", tmp_path, "--epochs", "1", "--resume")
    assert "no checkpoint" in capsys.readouterr().out
    assert metrics["epochs"] == 1


@needs_sklearn
def test_resume_warns_when_options_differ(tmp_path, capsys):
    _run("cnn_digits", tmp_path, "--epochs", "1")
    capsys.readouterr()
    _run("cnn_digits", tmp_path, "--epochs", "1", "--resume", "--lr", "0.5")
    assert "--lr 0.01 -> 0.5" in capsys.readouterr().out


@needs_sklearn
def test_resume_refuses_another_recipes_checkpoint(tmp_path):
    _run("cnn_digits", tmp_path, "--epochs", "1")
    with pytest.raises(SystemExit, match="written by 'cnn_digits'"):
        _run("lstm_language_model", tmp_path, "--resume")


@needs_sklearn
def test_runs_without_matplotlib(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now fails
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    metrics = _run("cnn_digits", tmp_path, "--epochs", "1")
    out = capsys.readouterr().out
    assert "matplotlib is not installed" in out
    assert f"final cnn_digits: test_acc {metrics['test_acc']:.4g}" in out
    assert not (tmp_path / "curves.png").exists()
    assert (tmp_path / _recipe.CHECKPOINT).exists()


def test_language_recipes_read_a_text_file(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the quick brown fox jumps over the lazy dog. " * 80)
    metrics = _run("char_transformer", tmp_path / "run", "--data", str(corpus), "--epochs", "1")
    out = capsys.readouterr().out
    assert f"corpus: {corpus}" in out and "28 distinct" in out
    assert metrics["val_loss"] < np.log(29)  # better than guessing uniformly


def test_sampling_helpers():
    g = ember.Generator().manual_seed(0)
    logits = ember.tensor([0.0, 5.0, 1.0, 4.0])
    assert _recipe.next_token(logits, 0.0, None, g) == 1  # greedy
    draws = {_recipe.next_token(logits, 1.0, 2, g) for _ in range(50)}
    assert draws <= {1, 3} and len(draws) == 2  # top-k keeps the two best only
    vocab = _recipe.CharVocab("hello")
    assert vocab.decode(vocab.encode("hole?").tolist()) == "hole"  # unknown characters skipped


def test_training_step_leaves_no_reference_cycles():
    # a graph node that keeps its own outputs alive after backward (ops whose derivative uses
    # their result: relu, log_softmax, ...) made the GPT recipe grow to 1.3 GB; it stays ~100 MB
    ember.manual_seed(0)
    model = char_transformer.CharGPT(vocab=11, block=8, dim=16, layers=1, heads=2)
    opt = ember.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = ember.randint(0, 11, (4, 8)), ember.randint(0, 11, (4, 8))
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(2):
            loss = char_transformer.lm_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        del loss
        assert gc.collect() == 0
    finally:
        if was_enabled:
            gc.enable()


@needs_sklearn
def test_recipe_runs_as_a_script(tmp_path):
    # `python examples/cnn_digits.py` imports its helpers from its own folder, not the package
    script = pathlib.Path(cnn_digits.__file__)
    args = ["--epochs", "1", "--limit", "64", "--batch-size", "32", "--quiet", "--out"]
    done = subprocess.run(
        [sys.executable, str(script), *args, str(tmp_path)],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "final cnn_digits: test_acc" in done.stdout
    assert (tmp_path / _recipe.CHECKPOINT).exists()


@pytest.mark.slow
@needs_sklearn
def test_cnn_digits_full_run_reaches_97_percent(tmp_path):
    metrics = cnn_digits.main(["--quiet", "--out", str(tmp_path)])
    assert metrics["test_acc"] >= 0.97
