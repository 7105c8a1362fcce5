"""nbgrader's configuration for this course; the course directory is the repository root.

Run nbgrader from the repository root: ``solutions/`` holds the source notebooks, ``exercises/`` the
release notebooks learners get (generate them with ``clinic course release``, which wraps
``nbgrader generate_assignment``). Submissions for ``nbgrader autograde`` go in ``submitted/`` as usual.
"""

c = get_config()  # noqa: F821 (nbgrader defines it when it loads this file)
c.CourseDirectory.root = "."
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"

# The stub learners see in place of each solution region: it fails with a hint instead of a bare error.
c.ClearSolutions.code_stub = {
    "python": '# YOUR CODE HERE\nraise NotImplementedError("replace this line with your answer (see the instructions above)")'
}
# Test cells run the course's checks; a learner's notebook must never hide their failures by timing out silently.
c.ExecutePreprocessor.timeout = 180
