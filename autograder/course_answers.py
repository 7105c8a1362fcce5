"""The course's own implementations of what an exercise asks: using one in an answer scores zero.

The lesson code in ``chapters/`` must stay importable by a submission (setup cells use it), and it holds
the course's version of several answers -- the JSONL logger, the data check, the shuffled loader, the
memory estimator, the top-K keeper. Handing one of them in is not solving the exercise. The grader reads the
submission's answer cells (never runs them) and looks for each listed name where it would be *used*: imported
from ``chapters``, reached as an attribute (``level3_jsonl.JsonlLogger``), or fetched with ``getattr(module,
"name")``. A learner's own class may share the name (``class JsonlLogger``): defining
a name is not using the course's. The policy is in ``docs/grading.md``.
"""

from __future__ import annotations

import ast

# probe (check without ``_hidden``) -> the course names that implement its answer
COURSE_ANSWERS: dict[str, tuple[str, ...]] = {
    "01_logging_levels.jsonl_logger": ("JsonlLogger",),
    "01_logging_levels.jsonl_crash": ("JsonlLogger",),
    "01_logging_levels.tensorboard": ("TensorBoardLogger",),
    "02_metrics.total_grad_norm": ("GradNormPerGroup",),
    "02_metrics.grad_norm_per_group": ("GradNormPerGroup",),
    "02_metrics.window_throughput": ("Throughput",),
    "03_nan.data_check": ("drop_unusable_batches",),
    # the doctor's periodicity statistic, or the doctor itself: the judge draws only logs it judges right
    "05_no_shuffle.is_epoch_periodic": ("epoch_shape", "diagnose", "diagnose_run"),
    "05_no_shuffle.shuffled_loader": ("make_loader",),
    "06_overfitting.early_stopping": ("EarlyStopping",),
    "06_overfitting.init_loss": ("check_init_loss",),
    "06_overfitting.overfit_one_batch": ("check_overfit_one_batch",),
    "07_oom.estimate": ("estimate_memory",),
    "07_oom.fits": ("estimate_memory", "largest_batch_within"),
    "07_oom.fix": ("estimate_memory", "largest_batch_within"),
    "08_checkpoints.topk": ("TopKKeeper", "Checkpointer"),
    "08_checkpoints.topk_properties": ("TopKKeeper", "Checkpointer"),
}


def used(assignment: str, notebook) -> dict[str, set[str]]:
    """``{probe: {course names the answer cells use}}`` for the checks of ``assignment``."""
    from autograder.notebook import answer_cells

    names = set()
    for cell in answer_cells(notebook):
        names |= _used_names(cell.source)
    found = {}
    for probe, symbols in COURSE_ANSWERS.items():
        if probe.startswith(f"{assignment}.") and names & set(symbols):
            found[probe] = names & set(symbols)
    return found


def note(symbol: str) -> str:
    return (f"the answer uses the course's own {symbol} from chapters/: write your own (this check scores 0; "
            "see docs/grading.md)")


def defined_by_learner(module: str | None) -> bool:
    """Whether a function or class handed to a check was defined outside the course package.

    The child reports the ``__module__`` of each function and class it passes to a probe; ``chapters.*``
    there means the object *is* the course's (``estimate_peak_bytes = estimate_memory``)."""
    return not (isinstance(module, str) and (module == "chapters" or module.startswith("chapters.")))


def _used_names(source: str) -> set[str]:
    """Course names an answer cell uses: imported from chapters, read as a name it does not define itself
    (the setup cells import some), reached as an attribute, or fetched with getattr."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()  # the cell fails in the child anyway
    read, defined, reached = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else defined).add(node.id)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("chapters"):
            reached.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Attribute):
            reached.add(node.attr)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)):
            reached.add(str(node.args[1].value))
    return (read - defined) | reached
