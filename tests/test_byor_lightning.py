"""A real Lightning run, logged by Lightning's own ``CSVLogger`` and ``TensorBoardLogger`` (with its
``LearningRateMonitor``), read by the doctor from both. Skipped when ``lightning`` is not installed."""

from __future__ import annotations

import pytest

pytest.importorskip("lightning")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from chapters.records.formats.detect import load  # noqa: E402


@pytest.fixture(scope="module")
def lightning_logs(tmp_path_factory):
    import lightning as L
    from lightning.pytorch.callbacks import LearningRateMonitor
    from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger

    class Regression(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(4, 1)

        def training_step(self, batch, _):
            x, y = batch
            loss = nn.functional.mse_loss(self.net(x), y)
            self.log("train_loss", loss)
            return loss

        def validation_step(self, batch, _):
            x, y = batch
            self.log("val_loss", nn.functional.mse_loss(self.net(x), y))

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-2)

    root = tmp_path_factory.mktemp("lightning")
    L.seed_everything(0, verbose=False)
    x = torch.randn(64, 4)
    data = torch.utils.data.TensorDataset(x, x.sum(1, keepdim=True))
    loader = torch.utils.data.DataLoader(data, batch_size=8)
    trainer = L.Trainer(max_epochs=3, log_every_n_steps=2, accelerator="cpu", enable_progress_bar=False,
                        enable_model_summary=False, enable_checkpointing=False,
                        callbacks=[LearningRateMonitor()],
                        logger=[CSVLogger(root / "csv"), TensorBoardLogger(root / "tb")])
    trainer.fit(Regression(), loader, loader)
    return root


def test_csv_logger_folder_maps_onto_the_contract(lightning_logs):
    run_log, source = load(lightning_logs / "csv")
    assert source.format == "csv" and source.foreign.source.parent.name == "version_0"
    assert {"train_loss", "lr", "epoch"} <= set(run_log.train.columns)
    assert "lr-AdamW -> lr" in source.foreign.description
    assert len(run_log.evals) == 3 and run_log.evals["val_loss"].notna().all()


def test_tensorboard_logger_folder_reads_as_the_same_run(lightning_logs):
    csv, _ = load(lightning_logs / "csv")
    events, source = load(lightning_logs / "tb")
    assert source.format == "tensorboard"
    assert events.train["step"].tolist() == csv.train["step"].tolist()
    # NaN where a row logged the learning rate only
    assert events.train["train_loss"].tolist() == pytest.approx(csv.train["train_loss"].tolist(), rel=1e-6, nan_ok=True)
    assert events.evals["val_loss"].tolist() == pytest.approx(csv.evals["val_loss"].tolist(), rel=1e-6)
