"""AdaptiveLogSoftmaxWithLoss (torch.nn.modules.adaptive): the efficient softmax approximation of
Grave et al., a head over frequent classes plus clusters of rare ones."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

from ...core.names import names_of, unify
from ...core.tensor import Tensor
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax approximation (Grave et al.): frequent classes in a head, rare ones in
    clusters reached through the head; ``forward`` returns (target log-probabilities, loss)."""

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs: Sequence[int],
        div_value: float = 4.0,
        head_bias: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        from .container import ModuleList, Sequential
        from .linear import Linear

        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > (n_classes - 1)
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1"
            )
        kw = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, hsz, bias=False, **kw), Linear(hsz, osz, bias=False, **kw)
                )
            )

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError(
                    "Input and target should have the same size in the batch dimension."
                )
            if input_.dim() != 2:
                raise RuntimeError(
                    "1D target tensor expects 2D input tensors, but found inputs with size",
                    input_.size(),
                )
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(
                    "0D target tensor expects 1D input tensors, but found inputs with size",
                    input_.size(),
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = targ_dim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        B = target.size(0)
        td = target._data
        if B and (int(td.min()) < 0 or int(td.max()) >= self.n_classes):
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{int(td.min())}, {int(td.max())}] were found. "
            )
        xp = _xp(td)
        gather = td.copy()
        output = input.new_zeros(B)
        bounds = self.cutoffs
        for i in range(self.n_clusters):
            low, high = bounds[i], bounds[i + 1]
            rows = xp.nonzero((td >= low) & (td < high))[0]
            if rows.size == 0:
                continue
            gather[rows] = self.shortlist_size + i
            r = _wrap_int(rows)
            logp = self.tail[i](input.index_select(0, r)).log_softmax(1)
            local = logp.gather(1, _wrap_int((td[rows] - low)[:, None])).squeeze(1)
            output = output.index_add(0, r, local)
        head_logp = self.head(input).log_softmax(1)
        output = output + head_logp.gather(1, _wrap_int(gather[:, None])).squeeze(1)
        if target._names is not None:  # the target's batch name counts too (names spec 4.3)
            try:
                output = output.rename(*unify(names_of(output), target._names))
            except RuntimeError as e:  # the error names the module (spec 4.10)
                raise RuntimeError(f"{type(self).__name__}: {e}") from None
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        from ...core.ops.joining import cat

        head_logp = head_output.log_softmax(1)
        parts = [head_logp[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logp = self.tail[i](input).log_softmax(1)
            parts.append(cluster_logp + head_logp[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Log-probabilities of every class, (N, n_classes) or (n_classes,)."""
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        out = self._get_full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (the head alone decides where it can)."""
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        head_output = self.head(x)
        out = head_output.argmax(1)
        if bool((out >= self.shortlist_size).any()):
            out = self._get_full_log_prob(x, head_output).argmax(1)
        return out if batched else out.squeeze(0)


def _xp(arr):
    from ...core.device import array_module

    return array_module(arr)


def _wrap_int(arr):
    import numpy as np

    from ...core.tensor import _wrap

    return _wrap(arr.astype(np.int64, copy=False))
