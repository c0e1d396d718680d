import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


@pytest.fixture
def root() -> Path:
    return ROOT


def tool(name: str) -> str:
    """An executable installed beside the running interpreter (the project's venv)."""
    path = BIN / name
    return str(path) if path.exists() else name


def run_env() -> dict:
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env["PYTHONUTF8"] = "1"
    return env
