"""Editor latency of `tfproc-lint server`: the time from a `textDocument/didChange` to the
`textDocument/publishDiagnostics` for that version, on a 50-line file with findings, after warm-up.

The server is started as an editor starts it (`tfproc-lint server`, stdio) and driven by pygls's
LanguageClient; each change edits one line and waits for its diagnostics before the next.

    .venv/bin/python benchmarks/lsp_latency.py            # 10 warm-up changes, 50 timed
    .venv/bin/python benchmarks/lsp_latency.py --changes 200 --json latency.json

Needs the `server` extra (pip install -e '.[server]') and Linux (the server's CPU time is read from
/proc). Exits 1 when the median is 0.1 s or more.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

TARGET_S = 0.1

# 50 lines: a pool whose task loads the model on every call (TFP301, a warning with an unsafe fix),
# workers forked after the parent started TensorFlow (TFP201) and a GPU setting made too late (TFP403).
FILE = '''"""Score images in worker processes."""
import multiprocessing as mp
import os
import sys

import numpy as np
import tensorflow as tf

MODEL_PATH = "classifier.keras"
BATCH = 0
WORKERS = 4
SIZE = 32
DEFAULT_BATCHES = 8


def score(batch):
    """Class ids for one batch."""
    model = tf.keras.models.load_model(MODEL_PATH, compile=False)
    return model.predict(batch, verbose=0).argmax(axis=1)


def batches(count, size=SIZE):
    rng = np.random.default_rng(BATCH)
    for _ in range(count):
        yield rng.random((size, 32, 32, 3), dtype=np.float32)


def warm_up():
    print("TensorFlow", tf.__version__, float(tf.reduce_sum(tf.ones((2, 2)))))
    os.environ["CUDA_VISIBLE_DEVICES"] = "0"


def report(labels):
    counts = np.bincount(np.concatenate(labels))
    for label, count in enumerate(counts):
        print(f"class {label}: {count}")
    return counts


def main(argv):
    count = int(argv[1]) if len(argv) > 1 else DEFAULT_BATCHES
    warm_up()
    with mp.Pool(WORKERS) as pool:
        labels = pool.map(score, batches(count))
    report(labels)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
'''


def server_command() -> list[str]:
    beside = Path(sys.executable).parent / "tfproc-lint"
    return [str(beside) if beside.exists() else "tfproc-lint", "server"]


async def measure(warm_up: int, changes: int) -> dict:
    assert FILE.count("\n") == 50, FILE.count("\n")
    client = LanguageClient("lsp-latency", "1")
    arrived: dict[int, float] = {}
    codes: dict[int, list[str]] = {}
    event = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def publish(params: types.PublishDiagnosticsParams) -> None:
        arrived[params.version] = time.perf_counter()
        codes[params.version] = sorted(str(d.code) for d in params.diagnostics)
        event.set()

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def log(params: types.LogMessageParams) -> None:
        pass

    async def wait(version: int) -> float:
        while version not in arrived:
            event.clear()
            await asyncio.wait_for(event.wait(), 60)
        return arrived[version]

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "score.py"
        path.write_text(FILE)
        command = server_command()
        await client.start_io(command[0], *command[1:], cwd=folder)
        await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities(),
                                                             root_uri=Path(folder).as_uri()))
        client.initialized(types.InitializedParams())
        uri = path.as_uri()
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=FILE)))
        await wait(1)
        line, current = FILE.split("\n").index("BATCH = 0"), "BATCH = 0"
        latencies = []
        cpu_before = 0.0
        for version in range(2, 2 + warm_up + changes):  # each change rewrites one line, as typing does
            sent = time.perf_counter()
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(line, 0), end=types.Position(line, len(current))),
                    text=f"BATCH = {version}")]))
            current = f"BATCH = {version}"
            if version == 2 + warm_up:
                cpu_before = server_cpu(client._server.pid)
            received = await wait(version)
            if version >= 2 + warm_up:
                latencies.append(received - sent)
        server_cpu_per_change = (server_cpu(client._server.pid) - cpu_before) / changes
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
    return {
        "file_lines": FILE.count("\n"),
        **dict(zip(("engine_median_s", "engine_cpu_median_s"), engine_medians(warm_up, changes))),
        "findings": codes[1 + warm_up + changes],
        "server_cpu_per_change_s": server_cpu_per_change,
        "warm_up_changes": warm_up,
        "timed_changes": changes,
        "median_s": statistics.median(latencies),
        "p90_s": sorted(latencies)[int(0.9 * (len(latencies) - 1))],
        "min_s": min(latencies),
        "max_s": max(latencies),
        "cpus": os.cpu_count(),
    }


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system) the server process has used (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def engine_medians(warm_up: int, changes: int) -> tuple[float, float]:
    """The engine alone on the same texts, in this process (`lint_source`, as the server calls it):
    median wall time (the rest of the latency is the server's and the protocol's) and median CPU
    time of the thread (what the lint costs whatever else the machine runs)."""
    from tfproc_lint.engine import lint_source

    wall, cpu = [], []
    for version in range(2, 2 + warm_up + changes):
        text = FILE.replace("BATCH = 0", f"BATCH = {version}")
        start, start_cpu = time.perf_counter(), time.thread_time()
        lint_source(text, "score.py")
        if version >= 2 + warm_up:
            wall.append(time.perf_counter() - start)
            cpu.append(time.thread_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warm-up", type=int, default=10)
    parser.add_argument("--changes", type=int, default=50)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    result = asyncio.run(measure(args.warm_up, args.changes))
    result["load_average_1min"] = [load_before, os.getloadavg()[0]]
    print(f"didChange -> publishDiagnostics on a {result['file_lines']}-line file ({', '.join(result['findings'])}), "
          f"{result['timed_changes']} changes after {result['warm_up_changes']} warm-up:")
    print(f"  median {result['median_s'] * 1000:.1f} ms, p90 {result['p90_s'] * 1000:.1f} ms, "
          f"min {result['min_s'] * 1000:.1f} ms, max {result['max_s'] * 1000:.1f} ms")
    print(f"  the engine alone on the same texts: median {result['engine_median_s'] * 1000:.1f} ms "
          f"(CPU time {result['engine_cpu_median_s'] * 1000:.1f} ms); the server's CPU time per change "
          f"{result['server_cpu_per_change_s'] * 1000:.1f} ms; "
          f"load average {result['load_average_1min'][0]:.1f} -> {result['load_average_1min'][1]:.1f} "
          f"on {result['cpus']} CPUs")
    passed = result["median_s"] < TARGET_S
    print(f"{'PASS' if passed else 'FAIL'}: median under {TARGET_S * 1000:.0f} ms")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
