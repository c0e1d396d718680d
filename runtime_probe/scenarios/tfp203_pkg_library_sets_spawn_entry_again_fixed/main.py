"""The twin of tfp203_pkg_library_sets_spawn_entry_again_bad: the library and the entry force their
choice (`force=True`), so neither the entry nor a spawned worker (which imports `pipeline.steps`
again) raises, and the workers return their totals.
"""
import multiprocessing as mp

from pipeline.steps import SIZE, total

from runtime_probe.support import report

PROBE = {"rule": "TFP203", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 90}


def main():
    mp.set_start_method("spawn", force=True)
    seeds = [1, 2]
    with mp.Pool(2) as pool:
        totals = pool.map(total, seeds)
    report(totals, [SIZE * SIZE + seed for seed in seeds])


if __name__ == "__main__":
    main()
