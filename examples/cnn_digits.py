"""A small CNN on scikit-learn's handwritten digits: >= 97% held-out accuracy in well under a minute.

The data are the 1797 8x8 grey images of digits 0-9 that ship inside scikit-learn (no download).
The network is two conv -> batch norm -> ReLU -> max-pool stages and a linear classifier, trained
with Adam and the one-cycle learning-rate policy; batches come from an ember DataLoader.

Named dimensions label what each axis means: the images enter as ('N', 'C', 'H', 'W'), the conv
stages keep those names, ``flatten`` merges ('C', 'H', 'W') into one named 'feature' axis, and
the classifier's weight is named ('digit', 'feature'), so the logits come out as ('N', 'digit')
and ``logits.argmax('digit')`` reads like what it does.

Run:  python examples/cnn_digits.py            (add --resume to continue an interrupted run,
                                                --device cuda to train on a GPU)
"""

from __future__ import annotations

import sys

import ember
import ember.nn.functional as F
from ember import nn
from ember.data import DataLoader, TensorDataset

try:  # imported as ember.examples.cnn_digits (tests) or run as a script
    from . import _recipe
except ImportError:
    import _recipe

NAME = "cnn_digits"
IMAGE_DIMS = ("N", "C", "H", "W")


def load_data(seed: int = 0):
    """Stratified 80/20 split of the digits, standardised with the training set's statistics."""
    try:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
    except ImportError:
        sys.exit("this recipe needs scikit-learn for its data: pip install -e '.[examples]'")
    digits = load_digits()
    x_tr, x_te, y_tr, y_te = train_test_split(
        digits.images, digits.target, test_size=0.2, random_state=seed, stratify=digits.target
    )
    x_tr = ember.tensor(x_tr, dtype=ember.float32).unsqueeze(1)  # (N, 1, 8, 8)
    x_te = ember.tensor(x_te, dtype=ember.float32).unsqueeze(1)
    mean, std = x_tr.mean(), x_tr.std()
    return (x_tr - mean) / std, ember.tensor(y_tr), (x_te - mean) / std, ember.tensor(y_te)


class DigitsCNN(nn.Module):
    """conv(3x3) -> BN -> ReLU -> maxpool(2), twice; then dropout and a linear classifier."""

    def __init__(self, channels: tuple[int, int] = (16, 32), dropout: float = 0.2) -> None:
        super().__init__()
        c1, c2 = channels
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, kernel_size=3, padding=1),
            nn.BatchNorm2d(c1),
            nn.ReLU(),
            nn.MaxPool2d(2),  # 8x8 -> 4x4
            nn.Conv2d(c1, c2, kernel_size=3, padding=1),
            nn.BatchNorm2d(c2),
            nn.ReLU(),
            nn.MaxPool2d(2),  # 4x4 -> 2x2
        )
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(c2 * 2 * 2, 10)
        # naming the weight (output axis, input axis) names the classifier's output axis
        self.classifier.weight.rename_("digit", "feature")

    def forward(self, images: ember.Tensor) -> ember.Tensor:
        x = self.features(images.refine_names(*IMAGE_DIMS))  # names kept: N, C, H, W
        x = x.flatten(["C", "H", "W"], "feature")  # ('N', 'feature')
        return self.classifier(self.dropout(x))  # ('N', 'digit')


def show_names(model: DigitsCNN, images: ember.Tensor) -> None:
    """Print how the named axes flow through the network (eval mode: no state changes)."""
    model.eval()
    with ember.no_grad():
        x = images.refine_names(*IMAGE_DIMS)
        print(f"  images   {tuple(x.shape)!s:16} {x.names}")
        h = model.features(x)
        print(f"  features {tuple(h.shape)!s:16} {h.names}")
        f = h.flatten(["C", "H", "W"], "feature")
        print(f"  flatten  {tuple(f.shape)!s:16} {f.names}")
        logits = model.classifier(f)
        print(f"  logits   {tuple(logits.shape)!s:16} {logits.names}")
    model.train()


def evaluate(model: nn.Module, x: ember.Tensor, y: ember.Tensor) -> tuple[float, float]:
    """(loss, accuracy) on a whole split in eval mode."""
    model.eval()
    with ember.no_grad():
        logits = model(x)
        loss = F.cross_entropy(logits, y.refine_names("N")).item()
        acc = (logits.argmax("digit") == y).float().mean().item()
    model.train()
    return loss, acc


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = _recipe.base_parser(
        NAME, "A small CNN on scikit-learn's digits.", epochs=10, batch_size=64, lr=1e-2
    )
    ap.add_argument("--channels", type=int, nargs=2, default=[16, 32], metavar=("C1", "C2"))
    ap.add_argument("--dropout", type=float, default=0.2)
    ap.add_argument("--weight-decay", type=float, default=0.0)
    ap.add_argument("--limit", type=int, default=None, help="train on the first N images only")
    args = ap.parse_args(argv)

    device = _recipe.start(args)
    x_tr, y_tr, x_te, y_te = load_data(args.seed)
    if args.limit:
        x_tr, y_tr = x_tr[: args.limit], y_tr[: args.limit]
    print(f"digits: {len(x_tr)} training and {len(x_te)} held-out images of 8x8 pixels")
    gen = ember.Generator().manual_seed(args.seed)  # the shuffling order (saved in checkpoints)
    loader = DataLoader(
        TensorDataset(x_tr, y_tr), batch_size=args.batch_size, shuffle=True, generator=gen
    )
    model = DigitsCNN(tuple(args.channels), args.dropout).to(device)
    print(f"model: {sum(p.numel() for p in model.parameters())} parameters; named axes:")
    show_names(model, x_tr[:2].to(device))
    x_te, y_te = x_te.to(device), y_te.to(device)  # the held-out split, evaluated whole

    opt = ember.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    sched = ember.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=args.lr, epochs=args.epochs, steps_per_epoch=len(loader)
    )
    run = _recipe.Run(NAME, args, model, opt, sched, generator=gen)

    while not run.done:
        with run.progress(total=len(x_tr), unit="img") as bar:
            for images, labels in loader:
                images, labels = images.to(device), labels.to(device)
                loss = F.cross_entropy(model(images), labels.refine_names("N"))
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                run.step_done(loss.item(), len(images), bar)
                if run.stopped:
                    break
        if run.stopped:
            break
        test_loss, test_acc = evaluate(model, x_te, y_te)
        run.end_epoch(test_loss=test_loss, test_acc=test_acc)

    test_loss, test_acc = evaluate(model, x_te, y_te)
    return run.finish({"test_acc": test_acc, "test_loss": test_loss})


if __name__ == "__main__":
    _recipe.cli(main)
