"""What delegation costs the host: a float-precision delegated run against the CPU-only run.

    python benchmarks/bench_delegate.py [MODEL.tflite] [--target xnnpack] [--strategy tflite] [--runs 30]

Both interpreters run in this process, alternately, on the same input, 1 thread, tracing off; the
precompiled kernel library is used when it is built (``workbench precompile --status``).  Prints the
median invoke time of each and the ratio (goal for MobileNet v1 1.0/224 float: ≤ 1.2×), and checks the
outputs are identical.  The delegated run's extra work is the boundary copies and the partition's own
interpreter; the device's modeled time is reported beside it, not added.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
DEFAULT = ROOT.parent / "shared" / "models" / "mobilenet_v1_a10_224_float32.tflite"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", nargs="?", default=str(DEFAULT))
    ap.add_argument("--target", default="xnnpack")
    ap.add_argument("--strategy", default="tflite")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)

    import workbench
    from workbench.delegate import SimulatedAccelerator
    from workbench.perf import precompiled

    model = workbench.load(args.model)
    cpu = workbench.Interpreter(model=model)
    # tflite: a runtime delegate; another strategy is an offline compile (the delegate's compiled mode)
    d = SimulatedAccelerator(args.target, strategy=args.strategy,
                             mode="runtime" if args.strategy == "tflite" else "compiled")
    dele = workbench.Interpreter(model=model, experimental_delegates=[d])
    rng = np.random.default_rng(0)
    for it in (cpu, dele):
        it.allocate_tensors()
    xs = [rng.uniform(-1, 1, x["shape"]).astype(x["dtype"]) for x in cpu.get_input_details()]
    for it in (cpu, dele):
        for det, x in zip(it.get_input_details(), xs):
            it.set_tensor(det["index"], x)
        it.invoke()
    outs = [[it.get_tensor(det["index"]) for det in it.get_output_details()] for it in (cpu, dele)]
    same = all(np.array_equal(a, b) for a, b in zip(*outs))
    times = {"cpu": [], "delegated": []}
    for _ in range(args.rounds):
        for name, it in (("cpu", cpu), ("delegated", dele)):
            for _ in range(args.runs):
                t0 = time.perf_counter()
                it.invoke()
                times[name].append(time.perf_counter() - t0)
    med = {k: float(np.median(v)) * 1000 for k, v in times.items()}
    plan = dele.delegations[0][1].plans[0]
    status = precompiled.status()
    print(f"{Path(args.model).name}: {plan.offloaded}/{len(plan.placements)} nodes on {args.target}/{args.strategy} "
          f"in {len(plan.partitions)} partition(s); "
          f"precompiled library {'in use' if status.get('built') else 'absent'}")
    print(f"  CPU only         {med['cpu']:8.2f} ms (median of {len(times['cpu'])}, measured)")
    print(f"  delegated        {med['delegated']:8.2f} ms (median of {len(times['delegated'])}, measured)")
    print(f"  ratio            {med['delegated'] / med['cpu']:8.3f}x   (goal <= 1.2x)")
    print(f"  device, modeled  {plan.estimate()['target_us'] / 1000:8.2f} ms per run (the target's cost figures)")
    print(f"  outputs identical: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
