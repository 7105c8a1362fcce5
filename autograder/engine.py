"""Grade one submission: plan the run, execute it in the sandbox, judge what came back.

This is the whole grading path, shared by ``clinic grade`` (instructors: every test, hidden ones too) and
``clinic check`` (learners: public tests only), so the two can never disagree on a public test.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder import checks
from autograder.course import Course
from autograder.notebook import NotebookError, Problem, plan, read
from autograder.sandbox import SandboxLimits, run_child


@dataclass
class ProblemResult:
    grade_id: str
    score: float
    max_score: float
    messages: list[str]  # one per public check: "ok" or why it failed
    hidden_checks: int


@dataclass
class SubmissionResult:
    status: str  # graded | timeout | crashed | invalid
    problems: list[ProblemResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    confinement: list[str] = field(default_factory=list)
    output: str = ""

    @property
    def score(self) -> float:
        return sum(problem.score for problem in self.problems)


def grade_notebook(course: Course, assignment: str, notebook_path: Path, limits: SandboxLimits = SandboxLimits(),
                   public_only: bool = False) -> SubmissionResult:
    source, release = course.source_notebook(assignment), course.release_notebook(assignment)
    try:
        grading_plan = plan(source, release, read(notebook_path), public_only)
    except NotebookError as err:
        return unusable(course, assignment, str(err), public_only)
    seeds = {}
    steps = []
    for step in grading_plan.steps:
        if isinstance(step, Problem):
            calls = []
            for call in step.calls:
                seeds[(step.grade_id, call.check)] = seed = checks.lookup(call.check).draw_seed()
                calls.append({"check": call.check, "args": list(call.args), "seed": seed})
            steps.append({"problem": step.grade_id, "calls": calls})
        else:
            steps.append({"code": step})
    with tempfile.TemporaryDirectory(prefix="clinic-grade-") as sandbox:
        run = run_child(steps, Path(sandbox), limits)
        # Judged while the sandbox still exists: a check may read a file the learner's code wrote there.
        with checks.working_directory(Path(sandbox)):
            results = [_judge(problem, run.events, seeds) for problem in grading_plan.problems]
    status = {"finished": "graded", "timeout": "timeout"}.get(run.ended, "crashed")
    notes = grading_plan.notes + ([] if run.ended == "finished" else [f"the run ended early: {run.ended}"])
    confinement = next((event["confinement"] for event in run.events if "confinement" in event), [])
    return SubmissionResult(status, results, notes, confinement, run.output)


def _judge(problem: Problem, events: list[dict], seeds: dict) -> ProblemResult:
    """Verdicts are given here, in the grader's own process, from the data the child reported."""
    passed_all, messages, hidden = True, [], 0
    for call in problem.calls:
        check = checks.lookup(call.check)
        reported = [event for event in events
                    if event.get("problem") == problem.grade_id and event.get("check") == call.check]
        try:
            if not reported:
                raise checks.CheckFailed("the check never ran (the notebook stopped before this cell)")
            event = reported[-1]
            if "observation" not in event:
                raise checks.CheckFailed(str(event.get("error")))
            checks.judge(check, seeds[(problem.grade_id, call.check)], event["observation"])
            verdict = "ok"
        except checks.CheckFailed as failure:
            passed_all, verdict = False, str(failure)
        if check.hidden:
            hidden += 1
        else:
            messages.append(f"{call.check}: {verdict}")
    points = problem.points if passed_all else 0.0
    return ProblemResult(problem.grade_id, points, problem.points, messages, hidden)


def unusable(course: Course, assignment: str, why: str, public_only: bool = False) -> SubmissionResult:
    """A submission that is not a readable notebook: every problem scores zero, with the reason."""
    release = course.release_notebook(assignment)
    problems = plan(course.source_notebook(assignment), release, release, public_only).problems
    return SubmissionResult("invalid", [ProblemResult(problem.grade_id, 0.0, problem.points, [why], 0)
                                        for problem in problems], [why])
