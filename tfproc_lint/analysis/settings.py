"""Settings TensorFlow reads once, when its runtime starts: `tf.config` calls, environment
variables, GPU memory limits, and whether the code uses a GPU at all (TFP401, TFP402, TFP403).

Also what a worker process runs (its functions, through same-file calls), and which fork-started
workers inherit a parent whose runtime already started.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterator

import libcst as cst

from tfproc_lint.analysis.answers import per_file
from tfproc_lint.analysis.execution import RuntimeStart
from tfproc_lint.analysis.project_names import Place, Setting, SettingKind
from tfproc_lint.analysis.start_methods import catches_runtime_error, set_start_method_calls
from tfproc_lint.analysis.symbols import FunctionInfo, Scope
from tfproc_lint.analysis.walk import calls_in, iter_tree
from tfproc_lint.analysis.workers import WorkerKind
from tfproc_lint.knowledge import environment, tensorflow
from tfproc_lint.records import record

if TYPE_CHECKING:
    from tfproc_lint.analysis.file_analysis import FileAnalysis
    from tfproc_lint.analysis.workers import Owner

MAX_WORKER_DEPTH = 3
MAX_SETTING_DEPTH = 4  # calls followed for the settings a function makes, across modules
_GPU_DEVICE = re.compile(r"(?i)^/?(?:job:\w+/)?(?:replica:\d+/)?(?:task:\d+/)?(?:device:)?gpu(?::|$)")


@record
class EnvSetting:
    """`os.environ["CUDA_VISIBLE_DEVICES"] = ...`, `os.environ.update(...)`, `os.putenv(...)`."""

    node: cst.CSTNode  # the Assign, or the call: what the execution walk records
    keys: tuple[str, ...]  # of environment.RUNTIME_ENVIRONMENT
    spelled: str  # `os.environ["CUDA_VISIBLE_DEVICES"]` for messages


# tf.config calls --------------------------------------------------------------------------------------
@per_file
def configuration_calls(analysis: "FileAnalysis") -> list[tuple[cst.Call, str]]:
    """(call, canonical name) of every tensorflow.RUNTIME_CONFIGURATION call."""
    return [(site.node, name) for site, name in analysis.calls.resolved() if name in tensorflow.RUNTIME_CONFIGURATION]


# environment variables -------------------------------------------------------------------------------
def environment_settings(analysis: "FileAnalysis", keys=environment.RUNTIME_ENVIRONMENT) -> list[EnvSetting]:
    found = []
    for setting in _environment_writes(analysis):
        chosen = tuple(k for k in setting.keys if k in keys)
        if chosen:
            found.append(EnvSetting(setting.node, chosen, setting.spelled))
    return found


@per_file
def _environment_writes(analysis: "FileAnalysis") -> list[EnvSetting]:
    """Every write of an environment variable the file makes, with all the keys it writes."""
    found = []
    for site in _assignments_and_calls(analysis):
        if isinstance(site.node, cst.Assign):
            setting = _assigned(analysis, site.node, site.scope)
        else:
            setting = _set_by_call(analysis, site.node, site.scope)
        if setting is not None:
            found.append(setting)
    return found


def _assignments_and_calls(analysis: "FileAnalysis") -> list:
    """Every `x[k] = v` statement and every call, in source order, each once: where an environment
    variable can be set. The symbol table has listed them already, with their scopes."""
    stores = list({id(site.node): site for site in analysis.symbols.subscript_stores}.values())
    return sorted(stores + analysis.symbols.calls, key=lambda site: site.order)


def _is_environ(analysis: "FileAnalysis", node: cst.BaseExpression, scope: Scope) -> bool:
    return analysis.classifier.qualified_name(node, scope, analysis.symbols.end_of_file) == environment.ENVIRON


def _assigned(analysis, node: cst.Assign, scope: Scope) -> EnvSetting | None:
    for target in node.targets:
        subscript = target.target
        if isinstance(subscript, cst.Subscript) and len(subscript.slice) == 1 \
                and _is_environ(analysis, subscript.value, scope):
            index = subscript.slice[0].slice
            key = string_value(analysis, index.value, scope) if isinstance(index, cst.Index) else None
            if key:
                return EnvSetting(node, (key,), f'os.environ["{key}"]')
    return None


def _set_by_call(analysis, call: cst.Call, scope: Scope) -> EnvSetting | None:
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    if analysis.classifier.qualified_name(func, scope, analysis.symbols.end_of_file) == environment.PUTENV:
        key = string_value(analysis, call.args[0].value, scope) if call.args else None
        return EnvSetting(call, (key,), f'os.putenv("{key}", ...)') if key else None
    if func.attr.value not in environment.ENVIRON_SETTERS or not _is_environ(analysis, func.value, scope):
        return None
    if func.attr.value == "update":
        keys = [arg.keyword.value for arg in call.args if arg.keyword is not None]
        for arg in call.args:
            if arg.keyword is None and not arg.star:
                keys.extend(dict_keys(analysis, arg.value, scope))
        return EnvSetting(call, tuple(keys), "os.environ.update(...)") if keys else None
    key = string_value(analysis, call.args[0].value, scope) if call.args else None
    return EnvSetting(call, (key,), f'os.environ.{func.attr.value}("{key}", ...)') if key else None


def string_value(analysis, node: cst.BaseExpression, scope: Scope, depth: int = 0) -> str | None:
    """A string literal, or a name bound once to one (`KEY = "CUDA_VISIBLE_DEVICES"`)."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.Name) and depth < 3:
        bindings = analysis.symbols.bindings_at(node.value, scope, analysis.symbols.end_of_file)
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            return string_value(analysis, bindings[0].value, bindings[0].scope, depth + 1)
    return None


def dict_keys(analysis, node: cst.BaseExpression, scope: Scope, depth: int = 0) -> list[str]:
    """The string keys of a dict display, `dict(K=...)`, or a name bound once to one of them."""
    if isinstance(node, cst.Dict):
        keys = []
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                key = string_value(analysis, element.key, scope)
                if key:
                    keys.append(key)
        return keys
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "dict":
        return [arg.keyword.value for arg in node.args if arg.keyword is not None]
    if isinstance(node, cst.Name) and depth < 3:
        bindings = analysis.symbols.bindings_at(node.value, scope, analysis.symbols.end_of_file)
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            return dict_keys(analysis, bindings[0].value, bindings[0].scope, depth + 1)
    return []


# settings made through calls ------------------------------------------------------------------------
_composing: list[tuple[str, cst.FunctionDef]] = []  # the functions whose settings are being worked out


def settings_made(analysis: "FileAnalysis", info: FunctionInfo, place) -> tuple[Setting, ...]:
    """The settings calling `info` makes (a function's summary, `FunctionFacts.settings`): in its
    own code, in the functions of this file it calls, and in the project functions those call (their
    summaries, which compose the same way), `MAX_SETTING_DEPTH` calls deep, cycles cut. A setting
    inside `try: ... except RuntimeError:` is left out (its error is handled there), and so is a
    `set_start_method(..., force=True)`. `place(node)`:
    a node's `Place`."""
    key = (analysis.path, info.node)
    if key in _composing or len(_composing) >= MAX_SETTING_DEPTH:
        return ()
    _composing.append(key)
    try:
        return tuple(_settings_in(analysis, info, place))
    finally:
        _composing.pop()


def _settings_in(analysis: "FileAnalysis", info: FunctionInfo, place) -> Iterator[Setting]:
    configurations = dict(configuration_calls(analysis))
    environment_writes = {setting.node: setting for setting in environment_settings(analysis)}
    start_methods = {found.call: found for found in set_start_method_calls(analysis) if not found.forced}
    seen: set[cst.FunctionDef] = set()
    pending = [(info, 0)]
    while pending:
        function, depth = pending.pop(0)
        if function.node in seen:
            continue
        seen.add(function.node)
        for node in iter_tree(function.node.body, enter_scopes=False):
            if node in configurations and not catches_runtime_error(analysis, node):
                yield Setting(SettingKind.CONFIGURATION, configurations[node], analysis.code(node.func, 60),
                              place(node))
            elif node in environment_writes and not catches_runtime_error(analysis, node):
                written = environment_writes[node]
                yield Setting(SettingKind.ENVIRONMENT, written.keys[0], written.spelled, place(node))
            elif node in start_methods and not catches_runtime_error(analysis, node):
                yield Setting(SettingKind.START_METHOD, start_methods[node].method, start_methods[node].spelled,
                              place(node))
            if not isinstance(node, cst.Call):
                continue
            site = analysis.site(node)
            callee = analysis.callee(node, site) if site is not None else None
            if callee is not None:
                if depth + 1 < MAX_SETTING_DEPTH:
                    pending.append((callee, depth + 1))
            elif site is not None and analysis.project is not None:
                facts = analysis.project.function(analysis.classifier.qualified_name(node.func, site.scope, site.order))
                if facts is not None:
                    yield from facts.settings


@record
class HelperSetting:
    """A call of another module's function that makes a setting TensorFlow reads once."""

    call: cst.Call
    helper: str  # the function as spelled at the call: `perf.limit_threads`
    setting: Setting  # the first setting of its kind the function makes


def helper_settings(analysis: "FileAnalysis", kind: SettingKind) -> list[HelperSetting]:
    """The calls of this file that run a project function of another module (its summary) which
    makes a setting of `kind`. Calls not caught by `except RuntimeError` only."""
    project = analysis.project
    if project is None:
        return []
    found = []
    for site, name in analysis.calls.resolved():
        if not name or analysis.callee(site.node, site) is not None:
            continue  # a function of this file: the execution walk follows it
        facts = project.function(name)
        setting = next((s for s in facts.settings if s.kind is kind), None) if facts is not None else None
        if setting is not None and not catches_runtime_error(analysis, site.node):
            found.append(HelperSetting(site.node, analysis.code(site.node.func, 60), setting))
    return found


def late_helper_settings(analysis: "FileAnalysis", kind: SettingKind, made_before: set[str]):
    """(helper call, runtime start) for each call of `helper_settings` that the runtime may have
    started before, that no path reaches before the start, and whose setting was not also made
    before the start, by a helper or here (`made_before`: names set here on a path before the
    start): setting the same value again is accepted."""
    helpers = helper_settings(analysis, kind)
    if not helpers:
        return []
    walk = analysis.execution
    made_before = made_before | {made.setting.name for made in helpers if walk.also_reached_before_start(made.call)}
    late = []
    for made in helpers:
        started = walk.started_before(made.call)
        if started is None or walk.also_reached_before_start(made.call) or walk.only_after_an_exception(made.call) \
                or made.setting.name in made_before:
            continue
        late.append((made, started))
    return late


def setting_related(setting: Setting) -> tuple[Place, str]:
    """The helper's setting, as a finding's related place."""
    return setting.place, f"the setting is made here: `{setting.spelled}`"


# what workers run ----------------------------------------------------------------------------------
def worker_roots(owner: "Owner") -> list[cst.CSTNode]:
    """The code a worker process runs: function bodies, lambda bodies, a fork child's statements."""
    roots: list[cst.CSTNode] = []
    for worker in owner.workers:
        if worker.kind is WorkerKind.FORK_CHILD:
            roots.extend(worker.statements)
        elif worker.lambda_node is not None:
            roots.append(worker.lambda_node.body)
        elif worker.function is not None:
            roots.append(worker.function.node)
    return roots


def worker_functions(analysis: "FileAnalysis", owner: "Owner") -> list[FunctionInfo]:
    """The functions of this file the owner's workers run, through same-file calls."""
    found: dict[cst.FunctionDef, FunctionInfo] = {}
    pending = [(root, 0) for root in worker_roots(owner)]
    while pending:
        root, depth = pending.pop()
        if isinstance(root, cst.FunctionDef):
            info = analysis.symbols.functions.get(root)
            if info is None or root in found:
                continue
            found[root] = info
            body = root.body
        else:
            body = root
        if depth >= MAX_WORKER_DEPTH:
            continue
        for call in calls_in(body):
            site = analysis.site(call)
            callee = analysis.callee(call, site) if site is not None else None
            if callee is not None:
                pending.append((callee.node, depth + 1))
    return list(found.values())


def worker_code(analysis: "FileAnalysis", owner: "Owner") -> list[cst.CSTNode]:
    """What the owner's workers run: a fork child's statements, lambda bodies, and the bodies of
    the functions of this file they run."""
    roots = [root for root in worker_roots(owner) if not isinstance(root, cst.FunctionDef)]
    return roots + [info.node.body for info in worker_functions(analysis, owner)]


def worker_calls(analysis: "FileAnalysis", owner: "Owner") -> list[cst.Call]:
    return [call for code in worker_code(analysis, owner) for call in calls_in(code)]


def worker_nodes(analysis: "FileAnalysis", owner: "Owner") -> list[cst.CSTNode]:
    return [node for code in worker_code(analysis, owner) for node in iter_tree(code, enter_scopes=False)]


def forked_after_start(analysis: "FileAnalysis") -> list[tuple["Owner", RuntimeStart]]:
    """Fork-started owners whose parent may have started TensorFlow's runtime before they fork."""
    found = []
    for owner in analysis.owners.values():
        if owner.value.detail == "keras workers" or analysis.start_method(owner.value)[0] != "fork":
            continue
        walk = analysis.execution
        started = next((walk.started_before(c) for c in owner.fork_calls if walk.started_before(c)), None)
        if started is not None:
            found.append((owner, started))
    return found


# GPUs (TFP401) -------------------------------------------------------------------------------------
@per_file
def gpu_evidence(analysis: "FileAnalysis") -> str:
    """Why the code is taken to run on a GPU, or "": the configuration (`assume-gpu`, a dependency
    on a GPU build), a GPU device string given to TensorFlow (`tf.device("/GPU:0")`,
    `list_physical_devices("GPU")`), or a GPU query (`tf.test.is_gpu_available()`)."""
    assumed = analysis.config.gpu_assumed()
    if assumed:
        return assumed
    for site, name in analysis.calls.resolved():
        name = name or ""
        if name in tensorflow.GPU_QUERIES:
            return f"`{analysis.code(site.node.func, 40)}()` on line {analysis.line_of(site.node)}"
        if name.startswith(("tensorflow.", "keras.")):
            for arg in site.node.args:
                if any(_GPU_DEVICE.match(text) for text in _string_parts(arg.value)):
                    return f"`{analysis.code(site.node, 50)}` on line {analysis.line_of(site.node)}"
    return ""


def _string_parts(node: cst.BaseExpression) -> Iterator[str]:
    """Literal text an argument starts with: a string, an f-string's first part, `"/gpu:%d" % i`."""
    if isinstance(node, cst.BinaryOperation):
        node = node.left
    if isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str):
        yield node.evaluated_value
    elif isinstance(node, cst.FormattedString) and node.parts and isinstance(node.parts[0], cst.FormattedStringText):
        yield node.parts[0].value
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format":
        yield from _string_parts(node.func.value)


@record
class MemoryLimit:
    anchor: cst.CSTNode  # a call or an Assign statement, as the execution walk records it
    what: str
    environment: bool  # an environment variable: spawned children inherit it too


@per_file
def memory_limits(analysis: "FileAnalysis") -> list[MemoryLimit]:
    """Places that keep a process from mapping all GPU memory: memory growth, a memory limit,
    visible devices, `TF_FORCE_GPU_ALLOW_GROWTH` / `CUDA_VISIBLE_DEVICES`, TF1 `GPUOptions`."""
    found = []
    for site, name in analysis.calls.resolved():
        if name in tensorflow.GPU_MEMORY_LIMITS or any(arg.keyword is not None
                                                       and arg.keyword.value in tensorflow.GPU_MEMORY_OPTIONS
                                                       for arg in site.node.args):
            found.append(MemoryLimit(site.node, analysis.code(site.node.func, 40), False))
    for setting in environment_settings(analysis, environment.GPU_MEMORY_ENVIRONMENT):
        found.append(MemoryLimit(setting.node, setting.spelled, True))
    for node in iter_tree(analysis.module):
        if isinstance(node, cst.Assign) and any(
                isinstance(t.target, cst.Attribute) and t.target.attr.value in tensorflow.GPU_MEMORY_OPTIONS
                for t in node.targets):
            found.append(MemoryLimit(node, "gpu_options", False))
    return found
