"""EVE only, DSP only, EVE + DSP: the am5729 target's modeled times beside TI's published ones.

    python benchmarks/core_times.py [--write]

For each network with a .tflite here (MobileNet v1 1.0/224 float from ../shared/models, the digits CNN),
prints :func:`workbench.delegate.core_times` — the offloaded partitions' modeled time on each choice of
cores, by the ``devices`` table of ``am5729.json`` — with TI's published time in the "published ms" column
where ``benchmarks/data/published_timings.json`` has one (TI Processor SDK Linux (AM57x), TIDL,
"Performance data", table "Computation performance of verified networks": its title and URL are on every
row of that file).  An empty cell: TI publishes no time for that network and those cores.  ``--write``
saves the text to ``benchmarks/results/core_times.txt``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
PUBLISHED = ROOT / "benchmarks" / "data" / "published_timings.json"
RESULT = ROOT / "benchmarks" / "results" / "core_times.txt"
NETWORKS = [("MobileNetV1", ROOT.parent / "shared" / "models" / "mobilenet_v1_a10_224_float32.tflite"),
            (None, ROOT / "sample_models" / "digits_cnn_float.tflite")]
COLUMNS = {"eve-dense": "EVE only", "dsp-dense": "DSP only", "eve+dsp": "EVE + DSP"}


def published(network: str | None) -> dict:
    """label → TI's published ms for ``network`` (the dense-model columns and EVE + DSP)."""
    if network is None or not PUBLISHED.exists():
        return {}
    rows = json.loads(PUBLISHED.read_text(encoding="utf-8"))["rows"]
    return {COLUMNS[r["device"]]: r["time_ms"] for r in rows
            if r["vendor"] == "TI" and r["network"] == network and r["device"] in COLUMNS}


def main(argv=None) -> int:
    from workbench.delegate import core_times

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help=f"save the text to {RESULT.relative_to(ROOT)}")
    args = ap.parse_args(argv)
    parts = []
    for network, path in NETWORKS:
        if not path.exists():
            parts.append(f"{path.name}: absent here, skipped")
            continue
        parts.append(str(core_times(path, "am5729", published=published(network))))
    parts.append("Note: both 'published' cells of MobileNetV1 are checks. benchmarks/cost_model_check.py fitted the "
                 "EVE's figures to TI's one-EVE times of other networks, and the DSP's (its second look) to TI's "
                 "one-DSP times of JacintoNet11, SqueezeNet1.1 and InceptionNetV1, with MobileNetV1 held out.")
    text = "\n\n".join(parts) + "\n"
    print(text, end="")
    if args.write:
        RESULT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
