"""``Monitor``: the course's monitoring on a loop that is not the course's Trainer."""

from __future__ import annotations

import math

import pytest
import torch

from chapters.core.callbacks import History
from chapters.core.data import make_loader, markov_corpus
from chapters.core.run import build_model, build_trainer, preset_config
from chapters.doctor import diagnose
from chapters.records.jsonl import read_metrics_log
from chapters.metrics.groups import gpt_group
from chapters.monitor import Monitor
from chapters.monitoring import monitoring_callbacks
from chapters.records.formats import tensorboard


def gpt_loop(out, steps=10, log_every=5, poison_from=None, **options):
    """A loop written from scratch around the course GPT; ``poison_from``: the loss turns NaN from that step."""
    torch.manual_seed(0)
    corpus = markov_corpus()
    model = build_model("tiny", corpus.tokenizer.vocab_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    batches = iter(make_loader(corpus.train, 16, shuffle=True, seed=0))
    with Monitor(model, optimizer, out, log_every=log_every, grouping=gpt_group, **options) as monitor:
        for step in range(1, steps + 1):
            batch = next(batches)
            loss = model(batch["input_ids"], labels=batch["labels"])["loss"]
            if poison_from is not None and step >= poison_from:
                loss = loss * math.nan
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            monitor.step(loss, batch)
            if monitor.should_stop:
                break
    return monitor


def test_records_carry_the_same_keys_as_the_trainers(tmp_path):
    history = History()
    config = preset_config("tiny", steps=10, device="cpu", log_every=5, eval_every=10**6)
    build_trainer("tiny", config, [history, *monitoring_callbacks(tmp_path / "trainer")]).fit()
    gpt_loop(tmp_path / "mine")
    mine = read_metrics_log(tmp_path / "mine")
    throttled = {"cpu_memory_gb"}  # read at most every 0.1 s: present on some records only
    assert [r["step"] for r in mine.metrics] == [5, 10]
    for ours, theirs in zip(mine.metrics, history.train):
        assert set(ours) - throttled == set(theirs) - throttled
    assert [e["event"] for e in mine.events] == ["run_start", "run_end"]
    assert mine.events[-1]["status"] == "completed"


def test_no_host_sync_on_steps_that_do_not_log(tmp_path, monkeypatch):
    reads = []
    for name in ("item", "tolist", "__float__", "__bool__"):
        original = getattr(torch.Tensor, name)
        monkeypatch.setattr(torch.Tensor, name, lambda self, *a, _o=original, _n=name: reads.append(_n) or _o(self, *a))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    counts = []
    with Monitor(model, optimizer, tmp_path, log_every=4) as monitor:
        for _ in range(8):
            x = torch.randn(16, 8)
            loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            reads.clear()
            monitor.step(loss)
            counts.append(len(reads))
    assert [c > 0 for c in counts] == [False, False, False, True] * 2


def test_a_nan_is_dated_to_its_step_and_named_by_the_doctor(tmp_path):
    gpt_loop(tmp_path, steps=20, log_every=10, poison_from=13)
    log = read_metrics_log(tmp_path)
    [nan] = [e for e in log.events if e["event"] == "nan"]
    assert nan["step"] == 13 and nan["tensor"] == "loss"
    assert diagnose(tmp_path).findings[0].anomaly == "nan_loss"


def test_the_live_doctor_stops_the_loop(tmp_path):
    monitor = gpt_loop(tmp_path, steps=40, log_every=2, poison_from=5, stop_on=("nan_loss",))
    assert monitor.should_stop and monitor.steps_done < 40


def test_tensorboard_output_reads_back_as_the_same_run(tmp_path):
    gpt_loop(tmp_path, tensorboard=True)
    jsonl = read_metrics_log(tmp_path).metrics
    events = tensorboard.read(tmp_path / "tensorboard").metrics
    assert [r["step"] for r in events] == [r["step"] for r in jsonl]
    assert set(events[0]) == set(jsonl[0]) - {"timestamp"}
    assert events[0]["train_loss"] == pytest.approx(jsonl[0]["train_loss"], rel=1e-6)


def test_an_error_in_the_loop_is_logged_as_failed(tmp_path):
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="boom"):
        with Monitor(model, optimizer, tmp_path, log_every=10) as monitor:
            for step in range(3):
                model(torch.ones(2, 4)).sum().backward()
                optimizer.step()
                monitor.step(torch.tensor(1.0))
            raise ValueError("boom")
    log = read_metrics_log(tmp_path)
    assert [r["step"] for r in log.metrics] == [3], "the partial window is written at the end"
    assert log.events[-1]["status"] == "failed" and "boom" in log.events[-1]["error"]


def test_step_before_the_optimizer_is_a_clear_error(tmp_path):
    model = torch.nn.Linear(4, 1)
    monitor = Monitor(model, torch.optim.SGD(model.parameters(), lr=0.1), tmp_path)
    with pytest.raises(RuntimeError, match="after optimizer.step"):
        monitor.step(torch.tensor(1.0))
    monitor.close()
