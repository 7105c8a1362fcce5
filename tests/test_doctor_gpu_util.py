"""``gpu_underutilised`` on constructed logs: NVML figures are written into the records, no GPU is needed."""

from __future__ import annotations

import numpy as np

from chapters.doctor import LABELS, diagnose
from tests.test_doctor_rules import labels, learning_curve, records, write_log


def run_with_util(tmp_path, util, seed=0, **columns):
    rng = np.random.default_rng(seed)
    loss = columns.pop("loss", None)
    loss = learning_curve(len(util), rng) if loss is None else loss
    return write_log(tmp_path, records(loss, gpu_util=np.clip(util, 0, 100), **columns))


def test_the_label_is_in_the_vocabulary():
    assert "gpu_underutilised" in LABELS


def test_a_fed_gpu_is_not_underutilised_even_with_evaluation_dips(tmp_path):
    rng = np.random.default_rng(0)
    util = rng.uniform(88, 100, 200)
    util[::25] = 15  # one sample in 25 taken during an evaluation or a checkpoint save
    assert labels(run_with_util(tmp_path, util)) == []


def test_a_starved_gpu_is_underutilised_from_the_start(tmp_path):
    rng = np.random.default_rng(1)
    util = rng.uniform(25, 60, 200)
    util[:3] = 0  # warm-up
    findings = diagnose(run_with_util(tmp_path, util)).findings
    assert [f.anomaly for f in findings] == ["gpu_underutilised"]
    assert findings[0].step <= 120 and "below 80 %" in findings[0].evidence  # after the 5 % warm-up


def test_a_loader_that_starts_to_stall_half_way_is_found_where_it_starts(tmp_path):
    rng = np.random.default_rng(2)
    count = 200
    util = np.where(np.arange(count) < 90, rng.uniform(90, 99, count), rng.uniform(30, 55, count))
    findings = diagnose(run_with_util(tmp_path, util)).findings
    assert [f.anomaly for f in findings] == ["gpu_underutilised"]
    assert 890 <= findings[0].step <= 930  # record 90 is step 910


def test_just_above_the_threshold_is_quiet_and_just_below_is_found(tmp_path):
    rng = np.random.default_rng(3)
    assert labels(run_with_util(tmp_path, rng.uniform(81, 86, 200))) == []
    assert labels(run_with_util(tmp_path, rng.uniform(70, 78, 200))) == ["gpu_underutilised"]


def test_less_than_half_the_run_starved_is_quiet(tmp_path):
    rng = np.random.default_rng(4)
    util = rng.uniform(90, 99, 200)
    util[50:110] = 40  # 30 % of the run
    assert labels(run_with_util(tmp_path, util)) == []


def test_fractions_impossible_values_and_short_logs_are_left_alone(tmp_path):
    rng = np.random.default_rng(5)
    assert labels(run_with_util(tmp_path, rng.uniform(0.3, 0.6, 200))) == []  # 0-1: fractions or idle? unknown
    rng_log = write_log(tmp_path, records(learning_curve(200, rng), gpu_util=rng.uniform(150, 400, 200)))
    assert labels(rng_log) == []  # not percentages
    assert labels(run_with_util(tmp_path, np.full(6, 30.0))) == []  # too few records to say


def test_a_training_finding_is_listed_before_the_idle_gpu(tmp_path):
    rng = np.random.default_rng(6)
    loss = learning_curve(200, rng)
    loss[120:] = float("nan")
    found = labels(run_with_util(tmp_path, rng.uniform(20, 40, 200), loss=loss))
    assert found[0] == "nan_loss" and "gpu_underutilised" in found
