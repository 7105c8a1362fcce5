"""Turn a metrics log -- ours or anyone's -- into tidy pandas frames the rules can read.

Real logs are messy, and the doctor must read them anyway:

* numbers written as strings (``"0.53"``, ``"NaN"``) are converted; a NaN loss stays NaN (never dropped);
* records without a ``step`` cannot be placed on the time axis: they are skipped and counted;
* steps that go backwards or repeat come from resumed runs (a crash, then a restart from a checkpoint that
  appends to the same log): the *later* record of a step wins, because it describes the run that went on;
* eval records (``val_loss``) and training records live at the same steps, so they are kept apart.

Reading is delegated to :func:`~chapters.logging_levels.level3_jsonl.read_metrics_log`, the project's
tolerant reader. A million-record log takes that path seconds, because it builds a Python dict per line, so
clean logs take a fast path first: the lines are reshaped into CSV and parsed by pandas' C reader. Any line
that does not fit the fast path's assumptions sends the whole file down the tolerant path, so both always
agree (a test checks it).
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from chapters.doctor.signals import curve
from chapters.logging_levels.level3_jsonl import MetricsLogError, find_log, read_metrics_log

FLAG_KEYS = ("train_loss", "val_loss", "grad_norm")  # keys whose non-finite values are findings, not gaps


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
    run_start: dict = field(default_factory=dict)  # the last run_start event (a resumed run restarts)
    notes: list[str] = field(default_factory=list)
    _curves: dict = field(default_factory=dict, repr=False)

    def info(self, key: str):
        """A number from run_start (``loss_floor``, ``steps_per_epoch``...), or None when absent or unusable."""
        value = to_number(self.run_start.get(key))
        return None if value is None or not math.isfinite(value) else value

    def curve(self, key: str) -> pd.Series:
        """The training curve of ``key`` (see :func:`signals.curve`), computed once and shared by the rules."""
        if key not in self._curves:
            self._curves[key] = curve(self.train, key)
        return self._curves[key]


def to_number(value) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def load_run(path) -> RunLog:
    """Read ``path`` (a log file or a run directory). Raises ``MetricsLogError`` for an unusable log."""
    path = find_log(path)
    raw = path.read_bytes()
    columns = _fast_columns(raw)
    if columns is not None:
        metrics, events, notes = columns
    else:
        log = read_metrics_log(path)
        metrics, events = _columns_from_records(log.metrics), log.events
        notes = list(log.problems)
        if log.truncated_tail:
            notes.append("the last line was cut off mid-write (a killed run?): skipped")
    return build_run(metrics, events, notes)


def run_from_records(metrics: list[dict], events: list[dict]) -> RunLog:
    """The same tables from records in memory (what the live callback has)."""
    return build_run(_columns_from_records(metrics), events, [])


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
        values = _numeric(raw)
        present = np.fromiter((key in record for record in records), bool, len(records))
        # A value that is no number at all ("abc", a list) is unreadable, not a NaN the run produced.
        unreadable = np.isnan(values) & raw.map(lambda v: v is not None and not _spells_nan(v)).to_numpy(bool)
        columns[key] = (values, present & ~unreadable)
    return columns


def _spells_nan(value) -> bool:
    if isinstance(value, float):
        return True
    return isinstance(value, str) and value.strip().lower() in ("nan", "-nan")


def _numeric(values: pd.Series) -> np.ndarray:
    """Numbers, strings holding numbers ("0.5", "NaN", "Infinity") -> float; anything else -> NaN."""
    converted = pd.to_numeric(values.map(lambda v: None if isinstance(v, bool) else v), errors="coerce")
    return np.asarray(converted, dtype=float)


def build_run(columns: dict, events: list[dict], notes: list[str]) -> RunLog:
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
    # An eval record carries val_loss and no train_loss; it shares its step with a training record.
    is_eval = present["val_loss"][usable] & ~present["train_loss"][usable]
    frame["kind"] = is_eval
    steps, kinds = frame["step"].to_numpy(), frame["kind"].to_numpy()
    backwards = int((np.diff(steps) < 0).sum())
    # A clean log (steps never go back, no step logged twice per kind) skips the sort and the dedup, which
    # cost more than all the rules on a million records.
    repeats = (steps[1:] == steps[:-1]) & (kinds[1:] == kinds[:-1])
    if backwards or repeats.any() or (len(steps) > 2 and (steps[2:] == steps[:-2]).any()):
        before = len(frame)
        frame = frame.drop_duplicates(["step", "kind"], keep="last")  # kind: True for eval rows
        if backwards or before > len(frame):
            notes.append(f"steps go backwards {backwards} time(s) and {before - len(frame)} records repeat a "
                         "step (a resumed run?): the later record of each step was kept")
        frame = frame.sort_values("step", kind="stable").reset_index(drop=True)
    flag_columns = ["!" + key for key in FLAG_KEYS]
    flags = frame[flag_columns].rename(columns=lambda name: name[1:])
    rows = frame.drop(columns=flag_columns)
    train, evals = _part(rows, False), _part(rows, True)
    starts = [event for event in events if event.get("event") == "run_start"]
    return RunLog(train, evals, flags, rows[["step", "kind"]], events, starts[-1] if starts else {}, notes)


def _part(rows: pd.DataFrame, kind: bool) -> pd.DataFrame:
    """The rows of one kind, without the columns that kind never fills."""
    part = rows[rows["kind"] == kind].drop(columns="kind").reset_index(drop=True)
    keep = [c for c in part.columns if c == "step" or part[c].notna().any()]
    return part[keep]


# -------------------------------------------------------------------------------------------- fast path
def _fast_columns(raw: bytes):
    """Parse a clean log without a Python object per record, or return None to take the tolerant path.

    Clean means: UTF-8 text, every metric line one flat JSON object (exactly one ``{`` and ``}``, no
    arrays), ``\\n`` line ends, no blank lines, a final newline. Event lines (which hold nested config) are
    cut out and parsed one by one. Then ``"key": value, ...`` becomes the CSV row ``"key",value,...``
    (``:`` -> ``,``, braces dropped), pandas parses it in C, and each (key column, value column) pair is
    spread into per-key arrays -- so any key order and any mix of keys per line works.
    """
    import json

    if not raw.endswith(b"\n") or b"\0" in raw or b"\r" in raw or b"\n\n" in raw or raw.startswith(b"\n"):
        return None
    events, pieces, start = [], [], 0
    position = raw.find(b'"event"')
    while position != -1:
        line_start = raw.rfind(b"\n", 0, position) + 1
        line_end = raw.find(b"\n", position) + 1
        try:
            event = json.loads(raw[line_start:line_end])
        except ValueError:
            return None
        if not isinstance(event, dict) or "event" not in event or len(events) > 10_000:
            return None
        events.append(event)
        pieces.append(raw[start:line_start])
        start = line_end
        position = raw.find(b'"event"', line_end)
    body = b"".join(pieces) + raw[start:] if pieces else raw
    if not body:
        return {}, events, []
    octets = np.frombuffer(body, np.uint8)
    lines, opening, closing, colons, brackets = (int(np.count_nonzero(octets == ord(c))) for c in "\n{}:[")
    if not (body.startswith(b"{") and body.endswith(b"}\n") and opening == lines == closing and not brackets):
        return None
    try:
        width = body[:body.index(b"\n")].count(b":") * 2 + 2  # a guess for the widest row; pandas widens
        table = pd.read_csv(io.BytesIO(body.translate(_COLON_TO_COMMA, b"{}")), header=None, sep=",",
                            quotechar='"', escapechar="\\", skipinitialspace=True, low_memory=False,
                            dtype={j: "category" for j in range(0, 4 * width, 2)})
    except (UnicodeDecodeError, ValueError, pd.errors.ParserError):  # not UTF-8, or rows pandas cannot split
        return None
    pairs = int(sum(table[j].notna().sum() for j in range(0, table.shape[1], 2)))
    if len(table) != lines or table.shape[1] % 2 or pairs != colons:
        return None  # something did not split as flat "key": value pairs (a ':' inside a string, say)
    columns: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for j in range(0, table.shape[1], 2):
        names, values = table[j], table[j + 1]
        if not isinstance(names.dtype, pd.CategoricalDtype):
            return None
        if not pd.api.types.is_numeric_dtype(values):
            return None  # text that is not a number: the tolerant path tells unreadable values from NaN
        numbers = values.to_numpy(dtype=float)
        codes = names.cat.codes.to_numpy()
        for code, name in enumerate(names.cat.categories):
            where = codes == code
            if name not in columns:
                columns[name] = (np.full(lines, np.nan), np.zeros(lines, bool))
            if columns[name][1][where].any():
                return None  # a key twice in one record
            columns[name][0][where] = numbers[where]
            columns[name][1][where] = True  # the key is there even when its value read as NaN
    return columns, events, []


_COLON_TO_COMMA = bytes.maketrans(b":", b",")
