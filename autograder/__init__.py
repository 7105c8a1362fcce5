"""Grading for the course's nbgrader assignments (see autograder/README.md)."""
