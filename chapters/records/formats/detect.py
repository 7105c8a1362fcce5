"""Which tool wrote this run? Look at the path, pick the reader, say what was read.

Detection looks for each format's own file, most informative first: our ``metrics.jsonl`` (the whole
contract), a Hugging Face ``trainer_state.json`` (train and eval in one file), a CSV (Lightning's
``metrics.csv``), then TensorBoard event files anywhere below. A run folder often holds more than one --
our runs write JSONL and TensorBoard, the HF Trainer writes its state and TensorBoard -- and the richer
one wins; ``--format`` picks another.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from chapters.errors import MetricsLogError
from chapters.records.jsonl import LOG_NAME
from chapters.records.formats import ForeignRun, csv_log, hf_trainer, tensorboard

READERS = {"tensorboard": tensorboard, "hf": hf_trainer, "csv": csv_log}
FORMATS = ("auto", "jsonl", *READERS)


def detect(path: Path) -> str:
    """The format of the run at ``path`` (a file or a folder); ``MetricsLogError`` when none is there."""
    path = Path(path)
    if not path.exists():
        raise MetricsLogError(f"{path} not found")
    if path.is_file():
        name = path.name.lower()
        if name.endswith(".csv"):
            return "csv"
        if "tfevents" in name:
            return "tensorboard"
        if name.endswith(".json"):  # trainer_state.json, or a copy of it under another name
            return "hf"
        return "jsonl"  # our reader says clearly what is wrong with a file that is no log at all
    if (path / LOG_NAME).is_file():
        return "jsonl"
    if hf_trainer.find_state(path) is not None:
        return "hf"
    if csv_log.find_csv(path) is not None:
        return "csv"
    if tensorboard.list_runs(path):
        return "tensorboard"
    raise MetricsLogError(f"{path} holds no {LOG_NAME}, nor another tool's run log ({hf_trainer.STATE_FILE}, "
                          f"{csv_log.LIGHTNING_FILE}, TensorBoard event files)")


@dataclass
class Source:
    """The format chosen and, for a foreign one, what its reader found (None for our own JSONL)."""

    format: str
    foreign: ForeignRun | None


def open_run(path, format: str = "auto", run: str | None = None) -> Source:
    """Read the run at ``path`` as ``format`` (``auto``: detect it). Our JSONL is left to its own reader."""
    if format not in FORMATS:
        raise MetricsLogError(f"unknown format {format!r} (accepted: {', '.join(FORMATS)})")
    chosen = detect(path) if format == "auto" else format
    if run is not None and chosen != "tensorboard":
        raise MetricsLogError(f"--run chooses among TensorBoard runs, but {path} was read as {chosen}")
    if chosen == "jsonl":
        return Source("jsonl", None)
    foreign = READERS[chosen].read(Path(path), run)
    if not (foreign.columns["step"][1].any() if foreign.columns is not None else foreign.metrics):
        raise MetricsLogError(f"{foreign.source}: read as {chosen}, but it holds no metric with a step")
    return Source(chosen, foreign)


def load(path, format: str = "auto", run: str | None = None):
    """``(RunLog, Source)``: the run at ``path`` in any format, read into the course's one reader."""
    from chapters.records.runlog import RunLog, build_run  # pandas: paid only by the verbs that read a run

    source = open_run(path, format, run)
    foreign = source.foreign
    if foreign is None:
        return RunLog.load(path), source
    if foreign.columns is not None:
        run_log = build_run(foreign.columns, foreign.events, list(foreign.notes), foreign.source)
    else:
        run_log = RunLog.from_records(foreign.metrics, foreign.events)
        run_log.notes[:0] = foreign.notes
        run_log.path = foreign.source
    return run_log, source


def describe(source: Source) -> str:
    """One line for stderr: which reader read what, and which keys it renamed."""
    foreign = source.foreign
    return f"read {foreign.source} as {source.format}: {foreign.description}"


def add_format_options(parser) -> None:
    """``--format`` and ``--run``, shared by the verbs that read a run (diagnose, plot)."""
    parser.add_argument("--format", choices=FORMATS, default="auto",
                        help="the log's format (default: auto, detected from the files present)")
    parser.add_argument("--run", dest="run_name", metavar="NAME",  # args.run is the verb's function
                        help="with several TensorBoard runs in one folder: the one to read (its sub-folder)")
