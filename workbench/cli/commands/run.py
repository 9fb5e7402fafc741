"""``workbench run MODEL``: run a model with :class:`workbench.Interpreter` on seeded or given inputs,
optionally with a delegate, per-node steps, a Chrome trace and a profile.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np

from ...delegate.quantize import QuantizationWarning
from ...errors import WorkbenchError
from .._common import EXIT_OK, _check_writable, _nonnegative, _positive, _write
from ..inputs import SHAPE_HELP, _allocate_and_feed, _calibration_frames
from ..text import render_profile

CALIBRATION_ITERATIONS = 50     # TI's default (edgeai-tidl-tools examples/osrt_python/README.md)


def _register_run(sub) -> None:
    p = sub.add_parser("run", help="run a model with workbench.Interpreter (seeded or given inputs)",
                       description="Run MODEL once with workbench.Interpreter and summarize its outputs. "
                                   "Inputs are seeded random values unless given as NAME=FILE.npy. An input "
                                   "stored with -1 dimensions in its shape signature (e.g. audio of any "
                                   "length) runs at its stored shape unless resized, like litert's "
                                   "resize_tensor_input: by a given array's shape or by --shape. A model "
                                   "compiled by `workbench partition -o` runs as it is (the offload op is "
                                   "known to the default resolver). With --delegate TARGET the model runs with "
                                   "a simulated accelerator for that target applied as litert applies a "
                                   "delegate: the summary gives nodes per lane, partitions, bytes copied, the "
                                   "device's modeled time and the host's measured time.")
    p.add_argument("model", help="path of a .tflite file")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy | FILE.npz",
                   help="an input array (by tensor name or input position); repeatable; or one .npz holding "
                        "every input (by tensor name, or by position arr_0, arr_1, ...). An input whose shape "
                        "signature has -1 dimensions is resized to the array's shape first")
    p.add_argument("--delegate", metavar="TARGET",
                   help="apply a simulated accelerator for TARGET (a name from `workbench partition "
                        "--list-targets` or a target file)")
    p.add_argument("--mode", choices=["runtime", "compiled"], default=None,
                   help="with --delegate: runtime (default; the delegate claims the nodes its target's rules "
                        "accept and TFLite's partitioner cuts them, as a LiteRT delegate) or compiled (the "
                        "partitions of an offline compile with --strategy, what `workbench partition --strategy "
                        "S -o OUT.tflite` writes)")
    p.add_argument("--strategy", choices=["tflite", "tidl", "edgetpu"], default=None,
                   help="with --delegate: how the graph is cut (default tflite, TFLite's own partitioning); "
                        "tidl and edgetpu are offline compiles: only with --mode compiled")
    p.add_argument("--precision", choices=["float", "int8"], default=None,
                   help="with --delegate: float (the device runs the model's own kernels) or int8 (each partition "
                        "is calibrated into an int8 copy, the TIDL way; needs --calibration)")
    p.add_argument("--calibration", metavar="SAMPLES.npz[:KEY]",
                   help="with --precision int8: calibration frames from the training data, one array per model "
                        "input (by tensor name or arr_0, arr_1, ...) with the frames stacked on a first axis; "
                        ":KEY picks one array for a one-input model (e.g. digits_split.npz:x_train)")
    p.add_argument("--calibration-frames", type=_positive, default=20, metavar="N",
                   help="use the first N calibration frames (default 20, TI's advanced_options:calibration_frames)")
    p.add_argument("--calibration-iterations", type=_positive, default=CALIBRATION_ITERATIONS, metavar="N",
                   help=f"with --precision int8: 1 = ranges only, each further one a bias-calibration pass (default "
                        f"{CALIBRATION_ITERATIONS}; TI's advanced_options:calibration_iterations defaults to 50)")
    p.add_argument("--quantization-scale-type", type=int, choices=[0, 1], default=0,
                   help="with --precision int8: TI's advanced_options:quantization_scale_type: 0 (default) "
                        "non-power-of-2 weight scales, 1 power-of-2; feature maps always get power-of-2 scales "
                        "and tensors after a ReLU are stored unsigned")
    p.add_argument("--trace", metavar="TRACE.json",
                   help="write the run as Chrome trace / Perfetto JSON (a host lane and, with --delegate, a "
                        "device lane)")
    p.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...",
                   help=SHAPE_HELP)
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--steps", action="store_true", help="print one line per executed node")
    p.add_argument("--profile", type=_nonnegative, default=0, metavar="RUNS",
                   help="also time RUNS invokes per node (benchmark_model-like tables)")
    p.add_argument("--save", metavar="OUT.npz", help="write the outputs (by output name) to an .npz")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    p.set_defaults(run=_cmd_run)


def _array_summary(name: str, a) -> dict:
    flat = np.asarray(a).reshape(-1)
    numeric = flat.dtype.kind in "biuf" and flat.size
    f = flat.astype(np.float64) if numeric else None
    return {"name": name, "dtype": str(flat.dtype), "shape": list(np.shape(a)),
            "min": _finite(float(f.min())) if numeric else None, "max": _finite(float(f.max())) if numeric else None,
            "mean": _finite(float(f.mean())) if numeric else None,
            "first": [_finite(float(x)) if numeric else str(x) for x in flat[:6]]}


def _finite(x: float):
    return x if np.isfinite(x) else repr(x)


def _run_delegate(args):
    """The delegate of ``run --delegate`` (bad target or options: a usage error)."""
    from ...delegate import load_delegate

    if args.delegate is None:
        for flag, value in (("--strategy", args.strategy), ("--mode", args.mode), ("--precision", args.precision),
                            ("--calibration", args.calibration)):
            if value is not None:
                raise WorkbenchError(f"{flag} needs --delegate TARGET")
        return None
    if args.precision == "int8" and args.calibration is None:
        raise WorkbenchError("--precision int8 needs --calibration SAMPLES.npz (frames from the training data)")
    if args.calibration is not None and args.precision != "int8":
        raise WorkbenchError("--calibration is for --precision int8")
    options = {"strategy": args.strategy} if args.strategy else {}
    if args.mode:
        options["mode"] = args.mode
    try:
        d = load_delegate(args.delegate, options)
    except ValueError as exc:
        raise WorkbenchError(f"--delegate {args.delegate}: " + "; ".join(str(exc).splitlines())) from None
    if args.precision == "int8":
        from ...delegate import SimulatedAccelerator

        frames = _calibration_frames(args.calibration, args.model, args.calibration_frames)
        d = SimulatedAccelerator(d.target, strategy=d.strategy, mode=d.mode, precision="int8", calibration=frames,
                                 calibration_iterations=args.calibration_iterations,
                                 quantization_scale_type=args.quantization_scale_type,
                                 progress=not args.json and sys.stderr.isatty())
    return d


def _delegation_summary(it, delegate, events, host_ms: float) -> dict:
    """What ``run --delegate`` reports: nodes per lane, partitions, bytes copied, modeled and measured time."""
    plans = it.delegations[0][1].plans if it.delegations and it.delegations[0][1] is not None else {}
    places = it.placements()
    lanes = {"device": sum(p.lane == "device" for p in places), "cpu": sum(p.lane == "cpu" for p in places)}
    reasons: dict = {}
    for p in places:
        if p.lane == "cpu":
            reasons[p.code] = reasons.get(p.code, 0) + 1
    parts = [{"subgraph": s, "partition": p.index, "nodes": list(p.nodes), "est_us": round(p.est_us, 3)}
             for s, plan in sorted(plans.items()) for p in plan.partitions]
    copies = [e for e in events if e.kind in ("copy in", "copy out")]
    device_ms = sum(e.modeled_ms or 0.0 for e in events if e.kind == "delegate")
    return {"delegate": delegate.name, "target": delegate.target.name, "strategy": delegate.strategy,
            "mode": getattr(delegate, "mode", "runtime"),
            "precision": getattr(delegate, "precision", "float"),
            "nodes": lanes, "cpu_reasons": dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
            "partitions": parts, "bytes_copied": {"in": sum(e.bytes for e in copies if e.kind == "copy in"),
                                                  "out": sum(e.bytes for e in copies if e.kind == "copy out")},
            "device_ms_modeled": round(device_ms, 6), "host_ms_measured": round(host_ms, 6),
            "log": list(it.delegate_log)}


def _untaken_note(target: str, places) -> str | None:
    """When a delegate claims no node, LiteRT runs the whole model on the CPU (and logs no "Replacing"
    line: ``tensorflow/lite/core/subgraph.cc`` ReplaceNodeSubsetsWithDelegateKernels ignores an empty
    node set). One note says so and groups the refusals by reason code, with the first reason of each."""
    if any(p.lane == "device" for p in places):
        return None
    groups: dict = {}
    for p in places:
        groups.setdefault(p.code, []).append(p)
    parts = [f"{len(g)} × {code} (e.g. node {g[0].node}: {g[0].reason})"
             for code, g in sorted(groups.items(), key=lambda kv: -len(kv[1]))]
    return (f"--delegate {target} took none of the model's {len(places)} node(s), so the whole model ran on the "
            f"CPU, as LiteRT runs it: " + "; ".join(parts))


def _cmd_run(args) -> int:
    from ...interpreter import Interpreter

    if args.save:
        _check_writable(args.save, "--save")
    if args.trace:
        _check_writable(args.trace, "--trace")
    delegate = _run_delegate(args)
    with warnings.catch_warnings(record=True) as caught:      # int8: what the calibration flags, named by node
        warnings.simplefilter("always", QuantizationWarning)
        it = Interpreter(model_path=args.model, experimental_delegates=[delegate] if delegate else None)
    flagged = [str(w.message) for w in caught if issubclass(w.category, QuantizationWarning)]
    for w in caught:
        if not issubclass(w.category, QuantizationWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    untaken = _untaken_note(args.delegate, it.placements()) if delegate is not None else None
    _allocate_and_feed(it, args.input, args.shape, args.seed)
    steps = []
    events = []
    if args.steps or args.trace or delegate is not None:
        events = list(it.steps())
        for e in events if args.steps else ():
            steps.append({"subgraph": e.subgraph, "node": e.node, "op": e.op, "version": e.version,
                          "kernel": e.kernel, "lane": e.lane, "kind": e.kind, "ms": round(e.elapsed_ms, 4),
                          "modeled_ms": None if e.modeled_ms is None else round(e.modeled_ms, 6),
                          "bytes": e.bytes,
                          "outputs": [None if o is None else list(o.shape) for o in e.outputs]})
    else:
        it.invoke()
    outputs = {d["name"]: it.get_tensor(d["index"]) for d in it.get_output_details()}
    if args.save:
        _write(args.save, "--save", lambda path: np.savez(path, **outputs))
    if args.trace:
        from ...delegate.trace import chrome_trace

        doc_trace = json.dumps(chrome_trace(events, name=Path(args.model).name))
        _write(args.trace, "--trace", lambda path: Path(path).write_text(doc_trace, encoding="utf-8"))
    doc = {"file": args.model, "outputs": [_array_summary(n, a) for n, a in outputs.items()]}
    if delegate is not None:
        host_ms = sum(e.elapsed_ms for e in events if e.lane == "host" and e.kind == "node" and not e.callers)
        doc["delegation"] = _delegation_summary(it, delegate, events, host_ms)
        if untaken:
            doc["delegation"]["note"] = untaken
        if flagged:
            doc["delegation"]["warnings"] = flagged
    if args.steps:
        doc["steps"] = steps
    profile = it.profile(runs=args.profile) if args.profile else None
    if args.json:
        json.dump(doc, sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
        return EXIT_OK
    out = []
    for st in steps:
        if st["kind"] in ("copy in", "copy out", "stream"):
            out.append(f"{st['subgraph']}:{st['node']:<4} {'  [device] ' + st['kind']:<28}      "
                       f"{st['kernel'][:30]:<30} {st['modeled_ms']:>9.3f} ms modeled, {st['bytes']:,} bytes")
            continue
        lane = "  [device] " if st["lane"] == "device" else ""
        modeled = "" if st["modeled_ms"] is None else f" ({st['modeled_ms']:.3f} ms modeled)"
        out.append(f"{st['subgraph']}:{st['node']:<4} {lane + st['op']:<28} v{st['version']:<3} {st['kernel']:<30} "
                   f"{st['ms']:>9.3f} ms{modeled} -> {st['outputs']}")
    if "delegation" in doc:
        s = doc["delegation"]
        out += s["log"]
        how = f"{s['target']}/{s['strategy']}" + (" compiled" if s["mode"] == "compiled" else "")
        out.append(f"{s['delegate']} ({how}, {s['precision']}): {s['nodes']['device']} node(s) "
                   f"on the device in "
                   f"{len(s['partitions'])} partition(s), {s['nodes']['cpu']} on the CPU")
        for r, n in s["cpu_reasons"].items():
            out.append(f"  cpu: {n} × {r}")
        if "note" in s:
            out.append(f"note: {s['note']}")
        out += [f"warning: {w}" for w in s.get("warnings", ())]
        out.append(f"  copied: {s['bytes_copied']['in']:,} bytes in, {s['bytes_copied']['out']:,} bytes out")
        out.append(f"  device: {s['device_ms_modeled']:.3f} ms (modeled from {s['target']}'s cost figures); "
                   f"host: {s['host_ms_measured']:.3f} ms (measured)")
    for o in doc["outputs"]:
        out.append(f"output {o['name']}: {o['dtype']}{o['shape']} min {o['min']} max {o['max']} "
                   f"mean {o['mean']} first {o['first']}")
    if profile is not None:
        out.append(render_profile(profile))
    sys.stdout.write("\n".join(out) + "\n")
    return EXIT_OK
