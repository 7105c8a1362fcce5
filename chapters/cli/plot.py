"""``clinic plot``: draw a run's metrics as one PNG (loss, lr, grad norm, throughput, memory).

The run is our ``metrics.jsonl`` or another tool's log (TensorBoard, a Hugging Face ``trainer_state.json``,
a CSV), read by :mod:`chapters.records.formats` into the same records; stderr says which.
"""

from __future__ import annotations

import sys
from pathlib import Path

from chapters.cli.args import path_text
from chapters.errors import MetricsLogError, UsageError
from chapters.records.formats.detect import add_format_options


def add_parser(verbs) -> None:
    parser = verbs.add_parser("plot", help="draw a run's metrics as one PNG")
    parser.add_argument("run_dir", metavar="RUN_DIR", type=path_text, help="a run directory (or a metrics.jsonl file)")
    parser.add_argument("-o", "--output", metavar="PNG",
                        help="output file (.png, .pdf, .svg ...) or an existing directory (default: RUN_DIR/plot.png)")
    add_format_options(parser)
    parser.set_defaults(run=run)


def run(args) -> int:
    from chapters.plots import plot_run
    from chapters.records.formats.detect import describe, load

    try:
        log, source = load(args.run_dir, args.format, args.run_name)
        log_path = log.path  # the file (or, for TensorBoard, the folder) the reader read
        output = output_path(args.output, log_path)
    except OSError as err:
        raise UsageError(f"cannot read {args.run_dir}: {err.strerror}") from None
    except MetricsLogError as err:
        raise UsageError(err) from None
    if source.foreign is not None:
        sys.stderr.write(f"clinic plot: {describe(source)}\n")
    for problem in log.skipped_lines:  # plotted without them; say which lines were skipped
        sys.stderr.write(f"clinic plot: warning: {log_path}: {problem} (skipped)\n")
    try:
        plot_run(log, output)
    except OSError as err:
        raise UsageError(f"cannot write {output}: {err.strerror}") from None
    print(f"wrote {output}")
    return 0


def output_path(requested: str | None, log_path: Path) -> Path:
    """Where the figure goes: ``-o`` as given, ``DIR/plot.png`` for a directory, ``plot.png`` beside the log
    by default. Refused (exit 2): a format matplotlib cannot write, and the log itself."""
    from matplotlib.figure import Figure


    if requested is None:  # beside the log; inside a log folder (TensorBoard's) read as a whole
        return (log_path if log_path.is_dir() else log_path.parent) / "plot.png"
    if not requested.strip():
        raise UsageError("-o: an empty path is not allowed")
    output = Path(requested)
    if output.is_dir() or requested.endswith(("/", "\\")):
        output = output / "plot.png"
    formats = Figure().canvas.get_supported_filetypes()
    extension = output.suffix.lower().lstrip(".")
    if extension not in formats:
        raise UsageError(f"-o {requested}: unsupported file type {output.suffix or '(none)'!r} "
                         f"(accepted: {', '.join('.' + name for name in sorted(formats))})")
    if output.exists() and output.resolve() == log_path.resolve():
        raise UsageError(f"-o {requested} is the log being plotted; name an image file")
    return output
