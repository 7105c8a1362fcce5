"""Each sanity check passes on the healthy model and data, and catches its broken scenario."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from chapters.core.data import make_loader, markov_corpus
from chapters.core.model import GPT, IGNORE_INDEX, PRESETS
from chapters.sanity.checks import check_causal, check_data, check_init_loss, check_overfit_one_batch
from tests.conftest import clinic

CORPUS = markov_corpus(32)
V = CORPUS.tokenizer.vocab_size


def tiny(**changes) -> GPT:
    torch.manual_seed(0)
    return GPT(dataclasses.replace(PRESETS["tiny"], vocab_size=V, **changes))


def batch(size=4) -> dict:
    return next(iter(make_loader(CORPUS.train, size, shuffle=True, seed=0)))


def test_data_check_passes_and_catches_each_broken_batch():
    assert check_data(make_loader(CORPUS.val, 64, shuffle=False, seed=0), V).passed
    good = batch()
    out_of_range = {**good, "input_ids": good["input_ids"].clone().fill_(V)}
    all_ignored = {**good, "labels": torch.full_like(good["labels"], IGNORE_INDEX)}
    not_shifted = {**good, "labels": good["input_ids"]}
    zero_row = {**good, "input_ids": good["input_ids"].clone().index_fill_(0, torch.tensor([2]), 0)}
    infinite = {**good, "loss_weight": torch.ones(good["input_ids"].shape).index_fill_(1, torch.tensor([5]), math.inf)}
    nan_feature = {**good, "features": torch.tensor([0.5, math.nan])}
    for broken, words in ((out_of_range, "outside the vocabulary"), (all_ignored, "every label is ignored"),
                          (not_shifted, "not the inputs shifted"), (zero_row, "sequence(s) [2] are all token 0"),
                          (infinite, "'loss_weight' holds 4 NaN or infinite"),
                          (nan_feature, "'features' holds 1 NaN or infinite")):
        result = check_data([good, broken], V)
        assert not result.passed and words in result.verdict and result.numbers["batch"] == 1


def test_init_loss_is_ln_v_and_overconfident_init_fails():
    assert check_init_loss(tiny(), batch()).passed
    loud = tiny()
    with torch.no_grad():
        loud.token_embedding.weight.mul_(100)  # tied with the head: huge initial logits
    result = check_init_loss(loud, batch())
    assert not result.passed and result.numbers["loss"] > 1.1 * result.numbers["expected"]


def test_causal_check_catches_a_model_without_the_mask():
    assert check_causal(tiny()).passed
    result = check_causal(tiny(causal=False))
    assert not result.passed and result.numbers["leaks"] == list(range(9, 16))


def test_overfit_one_batch_passes_and_a_frozen_model_fails():
    result = check_overfit_one_batch(tiny(), batch(2), max_steps=150)
    assert result.passed and result.numbers["final"] < 0.1 * result.numbers["start"]
    frozen = tiny()
    frozen.requires_grad_(False)
    result = check_overfit_one_batch(frozen, batch(2), max_steps=5)
    assert not result.passed and result.numbers["final"] == pytest.approx(result.numbers["start"])


def test_clinic_sanity_exit_codes():
    done = clinic("sanity", "--preset", "tiny")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines()] == ["PASS"] * 4
    bad = clinic("sanity", "--preset", "huge")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr and "Traceback" not in bad.stderr


def test_handing_in_clinic_sanitys_own_checks_is_a_borrowed_answer():
    """06_overfitting grades the loss at init and overfit-one-batch: this module is the course's answer to both,
    so an answer cell that calls it scores 0 under ``clinic grade`` (the static rule of docs/grading.md)."""
    from autograder import course_answers
    from autograder.course import Course
    from autograder.notebook import answer_cells, grade_id

    notebook = Course.find().source_notebook("06_overfitting")
    borrowed = {"init_loss_report": "    from chapters.sanity.checks import check_init_loss\n"
                                    "    return check_init_loss(model, batch)\n",
                "overfit_one_batch": "    from chapters.sanity import checks\n"
                                     "    return checks.check_overfit_one_batch(model, batch)\n"}
    for cell in answer_cells(notebook):
        if grade_id(cell) in borrowed:
            cell.source = cell.source.split("    ### BEGIN SOLUTION")[0] + borrowed[grade_id(cell)]
    assert course_answers.used("06_overfitting", notebook) == {
        "06_overfitting.init_loss": {"check_init_loss"}, "06_overfitting.overfit_one_batch": {"check_overfit_one_batch"}}
