"""``clinic compare BASELINE RUN``: what differs between two course runs, then what each came to.

The tuning loop of :mod:`chapters.experiments` on the command line: the settings that differ are read
from the two logs' ``run_start`` configs and named first, with a verdict on what the comparison can tell
(one change, the seed only, several changes); then the outcomes side by side. ``--log FILE`` appends the
comparison to an experiment log (JSON Lines, never rewritten), ``--note`` says why you tried it.
"""

from __future__ import annotations

import json

from chapters.cli.args import path_text
from chapters.errors import MetricsLogError, UsageError
from chapters.experiments import ExperimentLog, compare


def add_parser(verbs) -> None:
    parser = verbs.add_parser("compare", help="name what differs between a run and its baseline, then compare outcomes")
    parser.add_argument("baseline", metavar="BASELINE", type=path_text, help="the baseline run (directory or metrics.jsonl)")
    parser.add_argument("run_dir", metavar="RUN", type=path_text, help="the run that changed something")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of the table")
    parser.add_argument("--log", metavar="FILE", type=path_text, help="also append the comparison to this experiment log")
    parser.add_argument("--note", default="", help="with --log: why you tried this change")
    parser.set_defaults(run=run)


def run(args) -> int:
    if args.note and not args.log:
        raise UsageError("--note goes into the experiment log: add --log FILE")
    try:
        comparison = compare(args.baseline, args.run_dir)
    except MetricsLogError as err:
        raise UsageError(err) from None
    if args.log:
        ExperimentLog(args.log).append(comparison, note=args.note)
    if args.json:
        print(json.dumps(comparison.to_json()))
    else:
        print(comparison.describe())
    return 0
