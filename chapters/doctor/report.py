"""The human report: a one-line verdict, then each finding with its evidence, fix, experiment and lesson."""

from __future__ import annotations

from chapters.doctor.findings import Diagnosis, Finding


def verdict_line(diagnosis: Diagnosis) -> str:
    if not diagnosis.findings:
        return "verdict: healthy -- no rule fired"
    top = diagnosis.findings[0]
    others = len(diagnosis.findings) - 1
    more = f" (+{others} more finding{'s' * (others > 1)})" if others else ""
    return f"verdict: anomalous -- most likely {top.anomaly}{_at(top)}{more}"


def format_finding(rank: int, finding: Finding) -> str:
    lines = [f"{rank}. {finding.anomaly} (confidence {finding.confidence:.2f}){_at(finding)}",
             f"   evidence:   {finding.evidence}",
             f"   fix:        {finding.fix}"]
    if finding.experiment:
        lines.append(f"   confirm:    {finding.experiment}")
    if finding.lesson:
        lines.append(f"   read:       {finding.lesson}")
    return "\n".join(lines)


def format_report(diagnosis: Diagnosis) -> str:
    parts = [verdict_line(diagnosis)]
    parts += [format_finding(i, f) for i, f in enumerate(diagnosis.findings, 1)]
    parts += [f"note: {note}" for note in diagnosis.notes]
    return "\n".join(parts)


def _at(finding: Finding) -> str:
    return f" from step {finding.step}" if finding.step is not None else ""
