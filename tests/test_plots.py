"""`clinic plot` and the plotting functions the scenarios call."""

import math

import matplotlib.image

from chapters.monitoring import monitoring_callbacks
from chapters.plots import plot_comparison, plot_run
from chapters.records.jsonl import read_metrics_log
from chapters.records.runlog import RunLog
from tests.conftest import clinic, run_tiny

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def small_run(run_dir, **changes):
    run_tiny(steps=4, log_every=1, eval_every=2, callbacks=monitoring_callbacks(run_dir), **changes)
    return run_dir


def assert_png(path):
    assert path.read_bytes()[:8] == PNG_MAGIC
    height, width, _ = matplotlib.image.imread(path).shape
    assert height > 400 and width > 400


def test_clinic_plot_writes_a_png(tmp_path):
    small_run(tmp_path)
    result = clinic("plot", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert_png(tmp_path / "plot.png")
    chosen = clinic("plot", str(tmp_path / "metrics.jsonl"), "-o", str(tmp_path / "out" / "p.png"))
    assert chosen.returncode == 0, chosen.stderr
    assert_png(tmp_path / "out" / "p.png")


def test_clinic_plot_warns_about_malformed_lines_and_still_plots(tmp_path):
    small_run(tmp_path)
    with open(tmp_path / "metrics.jsonl", "a") as log:
        log.write("oops\n")
    result = clinic("plot", str(tmp_path))
    assert result.returncode == 0 and "line" in result.stderr and "not valid JSON (skipped)" in result.stderr
    assert_png(tmp_path / "plot.png")


def test_clinic_plot_without_a_log_is_a_one_line_usage_error(tmp_path):
    result = clinic("plot", str(tmp_path))
    assert result.returncode == 2
    # one line; since other tools' logs are read too, it also names what else was looked for
    assert result.stderr.startswith(f"clinic plot: error: {tmp_path} holds no metrics.jsonl, nor another tool's")
    assert result.stderr.count("\n") == 1


def test_comparison_and_nan_marks(tmp_path):
    good = small_run(tmp_path / "fixed")
    bad = tmp_path / "broken"
    bad.mkdir()
    lines = (good / "metrics.jsonl").read_text().replace('"train_loss": ', '"train_loss": NaN, "was": ', 1)
    (bad / "metrics.jsonl").write_text(lines)
    first_step = read_metrics_log(bad).metrics[0]["step"]
    assert math.isnan(read_metrics_log(bad).metrics[0]["train_loss"])
    assert RunLog.load(bad).nonfinite_steps() == [first_step] and RunLog.load(good).nonfinite_steps() == []
    assert_png(plot_comparison({"broken": bad, "fixed": good}, tmp_path / "compare.png"))
    assert_png(plot_run(bad, tmp_path / "broken.png"))


def test_a_run_whose_grad_norm_is_only_inf_and_nan_still_plots(tmp_path):
    """An LR-spike run logged every 5 steps can have no finite gradient norm at all: the log-scale panel
    must fall back to a linear axis instead of failing."""
    log = tmp_path / "metrics.jsonl"
    log.write_text('{"step": 5, "train_loss": 1e8, "grad_norm": Infinity}\n'
                   '{"step": 10, "train_loss": NaN, "grad_norm": NaN}\n')
    out = plot_run(log, tmp_path / "plot.png")
    assert out.stat().st_size > 0


def panels_of(log_text, tmp_path):
    """The axes plot_run draws for a log, inspected before they are closed."""
    from unittest import mock

    import chapters.plots as plots

    log = tmp_path / "metrics.jsonl"
    log.write_text(log_text)
    seen = {}
    real_save = plots.save

    def keep_axes(figure, axes, out_png, title):
        out = real_save(figure, axes, out_png, title)
        seen["axes"] = axes
        return out

    with mock.patch.object(plots, "save", keep_axes):
        plots.plot_run(log, tmp_path / "plot.png")
    return seen["axes"]


def records(values, key="train_loss", **extra):
    import json

    return "".join(json.dumps({"step": step, key: value, **extra}) + "\n" for step, value in enumerate(values, 1))


def test_a_panel_whose_values_span_decades_gets_a_log_axis_and_a_healthy_one_does_not(tmp_path):
    exploding = panels_of(records([3.2, 2.9, 40.0, 9e3, 1.25e8]), tmp_path)
    healthy = panels_of(records([3.4, 2.8, 2.1, 1.6, 1.2]), tmp_path)
    assert exploding[0].get_yscale() == "log" and healthy[0].get_yscale() == "linear"


def test_epoch_boundaries_are_drawn_when_the_log_knows_the_epoch_length(tmp_path):
    start = '{"event": "run_start", "step": 0, "steps_per_epoch": 10}\n'
    axes = panels_of(start + records([3.0] * 35), tmp_path)
    boundaries = sorted(line.get_xdata()[0] for line in axes[0].get_lines() if line.get_linestyle() == ":")
    assert boundaries == [10, 20, 30]
    assert not [line for line in panels_of(records([3.0] * 35), tmp_path)[0].get_lines() if line.get_linestyle() == ":"]


def test_a_flat_memory_line_is_not_zoomed_into_a_leak(tmp_path):
    noise = [0.390 + 0.001 * (step % 3) for step in range(40)]  # 2 MB of allocator noise on 390 MB
    axes = panels_of(records(noise, key="cpu_memory_gb"), tmp_path)
    low, high = axes[4].get_ylim()
    assert high - low >= 0.2 * 0.392  # the noise fills at most a small part of the axis
    leak = [0.390 + 0.02 * step for step in range(40)]  # +780 MB: a real leak fills the axis
    low, high = panels_of(records(leak, key="cpu_memory_gb"), tmp_path)[4].get_ylim()
    assert high - low < 1.5 * (leak[-1] - leak[0])
