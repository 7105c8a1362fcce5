"""The doctor on labelled logs from training code someone else wrote.

    python bench/doctor_outside.py FOLDER [FOLDER ...] [--visible yes] [--misses]
    python bench/doctor_outside.py bench/outside/*.tar.xz --visible yes     # the sets kept in the repository

Each FOLDER (or a ``.tar.xz`` archive of one, unpacked to a temporary folder) holds ``logs/<name>/metrics.jsonl``
(any log the JSONL contract allows) and ``labels.csv`` with at least the columns ``name`` and ``label`` (a label
of the vocabulary, or ``healthy``), optionally ``visible`` (``yes`` / ``ambiguous`` / ``no``: did the author,
reading the log with plain checks, see the fault in it? Left blank, or no such column: ``yes``; a healthy log
has no fault to hide and is always ``yes``, whatever its author wrote there).
Prints top-1 on the faulty logs and false alarms on the healthy ones, per label and per visibility, and how
often a finding with confidence >= 0.8 names the log's label (a finding on a healthy log is always wrong).

Why this exists beside ``bench/doctor_families.py``: the families were written by this project, so their
habits may have leaked into the rules however carefully they were held out. Logs written by somebody who
never read the rules -- another person, another team's trainer, a helper told not to look -- are the test a
user's run will set. Such a set steers the rules the moment its misses are read, so keep a fresh one back for
the final figure. The sets whose misses were read are kept in ``bench/outside/`` (``bench/outside/README.md``) as
regression guards: a rule change that loses one of their logs should say why.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tarfile
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chapters.doctor import diagnose  # noqa: E402
from chapters.errors import MetricsLogError  # noqa: E402

CONFIDENT = 0.8


def unpacked(paths: list[Path], scratch: Path) -> list[Path]:
    """The folders to score: each ``.tar.xz`` archive unpacked into ``scratch`` (one folder inside it, the
    set's name), every other path as it is."""
    folders = []
    for path in paths:
        if path.name.endswith(".tar.xz"):
            with tarfile.open(path) as archive:
                # The data filter (Python 3.10.12+): no absolute paths, no links out of the folder.
                safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                archive.extractall(scratch, **safe)
            folders.append(scratch / path.name[:-len(".tar.xz")])
        else:
            folders.append(path)
    return folders


def labelled(folder: Path) -> list[dict]:
    with open(folder / "labels.csv", newline="") as table:
        rows = []
        for row in csv.DictReader(table):
            if not (row.get("label") or "").strip():  # a stray line break inside an author's note
                print(f"doctor_outside: {folder.name}/labels.csv line {row['name']!r} has no label: "
                      "not scored", file=sys.stderr)
                continue
            rows.append(row)
    for row in rows:
        row["path"] = folder / "logs" / row["name"]
        row["set"] = folder.name  # names a miss: two sets may both hold a run called f_tp1
        row["visible"] = (row.get("visible") or "yes").strip()  # no column, or left blank: shown
        if row["label"].strip() == "healthy":
            row["visible"] = "yes"  # one author wrote "no" for every healthy run: a false alarm counts all the same
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description="score the doctor on labelled logs from outside code")
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--visible", default=None, help="only logs marked so (yes, ambiguous, no)")
    parser.add_argument("--misses", action="store_true", help="list every wrong top-1 and false alarm")
    args = parser.parse_args()
    scratch = tempfile.TemporaryDirectory()  # removed when the script ends
    try:
        rows = [row for folder in unpacked(args.folders, Path(scratch.name)) for row in labelled(folder)]
    except (OSError, KeyError, csv.Error, tarfile.TarError) as error:
        print(f"doctor_outside: cannot read the labels: {error}", file=sys.stderr)
        return 2
    for row in [row for row in rows if not row["path"].exists()]:
        # An author who deleted an unfinished run can leave its label behind; scored, it would read as a
        # healthy verdict (no log, no findings) and count for a healthy label.
        print(f"doctor_outside: {row['set']}/{row['name']} has a label but no log: not scored", file=sys.stderr)
        rows.remove(row)
    if args.visible:
        rows = [row for row in rows if row["visible"] == args.visible]
    per_label, alarms, confident, misses = defaultdict(Counter), Counter(), Counter(), []
    for row in rows:
        try:
            findings = diagnose(row["path"]).findings
        except MetricsLogError as error:  # an unusable log: no findings, named in the misses
            findings, row["error"] = [], str(error)
        got = findings[0].anomaly if findings else "healthy"
        want, shown = row["label"], row["visible"]
        if want == "healthy":
            alarms[shown, "runs"] += 1
            alarms[shown, got] += got != "healthy"
        else:
            per_label[want][shown, "runs"] += 1
            per_label[want][shown, "top1"] += got == want
            per_label[want][shown, "any"] += any(f.anomaly == want for f in findings)
        for finding in findings:
            if finding.confidence >= CONFIDENT:
                confident["all"] += 1
                confident["right"] += finding.anomaly == want
        if got != want:
            misses.append(f"{row['set']:4s} {row['name']:36s} {shown:9s} want {want:20s} got "
                          f"{', '.join(f.anomaly for f in findings) or 'healthy'} {row.get('error', '')}")
    for shown in ("yes", "ambiguous", "no"):
        faulty = [(label, counts) for label, counts in sorted(per_label.items()) if counts[shown, "runs"]]
        healthy = alarms[shown, "runs"]
        if not faulty and not healthy:
            continue
        right = sum(c[shown, "top1"] for _, c in faulty)
        total = sum(c[shown, "runs"] for _, c in faulty)
        wrong = sum(v for (s, key), v in alarms.items() if s == shown and key != "runs")
        print(f"\n## visible = {shown}: top-1 {right}/{total} = {right / max(total, 1):.2f}; "
              f"false alarms {wrong}/{healthy}")
        print("| label | runs | top-1 | any rank |\n|---|---|---|---|")
        for label, counts in faulty:
            print(f"| {label} | {counts[shown, 'runs']} | {counts[shown, 'top1']} | {counts[shown, 'any']} |")
        kinds = {key: v for (s, key), v in alarms.items() if s == shown and key != "runs" and v}
        print(f"| healthy (false alarms) | {healthy} | {wrong} {kinds or ''} | |")
    if confident["all"]:
        print(f"\ncalibration: findings with confidence >= {CONFIDENT}: {confident['right']}/{confident['all']} = "
              f"{confident['right'] / confident['all']:.2f} name the log's label")
    if args.misses:
        print("\n" + "\n".join(misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
