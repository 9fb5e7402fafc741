"""``workbench.load`` of a path that is not a file: a ModelError naming the path, still the builtin
FileNotFoundError / IsADirectoryError for older callers."""

from __future__ import annotations

import pytest

import workbench
from workbench.errors import ModelError


def test_missing_path_is_a_model_error_and_a_file_not_found_error(tmp_path):
    missing = tmp_path / "nowhere.tflite"
    with pytest.raises(ModelError, match=f"cannot read {missing}: No such file or directory") as exc:
        workbench.load(missing)
    assert isinstance(exc.value, FileNotFoundError) and exc.value.filename == str(missing)
    with pytest.raises(FileNotFoundError):
        workbench.load(str(missing))


def test_directory_is_a_model_error_and_an_is_a_directory_error(tmp_path):
    with pytest.raises(ModelError, match=f"cannot read {tmp_path}: Is a directory") as exc:
        workbench.load(tmp_path)
    assert isinstance(exc.value, IsADirectoryError)
