"""What one module holds, short of what TensorFlow's runtime does: its names and the kinds of its
values, its process boundaries, the pools, executors and processes it makes with what their workers
run, and where each node is. `FileAnalysis` adds TensorFlow's runtime on top."""

from __future__ import annotations

import ast
from functools import cached_property

import libcst as cst
from libcst.metadata import CodeRange

from tfproc_lint.analysis.calls import CallIndex
from tfproc_lint.analysis.classifier import Classifier
from tfproc_lint.analysis.engines import EngineRoutes
from tfproc_lint.analysis.kinds import PROCESS_OWNERS, STATE, Kind
from tfproc_lint.analysis.positions import Locator, as_range
from tfproc_lint.analysis.routes import Crossing, RouteFinder, RouteKind
from tfproc_lint.analysis.project_calls import constructor, local_callee
from tfproc_lint.analysis.project_names import FunctionFacts, ProjectNames
from tfproc_lint.analysis.symbols import CallSite, ClassInfo, FunctionInfo, Scope, SymbolTable
from tfproc_lint.analysis.values import UNKNOWN, Value, argument, enclosing_function, literal_start_method
from tfproc_lint.analysis.walk import COMPREHENSIONS, LOOPS, SCOPE_NODES, calls_in, child_nodes, fork_child_statements
from tfproc_lint.analysis.workers import RUNS_A_FUNCTION, Owner, Worker, WorkerKind
from tfproc_lint.config import Config
from tfproc_lint.knowledge import processes


class ModuleFacts:
    """The facts `FileAnalysis` inherits (its docstring lists them all)."""

    def __init__(self, module: cst.Module, path: str, config: Config, notebook: bool = False,
                 syntax_tree: ast.Module | None = None, project: ProjectNames | None = None) -> None:
        self.module = module
        # The project's other modules, through their summaries (None: this file alone).
        self.project = project
        self.syntax_tree = syntax_tree  # CPython's tree of the same source, when the engine has it
        self.path = path
        self.config = config
        self.notebook = notebook  # the module is a notebook's code cells: its `__main__` is interactive
        self.symbols = SymbolTable(module, project.package if project is not None else None)
        self.classifier = Classifier(self.symbols)
        self.classifier.project = project
        self.calls = CallIndex(self.symbols, self.classifier)  # call sites by the name they call
        self.answers: dict = {}  # questions the rules ask, answered once (answers.per_file)
        self._routes = RouteFinder(self.symbols, self.classifier)
        self.engine_routes = EngineRoutes(self.symbols, self.classifier, self.calls)  # Ray, Dask, Spark

    @cached_property
    def _parents(self) -> dict[cst.CSTNode, cst.CSTNode]:
        parents: dict[cst.CSTNode, cst.CSTNode] = {}
        stack: list[cst.CSTNode] = [self.module]
        while stack:
            node = stack.pop()
            for child in child_nodes(node):
                parents[child] = node
                stack.append(child)
        return parents

    def ancestors(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The nodes that contain `node`, innermost first, up to the module."""
        found = []
        parent = self._parents.get(node)
        while parent is not None:
            found.append(parent)
            parent = self._parents.get(parent)
        return found

    def loops_around(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The loops and comprehensions that contain `node`, innermost first (each runs it once per
        item)."""
        return [ancestor for ancestor in self.ancestors(node) if isinstance(ancestor, LOOPS)]

    def enclosing_function_node(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        return next((a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)), None)

    def module_statement_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The top-level statement of the module that contains `node`."""
        chain = [node, *self.ancestors(node)]
        return chain[-2] if len(chain) >= 2 and chain[-1] is self.module else None

    # crossings and owners ------------------------------------------------------------------------
    @cached_property
    def crossings(self) -> list[Crossing]:
        found = []
        for site in self.symbols.calls:
            found.extend(self._routes.crossings(site))
            found.extend(self.engine_routes.crossings(site))
        for site in self.symbols.subscript_stores:
            crossing = self._routes.store_crossing(site)
            if crossing is not None:
                found.append(crossing)
        return found

    @cached_property
    def _crossing_by_call(self) -> dict[cst.Call, Crossing]:
        return {crossing.call: crossing for crossing in self.crossings}

    def crossing_of(self, call: cst.Call) -> Crossing | None:
        return self._crossing_by_call.get(call)

    @cached_property
    def owners(self) -> dict[cst.Call, Owner]:
        owners: dict[cst.Call, Owner] = {}

        def owner_for(value: Value, site: CallSite) -> Owner | None:
            if value.kind not in PROCESS_OWNERS or not isinstance(value.origin, cst.Call):
                return None
            owner = owners.get(value.origin)
            if owner is None:
                origin_site = self._site_of(value.origin) or site
                # A Process forks at start(), an executor at its first submit; a pool at once.
                fork_calls = [] if value.kind in (Kind.PROCESS, Kind.EXECUTOR) else [value.origin]
                owner = owners[value.origin] = Owner(value, value.origin, origin_site, fork_calls=fork_calls)
            return owner

        for crossing in self.crossings:
            owner = owner_for(crossing.owner, crossing.site)
            if owner is None:
                continue
            owner.crossings.append(crossing)
            if crossing.callable is not None:
                owner.workers.append(self.worker(crossing.callable, crossing.callable_scope, crossing.site.order))
            if crossing.owner.kind in (Kind.EXECUTOR, Kind.PARALLEL) and crossing.call is not owner.construction:
                owner.fork_calls.append(crossing.call)
            if crossing.owner.kind is Kind.PROCESS and isinstance(crossing.owner.info, ClassInfo):
                run = self.find_method(crossing.owner.info, "run")
                if run is not None:
                    owner.workers.append(Worker(WorkerKind.METHOD, crossing.call, run.scope, run,
                                                instance_class=crossing.owner.info))
            elif crossing.owner.kind is Kind.PROCESS and isinstance(crossing.owner.info, FunctionFacts):
                # Another project module's Process subclass: `info` is its `run`'s facts.
                owner.workers.append(Worker(WorkerKind.UNKNOWN, crossing.call, crossing.site.scope,
                                            imported=crossing.owner.info))
        for site, name in self.calls.resolved():
            func = site.node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "start" and not site.node.args:
                value = self.classifier.classify(func.value, site.scope, site.order)
                owner = owner_for(value, site)
                if owner is not None:
                    owner.fork_calls.append(site.node)
            elif name in processes.FORK_CALLS:
                owners[site.node] = self._fork_child(site)
            else:
                keras = self._keras_workers(site)
                if keras is not None:
                    owners[site.node] = keras
        for owner in owners.values():
            if not owner.fork_calls:  # made but never started here: started elsewhere, or not at all
                owner.fork_calls.append(owner.construction)
        return owners

    def initialized_tasks(self) -> list[tuple[FunctionInfo, list[FunctionInfo]]]:
        """(initializer, tasks) of each pool or executor of this file whose initializer and tasks
        are functions of this file: its workers run the initializer, then the tasks."""
        found = []
        for owner in self.owners.values():
            if owner.value.kind not in (Kind.POOL, Kind.EXECUTOR):
                continue
            initializer, tasks = None, []
            for crossing in owner.crossings:
                if crossing.callable is None:
                    continue
                worker = self.worker(crossing.callable, crossing.callable_scope, crossing.site.order)
                if worker.function is None or worker.kind is not WorkerKind.FUNCTION:
                    continue
                if crossing.call is owner.construction and crossing.route.kind is RouteKind.INITARGS:
                    initializer = worker.function
                elif worker.function not in tasks:
                    tasks.append(worker.function)
            if initializer is not None and tasks:
                found.append((initializer, tasks))
        return found

    def _fork_child(self, site: CallSite) -> Owner:
        """`pid = os.fork()`: the child runs the `if pid == 0:` branch, or else what follows."""
        call = site.node
        value = Value(Kind.PROCESS, origin=call, method="fork", detail="os.fork")
        statements = fork_child_statements(self.module, call)
        worker = Worker(WorkerKind.FORK_CHILD, call, site.scope, statements=tuple(statements))
        return Owner(value, call, site, workers=[worker], fork_calls=[call])

    def _keras_workers(self, site: CallSite) -> Owner | None:
        """`model.fit(data, workers=4, use_multiprocessing=True)`, or a `PyDataset` made with
        `use_multiprocessing=True`, given to fit/predict/evaluate: Keras forks a pool that runs
        the dataset's `__getitem__` (or the generator) in each worker."""
        call = site.node
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in processes.KERAS_WORKER_METHODS and call.args):
            return None
        receiver = self.classifier.classify(func.value, site.scope, site.order)
        if receiver.kind is not Kind.KERAS_MODEL:
            return None
        data = argument(call, 0, "x") or argument(call, 0, "generator")
        if data is None:
            return None
        dataset = self.classifier.classify(data, site.scope, site.order)
        worker_function = None
        if dataset.kind is Kind.INSTANCE and isinstance(dataset.info, ClassInfo):
            multiprocessing = _is_true_keyword(call, "use_multiprocessing") or self._dataset_uses_processes(dataset)
            worker_function = self.find_method(dataset.info, "__getitem__") if multiprocessing else None
        elif _is_true_keyword(call, "use_multiprocessing") and isinstance(data, cst.Call):
            generator = self.classifier.classify(data.func, site.scope, site.order)
            worker_function = generator.info if generator.kind is Kind.FUNCTION else None
        if worker_function is None:
            return None
        value = Value(Kind.POOL, origin=call, method=None, detail="keras workers")
        worker = Worker(WorkerKind.FUNCTION, data, site.scope, worker_function)
        return Owner(value, call, site, workers=[worker], fork_calls=[call])

    def _dataset_uses_processes(self, dataset: Value) -> bool:
        """`MyDataset(..., use_multiprocessing=True)` or `super().__init__(use_multiprocessing=True)`."""
        if isinstance(dataset.origin, cst.Call) and _is_true_keyword(dataset.origin, "use_multiprocessing"):
            return True
        init = self.find_method(dataset.info, "__init__")
        if init is None:
            return False
        return any(_is_true_keyword(call, "use_multiprocessing") for call in calls_in(init.node.body))

    def _site_of(self, call: cst.Call) -> CallSite | None:
        return self._sites.get(call)

    @cached_property
    def _sites(self) -> dict[cst.Call, CallSite]:
        return {site.node: site for site in self.symbols.calls}

    def site(self, call: cst.Call) -> CallSite | None:
        return self._sites.get(call)

    def site_around(self, node: cst.CSTNode) -> CallSite | None:
        """The call site where `node` is evaluated: `node` itself when it is a call, else the
        innermost call that holds it; None across a def, class, lambda or comprehension between
        them (their names resolve in a scope of their own)."""
        for candidate in (node, *self.ancestors(node)):
            site = self._sites.get(candidate) if isinstance(candidate, cst.Call) else None
            if site is not None:
                return site
            if candidate is not node and isinstance(candidate, (*SCOPE_NODES, *COMPREHENSIONS)):
                return None
        return None

    def kind_of(self, node: cst.BaseExpression) -> Value:
        """What `node` evaluates to, resolved where it is evaluated (`site_around`): what
        `classifier.classify(node, scope, order)` answers, without threading the scope and order."""
        site = self.site_around(node)
        return self.classifier.classify(node, site.scope, site.order) if site is not None else UNKNOWN

    def name_of(self, node: cst.BaseExpression) -> str | None:
        """The canonical qualified name `node` refers to where it is evaluated (`site_around`)."""
        site = self.site_around(node)
        return self.classifier.qualified_name(node, site.scope, site.order) if site is not None else None

    # start methods ----------------------------------------------------------------------------------
    @cached_property
    def file_start_method(self) -> str | None:
        """The method given to `set_start_method(...)` in this file, if one and only one."""
        methods = {literal_start_method(site.node) for site in self.calls.named(processes.SET_START_METHOD)}
        if len(methods) == 1:
            return methods.pop()
        if methods:
            return "unknown"
        imported = self.project.imported_start_method(self) if self.project is not None else None
        return imported[0] if imported is not None else None

    def workers_defined_in_notebook(self, owner: Owner) -> list[str]:
        """In a notebook, the workers of `owner` that the notebook itself defines (`count_tokens`,
        a lambda, a method of a notebook class): spawned children cannot import them."""
        if not self.notebook:
            return []
        names = []
        for worker in owner.workers:
            if worker.function is not None and worker.function.class_info is not None:
                # a method (a Keras dataset's __getitem__): the child looks the class up
                names.append(worker.function.class_info.node.name.value)
            elif worker.function is not None:
                names.append(worker.function.node.name.value)
            elif worker.kind is WorkerKind.LAMBDA:
                names.append("lambda")
            elif worker.instance_class is not None:
                names.append(worker.instance_class.node.name.value)
        return list(dict.fromkeys(names))

    def start_method(self, value: Value) -> tuple[str, str]:
        """(method, why it was assumed) for a pool/process/executor; `why` is empty when the
        file itself names the method."""
        if value.method and value.method not in ("default",):
            return value.method, ""
        if value.method == "loky":
            return "spawn", ""  # loky starts fresh interpreters: nothing is inherited
        if self.file_start_method:
            return self.file_start_method, ""
        if self.project is not None and not self.config.assume_start_method \
                and not self.symbols.main_guard_orders and not self.notebook:
            # A module without a `__main__` block runs when an entry point imports it.
            entry = self.project.entry_start_method()
            if entry is not None:
                return entry
        return self.config.default_start_method()

    # callables -------------------------------------------------------------------------------------
    def worker(self, node: cst.BaseExpression, scope: Scope, order: int) -> Worker:
        if isinstance(node, cst.Lambda):
            return Worker(WorkerKind.LAMBDA, node, self.symbols.scope_of_node.get(node, scope), lambda_node=node)
        if isinstance(node, cst.Attribute):
            klass = self.classifier.instance_class(node.value, scope, order)
            if klass is not None:
                method = self.find_method(klass, node.attr.value)
                if method is not None:
                    static = method.self_name is None
                    instance = self.classifier.classify(node.value, scope, order)
                    origin = instance.origin if instance.kind is Kind.INSTANCE and isinstance(
                        instance.origin, cst.Call) else None
                    return Worker(WorkerKind.FUNCTION if static else WorkerKind.METHOD, node, scope, method,
                                  instance_class=None if static else klass, instance_origin=origin)
            made = self._imported_instance(node.value, scope, order)
            if made is not None:
                constructor, klass = made
                method = self.project.function(f"{klass}.{node.attr.value}")
                return Worker(WorkerKind.UNKNOWN, node, scope, imported=method, imported_constructor=constructor)
            return Worker(WorkerKind.UNKNOWN, node, scope, imported=self._imported_function(node, scope, order))
        value = self.classifier.classify(node, scope, order)
        if value.kind is Kind.TF_FUNCTION:
            return Worker(WorkerKind.TF_FUNCTION, node, scope)
        if value.kind is Kind.FUNCTION and value.info is not None:
            info: FunctionInfo = value.info
            parent = info.scope.parent
            nested = parent is not None and parent.kind in ("function", "lambda")
            return Worker(WorkerKind.CLOSURE if nested else WorkerKind.FUNCTION, node, scope, info)
        return Worker(WorkerKind.UNKNOWN, node, scope, imported=self._imported_function(node, scope, order))

    def _imported_instance(self, node: cst.BaseExpression, scope: Scope, order: int):
        """(constructor facts, class name) when `node` is an object made here from a class of
        another project module: `Predictor(path)`, a project factory's call that returns one
        (`make_predictor()`), or a name bound once to such a call."""
        if self.project is None:
            return None
        if isinstance(node, cst.Name):
            binding = self.symbols.assigned_call(node.value, scope, order)
            if binding is None:
                return None
            node, scope, order = binding.value, binding.scope, binding.order
        if not isinstance(node, cst.Call):
            return None
        klass = self.classifier.qualified_name(node.func, scope, order)
        facts = self.project.function(klass)
        if facts is not None and facts.instance_of is not None:  # a factory: the class it returns
            klass = facts.instance_of
            facts = self.project.function(klass)
        if facts is None or not facts.name.endswith(".__init__"):
            return None
        return facts, klass

    def _imported_function(self, node: cst.BaseExpression, scope: Scope, order: int):
        """The facts of the project function `node` names (`score`, `workers.score`), or None."""
        if self.project is None:
            return None
        return self.project.function(self.classifier.qualified_name(node, scope, order))

    def callee(self, call: cst.Call, site: CallSite) -> FunctionInfo | None:
        """The function of this file a call runs: a function, a method, a class's constructor
        (`__init__` or a dataclass's `__post_init__`), `super().method()` (analysis/project_calls.py),
        an object's `__call__`."""
        worker = self.worker(call.func, site.scope, site.order)
        if worker.function is not None and worker.kind in RUNS_A_FUNCTION:
            return worker.function
        if isinstance(call.func, cst.Name):
            value = self.classifier.classify(call.func, site.scope, site.order)
            if value.kind is Kind.CLASS and isinstance(value.info, ClassInfo):
                return constructor(self, value.info)
        if isinstance(call.func, (cst.Name, cst.Attribute, cst.Call)):  # an object of a class of this file: `__call__`
            klass = self.classifier.instance_class(call.func, site.scope, site.order)
            called = self.find_method(klass, "__call__") if klass is not None else None
            if called is not None:
                return called
        return local_callee(self, call, site)

    def find_method(self, klass: ClassInfo, name: str) -> FunctionInfo | None:
        return self.classifier.method_of_class(klass, name)

    def state_attributes(self, klass: ClassInfo, site: CallSite | None = None,
                         instance: cst.Call | None = None) -> list[tuple[str, Value]]:
        """`self.x` attributes holding TF state once the object is constructed, and, when `site`
        is in a method of the class, those that method assigned before reaching `site`. With the
        `instance` construction call (`Explainer(model)`), `self.x = param` in `__init__` takes
        the kind of the argument given for `param`."""
        found = []
        for name in self.classifier.class_attributes(klass):
            value = self.classifier.class_attribute(klass, name)
            if value.kind not in STATE and instance is not None:
                value = self._attribute_from_argument(klass, name, instance)
            if value.kind in STATE:
                found.append((name, value))
        method = enclosing_function(site.scope) if site is not None else None
        if method is not None and method.class_info is klass:
            known = {name for name, _ in found}
            for name, bindings in klass.attributes.items():
                earlier = [b for b in bindings if b.order < site.order and b.value is not None
                           and enclosing_function(b.scope) is method]
                if name not in known and earlier:
                    value = self.classifier.classify(earlier[-1].value, earlier[-1].scope, earlier[-1].order)
                    if value.kind in STATE:
                        found.append((name, value))
        return found

    def _attribute_from_argument(self, klass: ClassInfo, name: str, instance: cst.Call) -> Value:
        init = self.find_method(klass, "__init__")
        site = self.site(instance)
        if init is None or site is None:
            return UNKNOWN
        params = [p.name.value for p in init.node.params.params]
        for binding in self.classifier.class_attributes(klass).get(name, []):
            if isinstance(binding.value, cst.Name) and binding.value.value in params[1:] \
                    and enclosing_function(binding.scope) is init:
                index = params.index(binding.value.value) - 1
                given = argument(instance, index, binding.value.value)
                if given is not None:
                    return self.classifier.classify(given, site.scope, site.order)
        return UNKNOWN

    def sent_state(self, crossing: Crossing) -> list[tuple[cst.BaseExpression, Value]]:
        """The sent expressions that evaluate to TensorFlow state."""
        found = []
        for sent in crossing.sent:
            value = self.classifier.classify(sent.node, sent.scope, crossing.site.order)
            if value.kind in STATE:
                found.append((sent.node, value))
        return found

    def function_of(self, scope: Scope) -> FunctionInfo | None:
        return enclosing_function(scope)

    # positions and text -----------------------------------------------------------------------------
    @cached_property
    def _locator(self) -> Locator:
        return Locator(self.module, self.syntax_tree, self.ancestors)

    def position(self, node: cst.CSTNode) -> CodeRange:
        return as_range(self._locator.span(node))

    def line_of(self, node: cst.CSTNode) -> int:
        return self.position(node).start.line

    def code(self, node: cst.CSTNode, limit: int = 60) -> str:
        text = " ".join(self.module.code_for_node(node).split())
        return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_true_keyword(call: cst.Call, name: str) -> bool:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return isinstance(arg.value, cst.Name) and arg.value.value == "True"
    return False
