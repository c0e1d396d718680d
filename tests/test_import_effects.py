"""The project layer's readings on CPython's ast and text (tfproc_lint/analysis/import_effects.py,
entry_points.py): what importing a module may do, and the start method the entry points set."""

from __future__ import annotations

import ast
from pathlib import Path

from tfproc_lint.analysis.entry_points import EntryPoint, agreed_start_method, entry_point
from tfproc_lint.analysis.import_effects import ImportEffects, ImportTimeEffects
from tfproc_lint.project_layout import layout_for

MODULES = {
    "pkg/__init__.py": "",
    "pkg/models.py": "import tensorflow as tf\n\nMODEL = tf.keras.Sequential()\n",  # acts
    "pkg/registry.py": "from pkg import models\n",  # imports a module that acts
    "pkg/calc.py": "import tensorflow as tf\n\n\ndef total(x):\n    return tf.reduce_sum(x)\n",  # only if called
    "pkg/table.py": "from pkg.calc import total\n\nTOTAL = total([1.0])\n",  # calls it at import
    "pkg/labels.py": "import json\n\nLABELS = json.loads('[]')\n",  # another library's call
    "pkg/ping.py": "from pkg import pong\n\n\ndef ping():\n    return pong.pong()\n",  # a cycle
    "pkg/pong.py": "from pkg import ping\n\n\ndef pong():\n    return 1\n",
}


def effects(tmp_path: Path) -> tuple[ImportEffects, list[Path]]:
    for name, text in MODULES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    read = []

    def read_tree(path: Path):
        read.append(path)
        return ast.parse(path.read_text(encoding="utf-8"))

    return ImportEffects(layout_for(tmp_path / "pkg" / "models.py"), read_tree), read


def test_what_importing_a_module_may_do(tmp_path) -> None:
    found, read = effects(tmp_path)
    module = tmp_path / "pkg"
    assert found.of(module / "models.py").acts
    assert found.of(module / "registry.py") == ImportTimeEffects(acts=True)
    assert found.of(module / "calc.py") == ImportTimeEffects(False, frozenset({"total"}))
    assert found.of(module / "table.py").acts  # through calc's acting name
    assert not found.of(module / "labels.py").acts
    assert not found.of(module / "ping.py").acts and not found.of(module / "pong.py").acts
    assert read.count(module / "calc.py") == 1  # each module judged once
    found.forget({module / "labels.py"}, moved=False)
    assert found.of(module / "calc.py") and read.count(module / "calc.py") == 2  # an asked file changed: afresh


def test_the_start_method_an_entry_point_sets(tmp_path) -> None:
    script = tmp_path / "run.py"
    text = 'import multiprocessing as mp\n\nif __name__ == "__main__":\n    mp.set_start_method("spawn")\n'
    assert entry_point(script, text) == EntryPoint(script, "spawn", 4)
    assert entry_point(script, text.replace('__name__ == "__main__"', "True")) is None  # no script
    both = text + '    mp.set_start_method(method="fork", force=True)\n'
    assert entry_point(script, both).method == "unknown"


def test_the_entry_points_that_import_a_module_agree_or_not(tmp_path) -> None:
    spawn = EntryPoint(tmp_path / "a.py", "spawn", 3)
    assert agreed_start_method([]) is None
    method, why = agreed_start_method([spawn, EntryPoint(tmp_path / "b.py", "spawn", 7)])
    assert method == "spawn" and why.endswith('a.py:3, an entry point that imports it')
    assert agreed_start_method([spawn, EntryPoint(tmp_path / "b.py", "fork", 2)])[0] == "unknown"
