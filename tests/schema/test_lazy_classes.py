"""The schema's table classes are made when first asked for (``declare.CLASSES``): importing the
package does not make all ~170 dataclasses (that took ~0.12 s of every start-up), yet every way of
reaching a class gives the same one, from any thread."""

from __future__ import annotations

import pickle
import subprocess
import sys
import threading

import pytest

from workbench import schema
from workbench.schema import declare


def test_a_fresh_import_makes_only_the_classes_it_uses():
    code = ("import workbench.interpreter, workbench.schema as s; "
            "print(len(dict(s.CLASSES)), len(s.TABLES))")
    made, declared = map(int, subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                             check=True).stdout.split())
    assert declared > 150 and made < declared // 2


def test_every_route_gives_the_same_class():
    cls = schema.CLASSES["DepthwiseConv2DOptions"]
    assert schema.DepthwiseConv2DOptions is cls and declare.table_class("DepthwiseConv2DOptions") is cls
    from workbench.schema import DepthwiseConv2DOptions
    assert DepthwiseConv2DOptions is cls and cls.__module__ == "workbench.schema"
    assert cls().dilation_w_factor == 1                      # the schema's default
    assert pickle.loads(pickle.dumps(cls(stride_w=2))) == cls(stride_w=2)


def test_membership_counts_every_declared_table_and_nothing_else():
    assert all(name in schema.CLASSES for name in schema.TABLES)
    assert "NoSuchOptions" not in schema.CLASSES
    with pytest.raises(KeyError):
        schema.CLASSES["NoSuchOptions"]
    with pytest.raises(AttributeError, match="NoSuchOptions"):
        schema.NoSuchOptions                                  # noqa: B018


def test_build_all_makes_every_class():
    built = declare.build_all()
    assert set(dict(built)) == set(schema.TABLES)
    assert all(isinstance(built[name](), schema.FlatTable) for name in schema.TABLES)


def test_threads_asking_at_once_get_one_class():
    code = ("import threading, workbench.schema as s\n"
            "got = []\n"
            "go = threading.Barrier(8)\n"
            "def ask():\n"
            "    go.wait(); got.append(s.CLASSES['Conv3DOptions'])\n"
            "ts = [threading.Thread(target=ask) for _ in range(8)]\n"
            "[t.start() for t in ts]; [t.join() for t in ts]\n"
            "print(len(got), len({id(c) for c in got}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["8", "1"]


def test_threads_in_this_process_get_one_class():
    got, go = [], threading.Barrier(4)

    def ask():
        go.wait()
        got.append(schema.CLASSES["StableHLOCompositeOptions"])

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(c) for c in got}) == 1
