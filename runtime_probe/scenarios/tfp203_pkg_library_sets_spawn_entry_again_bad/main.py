"""Entry point of a package: asks for spawn, which importing `pipeline.steps` already set.

`pipeline/steps.py` calls `multiprocessing.set_start_method("spawn")` at import; the entry's own
`set_start_method("spawn")`, the same method, still raises `RuntimeError: context has already been
set` in the parent.
"""
import multiprocessing as mp

from pipeline.steps import SIZE, total

from runtime_probe.support import report

PROBE = {
    "rule": "TFP203",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "RuntimeError", "match": "context has already been set",
               "where": "parent"},
    "timeout": 40,
}


def main():
    mp.set_start_method("spawn")
    seeds = [1, 2]
    with mp.Pool(2) as pool:
        totals = pool.map(total, seeds)
    report(totals, [SIZE * SIZE + seed for seed in seeds])


if __name__ == "__main__":
    main()
