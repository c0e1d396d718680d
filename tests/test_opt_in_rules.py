"""The opt-in rules TFP302 and TFP303: off by default, on when a selector more specific than `TFP`
names them (command line, configuration, flake8); what they report; and the figures their
messages quote, against the committed benchmark report."""

from __future__ import annotations

import json
import textwrap

import pytest
import processes
from conftest import ROOT, run_env, tool

from tfproc_lint.cli import main
from tfproc_lint.config import Config, apply_options, load_config
from tfproc_lint.engine import enabled_rules, lint_source
from tfproc_lint.rules import tfp302_model_per_cpu as tfp302
from tfproc_lint.rules import tfp303_row_at_a_time_inference as tfp303
from tfproc_lint.rules.base import all_rules

OPT_IN = ("TFP302", "TFP303")
REPORT = ROOT / "docs" / "probe" / "report.json"

BOTH = textwrap.dedent("""\
    import multiprocessing as mp
    import tensorflow as tf

    model = None

    def load():
        global model
        model = tf.keras.models.load_model("m.keras")

    def predict_row(row):
        return model.predict_on_batch(row[None])[0]

    if __name__ == "__main__":
        with mp.get_context("spawn").Pool(initializer=load) as pool:
            print(pool.map(predict_row, rows))
    """)


def codes(source: str, **options) -> list[str]:
    config = apply_options(Config(), options, "test") if options else Config()
    return sorted(d.code for d in lint_source(source, "t.py", config))


def message(source: str, code: str, **options) -> str:
    config = apply_options(Config(), {"extend-select": code, **options}, "test")
    found = [d.message for d in lint_source(source, "t.py", config) if d.code == code]
    assert len(found) == 1, found
    return found[0]


# Selection ---------------------------------------------------------------------------------------------
def test_the_opt_in_rules_are_marked_and_the_others_are_not() -> None:
    assert {rule.code for rule in all_rules() if not rule.default_enabled} == set(OPT_IN)
    assert not {rule.code for rule in enabled_rules(Config())} & set(OPT_IN)


@pytest.mark.parametrize("options, expected", [
    ({}, []),
    ({"select": "TFP"}, []),                                  # the bare prefix never turns them on
    ({"extend-select": "TFP"}, []),
    ({"select": "TFP3"}, ["TFP302", "TFP303"]),
    ({"select": "TFP30"}, ["TFP302", "TFP303"]),
    ({"extend-select": "TFP302"}, ["TFP302"]),
    ({"extend-select": "TFP3", "ignore": "TFP303"}, ["TFP302"]),
    ({"ignore": "TFP3", "extend-select": "TFP302"}, ["TFP302"]),  # the longer selector wins
    ({"select": "TFP1", "extend-select": "TFP303"}, ["TFP303"]),
])
def test_which_selectors_enable_them(options, expected) -> None:
    assert codes(BOTH, **options) == expected


def test_is_enabled_counts_only_specific_selectors_for_an_opt_in_rule() -> None:
    config = apply_options(Config(), {"select": "TFP, TFP1"}, "test")
    assert config.is_enabled("TFP302") and not config.is_enabled("TFP302", default_enabled=False)
    assert config.is_enabled("TFP101", default_enabled=False)  # TFP1 is more than the bare prefix


def test_configuration_files_enable_them(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "app.py").write_text(BOTH)
    (tmp_path / "pyproject.toml").write_text('[tool.tfproc-lint]\nextend-select = ["TFP3"]\n')
    monkeypatch.chdir(tmp_path)
    assert load_config(tmp_path).is_enabled("TFP303", default_enabled=False)
    assert main(["check", "-j", "1", "--format", "json", "app.py"]) == 1
    assert sorted(f["code"] for f in json.loads(capsys.readouterr().out)["findings"]) == ["TFP302", "TFP303"]
    assert main(["check", "-j", "1", "--select", "TFP", "app.py"]) == 0  # the command line replaces select
    capsys.readouterr()
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / "setup.cfg").write_text("[tfproc_lint]\nselect = TFP\nextend-select = TFP302\n")
    assert main(["check", "-j", "1", "-q", "app.py"]) == 1
    assert "TFP302" in capsys.readouterr().out


def test_rules_listing_marks_them(capsys) -> None:
    assert main(["rules"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    for code in OPT_IN:
        assert f"(opt-in: --extend-select {code})" in lines[code]
    assert "opt-in" not in lines["TFP301"]
    assert main(["rules", "--format", "json"]) == 0
    listing = {rule["code"]: rule["opt_in"] for rule in json.loads(capsys.readouterr().out)}
    assert listing == {rule.code: rule.code in OPT_IN for rule in all_rules()}


def test_docs_readme_and_sarif_mark_them(capsys) -> None:
    from tfproc_lint.docs import render_index, render_rule
    from tfproc_lint.output import Run
    from tfproc_lint.output.sarif import sarif_log

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for rule in all_rules():
        opt_in = rule.code in OPT_IN
        assert ("**Opt-in**" in render_rule(rule)) is opt_in
        rows = [line for line in readme.splitlines() if line.startswith(f"| [{rule.code}]")]
        assert len(rows) == 1, f"README.md's table \"What it catches\" needs one row for {rule.code}, found {len(rows)}"
        (row,) = rows
        assert ("**Opt-in.**" in row) is opt_in, row
    assert render_index().count("**opt-in**") == len(OPT_IN)
    descriptors = sarif_log(Run([]))["runs"][0]["tool"]["driver"]["rules"]
    assert {d["id"]: d["defaultConfiguration"]["enabled"] for d in descriptors} == {
        rule.code: rule.code not in OPT_IN for rule in all_rules()}


@pytest.mark.slow
def test_the_command_line(tmp_path) -> None:
    (tmp_path / "app.py").write_text(BOTH)
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = demo\n")

    def run(*args):
        return processes.run([tool("tfproc-lint"), "check", "app.py", "-q", *args], cwd=tmp_path, env=run_env(),
                             capture_output=True, text=True, timeout=120, check=False)

    assert run().returncode == 0 and run("--select", "TFP").returncode == 0
    selected = run("--extend-select", "TFP3")
    assert selected.returncode == 1 and "TFP302" in selected.stdout and "TFP303" in selected.stdout
    assert "TFP303" not in run("--extend-select", "TFP302").stdout


# TFP302 ------------------------------------------------------------------------------------------------
POOL_TEMPLATE = textwrap.dedent("""\
    import multiprocessing as mp
    import os
    from concurrent.futures import ProcessPoolExecutor
    import tensorflow as tf

    model = None

    def load():
        global model
        model = tf.keras.models.load_model("m.keras")

    def score(batch):
        return model.predict_on_batch(batch)

    if __name__ == "__main__":
        {setup}
        with {pool} as pool:
            print(list(pool.map(score, batches)))
    """)


def pool_source(pool: str, setup: str = "pass") -> str:
    return POOL_TEMPLATE.format(pool=pool, setup=setup)


@pytest.mark.parametrize("pool, setup", [
    ("mp.Pool(initializer=load)", "pass"),
    ("mp.get_context('spawn').Pool(None, load)", "pass"),
    ("mp.Pool(os.cpu_count(), load)", "pass"),
    ("mp.Pool(processes=mp.cpu_count(), initializer=load)", "pass"),
    ("mp.Pool(workers, load)", "workers = os.cpu_count() - 1"),
    ("ProcessPoolExecutor(initializer=load)", "pass"),
    ("ProcessPoolExecutor(max_workers=None, initializer=load)", "pass"),
])
def test_pools_sized_by_the_cpu_count_are_reported(pool, setup) -> None:
    assert codes(pool_source(pool, setup), **{"extend-select": "TFP302"}) == ["TFP302"]


@pytest.mark.parametrize("pool, setup", [
    ("mp.Pool(2, initializer=load)", "pass"),
    ("mp.Pool(workers, load)", "workers = min(4, os.cpu_count())"),
    ("mp.Pool(args.workers, load)", "pass"),
    ("ProcessPoolExecutor(max_workers=4, initializer=load)", "pass"),
    ("mp.Pool()", "pass"),  # its workers build nothing
    ("mp.pool.ThreadPool(initializer=load)", "import multiprocessing.pool"),
])
def test_explicit_counts_and_workers_without_models_are_not(pool, setup) -> None:
    assert codes(pool_source(pool, setup), **{"extend-select": "TFP302"}) == []


def test_the_message_quotes_the_measured_memory_for_the_start_method(monkeypatch) -> None:
    monkeypatch.setattr(tfp302.os, "cpu_count", lambda: 16)
    spawn = message(pool_source("mp.get_context('spawn').Pool(initializer=load)"), "TFP302")
    assert "starts one worker per CPU" in spawn and "can reach" in spawn
    assert "about 540 MiB per spawn worker (measured)" in spawn and "16 CPUs here (16 x 540 MiB)" in spawn
    assert "8.4 GiB" in spawn and "33.8 GiB on a 64-CPU server" in spawn
    assert "explicit small worker count" in spawn and "queues" in spawn and "threads" in spawn
    fork = message(pool_source("mp.Pool(initializer=load)"), "TFP302")
    assert "about 265 MiB per fork worker (measured)" in fork and "(fork assumed:" in fork
    forkserver = message(pool_source("mp.Pool(initializer=load)"), "TFP302", **{"target-python": "3.14"})
    assert "265 MiB per forkserver worker" in forkserver and "(forkserver assumed: target Python 3.14" in forkserver
    fewer = message(pool_source("mp.Pool(workers, load)", "workers = os.cpu_count() - 1"), "TFP302")
    assert "one worker per CPU less 1" in fewer and "15 x 265 MiB" in fewer


def test_a_handful_of_written_out_tasks_is_not_one_model_per_cpu() -> None:
    source = textwrap.dedent("""\
        import multiprocessing as mp
        import tensorflow as tf

        def train(seed):
            model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
            return model.fit(x, y).history

        if __name__ == "__main__":
            with mp.Pool() as pool:
                print(pool.map(train, [1, 2, 3]))
            with mp.Pool() as pool:
                print(pool.map(train, range(64)))
        """)
    assert codes(source, **{"extend-select": "TFP302"}) == ["TFP302"]


# TFP303 ------------------------------------------------------------------------------------------------
TASK_TEMPLATE = textwrap.dedent("""\
    import multiprocessing as mp
    import numpy as np
    import tensorflow as tf

    model = None
    scorer = tf.saved_model.load("export/")

    def load():
        global model
        model = tf.keras.models.load_model("m.keras")

    def task(row, extra=None):
        {body}

    if __name__ == "__main__":
        with mp.get_context("spawn").Pool(2, initializer=load) as pool:
            results = {call}
    """)


def task_source(body: str, call: str = "pool.map(task, rows)") -> str:
    return TASK_TEMPLATE.format(body=body, call=call)


@pytest.mark.parametrize("body", [
    "return model.predict(row[None])",
    "return model.predict_on_batch(row[np.newaxis, :])",
    "return model(np.expand_dims(row, 0))",
    "return model(np.expand_dims(row, axis=0))",
    "return model.predict(np.array([row]), verbose=0)",
    "return model(row.reshape(1, -1))",
    "return model(np.reshape(row, (1, -1)))",
    "batch = np.asarray(row, dtype=np.float32)[None]\n    return model(batch)",
    "x = row['features'].astype('float32') / 255.0\n    return model.predict(x[None])",
    "return scorer(tf.expand_dims(tf.constant(row), 0))",
])
def test_one_row_batches_are_reported(body) -> None:
    assert codes(task_source(body), **{"extend-select": "TFP303"}) == ["TFP303"]


@pytest.mark.parametrize("call", [
    "pool.imap_unordered(task, rows, chunksize=32)",
    "pool.starmap(task, zip(rows, extras))",
    "[pool.apply_async(task, (row,)) for row in rows]",
])
def test_many_tasks_are_reported_whatever_the_pool_call(call) -> None:
    assert codes(task_source("return model.predict(row[None])", call), **{"extend-select": "TFP303"}) == ["TFP303"]


@pytest.mark.parametrize("body, call", [
    ("return model.predict(row)", "pool.map(task, np.array_split(rows, 8))"),  # a chunk per task
    ("return model.predict([row, extra])", "pool.starmap(task, pairs)"),  # a two-input model's inputs
    ("return model.predict([row])", "pool.map(task, chunks)"),  # a list of inputs, not a batch of one
    ("image = tf.io.decode_png(tf.io.read_file(row))\n    return model(image[None])", "pool.map(task, paths)"),
    ("return model.predict(np.load(row)[None])", "pool.map(task, paths)"),
    ("return model.predict(row[None])", "pool.apply(task, (row,))"),  # one task
    ("return model.predict(row[None])", "pool.apply_async(task, (row,)).get()"),
    ("return other.predict(row[None])", "pool.map(task, rows)"),  # not a model the file knows
])
def test_batches_files_and_single_tasks_are_not(body, call) -> None:
    assert codes(task_source(body, call), **{"extend-select": "TFP303"}) == []


def test_the_message_quotes_the_measured_ratios() -> None:
    text = message(task_source("return model.predict(row[None])"), "TFP303")
    chunked, batched = tfp303.speedup("chunked"), tfp303.speedup("batched")
    assert f"64-row chunks {chunked[0]:.0f}-{chunked[1]:.0f}x the rows/s of one row per task" in text
    assert f"one process with 64 rows per call {batched[0]:.0f}-{batched[1]:.0f}x" in text
    assert "`pool.map(predict_chunk, np.array_split(rows, n))`" in text and "line 13:" in text


# The figures, against the committed benchmark report -----------------------------------------------------
def benchmark() -> dict:
    return json.loads(REPORT.read_text(encoding="utf-8"))["benchmark"]["summary"]


def median(row: dict, key: str) -> float:
    return row[key]["median"]


def test_tfp302_memory_per_worker_is_the_benchmarks() -> None:
    """Within 5% of every workload's median worker RSS for the initializer pattern of each method."""
    patterns = {"spawn": "init-spawn", "forkserver": "init-forkserver", "fork": "init-fork"}
    for workload, summary in benchmark().items():
        for method, pattern in patterns.items():
            measured = median(summary["patterns"][pattern], "worker_rss_mib")
            assert abs(tfp302.WORKER_RSS_MIB[method] - measured) <= 0.05 * measured, (workload, method, measured)


def test_tfp303_rates_are_the_benchmarks() -> None:
    """The rows/s the message and docs quote are the committed full run's medians (within 1%: rounding),
    for every workload and pattern; a new full run must bring the constants with it."""
    for workload, summary in benchmark().items():
        for pattern, quoted in tfp303.ROWS_PER_S[workload].items():
            measured = median(summary["patterns"][pattern], "tasks_per_s")
            assert abs(quoted - measured) <= 0.01 * measured, (workload, pattern, quoted, round(measured))
    assert set(tfp303.ROWS_PER_S) == set(benchmark())
