"""Quantize a float .tflite file with the AI Edge Quantizer (``ai-edge-quantizer``), as a user would.

Called by ``dev/convert_sample_models.py`` in a child process with a Python that has
``ai-edge-quantizer`` installed (it pins its own ``ai-edge-litert`` and needs no TensorFlow, so it
lives in a venv of its own)::

    python dev/aeq_quantize.py FLOAT.tflite OUT.tflite RECIPE [--samples 16] [--seed 0]

RECIPE is the name of one of the quantizer's recipe functions (``static_wi8_ai8``,
``static_wi8_ai16``, ``dynamic_wi8_afp32``, ``weight_only_wi8_afp32``).  Static recipes are
calibrated on the model's first signature with seeded uniform [-1, 1) inputs, one dict per sample,
the same distribution as the TFLite converter's representative datasets in
``convert_sample_models.py``.  Prints one JSON line: the quantizer's version, the recipe and the
signature used.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("float_model")
    p.add_argument("out")
    p.add_argument("recipe")
    p.add_argument("--samples", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    from importlib.metadata import version

    from ai_edge_litert.interpreter import Interpreter
    from ai_edge_quantizer import quantizer, recipe

    data = open(args.float_model, "rb").read()
    interp = Interpreter(model_content=data)
    signatures = interp.get_signature_list()
    key = sorted(signatures)[0]
    runner = interp.get_signature_runner(key)
    details = runner.get_input_details()
    qt = quantizer.Quantizer(bytearray(data))
    qt.load_quantization_recipe(getattr(recipe, args.recipe)())
    calibration = None
    if qt.need_calibration:
        rng = np.random.default_rng(args.seed)
        samples = []
        for _ in range(args.samples):
            samples.append({name: rng.uniform(-1, 1, size=tuple(d["shape"])).astype(d["dtype"])
                            for name, d in sorted(details.items())})
        calibration = qt.calibrate({key: samples})
    result = qt.quantize(calibration)
    with open(args.out, "wb") as fh:
        fh.write(bytes(result.quantized_model))
    print(json.dumps({"ai_edge_quantizer": version("ai-edge-quantizer"), "ai_edge_litert": version("ai-edge-litert"),
                      "recipe": args.recipe, "signature": key, "inputs": sorted(details)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
