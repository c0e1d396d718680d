"""The runtime guard (tfproc_lint.guard) on real programs, each run in a process of its own through
`python -m tfproc_lint.guard`. The tests without TensorFlow stand in for its objects with classes
whose module and name are TensorFlow's (what the guard goes by) and that refuse to pickle as
TensorFlow's do; test_guard_tensorflow.py runs the real thing."""

from __future__ import annotations

import sys
import textwrap
import time

import pytest

import processes
from conftest import run_env

FAKE_SESSION = '''
class BaseSession:
    def __reduce__(self):
        raise TypeError("cannot pickle 'Graph' object")

BaseSession.__module__ = "tensorflow.python.client.session"


class Session(BaseSession):
    pass

Session.__module__ = "tensorflow.python.client.session"
'''


def guarded(tmp_path, source: str, *args: str, timeout: float = 120, name: str = "prog.py"):
    script = tmp_path / name
    script.write_text(textwrap.dedent(source), encoding="utf-8")
    started = time.monotonic()
    proc = processes.run([sys.executable, "-m", "tfproc_lint.guard", str(script), *args], cwd=tmp_path,
                         env=run_env(), capture_output=True, text=True, timeout=timeout)
    proc.duration = time.monotonic() - started
    return proc


def test_runs_the_script_as_main_with_its_arguments_and_exit_code(tmp_path):
    proc = guarded(tmp_path, """
        import sys
        import tfproc_lint.guard
        print(__name__, sys.argv[1:], tfproc_lint.guard.installed(), sys.path[0] == __file__.rpartition("/")[0])
        sys.exit(3)
    """, "a", "--b")
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.split("\n")[0] == "__main__ ['a', '--b'] True True"


def test_an_uncaught_exception_exits_1_with_its_traceback(tmp_path):
    proc = guarded(tmp_path, "raise KeyError('boom')\n")
    assert proc.returncode == 1
    assert "KeyError: 'boom'" in proc.stderr


def test_usage(tmp_path):
    proc = processes.run([sys.executable, "-m", "tfproc_lint.guard"], capture_output=True, text=True, env=run_env())
    assert proc.returncode == 2 and "usage:" in proc.stderr
    proc = processes.run([sys.executable, "-m", "tfproc_lint.guard", str(tmp_path / "nope.py")],
                         capture_output=True, text=True, env=run_env())
    assert proc.returncode == 2 and "can't open file" in proc.stderr


def test_loads_neither_libcst_nor_the_linter_nor_tensorflow(tmp_path):
    proc = guarded(tmp_path, """
        import sys
        heavy = ("libcst", "tensorflow", "tfproc_lint.engine", "tfproc_lint.rules", "tfproc_lint.analysis")
        print(sorted(m for m in sys.modules if m.startswith(heavy)))
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_spawned_workers_reimport_the_script_and_run_guarded(tmp_path, method):
    proc = guarded(tmp_path, f"""
        import multiprocessing as mp
        import tfproc_lint.guard

        def work(x):
            return x * 2, tfproc_lint.guard.installed(), __name__

        if __name__ == "__main__":
            with mp.get_context({method!r}).Pool(2) as pool:
                print(pool.map(work, [1, 2]))
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[(2, True, '__mp_main__'), (4, True, '__mp_main__')]"


def test_a_session_sent_to_pool_tasks_names_tfp101_the_object_and_the_route(tmp_path):
    proc = guarded(tmp_path, FAKE_SESSION + """
import multiprocessing as mp

def work(sess):
    return 1

if __name__ == "__main__":
    with mp.get_context("fork").Pool(2) as pool:
        try:
            pool.map(work, [Session()])
        except TypeError as exc:  # still the error type the program may catch
            print("caught", type(exc).__name__)
            raise
""")
    assert proc.returncode == 1
    assert "caught TFP101TypeError" in proc.stdout
    last = proc.stderr.strip().splitlines()[-1]
    assert "TFP101: a tf.compat.v1.Session (tensorflow.python.client.session.Session) cannot be sent through a Pool " \
           "task" in last
    assert "cannot pickle 'Graph' object" in last and "Fix:" in last


def test_a_bound_method_holding_a_session_is_tfp103(tmp_path):
    proc = guarded(tmp_path, FAKE_SESSION + """
import multiprocessing as mp

class Scorer:
    def __init__(self):
        self.sess = Session()

    def score(self, x):
        return x

if __name__ == "__main__":
    with mp.get_context("spawn").Pool(1) as pool:
        pool.map(Scorer().score, [1])
""")
    assert proc.returncode == 1
    assert "TFP103: a tf.compat.v1.Session" in proc.stderr
    assert "held by the object of the bound method" in proc.stderr


def test_a_session_given_to_a_spawned_process_names_the_process_route(tmp_path):
    proc = guarded(tmp_path, FAKE_SESSION + """
import multiprocessing as mp

def work(sess):
    pass

if __name__ == "__main__":
    mp.get_context("spawn").Process(target=work, args=(Session(),)).start()
""")
    assert proc.returncode == 1
    assert "TFP101: a tf.compat.v1.Session" in proc.stderr
    assert "a Process's target and arguments (start method spawn or forkserver)" in proc.stderr


def test_a_queue_item_that_cannot_be_pickled_is_an_error_not_a_wait_forever(tmp_path):
    # Without the guard the feeder thread prints the pickling error and `get()` waits forever.
    proc = guarded(tmp_path, FAKE_SESSION + """
import multiprocessing as mp

def consume(queue, results):
    results.put(queue.get() is not None)

if __name__ == "__main__":
    ctx = mp.get_context("fork")
    queue, results = ctx.Queue(), ctx.Queue()
    consumer = ctx.Process(target=consume, args=(queue, results), daemon=True)
    consumer.start()
    queue.put(Session())
    print(results.get())
""", timeout=60)
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("tfproc_lint.guard.errors.TFP101Error: TFP101: a tf.compat.v1.Session"), last
    assert "a multiprocessing Queue (put, pickled later in its feeder thread)" in last
    assert proc.duration < 30


def test_plain_pickling_errors_stay_as_they_were(tmp_path):
    proc = guarded(tmp_path, """
import multiprocessing as mp
import threading

def work(lock):
    pass

if __name__ == "__main__":
    with mp.get_context("fork").Pool(1) as pool:
        pool.map(work, [threading.Lock()])
""")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == "TypeError: cannot pickle '_thread.lock' object"
    assert "TFP" not in proc.stderr


def test_setting_the_start_method_twice_is_tfp203_with_the_first_place(tmp_path):
    proc = guarded(tmp_path, """
import multiprocessing as mp

def use_spawn():
    mp.set_start_method("spawn")

if __name__ == "__main__":
    use_spawn()
    use_spawn()
""")
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert "StartMethodError: TFP203: set_start_method('spawn') at " in last
    assert "prog.py:5 in use_spawn after the start method was set already (first set at " in last
    assert "context has already been set" in last


def test_a_start_method_a_library_sets_at_import_names_the_library_in_the_fix(tmp_path):
    (tmp_path / "forking_lib.py").write_text('import multiprocessing\nmultiprocessing.set_start_method("fork")\n',
                                             encoding="utf-8")
    proc = guarded(tmp_path, """
import multiprocessing as mp
import forking_lib

if __name__ == "__main__":
    mp.set_start_method("spawn")
""")
    last = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode == 1 and "StartMethodError: TFP203: set_start_method('spawn') at " in last
    assert "Fix: remove the call at " in last and "forking_lib.py:2, which runs whenever its module is imported" in last


def test_a_pool_started_at_import_under_spawn_is_tfp202_not_a_lost_task(tmp_path):
    # Without the guard every spawned worker dies re-importing the script and the pool replaces it forever.
    proc = guarded(tmp_path, """
import multiprocessing as mp

def double(x):
    return 2 * x

mp.set_start_method("spawn")
with mp.Pool(2) as pool:
    print(pool.map(double, [1, 2]))
""", timeout=90)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "WorkerBootstrapError: TFP202: spawned worker process" in proc.stderr
    assert proc.duration < 60


def test_tfp202_keeps_the_text_and_the_place_of_the_error_it_wraps(tmp_path):
    # Python's bootstrapping error starts with a newline: its first line is empty.
    proc = guarded(tmp_path, """
import multiprocessing as mp

def double(x):
    return 2 * x

with mp.get_context("spawn").Pool(2) as pool:
    print(pool.map(double, [1, 2]))
""", timeout=90)
    assert proc.returncode == 1, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("tfproc_lint.guard.errors.WorkerBootstrapError: TFP202: spawned worker process"), last
    assert (f"when imported (at {tmp_path / 'prog.py'}:7): RuntimeError: An attempt has been made to start a new "
            "process before the current process has finished its bootstrapping phase; the worker dies") in last


# The parent busy in native code (as in TensorFlow's `fit`) while the workers of its module-level pool die one
# after another re-importing the script: it runs no signal handler until the call returns.
BUSY_PARENT = """
import hashlib
import multiprocessing as mp

def double(x):
    return 2 * x

pool = mp.get_context("spawn").Pool(2)
result = pool.map_async(double, [1, 2])
hashlib.pbkdf2_hmac("sha256", b"x", b"y", 3_000_000)
print(result.get())
"""


@pytest.mark.slow
def test_a_failing_pool_prints_its_error_once_on_a_line_of_its_own_and_exits_clean(tmp_path):
    from runtime_probe import process

    (tmp_path / "prog.py").write_text(BUSY_PARENT, encoding="utf-8")
    env = run_env()
    env["PYTHONUNBUFFERED"] = "1"  # as the probe runs scripts: each write of a print goes out on its own
    run = process.execute([sys.executable, "-m", "tfproc_lint.guard", "prog.py"], timeout=120, cwd=tmp_path,
                          env=env)
    err = run.stderr
    assert run.returncode == 1 and not run.killed, err[-3000:]
    assert err.count("TFP202: spawned worker process") == 2, err[-3000:]  # one worker's line, the parent's error
    assert err.startswith("tfproc-guard (pid ") and err.count("tfproc-guard (pid ") == 1, err[-3000:]
    assert err.count("Traceback (most recent call last)") == 1, err[-3000:]  # the parent's only
    assert err.strip().splitlines()[-1].startswith("tfproc_lint.guard.errors.WorkerBootstrapError: TFP202:")
    assert "Exception ignored" not in err and "leaked" not in err, err[-3000:]
    assert run.leftovers == []


def test_a_pool_awaited_by_another_thread_fails_while_the_main_thread_runs_no_handler(tmp_path):
    # As Keras' data workers: a feeder thread waits on the pool while the main thread is inside TensorFlow's
    # native code, where the signal from the failing worker raises nothing (here: blocked in the main thread).
    proc = guarded(tmp_path, """
import multiprocessing as mp
import os
import signal
import threading

def double(x):
    return 2 * x

pool = mp.get_context("spawn").Pool(2)
done_r, done_w = os.pipe()
outcome = []

def feed():
    try:
        outcome.append(pool.map(double, [1, 2]))
    except Exception as exc:
        outcome.append(exc)
    os.write(done_w, b"x")

threading.Thread(target=feed, daemon=True).start()
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})
os.read(done_r, 1)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR2})
print(type(outcome[0]).__name__, getattr(outcome[0], "code", None))
pool.terminate()
""", timeout=90)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "WorkerBootstrapError TFP202"


def test_a_fork_child_without_tensorflow_is_left_alone(tmp_path):
    proc = guarded(tmp_path, """
import os

pid = os.fork()
if pid == 0:
    os._exit(7)
print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
""")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "7" and not proc.stderr


def test_install_is_idempotent_and_keeps_os_environ(tmp_path):
    proc = guarded(tmp_path, """
import os
import tfproc_lint.guard

before = os.environ
tfproc_lint.guard.install()
tfproc_lint.guard.install()
os.environ["TF_NUM_INTRAOP_THREADS"] = "1"  # the runtime did not start: nothing to say
print(os.environ is before, os.environ["TF_NUM_INTRAOP_THREADS"], os.getenv("TF_NUM_INTRAOP_THREADS"))
""")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True 1 1" and not proc.stderr


@pytest.mark.slow
def test_joblib_loky_tasks_get_the_rule_as_the_cause_of_their_pickling_error(tmp_path):
    pytest.importorskip("joblib")
    proc = guarded(tmp_path, FAKE_SESSION + """
from joblib import Parallel, delayed

def work(sess):
    return 1

if __name__ == "__main__":
    Parallel(n_jobs=2)(delayed(work)(Session()) for _ in range(2))
""")
    assert proc.returncode == 1
    assert "PicklingError: Could not pickle the task to send it to the workers." in proc.stderr
    assert "TFP101: a tf.compat.v1.Session (tensorflow.python.client.session.Session) cannot be sent through " \
           "a joblib.Parallel task (loky backend)" in proc.stderr


class Holder:
    def method(self):
        return self


def test_what_a_worker_unpickles_is_recognised_as_a_bound_method_or_closure():
    import pickle

    from tfproc_lint.guard.crossing import _how_pickled

    assert _how_pickled(pickle.dumps(Holder().method)) == ""  # getattr(obj, name): Keras models use it too
    assert _how_pickled(pickle.dumps([1, "getattr", {"builtins": 2}])) == ""
    dill = pytest.importorskip("dill")
    captured = 3
    assert "closure" in _how_pickled(dill.dumps(lambda: captured))


# A stand-in for a Keras model that pickles (as Keras 3 models do): its class is "keras"'s Model, and it
# is rebuilt in the worker by a function of the script whose name holds "keras" (as a real model's pickle
# holds keras's modules), so that the guard's look for TensorFlow in a task's bytes finds it.
FAKE_MODEL = '''
import sys
import types

sys.modules.setdefault("keras", types.ModuleType("keras"))  # the guard looks only when keras is imported


def rebuild_keras_model():
    return Model()


class Model:
    def __reduce__(self):
        return rebuild_keras_model, ()

Model.__module__ = "keras.src.models.model"


class Explainer:
    def __init__(self, model):
        self.model = model

    def explain(self, x):
        return x * 3


def score(model, x):
    return x * 2
'''


@pytest.mark.parametrize("action", ["default", "error"])  # error: the warning must not become the program's error
def test_a_model_pickled_into_every_pool_task_is_a_tfp102_warning_and_the_run_goes_on(tmp_path, action):
    proc = guarded(tmp_path, FAKE_MODEL + f"""
import multiprocessing as mp
import warnings

if __name__ == "__main__":
    warnings.simplefilter("{action}")
    model = Model()
    with mp.get_context("fork").Pool(2) as pool:  # forked before any runtime started: only the cost
        print(pool.starmap(score, [(model, i) for i in range(8)], chunksize=1))
        print(pool.starmap(score, [(Model(), i) for i in range(8)], chunksize=1))  # a new one each task: data
""")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [str([i * 2 for i in range(8)])] * 2
    assert proc.stderr.count("TFP102: ") == 1, proc.stderr
    assert "a Keras model (keras.src.models.model.Model) is pickled into every task sent through a Pool task " \
           "(map, apply, imap and friends), " in proc.stderr
    if action == "error":
        assert "tfproc-guard: TFP102: " in proc.stderr
    else:  # shown where the main thread waits on the pool
        line = next(number for number, text in enumerate((tmp_path / "prog.py").read_text().splitlines(), start=1)
                    if "pool.starmap(score, [(model, i)" in text)
        assert f"prog.py:{line}: GuardWarning: TFP102: " in proc.stderr, proc.stderr


@pytest.mark.parametrize("how, code", [("partial", "TFP102"), ("bound method", "TFP103"), ("argument", "TFP102")])
def test_a_model_sent_to_pool_workers_forked_after_the_start_fails_at_once_in_the_parent(tmp_path, how, code):
    send = {"partial": "pool.map(functools.partial(score, model), range(4))",
            "bound method": "pool.map(Explainer(model).explain, range(4))",
            "argument": "pool.starmap(score, [(model, i) for i in range(4)])"}[how]
    proc = guarded(tmp_path, FAKE_MODEL + f"""
import functools
import multiprocessing as mp

from tfproc_lint.guard import state

if __name__ == "__main__":
    model = Model()
    state.record("the test started the runtime")  # as TensorFlow's first op does under the guard
    with mp.get_context("fork").Pool(2) as pool:
        print({send})
""", timeout=60)
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"tfproc_lint.guard.errors.{code}Error: {code}: a Keras model"), last
    assert "to pool workers forked after TensorFlow's runtime started when the test started the runtime" in last
    assert "Fix for TFP201:" in last
    assert ("held by the object of the bound method" in last) == (code == "TFP103")


def test_a_model_sent_to_multiprocess_pool_workers_forked_after_the_start_is_tfp102(tmp_path):
    pytest.importorskip("multiprocess")
    proc = guarded(tmp_path, FAKE_MODEL + """
import multiprocess

from tfproc_lint.guard import state

if __name__ == "__main__":
    model = Model()
    state.record("the test started the runtime")
    with multiprocess.Pool(2) as pool:  # forks; dill pickles the task's function by value
        print(pool.starmap(score, [(model, i) for i in range(4)]))
""", timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("tfproc_lint.guard.errors.TFP102Error: TFP102: "), \
        proc.stderr


@pytest.mark.slow
def test_a_model_pickled_into_every_joblib_task_is_a_tfp102_warning(tmp_path):
    pytest.importorskip("joblib")
    proc = guarded(tmp_path, FAKE_MODEL + """
from joblib import Parallel, delayed

if __name__ == "__main__":
    model = Model()
    print(Parallel(n_jobs=2, batch_size=1)(delayed(score)(model, i) for i in range(8)))
""", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str([i * 2 for i in range(8)])
    assert "TFP102: a Keras model (keras.src.models.model.Model) is pickled into every task sent through a " \
           "joblib.Parallel task (loky backend)" in proc.stderr
    # Shown at the line where the program waits on the pool, not in the pool's thread that pickles the tasks.
    line = next(number for number, text in enumerate((tmp_path / "prog.py").read_text().splitlines(), start=1)
                if "Parallel(n_jobs=2" in text)
    assert f"prog.py:{line}: GuardWarning: TFP102: " in proc.stderr, proc.stderr


def test_pool_workers_learn_that_their_pool_has_one_worker_per_cpu(tmp_path):
    proc = guarded(tmp_path, """
import multiprocessing as mp
import multiprocessing.pool


def mark(_):
    return getattr(mp.current_process(), "_tfproc_cpu_sized", None)


if __name__ == "__main__":
    for method in ("fork", "spawn"):
        ctx = mp.get_context(method)
        with ctx.Pool() as pool:
            print(set(pool.map(mark, range(4))) == {mp.cpu_count()})
        with ctx.Pool(1) as pool:
            print(pool.map(mark, range(2)))
    with multiprocessing.pool.ThreadPool() as pool:
        print(pool.map(mark, range(2)))
""")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "[None,", "None]", "True", "[None,", "None]", "[None,", "None]"]


def test_a_task_too_big_to_search_is_walked_instead(monkeypatch):
    from tfproc_lint.guard import costs, crossing, errors

    class Model:
        pass

    Model.__module__ = "keras.src.models.model"
    monkeypatch.setattr(costs, "_warned", set())
    monkeypatch.setattr(costs, "_crossings", {})
    model, data = Model(), bytes(crossing.SEARCH_MAX + 1)  # no module name in these bytes: arrays only
    with pytest.warns(errors.GuardWarning, match="TFP102: a Keras model .* is pickled into every task"):
        for _ in range(costs.REPEATS):
            crossing.sent((0, 0, print, (data, model), {}), data, "a joblib.Parallel task (loky backend)")
    small = bytes(1000)  # small and without the names: not walked, nothing counted
    crossing.sent((0, 0, print, (small, model), {}), small, "a joblib.Parallel task (loky backend)")
    assert costs._crossings == {id(model): costs.REPEATS}
