"""``clinic diagnose``: name what is wrong with a run from its metrics log -- ours, or another tool's.

Our ``metrics.jsonl`` is read as it always was; a TensorBoard folder, a Hugging Face ``trainer_state.json``
or a CSV is read by :mod:`chapters.records.formats` into the same records, and stderr says which format was
read and which keys were renamed. ``--follow`` watches a growing ``metrics.jsonl`` only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from chapters.cli.args import path_text, positive_float
from chapters.errors import MetricsLogError, UsageError
from chapters.records.formats.detect import add_format_options, detect
from chapters.records.jsonl import LOG_NAME


def add_parser(verbs) -> None:
    parser = verbs.add_parser("diagnose", help="diagnose a run from its metrics.jsonl (or a run directory)")
    parser.add_argument("path", metavar="PATH", type=path_text, help="a metrics.jsonl or a run directory holding one")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of the report")
    add_format_options(parser)
    parser.add_argument("--follow", action="store_true",
                        help="watch a growing log and print findings as they appear (ends at run_end)")
    parser.add_argument("--idle-timeout", type=positive_float, metavar="SECONDS",
                        help="with --follow: stop after this long without a new record (default: never)")
    parser.set_defaults(run=run)


def run(args) -> int:
    from chapters.doctor import diagnose_run
    from chapters.doctor.report import format_finding, format_report
    from chapters.records.formats.detect import describe, load

    if args.follow:
        from chapters.doctor.live import follow

        path = Path(args.path)
        if args.format not in ("auto", "jsonl") or (path.exists() and detect_quietly(path) not in (None, "jsonl")):
            raise UsageError(f"--follow watches a growing {LOG_NAME} only; diagnose {path} without --follow")
        # A directory holds the log; so will a path that does not exist yet and has no file suffix.
        if path.is_dir() or (not path.exists() and not path.suffix):
            path = path / LOG_NAME
        if path.exists() and not path.is_file():
            raise UsageError(f"{path} is not a file")

        def show(diagnosis, new):
            for finding in new:
                if args.json:
                    print(json.dumps(finding.to_json()), flush=True)
                else:
                    print(format_finding(diagnosis.findings.index(finding) + 1, finding), flush=True)

        try:
            follow(path, show, idle_timeout=args.idle_timeout)
        except MetricsLogError as err:
            raise UsageError(err) from None
        return 0
    try:
        run_log, source = load(args.path, args.format, args.run_name)
        if source.foreign is not None:
            sys.stderr.write(f"clinic diagnose: {describe(source)}\n")
        diagnosis = diagnose_run(run_log)
    except MetricsLogError as err:
        raise UsageError(err) from None
    except OSError as err:
        raise UsageError(f"cannot read {args.path}: {err.strerror}") from None
    if args.json:
        print(json.dumps(diagnosis.to_json()))
        for note in diagnosis.notes:  # stdout holds exactly one JSON document
            sys.stderr.write(f"clinic diagnose: note: {note}\n")
    else:
        print(format_report(diagnosis))
    return 0


def detect_quietly(path: Path) -> str | None:
    """The format at an existing ``path``, or None when it holds nothing recognisable (yet)."""
    try:
        return detect(path)
    except MetricsLogError:
        return None
