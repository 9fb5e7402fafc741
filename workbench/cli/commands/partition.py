"""``workbench partition MODEL``: cut a model between a (simulated) accelerator and the CPU, print
the plan, and with ``-o`` write the compiled model (each device partition one CUSTOM op).
"""

from __future__ import annotations

import sys
from pathlib import Path

from ...errors import WorkbenchError
from ...schema import load, op_name
from ...schema.enums import BuiltinOperator
from .._common import EXIT_ERROR, EXIT_OK, _check_writable, _nonnegative, _write, _write_bytes
from ..describe import to_json


def _register_partition(sub) -> None:
    p = sub.add_parser("partition", help="cut a model between a (simulated) accelerator and the CPU",
                       description="Partition MODEL for a target with a strategy: every node's placement and "
                                   "the exact constraint that kept it on the CPU; with -o, write the compiled "
                                   "model (one custom op per partition, runnable by workbench.Interpreter).")
    p.add_argument("model", nargs="?", help="path of a .tflite file")
    p.add_argument("--target", default="xnnpack",
                   help="a shipped target (see --list-targets) or the path of a .json/.toml target file")
    p.add_argument("--strategy", default="tflite", choices=("tflite", "edgetpu", "tidl"))
    p.add_argument("--max-partitions", type=_nonnegative, default=0, metavar="K",
                   help="tflite / tidl: 0 = no limit; edgetpu: 0 = one region (the compiler's default), "
                        "K = up to K regions (the compiler's -a)")
    p.add_argument("--min-nodes", type=_nonnegative, default=0, metavar="N")
    p.add_argument("--deny", nargs="*", default=[], metavar="NODE|OP", help="node indices or op names kept on the CPU")
    p.add_argument("--cut-after", action="append", default=[], metavar="TENSOR",
                   help="end the device part at this tensor (repeatable): only its ancestors are offloaded, as the "
                        "TIDL import tool's output-tensor option does")
    p.add_argument("-o", "--output", metavar="OUT.tflite",
                   help="write the compiled model here, and beside it OUT.subgraph<k>.cfg: each offloaded "
                        "subgraph's boundary tensors, shapes, scales and zero points (the TI paper's subgraph0.cfg)")
    p.add_argument("--calibration", metavar="SAMPLES.npz[:KEY]",
                   help="with -o: frames to run the float model on, to set the boundary tensors' power-of-two "
                        "scales in the .cfg files")
    p.add_argument("--calibration-frames", type=_nonnegative, default=20, metavar="N",
                   help="how many calibration frames to use (default 20, TIDL's default)")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    p.add_argument("--list-targets", action="store_true", help="list the shipped targets and exit")
    p.set_defaults(run=_cmd_partition)


def _check_deny(model, deny: list[str]) -> list[str]:
    """``--deny`` items as given, each checked against subgraph 0 (the one partitioned): a node index
    in range, or an op name (builtin, or a custom op's code) that some operator of it has."""
    import difflib

    sg = (model.subgraphs or [None])[0]
    ops = [] if sg is None else [op_name(model.operator_codes[op.opcode_index]) for op in sg.operators or ()]
    for item in deny:
        if item.lstrip("-").isdigit():
            if not 0 <= int(item) < len(ops):
                raise WorkbenchError(f"--deny {item}: there is no node {item} (subgraph 0 has {len(ops)} operators, "
                                     f"nodes 0..{len(ops) - 1})" if ops else f"--deny {item}: subgraph 0 has no "
                                     f"operators")
        elif item not in ops:
            present = sorted(set(ops))
            if item in BuiltinOperator.__members__:
                what = f"the model has no {item} operator in subgraph 0"
            else:
                what = f"{item!r} is not an op name (a builtin such as CONV_2D, or a custom op's code)"
            close = difflib.get_close_matches(item, present, n=1) or \
                difflib.get_close_matches(item.upper(), present, n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise WorkbenchError(f"--deny {item}: {what}{hint} (its ops: {', '.join(present) or 'none'})")
    return list(deny)


def _cmd_partition(args) -> int:
    from ...partition import boundary_config, list_targets, load_target, partition
    from ...partition import compile as compile_plan
    from ...schema import dump

    if args.list_targets:
        for name in list_targets():
            t = load_target(name)
            sys.stdout.write(f"{name:<14} {len(t.ops):>3} ops  {t.description}\n")
        return EXIT_OK
    if not args.model:
        print("error: partition needs MODEL (or --list-targets)", file=sys.stderr)
        return EXIT_ERROR
    if args.output:
        _check_writable(args.output, "-o")
    model = load(args.model)
    deny = _check_deny(model, args.deny)
    plan = partition(model, args.target, args.strategy, deny=deny, max_partitions=args.max_partitions,
                     min_nodes=args.min_nodes, cut_after=args.cut_after)
    doc = plan.to_dict()
    doc["file"] = str(args.model)
    if args.calibration and not args.output:
        raise WorkbenchError("--calibration sets the scales of the compiled model's boundary: it needs -o OUT.tflite")
    if args.output:
        params = None
        if args.calibration:
            from ...delegate.boundary import boundary_params
            from ..inputs import _calibration_frames

            frames = _calibration_frames(args.calibration, args.model, args.calibration_frames or 20)
            params = boundary_params(plan, frames)
        compiled = compile_plan(plan, params=params)
        _write(args.output, "-o", _write_bytes(dump(compiled)))
        configs = []
        for p in plan.partitions:
            cfg = Path(args.output).with_suffix(f".subgraph{p.index}.cfg")
            _write(cfg, "-o", _write_bytes(boundary_config(compiled, p.index).encode("utf-8")))
            configs.append(str(cfg))
        doc["output"] = {"path": str(args.output), "tensors": len(compiled.subgraphs[0].tensors),
                         "operators": len(compiled.subgraphs[0].operators), "boundary_configs": configs,
                         "calibrated": bool(params)}
    if args.json:
        sys.stdout.write(to_json(doc) + "\n")
    else:
        text = repr(plan)
        est = doc["estimate_us"]
        text += (f"\n  estimate: {est['plan_us']:.1f} µs with the target vs {est['cpu_only_us']:.1f} µs on the CPU "
                 f"alone (simulated)")
        if args.output:
            o = doc["output"]
            text += f"\n  wrote {o['path']}: {o['operators']} operators, {o['tensors']} tensors"
            for cfg in o["boundary_configs"]:
                text += f"\n  wrote {cfg}: the boundary parameters" + ("" if o["calibrated"] else
                                                                      " (not calibrated: add --calibration)")
        sys.stdout.write(text + "\n")
    sys.stdout.flush()
    return EXIT_OK
