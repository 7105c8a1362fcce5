"""CSV logs: Lightning's ``CSVLogger`` (``lightning_logs/version_N/metrics.csv``) and any CSV with a step column.

Lightning writes one row per ``log_metrics`` call, with a column for every key ever logged and empty cells
where a row did not log that key: training rows carry ``train_loss`` (or whatever ``self.log`` named it),
validation rows ``val_loss``, both ``epoch`` and ``step``. An empty cell means "not logged here"; a cell
reading ``nan`` means the value *was* NaN -- pandas would read both as NaN, so the cells are read as text
first and only non-empty ones become numbers. Any other CSV works the same way when it has a ``step``
column (or ``global_step``).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from chapters.errors import MetricsLogError
from chapters.records.formats import ForeignRun, Renamer, contract_name, run_start, split_by_kind

LIGHTNING_FILE = "metrics.csv"
NON_FINITE = ("nan", "-nan", "inf", "-inf", "+inf", "infinity", "-infinity")


def find_csv(path: Path) -> Path | None:
    """The CSV at ``path``, ``path/metrics.csv``, or the newest ``version_N/metrics.csv`` below ``path``."""
    path = Path(path)
    if path.is_file():
        return path
    if (path / LIGHTNING_FILE).is_file():
        return path / LIGHTNING_FILE
    versions = [file for file in path.glob("**/version_*/" + LIGHTNING_FILE) if file.parent.name[8:].isdigit()]
    return max(versions, key=lambda file: int(file.parent.name[8:])) if versions else None


def read(path: Path, run: str | None = None) -> ForeignRun:
    """The CSV's rows as contract records."""
    file = find_csv(path)
    if file is None:
        raise MetricsLogError(f"{path} holds no {LIGHTNING_FILE} (nor a version_N/ folder with one)")
    try:
        table = pd.read_csv(file, dtype=str, keep_default_na=False)
    except (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError) as err:
        raise MetricsLogError(f"{file}: not a readable CSV ({str(err).splitlines()[0]})") from None
    step_columns = [column for column in table.columns if contract_name(column) == "step"]
    if not step_columns:
        raise MetricsLogError(f"{file}: no 'step' column, so the rows cannot be placed on a time axis")
    rename = Renamer(table.columns)
    names = {column: rename(column) for column in table.columns}
    step_column = next(column for column in table.columns if names[column] == "step")
    numbers, readable = {}, {}
    for column in table.columns:
        text = table[column].str.strip()
        numbers[column] = pd.to_numeric(text.replace("", None), errors="coerce").to_numpy(float)
        # a number, or a spelling of NaN/Inf; an empty cell (not logged) or other text ("abc") is left out
        readable[column] = ~pd.isna(numbers[column]) | text.str.lower().isin(NON_FINITE).to_numpy()
    unreadable = sum(int(((table[c].str.strip() != "").to_numpy() & ~readable[c]).sum()) for c in table.columns)
    records, skipped = [run_start("csv")], 0
    for row, step in enumerate(numbers[step_column]):
        if not (readable[step_column][row] and math.isfinite(step)):
            skipped += 1
            continue
        values = {names[c]: float(numbers[c][row]) for c in table.columns if c != step_column and readable[c][row]}
        records += split_by_kind(int(step), values)
    notes = [f"{skipped} rows without a usable step were skipped"] if skipped else []
    if unreadable:
        notes.append(f"{unreadable} cells that are not numbers were skipped")
    return ForeignRun("csv", file, records, f"{len(table)} rows; {rename.describe()}", notes)
