"""Counts the loops (for statements and comprehensions) over a file's call sites (`symbols.calls`) that
resolve each call's name themselves (`qualified_name(site.node.func, ...)` / `name_of(...)` in the
loop), in tfproc_lint/: each such loop re-resolves every call of the file."""
import ast
import pathlib
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".") / "tfproc_lint"
found = []
for path in sorted(root.rglob("*.py")):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        loops = []
        if isinstance(node, ast.For):
            loops = [(node.target, node.iter, node)]
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            loops = [(g.target, g.iter, node) for g in node.generators]
        for target, iterable, body in loops:
            if not (isinstance(iterable, ast.Attribute) and iterable.attr == "calls"
                    and ast.unparse(iterable.value).endswith("symbols")):
                continue
            names = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
            for assign in ast.walk(body):  # `func = site.node.func`: names made from the site
                if isinstance(assign, ast.Assign) and {n.id for n in ast.walk(assign.value)
                                                       if isinstance(n, ast.Name)} & names:
                    names |= {n.id for t in assign.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            for call in ast.walk(body):
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                        and call.func.attr in ("qualified_name", "name_of") and call.args \
                        and {n.id for n in ast.walk(call.args[0]) if isinstance(n, ast.Name)} & names:
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
                    break
print("\n".join(found))
print(len(found), "loops over symbols.calls that resolve each call's name")
