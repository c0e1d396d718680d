"""`python -m tfproc_lint.guard SCRIPT [ARGS...]` (or `-m MODULE [ARGS...]`): run a program under the
guard, as `python -m cProfile` runs one under the profiler: the script is `__main__` (spawned workers
re-import it as usual), sys.argv is `[SCRIPT, *ARGS]`, sys.path[0] its folder, and the exit code is
the program's own."""

from __future__ import annotations

import os
import runpy
import sys

from . import state

USAGE = "usage: python -m tfproc_lint.guard [--warn] SCRIPT [ARGS...] | [--warn] -m MODULE [ARGS...]"
HELP = ("Runs the program with tfproc-lint's runtime guard: a fork after TensorFlow's runtime started, "
        "TensorFlow objects sent to other processes and settings made too late raise errors that name "
        "the rule instead of hanging.\n\n"
        "  --warn  where the guard stops a run that can hang but may still pass (TFP201: TensorFlow ops in a "
        "child forked after the runtime started, which hang once an op is big enough to use the runtime's "
        "thread pools), warn and let it run instead; the same as the environment variable "
        f"{state.WARN_ENV}=1, which also works under pytest --tfproc-guard and with install(). Errors the "
        "program would raise anyway (pickling, bootstrapping) stay errors.")


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        print(HELP, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] == "--warn":
        os.environ[state.WARN_ENV] = "1"  # read by this process and inherited by its workers
        argv = argv[1:]
        if not argv:
            print(USAGE, file=sys.stderr)
            return 2
    from . import install

    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        sys.path.insert(0, os.getcwd())
        install()
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    if not os.path.isfile(script):
        print(f"python -m tfproc_lint.guard: can't open file {script!r}: no such file", file=sys.stderr)
        return 2
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    install()
    run_script(script)
    return 0


def run_script(script: str) -> None:
    """Run the file as `python script.py` does: a fresh `__main__` module that stays in sys.modules
    after an exception too (runpy.run_path puts its own back, and a pool still forking workers would
    then give them this module as `__main__`)."""
    import builtins
    import types

    with open(script, "rb") as handle:
        code = compile(handle.read(), script, "exec", dont_inherit=True)
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=script, __builtins__=builtins, __cached__=None, __loader__=None,
                         __package__=None, __spec__=None)
    sys.modules["__main__"] = main
    exec(code, main.__dict__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
