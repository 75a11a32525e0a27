"""The device sweeps reach every registered op: each kernel runs on the (strict) device backend,
and each op with a derivative is recorded in a graph whose backward the sweep then runs.

Tracked by a profile hook on the ops' public entry point (one code object shared by all ops), so
the ops themselves carry no bookkeeping.
"""

from __future__ import annotations

import sys
import warnings

import test_device
import test_device_modules
from ember.core.registry import OPS
from strict_backend import strict_cuda


def _sweep_all():
    """Run every op row and module row (train and eval) on the strict backend."""
    for fn, pattern in test_device.ROWS.values():
        test_device._run(fn, pattern, "cuda")
    for name, (_, inputs, _, _) in test_device_modules.SPECS.items():
        for training in (True, False):
            module = test_device_modules._build(name, inputs).train(training)
            test_device_modules._run(module, name, "cuda")


def test_sweeps_reach_every_op():
    entry = OPS["add"].public.__code__
    called, graphed = set(), set()

    def hook(frame, event, arg):
        if frame.f_code is entry:
            local = frame.f_locals
            if event == "call":
                called.add(local["od"].name)
            elif event == "return" and local.get("need_grad"):
                graphed.add(local["od"].name)

    with strict_cuda(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sys.setprofile(hook)
        try:
            _sweep_all()
        finally:
            sys.setprofile(None)
    assert called, "the hook saw no op: the public entry point changed"
    assert sorted(set(OPS) - called) == []
    assert sorted(n for n, od in OPS.items() if od.vjp is not None and n not in graphed) == []
