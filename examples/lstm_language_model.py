"""A character-level LSTM language model with truncated backpropagation through time.

The corpus (``pydoc_data.topics``, shipped with Python, or ``--data file.txt``) is cut into
``--batch-size`` parallel streams that are read left to right in chunks of ``--bptt``
characters. The LSTM's hidden state flows from one chunk to the next, detached from the graph
so that gradients stop at the chunk boundary (truncated BPTT); it is reset at each epoch start.
Adam, gradient-norm clipping, and ``ReduceLROnPlateau`` halving the learning rate when the
validation loss stops falling. Reports the validation loss and perplexity (exp of the mean
loss per character), then samples text by carrying the state character by character.

Named dimensions: characters ('N', 'T'), embeddings and LSTM outputs ('N', 'T', 'C'), logits
('N', 'T', 'vocab'); the LSTM's state is (layer, 'N', 'C').

Run:  python examples/lstm_language_model.py   [--data file.txt]
"""

from __future__ import annotations

import math

import ember
from ember import nn

try:  # imported as ember.examples.lstm_language_model (tests) or run as a script
    from . import _recipe
except ImportError:
    import _recipe

NAME = "lstm_language_model"


class CharLSTM(nn.Module):
    """Embedding -> multi-layer LSTM -> dropout -> linear head over the vocabulary."""

    def __init__(self, vocab: int, dim: int, hidden: int, layers: int, dropout: float) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        # the LSTM's own dropout acts between its layers only (there are none with one layer)
        self.lstm = nn.LSTM(
            dim, hidden, layers, batch_first=True, dropout=dropout if layers > 1 else 0.0
        )
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(hidden, vocab)
        self.head.weight.rename_("vocab", "C")  # the logits' last axis is named 'vocab'

    def forward(self, idx: ember.Tensor, state=None):
        """Ids ('N', 'T') and an optional (h, c) -> logits ('N', 'T', 'vocab'), new (h, c)."""
        x = self.embed(idx.refine_names("N", "T")).refine_names("N", "T", "C")
        y, state = self.lstm(self.drop(x), state)
        return self.head(self.drop(y)), state


def streams(data: ember.Tensor, n: int) -> ember.Tensor:
    """Cut a 1-D id sequence into ``n`` equal rows read in parallel (the tail is dropped)."""
    length = len(data) // n
    return data[: n * length].view(n, length)


lm_loss = _recipe.lm_loss  # mean cross-entropy over every position


def detach(state):
    """Cut the graph behind the state: the next chunk's gradients stop here (truncated BPTT)."""
    return tuple(s.detach() for s in state)


@ember.no_grad()
def evaluate(model: CharLSTM, rows: ember.Tensor, bptt: int) -> float:
    """Mean loss per character over the whole stream, the state carried across chunks."""
    model.eval()
    state, total, count = None, 0.0, 0
    for i in range(0, rows.shape[1] - 1, bptt):
        x, y = rows[:, i : i + bptt], rows[:, i + 1 : i + 1 + bptt]
        x = x[:, : y.shape[1]]
        logits, state = model(x, state)
        total += lm_loss(logits, y).item() * y.numel()
        count += y.numel()
    model.train()
    return total / count


def sample(model: CharLSTM, vocab, prompt: str, n: int, temperature, top_k, seed: int) -> str:
    """Read ``prompt``, then write ``n`` characters, feeding each one back with the state."""
    state, fed = None, 0

    device = next(model.parameters()).device

    def next_logits(ids):  # only the characters not read yet, the state carried
        nonlocal state, fed
        logits, state = model(ember.tensor([ids[fed:]], device=device), state)
        fed = len(ids)
        return logits[0, -1].rename(None).cpu()  # the draw runs on the cpu

    return _recipe.sample_text(model, vocab, prompt, n, temperature, top_k, seed, next_logits)


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = _recipe.base_parser(
        NAME, "A character-level LSTM language model.", epochs=3, batch_size=32, lr=3e-3
    )
    _recipe.add_text_args(ap)
    ap.add_argument("--bptt", type=int, default=64, help="characters per truncated-BPTT chunk")
    ap.add_argument("--dim", type=int, default=64, help="embedding width")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--clip", type=float, default=1.0, help="max gradient norm")
    _recipe.add_sample_args(ap)
    args = ap.parse_args(argv)

    device = _recipe.start(args)
    source, vocab, data = _recipe.char_corpus(args)
    split = int(0.9 * len(data))
    # (batch, length): rows read in parallel
    train = streams(data[:split], args.batch_size).to(device)
    val = streams(data[split:], args.batch_size).to(device)
    if val.shape[1] < 2:
        raise SystemExit(
            f"the text has {len(data):,} characters: too few for --batch-size "
            f"{args.batch_size} streams (a tenth of it is kept for validation)"
        )
    chunks = (train.shape[1] - 1 + args.bptt - 1) // args.bptt
    print(
        f"corpus: {source}, {len(data):,} characters, {len(vocab)} distinct; training on "
        f"{args.batch_size} streams of {train.shape[1]:,} characters = {chunks} chunks of "
        f"{args.bptt} per epoch"
    )

    model = CharLSTM(len(vocab), args.dim, args.hidden, args.layers, args.dropout).to(device)
    print(f"model: {sum(p.numel() for p in model.parameters()):,} parameters; named axes:")
    example = ember.zeros(2, args.bptt, dtype=ember.int64, device=device)
    _recipe.show_names(model, example, ["embed", "lstm", "head"])

    opt = ember.optim.Adam(model.parameters(), lr=args.lr)
    sched = ember.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=0)
    run = _recipe.Run(NAME, args, model, opt, sched)

    while not run.done:
        state = None  # each epoch reads the streams from their start
        with run.progress(total=chunks * args.batch_size * args.bptt, unit="char") as bar:
            for i in range(0, train.shape[1] - 1, args.bptt):
                y = train[:, i + 1 : i + 1 + args.bptt]
                x = train[:, i : i + y.shape[1]]
                logits, state = model(x, state)
                loss = lm_loss(logits, y)
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), args.clip)
                opt.step()
                state = detach(state)
                run.step_done(loss.item(), y.numel(), bar)
                if run.stopped:
                    break
        if run.stopped:
            break
        val_loss = evaluate(model, val, args.bptt)
        sched.step(val_loss)
        run.end_epoch(val_loss=val_loss, val_perplexity=math.exp(val_loss))

    val_loss = evaluate(model, val, args.bptt)
    _recipe.print_sample(args, sample, model, vocab)
    return run.finish({"val_loss": val_loss, "val_perplexity": math.exp(val_loss)})


if __name__ == "__main__":
    _recipe.cli(main)
