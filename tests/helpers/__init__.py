"""Helpers shared by the test modules: model builders, case tables, and the LiteRT runners.

Test modules import them as ``from helpers import builders`` or ``from helpers.builders import ...``:
``tests/`` is on ``sys.path`` (pytest puts it there when it loads ``tests/conftest.py``; a test module
run as a script puts it there itself).  No test module imports another test module: whatever two test
modules share lives here (``tests/architecture/test_test_imports.py`` checks it).
"""
