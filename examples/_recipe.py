"""What every recipe shares: arguments, progress bar, exact checkpoints, curves and the last line.

A recipe builds its data, model, optimizer and scheduler, then hands them to a :class:`Run`::

    run = Run("cnn_digits", args, model, optimizer, scheduler, generator=data_gen)
    while not run.done:  # epochs left, and --max-steps not reached
        with run.progress(total=len(train_set), unit="img") as bar:
            for x, y in loader:
                ...  # forward, backward, optimizer and scheduler steps
                run.step_done(loss.item(), len(x), bar)
                if run.stopped:
                    break
        if run.stopped:
            break
        run.end_epoch(test_loss=..., test_acc=...)  # prints a line, writes the checkpoint
    return run.finish({"test_acc": ...})  # curves.png, metrics.json, the final line

The checkpoint (``<out>/checkpoint.safetensors``, rewritten atomically by :func:`ember.save` after
every epoch) holds the model, the optimizer, the scheduler, ember's global RNG state, the data
generator's state (the shuffling order), the counters and the curves: ``--resume`` continues
from the last finished epoch and ends with exactly the weights of an uninterrupted run. It is a
plain safetensors file (any safetensors reader lists its tensors); the non-tensor parts live as
JSON in its header, so loading it never runs code.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path
from typing import Any

import ember

__all__ = [
    "CharVocab",
    "Run",
    "add_sample_args",
    "add_text_args",
    "base_parser",
    "char_corpus",
    "cli",
    "lm_loss",
    "load_text",
    "next_token",
    "plot_curves",
    "print_sample",
    "sample_text",
    "show_names",
    "start",
]

CHECKPOINT = "checkpoint.safetensors"
# options that may change between a run and its resumption without changing the weights (BLAS
# threads may: a different thread count sums in a different order)
_RESUME_FREE = {
    "resume",
    "max_steps",
    "out",
    "quiet",
    "sample_chars",
    "prompt",
    "temperature",
    "top_k",
}


def base_parser(
    name: str,
    description: str,
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    threads: int | None = 1,
) -> argparse.ArgumentParser:
    """The options every recipe has (a recipe adds its own)."""
    ap = argparse.ArgumentParser(
        prog=f"{name}.py",
        description=description,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    ap.add_argument("--epochs", type=int, default=epochs, help="epochs to train in total")
    ap.add_argument("--batch-size", type=int, default=batch_size)
    ap.add_argument("--lr", type=float, default=lr, help="peak learning rate")
    ap.add_argument("--seed", type=int, default=0, help="seeds the model, the data order, dropout")
    ap.add_argument(
        "--out",
        default=os.path.join("runs", name),
        help="folder for the checkpoint, the curves (PNG) and metrics.json",
    )
    ap.add_argument(
        "--resume",
        action="store_true",
        help="continue from <out>/checkpoint.safetensors (the last finished epoch)",
    )
    ap.add_argument(
        "--max-steps",
        type=int,
        default=None,
        help="stop after this many optimizer steps in all (a quick smoke run; like an "
        "interruption, it leaves the last finished epoch's checkpoint for --resume)",
    )
    ap.add_argument(
        "--device",
        default="cpu",
        help="where the model trains: cpu, cuda or cuda:N (a GPU through cupy: "
        "pip install -e '.[cuda13]'); the data pipeline stays on the cpu",
    )
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    ap.add_argument(
        "--threads",
        type=int,
        default=threads,
        help="BLAS threads; 0: the library's default (one per core). One is the default here: "
        "these models' matrices are small, and on a machine with other work running, BLAS "
        "threads that wait for a busy core make a step 5-15x slower",
    )
    return ap


def start(args: argparse.Namespace) -> ember.device:
    """Apply the common options: thread count, the global seed (model init, dropout on every
    device); return the device to train on (a clear exit when it cannot be used)."""
    try:
        device = ember.device(args.device)
    except (RuntimeError, ValueError) as e:
        raise SystemExit(f"--device {args.device}: {e}") from None
    if device.type == "cuda" and not ember.cuda.is_available():
        raise SystemExit(f"--device {args.device}: ember cannot use a GPU on this machine")
    if args.threads:
        ember.set_num_threads(args.threads)
    ember.manual_seed(args.seed)
    return device


class Run:
    """One training run's bookkeeping: counters, curves, checkpoints, progress and the report."""

    def __init__(
        self,
        name: str,
        args: argparse.Namespace,
        model: ember.nn.Module,
        optimizer: ember.optim.Optimizer,
        scheduler: Any = None,
        generator: ember.Generator | None = None,
    ) -> None:
        self.name = name
        self.args = args
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.generator = generator
        self.out = Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.checkpoint_path = self.out / CHECKPOINT
        self.epoch = 0  # finished epochs
        self.step = 0  # optimizer steps
        self.steps: list[int] = []  # the step of each recorded training loss
        self.train_loss: list[float] = []
        self.epoch_metrics: dict[str, list[float]] = {}
        self._elapsed_before = 0.0  # training seconds spent by earlier (interrupted) runs
        self._started = time.perf_counter()
        self._max_steps = getattr(args, "max_steps", None)
        self._steps_this_run = 0
        self._quiet = getattr(args, "quiet", False)
        self._epoch_begin = 0  # index in train_loss where the current epoch starts
        if getattr(args, "resume", False):
            self._restore()

    # ------------------------------------------------------------------ training loop helpers
    @property
    def stopped(self) -> bool:
        """True once ``--max-steps`` steps were taken by this process."""
        return self._max_steps is not None and self._steps_this_run >= self._max_steps

    @property
    def done(self) -> bool:
        return self.epoch >= self.args.epochs or self.stopped

    def progress(self, total: int, unit: str = "it"):
        """A tqdm bar over ``total`` items (samples or tokens): the rate it shows is throughput."""
        from tqdm.auto import tqdm

        return tqdm(
            total=total,
            desc=f"epoch {self.epoch + 1}/{self.args.epochs}",
            unit=unit,
            unit_scale=True,
            dynamic_ncols=True,
            leave=False,
            disable=self._quiet,
        )

    def step_done(self, loss: float, n_items: int, bar=None) -> None:
        """Record one optimizer step's training loss and advance the bar by ``n_items``."""
        self.step += 1
        self._steps_this_run += 1
        self.steps.append(self.step)
        self.train_loss.append(float(loss))
        if bar is not None:
            bar.update(n_items)
            if self.step % 5 == 0 or self.stopped:
                # the mean of the last few steps: a steadier number than the last loss
                recent = self.train_loss[-10:]
                lr = self.optimizer.param_groups[0]["lr"]
                bar.set_postfix_str(f"loss={sum(recent) / len(recent):.4f} lr={lr:.2e}")

    def end_epoch(self, **metrics: float) -> None:
        """Log the epoch's metrics, print one line and write the checkpoint."""
        self.epoch += 1
        losses = self.train_loss[self._epoch_begin :]
        if losses:  # the epoch's mean training loss comes first
            metrics = {"train_loss": sum(losses) / len(losses), **metrics}
        self._epoch_begin = len(self.train_loss)
        for k, v in metrics.items():
            self.epoch_metrics.setdefault(k, []).append(float(v))
        shown = "  ".join(f"{k} {_fmt(v)}" for k, v in metrics.items())
        print(f"epoch {self.epoch:3d}/{self.args.epochs}  step {self.step:6d}  {shown}")
        self.save()

    # ------------------------------------------------------------------ checkpoints
    def state(self) -> dict:
        """Everything a resumed run needs: tensors go to safetensors entries, the rest to JSON."""
        state = {
            "recipe": self.name,
            "epoch": self.epoch,
            "step": self.step,
            "elapsed": self._elapsed_before + (time.perf_counter() - self._started),
            "args": _jsonable(vars(self.args)),
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "rng": {"ember": ember.get_rng_state(), **self._device_rng()},
            "curves": {
                "steps": list(self.steps),
                "train_loss": list(self.train_loss),
                "epoch": dict(self.epoch_metrics),
            },
        }
        if self.scheduler is not None:
            state["scheduler"] = self.scheduler.state_dict()
        if self.generator is not None:
            state["rng"]["data"] = self.generator.get_state()
        return state

    def _device_rng(self) -> dict:
        """The training device's generator state (dropout draws there), for a GPU run."""
        device = ember.device(getattr(self.args, "device", "cpu"))
        return {"cuda": ember.cuda.get_rng_state(device)} if device.type == "cuda" else {}

    def save(self) -> None:
        """Write the checkpoint atomically (a crash mid-write keeps the previous one)."""
        ember.save(self.state(), self.checkpoint_path)

    def _restore(self) -> None:
        if not self.checkpoint_path.exists():
            print(f"--resume: no checkpoint at {self.checkpoint_path}; starting from scratch")
            return
        ck = ember.load(self.checkpoint_path)
        if ck.get("recipe") != self.name:
            raise SystemExit(
                f"--resume: {self.checkpoint_path} was written by {ck.get('recipe')!r}, "
                f"not {self.name!r} (use another --out)"
            )
        changed = {
            k: (ck["args"].get(k), v)
            for k, v in _jsonable(vars(self.args)).items()
            if k not in _RESUME_FREE and ck["args"].get(k) != v
        }
        if changed:
            diff = ", ".join(
                f"--{k.replace('_', '-')} {a!r} -> {b!r}" for k, (a, b) in changed.items()
            )
            print(
                f"--resume: options differ from the checkpoint ({diff}): the result will "
                "differ from an uninterrupted run"
            )
        self.model.load_state_dict(ck["model"])
        self.optimizer.load_state_dict(ck["optimizer"])
        if self.scheduler is not None and "scheduler" in ck:
            self.scheduler.load_state_dict(ck["scheduler"])
        ember.set_rng_state(ck["rng"]["ember"])
        if self._device_rng() and "cuda" in ck["rng"]:
            ember.cuda.set_rng_state(ck["rng"]["cuda"], ember.device(self.args.device))
        if self.generator is not None and "data" in ck["rng"]:
            self.generator.set_state(ck["rng"]["data"])
        self.epoch, self.step = int(ck["epoch"]), int(ck["step"])
        self._elapsed_before = float(ck["elapsed"])
        curves = ck["curves"]
        self.steps = [int(s) for s in curves["steps"]]
        self.train_loss = [float(v) for v in curves["train_loss"]]
        self.epoch_metrics = {k: [float(x) for x in v] for k, v in curves["epoch"].items()}
        self._epoch_begin = len(self.train_loss)
        print(f"resumed from {self.checkpoint_path}: epoch {self.epoch}, step {self.step}")

    # ------------------------------------------------------------------ the end
    @property
    def elapsed(self) -> float:
        """Training seconds so far, earlier interrupted runs included."""
        return self._elapsed_before + (time.perf_counter() - self._started)

    def finish(self, metrics: dict[str, float]) -> dict[str, float]:
        """Plot the curves, write metrics.json, print the final metrics line; return the metrics."""
        metrics = {k: float(v) for k, v in metrics.items()}
        metrics.update(epochs=self.epoch, steps=self.step, seconds=round(self.elapsed, 1))
        plot = plot_curves(self, self.out / "curves.png")
        (self.out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
        shown = "  ".join(f"{k} {_fmt(v)}" for k, v in metrics.items())
        print(f"final {self.name}: {shown}")
        if self.stopped and self.epoch < self.args.epochs:
            where = (
                f"--resume continues from the end of epoch {self.epoch}"
                if self.checkpoint_path.exists()
                else "no epoch finished, so no checkpoint to resume from"
            )
            print(f"stopped by --max-steps {self._max_steps}: {where}")
        files = [("curves", plot), ("checkpoint", self.checkpoint_path)]
        shown = "   ".join(f"{k}: {p}" for k, p in files if p is not None and p.exists())
        if shown:
            print(shown)
        return metrics


# ---------------------------------------------------------------------- plotting
def plot_curves(run: Run, path: Path) -> Path | None:
    """Training loss per step and each per-epoch metric, as a PNG; None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: no display needed
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        print(
            "matplotlib is not installed: no plot of the training curves "
            "(pip install -e '.[examples]' adds it)"
        )
        return None
    # panel 1: the loss of every step; panel 2: the losses per epoch (train and validation
    # together, the classic over/underfitting picture); then one panel per other metric
    losses = [k for k, v in run.epoch_metrics.items() if v and k.endswith("loss")]
    others = [k for k, v in run.epoch_metrics.items() if v and not k.endswith("loss")]
    panels = ([losses] if losses else []) + [[k] for k in others]
    fig, axes = plt.subplots(1, 1 + len(panels), figsize=(4.5 * (1 + len(panels)), 3.6))
    axes = list(axes) if panels else [axes]
    ax = axes[0]
    if run.train_loss:
        ax.plot(run.steps, run.train_loss, lw=0.6, alpha=0.35, color="C0", label="per step")
        k = max(1, len(run.train_loss) // 50)
        ax.plot(
            run.steps[k - 1 :], _moving_average(run.train_loss, k), color="C0", label=f"mean of {k}"
        )
        ax.legend()
    ax.set_xlabel("step")
    ax.set_title("training loss")
    color = 0
    for ax, keys in zip(axes[1:], panels):
        for key in keys:
            values = run.epoch_metrics[key]
            color += 1
            ax.plot(
                range(1, len(values) + 1),
                values,
                marker="o",
                color=f"C{color}",
                label=key.replace("_", " "),
            )
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title("loss per epoch" if len(keys) > 1 else keys[0].replace("_", " "))
        if len(keys) > 1:
            ax.legend()
    fig.suptitle(run.name)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _moving_average(xs: list[float], k: int) -> list[float]:
    out, acc = [], 0.0
    for i, x in enumerate(xs):
        acc += x
        if i >= k:
            acc -= xs[i - k]
        if i >= k - 1:
            out.append(acc / k)
    return out


# ---------------------------------------------------------------------- small helpers
def _fmt(v: Any) -> str:
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.4g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.2e}"
    if isinstance(v, float) and math.isfinite(v):
        return str(int(v))
    return str(v)


def _jsonable(d: dict) -> dict:
    return {k: v for k, v in d.items() if isinstance(v, (int, float, str, bool, type(None)))}


# ---------------------------------------------------------------------- text corpora
def load_text(path: str | None = None) -> tuple[str, str]:
    """(text, where it came from): the file at ``path``, else the prose of Python's own docs.

    ``pydoc_data.topics`` ships with every CPython install (it backs ``help('topics')``): about
    460k characters of English about Python, so the language recipes need no download."""
    if path:
        return Path(path).read_text(encoding="utf-8"), path
    from pydoc_data.topics import topics

    return "\n\n".join(topics[k] for k in sorted(topics)), "pydoc_data.topics"


def add_text_args(ap: argparse.ArgumentParser) -> None:
    """The corpus options of the character-level recipes: ``--data`` and ``--data-limit``."""
    ap.add_argument("--data", default=None, help="a UTF-8 text file (default: pydoc_data.topics)")
    ap.add_argument("--data-limit", type=int, default=None, help="use the first N characters")


def add_sample_args(ap: argparse.ArgumentParser) -> None:
    """The options of the sample a language recipe writes at the end."""
    ap.add_argument("--sample-chars", type=int, default=300, help="0: no sample at the end")
    ap.add_argument("--prompt", default="The ")
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--top-k", type=int, default=20)


def char_corpus(args: argparse.Namespace) -> tuple[str, CharVocab, ember.Tensor]:
    """(where the text came from, its vocabulary, its token ids), as the text options say."""
    text, source = load_text(args.data)
    text = text[: args.data_limit] if args.data_limit else text
    vocab = CharVocab(text)
    return source, vocab, vocab.encode(text)


def print_sample(args: argparse.Namespace, sample, model: ember.nn.Module, vocab) -> None:
    """Print ``sample(model, vocab, prompt, n, temperature, top_k, seed)`` unless --sample-chars 0."""
    if args.sample_chars > 0:
        text = sample(
            model, vocab, args.prompt, args.sample_chars, args.temperature, args.top_k, args.seed
        )
        print(f"--- sample (temperature {args.temperature}, top-k {args.top_k}) ---")
        print(text)
        print("---")


def lm_loss(logits: ember.Tensor, targets: ember.Tensor) -> ember.Tensor:
    """Mean cross-entropy over every position of every sequence (logits ('N', 'T', 'vocab'))."""
    flat = logits.flatten(["N", "T"], "token")  # ('token', 'vocab')
    targets = targets.refine_names("N", "T").flatten(["N", "T"], "token")
    return ember.nn.functional.cross_entropy(flat, targets)


class CharVocab:
    """The characters of a text, each mapped to an integer id."""

    def __init__(self, text: str) -> None:
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> ember.Tensor:
        """Token ids (int64) of ``text``; characters the vocabulary lacks are skipped."""
        index = self.index
        return ember.tensor([index[c] for c in text if c in index], dtype=ember.int64)

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)


def next_token(
    logits: ember.Tensor, temperature: float, top_k: int | None, generator: ember.Generator
) -> int:
    """Draw one token id from 1-D ``logits``: scaled by 1/temperature, cut to the top k."""
    if temperature <= 0:  # greedy
        return int(logits.argmax().item())
    logits = logits / temperature
    if top_k is not None and 0 < top_k < logits.shape[-1]:
        kth = ember.topk(logits, top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = ember.softmax(logits, dim=-1)
    return int(ember.multinomial(probs, 1, generator=generator).item())


@ember.no_grad()
def sample_text(
    model: ember.nn.Module,
    vocab: CharVocab,
    prompt: str,
    n: int,
    temperature: float,
    top_k: int | None,
    seed: int,
    next_logits,
) -> str:
    """Continue ``prompt`` by ``n`` characters drawn with :func:`next_token` (eval mode, its own
    generator seeded with ``seed``); ``next_logits(ids)`` gives the 1-D logits after ``ids``."""
    model.eval()
    g = ember.Generator().manual_seed(seed)
    ids = vocab.encode(prompt).tolist() or [0]
    for _ in range(n):
        ids.append(next_token(next_logits(ids), temperature, top_k, g))
    model.train()
    return vocab.decode(ids)


def show_names(model: ember.nn.Module, example: ember.Tensor, modules: list[str]) -> None:
    """Print the shape and names of the output of each named submodule for one forward pass.

    Forward hooks watch the submodules; the pass runs in eval mode without grad, so it changes
    no state (no batch-norm statistics, no random draws)."""
    subs = dict(model.named_modules())

    def report(name):
        def hook(module, inputs, output):
            out = output[0] if isinstance(output, tuple) else output
            print(f"  {name:10} {tuple(out.shape)!s:16} {out.names}")

        return hook

    handles = [subs[name].register_forward_hook(report(name)) for name in modules]
    was_training = model.training
    model.eval()
    try:
        with ember.no_grad():
            model(example)
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)


def cli(main) -> None:
    """Run a recipe's ``main`` from the command line; Ctrl-C ends it with a hint to resume."""
    try:
        main()
    except KeyboardInterrupt:
        print(
            "\ninterrupted: the last finished epoch's checkpoint is in --out; "
            "run again with --resume to continue exactly from it"
        )
        raise SystemExit(130) from None
