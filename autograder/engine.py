"""Grade one submission: plan the run, execute it in the sandbox, judge what came back.

This is the whole grading path, shared by ``clinic grade`` (instructors: every test, hidden ones too) and
``clinic check`` (learners: public tests only), so the two can never disagree on a public test.
"""

from __future__ import annotations

import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from autograder import checks, course_answers
from autograder.course import Course
from autograder.notebook import NotebookError, Problem, plan, read
from autograder.sandbox import SandboxLimits, remove_tree, run_child


# Preparing and judging seed torch's global generator (the course's models draw their weights from it):
# submissions graded in threads of one process take turns, or one's seed would move the other's draws.
SEEDED_WORK = threading.RLock()


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
                   public_only: bool = False, notebook=None) -> SubmissionResult:
    """Grade one notebook (``notebook``: already read, e.g. by the batch's safe reader)."""
    source, release = course.source_notebook(assignment), course.release_notebook(assignment)
    try:
        submission = notebook if notebook is not None else read(notebook_path)
        grading_plan = plan(source, release, submission, public_only)
    except NotebookError as err:
        return unusable(course, assignment, str(err), public_only)
    sandbox = Path(tempfile.mkdtemp(prefix="clinic-grade-"))
    try:
        with SEEDED_WORK:
            steps, calls = _prepare(grading_plan, sandbox)
        measured: dict[int, list] = {}
        run = run_child(steps, sandbox, limits, lambda number: _measure(calls, number, measured),
                        lambda number, request: _answer(calls, number, request))
        outcomes = _outcomes(run.events)
        borrowed = course_answers.used(assignment, submission)
        # Judged while the sandbox still exists: a check reads the files the learner's code wrote there.
        with SEEDED_WORK:
            results = [_judge(problem, calls, outcomes, measured, borrowed) for problem in grading_plan.problems]
    finally:
        remove_tree(sandbox)
    status = {"finished": "graded", "timeout": "timeout"}.get(run.ended, "crashed")
    notes = grading_plan.notes + ([] if run.ended == "finished" else [f"the run ended early: {run.ended}"])
    notes += [course_answers.note(symbol) for symbol in sorted(set().union(*borrowed.values()))]
    confinement = next((event["confinement"] for event in run.events if "confinement" in event), [])
    return SubmissionResult(status, results, notes, confinement if isinstance(confinement, list) else [],
                            run.output)


@dataclass(frozen=True)
class PreparedCall:
    """One test call as the grader knows it; the child gets only its number, probe and folder."""

    problem: str
    check: checks.Check
    seed: int
    folder: Path


def _prepare(grading_plan, sandbox: Path) -> tuple[list[dict], list[PreparedCall]]:
    """The child's steps, and every check's inputs written into a neutral folder ``case-N`` of the sandbox."""
    steps, calls = [], []
    for step in grading_plan.steps:
        if not isinstance(step, Problem):
            steps.append({"code": step})
            continue
        child_calls = []
        for call in step.calls:
            check = checks.lookup(call.check)
            folder = sandbox / f"case-{len(calls) + 1}"
            folder.mkdir()
            prepared = PreparedCall(step.grade_id, check, check.draw_seed(), folder)
            checks.prepare(check, prepared.seed, folder)
            calls.append(prepared)
            child_calls.append({"call": len(calls), "probe": check.probe, "args": list(call.args),
                                "folder": folder.name})
        steps.append({"calls": child_calls})
    return steps, calls


def _measure(calls: list[PreparedCall], number: int | None, measured: dict[int, list]) -> bool:
    """A process of the child stopped while call ``number`` ran: measure its files now, then let it go on.

    False (kill it) when that check measures nothing: a stop is then the moment the probe wants a crash."""
    if not isinstance(number, int) or not 1 <= number <= len(calls) or calls[number - 1].check.measure is None:
        return False
    call = calls[number - 1]
    with SEEDED_WORK:
        measured.setdefault(number, []).append(call.check.measure(call.folder))
    return True


def _answer(calls: list[PreparedCall], number: int | None, request) -> object:
    """A probe's question during call ``number``, answered from that call's seed (``probes.ask``)."""
    if not isinstance(number, int) or not 1 <= number <= len(calls):
        raise ValueError("no such call")
    call = calls[number - 1]
    with SEEDED_WORK:
        return checks.answer(call.check, call.seed, request)


def _outcomes(events: list[dict]) -> dict[int, dict]:
    """The first report of each call (a forged duplicate written later changes nothing)."""
    outcomes = {}
    for event in events:
        number = event.get("call")
        if isinstance(number, int) and not isinstance(number, bool) and number not in outcomes:
            outcomes[number] = event
    return outcomes


def _judge(problem: Problem, calls: list[PreparedCall], outcomes: dict[int, dict], measured: dict[int, list],
           borrowed: dict[str, set]) -> ProblemResult:
    """Verdicts are given here, in the grader's own process, from the data the child reported."""
    passed_all, messages, hidden = True, [], 0
    for number, call in enumerate(calls, 1):
        if call.problem != problem.grade_id:
            continue
        check = call.check
        event = outcomes.get(number)
        try:
            if borrowed.get(check.probe):
                raise checks.CheckFailed(course_answers.note(sorted(borrowed[check.probe])[0]))
            if event is None:
                raise checks.CheckFailed("the check never ran (the notebook stopped before this cell)")
            if event.get("not_implemented") is True:
                raise checks.not_implemented(check)
            if "observation" not in event:
                raise checks.CheckFailed(str(event.get("error"))[:500])
            origins = event.get("origins")
            for origin in origins if isinstance(origins, list) else []:
                if not course_answers.defined_by_learner(origin):
                    raise checks.CheckFailed(course_answers.note(f"code ({origin})"))
            observation = checks.with_measurements(check, event["observation"], measured.get(number, []))
            with checks.working_directory(call.folder):
                checks.judge(check, call.seed, observation)
            verdict = "ok"
        except checks.CheckFailed as failure:
            passed_all, verdict = False, str(failure)
        if check.hidden:
            hidden += 1
        else:
            messages.append(f"{check.name}: {verdict}")
    points = problem.points if passed_all else 0.0
    return ProblemResult(problem.grade_id, points, problem.points, messages, hidden)


def unusable(course: Course, assignment: str, why: str, public_only: bool = False) -> SubmissionResult:
    """A submission that is not a readable notebook: every problem scores zero, with the reason."""
    release = course.release_notebook(assignment)
    problems = plan(course.source_notebook(assignment), release, release, public_only).problems
    return SubmissionResult("invalid", [ProblemResult(problem.grade_id, 0.0, problem.points, [why], 0)
                                        for problem in problems], [why])
