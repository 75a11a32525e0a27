"""torch.utils.flop_counter: count the floating-point operations of a block, per module.

``FlopCounterMode`` watches the ops a block runs through the profiler's recorder (nothing is
added to the ops themselves) and counts, like torch, the matrix products and convolutions under
torch's op names: ``aten.mm``, ``aten.addmm``, ``aten.bmm``, ``aten.baddbmm``,
``aten.convolution`` and ``aten.convolution_backward``, forward and backward. A product is
counted at the innermost op that computes it (``linear`` is its ``addmm``); a convolution at the
convolution op (its backward at its node). Each count goes to ``Global`` and to every module the
op ran in: the modules a forward op ran inside, and for an op of the backward pass the modules
the forward op of its node ran inside. Attention's flops are not counted (torch's cpu attention
kernel has no formula either).
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from math import prod

from ..autograd import profiler as _prof
from ..autograd.grad_mode import is_grad_enabled as _grad_on
from ..autograd.profiler_util import FunctionEvent

__all__ = ["FlopCounterMode"]

_CONV_OPS = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d")
_CONV_OPS += ("conv_transpose3d", "convolution", "_convolution")


def _conv_flops(op: str, shapes: list, out_shape) -> tuple[int, int]:
    """(forward flops, groups) of a convolution: 2 x the batch x the weight's elements x the
    output's positions (the input's, transposed), as torch's formula counts them."""
    x, w = shapes[0], shapes[1]
    transposed = "transpose" in op
    groups = (out_shape[1] if transposed else x[1]) // w[1]
    positions = prod((x if transposed else out_shape)[2:])
    return 2 * x[0] * prod(w) * positions, groups


def _product_flops(op: str, shapes: list, out_shape) -> tuple[str, int] | None:
    """(torch's op name, flops) of a product op called with input ``shapes``; None when torch
    counts nothing (matrix-vector, dot)."""
    if op in ("addmm", "baddbmm", "addbmm"):
        a, b = shapes[1], shapes[2]
        name = "aten.addmm" if op == "addmm" else "aten.baddbmm"
    elif op in ("mm", "bmm", "matmul"):
        a, b = shapes[0], shapes[1]
        if op != "matmul":
            name = f"aten.{op}"
        elif len(b) == 2 and len(a) >= 1:  # torch folds (..., k) @ (k, n) into one mm
            name = "aten.mm"
        elif len(a) >= 3 or len(b) >= 3:
            name = "aten.bmm"
        else:  # matrix-vector and dot products: torch has no formula for them
            return None
    else:
        return None
    if not a or not b:
        return None
    return name, 2 * prod(out_shape) * a[-1]


class _Recorder(_prof._Recorder):
    """The profiler's recorder, keeping only the calls open now (a long block under the mode
    must not hold one event per op) and counting each call as it returns."""

    def __init__(self, mode: FlopCounterMode) -> None:
        super().__init__(record_shapes=True)
        self.mode = mode

    def _open(self, frame, name, shapes, stack, user=False):
        ev = FunctionEvent(0, name, self.thread, 0.0, shapes, None, user)
        ev.cpu_parent = self.open[-1][1] if self.open else None
        # a backward step's node (the engine's frame holds it): its ops count for its modules
        caller = frame.f_back if frame is not None else None
        op = name[len(_prof._PREFIX) :] if name.startswith(_prof._PREFIX) else None
        ev.node = caller.f_locals.get("node") if op is None and caller is not None else None
        if op in _CONV_OPS:  # which gradients its backward will compute
            x, w = [v for v in _prof._input_values(frame) if hasattr(v, "requires_grad")][:2]
            ev.needs = (_grad_on() and x.requires_grad, _grad_on() and w.requires_grad)
        self.open.append((frame, ev))
        return ev

    def _close(self, result):
        _, ev = self.open.pop()
        self.mode._returned(ev, result)
        return ev


class FlopCounterMode:
    """Count the flops of the matrix products and convolutions a block runs (torch's
    ``torch.utils.flop_counter.FlopCounterMode``).

    Args:
        mods: ignored (torch's former argument; it warns).
        depth: how deep the module tree printed on exit goes.
        display: print the table on exit.
        custom_mapping: accepted, not used (ember's ops have no aten overloads to map).

    After the block: ``get_total_flops()``, ``get_flop_counts()`` ({module: {op: flops}}, with
    ``Global`` for the whole block) and ``get_table(depth)``.
    """

    def __init__(self, mods=None, depth: int = 2, display: bool = True, custom_mapping=None):
        if mods is not None:
            warnings.warn(
                "mods argument is not needed anymore, you can stop passing it", stacklevel=2
            )
        self.depth = depth
        self.display = display
        self.flop_counts: dict = defaultdict(lambda: defaultdict(int))
        self._recorder: _Recorder | None = None

    # -------------------------------------------------------------------- results
    def get_total_flops(self) -> int:
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict[str, dict[str, int]]:
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth: int | None = None) -> str:
        depth = self.depth if depth is None else depth
        total = self.get_total_flops()
        rows = [("Module", "FLOP", "% Total")]
        for mod in sorted(self.flop_counts, key=lambda m: (m != "Global", m)):
            if mod != "Global" and mod.count(".") + 1 > depth:
                continue
            counts = self.flop_counts[mod]
            n = sum(counts.values())
            pct = f"{100 * n / total:.2f}%" if total else "0.00%"
            indent = "" if mod == "Global" else " " * (mod.count(".") + 1)
            rows.append((indent + mod, _human(n), pct))
            for op, f in sorted(counts.items()):
                rows.append((indent + "  - " + op, _human(f), f"{100 * f / total:.2f}%"))
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        return "\n".join(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))
            )
            for r in rows
        )

    # -------------------------------------------------------------------- recording
    def __enter__(self):
        from ..nn.modules import module as _module

        self.flop_counts.clear()
        self._stack: list[str] = []  # the modules whose forward runs now, outermost first
        self._names: dict[int, str] = {}  # id(module) -> its name (torch's ModuleTracker's)
        self._handles = [
            _module.register_module_forward_pre_hook(self._enter_module),
            _module.register_module_forward_hook(self._leave_module, always_call=True),
        ]
        rec = self._recorder = _Recorder(self)
        _prof._ACTIVE.append(rec)
        rec.start()
        return self

    def __exit__(self, *exc) -> None:
        rec = self._recorder
        rec.stop()
        _prof._ACTIVE.remove(rec)
        self._recorder = None
        for h in self._handles:
            h.remove()
        if self.display:
            print(self.get_table(self.depth))

    def _enter_module(self, module, args) -> None:
        name = self._names.get(id(module))
        if name is None:
            name = self._names[id(module)] = type(module).__name__
        for child_name, child in module.named_children():
            self._names.setdefault(id(child), f"{name}.{child_name}")
        self._stack.append(name)

    def _leave_module(self, module, args, output) -> None:
        name = self._names.get(id(module))
        if self._stack and self._stack[-1] == name:
            self._stack.pop()

    def _modules_of(self, ev) -> tuple:
        """The modules call ``ev`` belongs to: those of the backward node it runs for, if
        any, else those whose forward runs now."""
        while ev is not None:
            if ev.node is not None:  # nodes note their forward's modules (_returned)
                return ev.node.__dict__.get("_flop_modules", ())
            ev = ev.cpu_parent
        return tuple(self._stack)

    def _add(self, ev, op: str, flops: int) -> None:
        mods = self._modules_of(ev)
        self.flop_counts["Global"][op] += flops
        for m in mods:
            self.flop_counts[m][op] += flops

    def _returned(self, ev, result) -> None:
        """An op (or a backward node) returned ``result``: count it, and note the modules of
        the node it recorded."""
        name = ev.name
        node = getattr(result, "_grad_fn", None)
        if name.startswith(_prof._PREFIX) and node is not None:
            node.__dict__["_flop_modules"] = tuple(self._stack)
        if getattr(ev, "counted_below", False) or self._opaque_above(ev):
            return
        op = name[len(_prof._PREFIX) :] if name.startswith(_prof._PREFIX) else None
        counted = None
        if op in _CONV_OPS:
            flops, groups = _conv_flops(op, ev.input_shapes, tuple(result.shape))
            counted = ("aten.convolution", flops)
            if node is not None:
                # torch's backward counts the input's gradient as the forward, the weight's as
                # every input channel against every output channel: groups times the forward
                node.__dict__["_conv_flops"] = flops * (ev.needs[0] + groups * ev.needs[1])
        elif op is not None:
            counted = _product_flops(op, ev.input_shapes, getattr(result, "shape", ()))
        elif ev.node is not None and "_conv_flops" in ev.node.__dict__:
            counted = ("aten.convolution_backward", ev.node.__dict__["_conv_flops"])
        if counted is None or not counted[1]:
            return
        self._add(ev, *counted)
        parent = ev.cpu_parent
        while parent is not None:  # an enclosing op (linear around its addmm) counts nothing
            parent.counted_below = True
            parent = parent.cpu_parent

    def _opaque_above(self, ev) -> bool:
        """Inside a convolution (forward or backward): its inner products are its own."""
        parent = ev.cpu_parent
        while parent is not None:
            if parent.name[len(_prof._PREFIX) :] in _CONV_OPS or (
                parent.node is not None and "_conv_flops" in parent.node.__dict__
            ):
                return True
            parent = parent.cpu_parent
        return False


def _human(n: int) -> str:
    for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")):
        if n >= div:
            return f"{n / div:.3f}{suffix}"
    return str(n)
