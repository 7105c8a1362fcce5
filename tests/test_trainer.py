import math

import pytest
import torch

from chapters.core.callbacks import Callback
from chapters.core.early_stopping import EarlyStopping
from chapters.core.trainer import TrainConfig
from tests.conftest import run_tiny


def test_tiny_preset_gets_close_to_the_loss_floor():
    trainer, history = run_tiny(steps=400, eval_every=200)
    floor = trainer.corpus.loss_floor
    val = history.series("val_loss")[-1]
    assert val < 1.15 * floor, f"val loss {val:.3f} is more than 15% above the floor {floor:.3f}"
    assert val > floor * 0.98, "below the floor: the model must be reading the future"


def test_same_seed_is_bit_identical_and_other_seeds_differ():
    losses = lambda seed: run_tiny(steps=30, seed=seed, log_every=1)[1].series("train_loss")
    first = losses(0)
    assert first == losses(0)
    assert first != losses(1)


def test_lr_warms_up_linearly_then_decays_by_cosine():
    trainer, history = run_tiny(steps=41, log_every=1, warmup_steps=10, lr=1e-2, min_lr_ratio=0.1)
    lrs = history.series("lr")  # lrs[s - 1]: the rate step s used
    assert lrs[:10] == pytest.approx([1e-2 * s / 10 for s in range(1, 11)])
    assert lrs[10] == pytest.approx(1e-2)  # the cosine starts at the peak...
    decay = lrs[10:]
    assert all(a > b for a, b in zip(decay, decay[1:]))
    assert lrs[-1] == pytest.approx(1e-3)  # ...and ends at lr * min_lr_ratio on the last step
    assert lrs[10 + 15] == pytest.approx(1e-3 + 0.5 * 9e-3)  # midpoint of the 30 decay steps


def test_recorded_grad_norm_is_what_clip_grad_norm_returns():
    class Recompute(Callback):
        """Computes the norm by hand before clipping, to compare with the trainer's record."""
        def on_before_optimizer_step(self, trainer):
            grads = [p.grad for p in trainer.model.parameters() if p.grad is not None]
            self.by_hand = torch.linalg.vector_norm(torch.stack([g.norm() for g in grads])).item()

        def on_log(self, trainer, record):
            assert record["grad_norm"] == pytest.approx(self.by_hand, rel=1e-5)
            self.checked = True

    probe = Recompute()
    run_tiny(steps=5, log_every=1, callbacks=[probe])
    assert probe.checked


def test_gradient_accumulation_matches_one_big_batch():
    """Two micro-batches of 16 give the same update as one batch of 32 (up to float rounding)."""
    big = run_tiny(steps=10, log_every=1, batch_size=32, shuffle=False)[1].series("train_loss")
    accumulated = run_tiny(steps=10, log_every=1, batch_size=16, grad_accum_steps=2, shuffle=False)[1]
    assert accumulated.series("train_loss") == pytest.approx(big, rel=1e-4)


def test_early_stopping_restores_the_best_weights():
    stopper = EarlyStopping(patience=1, min_delta=10.0)  # nothing improves by 10 nats: stops at 2nd eval
    trainer, history = run_tiny(steps=100, eval_every=10, callbacks=[stopper])
    assert trainer.step == 20
    assert stopper.best_step == 10
    assert torch.equal(trainer.model.state_dict()["token_embedding.weight"],
                       stopper.best_state["token_embedding.weight"])


@pytest.mark.parametrize("field,value", [("steps", 0), ("batch_size", -1), ("lr", 0.0), ("lr", math.nan),
                                         ("precision", "fp8"), ("min_lr_ratio", 2.0)])
def test_config_rejects_bad_values_by_name(field, value):
    with pytest.raises(ValueError, match=field):
        TrainConfig(**{field: value}).validate()


@pytest.mark.gpu
def test_bf16_autocast_trains_on_cuda():
    trainer, history = run_tiny(steps=20, device="cuda")
    assert trainer.precision in ("bf16", "fp16")
    assert all(math.isfinite(x) for x in history.series("train_loss"))


def test_a_writer_before_the_measurers_still_sees_every_key():
    """Two phases: measurers add keys first, then readers get the finished record, wherever they sit."""
    from chapters.monitoring import metric_callbacks

    class Reader(Callback):
        def on_log(self, trainer, record):
            self.keys = set(record)

    reader = Reader()
    run_tiny(steps=2, log_every=1, callbacks=[reader, *metric_callbacks()])
    assert {"step_time_ms", "update_ratio/mlp", "grad_norm/attention"} <= reader.keys


def test_a_reader_cannot_change_the_record_the_next_reader_sees():
    class Vandal(Callback):
        def on_log(self, trainer, record):
            record["train_loss"] = 0.0

    with pytest.raises(TypeError, match="read-only"):
        run_tiny(steps=1, log_every=1, callbacks=[Vandal()])
