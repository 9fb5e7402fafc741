"""The digits CNN quantized the TIDL way: held-out accuracy, agreement with float, logits SNR.

Calibrates ``sample_models/digits_cnn_float.tflite`` on the first 64 images of the training split
(:func:`workbench.delegate.quantize.calibrate`), with symmetric and power-of-two scales and 1-3
calibration iterations, and measures each int8 model on the held-out split::

    .venv/bin/python dev/quantize_digits.py [--frames 64]

Columns: held-out accuracy, the share of held-out images that get the float model's class, and the
SNR of the logits (the FULLY_CONNECTED output, int8 dequantized) against the float logits.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import workbench
from workbench.delegate.quantize import calibrate, sqnr
from workbench.interpreter import Interpreter

ROOT = Path(__file__).resolve().parents[1]
LOGITS = "digits_cnn_1/probs_1/MatMul;digits_cnn_1/probs_1/BiasAdd"


def run(model, x):
    """(probabilities, logits as floats) of the whole batch ``x``."""
    it = Interpreter(model=model, keep_intermediates=True)
    d = it.get_input_details()[0]
    it.resize_tensor_input(d["index"], x.shape)
    it.allocate_tensors()
    it.set_tensor(d["index"], x)
    it.invoke()
    t = next(t for t in it.get_tensor_details() if t["name"] == LOGITS)
    logits = it.get_tensor(t["index"])
    if logits.dtype == np.int8:
        s, zp = t["quantization"]
        logits = (logits.astype(np.float64) - zp) * s
    return it.get_tensor(it.get_output_details()[0]["index"]), logits


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=64, help="calibration frames from the training split")
    args = ap.parse_args()
    model = workbench.load(ROOT / "sample_models" / "digits_cnn_float.tflite")
    with np.load(ROOT / "sample_models" / "digits_split.npz") as z:
        x_train, x_test, y_test = z["x_train"], z["x_test"], z["y_test"]
    frames = [[x[None]] for x in x_train[: args.frames]]
    p_float, l_float = run(model, x_test)
    print(f"float: held-out accuracy {np.mean(p_float.argmax(1) == y_test):.4f}")
    for scale_type in ("symmetric", "power_of_two"):
        for iterations in (1, 2, 3):
            cal = calibrate(model, frames, iterations=iterations, scale_type=scale_type)
            p, logits = run(cal.model, x_test)
            print(f"int8 {scale_type:12} iterations={iterations}: accuracy {np.mean(p.argmax(1) == y_test):.4f}, "
                  f"same class as float {np.mean(p.argmax(1) == p_float.argmax(1)):.4f}, "
                  f"logits SNR {sqnr(l_float, logits)['snr_db']:.2f} dB")


if __name__ == "__main__":
    main()
