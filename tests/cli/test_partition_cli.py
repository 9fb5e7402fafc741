"""`workbench partition`: text, JSON, -o, --list-targets, a user's target file."""

from __future__ import annotations

import json

import numpy as np

from workbench import Interpreter, load
from workbench.cli import main


def test_list_targets(capsys):
    assert main(["partition", "--list-targets"]) == 0
    out = capsys.readouterr().out
    for name in ("tidl", "edgetpu", "xnnpack", "old-delegate"):
        assert name in out


def test_partition_text_json_and_output(corpus_paths, tmp_path, capsys):
    path = str(corpus_paths["selfie_segmentation"])
    assert main(["partition", path, "--target", "tidl", "--strategy", "tidl", "--max-partitions", "2"]) == 0
    text = capsys.readouterr().out
    assert "Plan tidl/tidl" in text and "AVERAGE_POOL_2D: filter 16x16 > 9x9 limit" in text
    out = tmp_path / "out.tflite"
    assert main(["partition", path, "--target", "tidl", "--strategy", "tflite", "--deny", "RESIZE_BILINEAR", "0",
                 "-o", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["placements"][0]["reason"].endswith("denied by the policy")
    assert doc["output"]["tensors"] < len(load(path).subgraphs[0].tensors)
    it = Interpreter(model_path=str(out))
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], np.zeros(it.get_input_details()[0]["shape"], np.float32))
    it.invoke()


def test_user_target_file_and_errors(corpus_paths, tmp_path, capsys):
    t = tmp_path / "mine.json"
    t.write_text(json.dumps({"name": "mine", "ops": {"CONV_2D": {"max_filter": [1, 1]}},
                             "cost": {"macs_per_cycle": 1, "clock_mhz": 1, "bandwidth_mb_s": 1}}))
    assert main(["partition", str(corpus_paths["sine_float"]), "--target", str(t)]) == 0
    assert "FULLY_CONNECTED: not supported" in capsys.readouterr().out
    t.write_text("{}")
    assert main(["partition", str(corpus_paths["sine_float"]), "--target", str(t)]) == 2
    assert "name: missing" in capsys.readouterr().err
