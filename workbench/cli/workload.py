"""The models ``workbench precompile`` runs, so that every kernel specialisation they reach is compiled."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def precompile_notes(manifest: dict) -> str:
    """What a build left out, worded as the notes they are: the build succeeded either way."""
    out = []
    skipped_models, kept = manifest.get("workload_failures") or [], manifest.get("skipped") or []
    if skipped_models:
        out.append(f"note: {len(skipped_models)} workload model(s) skipped (expected, not a failure: they cannot "
                   f"run on seeded random inputs as they are, so they add no kernels; the library is built from "
                   f"the others):")
        out += [f"  skipped {line}" for line in skipped_models]
    if kept:
        out.append(f"note: {len(kept)} kernel specialisation(s) stay with numba (compiled when first used):")
        out += [f"  {line}" for line in kept]
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------
# the precompile workload (workbench.perf knows no models: the command line hands it this one)


def precompile_models(folders=(), files=(), corpus: bool = True) -> tuple[list[Path], list[str]]:
    """The models the kernel library is built from, and one line per source saying where they came
    from: the corpus models already in the cache (``python -m workbench.corpus`` fetches them; nothing
    is downloaded here), the ``*.tflite`` files of each folder named (``--models DIR``), and the files
    named.  Nothing is looked up beside the package: an installed wheel has no ``sample_models``."""
    from ..corpus import MODELS, cache_dir
    from ..errors import WorkbenchError

    models: list[Path] = []
    sources: list[str] = []
    if corpus:
        cached = [p for p in (cache_dir() / f"{name}.tflite" for name in sorted(MODELS)) if p.exists()]
        models += cached
        sources.append(f"corpus cache {cache_dir()}: {len(cached)} of {len(MODELS)} model(s)")
    for folder in map(Path, folders):
        if not folder.is_dir():
            raise WorkbenchError(f"--models {folder}: not a folder")
        found = sorted(folder.glob("*.tflite"))
        models += found
        sources.append(f"folder {folder}: {len(found)} model(s)")
    if files:
        models += [Path(f) for f in files]
        sources.append(f"named on the command line: {len(files)} model(s)")
    return models, sources


def precompile_workload(models, log=print) -> list[str]:
    """Run each model once on seeded inputs with the fast kernels; the models that failed, and why."""
    from ..bench import random_inputs
    from ..corpus import INPUT_SHAPES
    from ..interpreter import Interpreter

    log(f"workload: {len(models)} model(s)")
    failed = []
    for path in models:
        try:
            it = Interpreter(model_path=str(path))
            for d, shape in zip(it.get_input_details(), INPUT_SHAPES.get(Path(path).stem, ())):
                it.resize_tensor_input(d["index"], list(shape))
            it.allocate_tensors()
            details = it.get_input_details()
            if any(np.dtype(d["dtype"]).kind not in "fiub" for d in details):
                raise ValueError("it has an input that is not numeric, e.g. STRING (the workload feeds random numbers)")
            for d, x in zip(details, random_inputs(details, seed=0)):
                it.set_tensor(d["index"], x)
            it.invoke()
        except Exception as exc:       # a model the workload cannot run teaches nothing; say which
            failed.append(f"{Path(path).name}: {type(exc).__name__}: {str(exc)[:200]}")
    return failed
