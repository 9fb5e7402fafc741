"""The ``browser`` marker: tests that drive JupyterLab in a real browser (deselect: ``-m "not browser"``)."""


def pytest_configure(config):
    config.addinivalue_line("markers", "browser: runs the notebooks in JupyterLab in headless Chromium")
