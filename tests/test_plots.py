"""`clinic plot` and the plotting functions the scenarios call."""

import math

import matplotlib.image

from chapters.monitoring import monitoring_callbacks
from chapters.plots import nonfinite_steps, plot_comparison, plot_run
from chapters.logging_levels.level3_jsonl import read_metrics_log
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
    assert result.stderr == f"clinic plot: error: {tmp_path} holds no metrics.jsonl\n"


def test_comparison_and_nan_marks(tmp_path):
    good = small_run(tmp_path / "fixed")
    bad = tmp_path / "broken"
    bad.mkdir()
    lines = (good / "metrics.jsonl").read_text().replace('"train_loss": ', '"train_loss": NaN, "was": ', 1)
    (bad / "metrics.jsonl").write_text(lines)
    first_step = read_metrics_log(bad).metrics[0]["step"]
    assert math.isnan(read_metrics_log(bad).metrics[0]["train_loss"])
    assert nonfinite_steps(read_metrics_log(bad)) == [first_step] and nonfinite_steps(read_metrics_log(good)) == []
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
