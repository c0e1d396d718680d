"""What kind of object an expression evaluates to, following names one step at a time.

`classify(expr, scope, order)` answers questions such as "is this argument a TensorFlow session?"
or "is this receiver a process pool, and with which start method?" by resolving the callee's
qualified name (resolve.py) and following assignments, `with ... as x`, `self.x = ...` attributes
of local classes (lineage.py), tuple unpacking (`a, b = Pipe()`) and module globals a bounded
number of steps.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst


from tfproc_lint.analysis.kinds import PROCESS_OWNERS, STATE, Kind
from tfproc_lint.analysis.lineage import ClassLineage
from tfproc_lint.analysis.names import canonical
from tfproc_lint.analysis.resolve import NameResolver
from tfproc_lint.analysis.symbols import Binding, ClassInfo, FunctionInfo, Scope, SymbolTable
from tfproc_lint.analysis.values import (
    DATA, MAX_DEPTH, NONE, UNKNOWN, Pickler, Provenance, Value, argument, keyword, literal_start_method, merge,
    positional,
)
from tfproc_lint.knowledge import engines as knowledge
from tfproc_lint.knowledge import processes, tensorflow

_CALL_KINDS = {**tensorflow.STATE_CONSTRUCTORS, **processes.PROCESS_CONSTRUCTORS}


class Classifier(ClassLineage, NameResolver):
    """Classifies expressions of one module; results are cached per (node, order)."""

    def __init__(self, symbols: SymbolTable) -> None:
        self.symbols = symbols
        self.graph_mode = lambda: False  # set by FileAnalysis: TF1 graph mode for this module
        self.project = None  # set by ModuleFacts: the project's other modules (summaries.ProjectNames)
        self._sites_by_function: dict | None = None
        self._process_sites_by_function: dict | None = None
        self._cache: dict[tuple[int, int], Value] = {}
        self._active: set[tuple[int, int]] = set()

    # classification ---------------------------------------------------------------------------
    def classify(self, node: cst.BaseExpression, scope: Scope, order: int, depth: int = 0) -> Value:
        key = (id(node), order)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if depth > MAX_DEPTH or key in self._active:
            return UNKNOWN
        self._active.add(key)
        try:
            value = self._classify(node, scope, order, depth)
        finally:
            self._active.discard(key)
        self._cache[key] = value
        return value

    def _classify(self, node, scope: Scope, order: int, depth: int) -> Value:
        if isinstance(node, cst.Name):
            if node.value == "None":
                return NONE
            if node.value in ("True", "False"):
                return DATA
            return self._classify_name(node, scope, order, depth)
        if isinstance(node, (cst.BaseNumber, cst.BaseString, cst.Dict, cst.DictComp)):
            return DATA
        if isinstance(node, cst.Call):
            return self._classify_call(node, scope, order, depth)
        if isinstance(node, cst.Attribute):
            return self._classify_attribute(node, scope, order, depth)
        if isinstance(node, cst.Await):
            return UNKNOWN
        return UNKNOWN

    def _classify_name(self, node: cst.Name, scope: Scope, order: int, depth: int) -> Value:
        bindings = self.symbols.bindings_at(node.value, scope, order)
        if not bindings:
            return UNKNOWN
        return merge(self.classify_binding(b, depth + 1) for b in bindings)

    def classify_binding(self, binding: Binding, depth: int = 0) -> Value:
        kind = binding.kind
        if kind == "import":
            imported = self.project.state(binding.qualified) if self.project is not None else None
            if imported is not None:  # `from models import MODEL`: a global of another module
                state_kind, place = imported
                return Value(state_kind, origin=binding.value, detail=binding.qualified,
                             provenance=Provenance(place=place))
            return Value(Kind.MODULE, detail=canonical(binding.qualified) or "")
        if kind == "def":
            info = self.symbols.functions.get(binding.value)
            if info is not None and self._is_tf_function_def(info):
                return Value(Kind.TF_FUNCTION, origin=binding.value, detail="tensorflow.function")
            return Value(Kind.FUNCTION, origin=binding.value, info=info)
        if kind == "class":
            info = self.symbols.classes.get(binding.value)
            return Value(Kind.CLASS, origin=binding.value, info=info)
        if kind == "param":
            return self._argument_for(binding, depth)
        if binding.value is None or kind == "except":
            return UNKNOWN
        if kind == "for":
            return self.element_of(binding.value, binding.scope, binding.order, depth + 1)
        value = self.classify(binding.value, binding.scope, binding.order, depth)
        if kind == "with":
            return self._entered(value, binding, depth)
        if kind == "unpack":
            if value.kind is Kind.PIPE_PAIR:
                return Value(Kind.CONNECTION, origin=value.origin)
            return self._unpacked(binding, depth)
        return value

    def _argument_for(self, binding: Binding, depth: int) -> Value:
        """A parameter of a function of this file: what every call site in the file passes for it
        (when they agree), including `Process(target=f, args=(...))`, which calls it in the child.
        Self, defaults and *args are not followed."""
        function = binding.scope.function
        param = binding.value
        if function is None or not isinstance(param, cst.Param) or depth > MAX_DEPTH // 2:
            return UNKNOWN
        positional_params = [*function.node.params.posonly_params, *function.node.params.params]
        index = next((i for i, p in enumerate(positional_params) if p is param), None)
        if function.self_name is not None and index is not None:
            if index == 0:
                return UNKNOWN
            index -= 1
        values = []
        for site in self._call_sites().get(function.node, ()):
            given = argument(site.node, index, param.name.value) if index is not None \
                else keyword(site.node, param.name.value)
            if given is None or any(arg.star for arg in site.node.args):
                return UNKNOWN
            values.append(self.classify(given, site.scope, site.order, depth + 1))
        for site in self._process_sites().get(function.node, ()):
            given = _process_argument(site.node, index)
            if given is None:
                return UNKNOWN
            value = self.classify(given, site.scope, site.order, depth + 1)
            values.append(replace(value, provenance=replace(value.provenance, in_child=True)))
        return merge(values) if values else UNKNOWN

    def _process_sites(self) -> dict:
        """Functions of this file -> the `Process(target=f, ...)` calls that run them in a child."""
        if self._process_sites_by_function is None:
            found: dict = {}
            self._process_sites_by_function = found  # a classification below that asks again sees none
            for site in self.symbols.calls:
                target = argument(site.node, 1, "target")
                if not isinstance(target, cst.Name):
                    continue
                bindings = self.symbols.bindings_at(target.value, site.scope, site.order)
                if len(bindings) == 1 and bindings[0].kind == "def":
                    made = self.classify(site.node, site.scope, site.order)
                    if made.kind is Kind.PROCESS and made.origin is site.node and made.info is None:
                        found.setdefault(bindings[0].value, []).append(site)
        return self._process_sites_by_function

    def _call_sites(self) -> dict:
        """Functions of this file -> the call sites that call them by name."""
        if self._sites_by_function is None:
            found: dict = {}
            for site in self.symbols.calls:
                if isinstance(site.node.func, cst.Name):
                    bindings = self.symbols.bindings_at(site.node.func.value, site.scope, site.order)
                    if len(bindings) == 1 and bindings[0].kind == "def":
                        found.setdefault(bindings[0].value, []).append(site)
            self._sites_by_function = found
        return self._sites_by_function

    def _unpacked(self, binding: Binding, depth: int) -> Value:
        """`a, b = (x, y)` or `a, b = helper()` whose returns are tuple displays: the element at
        the name's position."""
        source = binding.value
        if isinstance(source, (cst.Tuple, cst.List)):
            displays = [(source, binding.scope)]
        elif isinstance(source, cst.Call) and isinstance(source.func, cst.Name):
            callee = self.classify(source.func, binding.scope, binding.order, depth + 1)
            if callee.kind is not Kind.FUNCTION or not isinstance(callee.info, FunctionInfo):
                return UNKNOWN
            displays = [(r.value, callee.info.scope) for r in callee.info.returns
                        if isinstance(r.value, (cst.Tuple, cst.List))]
        else:
            return UNKNOWN
        index = binding.unpack_index
        values = [self.classify(display.elements[index].value, scope, self.symbols.end_of_file, depth + 1)
                  for display, scope in displays
                  if index is not None and index < len(display.elements)
                  and not any(isinstance(e, cst.StarredElement) for e in display.elements)]
        return merge(values) if values else UNKNOWN

    def element_of(self, iterable, scope: Scope, order: int, depth: int) -> Value:
        """The kind of the items of a list display or comprehension (`for p in procs`)."""
        if depth > MAX_DEPTH:
            return UNKNOWN
        if isinstance(iterable, (cst.List, cst.Tuple, cst.Set)):
            return merge(self.classify(e.value, scope, order, depth + 1) for e in iterable.elements
                         if not isinstance(e, cst.StarredElement))
        if isinstance(iterable, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            inner = self.symbols.scope_of_node.get(iterable, scope)
            return self.classify(iterable.elt, inner, order, depth + 1)
        if isinstance(iterable, cst.Name):
            bindings = self.symbols.bindings_at(iterable.value, scope, order)
            if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
                return self.element_of(bindings[0].value, bindings[0].scope, bindings[0].order, depth + 1)
        return UNKNOWN

    def _entered(self, value: Value, binding: Binding, depth: int) -> Value:
        """The object bound by `with value as name`."""
        if value.kind in STATE or value.kind in (Kind.POOL, Kind.EXECUTOR, Kind.THREADS, Kind.MANAGER, Kind.PARALLEL):
            return value
        item = binding.value
        # `with graph.as_default() as g` / `with tf.Graph().as_default() as g`
        if isinstance(item, cst.Call) and isinstance(item.func, cst.Attribute) and item.func.attr.value == "as_default":
            inner = self.classify(item.func.value, binding.scope, binding.order, depth + 1)
            if inner.kind is Kind.GRAPH:
                return inner
        return UNKNOWN

    def _is_tf_function_def(self, info: FunctionInfo) -> bool:
        for decorator in info.node.decorators:
            target = decorator.decorator
            if isinstance(target, cst.Call):
                target = target.func
            name = self.qualified_name(target, info.scope.parent or info.scope, info.order)
            if name == "tensorflow.function":
                return True
        return False

    def _classify_attribute(self, node: cst.Attribute, scope: Scope, order: int, depth: int) -> Value:
        attr = node.attr.value
        # self.x inside a method: the values assigned to self.x in the class
        owner = self.instance_class(node.value, scope, order, depth)
        if owner is not None:
            return self.class_attribute(owner, attr, depth)
        receiver = self.classify(node.value, scope, order, depth + 1)
        if receiver.kind is Kind.SESSION and attr == "graph":
            return Value(Kind.GRAPH, origin=node, detail="Session.graph")
        if receiver.kind is Kind.MODULE and self.project is not None:
            imported = self.project.state(f"{receiver.detail}.{attr}")
            if imported is not None:  # `registry.MODEL` after `import registry`
                return Value(imported[0], origin=node, detail=f"{receiver.detail}.{attr}",
                             provenance=Provenance(place=imported[1]))
        return UNKNOWN

    def _classify_call(self, node: cst.Call, scope: Scope, order: int, depth: int) -> Value:
        func = node.func
        name = self.qualified_name(func, scope, order)
        if name is not None:
            value = self._classify_library_call(name, node, scope, order)
            if value.kind in PROCESS_OWNERS or value.kind is Kind.CONTEXT:
                spelled = self.qualified_name(func, scope, order, raw=True) or ""
                if spelled.startswith(processes.DILL_POOL_MODULES):
                    return Value(value.kind, value.origin, value.method, value.detail, value.info,
                                 pickler=Pickler.DILL)
            return value
        if isinstance(func, cst.Call):
            # tf.function(jit_compile=True)(f)
            inner = self.qualified_name(func.func, scope, order)
            if inner == "tensorflow.function":
                return Value(Kind.TF_FUNCTION, origin=node, detail=inner)
            return UNKNOWN
        if isinstance(func, cst.Attribute):
            return self._classify_method_call(node, func, scope, order, depth)
        if isinstance(func, cst.Name):
            callee = self.classify(func, scope, order, depth + 1)
            if callee.kind is Kind.CLASS and isinstance(callee.info, ClassInfo):
                base = self.class_base_kind(callee.info)
                if base is Kind.CONTEXT:
                    return Value(Kind.CONTEXT, origin=node, detail=callee.info.node.name.value, info=callee.info,
                                 method=self.class_context_method(callee.info))
                if base in (Kind.KERAS_MODEL, Kind.PROCESS, Kind.EXECUTOR, Kind.THREADS, Kind.POOL):
                    method = self._method_of(node, scope, order, base)
                    if method is None and base is Kind.POOL:
                        method = self._context_set_in_init(callee.info)
                    return Value(base, origin=node, detail=callee.info.node.name.value, info=callee.info,
                                 method=method)
                return Value(Kind.INSTANCE, origin=node, info=callee.info)
            if callee.kind is Kind.FUNCTION and isinstance(callee.info, FunctionInfo):
                return self.returned_value(callee.info, depth + 1)
        return UNKNOWN

    def returned_value(self, info: FunctionInfo, depth: int) -> Value:
        """What a function of this file returns (`def load_graph(): ... return sess`)."""
        returns = info.returns
        if not returns or depth > MAX_DEPTH:
            return UNKNOWN
        end = self.symbols.end_of_file
        return merge(self.classify(r.value, info.scope, end, depth + 1) if r.value is not None else NONE
                     for r in returns)

    def _classify_library_call(self, name: str, node: cst.Call, scope: Scope, order: int) -> Value:
        kind = _CALL_KINDS.get(name)
        if kind is None and name in tensorflow.GRAPH_MODE_STATE and self.graph_mode():
            kind = tensorflow.GRAPH_MODE_STATE[name]
        if kind is None:
            if name.startswith(processes.THREAD_PREFIXES):
                return Value(Kind.THREADS, origin=node, detail=name)
            if name.startswith("tensorflow.data.Dataset."):
                if name.rsplit(".", 1)[1] in tensorflow.DATASET_FACTORIES:
                    return Value(Kind.DATASET, origin=node, detail=name)
                return UNKNOWN
            if name.startswith("tensorflow.estimator.") and name.endswith(tensorflow.ESTIMATOR_SUFFIXES):
                return Value(Kind.ESTIMATOR, origin=node, detail=name)
            if name.startswith("keras.applications.") and name.rsplit(".", 1)[1][:1].isupper():
                return Value(Kind.KERAS_MODEL, origin=node, detail=name)
            if name.startswith("numpy."):
                return DATA
            return self._project_call(name, node)
        if kind is Kind.TF_FUNCTION and not node.args:
            return UNKNOWN  # tf.function(jit_compile=True) alone is a decorator factory
        if kind is Kind.CONTEXT:
            return Value(kind, origin=node, method=literal_start_method(node), detail=name)
        if kind is Kind.PARALLEL:
            return _joblib_parallel(node, name)
        if kind in (Kind.POOL, Kind.PROCESS, Kind.EXECUTOR):
            if name.startswith("loky."):
                return Value(kind, origin=node, detail=name, method="loky")
            method = processes.PROCESS_CLASS_START_METHODS.get(name) or self._method_of(node, scope, order, kind)
            return Value(kind, origin=node, detail=name, method=method)
        return Value(kind, origin=node, detail=name)

    def _project_call(self, name: str, node: cst.Call) -> Value:
        """A call of another module's function of this project: the kind of state it returns."""
        facts = self.project.function(name) if self.project is not None else None
        if facts is not None and facts.process_base is not None:
            run = self.project.function(f"{name}.run")
            if run is not None:  # another module's Process subclass: `info`, its `run`'s facts
                return Value(Kind.PROCESS, origin=node, detail=name.rsplit(".", 1)[-1], info=run,
                             method=processes.PROCESS_CLASS_START_METHODS.get(facts.process_base),
                             provenance=Provenance(place=facts.place))
        if facts is None or facts.returns is None:
            return UNKNOWN
        return Value(Kind(facts.returns), origin=node, detail=name, provenance=Provenance(place=facts.place))

    def _method_of(self, node: cst.Call, scope: Scope, order: int, kind: Kind) -> str | None:
        """The start method named at construction: `mp_context=` for executors."""
        if kind is Kind.EXECUTOR:
            argument = keyword(node, "mp_context") or positional(node, 1)
            if argument is not None:
                context = self.classify(argument, scope, order)
                if context.kind is Kind.CONTEXT:
                    return context.method or "default"
                return "unknown"
            if keyword(node, "max_tasks_per_child") is not None:
                return "spawn"  # Python 3.11+: max_tasks_per_child without mp_context uses spawn
        if kind is Kind.POOL:  # Pool(processes, initializer, initargs, maxtasksperchild, context)
            argument = keyword(node, "context") or positional(node, 4)
            if argument is not None:
                context = self.classify(argument, scope, order)
                return (context.method or "default") if context.kind is Kind.CONTEXT else "unknown"
        return None

    def _classify_method_call(self, node: cst.Call, func: cst.Attribute, scope: Scope, order: int, depth: int) -> Value:
        attr = func.attr.value
        owner = self.instance_class(func.value, scope, order, depth)
        if owner is not None:
            method = self.method_of_class(owner, attr)
            if method is not None:
                return self.returned_value(method, depth + 1)
        receiver = self.classify(func.value, scope, order, depth + 1)
        kind = receiver.kind
        if kind is Kind.CONTEXT and attr in processes.CONTEXT_METHODS:
            new_kind = processes.CONTEXT_METHODS[attr]
            return Value(new_kind, origin=node, method=receiver.method or "default",
                         detail=f"multiprocessing.{attr}", pickler=receiver.pickler,
                         provenance=receiver.provenance, task=receiver.task)
        if kind is Kind.MANAGER:  # the proxy remembers its manager: where the server process was started
            where = Provenance(proxy=True, manager=receiver.origin)
            if attr in processes.MANAGER_QUEUES:
                return Value(Kind.QUEUE, origin=node, method=receiver.method, detail=f"Manager().{attr}",
                             provenance=where)
            return Value(Kind.PROXY, origin=node, method=receiver.method, provenance=where)
        if kind is Kind.DATASET and attr in tensorflow.DATASET_METHODS:
            return Value(Kind.DATASET, origin=receiver.origin, detail=receiver.detail)
        if kind is Kind.GRAPH and attr in tensorflow.GRAPH_LOOKUPS:
            return Value(Kind.GRAPH, origin=node, detail="graph tensor")
        if kind is Kind.KERAS_MODEL and attr == "compile":
            return NONE
        if attr in knowledge.RAY_TF_CHECKPOINT_MODEL_LOADS \
                and self._is_tf_checkpoint(func.value, scope, order, depth + 1):
            return Value(Kind.KERAS_MODEL, origin=node, detail=f"TensorflowCheckpoint.{attr}")
        return UNKNOWN

    def _is_tf_checkpoint(self, node, scope: Scope, order: int, depth: int) -> bool:
        """A Ray Train `TensorflowCheckpoint(...)` / `TensorflowCheckpoint.from_directory(...)`,
        or a name bound to one."""
        if depth > MAX_DEPTH:
            return False
        if isinstance(node, cst.Name):
            bindings = self.symbols.bindings_at(node.value, scope, order)
            if len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].value is None:
                return False
            binding = bindings[0]
            return self._is_tf_checkpoint(binding.value, binding.scope, binding.order, depth + 1)
        if not isinstance(node, cst.Call):
            return False
        name = self.qualified_name(node.func, scope, order) or ""
        made, _, maker = name.rpartition(".")
        return name in knowledge.RAY_TF_CHECKPOINT_CLASSES or (
            made in knowledge.RAY_TF_CHECKPOINT_CLASSES and maker in knowledge.RAY_TF_CHECKPOINT_MAKERS)


def _joblib_parallel(node: cst.Call, name: str) -> Value:
    """`joblib.Parallel(n_jobs=..., backend=...)`: processes only with more than one job and a
    process backend; loky (the default) starts fresh interpreters, "multiprocessing" forks."""
    jobs = argument(node, 0, "n_jobs")
    backend = argument(node, 1, "backend")
    prefer = keyword(node, "prefer")
    in_process = jobs is None or (isinstance(jobs, cst.Integer) and jobs.evaluated_value == 1) or (
        isinstance(jobs, cst.Name) and jobs.value == "None")
    backend_name = backend.evaluated_value if isinstance(backend, cst.SimpleString) else None
    if in_process or backend_name in processes.JOBLIB_IN_PROCESS_BACKENDS or (
            isinstance(prefer, cst.SimpleString) and prefer.evaluated_value == "threads"):
        return Value(Kind.THREADS, origin=node, detail=name)
    if backend is not None and backend_name is None:
        return Value(Kind.PARALLEL, origin=node, detail=name, method="unknown")
    method = None if backend_name == "multiprocessing" else "loky"
    return Value(Kind.PARALLEL, origin=node, detail=name, method=method,
                 pickler=Pickler.PICKLE if method is None else Pickler.CLOUDPICKLE)


def _process_argument(call: cst.Call, index: int | None) -> cst.BaseExpression | None:
    """The element of `Process(..., args=(a, b))` the child's function gets at position `index`."""
    given = argument(call, 3, "args")
    if index is None or not isinstance(given, (cst.Tuple, cst.List)):
        return None
    elements = given.elements
    if any(isinstance(e, cst.StarredElement) for e in elements) or index >= len(elements):
        return None
    return elements[index].value
