"""The metric callbacks: every key of the contract, with values checked against an independent computation."""

import math
import sys

import pandas as pd
import pytest
import torch

from chapters.core.callbacks import Callback, History
from chapters.core.devices import seed_everything
from chapters.core.run import build_model, build_trainer, preset_config
from chapters.core.trainer import Trainer
from chapters.core.data import markov_corpus
from chapters.records.jsonl import read_metrics_log
from chapters.metrics.grad_norm import GradNormPerGroup
from chapters.metrics.update_ratio import UpdateRatio
from chapters.monitoring import metric_callbacks, monitoring_callbacks
from tests.conftest import run_tiny

GPT_GROUPS_TIED = {"embedding", "attention", "mlp", "norm"}  # the head is the embedding matrix: no group of its own


@pytest.fixture(scope="module")
def monitored_run(tmp_path_factory):
    """One short run with the standard stack; returns (trainer, history, metrics log)."""
    run_dir = tmp_path_factory.mktemp("run")
    trainer, history = run_tiny(steps=16, callbacks=monitoring_callbacks(run_dir), log_every=2, eval_every=8,
                                warmup_steps=6)
    return trainer, history, read_metrics_log(run_dir)


def test_jsonl_loads_with_pandas_and_holds_every_key(monitored_run):
    trainer, _, log = monitored_run
    frame = pd.read_json(log.path, lines=True)
    train = frame[frame["train_loss"].notna()]
    assert list(train["step"]) == list(range(2, 17, 2))
    expected = {"step", "epoch", "timestamp", "train_loss", "lr", "grad_norm", "tokens_per_sec", "step_time_ms",
                "cpu_memory_gb", "nonfinite_grads",
                *(f"grad_norm/{g}" for g in GPT_GROUPS_TIED), *(f"update_ratio/{g}" for g in GPT_GROUPS_TIED)}
    for record in log.metrics:
        if "train_loss" in record:  # gpu_util and gpu_memory_gb are absent on a CPU run, never faked
            assert expected - {"cpu_memory_gb"} <= set(record) <= expected  # RSS: at most every 0.1 s
    assert (train["tokens_per_sec"] > 0).all() and (train["step_time_ms"] > 0).all()
    assert (train["nonfinite_grads"] == 0).all()
    assert train["cpu_memory_gb"].iloc[0] > 0  # the first record always reads RSS
    assert train["cpu_memory_gb"].dropna().between(0.01, 64).all()
    assert frame["val_loss"].notna().sum() == 2
    start = next(e for e in log.events if e["event"] == "run_start")
    assert start["loss_floor"] == pytest.approx(trainer.corpus.loss_floor)
    assert log.events[-1] == {**log.events[-1], "event": "run_end", "status": "completed", "step": 16}


def test_lr_in_the_log_warms_up_then_decays(monitored_run):
    _, history, log = monitored_run
    lrs = [r["lr"] for r in log.metrics if "lr" in r]
    assert lrs == history.series("lr")
    peak = lrs.index(max(lrs))
    assert log.metrics[0]["lr"] < max(lrs) and all(a < b for a, b in zip(lrs[:peak], lrs[1:peak + 1]))
    assert all(a > b for a, b in zip(lrs[peak:], lrs[peak + 1:]))


def test_group_norms_partition_the_total_grad_norm(monitored_run):
    """The groups cover each parameter once, so their norms combine to clip_grad_norm_'s total."""
    for record in (r for r in monitored_run[2].metrics if "grad_norm" in r):
        groups = [record[f"grad_norm/{g}"] for g in GPT_GROUPS_TIED]
        assert math.sqrt(sum(n * n for n in groups)) == pytest.approx(record["grad_norm"], rel=1e-5)


def test_untied_head_gets_its_own_group():
    config = preset_config("tiny", steps=2, log_every=1, device="cpu")
    history = History()
    build_trainer("tiny", config, [GradNormPerGroup(), history], tie_weights=False).fit()
    assert history.train[-1]["grad_norm/head"] > 0


def test_update_ratio_is_change_over_size_after_the_step_and_frozen_group_is_zero():
    class WeightsProbe(Callback):
        """Copies the norm and MLP weights before and after each step, independently of UpdateRatio."""
        def on_before_optimizer_step(self, trainer):
            self.before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}

        def on_step_end(self, trainer):
            self.after = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}

        def on_measure(self, trainer, record):
            names = [n for n in self.before if ".mlp." in n]
            change = math.sqrt(sum(float((self.after[n] - self.before[n]).norm()) ** 2 for n in names))
            size = math.sqrt(sum(float(self.after[n].norm()) ** 2 for n in names))  # the size after the step
            record["expected_mlp_ratio"] = change / size

    corpus = markov_corpus(64)
    seed_everything(0)
    model = build_model("tiny", corpus.tokenizer.vocab_size)
    for name, parameter in model.named_parameters():
        if "norm" in name:
            parameter.requires_grad_(False)  # frozen before the optimizer is built: the norm group never moves
    history = History()
    config = preset_config("tiny", steps=3, log_every=1, device="cpu")
    Trainer(model, corpus, config, [UpdateRatio(), GradNormPerGroup(), WeightsProbe(), history]).fit()
    for record in history.train:
        assert record["update_ratio/norm"] == 0.0
        assert "grad_norm/norm" not in record  # no gradients to measure
        assert record["update_ratio/mlp"] == pytest.approx(record["expected_mlp_ratio"], rel=1e-4)
        assert record["update_ratio/mlp"] > 0 and record["update_ratio/attention"] > 0


def test_rss_is_read_at_most_every_interval_and_never_repeated(monkeypatch):
    from chapters.metrics import memory

    clock = iter([0.0, 0.0, 0.05, 0.12, 0.12, 0.15, 0.3, 0.3])  # perf_counter at each check (and reading)
    monkeypatch.setattr(memory.time, "perf_counter", lambda: next(clock))
    trainer = type("CpuTrainer", (), {"device": torch.device("cpu")})()
    callback = memory.Memory()
    callback.on_run_start(trainer)
    records = [{} for _ in range(5)]
    for record in records:
        callback.on_measure(trainer, record)
    assert ["cpu_memory_gb" in record for record in records] == [True, False, True, False, True]
    assert all(record["cpu_memory_gb"] > 0.01 for record in records if record)


def test_free_form_groups_from_a_mapping():
    grouping = {"token_embedding.weight": "tokens", "position_embedding.weight": "positions"}
    _, history = run_tiny(steps=2, log_every=1, callbacks=metric_callbacks(grouping))
    record = history.train[-1]
    groups = {key.split("/", 1)[1] for key in record if key.startswith("grad_norm/")}
    assert groups == {"tokens", "positions", "other"}
    total = math.sqrt(sum(record[f"grad_norm/{g}"] ** 2 for g in groups))
    assert total == pytest.approx(record["grad_norm"], rel=1e-5)


def test_no_item_calls_from_course_code_on_non_logging_steps(monkeypatch):
    """`.item()` waits for the GPU. Course code may call it on logging steps only (and in evaluation)."""
    calls = []
    original = torch.Tensor.item

    def counting_item(self):
        caller = sys._getframe(1).f_code.co_filename
        if "/chapters/" in caller.replace("\\", "/"):
            calls.append((trainer_ref[0].step, caller))
        return original(self)

    trainer_ref = []

    class Remember(Callback):
        def on_run_start(self, trainer):
            trainer_ref.append(trainer)

    monkeypatch.setattr(torch.Tensor, "item", counting_item)
    run_tiny(steps=8, log_every=4, eval_every=100, callbacks=[Remember(), *metric_callbacks()])
    # Logging happens at steps 4 and 8; trainer.step equals the logged step when on_measure runs.
    assert calls, "the probe saw no .item() calls at all: it is not measuring anything"
    assert {step for step, _ in calls} <= {4, 8}, calls
