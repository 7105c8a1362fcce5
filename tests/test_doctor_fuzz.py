"""No log the JSONL contract allows may crash the doctor: a property test over generated logs.

Hypothesis draws a *recipe* -- length (1 to 100,000 records), which keys, how each column behaves (constant,
random walk, falling, float32's extremes side by side, a fall to exactly 0, NaN/inf holes), the validation
loss's own shape, step gaps, evaluation cadence, run_start segments or none -- and numpy builds the log from
it, so even the long logs cost little to make. Every log must be analysed: exit 0, one
valid JSON document (no NaN tokens in it), labels from the vocabulary.
"""

from __future__ import annotations

import io
import json
import math
import warnings
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chapters.cli import main
from chapters.doctor import LABELS, diagnose

FLOAT_KEYS = ("train_loss", "lr", "grad_norm", "grad_norm/embed", "grad_norm/head", "update_ratio/embed",
              "update_ratio/head", "tokens_per_sec", "gpu_memory_gb", "cpu_memory_gb", "step_time_ms", "timestamp")
SHAPES = ("constant", "walk", "falling", "rising", "noise", "zero", "periodic", "extremes", "collapse")
START_FIELDS = {"vocab_size": st.integers(1, 50_000), "num_classes": st.integers(1, 1000),
                "steps_per_epoch": st.integers(1, 5000), "loss_floor": st.one_of(st.none(), st.floats(0, 12)),
                "total_params": st.integers(0, 10 ** 9), "trainable_params": st.integers(0, 10 ** 9)}

recipes = st.fixed_dictionaries({
    "length": st.one_of(st.integers(1, 40), st.integers(41, 3000), st.sampled_from([20_000, 100_000])),
    "keys": st.lists(st.sampled_from(FLOAT_KEYS), unique=True, max_size=len(FLOAT_KEYS)),
    "shapes": st.lists(st.sampled_from(SHAPES), min_size=len(FLOAT_KEYS), max_size=len(FLOAT_KEYS)),
    "holes": st.sampled_from([0.0, 0.001, 0.05, 0.5, 1.0]),  # share of non-finite values per column
    "epoch": st.sampled_from(["none", "int", "fraction"]),
    "max_gap": st.sampled_from([1, 1, 3, 50]),
    "eval_every": st.sampled_from([0, 1, 7, 100]),
    "val_shape": st.sampled_from(SHAPES),
    "segments": st.integers(0, 3),  # run_start events (0: no run_start at all)
    "start": st.fixed_dictionaries({}, optional=START_FIELDS),
    "seed": st.integers(0, 2 ** 31 - 1),
})


def column(shape: str, count: int, rng) -> np.ndarray:
    t = np.arange(count, dtype=float)
    scale = 10.0 ** rng.uniform(-6, 6)
    values = {"constant": np.full(count, scale), "zero": np.zeros(count),
              "walk": scale * np.exp(np.cumsum(rng.normal(0, 0.1, count))),
              "falling": scale * (1 + np.exp(-t / max(1, count / 5))),
              "rising": scale * (1 + t / max(1, count)),
              "noise": scale * rng.lognormal(0, 1, count),
              "periodic": scale * (2 + np.sin(t / 3)),
              # float32's extremes side by side: a blown-up run's loss, ~100 log units of noise
              "extremes": rng.choice([1e-40, 3e38], count),
              # falls, then exactly 0 (float32 rounds a confident model's cross-entropy to 0)
              "collapse": np.where(t < count / 3, scale * (1 + np.exp(-t / max(1, count / 9))), 0.0)}[shape]
    return values


def build_log(recipe: dict) -> list[str]:
    rng = np.random.default_rng(recipe["seed"])
    count = recipe["length"]
    steps = np.cumsum(rng.integers(1, recipe["max_gap"] + 1, count))
    columns = {key: column(shape, count, rng) for key, shape in zip(FLOAT_KEYS, recipe["shapes"])
               if key in recipe["keys"]}
    for values in columns.values():
        holes = rng.random(count) < recipe["holes"]
        values[holes] = rng.choice([np.nan, np.inf, -np.inf], holes.sum())
    names = list(columns)
    table = np.column_stack([columns[k] for k in names]) if names else np.zeros((count, 0))
    val = column(recipe["val_shape"], count, rng)
    lines, segment_starts = [], set()
    if recipe["segments"]:
        later = rng.choice(np.arange(1, count), min(count - 1, recipe["segments"] - 1), replace=False)
        segment_starts = set(later.tolist()) | {0}
    for i in range(count):
        if i in segment_starts:
            resumed_from = int(steps[max(0, i - 5)]) if i else 0  # a resume repeats a few steps
            lines.append(json.dumps({"event": "run_start", "step": resumed_from, **recipe["start"]}))
        record = {"step": int(steps[i])}
        if recipe["epoch"] == "int":
            record["epoch"] = int(i // 37)
        elif recipe["epoch"] == "fraction":
            record["epoch"] = round(i / 37, 4)
        record.update(zip(names, table[i].tolist()))
        lines.append(json.dumps(record))
        if recipe["eval_every"] and i % recipe["eval_every"] == 0:
            lines.append(json.dumps({"step": int(steps[i]), "val_loss": float(val[i])}))
    return lines


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recipe=recipes)
def test_every_contract_valid_log_is_analysed(recipe, tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "metrics.jsonl"
    path.write_text("\n".join(build_log(recipe)) + "\n")
    diagnosis = diagnose(path)
    document = json.loads(json.dumps(diagnosis.to_json(), allow_nan=False))  # strict JSON: no NaN tokens
    assert document["verdict"] in ("healthy", "anomalous")
    for finding in document["findings"]:
        assert finding["anomaly"] in LABELS and 0 <= finding["confidence"] <= 1
        assert finding["step"] is None or isinstance(finding["step"], int)
        assert isinstance(finding["evidence"], str) and "nan" not in finding["evidence"].split()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recipe=recipes.filter(lambda r: r["length"] <= 3000))
def test_cli_json_exits_0_with_one_document(recipe, tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "metrics.jsonl"
    path.write_text("\n".join(build_log(recipe)) + "\n")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["diagnose", str(path), "--json"])
    out = out.getvalue()
    assert code == 0
    document = json.loads(out)
    assert set(document) == {"verdict", "findings"}
    assert all(not (isinstance(f["confidence"], float) and math.isnan(f["confidence"])) for f in document["findings"])


def test_a_loss_between_float32s_extremes_is_analysed_without_a_warning(tmp_path):
    # 1e-40 and 3e38 from one record to the next: ~100 log units of noise, and 6 of those overflowed
    # math.exp (OverflowError on 120 of 600 such generated logs until 2026-12-02).
    rng = np.random.default_rng(0)
    rows = [{"step": i + 1, "train_loss": float(rng.choice([1e-40, 3e38])), "lr": float(rng.choice([1e-300, 1e300]))}
            for i in range(200)]
    path = tmp_path / "metrics.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow warnings would print beside the report
        assert diagnose(path).findings


def test_a_train_loss_of_exactly_zero_beside_a_rising_val_loss_is_overfitting(tmp_path):
    # float32 rounds a confident model's cross-entropy to 0: the "train fell by x %" evidence divided by it
    # (ZeroDivisionError, found training a real MLP with Adam at 30x its learning rate, batch 4).
    rows = [{"step": s, "train_loss": max(0.0, 2.0 - s / 25)} for s in range(1, 401)]
    rows += [{"step": s, "val_loss": 1.0 + abs(s - 100) / 100} for s in range(20, 401, 20)]
    path = tmp_path / "metrics.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert [f.anomaly for f in diagnose(path).findings][:1] == ["overfitting"]
