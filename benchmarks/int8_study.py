"""The int8 study: every real float model of the corpus on every target, offloaded in int8 the TIDL way.

    python benchmarks/int8_study.py [--frames 8] [--iterations 1] [--models NAME ...] [--targets T ...]

For each (model, target) pair it does what ``workbench run MODEL --delegate T --precision int8
--calibration FRAMES.npz`` does: a ``SimulatedAccelerator(T, precision="int8")`` calibrated on the
frames (seeded random inputs, the same generator as ``workbench run``), then the delegated model runs
on the same frames beside the float model on the CPU.  Per pair it records whether it ran (or the
error, with its type), how many nodes went to the device, the worst output's SNR in dB against the
float run (10·log10(Σx² / Σ(x − y)²), over every frame), the calibration's warnings, and, when the worst
output SNR is below ``--explain-below`` dB, the first device node whose error explodes
(:func:`workbench.delegate.error.first_explosion` over :func:`~workbench.delegate.node_errors`).

Writes ``benchmarks/results/int8_study.txt`` (a table and a summary) and ``int8_study.json`` (every pair).
Random inputs are not training data: a pair's SNR says how far the int8 copy strays on the frames it
was calibrated on, not a model's accuracy.

``--iterations``: TI's ``calibration_iterations``; ``workbench run`` defaults to TI's 50, which costs 50
runs of float and int8 per frame; the study's default is 1 (ranges only) — the catastrophic runs it
looks for come from ranges, not from bias calibration.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "benchmarks" / "results"


def float_models(paths: dict) -> list[str]:
    """Corpus models whose inputs are all float32 and whose main subgraph computes in float (no int8 or
    uint8 tensor other than constants: the mltk int8 models with a float input are left out)."""
    from workbench import load
    from workbench.partition import GraphView
    from workbench.schema.enums import TensorType

    out = []
    for name in sorted(paths):
        m = load(paths[name])
        sg, g = m.subgraphs[0], GraphView(m)
        inputs = [sg.tensors[t].type for t in sg.inputs or ()]
        if inputs and all(t == TensorType.FLOAT32 for t in inputs) and not any(
                t.type in (TensorType.INT8, TensorType.UINT8) and not g.static[k] for k, t in enumerate(sg.tensors)):
            out.append(name)
    return out


def _frames(model_path, n: int) -> list:
    """``n`` seeded random frames, ``workbench run``'s generator at the inputs' stored shapes (an input
    stored with a -1 dimension keeps its placeholder, as ``workbench run`` without ``--shape`` does)."""
    from workbench import Interpreter
    from workbench.bench import random_inputs

    details = Interpreter(model_path=str(model_path)).get_input_details()
    return [random_inputs(details, seed=k) for k in range(n)]


def _sized(it, frame):
    """``it`` with its inputs resized to the frame's shapes (a -1 dimension), then allocated."""
    for d, a in zip(it.get_input_details(), frame):
        if tuple(d["shape"]) != a.shape:
            it.resize_tensor_input(d["index"], list(a.shape))
    it.allocate_tensors()
    return it


def _outputs(it, frame) -> list:
    details = it.get_input_details()
    if any(tuple(d["shape"]) != a.shape for d, a in zip(details, frame)):
        for d, a in zip(details, frame):
            it.resize_tensor_input(d["index"], list(a.shape))
        it.allocate_tensors()
    for d, a in zip(it.get_input_details(), frame):
        it.set_tensor(d["index"], a)
    it.invoke()
    return [np.array(it.get_tensor(d["index"])) for d in it.get_output_details()]


def _snr(ref: list, got: list) -> float:
    x = np.concatenate([r.astype(np.float64).ravel() for r in ref])
    y = np.concatenate([g.astype(np.float64).ravel() for g in got])
    noise = float(np.sum((x - y) ** 2)) if np.all(np.isfinite(y)) else math.inf
    signal = float(np.sum(x * x))
    if noise == 0:
        return math.inf
    if signal == 0 or not math.isfinite(noise):
        return -math.inf
    return 10 * math.log10(signal / noise)


def study_pair(model_path, target: str, frames: list, iterations: int, explain_below: float) -> dict:
    from workbench import Interpreter
    from workbench.delegate import SimulatedAccelerator, node_errors
    from workbench.delegate.error import first_explosion
    from workbench.delegate.quantize import QuantizationWarning

    row: dict = {"target": target}
    t0 = time.perf_counter()
    try:
        cpu = _sized(Interpreter(model_path=str(model_path)), frames[0])
        refs = [_outputs(cpu, f) for f in frames]
        d = SimulatedAccelerator(target, precision="int8", calibration=frames, calibration_iterations=iterations)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", QuantizationWarning)
            it = _sized(Interpreter(model_path=str(model_path), experimental_delegates=[d]), frames[0])
        row["warnings"] = [str(w.message) for w in caught if issubclass(w.category, QuantizationWarning)]
        places = it.placements()
        row["device_nodes"] = sum(p.lane == "device" for p in places)
        row["nodes"] = len(places)
        gots = [_outputs(it, f) for f in frames]
        per_output = [_snr([r[k] for r in refs], [g[k] for g in gots]) for k in range(len(refs[0]))]
        row["ran"] = True
        row["worst_snr_db"] = min(per_output) if per_output else math.inf
        row["output_snr_db"] = per_output
        if row["device_nodes"] and row["worst_snr_db"] < explain_below:
            errs = node_errors(it, frames)
            first = first_explosion(errs)
            row["first_explosion"] = None if first is None else {
                "node": first.node, "op": first.op, "tensor": first.name, "snr_db": first.snr_db,
                "max_abs": first.max_abs, "note": first.note}
            # the same pair with per-channel weights (the earlier mode): does the cause lie in the weights?
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", QuantizationWarning)
                pc = SimulatedAccelerator(target, precision="int8", calibration=frames,
                                          calibration_iterations=iterations, scale_type="symmetric")
                it2 = _sized(Interpreter(model_path=str(model_path), experimental_delegates=[pc]), frames[0])
            got2 = [_outputs(it2, f) for f in frames]
            row["worst_snr_db_per_channel"] = min(_snr([r[k] for r in refs], [g[k] for g in got2])
                                                  for k in range(len(refs[0])))
    except Exception as exc:       # a study: every failure is a result (its type says whose it is)
        row["ran"] = False
        row["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    row["seconds"] = round(time.perf_counter() - t0, 2)
    return row


def _fmt_db(v) -> str:
    if v is None:
        return "-"
    if v == math.inf:
        return "inf"
    if v == -math.inf:
        return "-inf"
    return f"{v:.1f}"


def render(doc: dict) -> str:
    lines = ["int8 study: real float models x targets, int8 offload the TIDL way (workbench run --precision int8)",
             "=" * 100,
             f"machine: {doc['machine']}; {doc['date']}",
             f"frames: {doc['frames']} seeded random inputs per model (calibration = evaluation frames), "
             f"calibration_iterations {doc['iterations']}, quantization_scale_type 0 (TI's default mode)",
             "", f"{'model':<40} {'target':<13} {'ran':<4} {'device':>7} {'worst SNR dB':>13}  first explosion / error"]
    for r in doc["pairs"]:
        if r["ran"]:
            fe = r.get("first_explosion")
            what = (f"node {fe['node']} {fe['op']} ({fe['snr_db']:.1f} dB) {fe['tensor'][:40]}" if fe else "")
            if "worst_snr_db_per_channel" in r:
                what += f"; per-channel weights: {_fmt_db(r['worst_snr_db_per_channel'])} dB"
            if r.get("warnings"):
                what += f" [{len(r['warnings'])} warning(s)]"
            lines.append(f"{r['model']:<40} {r['target']:<13} {'yes':<4} {r['device_nodes']:>3}/{r['nodes']:<3} "
                         f"{_fmt_db(r['worst_snr_db']):>13}  {what}")
        else:
            lines.append(f"{r['model']:<40} {r['target']:<13} {'no':<4} {'':>7} {'':>13}  {r['error'][:160]}")
    s = doc["summary"]
    lines += ["", f"pairs: {s['pairs']}; ran: {s['ran']}; with a device node: {s['offloaded']}; errors: {s['errors']}",
              f"pairs below {doc['explain_below']:g} dB: {s['explained']}; the first exploding node is a "
              f"DEPTHWISE_CONV_2D / CONV_2D / FULLY_CONNECTED in {s['explained_weighted']}; with per-channel weights "
              f"the worst output SNR rises in {s['per_channel_better']} of them (median "
              f"{_fmt_db(s['median_worst_snr_db_per_channel'])} dB instead of "
              f"{_fmt_db(s['median_worst_snr_db_explained'])})",
              f"median worst-output SNR over the pairs that offloaded: {_fmt_db(s['median_worst_snr_db'])} dB; "
              f"below 0 dB: {s['below_0_db']}",
              "errors by type: " + ", ".join(f"{k} {v}" for k, v in s["errors_by_type"].items())]
    return "\n".join(lines) + "\n"


def summarize(pairs: list) -> dict:
    ran = [r for r in pairs if r["ran"]]
    off = [r for r in ran if r["device_nodes"]]
    snrs = sorted(r["worst_snr_db"] for r in off)
    by_type: dict = {}
    for r in pairs:
        if not r["ran"]:
            k = r["error"].split(":", 1)[0]
            by_type[k] = by_type.get(k, 0) + 1
    explained = [r for r in off if "worst_snr_db_per_channel" in r]
    weighted = [r for r in explained if (r.get("first_explosion") or {}).get("op") in
                ("DEPTHWISE_CONV_2D", "CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV")]
    return {"explained": len(explained), "explained_weighted": len(weighted),
            "per_channel_better": sum(1 for r in explained if r["worst_snr_db_per_channel"] > r["worst_snr_db"]),
            "median_worst_snr_db_explained": float(np.median([r["worst_snr_db"] for r in explained]))
            if explained else None,
            "median_worst_snr_db_per_channel": float(np.median([r["worst_snr_db_per_channel"] for r in explained]))
            if explained else None,
            "pairs": len(pairs), "ran": len(ran), "offloaded": len(off), "errors": len(pairs) - len(ran),
            "median_worst_snr_db": float(np.median(snrs)) if snrs else None,
            "below_0_db": sum(1 for v in snrs if v < 0), "errors_by_type": by_type}


def _json_safe(x):
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_json_safe(v) for v in x]
    return x


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--frames", type=int, default=8)
    p.add_argument("--iterations", type=int, default=1)
    p.add_argument("--models", nargs="*", help="corpus model names (default: every float model)")
    p.add_argument("--targets", nargs="*", help="targets (default: every target)")
    p.add_argument("--explain-below", type=float, default=10.0,
                   help="look for the first exploding node when the worst output SNR is below this many dB")
    p.add_argument("--out", default=str(RESULTS / "int8_study"))
    args = p.parse_args(argv)
    from workbench import corpus
    from workbench.partition import list_targets

    paths = corpus.fetch()
    models = args.models or float_models(paths)
    targets = args.targets or [t.name if hasattr(t, "name") else str(t) for t in list_targets()]
    pairs = []
    for name in models:
        frames = _frames(paths[name], args.frames)
        for target in targets:
            row = {"model": name, **study_pair(paths[name], target, frames, args.iterations, args.explain_below)}
            pairs.append(row)
            print(f"{name:<40} {target:<13} {'ran' if row['ran'] else 'error':<6} "
                  f"{_fmt_db(row.get('worst_snr_db')):>8} dB {row['seconds']:>7.1f} s "
                  f"{row.get('error', '')[:100]}", file=sys.stderr, flush=True)
    doc = {"machine": f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
                      f"numpy {np.__version__}",
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "frames": args.frames, "iterations": args.iterations, "explain_below": args.explain_below,
           "models": models, "targets": targets,
           "pairs": pairs, "summary": summarize(pairs)}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(_json_safe(doc), indent=1) + "\n", encoding="utf-8")
    out.with_suffix(".txt").write_text(render(doc), encoding="utf-8")
    print(render(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
