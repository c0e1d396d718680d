"""pytest plugin (entry point `pytest11`): `pytest --tfproc-guard`, or `tfproc_guard = true` in the ini
file, installs the runtime guard before the tests run. Without either it does nothing at all.

A test that forks after TensorFlow's runtime started and runs TensorFlow in the child then fails with
TFP201's message instead of hanging the suite (the guard raises it in the test, see alarm.py), shown at
the test's own line (the innermost outside the libraries), not in the signal handler that raised it."""

from __future__ import annotations

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("tfproc-guard")
    group.addoption("--tfproc-guard", action="store_true", default=False,
                    help="run the tests under tfproc-lint's runtime guard (TensorFlow + multiprocessing "
                         "hangs become errors that name the rule)")
    parser.addini("tfproc_guard", type="bool", default=False,
                  help="run the tests under tfproc-lint's runtime guard (as --tfproc-guard)")


def pytest_configure(config):
    if config.getoption("tfproc_guard") or config.getini("tfproc_guard"):
        from . import install

        install()


def pytest_runtest_setup(item):
    from . import alarm, installed

    if installed():
        alarm.reset()  # each test gets its own worker error raised


def pytest_report_header(config):
    from . import installed

    return "tfproc-guard: on" if installed() else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    if call.excinfo is not None and type(call.excinfo.value).__module__ == "tfproc_lint.guard.errors":
        from . import state

        state.cut_at_user_frame(call.excinfo.value.__traceback__)
    yield
