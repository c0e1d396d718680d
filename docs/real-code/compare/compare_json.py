#!/usr/bin/env python3
"""Compare two tfproc-lint JSON outputs (before, after) for one configuration.

usage: compare_json.py CONFIG BEFORE.json AFTER.json
Findings are matched on (code, path, line, column, message) as a multiset;
the fix state (title / applicability, edits) of matched findings is compared
separately. Also compares the `errors` list and the summary counters.
Exit status: 0 same, 1 different.
"""
import collections
import json
import sys


def key(f):
    return (f.get("code"), f.get("path"), f.get("line"), f.get("column"), f.get("message"))


def fixstate(f):
    fx = f.get("fix")
    if not fx:
        return None
    return (fx.get("title"), fx.get("applicability"))


def fixedits(f):
    fx = f.get("fix")
    return json.dumps(fx.get("edits"), sort_keys=True) if fx else None


def short(k):
    code, path, line, col, msg = k
    if len(msg) > 160:
        msg = msg[:157] + "..."
    return f"{code} {path}:{line}:{col} {msg}"


def main():
    config, bpath, apath = sys.argv[1:4]
    b, a = json.load(open(bpath)), json.load(open(apath))
    bf, af = b.get("findings", []), a.get("findings", [])
    print(f"[{config}] findings: before={len(bf)} after={len(af)}")
    differ = False

    bc = collections.Counter(key(f) for f in bf)
    ac = collections.Counter(key(f) for f in af)
    only_b, only_a = bc - ac, ac - bc
    for k, n in sorted(only_b.items(), key=lambda kv: str(kv[0])):
        print(f"  - only before (x{n}): {short(k)}")
    for k, n in sorted(only_a.items(), key=lambda kv: str(kv[0])):
        print(f"  + only after  (x{n}): {short(k)}")
    if only_b or only_a:
        differ = True

    # fix state of findings present on both sides
    bfix = collections.defaultdict(list)
    afix = collections.defaultdict(list)
    for f in bf:
        bfix[key(f)].append((fixstate(f), fixedits(f)))
    for f in af:
        afix[key(f)].append((fixstate(f), fixedits(f)))
    nfix_b = sum(1 for f in bf if f.get("fix"))
    nfix_a = sum(1 for f in af if f.get("fix"))
    print(f"  fixes offered: before={nfix_b} after={nfix_a}")
    for k in sorted(set(bfix) & set(afix), key=str):
        sb, sa = sorted(bfix[k], key=str), sorted(afix[k], key=str)
        if [s for s, _ in sb] != [s for s, _ in sa]:
            differ = True
            print(f"  ~ fix title/applicability differs: {short(k)}")
            print(f"      before: {[s for s, _ in sb]}")
            print(f"      after:  {[s for s, _ in sa]}")
        elif [e for _, e in sb] != [e for _, e in sa]:
            differ = True
            print(f"  ~ fix edits differ: {short(k)}")

    # errors (files that could not be checked)
    be = collections.Counter(json.dumps(e, sort_keys=True) for e in b.get("errors", []))
    ae = collections.Counter(json.dumps(e, sort_keys=True) for e in a.get("errors", []))
    print(f"  errors: before={sum(be.values())} after={sum(ae.values())}")
    for e in sorted((be - ae).elements()):
        differ = True
        print(f"  - error only before: {e}")
    for e in sorted((ae - be).elements()):
        differ = True
        print(f"  + error only after:  {e}")

    bs, as_ = b.get("summary", {}), a.get("summary", {})
    if bs != as_:
        differ = True
        print(f"  ~ summary differs: before={bs} after={as_}")
    else:
        print(f"  summary: {bs}")
    print(f"  => {'DIFFERENT' if differ else 'same'}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
