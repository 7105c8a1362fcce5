"""Run a scenario's broken and fixed variants, write their artifacts, and judge them by their logs."""

from __future__ import annotations

import multiprocessing
import os
import resource
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import psutil
import torch

from chapters.core import distributed
from chapters.errors import ScenarioError
from chapters.records.jsonl import LOG_NAME
from chapters.scenarios import SCENARIOS
from chapters.records.runlog import RunLog
from chapters.scenarios.base import Options, RunPlan, execute, shows_symptom

VARIANTS = ("broken", "fixed")


@dataclass
class Outcome:
    """One row of ``clinic reproduce``'s table (and of its ``--json`` document)."""

    id: str
    cause: str | None
    device: str
    broken_symptom: bool | None  # None when the scenario was skipped
    fixed_symptom: bool | None
    seconds: float
    skipped: str | None = None  # why it could not run here

    @property
    def passed(self) -> bool:
        expected = SCENARIOS[self.id].EXPECT_SYMPTOM
        return self.skipped is not None or (self.broken_symptom == expected and self.fixed_symptom is False)


def plan_for(scenario_id: str, variant: str, options: Options) -> RunPlan:
    return getattr(SCENARIOS[scenario_id], variant)(options)


def monitoring(run_dir: Path) -> list:
    from chapters.monitoring import monitoring_callbacks

    return monitoring_callbacks(run_dir, levels=(2, 3))


def run_variant(scenario_id: str, variant: str, options: Options, run_dir: Path) -> RunLog:
    """One run into a fresh ``run_dir``, read back from its log; a failing run is a result, not an exception."""
    if run_dir.exists():
        shutil.rmtree(run_dir)  # the JSONL logger appends: stale records would mix into this run
    run_dir.mkdir(parents=True)
    plan = plan_for(scenario_id, variant, options)
    if plan.processes > 1:
        run_ranks(scenario_id, variant, options, run_dir, plan.processes)
    elif plan.isolated:
        run_isolated(scenario_id, variant, options, run_dir)
    else:
        try:
            execute(plan, run_dir, monitoring(run_dir))
        except Exception:  # noqa: BLE001 -- the run's failure is in its log (run_end status and error)
            pass
    if not (run_dir / LOG_NAME).is_file():  # it died before its logger opened (a child's error went to stderr)
        raise ScenarioError(f"the {scenario_id} {variant} run wrote no log: it failed before training began "
                            f"(its error is printed above)")
    return RunLog.load(run_dir)


def run_isolated(scenario_id: str, variant: str, options: Options, run_dir: Path) -> None:
    """Run in a fresh child process ("spawn": no state shared with this one) and wait for it."""
    child = multiprocessing.get_context("spawn").Process(
        target=_child_main, args=(scenario_id, variant, options, str(run_dir)), daemon=True)
    child.start()
    child.join()


def run_ranks(scenario_id: str, variant: str, options: Options, run_dir: Path, processes: int) -> None:
    """Run as ``processes`` ranks on this machine with the launcher behind the ``torchrun`` command
    (``torchrun --standalone --nproc_per_node=N``), and wait for all of them."""
    from torch.distributed.elastic.multiprocessing import DefaultLogsSpecs
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch

    # The launcher keeps each rank's error file in a log folder, by default a new ``torchelastic_*`` folder
    # in the temp directory that nobody removes -- one per run. Rank 0's log already records a failure.
    config = LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=processes, run_id=f"{scenario_id}-{variant}",
                          rdzv_backend="c10d", rdzv_endpoint="localhost:0", max_restarts=0, monitor_interval=0.1,
                          logs_specs=DefaultLogsSpecs(log_dir=os.devnull))
    try:
        elastic_launch(config, _rank_main)(scenario_id, variant, options, str(run_dir))
    except ChildFailedError:
        pass  # rank 0's log holds the failure (run_end status and error)


def _rank_main(scenario_id: str, variant: str, options: Options, run_dir: str) -> None:
    if "OMP_NUM_THREADS" not in os.environ:
        torch.set_num_threads(1)  # as torchrun does: the ranks share this machine's cores
    finished = False
    try:
        _child_main(scenario_id, variant, options, run_dir)
        finished = True
    finally:
        distributed.teardown(wait_for_others=finished)


def _child_main(scenario_id: str, variant: str, options: Options, run_dir: str) -> None:
    plan = plan_for(scenario_id, variant, options)
    if plan.memory_cap_gb is not None:
        cap_memory(plan.memory_cap_gb, options)
    try:
        execute(plan, Path(run_dir), monitoring(Path(run_dir)))
    except Exception:  # noqa: BLE001 -- recorded in the log by the trainer and the JSONL logger
        pass


def cap_memory(headroom_gb: float, options: Options) -> None:
    """Let this process use only ``headroom_gb`` more memory than it holds now.

    CUDA: a fraction of the card for this process (torch's caching allocator enforces it). CPU: a limit
    on the process's address space -- the kernel refuses larger mappings and torch's allocator raises
    its own "can't allocate memory" error. Only ever called in a child process.
    """
    headroom = int(headroom_gb * 2**30)
    if options.on_cuda:
        device = torch.device(options.device if options.device != "auto" else "cuda")
        # "cuda" names no card, and the fraction is set per card: take the one this process uses.
        index = device.index if device.index is not None else torch.cuda.current_device()
        total = torch.cuda.get_device_properties(index).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, headroom / total), index)
    else:
        limit = psutil.Process().memory_info().vms + headroom
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))


def reproduce(scenario_id: str, options: Options, out_dir: Path,
              report: Callable[[str], None] | None = None) -> Outcome:
    """Broken and fixed runs of one scenario (one cause), their plots, and the verdict on each.

    The healthy scenario has a single reference run; it is written to both ``broken/`` and ``fixed/`` so
    every scenario directory has the same layout. ``report`` receives one line as each run starts and ends
    (``clinic reproduce`` prints them: a run takes seconds to a minute, and silence looks like a hang).
    """
    report = report or (lambda line: None)
    from chapters.plots import plot_comparison, plot_run

    scenario = SCENARIOS[scenario_id]
    skip = getattr(scenario, "skip_reason", lambda _: None)(options)
    if skip:
        return Outcome(scenario_id, options.cause, options.device, None, None, 0.0, skipped=skip)
    start = time.perf_counter()
    results = {}
    for variant in VARIANTS:
        run_dir = out_dir / variant
        if variant == "broken" and not scenario.EXPECT_SYMPTOM:
            continue  # healthy: copied from the fixed run below
        report(f"{scenario_id}{f' ({options.cause})' if options.cause else ''}: {variant} run...")
        started = time.perf_counter()
        results[variant] = run_variant(scenario_id, variant, options, run_dir)
        report(f"{scenario_id}{f' ({options.cause})' if options.cause else ''}: {variant} run done in "
               f"{time.perf_counter() - started:.1f} s")
    if "broken" not in results:
        shutil.copytree(out_dir / "fixed", out_dir / "broken", dirs_exist_ok=True)
        results["broken"] = RunLog.load(out_dir / "broken")
    for variant in VARIANTS:
        plot_run(out_dir / variant, out_dir / variant / "plot.png")
    plot_comparison({variant: out_dir / variant for variant in VARIANTS}, out_dir / "compare.png")
    return Outcome(scenario_id, options.cause, options.device, shows_symptom(scenario, results["broken"]),
                   shows_symptom(scenario, results["fixed"]), time.perf_counter() - start)
