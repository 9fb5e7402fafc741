"""MobileNet v2 1.0/224 float32 as a .tflite file for the speed benchmarks, built in code.

    python benchmarks/mobilenet_v2_file.py            # writes it (once) and prints its path

No MobileNet v2 1.0/224 float file is in ../shared/models, and Google's converter (TensorFlow) is not
installed here.  ``benchmarks/table1.py``'s builder has the Keras application's layers (a test checks
them against Keras's 0.35/96 file); with a seed it draws weights scaled by fan-in, so a random input
keeps its size through the network.  Both runtimes of a benchmark run this same file, so the
comparison is fair; only its answers are meaningless (the weights are random).  The file goes into the
workbench's cache directory (``$XDG_CACHE_HOME/tflite-workbench/bench``), not into the repository.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for p in (str(ROOT), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

NAME = "mobilenet_v2_a10_224_float32_built.tflite"
SEED = 0


def path() -> Path:
    """The file (built on first use)."""
    import workbench
    from workbench import config

    out = config.kernels_dir().parent / "bench" / NAME
    if not out.exists():
        import table1

        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".part")
        tmp.write_bytes(workbench.dump(table1.mobilenet_v2(1.0, 224, seed=SEED)))
        tmp.replace(out)
    return out


if __name__ == "__main__":
    print(path())
