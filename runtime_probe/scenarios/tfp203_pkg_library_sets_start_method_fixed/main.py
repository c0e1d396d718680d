"""The twin of tfp203_pkg_library_sets_start_method_bad: the package keeps its own context instead of
setting the global start method at import, so the entry point's `set_start_method("spawn")` is the
only one, and the spawned workers (which import `augment` again) run the jitter.
"""
import multiprocessing as mp

from augment.ops import jitter

from runtime_probe.support import report

PROBE = {
    "quick": True,
    "rule": "TFP203",
    "kind": "fixed",
    "expect": {"outcome": "ok"},
    "timeout": 90,
}


def main():
    mp.set_start_method("spawn")
    seeds = [1, 2, 3, 4]
    with mp.Pool(2) as pool:
        means = pool.map(jitter, seeds)
    report(means, [0.5] * len(seeds), rel_tol=0.01)


if __name__ == "__main__":
    main()
