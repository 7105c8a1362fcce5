"""Level 2 histograms: real event files read back with TensorBoard's reader, dead units found, nothing on other steps."""

from types import SimpleNamespace

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from chapters.core.callbacks import Callback
from chapters.core.run import build_trainer, preset_config
from chapters.logging_levels.level2_histograms import (LayerHistograms, dead_fraction, layer_of,
                                                       saturated_fraction)
from chapters.logging_levels.level2_tensorboard import TB_DIR
from chapters.monitoring import monitoring_callbacks
from chapters.records.jsonl import read_metrics_log
from tests.conftest import clinic, run_tiny

DEAD_SHARE = 3 / 8  # the share of block 0's MLP units planted dead


class PlantDeadUnits(Callback):
    """Before step 1: a bias of -10 on the first 3/8 of block 0's MLP units, so GELU outputs ~0 for every token."""

    def on_run_start(self, trainer):
        bias = trainer.model.blocks[0].mlp.up.bias
        bias.data[: int(DEAD_SHARE * bias.numel())] = -10.0


class HookProbe(Callback):
    """The steps on which some activation module carries a forward hook while the step runs."""

    def __init__(self):
        self.hooked_steps = []

    def on_before_optimizer_step(self, trainer):
        if any(m._forward_hooks for m in trainer.model.modules() if isinstance(m, torch.nn.GELU)):
            self.hooked_steps.append(trainer.step + 1)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One healthy and one planted run: 20 steps, a record every 5, histograms every 10."""
    made = {}
    for name, extra in (("healthy", []), ("dead", [PlantDeadUnits()])):
        run_dir = tmp_path_factory.mktemp(name)
        probe = HookProbe()  # before the histograms in the list: it sees their hooks while they are attached
        trainer, _ = run_tiny(steps=20, log_every=5, eval_every=100, callbacks=[
            *extra, probe, *monitoring_callbacks(run_dir, levels=(2, 3), histogram_every=10)])
        accumulator = EventAccumulator(str(run_dir / TB_DIR), size_guidance={"histograms": 0, "scalars": 0})
        accumulator.Reload()
        made[name] = SimpleNamespace(dir=run_dir, trainer=trainer, probe=probe, events=accumulator)
    return made


def test_histograms_of_every_activation_module_and_layer_at_the_chosen_steps(runs):
    run = runs["healthy"]
    model = run.trainer.model
    layers = {layer_of(name) for name, _ in model.named_parameters()}
    expected = {f"activations/blocks.{i}.mlp.act" for i in range(len(model.blocks))} | {f"gradients/{layer}" for layer in layers}
    assert set(run.events.Tags()["histograms"]) == expected
    for tag in expected:
        assert [event.step for event in run.events.Histograms(tag)] == [10, 20], tag
    # an activation histogram holds every value of one micro-batch: tokens x 4 * n_embd units
    first = run.events.Histograms("activations/blocks.0.mlp.act")[0].histogram_value
    n_embd = model.blocks[0].mlp.up.in_features
    assert first.num == run.trainer.step_batches[0]["input_ids"].numel() * 4 * n_embd
    assert first.min < 0 < first.max  # GELU's small negative dip and its positive spread


def test_hooks_are_attached_on_histogram_steps_only(runs):
    assert runs["healthy"].probe.hooked_steps == [10, 20]


def test_dead_unit_share_is_in_the_jsonl_and_tensorboard_on_histogram_steps(runs):
    for name, share0 in (("healthy", 0.0), ("dead", DEAD_SHARE)):
        records = read_metrics_log(runs[name].dir).metrics
        carrying = {r["step"]: r for r in records if "dead_units/blocks.0.mlp.act" in r}
        assert sorted(carrying) == [10, 20], name
        for record in carrying.values():
            assert record["dead_units/blocks.0.mlp.act"] == pytest.approx(share0, abs=1e-6), name
            assert record["dead_units/blocks.1.mlp.act"] == 0.0, name  # the planted bias is in block 0 only
        scalars = runs[name].events.Scalars("dead_units/blocks.0.mlp.act")
        assert [s.step for s in scalars] == [10, 20]
        assert all(s.value == pytest.approx(share0, abs=1e-6) for s in scalars)


def test_dead_fraction_counts_a_unit_alive_if_one_token_fires():
    activations = torch.zeros(2, 3, 4)  # batch 2, 3 tokens, 4 units
    activations[1, 2, 0] = 0.5  # unit 0 fires once
    activations[:, :, 1] = 5e-4  # unit 1 never gets above the threshold
    activations[0, 0, 2] = -0.002  # unit 2: GELU's negative dip is still output
    assert dead_fraction(activations) == 0.5  # units 1 and 3


def test_saturated_fraction_counts_values_near_either_bound():
    values = torch.tensor([-0.999, -0.5, 0.0, 0.93, 0.95, 1.0])
    assert saturated_fraction(values, -1.0, 1.0) == pytest.approx(3 / 6)  # margin 0.06: beyond +-0.94
    assert saturated_fraction(torch.sigmoid(torch.tensor([-10.0, 0.0, 10.0])), 0.0, 1.0) == pytest.approx(2 / 3)


@pytest.mark.parametrize("log_every, every, drawn", [
    (10, 100, [100, 200, 300]),
    (30, 100, [120, 210, 300]),  # the logging step whose window holds each multiple of 100
    (10, 5, list(range(10, 301, 10))),  # more often than records: every record
])
def test_histogram_steps_are_logging_steps(log_every, every, drawn):
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh())
    histograms = LayerHistograms(tensorboard=None, every=every)
    attached = []
    for step in range(300):
        histograms.attach_before_histogram_step(SimpleNamespace(step=step, model=model,
                                                                config=SimpleNamespace(log_every=log_every)))
        if histograms.hooks:
            attached.append(step + 1)
            for hook in histograms.hooks:
                hook.remove()
            histograms.hooks = []
    assert attached == drawn


def test_a_nan_run_writes_no_nan_histogram_and_finishes(tmp_path):
    class PoisonAfter2(Callback):
        def on_step_end(self, trainer):
            if trainer.step == 2:
                trainer.model.token_embedding.weight.data.fill_(float("nan"))

    run_tiny(steps=4, log_every=2, eval_every=100,
             callbacks=[*monitoring_callbacks(tmp_path, levels=(2, 3), histogram_every=2), PoisonAfter2()])
    accumulator = EventAccumulator(str(tmp_path / TB_DIR), size_guidance={"histograms": 0})
    accumulator.Reload()
    assert [e.step for e in accumulator.Histograms("activations/blocks.0.mlp.act")] == [2]  # step 4: all NaN


@pytest.mark.parametrize("args, message", [
    (["--histogram-every", "-1"], "--histogram-every"),
    (["--histogram-every", "ten"], "--histogram-every"),
    (["--histogram-every", "10"], "add level 2"),  # the default level is 3
])
def test_clinic_train_refuses_bad_histogram_settings(tmp_path, args, message):
    result = clinic("train", "--steps", "2", "--out", str(tmp_path / "run"), *args)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run" / "metrics.jsonl").exists()


def test_clinic_train_writes_histograms_at_level_2(tmp_path):
    result = clinic("train", "--steps", "20", "--log-every", "5", "--log-level", "2,3", "--histogram-every", "10",
                    "--quiet", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    accumulator = EventAccumulator(str(tmp_path / TB_DIR), size_guidance={"histograms": 0})
    accumulator.Reload()
    assert [e.step for e in accumulator.Histograms("gradients/blocks.0")] == [10, 20]
    result = clinic("train", "--steps", "10", "--log-level", "2,3", "--histogram-every", "0", "--quiet",
                    "--out", str(tmp_path / "none"))
    assert result.returncode == 0, result.stderr
    accumulator = EventAccumulator(str(tmp_path / "none" / TB_DIR))
    accumulator.Reload()
    assert accumulator.Tags()["histograms"] == []


def test_a_hand_written_loop_gets_histograms_and_saturation_of_its_own_modules(tmp_path):
    """Another model, through the Monitor: a ReLU layer with one unit switched off and a tanh layer with
    large weights (saturated): every activation module is found, whatever the model calls it."""
    from chapters.monitor import Monitor

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8), torch.nn.Tanh(),
                                torch.nn.Linear(8, 1))
    with torch.no_grad():
        model[0].bias[0] = -100.0  # unit 0 never fires for these inputs
        model[2].weight.mul_(200.0)  # tanh's inputs in the hundreds: pinned at +-1
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    inputs = torch.randn(64, 4)
    with Monitor(model, optimizer, tmp_path, log_every=2, tensorboard=True, histogram_every=2) as monitor:
        for _ in range(4):
            loss = model(inputs).pow(2).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            monitor.step(loss)
    record = next(r for r in read_metrics_log(tmp_path).metrics if "dead_units/1" in r)
    assert record["dead_units/1"] == 1 / 8  # unit 0 only (seeded: the other seven fire on some input)
    assert record["saturated/3"] > 0.9
    accumulator = EventAccumulator(str(tmp_path / TB_DIR), size_guidance={"histograms": 0})
    accumulator.Reload()
    assert {"activations/1", "activations/3", "gradients/0", "gradients/2", "gradients/4"} <= set(
        accumulator.Tags()["histograms"])


def test_a_run_that_dies_on_a_histogram_step_leaves_no_hook_on_the_model(tmp_path):
    class CrashInForward(Callback):
        """After step 1 (step 2 is a histogram step, its hooks just attached): block 1's MLP raises."""

        def on_step_complete(self, trainer):
            if trainer.step == 1:
                trainer.model.blocks[1].mlp.up.register_forward_hook(self.crash)

        @staticmethod
        def crash(*_):
            raise RuntimeError("boom")

    config = preset_config("tiny", steps=4, log_every=2, device="cpu")
    trainer = build_trainer("tiny", config, [*monitoring_callbacks(tmp_path, levels=(2,), histogram_every=2),
                                             CrashInForward()])
    with pytest.raises(RuntimeError, match="boom"):
        trainer.fit()
    assert trainer.step == 1
    assert not any(m._forward_hooks for m in trainer.model.modules() if isinstance(m, torch.nn.GELU))
