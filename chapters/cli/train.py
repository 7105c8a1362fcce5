"""``clinic train``: one training run of a preset on the embedded corpus (or a text file)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
from pathlib import Path

from filelock import FileLock, Timeout

from chapters.checkpoints.checkpointer import Checkpointer, resume
from chapters.checkpoints.keeper import read_index
from chapters.cli.args import (doctor_labels, float_within, non_negative_int, positive_float, positive_int,
                               seed, writable_dir)
from chapters.core import distributed, interrupts
from chapters.core.callbacks import History
from chapters.core.data import markov_corpus, text_corpus
from chapters.core.devices import course_cpu_threads, resolve_device
from chapters.core.model import PRESETS
from chapters.core.progress import ProgressBar
from chapters.core.run import DEFAULT_SEQ_LEN, build_trainer, preset_config
from chapters.core.trainer import PRECISIONS
from chapters.doctor.live import DoctorCallback
from chapters.errors import CheckpointError, CheckpointIndexError, DataError, DeviceError, UsageError
from chapters.logging_levels.level0_print import PrintLogger
from chapters.logging_levels.level2_histograms import HISTOGRAM_EVERY
from chapters.monitoring import DEFAULT_LEVELS, monitoring_callbacks, parse_levels

LOCK_NAME = ".clinic-train.lock"  # held by the run writing to a directory, for the run's whole life
RUN_FILES = ("metrics.jsonl", "config.json", "summary.json", "train.log", "tensorboard")  # a run was here
MAX_DIST_TIMEOUT_S = 86_400.0  # a collective that waits a day for another rank is not waiting, it is lost


def log_levels(text: str) -> tuple[int, ...]:
    """``3`` or ``2,3``: the logging levels to write (see chapters.monitoring)."""
    try:
        return parse_levels(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_parser(verbs) -> None:
    parser = verbs.add_parser("train", help="train a model and report its loss against the loss floor")
    parser.add_argument("--preset", default="tiny", choices=list(PRESETS), help="model size (default: tiny)")
    parser.add_argument("--steps", type=positive_int, help="optimizer steps (preset default)")
    parser.add_argument("--batch-size", type=positive_int, help="examples per micro-batch (preset default)")
    parser.add_argument("--grad-accum", type=positive_int, default=1, help="micro-batches per optimizer step")
    parser.add_argument("--lr", type=positive_float, help="peak learning rate (preset default)")
    parser.add_argument("--warmup-steps", type=non_negative_int, help="linear warmup steps (default 30)")
    parser.add_argument("--seed", type=seed, default=0, help="0 to 2^63-1 (default 0)")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N (default: auto)")
    parser.add_argument("--precision", default="auto", choices=PRECISIONS)
    parser.add_argument("--eval-every", type=positive_int, help="steps between evaluations (default 100)")
    parser.add_argument("--log-every", type=positive_int, help="steps between metric records (default 10)")
    parser.add_argument("--no-shuffle", action="store_true", help="serve training data in file order")
    parser.add_argument("--text", metavar="FILE", help="train on a plain-text file instead of the Markov corpus")
    parser.add_argument("--text-sha256", metavar="HEX", help="expected sha256 of --text (checked before use)")
    parser.add_argument("--out", type=writable_dir,
                        help="run directory (default: runs/<preset>, or runs/<preset>-2, -3... when that holds a run)")
    parser.add_argument("--log-level", type=log_levels, default=DEFAULT_LEVELS, metavar="L[,L]",
                        help="0 print, 1 logging, 2 TensorBoard, 3 metrics.jsonl; combine as 2,3 (default: 3)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar (and no Level 1 console lines)")
    parser.add_argument("--wandb", action="store_true",
                        help="with --log-level 2: also log to Weights & Biases, offline (needs `pip install wandb`)")
    parser.add_argument("--histogram-every", type=non_negative_int, metavar="N",
                        help=f"with --log-level 2: activation and gradient histograms every N steps "
                             f"(default {HISTOGRAM_EVERY}; 0: none)")
    parser.add_argument("--stop-on", type=doctor_labels, default=(), metavar="LABEL[,LABEL]",
                        help="stop when the doctor finds one of these (e.g. nan_loss); see docs/doctor.md")
    parser.add_argument("--ckpt-dir", type=writable_dir, help="save checkpoints here (top-K by val_loss + latest)")
    parser.add_argument("--save-every", type=positive_int, help="steps between checkpoints (default: --eval-every)")
    parser.add_argument("--top-k", type=non_negative_int, default=3, help="best checkpoints to keep (default 3)")
    parser.add_argument("--keep-last", type=positive_int, default=2,
                        help="newest checkpoints to keep besides the top-K (default 2: one damaged file is survivable)")
    parser.add_argument("--resume", action="store_true", help="continue from the newest good checkpoint in --ckpt-dir")
    parser.add_argument("--log-all-ranks", action="store_true",
                        help="under torchrun, every rank prints its records (Level 0): the multi-process mess, on purpose")
    parser.add_argument("--dist-timeout", type=float_within(0, MAX_DIST_TIMEOUT_S, "seconds, above 0 and at most 86400"),
                        default=distributed.DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help="under torchrun, fail a collective that waits longer than this for another rank (default 120)")
    parser.set_defaults(run=run)


def run(args) -> int:

    try:
        device = resolve_device(args.device)
        course_cpu_threads()  # a bad CLINIC_CPU_THREADS is said now, before any work
        corpus = (text_corpus(args.text, PRESETS[args.preset].block_size, args.text_sha256) if args.text
                  else markov_corpus(DEFAULT_SEQ_LEN[args.preset]))
    except (DeviceError, DataError) as err:
        raise UsageError(err) from None
    try:
        ranks = distributed.setup(device, args.dist_timeout)  # a no-op without torchrun
    except (ValueError, RuntimeError) as err:
        raise UsageError(f"cannot join the torchrun process group: {err}") from None
    finished = False  # did this rank's run end normally? Then it waits for the others before leaving
    try:
        status = train(args, corpus, ranks)
        finished = True
        return status
    except UsageError:
        raise
    except Exception as err:
        if not ranks.distributed:
            raise
        if interrupts.received():  # SIGTERM from torchrun broke a collective: an interruption, not a crash
            print(f"clinic train: rank {ranks.rank}: interrupted", file=sys.stderr)
            return 128 + interrupts.received()
        # A rank that crashed or froze surfaces here as a failed collective; say so instead of a traceback.
        print(f"clinic train: rank {ranks.rank}: {distributed.describe_failure(err, args.dist_timeout)}",
              file=sys.stderr)
        return 1
    finally:
        distributed.teardown(wait_for_others=finished)


def train(args, corpus, ranks: distributed.Ranks) -> int:

    if args.wandb and 2 not in args.log_level:
        raise UsageError("--wandb logs beside TensorBoard: add level 2 (e.g. --log-level 2,3)")
    if args.histogram_every is not None and 2 not in args.log_level:
        raise UsageError("--histogram-every draws TensorBoard histograms: add level 2 (e.g. --log-level 2,3)")
    chosen = {"steps": args.steps, "lr": args.lr, "batch_size": args.batch_size, "warmup_steps": args.warmup_steps,
              "eval_every": args.eval_every, "log_every": args.log_every}
    config = preset_config(
        args.preset, **{k: v for k, v in chosen.items() if v is not None}, grad_accum_steps=args.grad_accum,
        seed=args.seed, device=args.device, precision=args.precision, shuffle=not args.no_shuffle,
    )
    if config.batch_size * ranks.world_size > len(corpus.train):
        processes = f" x {ranks.world_size} processes" if ranks.distributed else ""
        raise UsageError(f"--batch-size {config.batch_size}{processes} exceeds the {len(corpus.train)} training examples")
    out = args.out or default_out(args)
    if args.out is None and out.name != args.preset and ranks.is_main:
        print(f"writing to {out} (runs/{args.preset} holds an earlier run)")
    with contextlib.ExitStack() as locks:
        if ranks.is_main:  # rank 0 is the one writer; the other ranks write nothing
            for directory in dict.fromkeys(d.resolve() for d in (out, args.ckpt_dir) if d):
                locks.enter_context(exclusive(directory))
            if not args.resume:
                refuse_earlier_run(out)
        return train_locked(args, corpus, ranks, config, out)


def train_locked(args, corpus, ranks: distributed.Ranks, config, out: Path) -> int:

    history = History()
    # Level 0 prints, which would break the progress bar.
    levels = tuple(sorted({*args.log_level, 0})) if args.log_all_ranks else args.log_level
    histogram_every = HISTOGRAM_EVERY if args.histogram_every is None else args.histogram_every
    callbacks = [*monitoring_callbacks(out, levels, wandb=args.wandb, console=not args.quiet,
                                       histogram_every=histogram_every), history,
                 ProgressBar(disable=args.quiet or 0 in levels)]
    for callback in callbacks:
        if args.log_all_ranks and isinstance(callback, PrintLogger):
            callback.all_ranks = True  # the others stay on rank 0: several writers would mangle one file
    if args.stop_on:

        callbacks.append(DoctorCallback(stop_on=args.stop_on, stream=sys.stderr))
    if args.ckpt_dir:
        callbacks.append(checkpointer(args, config))
    elif args.resume or args.save_every:
        raise UsageError("--resume and --save-every need --ckpt-dir")
    trainer = build_trainer(args.preset, config, callbacks, corpus=corpus)
    if args.resume:
        try:
            resume(trainer, args.ckpt_dir, report=print if ranks.is_main else lambda line: None)
        except CheckpointError as err:
            print(f"clinic train: {err}", file=sys.stderr)
            return 1
        distributed.barrier(ranks)  # every rank has read the checkpoint before rank 0 tidies the folder
    if ranks.is_main:
        (out / "config.json").write_text(json.dumps({"preset": args.preset, "corpus": corpus.name,
                                                     **dataclasses.asdict(config)}, indent=2) + "\n")
    status = trainer.fit()
    if not ranks.is_main:
        return 0 if status in ("completed", "stopped") else 1
    summary = {
        "status": status,
        "steps": trainer.step,
        # None when a resumed run had no step left to take
        "train_loss": (history.series("train_loss") or [None])[-1],
        "val_loss": (history.series("val_loss") or [None])[-1],
        "loss_floor": corpus.loss_floor,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(format_summary(summary))
    return 0 if status in ("completed", "stopped") else 1


def checkpointer(args, config):
    """The Checkpointer for ``--ckpt-dir``; refuses to mix a fresh run into another run's checkpoints --
    listed in the index or not: a ``.pt`` file the index does not name would be deleted as an orphan."""

    try:
        index = read_index(args.ckpt_dir)
    except CheckpointIndexError as err:
        raise UsageError(err) from None
    held = sorted({*(e["file"] for e in (index["checkpoints"] if index else [])),
                   *(p.name for p in args.ckpt_dir.glob("*.pt"))})
    if held and not args.resume:
        shown = ", ".join(held[:3]) + (f" and {len(held) - 3} more" if len(held) > 3 else "")
        raise UsageError(f"{args.ckpt_dir} already holds checkpoints ({shown}); use --resume or another directory")
    return Checkpointer(args.ckpt_dir, args.save_every or config.eval_every, args.top_k, keep_last=args.keep_last)


def default_out(args) -> Path:
    """``runs/<preset>``; for a fresh run, the first of ``runs/<preset>-2``, ``-3``... that holds no run yet,
    so running the same command twice never overwrites the first run (``--resume`` continues the first)."""
    candidates = [Path(f"runs/{args.preset}")]
    if not args.resume:
        number = 2
        while any((candidates[-1] / name).exists() for name in RUN_FILES):
            candidates.append(Path(f"runs/{args.preset}-{number}"))
            number += 1
    return writable_dir(str(candidates[-1]))


def refuse_earlier_run(out: Path) -> None:
    """A fresh run must not append to another run's log or overwrite its config and summary."""

    found = [name for name in RUN_FILES if (out / name).exists()]
    if found:
        raise UsageError(f"--out {out} already holds a run ({', '.join(found)}); pass --resume to continue it "
                         f"or choose another --out")


@contextlib.contextmanager
def exclusive(directory: Path):
    """Hold ``directory/.clinic-train.lock`` for the run's life: a second ``clinic train`` on the same folder
    refuses instead of interleaving its log and checkpoints with ours. The operating system releases the
    lock when this process ends -- however it ends, SIGKILL included -- so a lock file left behind by a
    killed run is not held by anyone and the next run simply takes it."""

    try:
        with FileLock(directory / LOCK_NAME, timeout=0):
            yield
    except Timeout:
        raise UsageError(f"{directory} is in use by another clinic train (it holds {directory / LOCK_NAME}); "
                         "wait for it to finish or choose another directory") from None


def format_summary(summary: dict) -> str:
    """``train loss 0.899 | val loss 0.874 | loss floor 0.864 (val is 1.2% above it)``"""
    if summary["train_loss"] is None:
        return f"nothing left to train: the run was already at step {summary['steps']}"
    if summary["val_loss"] is None:  # stopped (e.g. --stop-on) before its first evaluation
        return f"train loss {summary['train_loss']:.4f} | no evaluation ran (status {summary['status']})"
    line = f"train loss {summary['train_loss']:.4f} | val loss {summary['val_loss']:.4f}"
    floor = summary["loss_floor"]
    if floor is None:
        return line + " | loss floor unknown for this corpus"
    gap = (summary["val_loss"] - floor) / floor
    return line + f" | loss floor {floor:.4f} (val is {gap:+.1%} from the floor)"
