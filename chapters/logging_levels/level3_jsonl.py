"""Level 3 -- JSON Lines: one JSON object per line, the format machines read.

Trade-offs: a plain-text file any tool can open (``pd.read_json(path, lines=True)``, ``jq``, ``grep``),
appendable, and robust to crashes -- a killed run loses at most the line being written. It is not a
dashboard; Level 2 (TensorBoard) is for looking, Level 3 is for analysing (the doctor reads it).

Unlike Levels 0-2, this level is not a lesson-only module: every tool of the course reads what it writes,
so the writer lives in the record layer at the bottom of the package, :mod:`chapters.records.jsonl`
(read it next), beside the one reader every tool shares, :class:`chapters.records.runlog.RunLog`. The
names are repeated here so the lesson's imports read in order: level 0, 1, 2, 3.
"""

from chapters.records.jsonl import LOG_NAME, JsonlLogger, read_metrics_log

__all__ = ["LOG_NAME", "JsonlLogger", "read_metrics_log"]
