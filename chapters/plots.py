"""Plots of a run's ``metrics.jsonl``: one figure, the panels a doctor looks at first.

Panels: train and validation loss (with the dataset's loss floor as a dashed line when the log knows it),
learning rate, gradient norm, throughput (tokens/sec) and memory. Three rules keep the picture honest:

* A panel whose values span orders of magnitude (a diverging loss, an exploding gradient norm) gets a log
  axis; on a linear one the healthy part of the curve would be a flat line at the bottom.
* Steps where the loss was not finite are marked with red vertical lines on every panel -- a NaN cannot be
  drawn as a point, and a curve that just *stops* is easy to misread as "the run ended". The first ``nan``
  event, when there is one, is marked too. Epoch boundaries (from ``steps_per_epoch`` in ``run_start``) are
  grey dotted lines: a pattern that repeats between them is a data-order problem.
* The memory panel never zooms in on a flat line: its y axis spans at least a fifth of the peak, so a few
  megabytes of allocator noise do not look like a leak.

:func:`plot_run` draws one run; :func:`plot_comparison` draws several (a broken run and its fix, say) on
the same axes, one colour each. Matplotlib's ``Agg`` backend renders to a file, no display needed.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: works on servers and in CI, where there is no display

import matplotlib.pyplot as plt  # noqa: E402  (must come after choosing the backend)

from chapters.logging_levels.level3_jsonl import MetricsLog, read_metrics_log  # noqa: E402

PANELS = [  # (title, [(key, label)])
    ("loss", [("train_loss", "train"), ("val_loss", "val")]),
    ("learning rate", [("lr", "lr")]),
    ("grad norm (before clipping)", [("grad_norm", "grad_norm")]),
    ("throughput (tokens/sec)", [("tokens_per_sec", "tokens/sec")]),
    ("memory (GB)", [("gpu_memory_gb", "GPU peak allocated"), ("cpu_memory_gb", "CPU RSS")]),
]
MEMORY_PANEL = 4
LOG_SCALE_RATIO = 100  # largest / smallest positive value at which a panel switches to a log axis (2 decades)
MIN_MEMORY_SPAN = 0.2  # the memory axis spans at least this fraction of the panel's largest value
MAX_EPOCH_LINES = 50
MARKERS_UP_TO = 20  # a series with at most this many finite values is drawn with a marker on each  # more boundaries than this would hide the curves: then none are drawn
DATA = "data"  # the gid of the lines that carry a run's values (not markers, floors or boundaries)


def series(log: MetricsLog, key: str) -> tuple[list[int], list[float]]:
    """Steps and values of ``key``; non-finite values become NaN (a gap: matplotlib cannot draw Inf on a
    log axis), and are marked separately by :func:`nonfinite_steps`."""
    points = [(r["step"], r[key]) for r in log.metrics if isinstance(r.get(key), (int, float))]
    return [s for s, _ in points], [v if math.isfinite(v) else math.nan for _, v in points]


def nonfinite_steps(log: MetricsLog) -> list[int]:
    """Steps whose training or validation loss is NaN or Inf, plus the step of any ``nan`` event."""
    steps = {r["step"] for r in log.metrics for key in ("train_loss", "val_loss")
             if isinstance(r.get(key), float) and not math.isfinite(r[key])}
    steps |= {e["step"] for e in log.events if e.get("event") == "nan" and "step" in e}
    return sorted(steps)


def loss_floor(log: MetricsLog) -> float | None:
    starts = [e for e in log.events if e.get("event") == "run_start"]
    return starts[-1].get("loss_floor") if starts else None


def epoch_boundaries(log: MetricsLog) -> list[int]:
    """Steps where an epoch ends, when ``run_start`` records ``steps_per_epoch`` (none if there would be too many)."""
    starts = [e for e in log.events if e.get("event") == "run_start"]
    per_epoch = starts[-1].get("steps_per_epoch") if starts else None
    last = max((r["step"] for r in log.metrics), default=0)
    if not isinstance(per_epoch, int) or per_epoch < 1 or last // per_epoch > MAX_EPOCH_LINES:
        return []
    return list(range(per_epoch, last + 1, per_epoch))


def draw(axes, log: MetricsLog, label: str | None = None, color: str | None = None) -> None:
    """Draw one run on the panels' ``axes``; ``label``/``color`` tell runs apart in a comparison."""
    for ax, (title, keys) in zip(axes, PANELS):
        for key, key_label in keys:
            steps, values = series(log, key)
            if not steps:
                continue
            name = key_label if label is None else f"{label}: {key_label}" if len(keys) > 1 else label
            # Few finite points (a run that went NaN early, a short run) get markers: a lone point between
            # NaN gaps draws no line segment at all and would vanish.
            few = sum(math.isfinite(v) for v in values) <= MARKERS_UP_TO
            ax.plot(steps, values, label=name, color=color, linestyle="--" if key == "val_loss" else "-",
                    marker="o" if few else None, markersize=3, gid=DATA)
        for step in nonfinite_steps(log):
            ax.axvline(step, color="red", alpha=0.4, linewidth=1)
        for step in epoch_boundaries(log):
            ax.axvline(step, color="grey", alpha=0.5, linewidth=0.8, linestyle=":")
        ax.set_title(title)
    floor = loss_floor(log)
    if floor is not None:
        axes[0].axhline(floor, color=color or "black", linestyle=":", linewidth=1,
                        label="loss floor" if label is None else f"{label}: loss floor")


def panel_values(ax) -> list[float]:
    """The finite values of every run drawn on ``ax``."""
    return [float(v) for line in ax.get_lines() if line.get_gid() == DATA
            for v in line.get_ydata() if math.isfinite(v)]


def choose_scales(axes) -> None:
    """Log axes where the values span decades; a memory axis that cannot exaggerate noise."""
    for index, ax in enumerate(axes):
        values = panel_values(ax)
        if not values:
            continue
        positive = [v for v in values if v > 0]
        if positive and min(values) > 0 and max(positive) / min(positive) >= LOG_SCALE_RATIO:
            ax.set_yscale("log")
        elif index == MEMORY_PANEL:
            low, high = min(values), max(values)
            span = max(high - low, MIN_MEMORY_SPAN * abs(high))
            middle = (low + high) / 2
            if span > 0:
                ax.set_ylim(max(0.0, middle - 0.6 * span), middle + 0.6 * span)


def new_figure():
    figure, axes = plt.subplots(len(PANELS), 1, figsize=(8, 2.4 * len(PANELS)), sharex=True)
    axes[-1].set_xlabel("optimizer step")
    return figure, axes


def save(figure, axes, out_png: str | Path, title: str) -> Path:
    choose_scales(axes)
    for ax in axes:
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small")
    figure.suptitle(title)
    figure.tight_layout()
    out_png = Path(out_png)
    out_png.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out_png, dpi=100)
    plt.close(figure)
    return out_png


def plot_run(log_path: str | Path, out_png: str | Path) -> Path:
    """One run's panels in ``out_png``. ``log_path`` is a ``metrics.jsonl`` or the run directory holding it."""
    return plot_log(read_metrics_log(log_path), out_png)


def plot_log(log: MetricsLog, out_png: str | Path) -> Path:
    """The panels of a log already read -- ours, or one read from another tool's files
    (:mod:`chapters.records.formats`)."""
    figure, axes = new_figure()
    draw(axes, log)
    return save(figure, axes, out_png, str(log.path.parent))


def plot_comparison(runs: dict[str, str | Path], out_png: str | Path) -> Path:
    """Several runs, e.g. ``{"broken": path, "fixed": path}``, on the same panels, one colour each."""
    figure, axes = new_figure()
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, (label, log_path) in enumerate(runs.items()):
        draw(axes, read_metrics_log(log_path), label, colors[index % len(colors)])
    return save(figure, axes, out_png, " vs ".join(runs))
