"""Per-student feedback as one HTML page: scores, public test results, notes. Hidden tests stay hidden.

A hidden check's *result* would leak its purpose ("fails on an empty loader"), so the page shows only how
many hidden checks a problem has, never which passed; the score of the problem still counts them.
"""

from __future__ import annotations

from html import escape
from pathlib import Path


def render(record: dict) -> str:
    total = sum(problem["score"] for problem in record["problems"])
    maximum = sum(problem["max_score"] for problem in record["problems"])
    rows = []
    for problem in record["problems"]:
        details = "".join(f"<li>{escape(message)}</li>" for message in problem["messages"])
        if problem["hidden_checks"]:
            details += f"<li>and {problem['hidden_checks']} hidden check(s), not shown</li>"
        rows.append(f"<tr><td>{escape(problem['grade_id'])}</td><td>{problem['score']:g} / {problem['max_score']:g}"
                    f"</td><td><ul>{details}</ul></td></tr>")
    notes = "".join(f"<li>{escape(note)}</li>" for note in record["notes"])
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{escape(record['assignment'])}: "
            f"{escape(record['student'])}</title></head><body>"
            f"<h1>{escape(record['assignment'])} &mdash; {escape(record['student'])}</h1>"
            f"<p>Score: <b>{total:g} / {maximum:g}</b> (status: {escape(record['status'])})</p>"
            f"<table border='1'><tr><th>problem</th><th>score</th><th>public tests</th></tr>{''.join(rows)}</table>"
            + (f"<h2>Notes</h2><ul>{notes}</ul>" if notes else "") + "</body></html>")


def write_feedback(record: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(record))
