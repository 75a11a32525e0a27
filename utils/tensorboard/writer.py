"""A SummaryWriter with torch's API that writes scalars to ``<log_dir>/scalars.csv``.

Columns: ``step,tag,value,wall_time`` (one row per value, appended as it is added; a writer opened
on an existing log dir appends). Only scalars are supported; every other ``add_*`` method raises
an error naming the unsupported torch API.
"""

from __future__ import annotations

import csv
import os
import socket
import time
from datetime import datetime

from ...dropin import NotImplementedByEmber

__all__ = ["SummaryWriter"]

CSV_NAME = "scalars.csv"
_FIELDS = ("step", "tag", "value", "wall_time")


def _scalar(value) -> float:
    if hasattr(value, "item"):  # a one-element tensor or numpy value
        value = value.item()
    return float(value)


class SummaryWriter:
    """torch.utils.tensorboard.SummaryWriter, scalars only, to ``log_dir/scalars.csv``."""

    def __init__(
        self,
        log_dir: str | None = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        os.makedirs(self.log_dir, exist_ok=True)
        self.csv_path = os.path.join(self.log_dir, CSV_NAME + filename_suffix)
        new = not os.path.exists(self.csv_path) or os.path.getsize(self.csv_path) == 0
        self._file = open(self.csv_path, "a", newline="", encoding="utf-8")  # noqa: SIM115
        self._csv = csv.writer(self._file)
        if new:
            self._csv.writerow(_FIELDS)
            self._file.flush()

    def get_logdir(self) -> str:
        """The folder this writer writes to."""
        return self.log_dir

    def _row(self, tag: str, value, global_step, walltime) -> None:
        if self._file is None:
            # torch reopens a closed writer's file on the next add_*; so does ember
            self._file = open(self.csv_path, "a", newline="", encoding="utf-8")  # noqa: SIM115
            self._csv = csv.writer(self._file)
        step = 0 if global_step is None else int(global_step)
        wall = time.time() if walltime is None else float(walltime)
        self._csv.writerow((step, tag, repr(_scalar(value)), repr(wall)))
        self._file.flush()

    def add_scalar(
        self,
        tag: str,
        scalar_value,
        global_step: int | None = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """Append one scalar (a number or a one-element tensor) under ``tag``."""
        self._row(tag, scalar_value, global_step, walltime)

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: dict,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Append several scalars, tagged ``main_tag/key``."""
        wall = time.time() if walltime is None else walltime
        for key, value in tag_scalar_dict.items():
            self._row(f"{main_tag}/{key}", value, global_step, wall)

    def flush(self) -> None:
        """Write buffered rows to disk."""
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        """Flush and close the CSV file."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        f = getattr(self, "_file", None)
        if f is not None:
            f.close()


def _unsupported_method(name: str):
    def method(self, *args, **kwargs):
        raise NotImplementedByEmber(
            f"torch.utils.tensorboard.SummaryWriter.{name}",
            f"ember's SummaryWriter records scalars only: add_scalar/add_scalars to {CSV_NAME}",
        )

    method.__name__ = name
    method.__doc__ = f"Not supported by ember: raises an error naming SummaryWriter.{name}."
    return method


for _name in (
    "add_audio",
    "add_custom_scalars",
    "add_custom_scalars_marginchart",
    "add_custom_scalars_multilinechart",
    "add_embedding",
    "add_figure",
    "add_graph",
    "add_histogram",
    "add_histogram_raw",
    "add_hparams",
    "add_image",
    "add_image_with_boxes",
    "add_images",
    "add_mesh",
    "add_onnx_graph",
    "add_pr_curve",
    "add_pr_curve_raw",
    "add_tensor",
    "add_text",
    "add_video",
):
    setattr(SummaryWriter, _name, _unsupported_method(_name))
del _name
