"""Two ways of saying "can this reader read that file": semantic versions and TensorFlow's VersionDef.

* :class:`SemVer` — ``MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`` ordered as semver.org §11 says: a
  pre-release is LOWER than its release (``2.3.0-rc1 < 2.3.0``), pre-release identifiers compare
  numerically when numeric, lexically otherwise, numeric below alphanumeric, a shorter list below
  a longer one; build metadata is ignored.
* :class:`VersionDef` and :func:`accepts` — TensorFlow's GraphDef/checkpoint scheme
  (``tensorflow/core/framework/versions.cc`` CheckVersions): a consumer with version C and a
  minimum producer P accepts data iff ``producer ≥ P`` and ``min_consumer ≤ C`` and
  ``C ∉ bad_consumers``.  A producer NEWER than the consumer is not by itself a reason to refuse.
  The verdict carries TensorFlow's own error texts.
* :func:`tflite_accepts` maps a TFLite model onto the same idea for the notebook: the model's
  minimum runtime plays ``min_consumer``, the runtime release plays the consumer.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import VersionError
from .runtime import MinRuntime, compare_runtime_version, min_runtime, read_min_runtime_metadata

__all__ = ["SemVer", "VersionDef", "Verdict", "accepts", "tflite_accepts", "TF_GRAPH_DEF_VERSION_MIN_PRODUCER",
           "TF_GRAPH_DEF_VERSION_MIN_CONSUMER"]

# tensorflow/core/public/version.h (the same in every copy read)
TF_GRAPH_DEF_VERSION_MIN_PRODUCER = 0
TF_GRAPH_DEF_VERSION_MIN_CONSUMER = 0

_SEMVER = re.compile(
    r"v?(?P<major>0|[1-9]\d*)\.(?P<minor>0|[1-9]\d*)\.(?P<patch>0|[1-9]\d*)"
    r"(?:-(?P<pre>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)|(?P<pip>[A-Za-z][0-9A-Za-z-]*(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+(?P<build>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?")


@functools.total_ordering
@dataclass(frozen=True, eq=False)
class SemVer:
    """A semantic version.  ``SemVer.parse("2.3.0-rc1") < SemVer.parse("2.3.0")``.

    TensorFlow's pip spelling without the hyphen (``2.16.0rc0``) is read as the pre-release
    ``rc0`` too.
    """

    major: int
    minor: int
    patch: int
    prerelease: tuple[Any, ...] = ()  # identifiers: int when numeric, str otherwise
    build: str = ""

    @classmethod
    def parse(cls, text: str) -> "SemVer":
        m = _SEMVER.fullmatch(text.strip())
        if m is None:
            raise VersionError(f"{text!r} is not a semantic version (MAJOR.MINOR.PATCH[-PRE][+BUILD])")
        pre = m.group("pre") or m.group("pip")  # "2.3.0-rc1", or pip's "2.16.0rc0"
        ids: list[Any] = []
        for part in (pre.split(".") if pre else ()):
            if part.isdigit():
                if len(part) > 1 and part[0] == "0":
                    raise VersionError(f"{text!r}: numeric pre-release identifier {part!r} has a leading zero")
                ids.append(int(part))
            else:
                ids.append(part)
        return cls(int(m.group("major")), int(m.group("minor")), int(m.group("patch")), tuple(ids),
                   m.group("build") or "")

    @property
    def is_prerelease(self) -> bool:
        return bool(self.prerelease)

    def _key(self):
        if not self.prerelease:
            return (self.major, self.minor, self.patch, 1, ())
        ids = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in self.prerelease)
        return (self.major, self.minor, self.patch, 0, ids)

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = SemVer.parse(other)
        if not isinstance(other, SemVer):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other) -> bool:
        if isinstance(other, str):
            other = SemVer.parse(other)
        if not isinstance(other, SemVer):
            return NotImplemented
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            s += "-" + ".".join(str(p) for p in self.prerelease)
        if self.build:
            s += "+" + self.build
        return s

    def __repr__(self) -> str:
        return f"SemVer('{self}')"


@dataclass(frozen=True)
class VersionDef:
    """TensorFlow's versions.proto: who wrote the data and who may read it."""

    producer: int
    min_consumer: int = 0
    bad_consumers: tuple[int, ...] = field(default=())

    def __post_init__(self):
        object.__setattr__(self, "bad_consumers", tuple(int(b) for b in self.bad_consumers))


@dataclass(frozen=True)
class Verdict:
    """Accepted or not (usable as a bool), with the reason — TensorFlow's error text when refused."""

    ok: bool
    reason: str
    check: str  # "ok" | "internal" | "producer" | "min_consumer" | "bad_consumer"
    details: Any = None

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return f"Verdict({'accepted' if self.ok else 'refused'}: {self.reason})"


def accepts(consumer: int, min_producer: int, data: VersionDef, *, tf_version: str = "2.3.0",
            upper_name: str = "GraphDef", lower_name: str = "graph") -> Verdict:
    """TensorFlow's CheckVersions: may a consumer at version ``consumer`` (which reads producers
    ≥ ``min_producer``) read ``data``?  The tests and their order are upstream's; so are the texts
    (including the two spaces before "Please")."""
    if consumer < min_producer:
        return Verdict(False, f"{upper_name} version check has consumer {consumer} < min_producer {min_producer}.",
                       "internal")
    if data.producer < min_producer:
        return Verdict(False, f"{upper_name} producer version {data.producer} below min producer {min_producer} "
                              f"supported by TensorFlow {tf_version}.  Please regenerate your {lower_name}.",
                       "producer")
    if data.min_consumer > consumer:
        return Verdict(False, f"{upper_name} min consumer version {data.min_consumer} above current version "
                              f"{consumer} for TensorFlow {tf_version}.  Please upgrade TensorFlow.",
                       "min_consumer")
    for bad in data.bad_consumers:
        if bad == consumer:
            return Verdict(False, f"{upper_name} disallows consumer version {bad}.  Please upgrade TensorFlow: "
                                  "this version is likely buggy.", "bad_consumer")
    newer = " (a newer producer is fine)" if data.producer > consumer else ""
    return Verdict(True, f"consumer {consumer} accepts producer {data.producer} (min producer {min_producer}, "
                         f"min consumer {data.min_consumer}){newer}", "ok")


def tflite_accepts(model, runtime: str = "2.3.0", *, use_metadata: bool = True) -> Verdict:
    """The VersionDef idea applied to a TFLite model (for the notebook).

    * min_consumer ↔ the model's minimum runtime: its ``min_runtime_version`` metadata when present
      (``use_metadata``), else the minimum computed from the stored op versions;
    * consumer ↔ the runtime release (compared with the CompareRuntimeVersion rule);
    * producer / min_producer ↔ nothing: TFLite records no producer version and reads every
      schema-3 file, so that test always passes; bad_consumers ↔ none.
    The real runtime does not refuse a model on this basis — it fails per op ("Didn't find op for
    builtin opcode ..."), see :func:`workbench.versioning.runtime.check`.
    """
    mr: MinRuntime = min_runtime(model)
    meta = read_min_runtime_metadata(model) if use_metadata else None
    need = meta if meta else mr.version
    source = "min_runtime_version metadata" if meta else "stored op versions"
    if need and compare_runtime_version(runtime, need):
        return Verdict(False, f"TFLite model min consumer version {need} ({source}) above current version "
                              f"{runtime} for TensorFlow Lite {runtime}.  Please upgrade TensorFlow Lite.",
                       "min_consumer", mr)
    return Verdict(True, f"TFLite {runtime} ≥ model minimum {need or '(none)'} ({source})", "ok", mr)
