"""Memory you can predict: where the bytes of a training step go, and how to check the arithmetic.

:mod:`~chapters.memory.estimator` derives the peak from the architecture; :mod:`~chapters.memory.measure`
measures it; :mod:`~chapters.memory.course_text_formula` is the course text's formula, kept for comparison.
"""
