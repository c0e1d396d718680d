"""Entry point of a package: builds and runs the model, then asks `perfkit.perf.limit_threads()`
for one intra-op thread.

The model's first call started the runtime; the setting the helper makes in the other module
raises `RuntimeError: Intra op parallelism cannot be modified after initialization.`
"""
from perfkit import perf
from perfkit.model import batch, build, score

from runtime_probe.support import report

PROBE = {
    "rule": "TFP402",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "RuntimeError",
               "match": "Intra op parallelism cannot be modified after initialization", "where": "parent"},
    "timeout": 40,
}


def main():
    model = build()
    total = score(model, 1)
    perf.limit_threads()
    report(total, float(batch(1).sum()), rel_tol=1e-3)


if __name__ == "__main__":
    main()
