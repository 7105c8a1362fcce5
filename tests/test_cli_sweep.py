"""Bad input over every verb and flag: one line naming the problem, the documented exit code, no traceback.

Each case runs the real ``clinic`` entry point in its own process (forked from a server that imported torch
once, see ``tests/cli_runner.py``). The inputs are the families a new user produces: numbers out of range
(huge, negative, NaN, inf), empty strings, a directory where a file belongs and a file where a directory
belongs, garbage and truncated files, and JSON with the wrong type in each field of ``index.json`` and of
``metrics.jsonl`` records. Cases that point a command at existing files also check that those files are
byte-identical afterwards.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from tests.conftest import REPO

HUGE = str(2**63)
SHA = "0" * 64


@pytest.fixture(scope="module")
def cli():
    server = subprocess.Popen([sys.executable, "-m", "tests.cli_runner"], cwd=REPO, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def run(*args, cwd):
        server.stdin.write(json.dumps({"args": [str(a) for a in args], "cwd": str(cwd)}) + "\n")
        server.stdin.flush()
        return SimpleNamespace(**json.loads(server.stdout.readline()))

    yield run
    server.stdin.close()
    server.wait(timeout=60)


@pytest.fixture(scope="module")
def trained(cli, tmp_path_factory):
    """A finished 4-step run with its checkpoints: the material the bad inputs are made from."""
    root = tmp_path_factory.mktemp("trained")
    result = cli("train", "--steps", "4", "--eval-every", "2", "--log-every", "2", "--quiet", "--out", "run",
                 "--ckpt-dir", "ck", "--batch-size", "8", cwd=root)
    assert result.code == 0, result.stderr
    return root


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()
            and p.name != ".clinic-train.lock"}


def assert_one_line(result, code: int, *fragments: str):
    assert "Traceback" not in result.stderr, result.stderr
    assert result.code == code, (result.code, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


# ------------------------------------------------------------------------------------------ arguments
TRAIN = ["train", "--quiet", "--steps", "2", "--batch-size", "8"]
ARGUMENT_CASES = [
    (TRAIN + ["--seed", HUGE], "--seed"),
    (TRAIN + ["--seed", "-1"], "--seed"),
    (TRAIN + ["--seed", "1e3"], "--seed"),
    (TRAIN + ["--steps", "0"], "--steps"),
    (TRAIN + ["--steps", "nan"], "--steps"),
    (TRAIN + ["--steps", ""], "--steps"),
    (TRAIN + ["--lr", "inf"], "--lr"),
    (TRAIN + ["--lr", "-inf"], "--lr"),
    (TRAIN + ["--lr", ""], "--lr"),
    (TRAIN + ["--lr", "1e-400"], "--lr"),
    (TRAIN + ["--batch-size", "-1"], "--batch-size"),
    (TRAIN + ["--grad-accum", "0"], "--grad-accum"),
    (TRAIN + ["--warmup-steps", "-1"], "--warmup-steps"),
    (TRAIN + ["--eval-every", "0"], "--eval-every"),
    (TRAIN + ["--log-every", "-3"], "--log-every"),
    (TRAIN + ["--save-every", "0"], "--save-every"),
    (TRAIN + ["--top-k", "-1"], "--top-k"),
    (TRAIN + ["--keep-last", "0"], "--keep-last"),
    (TRAIN + ["--out", ""], "--out"),
    (TRAIN + ["--out", "   "], "--out"),
    (TRAIN + ["--ckpt-dir", ""], "--ckpt-dir"),
    (TRAIN + ["--log-level", "7"], "--log-level"),
    (TRAIN + ["--log-level", ""], "--log-level"),
    (TRAIN + ["--stop-on", ""], "--stop-on"),
    (TRAIN + ["--dist-timeout", "inf"], "--dist-timeout"),
    (TRAIN + ["--dist-timeout", "1e300"], "--dist-timeout"),
    (TRAIN + ["--dist-timeout", "0"], "--dist-timeout"),
    (TRAIN + ["--precision", "fp8"], "--precision"),
    (TRAIN + ["--device", ""], "auto, cpu"),
    (TRAIN + ["--resume"], "--ckpt-dir"),
    (["sanity", "--seed", HUGE], "--seed"),
    (["sanity", "--preset", ""], "--preset"),
    (["reproduce", "nan", "--seed", HUGE], "--seed"),
    (["reproduce", "healthy", "--cause", "lr_spike"], "nan scenario only"),
    (["reproduce", "nan", "--cause", "gremlins"], "unknown cause"),
    (["reproduce", "nan", "--out", ""], "--out"),
    (["estimate-memory", "--budget", "1e300"], "--budget"),
    (["estimate-memory", "--budget", "nan"], "--budget"),
    (["estimate-memory", "--budget", "-1"], "--budget"),
    (["estimate-memory", "--budget", "0"], "--budget"),
    (["estimate-memory", "--batch-size", "0"], "--batch-size"),
    (["estimate-memory", "--seq-len", "0"], "--seq-len"),
    (["estimate-memory", "--seq-len", str(10**30)], "--seq-len"),
    (["estimate-memory", "--dtype", "fp64"], "--dtype"),
    (["estimate-memory", "--device", "tpu"], "auto, cpu"),
    (["diagnose", "x.jsonl", "--follow", "--idle-timeout", "0"], "--idle-timeout"),
    (["diagnose", "x.jsonl", "--follow", "--idle-timeout", "nan"], "--idle-timeout"),
    (["check", "99_nothing"], "unknown assignment"),
    (["course", "release", "99_nothing"], "unknown assignment"),
    (["ckpt", "list", "no/such/dir"], "not a directory"),
    (["ckpt", "verify", ""], "empty path"),
    (["plot", ""], "empty path"),
    (["diagnose", ""], "empty path"),
    (["diagnose", "", "--follow"], "empty path"),
    (["replay", ""], "empty path"),
    (["check", "03_nan", ""], "empty path"),
    (["ckpt", "dance", "d"], "invalid choice"),
    (["compare", "", "b"], "empty path"),
    (["compare", "a"], "RUN"),
    (["compare", "no/such/a", "no/such/b"], "no/such/a"),
    (["compare", "config.json", "config.json"], "config.json"),
    (["compare", "a", "b", "--note", "why"], "--log"),
]


@pytest.mark.parametrize("args,fragment", ARGUMENT_CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_arguments(cli, tmp_path, args, fragment):
    (tmp_path / "config.json").write_text("{}\n")  # what `--out ''` used to overwrite
    before = snapshot(tmp_path)
    assert_one_line(cli(*args, cwd=tmp_path), 2, fragment)
    assert snapshot(tmp_path) == before


def test_the_largest_accepted_seed_trains(cli, tmp_path):
    result = cli(*TRAIN, "--seed", str(2**63 - 1), "--out", "run", cwd=tmp_path)
    assert result.code == 0 and "Traceback" not in result.stderr, result.stderr


# ------------------------------------------------------------------------------------------ train's files
def text_file(path: Path, content: bytes | None) -> Path:
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    return path


@pytest.mark.parametrize("content,fragment", [
    (None, "is a directory"),
    (b"", "too short"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
    (b"short", "too short"),
])
def test_train_text_that_is_not_a_usable_text_file(cli, tmp_path, content, fragment):
    text_file(tmp_path / "book.txt", content)
    before = snapshot(tmp_path)
    assert_one_line(cli(*TRAIN, "--text", "book.txt", "--out", "run", cwd=tmp_path), 2, "book.txt", fragment)
    assert snapshot(tmp_path) == before


def test_train_text_with_the_wrong_sha256(cli, tmp_path):
    (tmp_path / "book.txt").write_text("abc " * 5000)
    assert_one_line(cli(*TRAIN, "--text", "book.txt", "--text-sha256", SHA, "--out", "run", cwd=tmp_path),
                    2, "sha256")


def test_out_and_ckpt_dir_that_are_files(cli, tmp_path):
    (tmp_path / "plain").write_text("keep me\n")
    assert_one_line(cli(*TRAIN, "--out", "plain", cwd=tmp_path), 2, "--out", "plain")
    assert_one_line(cli(*TRAIN, "--out", "run", "--ckpt-dir", "plain", cwd=tmp_path), 2, "--ckpt-dir")
    assert (tmp_path / "plain").read_text() == "keep me\n"


# ----------------------------------------------------------------------------------------- index.json
def index_variants(index: dict) -> dict[str, object]:
    """Damaged versions of a good index: each field in turn gets a wrong type or value."""
    entry = index["checkpoints"][0]
    variants = {"top_k string": {**index, "top_k": "3"}, "top_k negative": {**index, "top_k": -1},
                "top_k bool": {**index, "top_k": True}, "mode sideways": {**index, "mode": "sideways"},
                "metric number": {**index, "metric": 5}, "latest string": {**index, "latest": "x"},
                "format 2": {**index, "format": 2}, "checkpoints dict": {**index, "checkpoints": {}},
                "checkpoints number": {**index, "checkpoints": 5}, "entry number": {**index, "checkpoints": [5]},
                "missing latest": {k: v for k, v in index.items() if k != "latest"}, "a list": [index]}
    for field, bad in (("step", "30"), ("step", -1), ("step", None), ("sha256", 5), ("sha256", "abc"),
                       ("bytes", "x"), ("bytes", -1), ("metric", "x"), ("metric", [1]), ("file", 7)):
        variants[f"entry {field}={bad!r}"] = {**index, "checkpoints": [{**entry, field: bad}]}
    variants["entry extra field"] = {**index, "checkpoints": [{**entry, "owner": "me"}]}
    variants["entry missing file"] = {**index, "checkpoints": [{k: v for k, v in entry.items() if k != "file"}]}
    return variants


def damaged_index_cases():
    base = {"format": 1, "metric": "val_loss", "mode": "min", "top_k": 3, "latest": 4,
            "checkpoints": [{"step": 4, "file": "step-00000004.pt", "sha256": SHA, "bytes": 10, "metric": 1.0}]}
    cases = [(name, json.dumps(value).encode()) for name, value in index_variants(base).items()]
    cases += [("truncated", json.dumps(base).encode()[:40]), ("binary", b"\x00\xff\x10"), ("empty", b""),
              ("not utf-8", b"{\"format\": \"\xff\"}")]
    return cases


@pytest.mark.parametrize("name,content", damaged_index_cases(), ids=[c[0] for c in damaged_index_cases()])
def test_damaged_index_is_one_line_everywhere(cli, trained, tmp_path, name, content):
    ck = tmp_path / "ck"
    shutil.copytree(trained / "ck", ck)
    (ck / "index.json").write_bytes(content)
    before = snapshot(ck)

    resumed = cli(*TRAIN, "--steps", "6", "--out", "run", "--ckpt-dir", "ck", "--resume", cwd=tmp_path)
    assert_one_line(resumed, 2, "index.json")
    fresh = cli(*TRAIN, "--out", "run2", "--ckpt-dir", "ck", cwd=tmp_path)
    assert_one_line(fresh, 2, "index.json")
    listed = cli("ckpt", "list", "ck", cwd=tmp_path)  # lists the files without the index, says why
    assert listed.code == 0 and "Traceback" not in listed.stderr and "index.json" in listed.stderr
    verified = cli("ckpt", "verify", "ck", cwd=tmp_path)  # no hashes to check, the other checks still run
    assert verified.code == 0 and "Traceback" not in verified.stderr and "step-00000004.pt" in verified.stdout
    assert snapshot(ck) == before


def test_index_json_that_is_a_directory(cli, trained, tmp_path):
    ck = tmp_path / "ck"
    shutil.copytree(trained / "ck", ck)
    (ck / "index.json").unlink()
    (ck / "index.json").mkdir()
    assert_one_line(cli(*TRAIN, "--out", "run", "--ckpt-dir", "ck", "--resume", cwd=tmp_path), 2, "index.json")
    assert cli("ckpt", "verify", "ck", cwd=tmp_path).code == 0


@pytest.mark.parametrize("content", [b"", b"garbage", b"PK\x03\x04truncated zip", None],
                         ids=["empty", "garbage", "truncated", "directory"])
def test_checkpoints_that_are_not_checkpoints(cli, tmp_path, content):
    ck = tmp_path / "ck"
    ck.mkdir()
    text_file(ck / "step-00000004.pt", content)
    before = snapshot(ck)
    verified = cli("ckpt", "verify", "ck", cwd=tmp_path)
    assert verified.code == 1 and "Traceback" not in verified.stderr and "step-00000004.pt" in verified.stderr
    listed = cli("ckpt", "list", "ck", cwd=tmp_path)
    assert listed.code == 0 and "NO" in listed.stdout and "Traceback" not in listed.stderr
    resumed = cli(*TRAIN, "--out", "run", "--ckpt-dir", "ck", "--resume", cwd=tmp_path)  # documented: exit 1
    assert_one_line(resumed, 1, "no checkpoint", "passes verification")
    assert snapshot(ck) == before


# -------------------------------------------------------------------------------------- metrics.jsonl
GOOD = {"step": 2, "epoch": 0, "timestamp": 1.0, "train_loss": 2.0, "lr": 0.01, "grad_norm": 1.0}
RECORD_FIELDS = ["step", "epoch", "timestamp", "train_loss", "lr", "grad_norm"]
WRONG_VALUES = [[1, 2], "3", {"a": 1}, True]


def log_cases():
    cases = {f"{field}={bad!r}": [{**GOOD, field: bad}] for field in RECORD_FIELDS for bad in WRONG_VALUES}
    cases["no step"] = [{k: v for k, v in GOOD.items() if k != "step"}]
    cases["step null"] = [{**GOOD, "step": None}]
    cases["event step list"] = [{"event": "nan", "step": [1, 2], "tensor": "loss"}]
    cases["event name number"] = [{"event": 5, "step": 1}]
    cases["loss_floor string"] = [{"event": "run_start", "step": 0, "loss_floor": "low"}]
    return cases


@pytest.mark.parametrize("records", log_cases().values(), ids=list(log_cases()))
def test_log_records_with_wrong_types(cli, tmp_path, records):
    """Only bad records: nothing to plot, one line and exit 2."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    before = snapshot(run)
    assert_one_line(cli("plot", "run", cwd=tmp_path), 2, "metrics.jsonl")
    diagnosed = cli("diagnose", "run", "--json", cwd=tmp_path)  # the doctor reads the log its own way
    assert diagnosed.code in (0, 2) and "Traceback" not in diagnosed.stderr
    assert len(diagnosed.stderr.strip().splitlines()) <= 1, diagnosed.stderr
    assert snapshot(run) == before


def test_records_with_wrong_types_among_good_ones_are_skipped_by_line(cli, tmp_path):
    """Good records around the bad ones: every bad one is skipped with a warning naming its line, exit 0."""
    good = [{"event": "run_start", "step": 0, "loss_floor": 0.8}] + [{**GOOD, "step": s} for s in range(1, 30)]
    bad = [record for records in log_cases().values() for record in records]
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in good + bad))
    before = snapshot(run)
    plotted = cli("plot", "run", "-o", "out.png", cwd=tmp_path)
    assert plotted.code == 0 and "Traceback" not in plotted.stderr
    warnings = plotted.stderr.strip().splitlines()
    assert len(warnings) == len(bad) and all(f"line {len(good) + n + 1}:" in warnings[n] for n in range(len(bad)))
    diagnosed = cli("diagnose", "run", "--json", cwd=tmp_path)
    assert diagnosed.code == 0 and "Traceback" not in diagnosed.stderr
    json.loads(diagnosed.stdout)
    assert snapshot(run) == before


@pytest.mark.parametrize("content", [b"", b"\x00\x01binary", b"\xff\xfe not utf-8\n", b"not json\n", b"[1, 2]\n",
                                     None], ids=["empty", "binary", "latin", "garbage", "list", "directory"])
def test_unusable_log_files(cli, tmp_path, content):
    text_file(tmp_path / "log.jsonl", content)
    before = snapshot(tmp_path)
    for args in (["plot", "log.jsonl"], ["diagnose", "log.jsonl"], ["diagnose", "log.jsonl", "--json"]):
        assert_one_line(cli(*args, cwd=tmp_path), 2, "log.jsonl")
    assert snapshot(tmp_path) == before


def test_follow_refuses_what_is_not_a_log(cli, tmp_path):
    (tmp_path / "binary.jsonl").write_bytes(b"\x00\x01\x02" * 10)
    assert_one_line(cli("diagnose", "--follow", "binary.jsonl", "--idle-timeout", "5", cwd=tmp_path), 2, "binary")
    (tmp_path / "plainfile").write_bytes(b"\x00binary, and no suffix")
    assert_one_line(cli("diagnose", "--follow", "plainfile", "--idle-timeout", "5", cwd=tmp_path), 2, "plainfile")
    assert_one_line(cli("diagnose", "--follow", "plainfile/run", "--idle-timeout", "5", cwd=tmp_path), 2, "plainfile")


def test_follow_reads_a_plain_file_without_suffix(cli, trained, tmp_path):
    shutil.copy(trained / "run" / "metrics.jsonl", tmp_path / "mylog")
    result = cli("diagnose", "--follow", "mylog", "--idle-timeout", "0.5", cwd=tmp_path)
    assert result.code == 0 and "Traceback" not in result.stderr


# --------------------------------------------------------------------------------------------- plot -o
@pytest.mark.parametrize("output,fragment", [("x.xyz", "unsupported"), ("noext", "unsupported"),
                                             ("run/metrics.jsonl", "unsupported"), ("", "empty")])
def test_plot_refuses_outputs_it_cannot_write(cli, trained, tmp_path, output, fragment):
    shutil.copytree(trained / "run", tmp_path / "run")
    before = snapshot(tmp_path)
    assert_one_line(cli("plot", "run", "-o", output, cwd=tmp_path), 2, fragment)
    assert snapshot(tmp_path) == before


def test_plot_never_overwrites_the_log_even_with_an_image_name(cli, trained, tmp_path):
    (tmp_path / "log.png").write_bytes((trained / "run" / "metrics.jsonl").read_bytes())
    before = snapshot(tmp_path)
    assert_one_line(cli("plot", "log.png", "-o", "log.png", cwd=tmp_path), 2, "is the log")
    assert snapshot(tmp_path) == before


def test_plot_into_a_directory_writes_plot_png_there(cli, trained, tmp_path):
    (tmp_path / "figures").mkdir()
    result = cli("plot", trained / "run", "-o", "figures", cwd=tmp_path)
    assert result.code == 0 and (tmp_path / "figures" / "plot.png").read_bytes()[:4] == b"\x89PNG"
    assert not (tmp_path / "figures.png").exists() and "figures/plot.png" in result.stdout


# ---------------------------------------------------------------------------------------------- replay
def forensics_cases(trained: Path):
    checkpoint = (trained / "ck" / "step-00000004.pt").read_bytes()
    tensor, damaged, wrong_model = (Path(trained) / name for name in ("tensor.pt", "damaged.pt", "wrong.pt"))
    torch.save(torch.zeros(3), tensor)
    torch.save({"model_config": {"n_layer": "x"}, "model": {}, "rng_cpu": torch.zeros(1), "step": 1,
                "batches": []}, damaged)
    torch.save({"model_config": {}, "model": {"w": torch.zeros(1)}, "rng_cpu": torch.get_rng_state(), "step": 1,
                "batches": [{"input_ids": 1}]}, wrong_model)
    return {"a checkpoint": checkpoint, "a tensor": tensor.read_bytes(), "wrong model_config": damaged.read_bytes(),
            "wrong weights": wrong_model.read_bytes(), "garbage": b"garbage", "empty": b"", "directory": None}


@pytest.mark.parametrize("name", ["a checkpoint", "a tensor", "wrong model_config", "wrong weights", "garbage",
                                  "empty", "directory"])
def test_replay_of_files_that_are_not_forensics(cli, trained, tmp_path, name):
    text_file(tmp_path / "nan_forensics.pt", forensics_cases(trained)[name])
    before = snapshot(tmp_path)
    assert_one_line(cli("replay", ".", cwd=tmp_path), 2, "nan_forensics.pt")
    assert snapshot(tmp_path) == before


# ---------------------------------------------------------------------------------------------- check
@pytest.mark.parametrize("content", [b"", b"{not json", b"\x00\x01", b"[]", None],
                         ids=["empty", "garbage", "binary", "list", "directory"])
def test_check_of_notebooks_that_are_not_notebooks(cli, tmp_path, content):
    text_file(tmp_path / "mine.ipynb", content)
    before = snapshot(tmp_path)
    assert_one_line(cli("check", "03_nan", "mine.ipynb", cwd=tmp_path), 2, "mine.ipynb")
    assert snapshot(tmp_path) == before
