#!/usr/bin/env bash
# Compare tfproc-lint's results on a corpus between two source trees (docs/real-code-review.md).
# usage: CORPUS=FOLDER compare.sh BEFORE_SRC AFTER_SRC
#   BEFORE_SRC / AFTER_SRC: directories containing the `tfproc_lint` package (two checkouts, or a
#   `git archive` of the commit before and the working tree).
# env: CORPUS (required: the corpus, e.g. corpus A rebuilt from corpus-files.tsv),
#      OUT (default ./compare-out), PY (default .venv/bin/python, else python3),
#      JOBS (default 1, passed as -j; set JOBS= to use the linter's default).
# Exit status: 0 no difference, 1 something differs, 2 a run failed (rc >= 2).
set -u
[ $# -eq 2 ] || { echo "usage: $0 BEFORE_SRC AFTER_SRC" >&2; exit 2; }
BEFORE_SRC=$(cd "$1" && pwd) || exit 2
AFTER_SRC=$(cd "$2" && pwd) || exit 2
for s in "$BEFORE_SRC" "$AFTER_SRC"; do
  [ -d "$s/tfproc_lint" ] || { echo "no tfproc_lint package in $s" >&2; exit 2; }
done
CORPUS=${CORPUS:?set CORPUS to the corpus folder}
OUT=$(mkdir -p "${OUT:-compare-out}" && cd "${OUT:-compare-out}" && pwd)
DEFAULT_PY=python3; [ -x .venv/bin/python ] && DEFAULT_PY=$(pwd)/.venv/bin/python
PY=${PY:-$DEFAULT_PY}
JOBS=${JOBS-1}
TOOLS=$(cd "$(dirname "$0")" && pwd)
JOBARGS=(); [ -n "$JOBS" ] && JOBARGS=(-j "$JOBS")
mkdir -p "$OUT"

CONFIGS=(default py314 gpu tfp3)
declare -A CARGS=(
  [default]=""
  [py314]="--target-python 3.14"
  [gpu]="--assume-gpu"
  [tfp3]="--extend-select TFP3"
)

status=0
failed=0

# run SRC OUTFILE TARGET ARGS... : lint from an empty temp dir; prints rc
run() {
  local src=$1 out=$2 target=$3; shift 3
  local tmp rc
  tmp=$(mktemp -d)
  ( cd "$tmp" && PYTHONPATH="$src" "$PY" -m tfproc_lint.cli check --no-cache --format json \
      "${JOBARGS[@]}" "$@" "$target" >"$out" 2>"$out.stderr" )
  rc=$?
  rm -rf "$tmp"
  echo "$rc"
}

echo "before: $BEFORE_SRC"
echo "after:  $AFTER_SRC"
echo "corpus: $CORPUS ($(find "$CORPUS" -name '*.py' | wc -l) .py files)"
echo

for c in "${CONFIGS[@]}"; do
  # shellcheck disable=SC2206
  args=(${CARGS[$c]})
  rb=$(run "$BEFORE_SRC" "$OUT/before-$c.json" "$CORPUS" "${args[@]}")
  ra=$(run "$AFTER_SRC" "$OUT/after-$c.json" "$CORPUS" "${args[@]}")
  echo "== $c (${CARGS[$c]:-no extra options})  exit: before=$rb after=$ra"
  if [ "$rb" -ge 2 ] || [ "$ra" -ge 2 ]; then
    echo "  !! a run failed; stderr:"; tail -n 5 "$OUT/before-$c.json.stderr" "$OUT/after-$c.json.stderr"
    failed=1; status=1; continue
  fi
  [ "$rb" = "$ra" ] || { echo "  ~ exit status differs"; status=1; }
  "$PY" "$TOOLS/compare_json.py" "$c" "$OUT/before-$c.json" "$OUT/after-$c.json" || status=1
  echo
done

# --- fix path: each source fixes its own copy; trees must come out identical
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/tfproc-fixcmp.XXXXXX")
mkdir -p "$SCRATCH/before" "$SCRATCH/after"
cp -a "$CORPUS/." "$SCRATCH/before/"
cp -a "$CORPUS/." "$SCRATCH/after/"
rb=$(run "$BEFORE_SRC" "$OUT/before-fix.json" "$SCRATCH/before" --fix --unsafe-fixes)
ra=$(run "$AFTER_SRC" "$OUT/after-fix.json" "$SCRATCH/after" --fix --unsafe-fixes)
fixed() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1])).get("summary",{}).get("fixed","?"))' "$1" 2>/dev/null || echo "?"; }
fb=$(fixed "$OUT/before-fix.json"); fa=$(fixed "$OUT/after-fix.json")
echo "== fix (--fix --unsafe-fixes)  exit: before=$rb after=$ra"
echo "  fixes applied: before=$fb after=$fa"
changed=$(diff -rq "$CORPUS" "$SCRATCH/before" | wc -l)
echo "  files changed by the fixes (before side): $changed"
if [ "$rb" -ge 2 ] || [ "$ra" -ge 2 ]; then
  echo "  !! a fix run failed"; failed=1; status=1
fi
[ "$fb" = "$fa" ] || { echo "  ~ number of fixes applied differs"; status=1; }
if diff -r "$SCRATCH/before" "$SCRATCH/after" >"$OUT/fix-tree.diff"; then
  echo "  fixed trees: identical"
else
  echo "  ~ fixed trees differ (diff -r in $OUT/fix-tree.diff):"; head -n 40 "$OUT/fix-tree.diff"; status=1
fi
rm -rf "$SCRATCH"

echo
if [ "$status" -eq 0 ]; then echo "RESULT: no difference"; else echo "RESULT: DIFFERENCES FOUND"; fi
[ "$failed" -eq 1 ] && exit 2
exit "$status"
