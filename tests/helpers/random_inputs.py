"""Seeded inputs for an interpreter's input details: integers in [-100, 100) clipped to the type, floats
in [-1, 1) (shared by the delegate tests that compare a delegated run with the CPU-only one)."""

import numpy as np


def random_inputs(details, seed: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for d in details:
        if np.issubdtype(d["dtype"], np.integer):
            info = np.iinfo(d["dtype"])
            out.append(rng.integers(max(info.min, -100), min(info.max, 100), size=d["shape"]).astype(d["dtype"]))
        else:
            out.append(rng.uniform(-1, 1, size=d["shape"]).astype(d["dtype"]))
    return out
