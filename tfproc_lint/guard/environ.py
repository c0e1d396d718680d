"""TFP403: a variable the runtime reads once when it starts (CUDA_VISIBLE_DEVICES, TF_NUM_*_THREADS,
...) set in os.environ after it started does nothing in this process: a warning that names the rule
and where the runtime started. os.environ keeps its identity; only its class gains the check."""

from __future__ import annotations

import os
import warnings

from tfproc_lint.knowledge.environment import RUNTIME_ENVIRONMENT

from . import errors, state


class GuardedEnviron(type(os.environ)):
    def __setitem__(self, key, value):
        if key in RUNTIME_ENVIRONMENT and state.started is not None and self.get(key) != value:
            frame = state.user_frame()
            message = errors.text("TFP403", (
                f"os.environ[{key!r}] set at {state.where()} after {state.start_text()}: "
                f"{RUNTIME_ENVIRONMENT[key]} (worker processes started after this do see it)"))
            warnings.warn_explicit(message, errors.GuardWarning, frame.f_code.co_filename, frame.f_lineno,
                                   module=frame.f_globals.get("__name__"), registry=frame.f_globals.setdefault(
                                       "__warningregistry__", {}))
        super().__setitem__(key, value)


def install() -> None:
    if type(os.environ) is not GuardedEnviron and type(os.environ) is GuardedEnviron.__base__:
        os.environ.__class__ = GuardedEnviron
