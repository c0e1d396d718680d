"""Entry point of a package: asks for spawn, but importing `augment` already set fork.

`augment/__init__.py` calls `multiprocessing.set_start_method("fork")` when the entry imports
`augment.ops`; the entry's own `set_start_method("spawn")` then raises
`RuntimeError: context has already been set` in the parent.
"""
import multiprocessing as mp

from augment.ops import jitter

from runtime_probe.support import report

PROBE = {
    "quick": True,
    "rule": "TFP203",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "RuntimeError", "match": "context has already been set",
               "where": "parent"},
    "timeout": 40,
}


def main():
    mp.set_start_method("spawn")
    seeds = [1, 2, 3, 4]
    with mp.Pool(2) as pool:
        means = pool.map(jitter, seeds)
    report(means, [0.5] * len(seeds), rel_tol=0.01)


if __name__ == "__main__":
    main()
