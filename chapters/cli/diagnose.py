"""``clinic diagnose``: name what is wrong with a run from its metrics log."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from chapters.cli.args import path_text, positive_float
from chapters.doctor import diagnose
from chapters.doctor.live import follow
from chapters.doctor.report import format_finding, format_report
from chapters.errors import MetricsLogError, UsageError
from chapters.records.jsonl import LOG_NAME


def add_parser(verbs) -> None:
    parser = verbs.add_parser("diagnose", help="diagnose a run from its metrics.jsonl (or a run directory)")
    parser.add_argument("path", metavar="PATH", type=path_text, help="a metrics.jsonl or a run directory holding one")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of the report")
    parser.add_argument("--follow", action="store_true",
                        help="watch a growing log and print findings as they appear (ends at run_end)")
    parser.add_argument("--idle-timeout", type=positive_float, metavar="SECONDS",
                        help="with --follow: stop after this long without a new record (default: never)")
    parser.set_defaults(run=run)


def run(args) -> int:

    if args.follow:

        path = Path(args.path)
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
        diagnosis = diagnose(args.path)
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
