"""``clinic estimate-memory``: the peak memory of a training step, by component, before you launch it."""

from __future__ import annotations

import dataclasses
import json

from chapters.cli.args import float_within, positive_int
from chapters.core import corpus
from chapters.core.devices import resolve_device
from chapters.core.model import GPT, PRESETS
from chapters.core.run import DEFAULT_SEQ_LEN, PRESET_TRAINING
from chapters.errors import DeviceError, UsageError
from chapters.memory.estimator import DTYPES, cuda_blas_workspaces, estimate_memory, largest_batch_within
from chapters.memory.measure import measure_peak

VOCAB_SIZE = len(corpus.ALPHABET)  # the course corpus's character vocabulary
MAX_BUDGET_GB = 1e6  # a petabyte: far beyond any machine, small enough to count in bytes


def add_parser(verbs) -> None:
    parser = verbs.add_parser("estimate-memory", help="estimate (and optionally measure) a training step's peak memory")
    parser.add_argument("--preset", default="tiny", choices=list(PRESETS), help="model size (default: tiny)")
    parser.add_argument("--batch-size", type=positive_int, help="examples per micro-batch (preset default)")
    parser.add_argument("--seq-len", type=positive_int, help="tokens per example (preset default)")
    parser.add_argument("--dtype", default="fp32", choices=list(DTYPES), help="compute precision (AMP for 16-bit)")
    parser.add_argument("--grad-checkpointing", action="store_true", help="activation checkpointing")
    parser.add_argument("--attention", default="flash", choices=["flash", "math"],
                        help="fused SDPA kernel (default) or the unfused math path that stores T x T matrices")
    parser.add_argument("--json", action="store_true", help='print {"total_bytes": N, "components": {...}}')
    parser.add_argument("--measure", action="store_true", help="also run one real step and report the error")
    parser.add_argument("--device", default="auto", help="where --measure runs: auto, cpu, cuda, cuda:N")
    parser.add_argument("--budget", type=float_within(0, MAX_BUDGET_GB, f"a number of GB, above 0 and at most {MAX_BUDGET_GB:g}"),
                        metavar="GB", help="print the largest batch size that fits")
    parser.set_defaults(run=run)


def run(args) -> int:

    config = dataclasses.replace(PRESETS[args.preset], vocab_size=VOCAB_SIZE,
                                 grad_checkpointing=args.grad_checkpointing)
    batch_size = args.batch_size or PRESET_TRAINING[args.preset]["batch_size"]
    seq_len = args.seq_len or DEFAULT_SEQ_LEN[args.preset]
    if seq_len > config.block_size:
        raise UsageError(f"--seq-len {seq_len} exceeds the {args.preset} preset's block size {config.block_size}")
    try:
        device = resolve_device(args.device)
    except DeviceError as err:
        raise UsageError(err) from None
    options = {"dtype": args.dtype, "grad_checkpointing": args.grad_checkpointing, "attention": args.attention,
               "fused_adamw": device.type == "cuda",
               "blas_workspaces": cuda_blas_workspaces(device)}
    estimate = estimate_memory(config, batch_size, seq_len, **options)
    report = estimate.to_json()
    if args.measure:

        report["measured_bytes"] = measure_peak(GPT(config), batch_size, seq_len, args.dtype, str(device))
    if args.budget:
        report["max_batch_size"] = largest_batch_within(int(args.budget * 1e9), config, seq_len, **options)
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{args.preset} preset, batch {batch_size} x {seq_len} tokens, {args.dtype}"
              f"{', activation checkpointing' if args.grad_checkpointing else ''}, {args.attention} attention")
        print(format_table(report, batch_size, args.budget))
    return 0 if not args.budget or report["max_batch_size"] > 0 else 1


def format_table(report: dict, batch_size: int, budget: float | None) -> str:
    total = report["total_bytes"]
    width = max(len(name) for name in [*report["components"], "total (estimated peak)"])
    lines = [f"  {name:<{width}}  {size / 2**20:10.2f} MiB  {size / total:6.1%}"
             for name, size in report["components"].items()]
    lines.append(f"  {'total (estimated peak)':<{width}}  {total / 2**20:10.2f} MiB")
    if "measured_bytes" in report:
        measured = report["measured_bytes"]
        lines.append(f"  {'measured peak':<{width}}  {measured / 2**20:10.2f} MiB  "
                     f"(estimate error {(total - measured) / measured:+.1%})")
    if budget:
        best = report["max_batch_size"]
        lines.append(f"largest batch size within {budget:g} GB: {best}" if best else
                     f"not even batch size 1 fits in {budget:g} GB")
    return "\n".join(lines)
