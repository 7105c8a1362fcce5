"""``clinic replay RUN_DIR``: re-run the first non-finite step of a run and name the tensor that broke."""

from __future__ import annotations

from chapters.cli.args import path_text
from chapters.errors import ForensicsError, UsageError
from chapters.forensics import replay


def add_parser(verbs) -> None:
    parser = verbs.add_parser("replay", help="replay a run's first NaN step and find the first non-finite tensor")
    parser.add_argument("run_dir", metavar="RUN_DIR", type=path_text, help="a run directory holding nan_forensics.pt")
    parser.set_defaults(run=run)


def run(args) -> int:

    try:
        print(replay(args.run_dir))
    except ForensicsError as err:
        raise UsageError(err) from None
    return 0
