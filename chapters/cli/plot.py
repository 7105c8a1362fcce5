"""``clinic plot``: draw a run's metrics.jsonl as one PNG (loss, lr, grad norm, throughput, memory)."""

from __future__ import annotations

import sys
from pathlib import Path


def add_parser(verbs) -> None:
    parser = verbs.add_parser("plot", help="draw a run's metrics as one PNG")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory (or a metrics.jsonl file)")
    parser.add_argument("-o", "--output", metavar="PNG", help="output file (default: RUN_DIR/plot.png)")
    parser.set_defaults(run=run)


def run(args) -> int:
    from chapters.cli import UsageError
    from chapters.logging_levels.level3_jsonl import MetricsLogError, find_log, read_metrics_log
    from chapters.plots import plot_run

    try:
        log_path = find_log(args.run_dir)
        problems = read_metrics_log(log_path).problems
    except MetricsLogError as err:
        raise UsageError(err) from None
    for problem in problems:  # plotted without them; say which lines were skipped
        sys.stderr.write(f"clinic plot: warning: {log_path}: {problem} (skipped)\n")
    output = Path(args.output) if args.output else log_path.parent / "plot.png"
    try:
        plot_run(log_path, output)
    except OSError as err:
        raise UsageError(f"cannot write {output}: {err.strerror}") from None
    print(f"wrote {output}")
    return 0
