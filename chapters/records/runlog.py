"""``RunLog``: the one reader of a run's metrics -- the doctor, the plots, the scenarios and the graders
all read a log through it, so they cannot disagree about what the log says.

A log becomes tidy pandas frames: ``train`` (training records, one row per step), ``evals`` (``val_loss``
records), ``nonfinite`` (which losses and gradient norms were *written* NaN/Inf) and ``events``. Real logs are
messy, and every reader must cope the same way:

* a NaN loss stays NaN (never dropped): a written NaN is a finding, an absent value is not;
* records that break the contract's types (a ``step`` that is no integer, ``"0.53"`` written as a string,
  no ``step`` at all) cannot be trusted: they are skipped and named by line in ``notes``;
* eval records (``val_loss``) and training records live at the same steps, so they are kept apart;
* other loggers' habits are read as the same run: other tools' names for the contract's keys (``loss``,
  ``eval_loss``) are read as the contract's, a record holding both losses is split in two, a val
  loss carried forward on every record counts once, a ``null`` placeholder beside a finite loss is "not
  logged" (:mod:`chapters.records.habits`), a training loss logged as the
  running mean of its epoch is turned back into window means (:mod:`chapters.records.running_mean`), and a
  step counted within its epoch becomes the steps since the run began (:mod:`chapters.records.epoch_steps`).

**Resumed runs** (a crash, then a restart from a checkpoint that appends to the same log) are *segments*,
each opened by a ``run_start``. The rule, written down in ``docs/jsonl-contract.md``: the *last*
``run_start`` is authoritative (its config, ``loss_floor`` and ``steps_per_epoch`` describe the run that went
on); the metrics of every segment are kept, and where segments repeat a step the *later* record wins.

Three ways in: :meth:`RunLog.load` (a ``metrics.jsonl`` or its run directory), :meth:`RunLog.from_records`
(dicts in memory, what a live callback holds) and :meth:`RunLog.from_frame` (a pandas frame with the
contract's column names, what a reader of another tool's logs builds). Reading a file tries a fast path
first (:mod:`chapters.records.fast_path`: a million clean records in about two seconds); any line it cannot
vouch for sends the whole file down the tolerant line reader (:func:`chapters.records.jsonl.read_metrics_log`),
and both give the same tables (a test checks it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from chapters.errors import MetricsLogError
from chapters.records.epoch_steps import steps_since_start
from chapters.records.fast_path import fast_columns
from chapters.records.habits import split_combined, with_contract_names, without_placeholders
from chapters.records.jsonl import find_log, read_metrics_log
from chapters.records.running_mean import undo_running_mean

FLAG_KEYS = ("train_loss", "val_loss", "grad_norm")  # keys whose non-finite values are findings, not gaps
# run_start's count of outcomes, as the contract (num_classes), Hugging Face configs (num_labels),
# hand-written loops (n_classes, n_vocab) and our writer (vocab_size) spell it. A classifier's class count
# first: a text classifier declares the *input* vocabulary beside it (a bag-of-words model, 600 words, 6
# classes: ln 600 = 6.4 was its untrained reference until 2026-12-03, and its dead network at ln 6 read as
# "learned"); a language model's outputs are its vocabulary, and it declares no class count.
CLASS_COUNT_KEYS = ("num_classes", "num_labels", "n_classes", "vocab_size", "n_vocab")
MAX_POINTS = 2000  # a curve longer than this is reduced to this many bins


@dataclass
class RunLog:
    """A run's metrics, one row per step, sorted by step.

    ``train`` holds the training records, ``evals`` the evaluation records (``val_loss``). A missing value is
    NaN; ``nonfinite`` says, for the keys in ``FLAG_KEYS``, which NaN/inf values were really *written* so.
    """

    train: pd.DataFrame
    evals: pd.DataFrame
    nonfinite: pd.DataFrame  # bool columns FLAG_KEYS, index aligned with ``all_rows``
    all_rows: pd.DataFrame  # (step, kind) of train and eval rows together (kind True = eval): flags' index
    events: list[dict] = field(default_factory=list)
    run_start: dict = field(default_factory=dict)  # the last run_start event: the authoritative segment
    notes: list[str] = field(default_factory=list)  # what the reader skipped or repaired, one line each
    skipped_lines: list[str] = field(default_factory=list)  # "line 7: not valid JSON": the notes about lines
    path: Path | None = None  # the file read, when it came from one
    _curves: dict = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------------------------ constructors
    @classmethod
    def load(cls, path) -> RunLog:
        """Read ``path`` (a log file or a run directory). Raises ``MetricsLogError`` for an unusable log."""
        path = find_log(path)
        raw = path.read_bytes()
        columns = fast_columns(raw)
        if columns is not None:
            metrics, events, notes = columns
        else:
            log = read_metrics_log(path)
            if not log.metrics and log.problems and not any(map(_tells_something, log.events)):
                raise MetricsLogError(f"{path} holds no usable metric record ({len(log.problems)} malformed "
                                      f"lines; first, {log.problems[0]})")
            metrics, events = _columns_from_records(log.metrics), log.events
            notes = list(log.problems)
            if log.truncated_tail:
                notes.append("the last line was cut off mid-write (a killed run?): skipped")
        run = build_run(metrics, events, notes, path)
        run.skipped_lines = [] if columns is not None else list(log.problems)
        return run

    @classmethod
    def from_records(cls, metrics: list[dict], events: list[dict] = ()) -> RunLog:
        """The same tables from records in memory: a key present with a NaN value is a written NaN."""
        return build_run(_columns_from_records(metrics), list(events), [])

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, events: list[dict] = (), notes: list[str] = ()) -> RunLog:
        """The same tables from a frame with one row per record and the contract's column names (``step``,
        ``train_loss``, ``val_loss``, ``grad_norm/<group>``...): what a reader of another tool's logs builds.

        An empty cell means "not logged in this record": ``None``/``pd.NA``, or NaN in a float column. To
        hand over a loss that was *written* NaN, give that column ``object`` dtype with ``float("nan")``
        in the cell (``None`` elsewhere) -- or use :meth:`from_records`. A row with ``val_loss`` and no
        ``train_loss`` is an eval record. Events (``run_start`` with ``loss_floor``...) are optional.
        """
        columns = {}
        for key in frame.columns:
            raw = frame[key]
            if raw.dtype == object:
                present = raw.map(lambda v: v is not None and v is not pd.NA).to_numpy(bool)
                columns[str(key)] = _values_and_presence(raw.where(present, None), present)
            else:
                values = _numeric(raw)
                columns[str(key)] = (values, ~np.isnan(values))
        return build_run(columns, list(events), list(notes))

    # ------------------------------------------------------------------------------------------ queries
    def info(self, key: str):
        """A number from run_start (``loss_floor``, ``steps_per_epoch``...), or None when absent or unusable.

        Our writer puts these facts at the top of ``run_start``; other trainers nest them in the
        hyper-parameters they log there (``{"config": {"vocab_size": 100}}``, ``{"hparams": {"model":
        {...}}}``), so the top level is read first, then the dicts inside it, level by level (to two levels
        down). The nearest value wins: the top-level one is the writer's statement about this run."""
        return start_fact(self.run_start, key)

    @property
    def class_count(self) -> int | None:
        """How many outcomes the model chooses among -- V tokens for a language model, K classes for a
        classifier -- when run_start declares it under one of the names trainers use
        (:data:`CLASS_COUNT_KEYS`); None otherwise, and for a count below 2 (a regression's one output).
        Its logarithm is the loss of a model that knows nothing, the doctor's untrained reference."""
        for key in CLASS_COUNT_KEYS:
            value = self.info(key)
            if value is not None and value >= 2:
                return int(value)
        return None

    @property
    def loss_floor(self) -> float | None:
        return self.info("loss_floor")

    @property
    def steps_per_epoch(self) -> int | None:
        value = self.info("steps_per_epoch")
        return int(value) if value is not None and value >= 1 else None

    @property
    def segments(self) -> int:
        """How many times the run started (1 for a run never resumed; 0 for a log without run_start)."""
        return sum(1 for e in self.events if e.get("event") == "run_start")

    def event(self, name: str) -> dict | None:
        """The first event called ``name`` (``"nan"``, ``"oom"``...), or None."""
        return next((e for e in self.events if e.get("event") == name), None)

    @property
    def status(self) -> str:
        """How the run ended: the last ``run_end``'s status, or ``killed`` when it never wrote one."""
        ends = [e for e in self.events if e.get("event") == "run_end"]
        return str(ends[-1].get("status", "killed")) if ends else "killed"

    @property
    def error(self) -> str | None:
        """What stopped a failed run (the last ``run_end``'s ``error``), or None."""
        ends = [e for e in self.events if e.get("event") == "run_end"]
        return ends[-1].get("error") if ends else None

    def series(self, key: str) -> pd.Series:
        """Every logged value of ``key`` (NaN and Inf included), indexed by step."""
        frame = self.evals if key == "val_loss" else self.train
        if key not in frame:
            return pd.Series(dtype=float)
        values = pd.Series(frame[key].to_numpy(dtype=float), index=frame["step"].to_numpy())
        written = self.nonfinite[key].to_numpy()[self._rows(key == "val_loss")] if key in FLAG_KEYS else None
        keep = ~np.isnan(values.to_numpy()) if written is None else ~np.isnan(values.to_numpy()) | written
        return values[keep]

    def final(self, key: str) -> float:
        """The last value of ``key`` (NaN skipped)."""
        return float(self.series(key).dropna().iloc[-1])

    def nonfinite_steps(self, keys: tuple[str, ...] = ("train_loss", "val_loss")) -> list[int]:
        """Steps at which one of ``keys`` was written NaN or Inf, plus the step of any ``nan`` event --
        the one place that answers "where did the run stop being finite?"."""
        steps = self.all_rows["step"].to_numpy()
        written = self.nonfinite[list(keys)].to_numpy().any(axis=1)
        found = {int(s) for s in steps[written]}
        found |= {int(e["step"]) for e in self.events
                  if e.get("event") == "nan" and isinstance(e.get("step"), int)}
        return sorted(found)

    def curve(self, key: str) -> pd.Series:
        """The training curve of ``key`` (see :func:`curve`), computed once and shared by every reader."""
        if key not in self._curves:
            self._curves[key] = curve(self.train, key)
        return self._curves[key]

    def _rows(self, kind: bool) -> np.ndarray:
        return self.all_rows["kind"].to_numpy() == kind


def curve(frame: pd.DataFrame, key: str, bins: bool = True) -> pd.Series:
    """Finite values of ``key`` indexed by step (binned to ``MAX_POINTS`` medians when longer), so a
    million-record log costs a statistic what a short one does."""
    if key not in frame:
        return pd.Series(dtype=float)
    values = pd.Series(frame[key].to_numpy(dtype=float), index=frame["step"].to_numpy())
    values = values[np.isfinite(values.to_numpy())]
    if bins and len(values) > MAX_POINTS:
        width = -(-len(values) // MAX_POINTS)
        position = np.arange(len(values)) // width
        grouped = values.groupby(position)
        values = pd.Series(grouped.median().to_numpy(), index=values.index.to_numpy()[::width][: grouped.ngroups])
    return values


def _tells_something(event: dict) -> bool:
    """Can the doctor judge a run from this event alone (an ``oom``, a ``nan``, a run that ended badly)? A
    log whose every metric line was malformed, with nothing else to go on, is refused rather than called
    healthy."""
    name = event.get("event")
    return name not in ("run_start", "run_end") or (name == "run_end" and event.get("status") != "completed")


def start_fact(run_start: dict, key: str) -> float | None:
    """``key``'s number in ``run_start`` or in the dicts it carries, nearest first (:meth:`RunLog.info`)."""
    for level in _levels(run_start, depth=3):
        value = to_number(level.get(key))
        if value is not None:
            return value if math.isfinite(value) else None
    return None


def _levels(info: dict, depth: int):
    """``info``, then the dicts among its values, then theirs...: ``depth`` levels, nearest first."""
    level = [info]
    for _ in range(depth):
        yield from level
        level = [value for outer in level for value in outer.values() if isinstance(value, dict)]


def to_number(value) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------------------------------------- building
def _columns_from_records(records: list[dict]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{key: (values as float, where the key was present)} for every key of the records.

    A key written with ``null`` counts as present: some writers put ``null`` where the value was NaN, and a
    loss the writer could not express is not a missing loss.
    """
    keys = {}
    for record in records:
        keys.update(dict.fromkeys(record))
    columns = {}
    for key in keys:
        raw = pd.Series([record.get(key) for record in records], dtype=object)
        present = np.fromiter((key in record for record in records), bool, len(records))
        columns[key] = _values_and_presence(raw, present)
    return columns


def _values_and_presence(raw: pd.Series, present: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values as float, where a value was logged). A value that is no number at all ("abc", a list) is
    unreadable, not a NaN the run produced, so it does not count as logged."""
    values = _numeric(raw)
    unreadable = np.isnan(values) & raw.map(lambda v: v is not None and not _spells_nan(v)).to_numpy(bool)
    return values, present & ~unreadable


def _spells_nan(value) -> bool:
    if isinstance(value, float):
        return True
    return isinstance(value, str) and value.strip().lower() in ("nan", "-nan")


def _numeric(values: pd.Series) -> np.ndarray:
    """Numbers, strings holding numbers ("0.5", "NaN", "Infinity") -> float; anything else -> NaN."""
    converted = pd.to_numeric(values.map(lambda v: None if isinstance(v, bool) else v), errors="coerce")
    return np.asarray(converted, dtype=float)


def build_run(columns: dict, events: list[dict], notes: list[str], path: Path | None = None) -> RunLog:
    columns = without_placeholders(with_contract_names(columns, notes))
    if "train_loss" not in columns and "val_loss" not in columns:
        notes.append("no train_loss or val_loss in the log (nor another tool's name for them): the rules "
                     "about the loss have nothing to read")
    if "step" not in columns or not columns["step"][1].any():
        if not events:
            raise MetricsLogError("no record has a 'step' field, so the log cannot be placed on a time axis")
        columns = {"step": (np.array([], float), np.array([], bool))}
    count = len(columns["step"][0])
    present = {key: columns[key][1] if key in columns else np.zeros(count, bool) for key in FLAG_KEYS}
    usable = np.isfinite(columns["step"][0])
    if (~usable).any():
        notes.append(f"{int((~usable).sum())} metric records without a usable 'step' were skipped")
    frame = pd.DataFrame({key: values[usable] for key, (values, _) in columns.items() if key != "event"})
    for key in FLAG_KEYS:  # written, but not a finite number: NaN, Infinity, null
        values = frame[key].to_numpy() if key in frame else np.zeros(len(frame))
        frame["!" + key] = present[key][usable] & ~np.isfinite(values)
    frame["step"] = frame["step"].astype(np.int64)
    starts = [event for event in events if event.get("event") == "run_start"]
    start = starts[-1] if starts else {}
    frame = steps_since_start(frame, present["train_loss"][usable], start_fact(start, "steps_per_epoch"), notes)
    # An eval record carries val_loss and no train_loss; it shares its step with a training record.
    is_eval = present["val_loss"][usable] & ~present["train_loss"][usable]
    both = present["val_loss"][usable] & present["train_loss"][usable]
    if both.any():
        frame, is_eval = split_combined(frame, both, is_eval)
    frame["kind"] = is_eval
    steps, kinds = frame["step"].to_numpy(), frame["kind"].to_numpy()
    backwards = int((np.diff(steps) < 0).sum())
    # A clean log (steps never go back, no step logged twice per kind) skips the sort and the dedup, which
    # cost more than all the rules on a million records.
    repeats = (steps[1:] == steps[:-1]) & (kinds[1:] == kinds[:-1])
    if backwards or repeats.any() or (len(steps) > 2 and (steps[2:] == steps[:-2]).any()):
        before = len(frame)
        frame = frame.drop_duplicates(["step", "kind"], keep="last")  # the later segment's record wins
        if backwards or before > len(frame):
            notes.append(f"steps go backwards {backwards} time(s) and {before - len(frame)} records repeat a "
                         "step (a resumed run?): the later record of each step was kept")
        frame = frame.sort_values("step", kind="stable").reset_index(drop=True)
    flag_columns = ["!" + key for key in FLAG_KEYS]
    flags = frame[flag_columns].rename(columns=lambda name: name[1:])
    rows = frame.drop(columns=flag_columns)
    train, evals = _part(rows, flags, False), _part(rows, flags, True)
    train = undo_running_mean(train, notes)
    return RunLog(train, evals, flags, rows[["step", "kind"]], events, start, notes, path=path)


def _part(rows: pd.DataFrame, flags: pd.DataFrame, kind: bool) -> pd.DataFrame:
    """The rows of one kind, without the columns that kind never fills (a loss written only as NaN counts
    as filled: it is the most important value in the log)."""
    mine = (rows["kind"] == kind).to_numpy()
    written = flags[mine].any()
    unused = [c for c in rows.columns if c == "kind" or not (c == "step" or written.get(c, False)
                                                              or (rows[c].notna().to_numpy() & mine).any())]
    # Dropping columns first costs nothing (pandas copies on write): the rows are then copied once, where
    # selecting rows and then columns copied a million-row table twice.
    part = rows.drop(columns=unused)[mine].reset_index(drop=True)
    loss = "val_loss" if kind else "train_loss"  # always there, even empty: a run may die before logging one
    return part if loss in part else part.assign(**{loss: np.full(len(part), np.nan)})
