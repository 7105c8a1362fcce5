"""TensorBoard log directories: the event files ``SummaryWriter`` writes (PyTorch, Lightning, HF Trainer).

An event file is a sequence of TFRecords, each holding one ``Event`` protocol buffer; a scalar is an event
with a tag, a step and a value. Reading is TensorBoard's own ``EventAccumulator``, told to keep *every*
scalar (``size_guidance`` 0: by default it keeps a random sample of 10 000 per tag, and a sampled-away NaN
step is a diagnosis lost). The accumulator also handles the odd cases: a restarted run whose steps go back
(it drops the abandoned steps), TF2's tensor-valued scalars.

Its record reader is written in Python and checks each record's CRC in Python, about 25 us an event: a
million scalars take half a minute. So a clean file takes a fast path first: the same ``Event`` message
class parses each record, only the framing (8-byte length, CRC, payload, CRC) is stepped over by hand. Any
record that does not fit -- a length past the end, a payload that does not parse, a tensor-valued scalar,
a step going back -- sends the whole run down the accumulator's path, so both always agree (a test checks
it). What the fast path gives up is the checksum: a flipped bit inside a value would go unnoticed.

One directory may hold several runs (``runs/lr3e-3/``, ``runs/lr1e-2/``): each directory with event files
in it is one run, :func:`list_runs` names them, and the caller chooses one (``--run``). One exception:
``SummaryWriter.add_scalars("Loss", {"train": ..., "val": ...})``, the usual way to draw train and val on one
chart, writes each curve into a folder of its own (``Loss_train/``, ``Loss_val/``) beside the run's event
file, all under the tag ``Loss``. Those folders are curves of their parent's run, not runs: they are read
with it, as ``Loss/train`` and ``Loss/val`` (see :func:`add_scalars_curve`).
"""

from __future__ import annotations

import struct

import numpy as np
from pathlib import Path

from chapters.errors import MetricsLogError
from chapters.records.formats import ForeignRun, Renamer, contract_name, is_eval_key, run_start

EVENT_FILE = "events.out.tfevents.*"


def list_runs(root: Path) -> list[str]:
    """The runs under ``root``: each directory holding event files, as a path relative to ``root``."""
    root = Path(root)
    if root.is_file():
        return ["."]
    folders = sorted({path.parent for path in root.rglob(EVENT_FILE) if path.is_file()})
    if len(folders) > 1:  # add_scalars curves are read with the run they belong to
        curves = {folder for folder in folders if add_scalars_curve(folder) is not None}
        folders = sorted((set(folders) - curves) | {folder.parent for folder in curves})
    return [folder.relative_to(root).as_posix() for folder in folders]


def add_scalars_curve(folder: Path) -> tuple[str, tuple[list, list]] | None:
    """``("Loss/train", (steps, values))`` when ``folder`` is one curve that ``add_scalars`` split off, else None.

    Such a folder holds exactly one tag, ``T``, and is named ``T_KEY`` (a ``/`` in the tag becomes ``_``).
    Only a curve whose ``T/KEY`` names a contract key (``Loss/train``, ``loss/val``, ...) is taken: a run of
    its own that happens to log a single tag (``loss_lr3/`` holding ``loss``) must stay a run.
    """
    scalars = _scalars(folder)
    if len(scalars) != 1:
        return None
    [(tag, points)] = scalars.items()
    prefix = tag.replace("/", "_") + "_"
    key = folder.name[len(prefix):] if folder.name.startswith(prefix) else ""
    if not key or contract_name(f"{tag}/{key}") is None:
        return None
    return f"{tag}/{key}", points


def _scalars(folder: Path) -> dict[str, tuple[list[int], list[float]]]:
    """Every scalar of the event files directly in ``folder`` (or of that one event file)."""
    files = [folder] if folder.is_file() else sorted(folder.glob(EVENT_FILE))
    scalars = _fast_scalars(files)
    return _accumulated_scalars(folder) if scalars is None else scalars


def choose_run(root: Path, run: str | None) -> Path:
    """The run directory (or event file) to read; one clear error when there is none or the choice is open."""
    root = Path(root)
    runs = list_runs(root)
    if not runs:
        raise MetricsLogError(f"{root} holds no TensorBoard event files ({EVENT_FILE})")
    if run is None:
        if len(runs) > 1:
            raise MetricsLogError(f"{root} holds {len(runs)} runs; choose one with --run: {', '.join(runs)}")
        return root if root.is_file() else root / runs[0]
    matches = [name for name in runs if name == run.strip("/") or Path(name).name == run]
    if len(matches) != 1:
        found = "several runs match" if matches else "no run is named"
        raise MetricsLogError(f"--run {run}: {found} that in {root} (runs: {', '.join(runs)})")
    return root / matches[0]


def read(path: Path, run: str | None = None) -> ForeignRun:
    """The chosen run's scalars as contract records."""
    folder = choose_run(path, run)
    scalars = _scalars(folder)
    notes = []
    if folder.is_dir():
        for child in sorted(child for child in folder.iterdir() if child.is_dir() and any(child.glob(EVENT_FILE))):
            curve = add_scalars_curve(child)
            if curve is not None:
                name, points = curve
                scalars[name] = points
                notes.append(f"{child.name}/ read as the curve {name} of this run (SummaryWriter.add_scalars)")
    if not scalars:
        raise MetricsLogError(f"{folder}: the event files hold no scalars")
    rename = Renamer(scalars)
    series = {rename(tag): points for tag, points in scalars.items()}
    count = sum(len(steps) for steps, _ in scalars.values())
    return ForeignRun("tensorboard", folder, [run_start("tensorboard", run=str(folder))],
                      f"{len(scalars)} tags, {count} scalars; {rename.describe()}", notes=notes,
                      columns=columns_of(series))


def columns_of(series: dict[str, tuple[list, list]]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{key: (steps, values)}`` -> the loader's columns ``{key: (values, present)}``, one row per record.

    The same records :func:`~chapters.records.formats.split_by_kind` makes -- a training row per step with
    training keys, an eval row per step with eval keys (and the step's epoch) -- built with NumPy, because
    a million scalars as a million dicts take seconds. A step logged twice for one tag keeps the later value.
    """
    last = {}
    for name, (steps, values) in series.items():
        steps, values = np.asarray(steps, np.int64), np.asarray(values, float)
        order = np.argsort(steps, kind="stable")
        steps, values = steps[order], values[order]
        keep = np.r_[steps[1:] != steps[:-1], True]  # the last of each run of equal steps
        last[name] = steps[keep], values[keep]
    kinds = {name: is_eval_key(name) for name in last}
    empty = np.array([], np.int64)
    train_rows = np.unique(np.concatenate([empty, *(s for n, (s, _) in last.items() if not kinds[n] and n != "epoch")]))
    eval_rows = np.unique(np.concatenate([empty, *(s for n, (s, _) in last.items() if kinds[n])]))
    rows = np.concatenate([train_rows, eval_rows])
    columns = {"step": (rows.astype(float), np.ones(len(rows), bool))}
    for name, (steps, values) in last.items():
        column, present = np.full(len(rows), np.nan), np.zeros(len(rows), bool)
        parts = [(0, eval_rows)] if kinds[name] else [(0, train_rows)]
        if name == "epoch":  # the epoch goes on both kinds of record, as our trainer writes it
            parts.append((len(train_rows), eval_rows))
        elif kinds[name]:
            parts = [(len(train_rows), eval_rows)]
        for offset, part in parts:
            where = np.searchsorted(steps, part).clip(max=max(len(steps) - 1, 0))
            found = (steps[where] == part) if len(steps) else np.zeros(len(part), bool)
            column[offset:offset + len(part)][found] = values[where[found]]
            present[offset:offset + len(part)][found] = True
        columns[name] = column, present
    # Rows in step order, a step's training row before its eval row -- the order our trainer writes them. Left
    # as all training rows then all eval rows, the steps would go back once, which reads as a resumed run.
    order = np.lexsort((np.r_[np.zeros(len(train_rows)), np.ones(len(eval_rows))], rows))
    return {name: (values[order], present[order]) for name, (values, present) in columns.items()}


def _accumulated_scalars(folder: Path) -> dict[str, tuple[list[int], list[float]]]:
    """Every scalar, through TensorBoard's ``EventAccumulator`` (the reference path)."""
    from tensorboard.backend.event_processing import event_accumulator
    from tensorboard.util import tensor_util

    accumulator = event_accumulator.EventAccumulator(
        str(folder), size_guidance={event_accumulator.SCALARS: 0, event_accumulator.TENSORS: 0})
    try:
        accumulator.Reload()
    except Exception as err:  # the reader raises its own error classes for a damaged file
        raise MetricsLogError(f"{folder}: cannot read the event files ({type(err).__name__}: {err})") from None
    tags = accumulator.Tags()
    scalars = {tag: ([e.step for e in accumulator.Scalars(tag)], [e.value for e in accumulator.Scalars(tag)])
               for tag in tags["scalars"]}
    for tag in tags["tensors"]:  # TF2's tf.summary.scalar writes a 0-d tensor instead of a simple value
        points = [(event.step, tensor_util.make_ndarray(event.tensor_proto)) for event in accumulator.Tensors(tag)]
        if points and all(value.size == 1 and value.dtype.kind in "fiu" for _, value in points):
            scalars.setdefault(tag, ([step for step, _ in points], [float(value.reshape(())) for _, value in points]))
    return scalars


def _fast_scalars(files: list[Path]) -> dict[str, tuple[list[int], list[float]]] | None:
    """Every scalar of clean event files, or None to take the accumulator's path (see the module doc)."""
    from google.protobuf.message import DecodeError
    from tensorboard.compat.proto.event_pb2 import Event

    scalars: dict[str, tuple[list[int], list[float]]] = {}  # tag -> (steps, values)
    for file in files:
        raw = file.read_bytes()
        position = 0
        while position < len(raw):
            if position + 12 > len(raw):
                return None
            (length,) = struct.unpack_from("<Q", raw, position)
            end = position + 12 + length
            if end + 4 > len(raw):
                return None  # cut off mid-record (a run still writing): the accumulator decides
            try:
                event = Event.FromString(raw[position + 12:end])
            except DecodeError:
                return None
            position = end + 4
            for value in event.summary.value:
                if value.WhichOneof("value") != "simple_value":
                    if value.HasField("tensor"):
                        return None  # a tensor-valued scalar: the accumulator knows how to read it
                    continue  # text, images, histograms: not scalars
                steps, values = scalars.setdefault(value.tag, ([], []))
                steps.append(event.step)
                values.append(value.simple_value)
    if any(np.any(np.diff(steps) < 0) for steps, _ in scalars.values()):
        return None  # a restarted run, steps going back: the accumulator drops the abandoned steps
    return scalars
