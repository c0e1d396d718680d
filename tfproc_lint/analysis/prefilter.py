"""Cheap text checks that skip files no rule can match, before LibCST parses anything.

Every finding needs, in one file: TensorFlow or Keras, a process module, and something that makes
a process pool, executor, process, queue or pipe (a call, a subclass, or an aliased import of one);
or TensorFlow or Keras and a setting the runtime reads once when it starts (TFP402, TFP403: a
`tf.config` call or an environment variable, which go wrong in a single process too).
Substring tests reject most files; two regular expressions confirm the rest. A file that passes
only for a runtime setting gets a second look on CPython's syntax tree (`may_match_tree`, which the
engine runs on the tree its parse guard builds anyway): the setting must resolve through the
module's imports, as the analysis resolves it. TensorFlow's own sources configure TensorFlow
through its internal modules, which no rule reports; without this second look they made up most of
the LibCST parses in the speed benchmark. The checks only ever let too much through, never too
little (tests/test_prefilter.py). Kept free of libcst so that the flake8 plugin can import it
cheaply.
"""

from __future__ import annotations

import ast
import re

from tfproc_lint.analysis import api
from tfproc_lint.analysis.names import canonical

# Substring groups, rarest first: `in` is the fastest test Python has. "multiprocess" also covers
# `use_multiprocessing=True` (Keras data workers: the analysis takes only the literal True, so
# Keras's own `use_multiprocessing=use_multiprocessing` is not a candidate), "fork" covers `os.fork()`.
_GROUPS = (("multiprocess", "concurrent", "billiard", "joblib", "loky", "pathos", "fork"), ("tensorflow", "keras"),
           ("Pool", "Process", "Queue", "Pipe", "get_context", "fork", "Parallel", "executor", "multiprocessing"))
_BYTE_GROUPS = tuple(tuple(marker.encode() for marker in group) for group in _GROUPS)
# The names of api.RUNTIME_CONFIGURATION and api.RUNTIME_ENVIRONMENT (tests/test_prefilter.py checks).
_SETTINGS = ("_parallelism_threads", "device_configuration", "set_memory_growth", "set_visible_devices",
             "CUDA_VISIBLE_DEVICES", "TF_FORCE_GPU_ALLOW_GROWTH", "TF_GPU_ALLOCATOR", "TF_NUM_INT")
_BYTE_SETTINGS = tuple(marker.encode() for marker in _SETTINGS)
# Distributed engines (api.ENGINE_PACKAGES): TensorFlow and an import of one is enough.
_ENGINES = tuple(api.ENGINE_PACKAGES)
_BYTE_ENGINES = tuple(marker.encode() for marker in _ENGINES)
_ENGINE_IMPORT = re.compile(rf"^\s*(?:import|from)\s+(?:{'|'.join(_ENGINES)})\b", re.MULTILINE)
_SETTERS = frozenset(name.rsplit(".", 1)[1] for name in api.RUNTIME_CONFIGURATION)  # set_memory_growth, ...
# Confirmed by a `tf.config` setter's name (called, aliased or imported), or a variable next to
# `os.environ`/`putenv`; `may_match_tree` then looks at how they resolve.
_SETTING = re.compile(
    rf"\b(?:{'|'.join(sorted(_SETTERS))})\b"
    r"|(?:CUDA_VISIBLE_DEVICES|TF_FORCE_GPU_ALLOW_GROWTH|TF_GPU_ALLOCATOR|TF_NUM_INT)[\s\S]*?(?:environ|putenv)"
    r"|(?:environ|putenv)[\s\S]*?(?:CUDA_VISIBLE_DEVICES|TF_FORCE_GPU_ALLOW_GROWTH|TF_GPU_ALLOCATOR|TF_NUM_INT)"
)

_PROCESS_MODULE = re.compile(
    r"\b(?:multiprocess(?:ing)?|concurrent\.futures|billiard|joblib|loky|pathos)\b|from\s+concurrent\s+import"
    r"|\bfork\s*\(|\buse_multiprocessing\s*=\s*True\b"
)
_MAKER = re.compile(
    r"\b(?:Pool|Process|ProcessPoolExecutor|Queue|SimpleQueue|JoinableQueue|Pipe|Manager|SyncManager|get_context"
    r"|Parallel|ProcessingPool|ProcessPool|get_reusable_executor|fork)(?:\s*[(),]|\s+as\b)"
    r"|\buse_multiprocessing\s*=\s*True\b"
)


def may_match(source: str) -> bool:
    tensorflow = any(marker in source for marker in _GROUPS[1])
    if tensorflow and any(marker in source for marker in _SETTINGS) and _SETTING.search(source):
        return True
    return tensorflow and (_makes_processes(source) or _imports_engine(source))


def _imports_engine(source: str) -> bool:
    return any(marker in source for marker in _ENGINES) and _ENGINE_IMPORT.search(source) is not None


def _makes_processes(source: str) -> bool:
    return (
        all(any(marker in source for marker in group) for group in (_GROUPS[0], _GROUPS[2]))
        and _PROCESS_MODULE.search(source) is not None
        and _MAKER.search(source) is not None
    )


# second stage: CPython's syntax tree ----------------------------------------------------------------
_ENVIRONMENT_ENTRIES = frozenset(name.rsplit(".", 1)[1] for name in (api.ENVIRON, api.PUTENV))
_MAX_ALIAS_DEPTH = 8  # the analysis follows aliases to values.MAX_DEPTH (6)


def may_match_tree(source: str, tree: ast.Module) -> bool:
    """`may_match` again, given the module's syntax tree: a file that passed only for a runtime
    setting goes on only if a `tf.config` setter, or `os.environ`/`os.putenv` with one of the
    runtime's variables, can resolve through imports and plain aliases (`setter = tf.config...`).
    Every binding of a name counts, whatever its scope or order, so this lets through at least
    what the analysis resolves."""
    if _makes_processes(source) or _imports_engine(source):
        return True
    bindings: dict[str, list] = {}  # name -> an import's qualified name (str) or an aliased expression
    spelled: list[ast.expr] = []  # every Name or Attribute that spells a setter or `environ`/`putenv`
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr in _SETTERS or node.attr in _ENVIRONMENT_ENTRIES:
                spelled.append(node)
        elif isinstance(node, ast.Name):
            if node.id in _SETTERS or node.id in _ENVIRONMENT_ENTRIES:
                spelled.append(node)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                bindings.setdefault(local, []).append(alias.name if alias.asname else local)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                for alias in node.names:
                    bindings.setdefault(alias.asname or alias.name, []).append(f"{node.module}.{alias.name}")
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) \
                and isinstance(node.value, (ast.Name, ast.Attribute)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    bindings.setdefault(target.id, []).append(node.value)
    # what imports bind (`from tensorflow.config.experimental import set_memory_growth as grow`),
    # and what the spelled names resolve to
    resolved = {canonical(bound) for values in bindings.values() for bound in values if isinstance(bound, str)}
    for node in spelled:
        resolved.update(_resolve(node, bindings, 0))
    if not resolved.isdisjoint(api.RUNTIME_CONFIGURATION):
        return True
    return not resolved.isdisjoint((api.ENVIRON, api.PUTENV)) and _names_a_runtime_variable(tree)


def _resolve(node: ast.expr, bindings: dict[str, list], depth: int) -> set[str]:
    if depth > _MAX_ALIAS_DEPTH:
        return set()
    if isinstance(node, ast.Attribute):
        return {canonical(f"{head}.{node.attr}") for head in _resolve(node.value, bindings, depth + 1)}
    if isinstance(node, ast.Name):
        found = set()
        for bound in bindings.get(node.id, ()):
            found.update({canonical(bound)} if isinstance(bound, str) else _resolve(bound, bindings, depth + 1))
        return found
    return set()


def _names_a_runtime_variable(tree: ast.Module) -> bool:
    """A string constant or keyword argument that is one of api.RUNTIME_ENVIRONMENT's names."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in api.RUNTIME_ENVIRONMENT \
                or isinstance(node, ast.keyword) and node.arg in api.RUNTIME_ENVIRONMENT:
            return True
    return False


def may_match_bytes(data: bytes) -> bool:
    """The substring part of `may_match` on undecoded bytes (Python source is ASCII-compatible),
    so that most files are never decoded."""
    if not any(marker in data for marker in _BYTE_GROUPS[1]):
        return False
    return any(marker in data for marker in _BYTE_SETTINGS) or any(marker in data for marker in _BYTE_ENGINES) or all(
        any(marker in data for marker in group) for group in (_BYTE_GROUPS[0], _BYTE_GROUPS[2]))
