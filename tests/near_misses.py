"""Near-miss answers: the reference solution with one plausible mistake, for every graded problem.

A grade separates understanding from luck only if an answer that is *almost* right loses points. Each near
miss below is a small edit of a solution cell of ``solutions/<id>/<id>.ipynb`` -- the mistake a learner
could well make (an off-by-one step, a missing detrend, no warmup, a fix that names the wrong fault...).
``tests/test_near_miss.py`` runs each against its problem's hidden check on several seeds; every one must
fail on every seed.

The edit is a text replacement, so a solution that changes under it fails loudly (the old text must be in
the cell) instead of silently testing nothing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NearMiss:
    assignment: str
    cell: str  # grade_id of the solution cell to edit
    name: str  # the object the test cell hands to the check
    check: str  # the hidden check, without the "_hidden" suffix
    mistake: str
    old: str
    new: str
    expensive: bool = False  # the check trains models: fewer seeds
    known_gap: str = ""  # why the hidden check cannot catch it yet (the test then expects it to pass somewhere)


NEAR_MISSES = [
    # ------------------------------------------------------------------------------- 01_logging_levels
    NearMiss("01_logging_levels", "jsonl_logger", "JsonlLogger", "jsonl_logger", "events never reach the disk",
             "        os.fsync(self.file.fileno())\n", ""),
    NearMiss("01_logging_levels", "jsonl_logger", "JsonlLogger", "jsonl_logger", "NaN written as null",
             'self.file.write(json.dumps(record) + "\\n")',
             'self.file.write(json.dumps({k: None if v != v else v for k, v in record.items()}) + "\\n")'),
    NearMiss("01_logging_levels", "jsonl_logger", "JsonlLogger", "jsonl_logger", "evaluation records dropped",
             "    def on_eval_end(self, trainer, record):\n        ### BEGIN SOLUTION\n        self.write(record)",
             "    def on_eval_end(self, trainer, record):\n        ### BEGIN SOLUTION\n        pass"),
    NearMiss("01_logging_levels", "jsonl_logger", "JsonlLogger", "jsonl_crash", "records never flushed",
             "        self.file.flush()\n", ""),
    NearMiss("01_logging_levels", "logged_loop", "logged_loop", "logging_tqdm", "steps counted from 0",
             'enumerate(tqdm(losses, desc="train"), start=1)', 'enumerate(tqdm(losses, desc="train"))'),
    NearMiss("01_logging_levels", "logged_loop", "logged_loop", "logging_tqdm", "no level in the line format",
             '"%(asctime)s | %(levelname)s | %(message)s"', '"%(asctime)s | %(message)s"'),
    NearMiss("01_logging_levels", "write_tensorboard", "write_tensorboard", "tensorboard",
             "global step = position in the list",
             'writer.add_scalar(key, value, global_step=record["step"])',
             "writer.add_scalar(key, value, global_step=records.index(record))"),
    NearMiss("01_logging_levels", "write_tensorboard", "write_tensorboard", "tensorboard", "NaN values skipped",
             "not isinstance(value, (int, float)):", "not isinstance(value, (int, float)) or value != value:"),
    # ------------------------------------------------------------------------------------- 02_metrics
    NearMiss("02_metrics", "total_grad_norm", "total_grad_norm", "total_grad_norm", "sum of per-tensor norms",
             "float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads])))",
             "float(sum(torch.linalg.vector_norm(g) for g in grads))"),
    NearMiss("02_metrics", "grad_norm_per_group", "grad_norm_per_group", "grad_norm_per_group",
             "tied weight counted twice", "model.named_parameters()",
             "model.named_parameters(remove_duplicate=False)"),
    NearMiss("02_metrics", "grad_norm_per_group", "grad_norm_per_group", "grad_norm_per_group",
             "frozen groups reported as 0", "        if parameter.grad is not None:\n            group = grouping(name)\n"
             "            squares[group] = squares.get(group, 0.0) + float(parameter.grad.double().square().sum())",
             "        group = grouping(name)\n        squares.setdefault(group, 0.0)\n"
             "        if parameter.grad is not None:\n"
             "            squares[group] = squares.get(group, 0.0) + float(parameter.grad.double().square().sum())"),
    NearMiss("02_metrics", "window_throughput", "WindowThroughput", "window_throughput", "clock read before the sync",
             "        self.synchronize()\n        now = self.clock()", "        now = self.clock()\n        self.synchronize()"),
    NearMiss("02_metrics", "window_throughput", "WindowThroughput", "window_throughput", "window never restarts",
             "        self.start, self.tokens = now, 0\n", ""),
    NearMiss("02_metrics", "memory_meter", "MemoryMeter", "memory_meter", "peaks never reset",
             "        self.cuda.reset_peak_memory_stats()\n", ""),
    NearMiss("02_metrics", "memory_meter", "MemoryMeter", "memory_meter", "GiB instead of GB",
             "self.cuda.max_memory_allocated() / 1e9", "self.cuda.max_memory_allocated() / 2**30"),
    NearMiss("02_metrics", "explain_course_text_meter", "explain_course_text_meter", "course_text_answer",
             "ratio inverted", "ratio = (sum(per_step) / len(per_step)) / truth",
             "ratio = truth / (sum(per_step) / len(per_step))"),
    NearMiss("02_metrics", "explain_course_text_meter", "explain_course_text_meter", "course_text_answer",
             "never about right: always blames the GPU", "if abs(ratio - 1) <= 0.1:", "if False:"),
    # ---------------------------------------------------------------------------------------- 03_nan
    NearMiss("03_nan", "is_usable", "is_usable", "data_check", "off by one at vocab_size",
             "(ids < vocab_size)", "(ids <= vocab_size)"),
    NearMiss("03_nan", "is_usable", "is_usable", "data_check", "any ignored label is unusable",
             "(labels == IGNORE_INDEX).all()", "(labels == IGNORE_INDEX).any()"),
    NearMiss("03_nan", "is_usable", "is_usable", "data_check", "negative ids forgotten",
             "((ids >= 0) & (ids < vocab_size)).all()", "(ids < vocab_size).all()"),
    NearMiss("03_nan", "diagnose_nan_log", "diagnose_nan_log", "diagnosis", "step of the first NaN record",
             'return {"label": "nan_loss", "step": step,', 'return {"label": "nan_loss", "step": first_nan,',
             expensive=True),
    NearMiss("03_nan", "diagnose_nan_log", "diagnose_nan_log", "diagnosis", "every NaN blamed on the learning rate",
             'cause = "lr_spike" if exploded else "all_ignored_labels"', 'cause = "lr_spike"', expensive=True),
    NearMiss("03_nan", "fix", "FIX", "fix", "lower lr without warmup",
             'FIX = {"lr": 1e-2, "warmup_steps": 10}', 'FIX = {"lr": 1e-2}', expensive=True),
    NearMiss("03_nan", "fix", "FIX", "fix", "clipping alone",
             'FIX = {"lr": 1e-2, "warmup_steps": 10}', 'FIX = {"grad_clip": 1.0}', expensive=True),
    NearMiss("03_nan", "fix", "FIX", "fix", "warmup without lowering the peak",
             'FIX = {"lr": 1e-2, "warmup_steps": 10}', 'FIX = {"warmup_steps": 10}', expensive=True),
    # ---------------------------------------------------------------------------- 04_frozen_embedding
    NearMiss("04_frozen_embedding", "freeze_check", "freeze_check", "freeze_check", "tied weight counted twice",
             "named = list(model.named_parameters())", "named = list(model.named_parameters(remove_duplicate=False))"),
    NearMiss("04_frozen_embedding", "freeze_check", "freeze_check", "freeze_check", "share of the trainable values",
             "values = sum(parameter.numel() for _, parameter in named)",
             "values = sum(parameter.numel() for _, parameter in named if parameter.requires_grad)"),
    NearMiss("04_frozen_embedding", "diagnose_frozen", "diagnose_frozen", "diagnose_frozen",
             "evidence at the second record", 'int(records["step"].iloc[0])', 'int(records["step"].iloc[1])',
             expensive=True),
    NearMiss("04_frozen_embedding", "train_fixed", "train_fixed", "fixed_model",
             "unfrozen after the optimizer was built",
             "    model = require_all_trainable(build_model(\"tiny\", corpus.tokenizer.vocab_size))\n"
             "    trainer = Trainer(model, corpus, run_config(seed), watchers(run_dir))\n",
             "    model = freeze_embeddings(build_model(\"tiny\", corpus.tokenizer.vocab_size))\n"
             "    trainer = Trainer(model, corpus, run_config(seed), watchers(run_dir))\n"
             "    model.requires_grad_(True)\n", expensive=True),
    # --------------------------------------------------------------------------------- 05_no_shuffle
    NearMiss("05_no_shuffle", "is_epoch_periodic", "is_epoch_periodic", "is_epoch_periodic", "no detrending",
             "residual = (loss - loss.rolling(period, center=True, min_periods=period).mean()).to_numpy()",
             "residual = loss.to_numpy()"),
    NearMiss("05_no_shuffle", "shuffled_loader", "shuffled_loader", "shuffled_loader", "same order every epoch",
             "manual_seed(seed * 100_003 + epoch)", "manual_seed(seed)"),
    NearMiss("05_no_shuffle", "shuffled_loader", "shuffled_loader", "shuffled_loader", "last batch kept",
             "drop_last=True", "drop_last=False"),
    NearMiss("05_no_shuffle", "compare_val", "compare_val", "compare_val", "each run's last evaluation",
             "step = max(set(broken.index) & set(fixed.index))", "step = max(set(broken.index) | set(fixed.index))\n"
             "    broken, fixed = broken.reindex([*broken.index, step]).ffill(), fixed.reindex([*fixed.index, step]).ffill()\n"
             "    broken, fixed = broken[~broken.index.duplicated(keep='first')], fixed[~fixed.index.duplicated(keep='first')]"),
    NearMiss("05_no_shuffle", "compare_val", "compare_val", "compare_val", "the fixed run assumed better",
             'better = "fixed" if fixed[step] < broken[step] else "broken"', 'better = "fixed"'),
    # -------------------------------------------------------------------------------- 06_overfitting
    NearMiss("06_overfitting", "init_loss_report", "init_loss_report", "init_loss", "ln(V - 1): the pad left out",
             "math.log(model.config.vocab_size)", "math.log(model.config.vocab_size - 1)"),
    NearMiss("06_overfitting", "init_loss_report", "init_loss_report", "init_loss", "padding counted in the mean",
             "measured = (losses.sum() / counted.sum()).item()", "measured = losses.mean().item()"),
    NearMiss("06_overfitting", "init_loss_report", "init_loss_report", "init_loss", "measured with dropout on",
             "    model.eval()  # dropout off: measure the model, not one random thinning of it\n", ""),
    NearMiss("06_overfitting", "init_loss_report", "init_loss_report", "init_loss",
             "a fixed band (10 % of the public ln 33)", "measured > expected * 1.1:", "measured > expected + 0.35:"),
    NearMiss("06_overfitting", "init_loss_report", "init_loss_report", "init_loss",
             "a fixed band, low side too", "measured < expected * 0.9:", "measured < expected - 0.35:"),
    NearMiss("06_overfitting", "init_loss_report", "init_loss_report", "init_loss", "the public vocabulary hard-coded",
             "math.log(model.config.vocab_size)", "math.log(33)"),
    NearMiss("06_overfitting", "init_loss_report", "init_loss_report", "init_loss", "attack: always ok",
             'return {"expected": expected, "measured": measured, "verdict": verdict}',
             'return {"expected": expected, "measured": measured, "verdict": "ok"}'),
    NearMiss("06_overfitting", "init_loss_report", "init_loss_report", "init_loss",
             "attack: the verdict from the vocabulary size alone", "if measured > expected * 1.1:",
             "if model.config.vocab_size < 20:"),
    NearMiss("06_overfitting", "overfit_one_batch", "overfit_one_batch", "overfit_one_batch", "zero_grad forgotten",
             "        optimizer.zero_grad()\n", ""),
    NearMiss("06_overfitting", "overfit_one_batch", "overfit_one_batch", "overfit_one_batch", "dropout left on",
             "    model.eval()  # dropout off: memorising is the one time regularisation is unwelcome\n",
             "    model.train()\n"),
    NearMiss("06_overfitting", "overfit_one_batch", "overfit_one_batch", "overfit_one_batch", "too few steps",
             "max_steps=100", "max_steps=20"),
    NearMiss("06_overfitting", "overfit_one_batch", "overfit_one_batch", "overfit_one_batch",
             "a fixed target (10 % of the public first loss)", "loss.item() < target * first or",
             "loss.item() < 0.35 or"),
    NearMiss("06_overfitting", "overfit_one_batch", "overfit_one_batch", "overfit_one_batch",
             "any failure is a bug (no capacity verdict)", "elif last > 0.9 * first:", "elif True:"),
    NearMiss("06_overfitting", "overfit_one_batch", "overfit_one_batch", "overfit_one_batch",
             "not learning judged on any fall at all", "elif last > 0.9 * first:", "elif last >= first:"),
    NearMiss("06_overfitting", "overfit_one_batch", "overfit_one_batch", "overfit_one_batch",
             "frozen parameters trained anyway", "[p for p in model.parameters() if p.requires_grad]",
             "[p.requires_grad_() for p in model.parameters()]"),
    NearMiss("06_overfitting", "overfit_one_batch", "overfit_one_batch", "overfit_one_batch",
             "attack: a forged last loss, always memorised",
             'return {"first_loss": first, "last_loss": last, "verdict": verdict}',
             'return {"first_loss": first, "last_loss": first * 0.09, "verdict": "memorised"}'),
    NearMiss("06_overfitting", "diagnose_overfitting", "diagnose_overfitting", "diagnose_overfitting",
             "any rise after the minimum is overfitting", "val.iloc[-1] < 1.1 * val.min()", "val.iloc[-1] <= val.min()"),
    NearMiss("06_overfitting", "diagnose_overfitting", "diagnose_overfitting", "diagnose_overfitting",
             "divergence never considered", "if train.iloc[-1] < train[train.index <= best_step].iloc[-1]:",
             "if True:"),
    NearMiss("06_overfitting", "early_stopping", "MyEarlyStopping", "early_stopping",
             "best weights kept by reference", "copy.deepcopy(trainer.model.state_dict())", "trainer.model.state_dict()"),
    NearMiss("06_overfitting", "early_stopping", "MyEarlyStopping", "early_stopping", "patience off by one",
             "self.bad_evaluations >= self.patience", "self.bad_evaluations > self.patience"),
    NearMiss("06_overfitting", "early_stopping", "MyEarlyStopping", "early_stopping", "min_delta ignored",
             'record["val_loss"] < self.best - self.min_delta', 'record["val_loss"] < self.best'),
    NearMiss("06_overfitting", "regularisation", "regularisation", "regularisation", "only more steps",
             'regularisation = {"dropout": 0.1, "weight_decay": 0.1, "lines_per_dialect": 32, "steps": 80}',
             'regularisation = {"dropout": 0.0, "weight_decay": 0.0, "lines_per_dialect": 16, "steps": 240}',
             expensive=True),
    # ---------------------------------------------------------------------------------------- 07_oom
    NearMiss("07_oom", "estimate_peak_bytes", "estimate_peak_bytes", "estimate", "AdamW state counted twice",
             "weights_and_adamw = 3 * 4 * params", "weights_and_adamw = 5 * 4 * params"),
    NearMiss("07_oom", "estimate_peak_bytes", "estimate_peak_bytes", "estimate", "logits forgotten",
             "logits = 3 * 4 * tokens * v", "logits = 0"),
    NearMiss("07_oom", "predict_fits", "predict_fits", "fits", "checkpointing ignored",
             'run["seq_len"], run["grad_checkpointing"])', 'run["seq_len"], False)'),
    NearMiss("07_oom", "choose_fix", "choose_fix", "fix", "checkpointing never considered",
             "for checkpointing in (False, True):", "for checkpointing in (False,):"),
    NearMiss("07_oom", "choose_fix", "choose_fix", "fix", "micro-batch that does not divide the batch",
             "        if effective_batch % accum:\n            continue  # the micro-batch must divide the effective batch exactly\n"
             "        micro = effective_batch // accum\n",
             "        micro = -(-effective_batch // accum)\n"),
    # -------------------------------------------------------------------------------- 08_checkpoints
    NearMiss("08_checkpoints", "topk_checkpointer", "TopKCheckpointer", "topk", "files named by rank",
             'candidate = [value, step, f"step-{step:08d}.pt"]', 'candidate = [value, step, f"rank-{len(self.kept)}.pt"]'),
    NearMiss("08_checkpoints", "topk_checkpointer", "TopKCheckpointer", "topk_properties", "ranking not kept on disk",
             "self.kept = json.loads(self.index.read_text()) if self.index.exists() else []", "self.kept = []"),
    NearMiss("08_checkpoints", "topk_checkpointer", "TopKCheckpointer", "topk_properties", "ties keep the newer",
             "return (entry_value if self.mode == \"min\" else -entry_value, entry_step)",
             "return (entry_value if self.mode == \"min\" else -entry_value, -entry_step)"),
    NearMiss("08_checkpoints", "topk_checkpointer", "TopKCheckpointer", "topk_properties", "NaN scores ranked",
             "        if math.isnan(value):\n            return", "        if False:\n            return"),
    NearMiss("08_checkpoints", "safe_load", "safe_load", "safe_load", "shape mismatch not caught",
             "    except RuntimeError as err:  # same names, other shapes", "    except KeyError as err:"),
    NearMiss("08_checkpoints", "safe_load", "safe_load", "safe_load", "non-finite weights not probed",
             "    if not torch.isfinite(logits).all():", "    if False:"),
    # ------------------------------------------------------------------------------- 09_mystery_runs
    NearMiss("09_mystery_runs", "diagnose_log", "diagnose_log", "diagnose", "one fix text for every fault",
             "    ### END SOLUTION", "    ### END SOLUTION\n\n_diagnose = diagnose_log\n\n"
             "def diagnose_log(path):\n    return {**_diagnose(path), \"fix\": \"lower the learning rate\"}",
             expensive=True),
    NearMiss("09_mystery_runs", "diagnose_log", "diagnose_log", "diagnose", "fix text of another fault",
             "    ### END SOLUTION", "    ### END SOLUTION\n\n_diagnose = diagnose_log\n\n"
             "def diagnose_log(path):\n    return {**_diagnose(path), \"fix\": \"unfreeze the embedding parameters\"}",
             expensive=True),
    NearMiss("09_mystery_runs", "diagnose_log", "diagnose_log", "diagnose", "evidence at the first record",
             'return {"anomaly": "oom", "step": int(oom[0]["step"]),',
             'return {"anomaly": "oom", "step": int(records.index[0]),', expensive=True),
    NearMiss("09_mystery_runs", "diagnose_log", "diagnose_log", "diagnose", "the gradient rule before the lr rule",
             "    lr_jump = records[\"lr\"] / records[\"lr\"].shift(1)\n",
             "    lr_jump = records[\"lr\"] * 0\n", expensive=True),
    NearMiss("09_mystery_runs", "leaks_future", "leaks_future", "future_leak", "compares the changed position too",
             "before, after = logits_of(input_ids)[:, :cut], logits_of(changed)[:, :cut]",
             "before, after = logits_of(input_ids)[:, :cut + 1], logits_of(changed)[:, :cut + 1]"),
    NearMiss("09_mystery_runs", "leaks_future", "leaks_future", "future_leak", "the past changed, the future compared",
             "changed[:, cut:] = torch.randint(0, vocab_size, (4, seq_len - cut), generator=generator)",
             "changed[:, :cut] = torch.randint(0, vocab_size, (4, cut), generator=generator)"),
    NearMiss("09_mystery_runs", "train_fixed", "train_fixed", "fixed_training", "mask still off",
             "config = dataclasses.replace(PRESETS[\"tiny\"], vocab_size=corpus.tokenizer.vocab_size)",
             "config = dataclasses.replace(PRESETS[\"tiny\"], vocab_size=corpus.tokenizer.vocab_size, causal=False)",
             expensive=True),
    NearMiss("09_mystery_runs", "train_fixed", "train_fixed", "fixed_training", "data still in file order",
             "shuffle=True", "shuffle=False", expensive=True),
    NearMiss("09_mystery_runs", "train_fixed", "train_fixed", "fixed_training", "labels still the inputs",
             'labels=batch["labels"])["loss"]  # the next token', 'labels=batch["input_ids"])["loss"]  # the next token',
             expensive=True),
    NearMiss("09_mystery_runs", "train_fixed", "train_fixed", "fixed_training", "learning rate still timid",
             "lr=3e-3)", "lr=1e-5)", expensive=True),
]
