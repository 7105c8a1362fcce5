"""The record layer, at the bottom of the course: what a run writes and the one way to read it back.

* :mod:`chapters.records.jsonl` -- ``metrics.jsonl``: the writer (``JsonlLogger``), the ``run_start``
  event, and the tolerant line reader (``read_metrics_log``);
* :mod:`chapters.records.runlog` -- :class:`~chapters.records.runlog.RunLog`, the one reader every tool
  uses (doctor, plots, scenarios, graders, notebooks): pandas frames, one rule for resumed runs, one answer
  to "which steps were non-finite";
* :mod:`chapters.records.fast_path` -- how ``RunLog`` reads a million clean records in about two seconds;
* :mod:`chapters.records.formats` -- the logs other tools write (TensorBoard, the Hugging Face Trainer,
  CSV), read into the same records, so ``RunLog`` never knows which tool wrote a run.

The record format itself is the contract in ``docs/jsonl-contract.md``. The package imports nothing here,
so writing a log (``clinic train``) does not pay for pandas.
"""
