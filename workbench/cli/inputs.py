"""Inputs for ``run`` and ``bench``: ``--input NAME=FILE`` (.npy / .npz), ``--shape NAME=D,D,…``,
seeded random inputs, and the calibration frames of ``--precision int8``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..errors import ModelError, UnsupportedOpError, WorkbenchError
from ..schema import builtin_code
from ..schema.enums import BuiltinOperator
from ._common import _one_line

SHAPE_HELP = ("resize an input before allocating (by tensor name or input position), e.g. --shape x=1,1280; "
              "only the -1 dimensions of its shape signature may change; a seeded input gets this shape; "
              "repeatable")


def _input_position(details, key: str, flag: str) -> int:
    pos = next((i for i, d in enumerate(details) if d["name"] == key), None)
    if pos is None and key.isdigit() and int(key) < len(details):
        pos = int(key)
    if pos is None:
        names = ", ".join(d["name"] for d in details)
        raise WorkbenchError(f"{flag} {key!r}: the model has no such input (inputs: {names})")
    return pos


def _parse_shape(spec: str) -> tuple[str, tuple]:
    key, sep, dims = spec.partition("=")
    try:
        shape = tuple(int(v) for v in dims.replace("x", ",").split(",") if v.strip() != "") if sep else None
    except ValueError:
        shape = None
    if not sep or shape is None or any(d < 0 for d in shape):
        raise WorkbenchError(f"--shape {spec!r}: expected NAME=D0,D1,... with dimensions >= 0 (e.g. x=1,1280)")
    return key, shape


def _unknown_rank(it, d) -> bool:
    """Whether input ``d`` is stored with an unknown rank (``has_rank`` false, no shape): any shape fits it,
    as litert's resize_tensor_input (not strict) allows."""
    t = it.model.subgraphs[0].tensors[d["index"]]
    return not t.has_rank and not t.shape and not t.shape_signature


def _resize(it, d, shape: tuple, why: str) -> None:
    """Resize input ``d`` to ``shape`` if it differs, as litert's resize_tensor_input(strict=True) allows
    (an input of unknown rank takes any shape, as litert's resize_tensor_input does)."""
    current = tuple(int(v) for v in d["shape"])
    if shape == current:
        return
    if _unknown_rank(it, d):
        it.resize_tensor_input(d["index"], list(shape))
        return
    sig = tuple(int(v) for v in d["shape_signature"])
    if len(shape) != len(sig):
        raise WorkbenchError(f"{why}: input '{d['name']}' has rank {len(sig)} (shape {list(current)}, shape "
                             f"signature {list(sig)}); {list(shape)} has rank {len(shape)}")
    fixed = [k for k, (s, v) in enumerate(zip(sig, shape)) if s != -1 and s != v]
    if fixed:
        k = fixed[0]
        raise WorkbenchError(f"{why}: input '{d['name']}' has shape {list(current)} and shape signature {list(sig)}: "
                             f"dimension {k} is fixed at {sig[k]} and cannot become {shape[k]} (only -1 dimensions "
                             f"can be resized)")
    it.resize_tensor_input(d["index"], list(shape), strict=True)


_NPY_MAGIC = b"\x93NUMPY"


def _load_input(key: str, path: str, d) -> np.ndarray:
    """The array of ``--input NAME=FILE.npy`` for input ``d``; a file that is not a .npy array of the
    input's kind is a usage error that names the file and says what is wrong with it."""
    where = f"--input {key}"
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(_NPY_MAGIC))
    except OSError as exc:
        raise WorkbenchError(f"{where}: cannot read {path}: {exc.strerror or _one_line(exc)}") from None
    if head[:4] == b"PK\x03\x04":
        raise WorkbenchError(f"{where}: {path} is an .npz archive (np.savez); give one array saved with np.save")
    if head != _NPY_MAGIC:
        what = "an empty file" if not head else "not a .npy file (it does not start with numpy's \\x93NUMPY magic)"
        raise WorkbenchError(f"{where}: {path} is {what}; save the array with np.save")
    try:
        a = np.load(path, allow_pickle=False)
    except ValueError as exc:
        if "Object arrays" in str(exc):
            raise WorkbenchError(f"{where}: {path} holds an object array (pickled Python objects), not "
                                 f"numbers") from None
        raise WorkbenchError(f"{where}: {path} is a truncated or corrupt .npy file ({_one_line(exc)})") from None
    except EOFError as exc:
        raise WorkbenchError(f"{where}: {path} is a truncated .npy file ({_one_line(exc)})") from None
    return _check_input_array(where, path, a, d)


def _check_input_array(where: str, source: str, a, d) -> np.ndarray:
    """An input array given on the command line, checked against input ``d``'s kind."""
    want = np.dtype(d["dtype"])
    if want.kind == "S":                    # a STRING input: set_tensor takes bytes and str
        if a.dtype.kind not in "SU":
            raise WorkbenchError(f"{where}: {source} holds a {a.dtype} array; input '{d['name']}' is a STRING "
                                 f"tensor (give an array of bytes or str)")
        return a
    if a.dtype.kind not in "biufc":
        raise WorkbenchError(f"{where}: {source} holds a {a.dtype} array, not numbers; input '{d['name']}' is "
                             f"{want}")
    if a.dtype != want:
        raise WorkbenchError(f"{where}: {source} holds a {a.dtype} array; input '{d['name']}' is {want} "
                             f"(save it with .astype(np.{want.name}))")
    return a


def _load_npz_inputs(path: str, details) -> dict:
    """``--input FILE.npz``: input position → array, the archive's keys being input names or arr_0, arr_1 …
    (np.savez's names for arrays given by position); every input must be there."""
    where = f"--input {path}"
    try:
        archive = np.load(path, allow_pickle=False)
    except OSError as exc:
        raise WorkbenchError(f"{where}: cannot read {path}: {exc.strerror or _one_line(exc)}") from None
    except (ValueError, EOFError):
        raise WorkbenchError(f"{where}: {path} is not an .npz archive; it must be one written by np.savez holding "
                             f"the calibration frames of each model input, stacked on a first axis (one array per "
                             f"input, named after the input or arr_0, arr_1, ...; or pick one array with "
                             f"{path}:KEY)") from None
    if not hasattr(archive, "files"):
        raise WorkbenchError(f"{where}: {path} is a single .npy array; give it as NAME={path}")
    names = [d["name"] for d in details]
    out: dict = {}
    with archive:
        for key in archive.files:
            if key in names:
                pos = names.index(key)
            elif re.fullmatch(r"arr_\d+", key) and int(key[4:]) < len(details):
                pos = int(key[4:])
            else:
                raise WorkbenchError(f"{where}: {path} holds '{key}', which names no input (inputs: "
                                     f"{', '.join(names)}, or arr_0 … arr_{len(names) - 1} by position)")
            if pos in out:
                raise WorkbenchError(f"{where}: {path} gives input '{names[pos]}' twice")
            try:
                a = archive[key]
            except ValueError as exc:
                raise WorkbenchError(f"{where}: {path}['{key}'] cannot be read without pickle "
                                     f"({_one_line(exc)})") from None
            out[pos] = _check_input_array(where, f"{path}['{key}']", a, details[pos])
    missing = [names[k] for k in range(len(names)) if k not in out]
    if missing:
        raise WorkbenchError(f"{where}: {path} has no array for input{'s' if len(missing) > 1 else ''} "
                             f"{', '.join(missing)} (it holds {', '.join(archive.files) or 'nothing'})")
    return out


def _kernel_missing(it) -> bool:
    """Whether some operator of the model has no kernel in the interpreter's resolver (allocate_tensors
    then fails on that, whatever the input shapes)."""
    for sg in it.model.subgraphs or ():
        for op in sg.operators or ():
            oc = it.model.operator_codes[op.opcode_index]
            try:
                code = builtin_code(oc)
                op = oc.custom_code if code == BuiltinOperator.CUSTOM else BuiltinOperator(code)
                it.resolver.find(op, int(oc.version))
            except (UnsupportedOpError, ValueError):
                return True
    return False


def _shape_hint(it, details, given) -> str:
    """For an allocation that failed while preparing a node: the inputs that run at a stored shape
    which --shape or an --input array could change."""
    hints = []
    for k, d in enumerate(details):
        if k in given:
            continue
        shape, sig = [int(v) for v in d["shape"]], [int(v) for v in d["shape_signature"]]
        if _unknown_rank(it, d):
            hints.append(f"input '{d['name']}' has unknown rank and runs as a scalar unless given a shape with "
                         f"--shape {d['name']}=... or an --input array")
        elif -1 in sig:
            hints.append(f"input '{d['name']}' has shape signature {sig} and runs at its stored shape {shape} "
                         f"unless resized with --shape {d['name']}=... or an --input array")
    return "; ".join(hints)


def _allocate_and_feed(it, input_specs: list[str], shape_specs: list[str], seed: int) -> list:
    """Resize the inputs asked for (``--shape``, or a given array's shape), allocate, then set every input:
    the given arrays, seeded random values for the others."""
    from ..bench import random_inputs

    details = it.get_input_details()
    arrays, shapes = {}, {}
    for spec in shape_specs:
        key, shape = _parse_shape(spec)
        shapes[_input_position(details, key, "--shape")] = (shape, f"--shape {spec}")
    given = []
    for spec in input_specs:
        key, sep, path = spec.partition("=")
        if not sep:
            if not spec.lower().endswith(".npz"):
                raise WorkbenchError(f"--input {spec!r}: expected NAME=FILE.npy, or one FILE.npz holding every input")
            given += [(k, spec, a) for k, a in _load_npz_inputs(spec, details).items()]
            continue
        pos = _input_position(details, key, "--input")
        given.append((pos, spec, _load_input(key, path, details[pos])))
    for pos, spec, array in given:
        key = details[pos]["name"]
        if pos in arrays:
            raise WorkbenchError(f"--input {spec!r}: input '{key}' is given twice")
        arrays[pos] = array
        shape = tuple(arrays[pos].shape)
        if pos in shapes and shapes[pos][0] != shape:
            raise WorkbenchError(f"--input {spec!r}: the array has shape {list(shape)}, but {shapes[pos][1]} asks "
                                 f"for {list(shapes[pos][0])}")
        shapes[pos] = (shape, f"--input {key} (an array of shape {list(shape)})")
    for pos, (shape, why) in shapes.items():
        _resize(it, details[pos], shape, why)
    try:
        it.allocate_tensors()
    except WorkbenchError as exc:
        # the hint is about shapes: not for a malformed file or an op without a kernel
        hint = "" if isinstance(exc, ModelError) or _kernel_missing(it) else _shape_hint(it, details, shapes)
        if not hint:
            raise
        raise WorkbenchError(f"{exc} (hint: {hint})") from None
    details = it.get_input_details()
    values = random_inputs(details, seed) if len(arrays) < len(details) else [None] * len(details)
    for k, a in arrays.items():
        values[k] = a
    for d, v in zip(details, values):
        it.set_tensor(d["index"], v)
    return values


def _calibration_frames(spec: str, model_path: str, limit: int) -> list:
    """``--calibration FILE.npz[:KEY]`` → a list of frames (one array per model input each)."""
    from ..interpreter import Interpreter

    path, _, key = spec.partition(":") if not Path(spec).exists() else (spec, "", "")
    where = f"--calibration {spec}"
    details = Interpreter(model_path=model_path).get_input_details()
    try:
        archive = np.load(path, allow_pickle=False)
    except OSError as exc:
        raise WorkbenchError(f"{where}: cannot read {path}: {exc.strerror or _one_line(exc)}") from None
    except (ValueError, EOFError):
        raise WorkbenchError(f"{where}: {path} is not an .npz archive; it must be one written by np.savez holding "
                             f"the calibration frames of each model input, stacked on a first axis (one array per "
                             f"input, named after the input or arr_0, arr_1, ...; or pick one array with "
                             f"{path}:KEY)") from None
    if not hasattr(archive, "files"):
        raise WorkbenchError(f"{where}: {path} is one .npy array; give an .npz (np.savez) of the frames")
    with archive:
        if key:
            if key not in archive.files:
                raise WorkbenchError(f"{where}: {path} has no array '{key}' (it holds {', '.join(archive.files)})")
            if len(details) != 1:
                raise WorkbenchError(f"{where}: :KEY picks one array, but the model has {len(details)} inputs")
            stacks = {0: archive[key]}
        else:
            names = [d["name"] for d in details]
            stacks = {}
            for k in archive.files:
                pos = names.index(k) if k in names else (int(k[4:]) if re.fullmatch(r"arr_\d+", k) else None)
                if pos is None or pos >= len(details):
                    raise WorkbenchError(f"{where}: {path} holds '{k}', which names no input (inputs: "
                                         f"{', '.join(names)}; or pick one array with {path}:KEY)")
                stacks[pos] = archive[k]
            missing = [names[k] for k in range(len(names)) if k not in stacks]
            if missing:
                raise WorkbenchError(f"{where}: {path} has no frames for input {', '.join(missing)}")
    counts = set()
    for pos, a in stacks.items():
        d = details[pos]
        shape = tuple(int(v) for v in d["shape"])
        if a.dtype.kind not in "biuf" or a.ndim != len(shape) or tuple(a.shape[1:]) != shape[1:]:
            raise WorkbenchError(f"{where}: frames for input '{d['name']}' should be an array of numbers of shape "
                                 f"[N, {', '.join(map(str, shape[1:]))}] (frames stacked on the first axis), "
                                 f"got {a.dtype} {list(a.shape)}")
        counts.add(a.shape[0] // max(shape[0], 1))
    if len(counts) != 1 or not min(counts):
        raise WorkbenchError(f"{where}: the inputs have different numbers of frames, or none ({sorted(counts)})")
    n = min(min(counts), limit)
    frames = []
    for i in range(n):
        frame = []
        for pos in range(len(details)):
            b = max(int(details[pos]["shape"][0]), 1)
            frame.append(stacks[pos][i * b:(i + 1) * b].astype(details[pos]["dtype"]))
        frames.append(frame)
    return frames
