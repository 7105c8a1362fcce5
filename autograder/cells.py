"""``check`` as a notebook's test cell calls it: the verdict, and a short PASS line when it passes.

A test cell that fails shows the check's message (an ``AssertionError``, as nbgrader expects); one that passes
used to show nothing, which a learner cannot tell from a cell that never ran. This wrapper runs the same
:func:`autograder.checks.check` and then prints ``PASS  <check>  (N points)``, the points read from the
assignment's release notebook (the test cell that calls this check). The instructor's ``clinic grade`` does
not go through here: it reads the test cells and runs the checks itself.
"""

from __future__ import annotations

import functools
import json


def check(name: str, *learner_objects) -> None:
    from autograder import checks  # looked up at call time, so a tool that replaces checks.check is obeyed

    checks.check(name, *learner_objects)
    points = cell_points(name)
    print(f"PASS  {name}" + (f"  ({points:g} points)" if points is not None else ""))


@functools.cache
def cell_points(name: str) -> float | None:
    """The points of the release test cell that runs check ``name`` (hidden variants: their public twin's)."""
    from autograder.course import Course, CourseError

    assignment, public = name.split(".", 1)[0], name.removesuffix("_hidden")
    try:
        notebook = json.loads(Course.find().release_path(assignment).read_text(encoding="utf-8"))
    except (CourseError, OSError, ValueError):
        return None  # no course checkout here: the verdict stands, without its points
    for cell in notebook.get("cells", []):
        grading = cell.get("metadata", {}).get("nbgrader", {})
        if grading.get("grade") and f'"{public}"' in "".join(cell.get("source", [])):
            return float(grading.get("points", 0))
    return None
