"""Make tests/data/keras_lstm.tflite: a tiny Keras LSTM converted by the TensorFlow Lite converter.

    /tmp/tfvenv/bin/python dev/make_keras_lstm.py   # TensorFlow 2.21 + tf_keras 2.21 (not project dependencies)

Model: input [1, 10, 4] -> LSTM(8, return_sequences=True) -> LSTM(6) -> Dense(3), seeded weights.
Keras 3's LSTM converts to a WHILE loop; with Keras 2 (tf_keras) the converter fuses each LSTM
into one UNIDIRECTIONAL_SEQUENCE_LSTM with variable state
tensors (the form real audio / text models have).  tests/interpreter/test_interpreter_rnn.py runs it in the
workbench interpreter and in ai-edge-litert.  The file is about 7.5 kB.
"""

import os
from pathlib import Path

os.environ["TF_USE_LEGACY_KERAS"] = "1"     # Keras 2 (tf_keras): its LSTM carries the annotation the
                                              # converter fuses into UNIDIRECTIONAL_SEQUENCE_LSTM
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "keras_lstm.tflite"


def main():
    tf.keras.utils.set_random_seed(7)
    inp = tf.keras.Input((10, 4), batch_size=1)
    x = tf.keras.layers.LSTM(8, return_sequences=True)(inp)
    x = tf.keras.layers.LSTM(6)(x)
    out = tf.keras.layers.Dense(3)(x)
    model = tf.keras.Model(inp, out)
    # non-trivial biases (Keras starts them at 0, forget gate at 1)
    for layer in model.layers:
        for v in layer.weights:
            if "bias" in v.name:
                v.assign(np.random.default_rng(3).uniform(-0.5, 0.5, v.shape).astype(np.float32))
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    data = converter.convert()
    OUT.write_bytes(data)
    print(f"wrote {OUT} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
