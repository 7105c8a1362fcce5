"""The same run as other loggers write it, so a benchmark can ask whether the doctor's answer depends on
*how* the losses were logged (it must not).

* ``separate``: an evaluation record of its own, ``{"step", "val_loss"}`` -- the course's writer;
* ``carried``: no evaluation records; every training record holds the latest ``val_loss`` (a logger that
  keeps one dict of "current metrics" and dumps it every step);
* ``fixed_schema``: every record holds both losses, ``null`` where one was not measured (a table exported
  to JSON lines, e.g. ``DataFrame.to_json(orient="records", lines=True)``);
* ``epoch_mean``: ``train_loss`` is the running mean since the epoch began (``running_loss / (i + 1)``,
  Keras' progress bar), over the logged records -- which is the running mean over the steps when the
  records are evenly spaced, as the benchmarks' are;
* ``epoch_steps``: ``step`` counts the steps since the epoch began (``for i, batch in enumerate(loader)``),
  so it starts again at every epoch -- by ``steps_per_epoch`` where ``run_start`` declares it, otherwise
  from half-way between the epoch's first record and the last record before it;
* ``nested_start``: ``run_start``'s facts (``num_classes``, ``vocab_size``, ``loss_floor``...) inside a
  ``config`` dict it carries, the class count spelled ``num_labels`` (Hugging Face's name) -- a trainer that
  logs its hyper-parameters as one dict;
* ``ema``: ``train_loss`` is an exponential moving average over the steps (``smooth = 0.98 * smooth +
  0.02 * loss``, the smoothed loss many hand-written loops print), over the logged records;
* ``epoch_end``: one training record an epoch, at its last step, holding the epoch's mean training loss,
  and the epoch's last evaluation (Keras' ``History``, a loop that logs once per epoch);
* ``bits``: the losses in bits (log base 2: ``loss / ln 2``, bits per token or per character, a character
  LM's usual unit), ``run_start``'s ``loss_floor`` too -- but a ``vocab_size`` or ``num_classes`` still
  says ln K in nats, so a run starts at 1.44x what its class count implies.

Event records (``run_start``, ``run_end``...) pass through unchanged, but for ``nested_start``'s
``run_start``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

HABITS = ("separate", "carried", "fixed_schema", "epoch_mean", "epoch_steps", "nested_start", "ema", "epoch_end",
          "bits")
EMA_KEEP = 0.98  # per step: ``smooth = 0.98 * smooth + 0.02 * loss``, a time constant of 50 steps
FACTS = ("vocab_size", "num_classes", "loss_floor", "steps_per_epoch", "total_params", "trainable_params")


def relog(rows: list[dict], habit: str) -> list[dict]:
    """``rows`` (contract records, evaluations in records of their own) as ``habit`` writes them."""
    if habit == "separate":
        return rows
    if habit == "epoch_mean":
        return running_epoch_means(rows)
    if habit == "ema":
        return moving_averages(rows)
    if habit == "epoch_end":
        return epoch_ends(rows)
    if habit == "epoch_steps":
        return steps_within_epochs(rows)
    if habit == "bits":
        return [in_bits(row) for row in rows]
    if habit == "nested_start":
        return [nested_start(row) if row.get("event") == "run_start" else row for row in rows]
    out, latest = [], None
    for row in rows:
        if "event" in row:
            out.append(row)
            continue
        evaluation = "val_loss" in row and "train_loss" not in row
        if habit == "carried":
            if evaluation:
                latest = row["val_loss"]
            else:
                out.append(row if latest is None else {**row, "val_loss": latest})
        else:
            out.append({"train_loss": None, **row} if evaluation else {"val_loss": None, **row})
    return out


def running_epoch_means(rows: list[dict]) -> list[dict]:
    """``rows`` with each ``train_loss`` replaced by the mean of its epoch's training records so far."""
    out, total, count, epoch = [], 0.0, 0, None
    for row in rows:
        if "train_loss" in row and "event" not in row:
            if row.get("epoch") != epoch:
                epoch, total, count = row.get("epoch"), 0.0, 0
            total, count = total + row["train_loss"], count + 1
            row = {**row, "train_loss": total / count}
        out.append(row)
    return out


def moving_averages(rows: list[dict], keep: float = EMA_KEEP) -> list[dict]:
    """``rows`` with each ``train_loss`` replaced by an exponential moving average that keeps ``keep`` of
    itself per step (``keep ** steps`` between two records), started at the first record's value."""
    out, average, last = [], None, 0
    for row in rows:
        if "train_loss" in row and "event" not in row and row["train_loss"] is not None:
            if average is None:
                average = row["train_loss"]
            weight = keep ** max(1, row["step"] - last)
            average = weight * average + (1 - weight) * row["train_loss"]
            last = row["step"]
            row = {**row, "train_loss": average}
        out.append(row)
    return out


def epoch_ends(rows: list[dict]) -> list[dict]:
    """``rows`` logged once an epoch: one training record at the epoch's last logged step, its ``train_loss``
    the mean of the epoch's records (the other keys as the last record had them), and the epoch's last
    evaluation. A record without an ``epoch`` closes an epoch of its own."""
    out, pending, losses, evaluation, epoch = [], None, [], None, object()

    def close():
        if pending is not None:
            out.append({**pending, "train_loss": sum(losses) / len(losses)})
        if evaluation is not None:
            out.append(evaluation)

    for row in rows:
        if "event" in row:
            close()
            pending, losses, evaluation, epoch = None, [], None, object()
            out.append(row)
            continue
        if "train_loss" in row and row.get("epoch", object()) != epoch:
            close()
            pending, losses, evaluation, epoch = None, [], None, row.get("epoch", object())
        if "train_loss" in row:
            pending = row
            losses.append(row["train_loss"])
        else:
            evaluation = row
    close()
    return out


def steps_within_epochs(rows: list[dict]) -> list[dict]:
    """``rows`` with each metric record's ``step`` counted from the start of its epoch (an epoch logged
    again after a resume keeps the start it had)."""
    declared = next((row.get("steps_per_epoch") for row in rows if row.get("event") == "run_start"), None)
    starts, last, out = {}, 0, []
    for row in rows:
        if "event" not in row and "epoch" in row:
            epoch = row["epoch"]
            if epoch not in starts:
                starts[epoch] = epoch * declared if declared else (last + row["step"]) // 2
            last = row["step"]
            row = {**row, "step": row["step"] - starts[epoch]}
        out.append(row)
    return out


def in_bits(row: dict) -> dict:
    """``row`` with its losses (and a ``run_start``'s ``loss_floor``) divided by ln 2; ``None`` and NaN stay."""
    if row.get("event") == "run_start":
        keys = ("loss_floor",)
    elif "event" in row:
        keys = ()  # other events hold no loss
    else:
        keys = ("train_loss", "val_loss")
    return {key: value / math.log(2) if key in keys and isinstance(value, (int, float)) else value
            for key, value in row.items()}


def nested_start(event: dict) -> dict:
    """``event`` (a ``run_start``) with its facts moved into a ``config`` dict, ``num_classes`` spelled
    ``num_labels``."""
    facts = {("num_labels" if key == "num_classes" else key): event[key] for key in FACTS if key in event}
    rest = {key: value for key, value in event.items() if key not in FACTS}
    return {**rest, "config": {**event.get("config", {}), **facts}}


def relog_file(source: Path, target: Path, habit: str) -> None:
    """Rewrite the JSON-lines log ``source`` as ``habit`` writes it, into ``target``."""
    rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(json.dumps(row) + "\n" for row in relog(rows, habit)))
