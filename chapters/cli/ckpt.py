"""``clinic ckpt list D`` and ``clinic ckpt verify D``: what is in a checkpoint directory, and can I trust it."""

from __future__ import annotations

import sys
from pathlib import Path

from chapters.checkpoints.keeper import TopKKeeper, read_index
from chapters.checkpoints.verify import candidates, search, verify_file
from chapters.cli.args import path_text
from chapters.errors import CheckpointError, CheckpointIndexError, UsageError


def add_parser(verbs) -> None:
    parser = verbs.add_parser("ckpt", help="list or verify the checkpoints in a directory")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(parser))
    for name, help_text in (("list", "table of checkpoints: step, metric, rank, size, verified"),
                            ("verify", "exit 0 and name the newest checkpoint that passes every check, 1 if none")):
        action = actions.add_parser(name, help=help_text)
        action.add_argument("directory", metavar="D", type=path_text, help="checkpoint directory (the --ckpt-dir of clinic train)")
    parser.set_defaults(run=run)


def run(args) -> int:

    directory = Path(args.directory)
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory")
    return verify(directory) if args.action == "verify" else list_checkpoints(directory)


def verify(directory: Path) -> int:
    found, skipped = search(directory)
    for problem in skipped:
        sys.stderr.write(f"bad checkpoint: {problem}\n")
    if found is None:
        print(f"no verified checkpoint in {directory}")
        return 1
    print(f"verified: {found.path} (step {found.step})")
    return 0


def list_checkpoints(directory: Path) -> int:
    try:
        index = read_index(directory)
    except CheckpointIndexError as err:
        sys.stderr.write(f"{err}; listing the files without it\n")
        index = None
    metric = index["metric"] if index else "metric"
    ranks = {}
    if index:
        keeper = TopKKeeper(index["top_k"], index["metric"], index["mode"])
        keeper.load(directory)
        ranks = {entry.step: rank for rank, entry in enumerate(keeper.best()[: keeper.top_k], start=1)}
    rows = []
    for path, step, sha256 in sorted(candidates(directory), key=lambda row: row[1]):
        entry = next((e for e in index["checkpoints"] if e["step"] == step), {}) if index else {}
        try:
            verify_file(path, sha256)
            verified = "yes"
        except CheckpointError:
            verified = "NO"
        value = entry.get("metric")
        rank = str(ranks[step]) if step in ranks else ""
        if index and step == index["latest"]:
            rank = f"{rank} latest".strip()
        size = f"{path.stat().st_size / 2**20:.2f} MiB" if path.exists() else "missing"
        rows.append((str(step), "" if value is None else f"{value:.4f}", rank, size, verified))
    if not rows:
        print(f"no checkpoints in {directory}")
        return 0
    header = ("step", metric, "rank", "size", "verified")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return 0
