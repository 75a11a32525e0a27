"""Stochastic Weight Averaging / EMA helpers (torch.optim.swa_utils)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from copy import deepcopy
from typing import Any

from ..core.tensor import Tensor
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]


def _ember() -> Any:
    import ember

    return ember


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def _floating(t: Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """In-place exponential moving average over lists of tensors (``decay`` in [0, 1])."""
    _check_decay(decay)

    @_ember().no_grad()
    def ema_update(ema_param_list: list, current_param_list: list, _: Any) -> None:
        if _floating(ema_param_list[0]):
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """In-place running (equal-weight) average over lists of tensors."""

    @_ember().no_grad()
    def swa_update(averaged_param_list: list, current_param_list: list, num_averaged: Any) -> None:
        if _floating(averaged_param_list[0]):
            w = 1 / (num_averaged + 1)
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                p_avg.lerp_(p_model, w)
            return
        # Integer tensors go through add/addcdiv like torch's foreach path, and so are refused
        # as torch refuses them (a float alpha, or integer division in addcdiv).
        diffs = [c - a for a, c in zip(averaged_param_list, current_param_list)]
        if isinstance(num_averaged, Tensor):
            for p_avg, d in zip(averaged_param_list, diffs):
                p_avg.addcdiv_(d, num_averaged + 1)
        else:
            for p_avg, d in zip(averaged_param_list, diffs):
                p_avg.add_(d, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """Exponential moving average of one tensor (``decay`` in [0, 1])."""
    _check_decay(decay)

    @_ember().no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """Running (equal-weight) average of one tensor."""

    @_ember().no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """Keep a running average (SWA by default, or EMA) of a model's parameters."""

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: Callable | None = None,
        multi_avg_fn: Callable | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        em = _ember()
        self.register_buffer("n_averaged", em.tensor(0, dtype=em.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the averaged module."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and buffers if use_buffers) into the average."""
        em = _ember()
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param = self.parameters()
            model_param = model.parameters()
        avg_list: list = []
        cur_list: list = []
        n = int(self.n_averaged.item())
        with em.no_grad():
            for p_avg, p_model in zip(self_param, model_param):
                p_model_ = p_model.detach().to(p_avg.device)
                avg_list.append(p_avg.detach())
                cur_list.append(p_model_)
                if n == 0:
                    p_avg.detach().copy_(p_model_)
            if n > 0:
                n_t = self.n_averaged
                if self.multi_avg_fn is not None or self.avg_fn is None:
                    # Group by (device, dtype) like torch's foreach path.
                    groups: dict = {}
                    for a, c in zip(avg_list, cur_list):
                        key = (str(a.device), a.dtype)
                        groups.setdefault(key, ([], []))
                        groups[key][0].append(a)
                        groups[key][1].append(c)
                    for avgs, curs in groups.values():
                        dev = avgs[0].device
                        n_dev = n_t.to(dev)
                        if self.multi_avg_fn:
                            self.multi_avg_fn(avgs, curs, n_dev)
                        elif dev.type == "cuda":
                            get_swa_multi_avg_fn()(avgs, curs, n_dev)
                        else:
                            # torch has no foreach kernels on the CPU: it averages one tensor at
                            # a time with a + (c - a) / (n + 1) (not lerp: the roundings differ)
                            swa = get_swa_avg_fn()
                            for a, c in zip(avgs, curs):
                                a.copy_(swa(a, c, n_dev))
                else:
                    for a, c in zip(avg_list, cur_list):
                        a.copy_(self.avg_fn(a, c, n_t.to(a.device)))
            if not self.use_buffers:
                # Buffers (e.g. BN running stats) are copied, not averaged.
                # strict, as torch's: a model with other buffers is refused (ValueError)
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged.add_(1)


def _batchnorm_types() -> tuple:
    try:
        from ..nn.modules.batchnorm import _BatchNorm  # type: ignore[import-not-found]
    except ImportError:
        return ()
    return (_BatchNorm,)


def update_bn(loader: Any, model: Module, device: Any = None) -> None:
    """Recompute BatchNorm running statistics with one pass over ``loader``."""
    bn_types = _batchnorm_types()
    momenta: dict = {}
    if bn_types:
        for module in model.modules():
            if isinstance(module, bn_types):
                module.reset_running_stats()
                momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    em = _ember()
    with em.no_grad():
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
    for bn_module, momentum in momenta.items():
        bn_module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to a fixed ``swa_lr`` (cos or linear)."""

    def __init__(
        self,
        optimizer: Any,
        swa_lr: Any,
        anneal_epochs: int = 10,
        anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state, without the optimizer and ``anneal_func``."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state produced by :meth:`state_dict` (``anneal_func`` follows its strategy)."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        self._check_get_lr(stacklevel=4)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs)]
