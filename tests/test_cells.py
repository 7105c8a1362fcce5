"""The check a notebook's test cell calls prints a PASS line with the cell's points, and nothing when it fails."""

import pytest

from autograder.cells import cell_points, check
from autograder.checks import CheckFailed


def total_grad_norm(model):
    grads = [p.grad.flatten() for p in model.parameters() if p.grad is not None]
    return float(__import__("torch").cat(grads).norm())


def test_a_passing_check_prints_pass_with_the_points_of_its_test_cell(capsys):
    check("02_metrics.total_grad_norm", total_grad_norm)
    assert capsys.readouterr().out == "PASS  02_metrics.total_grad_norm  (2 points)\n"


def test_a_failing_check_raises_and_prints_no_pass(capsys):
    with pytest.raises(CheckFailed):
        check("02_metrics.total_grad_norm", lambda model: 1.0)
    assert "PASS" not in capsys.readouterr().out


def test_points_come_from_the_release_notebook_for_public_and_hidden_names():
    assert cell_points("09_mystery_runs.diagnose") == cell_points("09_mystery_runs.diagnose_hidden") == 4
    assert cell_points("02_metrics.no_such_check") is None
