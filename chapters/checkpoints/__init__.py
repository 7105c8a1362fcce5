"""Checkpoints you can trust.

A checkpoint is only useful if, on the day you need it, it (1) exists, (2) is complete, (3) is the one you
meant to keep and (4) puts the run back exactly where it was. Each module here handles one of those:

* :mod:`~chapters.checkpoints.atomic` -- a file is either the old version or the new one, never half of each;
* :mod:`~chapters.checkpoints.keeper` -- which files to keep (the K best by a metric, plus the latest), with
  the ranking persisted next to them so a resumed run keeps the same K;
* :mod:`~chapters.checkpoints.verify` -- loading that checks before it trusts: hash, safe unpickling, strict
  keys, one forward pass, and a fallback to the newest good file;
* :mod:`~chapters.checkpoints.checkpointer` -- the training-loop callback and ``resume``;
* :mod:`~chapters.checkpoints.course_text_bugs` -- the course text's versions, with their bugs, to study.
"""
