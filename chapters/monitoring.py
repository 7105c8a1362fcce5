"""The standard monitoring stack in one call: every metric, then the writers for the chosen levels.

    callbacks = monitoring_callbacks("runs/tiny", levels=(2, 3))
    trainer = build_trainer("tiny", config, callbacks)

The **measuring** callbacks add their keys in the record's first phase (``on_measure``:
``grad_norm/<group>``, ``update_ratio/<group>``, ``step_time_ms``, memory, ``gpu_util``,
``nonfinite_grads``; the ``nan`` event), and the **writing** callbacks write the finished record in the
second (``on_log``). The trainer runs the phases one after the other, so the order of this list does not
matter: a writer, ``History``, an early stopper or the doctor sees every key wherever it sits.

Logging levels (one module each in :mod:`chapters.logging_levels`):

====  =================================  ==========================================
0     ``print``                          standard output, nothing kept
1     ``logging`` (+ the tqdm bar)       console and ``run_dir/train.log``, rank 0 only
2     TensorBoard (W&B optional)         ``run_dir/tensorboard/`` (``run_dir/wandb/``), with histograms
3     JSON Lines                         ``run_dir/metrics.jsonl`` (the contract)
====  =================================  ==========================================

The tqdm progress bar (loss and lr in its postfix) is :class:`chapters.core.progress.ProgressBar`; it is
not a writer here because ``clinic train`` shows it at every level except 0, where prints would break it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from chapters.core.callbacks import Callback
from chapters.logging_levels.level0_print import PrintLogger
from chapters.logging_levels.level1_logging import LoggingLogger
from chapters.logging_levels.level2_histograms import HISTOGRAM_EVERY, LayerHistograms
from chapters.logging_levels.level2_tensorboard import TensorBoardLogger, WandbLogger, wandb_available
from chapters.records.jsonl import JsonlLogger
from chapters.metrics.first_nonfinite import FirstNonFinite
from chapters.metrics.gpu_util import GpuUtilization
from chapters.metrics.grad_norm import GradNormPerGroup
from chapters.metrics.groups import Grouping, gpt_group
from chapters.metrics.memory import Memory
from chapters.metrics.nonfinite_grads import NonFiniteGrads
from chapters.metrics.throughput import Throughput
from chapters.metrics.update_ratio import UpdateRatio

LEVELS = (0, 1, 2, 3)
DEFAULT_LEVELS = (3,)  # metrics.jsonl, the file the doctor and the plots read


def parse_levels(text: str) -> tuple[int, ...]:
    """``"2,3"`` -> ``(2, 3)``. Raises ``ValueError`` naming the accepted values."""
    try:
        levels = sorted({int(part) for part in text.split(",")})
    except ValueError:
        raise ValueError(f"log level {text!r} is not a comma-separated list of levels (accepted: 0, 1, 2, 3, "
                         "e.g. 3 or 2,3)") from None
    if not levels or any(level not in LEVELS for level in levels):
        raise ValueError(f"log level {text!r} is not allowed (accepted: 0, 1, 2, 3, or a combination such as 2,3)")
    return tuple(levels)


def metric_callbacks(grouping: Grouping = gpt_group) -> list[Callback]:
    """The measuring callbacks: each adds keys to the metric record (see docs/jsonl-contract.md)."""
    return [GradNormPerGroup(grouping), UpdateRatio(grouping), NonFiniteGrads(), FirstNonFinite(),
            Throughput(), Memory(), GpuUtilization()]


def writer_callbacks(run_dir: str | Path, levels=DEFAULT_LEVELS, wandb: bool = False,
                     console: bool = True, histogram_every: int | None = HISTOGRAM_EVERY) -> list[Callback]:
    """The writing callbacks for ``levels``, lowest level first. ``console=False`` keeps Level 1 to its file;
    at Level 2, activation and gradient histograms every ``histogram_every`` steps (``None``: none)."""
    run_dir = Path(run_dir)
    writers: list[Callback] = []
    if 0 in levels:
        writers.append(PrintLogger())
    if 1 in levels:
        writers.append(LoggingLogger(run_dir, console=console))
    if 2 in levels:
        tensorboard = TensorBoardLogger(run_dir)
        writers.append(tensorboard)
        if histogram_every:
            writers.append(LayerHistograms(tensorboard, histogram_every))
        if wandb and wandb_available():
            writers.append(WandbLogger(run_dir))
        elif wandb:
            sys.stderr.write("note: wandb is not installed; skipping W&B (pip install wandb to enable it)\n")
    if 3 in levels:
        writers.append(JsonlLogger(run_dir))
    return writers


def monitoring_callbacks(run_dir: str | Path, levels=DEFAULT_LEVELS, grouping: Grouping = gpt_group,
                         wandb: bool = False, console: bool = True,
                         histogram_every: int | None = HISTOGRAM_EVERY) -> list[Callback]:
    """Every measuring callback and the writers for ``levels`` (any of 0-3)."""
    unknown = set(levels) - set(LEVELS)
    if unknown:
        raise ValueError(f"unknown log levels {sorted(unknown)} (accepted: 0, 1, 2, 3)")
    return [*metric_callbacks(grouping), *writer_callbacks(run_dir, levels, wandb, console, histogram_every)]
