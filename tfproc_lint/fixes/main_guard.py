"""TFP202 fix: put the module's statements, from the first process start on, under a main guard.

    set_start_method("spawn")              if __name__ == "__main__":
    with Pool(2) as pool:          ->          set_start_method("spawn")
        print(pool.map(f, xs))                 with Pool(2) as pool:
                                                   print(pool.map(f, xs))

Offered only when nothing from that statement on is something another module (or a spawned
child, which re-imports this one) may need: no definition, no name that a function of the module
reads, no `__main__` block already; and never in a module that another module of the project
imports, where the guarded code would not run at all.
"""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.project_names import Place
from tfproc_lint.analysis.walk import is_main_guard, read_names
from tfproc_lint.diagnostics import Applicability
from tfproc_lint.fixes.base import FixBuilder, Plan, Refusal
from tfproc_lint.fixes.common import bound_names, runs


class GuardTheRest(FixBuilder):
    title = 'move the statements from the first process start on under `if __name__ == "__main__":`'
    applicability = Applicability.UNSAFE

    def __init__(self, start: cst.CSTNode, imported: Place | None = None) -> None:
        self.start = start  # the first process start (or set_start_method) that runs on import
        self.imported = imported  # where another module of the project imports this one

    def plan(self, analysis: FileAnalysis) -> Plan | Refusal:
        if self.imported is not None:
            # The guarded code would never run when the module is imported: the finding would go
            # away and the workers with it.
            return self.refuse(f"code under `if __name__ == \"__main__\":` never runs in a module that is imported "
                               f"({self.imported})")
        body = list(analysis.module.body)
        first = next((i for i, s in enumerate(body) if not is_main_guard(s) and runs(analysis, s, self.start)), None)
        if first is None:
            return self.refuse("the start is reached through code this fix cannot follow")
        rest = body[first:]
        for statement in rest:
            if is_main_guard(statement):
                return self.refuse("the module's `__main__` block comes after it: merge them by hand")
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                return self.refuse(f"`{statement.name.value}` is defined after it, and spawned children need it")
        needed = bound_names(rest) & names_read_by_functions(analysis)
        if needed:
            return self.refuse(f"`{sorted(needed)[0]}`, set after it, is read by a function that children may run")
        count = len(rest)

        def guard(updated: cst.Module) -> cst.Module:
            statements = list(updated.body)
            moved = statements[-count:]
            head = moved[0]
            # Blank lines inside the block must not take its indentation.
            moved = [head.with_changes(leading_lines=[]),
                     *(s.with_changes(leading_lines=[line if line.comment else line.with_changes(indent=False)
                                                     for line in s.leading_lines]) for s in moved[1:])]
            block = cst.IndentedBlock(body=moved)
            test = cst.parse_expression('__name__ == "__main__"')
            guarded = cst.If(test=test, body=block, leading_lines=head.leading_lines)
            return updated.with_changes(body=[*statements[:-count], guarded])

        return {analysis.module: guard}


def names_read_by_functions(analysis: FileAnalysis) -> set[str]:
    """Module globals that the module's functions and methods read."""
    symbols = analysis.symbols
    found = set()
    for info in symbols.functions.values():
        for name in read_names(info.node.body):
            if symbols.resolving_scope(name.value, info.scope) is symbols.module_scope:
                found.add(name.value)
    return found
