"""Regenerate docs/images/digits_cnn_tidl.png, the README's picture.

The digits CNN delegated to the simulated `tidl` target (its MEAN kept on the CPU by a deny list, so the
picture shows both devices), drawn by `workbench.viz.op_graph` (nodes coloured
by placement) and rendered to PNG by graphviz's `dot`.  Run from the repository root:
    .venv/bin/python dev/render_readme_graph.py
"""
from pathlib import Path

import workbench
from workbench.delegate import load_delegate
from workbench.viz import op_graph
from workbench.viz.render import to_dot

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "images" / "digits_cnn_tidl.png"


def main() -> Path:
    delegate = load_delegate("tidl", {"deny": "MEAN"})
    interpreter = workbench.Interpreter(model_path=str(ROOT / "sample_models" / "digits_cnn_float.tflite"),
                                        experimental_delegates=[delegate])
    graph = to_dot(op_graph(interpreter, title="digits CNN on the tidl target"))
    graph.attr(dpi="110")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(graph.pipe(format="png"))
    return OUT


if __name__ == "__main__":
    print(main())
