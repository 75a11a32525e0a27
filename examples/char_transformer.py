"""A character-level GPT trained on the prose of Python's own documentation, then sampled.

A decoder-only transformer in the GPT mould: token + learned position embeddings, pre-LayerNorm
blocks of causal self-attention (``F.scaled_dot_product_attention``) and a GELU MLP, a final
LayerNorm and a linear head. Trained with AdamW (weight decay on matrices only), a linear
warmup into a cosine decay (``lr_scheduler.SequentialLR``) and gradient-norm clipping; every
epoch (a fixed number of steps on random windows) ends with the validation loss.

The corpus is ``pydoc_data.topics`` (every Python install carries it: the text behind
``help('topics')``) or any UTF-8 file given with ``--data``.

Named dimensions carry the roles of the axes: tokens ('N', 'T'), hidden states ('N', 'T', 'C'),
heads split with ``unflatten('C', (('head', h), ('d', c // h)))`` and moved into place with
``align_to('N', 'head', 'T', 'd')`` instead of transposes, logits ('N', 'T', 'vocab').

Run:  python examples/char_transformer.py   [--data file.txt] [--temperature 0.8 --top-k 20]
"""

from __future__ import annotations

import math

import ember
import ember.nn.functional as F
from ember import nn

try:  # imported as ember.examples.char_transformer (tests) or run as a script
    from . import _recipe
except ImportError:
    import _recipe

NAME = "char_transformer"


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention where each position sees itself and the past only."""

    def __init__(self, dim: int, heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"the width {dim} is not a multiple of the {heads} heads")
        self.heads, self.head_dim, self.dropout = heads, dim // heads, dropout
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: ember.Tensor) -> ember.Tensor:  # x: ('N', 'T', 'C')
        heads = (("head", self.heads), ("d", self.head_dim))
        q, k, v = (
            t.unflatten("C", heads).align_to("N", "head", "T", "d")
            for t in self.qkv(x).split(x.size("C"), dim="C")
        )
        y = F.scaled_dot_product_attention(
            q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0
        )  # ('N', 'head', 'T', 'd')
        return self.proj(y.align_to("N", "T", "head", "d").flatten(["head", "d"], "C"))


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, dim: int, heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, dropout)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, 4 * dim),
            nn.GELU(approximate="tanh"),
            nn.Linear(4 * dim, dim),
            nn.Dropout(dropout),
        )

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class CharGPT(nn.Module):
    def __init__(
        self, vocab: int, block: int, dim: int, layers: int, heads: int, dropout: float = 0.0
    ) -> None:
        super().__init__()
        self.block = block
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(block, dim)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.Sequential(*[Block(dim, heads, dropout) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)
        self.head.weight.rename_("vocab", "C")  # so the logits' last axis is named 'vocab'

    def forward(self, idx: ember.Tensor) -> ember.Tensor:
        """Token ids ('N', 'T') -> next-token logits ('N', 'T', 'vocab')."""
        idx = idx.refine_names("N", "T")
        pos = ember.arange(idx.size("T"), device=idx.device)
        # an embedding's vector axis is new (unnamed): name it once, the blocks keep it
        x = (self.tok(idx) + self.pos(pos)).refine_names("N", "T", "C")
        x = self.blocks(self.drop(x))
        return self.head(self.ln_f(x))


lm_loss = _recipe.lm_loss  # mean cross-entropy over every position


def windows(
    data: ember.Tensor, starts: ember.Tensor, block: int
) -> tuple[ember.Tensor, ember.Tensor]:
    """Inputs data[s : s+block] and targets data[s+1 : s+block+1] for every start s."""
    idx = starts.unsqueeze(1) + ember.arange(block + 1)
    chunk = data[idx.to(data.device)]
    return chunk[:, :-1], chunk[:, 1:]


@ember.no_grad()
def evaluate(model: CharGPT, data: ember.Tensor, block: int, batches: int, batch: int) -> float:
    """Mean loss over the same fixed windows of ``data`` each time it is called."""
    model.eval()
    g = ember.Generator().manual_seed(1234)  # its own stream: training's is untouched
    total = 0.0
    for _ in range(batches):
        x, y = windows(data, ember.randint(0, len(data) - block - 1, (batch,), generator=g), block)
        total += lm_loss(model(x), y).item()
    model.train()
    return total / batches


def sample(
    model: CharGPT,
    vocab: _recipe.CharVocab,
    prompt: str,
    n: int,
    temperature: float,
    top_k: int | None,
    seed: int,
) -> str:
    """Continue ``prompt`` by ``n`` characters, one forward pass per character."""

    device = next(model.parameters()).device

    def next_logits(ids):  # the last block of characters, read again in full (drawn on the cpu)
        return model(ember.tensor([ids[-model.block :]], device=device))[0, -1].rename(None).cpu()

    return _recipe.sample_text(model, vocab, prompt, n, temperature, top_k, seed, next_logits)


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = _recipe.base_parser(
        NAME, "A character-level GPT on Python's docs.", epochs=8, batch_size=32, lr=3e-3
    )
    _recipe.add_text_args(ap)
    ap.add_argument("--steps-per-epoch", type=int, default=100)
    ap.add_argument("--block", type=int, default=64, help="context length in characters")
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=50, help="warmup steps")
    ap.add_argument("--clip", type=float, default=1.0, help="max gradient norm")
    ap.add_argument("--eval-batches", type=int, default=8)
    _recipe.add_sample_args(ap)
    args = ap.parse_args(argv)

    device = _recipe.start(args)
    source, vocab, data = _recipe.char_corpus(args)
    split = int(0.9 * len(data))
    train, val = data[:split].to(device), data[split:].to(device)
    if len(val) < args.block + 2:
        raise SystemExit(
            f"the text has {len(data):,} characters: too few for --block {args.block} "
            "(a tenth of it is kept for validation)"
        )
    print(
        f"corpus: {source}, {len(data):,} characters, {len(vocab)} distinct; "
        f"{len(train):,} for training, {len(val):,} for validation"
    )

    model = CharGPT(len(vocab), args.block, args.dim, args.layers, args.heads, args.dropout)
    model = model.to(device)
    print(f"model: {sum(p.numel() for p in model.parameters()):,} parameters; named axes:")
    example = ember.zeros(2, args.block, dtype=ember.int64, device=device)
    _recipe.show_names(model, example, ["tok", "ln_f", "head"])

    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = ember.optim.AdamW(
        [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay}],
        lr=args.lr,
        betas=(0.9, 0.99),
        weight_decay=0.0,
    )
    total = args.epochs * args.steps_per_epoch
    warmup = max(1, min(args.warmup, total - 1))
    sched = ember.optim.lr_scheduler.SequentialLR(
        opt,
        [
            ember.optim.lr_scheduler.LinearLR(opt, 0.01, 1.0, total_iters=warmup),
            ember.optim.lr_scheduler.CosineAnnealingLR(
                opt, max(1, total - warmup), eta_min=args.lr / 10
            ),
        ],
        milestones=[warmup],
    )
    gen = ember.Generator().manual_seed(args.seed)  # the training windows (saved in checkpoints)
    run = _recipe.Run(NAME, args, model, opt, sched, generator=gen)

    tokens = args.batch_size * args.block
    while not run.done:
        with run.progress(total=args.steps_per_epoch * tokens, unit="tok") as bar:
            for _ in range(args.steps_per_epoch):
                starts = ember.randint(
                    0, len(train) - args.block - 1, (args.batch_size,), generator=gen
                )
                x, y = windows(train, starts, args.block)
                loss = lm_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), args.clip)
                opt.step()
                sched.step()
                run.step_done(loss.item(), tokens, bar)
                if run.stopped:
                    break
        if run.stopped:
            break
        val_loss = evaluate(model, val, args.block, args.eval_batches, 2 * args.batch_size)
        run.end_epoch(val_loss=val_loss, val_bits_per_char=val_loss / math.log(2))

    val_loss = evaluate(model, val, args.block, args.eval_batches, 2 * args.batch_size)
    _recipe.print_sample(args, sample, model, vocab)
    return run.finish({"val_loss": val_loss})


if __name__ == "__main__":
    _recipe.cli(main)
