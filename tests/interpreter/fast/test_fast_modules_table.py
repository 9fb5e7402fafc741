"""fast.MODULES_BY_OP names, for every op, each module of the speed layer that registers a fast path for it:
a node loads only its op's modules, so a module missing from the table would silently never run."""

from __future__ import annotations

from workbench.interpreter import fast


def test_the_table_names_every_module_that_registers_a_fast_path_for_each_op():
    fast._load()                                     # every module of the package
    registered: dict = {}
    for (op, _cls), (bind_fn, _variants) in fast.FAST_PATHS.items():
        registered.setdefault(getattr(op, "name", op), set()).add(bind_fn.__module__.rsplit(".", 1)[1])
    declared = {op: set(mods) for op, mods in fast.MODULES_BY_OP.items()}
    assert registered == declared
