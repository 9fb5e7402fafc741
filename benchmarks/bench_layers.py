"""Per-node time, ours vs LiteRT's default interpreter (XNNPACK), on MobileNet v1 float32 and int8.

    python benchmarks/bench_layers.py [--runs 15] [--threads 1] [--top 0] [--model PATH ...]

ai-edge-litert's Python ``Interpreter`` exposes no per-op profile (its ``interpreter.py`` has no
profiler hook), so every executed node is cut out of the network into a one-op model: the node's
operator code, its tensors and the buffers of its constant inputs; its other inputs become the model's
inputs, its outputs the model's outputs.  Both runtimes run each one-op model on the values its inputs
hold inside the network (one invoke of ours on the seeded input, ``keep_intermediates``: a RESHAPE gets
the shape the network computes, a convolution real activations), the median of ``runs`` invokes after a
warm-up, alternating in rounds.  The table is sorted by
ours - theirs, largest first: where the time goes.  A one-op model pays each runtime's per-invoke
overhead once per node, which a whole network pays once; the "whole" row shows both, for scale.

``--overhead`` measures instead, inside one whole network of ours, where an invoke's time goes: each
executed node's call (its speed-layer path: Python dispatch, the kernel, any copy it makes) timed in
place on the network's own tensors, their sum, and the whole invoke; the difference is what an invoke
costs outside the nodes (the plan loop, entering and leaving the running state).  No flag in the
interpreter: the plan's calls are timed from here, so nothing changes when this is not running.

``--overhead --compare-threads N`` times every node that way with 1 and with N threads (two
interpreters of ours on the same input, alternating whole runs) and prints both times and the
speed-up t(1)/t(N), sorted by the time N threads lose against a perfect t(1)/N.  ``--v2`` adds
MobileNet v2 1.0/224 float32 built in code (``benchmarks/mobilenet_v2_file.py``).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
MODELS = ROOT.parent / "shared" / "models"
DEFAULT_MODELS = ("mobilenet_v1_a10_224_float32.tflite", "mobilenet_v1_a10_224_int8.tflite")


def one_op_model(model, index: int):
    """Operator ``index`` of subgraph 0 as a model of its own (a :class:`workbench.schema.Model`), and the
    network's tensor indices its inputs stand for, in order."""
    from workbench import schema

    sg = model.subgraphs[0]
    op = sg.operators[index]
    used = [t for t in dict.fromkeys((*op.inputs, *op.outputs)) if t >= 0]
    tmap = {t: j for j, t in enumerate(used)}
    buffers, tensors, inputs, originals = [schema.Buffer()], [], [], []
    for t in used:
        meta = sg.tensors[t]
        data = bytes(schema.buffer_bytes(model, meta.buffer)) if meta.buffer else b""
        if data and t not in op.outputs:
            buffers.append(schema.Buffer(data=data))
            meta = dataclasses.replace(meta, buffer=len(buffers) - 1)
        else:
            meta = dataclasses.replace(meta, buffer=0)
            if t not in op.outputs:
                inputs.append(tmap[t])
                originals.append(t)
        tensors.append(meta)
    new_op = dataclasses.replace(op, opcode_index=0, inputs=tuple(tmap[t] if t >= 0 else -1 for t in op.inputs),
                                 outputs=tuple(tmap[t] for t in op.outputs), intermediates=())
    sub = schema.SubGraph(tensors=tuple(tensors), inputs=tuple(inputs), outputs=tuple(tmap[t] for t in op.outputs),
                          operators=(new_op,), name=f"node_{index}")
    return schema.Model(version=3, operator_codes=(model.operator_codes[op.opcode_index],), subgraphs=(sub,),
                        description=f"node {index} (workbench bench_layers)", buffers=tuple(buffers)), originals


def network_values(content: bytes) -> dict:
    """Every tensor of subgraph 0 after one invoke of the whole network (ours, the seeded input,
    ``keep_intermediates``): what each one-op model is fed, so that a node sees the values it sees inside
    the network (a RESHAPE its computed shape, a convolution its real activations)."""
    from workbench.interpreter import Interpreter

    it = Interpreter(model_content=content, keep_intermediates=True)
    it.allocate_tensors()
    seed(it)
    it.invoke()
    values = {}
    for d in it.get_tensor_details():
        try:
            values[d["index"]] = np.array(it.get_tensor(d["index"]))
        except Exception:           # a tensor with no value (an unused optional one)
            pass
    return values


def seed(it) -> None:
    rng = np.random.default_rng(0)
    for d in it.get_input_details():
        if d["dtype"] == np.float32:
            x = rng.uniform(-1, 1, d["shape"]).astype(np.float32)
        else:
            info = np.iinfo(d["dtype"])
            x = rng.integers(info.min, info.max + 1, d["shape"]).astype(d["dtype"])
        it.set_tensor(d["index"], x)


def pair(content: bytes, threads: int, feed: list | None = None):
    """Ours and LiteRT on ``content``, their inputs ``feed`` (arrays in input order) or seeded values."""
    from ai_edge_litert.interpreter import Interpreter as LiteRT

    from workbench.interpreter import Interpreter

    ours = Interpreter(model_content=content, num_threads=threads)
    theirs = LiteRT(model_content=content, num_threads=threads)
    for it in (ours, theirs):
        it.allocate_tensors()
        if feed is None:
            seed(it)
        else:
            for d, x in zip(it.get_input_details(), feed):
                it.set_tensor(d["index"], np.asarray(x, d["dtype"]).reshape(d["shape"]))
    return ours, theirs


def medians(its, runs: int, rounds: int = 3, warmup: int = 2) -> list[float]:
    for it in its:
        for _ in range(warmup):
            it.invoke()
    times = [[] for _ in its]
    for _ in range(rounds):
        for k, it in enumerate(its):
            for _ in range(max(1, -(-runs // rounds))):
                t0 = time.perf_counter()
                it.invoke()
                times[k].append(time.perf_counter() - t0)
    return [1000 * float(np.median(t)) for t in times]


def overhead(path: Path, runs: int, threads: int) -> None:
    """Per-node time inside the whole network (ours), the sum of the nodes and the whole invoke."""
    from workbench.interpreter import Interpreter

    it = Interpreter(model_content=path.read_bytes(), num_threads=threads)
    it.allocate_tensors()
    seed(it)
    sg = it._sg(0)
    ctx, plan = sg.context, sg.plan
    for _ in range(3):
        it.invoke()
    per_node = [[] for _ in plan]
    whole, bare = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        it.invoke()
        whole.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for fn, node, data in plan:         # the plan loop alone, as Subgraph.invoke runs it
            fn(ctx, node, data)
        bare.append(time.perf_counter() - t0)
        for k, (fn, node, data) in enumerate(plan):
            t0 = time.perf_counter()
            fn(ctx, node, data)
            per_node[k].append(time.perf_counter() - t0)
    med = [1000 * float(np.median(t)) for t in per_node]
    names = [getattr(fn, "name", type(fn).__name__) for fn, _, _ in plan]
    print(f"\n{path.name}, {threads} thread(s), ours in the whole network, median of {runs}")
    order = sorted(range(len(plan)), key=lambda k: -med[k])
    for k in order:
        node = plan[k][1]
        print(f"{node.index:4d} {med[k]:8.3f}  {node.op_name} [{names[k]}]")
    total, w, b = sum(med), 1000 * float(np.median(whole)), 1000 * float(np.median(bare))
    print(f"sum of the nodes {total:.3f} ms; the plan loop alone {b:.3f} ms; invoke() {w:.3f} ms; "
          f"outside the nodes: {w - total:.3f} ms ({100 * (w - total) / w:.1f} %), of which invoke() around the "
          f"loop {w - b:.3f} ms")


def compare_threads(path: Path, runs: int, threads: int) -> None:
    """Per-node time inside the whole network at 1 and at ``threads`` threads, side by side."""
    from workbench.interpreter import Interpreter

    its = []
    for n in (1, threads):
        it = Interpreter(model_content=path.read_bytes(), num_threads=n)
        it.allocate_tensors()
        seed(it)
        for _ in range(3):
            it.invoke()
        its.append(it)
    plans = [(it._sg(0).context, it._sg(0).plan) for it in its]
    times = [[[] for _ in plans[0][1]] for _ in its]
    whole = [[] for _ in its]
    for _ in range(runs):
        for j, it in enumerate(its):
            t0 = time.perf_counter()
            it.invoke()
            whole[j].append(time.perf_counter() - t0)
            ctx, plan = plans[j]
            for k, (fn, node, data) in enumerate(plan):   # right after its own invoke: the pool's threads
                t0 = time.perf_counter()                  # are as awake as in a run of the network
                fn(ctx, node, data)
                times[j][k].append(time.perf_counter() - t0)
    med = [[1000 * float(np.median(t)) for t in tj] for tj in times]
    names = [getattr(fn, "name", type(fn).__name__) for fn, _, _ in plans[0][1]]
    print(f"\n{path.name}, ours in the whole network, 1 vs {threads} threads, median of {runs}, "
          f"load {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"{'node':>4s} {'1 thr':>7s} {f'{threads} thr':>7s} {'speedup':>7s} {'lost ms':>7s}  op [path] output")
    order = sorted(range(len(names)), key=lambda k: -(med[1][k] - med[0][k] / threads))
    for k in order:
        node = plans[0][1][k][1]
        shape = "x".join(str(v) for v in plans[0][0].tensors[node.outputs[0]].shape) if node.outputs else ""
        print(f"{node.index:4d} {med[0][k]:7.3f} {med[1][k]:7.3f} {med[0][k] / max(med[1][k], 1e-9):7.2f} "
              f"{med[1][k] - med[0][k] / threads:7.3f}  {node.op_name} [{names[k]}] {shape}")
    w = [1000 * float(np.median(t)) for t in whole]
    print(f"sum of the nodes {sum(med[0]):.3f} / {sum(med[1]):.3f} ms; invoke() {w[0]:.3f} / {w[1]:.3f} ms "
          f"(speed-up {w[0] / w[1]:.2f})")


def describe(model, index: int, fast: str) -> str:
    from workbench import schema

    sg = model.subgraphs[0]
    op = sg.operators[index]
    name = schema.op_name(model.operator_codes[op.opcode_index])
    shape = tuple(sg.tensors[op.outputs[0]].shape)
    extra = ""
    opts = op.builtin_options
    if opts is not None and hasattr(opts, "stride_h"):
        extra = f" s{opts.stride_h}"
    w = op.inputs[1] if len(op.inputs) > 1 else -1
    if w >= 0:
        extra += " w" + "x".join(str(d) for d in sg.tensors[w].shape)
    return f"{name}{extra} -> {'x'.join(str(d) for d in shape)}  [{fast}]"


def main(argv=None) -> int:
    from workbench import schema

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--top", type=int, default=0, help="print only the first N rows (0: all)")
    ap.add_argument("--model", type=Path, action="append")
    ap.add_argument("--overhead", action="store_true", help="ours only: node times inside the whole network, "
                    "their sum and the whole invoke")
    ap.add_argument("--compare-threads", type=int, default=0, metavar="N",
                    help="with --overhead: node times at 1 and at N threads side by side")
    ap.add_argument("--v2", action="store_true", help="add MobileNet v2 1.0/224 float32 (built in code)")
    args = ap.parse_args(argv)
    paths = [m for m in (args.model or [MODELS / m for m in DEFAULT_MODELS]) if m.exists()]
    if args.v2:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import mobilenet_v2_file

        paths.append(mobilenet_v2_file.path())
    if args.overhead:
        for path in paths:
            if args.compare_threads > 1:
                compare_threads(path, args.runs, args.compare_threads)
            else:
                overhead(path, args.runs, args.threads)
        return 0
    for path in paths:
        model = schema.load(path.read_bytes())
        values = network_values(path.read_bytes())
        rows = []
        for index in range(len(model.subgraphs[0].operators)):
            try:
                one, originals = one_op_model(model, index)
                ours, theirs = pair(schema.dump(one), args.threads, [values[t] for t in originals])
                a, b = medians((ours, theirs), args.runs)
            except Exception as e:      # a node one of the runtimes cannot run on its own
                print(f"node {index}: skipped ({type(e).__name__}: {str(e)[:100]})")
                continue
            fast = ours.prepared()[0][1]
            rows.append((a - b, index, a, b, describe(model, index, fast)))
        whole = medians(pair(path.read_bytes(), args.threads), args.runs)
        rows.sort(reverse=True)
        print(f"\n{path.name}, {args.threads} thread(s), median of {args.runs} invokes of each one-op model")
        print(f"{'node':>4s} {'ours ms':>8s} {'xnnpack':>8s} {'diff':>7s} {'ratio':>6s}  op")
        for diff, index, a, b, text in rows[:args.top or None]:
            print(f"{index:4d} {a:8.3f} {b:8.3f} {diff:7.3f} {a / b:6.2f}  {text}")
        print(f"{'sum':>4s} {sum(r[2] for r in rows):8.3f} {sum(r[3] for r in rows):8.3f} "
              f"{sum(r[0] for r in rows):7.3f}")
        print(f"{'whole':>5s}{whole[0]:8.3f} {whole[1]:8.3f} {whole[0] - whole[1]:7.3f} {whole[0] / whole[1]:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
