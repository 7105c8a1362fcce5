"""The doctor on real training: torch trains a small MLP on Gaussian blobs, and the doctor reads its log.

`bench/doctor_families.py` trains six families at batch 32; this script trains one tiny model the ways a
practitioner's own code does -- batches of 2 to 64, SGD and Adam at 1 to 100x a sensible learning rate,
class-sorted data, one update at 3000x -- and counts the doctor's top finding per regime. Runs like these
found a traceback (a loss of exactly 0 under a rising val loss) and a blind spot (float32 rounds a
classifier's loss inside a class block to 0) that no constructed log had shown (docs/doctor.md, tenth pass).

What each regime should read as:
* ``lr`` (one hidden layer, batches of 2-8, 1500 steps): LR x1 is healthy; SGD at x30 and x100 blows up
  (``divergence``); Adam at x100 thrashes (``oscillation``). In between (SGD x10, Adam x30) runs differ by
  seed: some learn, some blow up.
* ``order`` (SGD with momentum, eight epochs): class-sorted data is ``no_shuffle`` once a class block spans
  2.5 records or more (fewer, and a window mean covers the whole block); the same runs shuffled are healthy
  or mildly ``overfitting`` (their val loss creeps up from about 0.05).
* ``spike`` (two hidden layers, one update at 3000x an unlogged LR): SGD's ReLUs die (``loss_plateau``);
  Adam's step is bounded, the network survives, and its gradients' burst reads as ``grad_explosion`` (the LR
  that caused it is not in the log).
* ``memory`` (an LSTM classifier, each run in a fresh process, ``cpu_memory_gb`` from psutil's RSS): keeping
  one batch's outputs with their graph every 1, 5 or 20 steps is ``memory_growth``; the same runs without
  the leak are healthy, on fixed and on random sequence lengths (the allocator settles either way).

    OMP_NUM_THREADS=1 python bench/doctor_real.py [--regimes lr,order,spike,memory]

About two minutes on one core; every run is seeded, so the losses repeat (the memory regime's RSS is the
machine's own, and differs a little from run to run).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import psutil
import torch
from torch import nn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.families.tasks import relu_stack  # noqa: E402  (after the path insert: a checkout runs uninstalled)
from chapters.doctor import diagnose  # noqa: E402

CLASSES, FEATURES = 10, 20
BASE_LR = {"sgd": 0.05, "adam": 1e-3}
REGIMES = ("lr", "order", "spike", "memory")


def train(out: Path, seed: int, *, optimizer="sgd", momentum=0.0, lr_factor=1.0, batch=32, log_every=1,
          hidden=1, spread=1.2, examples=3584, sort=False, epochs=None, steps=1500, spike_at=None,
          epoch_key=True, declare_epoch=False) -> Path:
    """Train an MLP (``hidden`` layers of 64 ReLUs) on ten Gaussian blobs, writing the course's JSONL contract
    to ``out/metrics.jsonl``; returns ``out``.

    Each record's ``train_loss`` is the mean over the steps since the last record (how most loops log);
    the val loss (512 held-out examples) every 100 steps, or every epoch when ``epochs`` is given. ``sort``:
    the training set ordered by class and never shuffled. ``spike_at``: one step at 3000x the LR, which the
    logged ``lr`` does not show (a bug, not a schedule)."""
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    centres = torch.randn(CLASSES, FEATURES, generator=generator) * spread
    labels = torch.randint(0, CLASSES, (examples + 512,), generator=generator)
    inputs = centres[labels] + torch.randn(examples + 512, FEATURES, generator=generator)
    x, y, val_x, val_y = inputs[512:], labels[512:], inputs[:512], labels[:512]
    if sort:
        order = torch.argsort(y, stable=True)
        x, y = x[order], y[order]
    model = relu_stack(FEATURES, 64, CLASSES, depth=hidden)
    lr = BASE_LR[optimizer] * lr_factor
    opt = torch.optim.SGD(model.parameters(), lr, momentum=momentum) if optimizer == "sgd" else \
        torch.optim.Adam(model.parameters(), lr)
    loss_fn = nn.CrossEntropyLoss()
    per_epoch = len(x) // batch
    steps = epochs * per_epoch if epochs else steps
    start = {"event": "run_start", "step": 0, "num_classes": CLASSES}
    if declare_epoch:
        start["steps_per_epoch"] = per_epoch
    lines, window = [json.dumps(start)], []
    for step in range(1, steps + 1):
        epoch, position = divmod(step - 1, per_epoch)
        if position == 0:
            order = torch.arange(len(x)) if sort else torch.randperm(len(x), generator=generator)
        index = order[position * batch:(position + 1) * batch]
        for group in opt.param_groups:
            group["lr"] = lr * (3000 if step == spike_at else 1)
        loss = loss_fn(model(x[index]), y[index])
        opt.zero_grad()
        loss.backward()
        grad_norm = float(torch.nn.utils.get_total_norm([p.grad for p in model.parameters()]))
        opt.step()
        window.append(loss.item())
        if step % log_every == 0:
            record = {"step": step, "train_loss": float(np.mean(window)), "lr": lr, "grad_norm": grad_norm}
            if epoch_key:
                record["epoch"] = epoch
            lines.append(json.dumps(record))
            window = []
        if step % (per_epoch if epochs else 100) == 0:
            with torch.no_grad():
                lines.append(json.dumps({"step": step, "val_loss": float(loss_fn(model(val_x), val_y))}))
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    return out


def train_lstm(out: Path, seed: int, *, leak_every=0, random_lengths=False, log_every=1, steps=600) -> Path:
    """Train an LSTM to tell whether the first feature of a sequence's last four steps sums above 0, logging
    the process's resident memory (psutil RSS, what ``htop`` shows) as ``cpu_memory_gb``; run it in a fresh
    process (:func:`in_fresh_process`) so the memory is this run's alone. ``leak_every``: every that many
    steps, one batch's outputs are kept with their graph -- the classic leak (a list of model outputs that
    is never cleared, holding every activation the graph saved)."""
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    lstm, head = nn.LSTM(16, 32, batch_first=True), nn.Linear(32, 2)
    opt = torch.optim.Adam([*lstm.parameters(), *head.parameters()], 3e-3)
    process, kept, lines, window = psutil.Process(), [], [], []
    for step in range(1, steps + 1):
        length = int(torch.randint(8, 64, (1,), generator=generator)) if random_lengths else 32
        x = torch.randn(16, length, 16, generator=generator)
        y = (x[:, -4:, 0].sum(1) > 0).long()
        loss = nn.functional.cross_entropy(head(lstm(x)[0][:, -1]), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        window.append(loss.item())
        if leak_every and step % leak_every == 0:
            kept.append(head(lstm(x)[0][:, -1]))
        if step % log_every == 0:
            lines.append(json.dumps({"step": step, "train_loss": float(np.mean(window)),
                                     "cpu_memory_gb": process.memory_info().rss / 1e9}))
            window = []
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    return out


def in_fresh_process(trainer, out: Path, **settings) -> Path:
    """Run ``trainer`` in a new interpreter ("spawn": nothing inherited), so that memory freed by earlier
    runs cannot hide a leak and memory they grew cannot look like one."""
    process = multiprocessing.get_context("spawn").Process(target=trainer, args=(out,), kwargs=settings)
    process.start()
    process.join()
    if process.exitcode != 0:
        raise RuntimeError(f"the training process for {out.name} exited with code {process.exitcode}")
    return out


def runs(regime: str):
    """(group, training keyword arguments) for every run of one regime."""
    if regime == "lr":
        for optimizer in ("sgd", "adam"):
            for factor in (1, 10, 30, 100):
                for batch in (2, 4, 8):
                    for seed, log_every in enumerate((1, 5, 10)):
                        yield f"{optimizer} LR x{factor}", dict(seed=seed, optimizer=optimizer, lr_factor=factor,
                                                                 batch=batch, log_every=log_every)
    elif regime == "order":
        for sort in (True, False):
            for batch in (8, 16, 32, 64):
                for log_every in (1, 5, 10, 20):
                    if 200 / batch / log_every < 2.5:  # records a class block (200 examples each)
                        continue
                    for seed, (epoch_key, declare) in enumerate(((True, True), (True, False), (False, False))):
                        yield ("class-sorted" if sort else "shuffled") + ", >= 2.5 records a block", dict(
                            seed=seed, sort=sort, momentum=0.9, batch=batch, log_every=log_every, spread=0.8,
                            examples=2000, epochs=8, epoch_key=epoch_key, declare_epoch=declare)
    elif regime == "memory":
        for leak_every in (0, 1, 5, 20):
            for random_lengths in (False, True):
                for seed, log_every in enumerate((1, 10)):
                    yield (f"leak every {leak_every} steps" if leak_every else "no leak"), dict(
                        seed=seed, leak_every=leak_every, random_lengths=random_lengths, log_every=log_every)
    else:
        for optimizer in ("sgd", "adam"):
            for seed, log_every in enumerate((1, 10, 10, 5)):
                yield f"{optimizer}, one update at 3000x", dict(seed=seed, optimizer=optimizer, momentum=0.9,
                                                               hidden=2, spread=1.0, log_every=log_every,
                                                               spike_at=400 + 37 * seed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regimes", default=",".join(REGIMES), help="comma-separated: " + ", ".join(REGIMES))
    args = parser.parse_args()
    chosen = args.regimes.split(",")
    unknown = [regime for regime in chosen if regime not in REGIMES]
    if unknown:
        print(f"doctor_real: unknown regime {unknown[0]!r} (choose from {', '.join(REGIMES)})", file=sys.stderr)
        return 2
    torch.set_num_threads(1)  # tiny models: one thread is fastest, and leaves the other cores to neighbours
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        for regime in chosen:
            counts: dict[str, Counter] = defaultdict(Counter)
            planned = list(runs(regime))
            for number, (group, settings) in enumerate(planned, 1):
                print(f"\r{regime}: run {number}/{len(planned)}", end="", file=sys.stderr, flush=True)
                out = Path(scratch) / f"{regime}-{number}"
                log = in_fresh_process(train_lstm, out, **settings) if regime == "memory" else train(out, **settings)
                try:
                    findings = diagnose(log).findings
                except Exception as error:  # a traceback on a valid log is a result to count, not to stop at
                    counts[group][f"traceback ({type(error).__name__})"] += 1
                    continue
                counts[group][findings[0].anomaly if findings else "healthy"] += 1
            print(f"\r## {regime} ({time.perf_counter() - started:.0f} s so far)", file=sys.stderr)
            for group, found in counts.items():
                print(f"  {group:40s} {dict(found.most_common())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
