"""The course directory: where nbgrader's source (``solutions/``) and release (``exercises/``) live.

nbgrader is configured by ``nbgrader_config.py`` at the course root (the repository root), so plain
``nbgrader`` commands run from there work; ``clinic course release`` wraps ``nbgrader generate_assignment``
so the committed release notebooks are always nbgrader's own output.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from autograder.notebook import read
from chapters.errors import CourseError

ASSIGNMENTS = ["01_logging_levels", "02_metrics", "03_nan", "04_frozen_embedding", "05_no_shuffle",
               "06_overfitting", "07_oom", "08_checkpoints", "09_mystery_runs"]


@dataclass(frozen=True)
class Course:
    root: Path

    @classmethod
    def find(cls, root: Path | None = None) -> "Course":
        """The given root, else the checkout this package was installed from, else the working directory."""
        candidates = [root] if root else [Path(__file__).resolve().parents[1], Path.cwd()]
        for candidate in candidates:
            if (candidate / "solutions").is_dir() and (candidate / "nbgrader_config.py").is_file():
                return cls(candidate.resolve())
        raise CourseError(f"no course directory (with solutions/ and nbgrader_config.py) at {candidates[0]}")

    def assignments(self) -> list[str]:
        return [name for name in ASSIGNMENTS if (self.root / "solutions" / name).is_dir()]

    def _notebook(self, folder: str, assignment: str) -> Path:
        if assignment not in self.assignments():
            raise CourseError(f"unknown assignment {assignment!r} (have: {', '.join(self.assignments())})")
        return self.root / folder / assignment / f"{assignment}.ipynb"

    def source_path(self, assignment: str) -> Path:
        return self._notebook("solutions", assignment)

    def release_path(self, assignment: str) -> Path:
        return self._notebook("exercises", assignment)

    def source_notebook(self, assignment: str):
        return read(self.source_path(assignment))

    def release_notebook(self, assignment: str):
        return read(self.release_path(assignment))

    def nbgrader(self, release_dir: Path | None = None, db_url: str | None = None):
        """nbgrader's own API, configured by this course's ``nbgrader_config.py`` (in-process: no app startup).

        ``release_dir`` and ``db_url`` point elsewhere for throwaway runs (tests, drift checks).
        """
        from nbgrader.apps import NbGraderAPI
        from nbgrader.coursedir import CourseDirectory
        from traitlets.config.loader import PyFileConfigLoader

        config = PyFileConfigLoader("nbgrader_config.py", path=str(self.root)).load_config()
        config.CourseDirectory.root = str(self.root)
        if release_dir is not None:
            config.CourseDirectory.release_directory = str(release_dir)
        if db_url is not None:
            config.CourseDirectory.db_url = db_url
        config.Application.log_level = "WARN"
        return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)

    def generate_release(self, assignment: str, into: Path | None = None) -> Path:
        """Run nbgrader's ``generate_assignment`` and return the release notebook it wrote.

        With ``into``, the release is written under that folder instead of ``exercises/`` (the drift test
        compares the two). The gradebook is a throwaway file: releasing needs no course database.
        """
        self.source_path(assignment)  # validates the id
        release_dir = Path(into) if into else self.root / "exercises"
        with tempfile.TemporaryDirectory() as scratch:
            api = self.nbgrader(release_dir, f"sqlite:///{scratch}/gradebook.db")
            outcome = api.generate_assignment(assignment, force=True, create=True)
        if not outcome["success"]:
            last = (outcome.get("error") or outcome.get("log") or "").strip().splitlines()[-1:]
            raise CourseError(f"nbgrader generate_assignment {assignment} failed: {' '.join(last)}")
        return release_dir / assignment / f"{assignment}.ipynb"
