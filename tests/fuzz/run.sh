#!/usr/bin/env bash
# Builds the libFuzzer targets (--config=asan: clang-14, ASan+UBSan) and runs each for SECONDS
# on a copy of its corpus and regressions (the checked-in directories are never written), with
# TARGET.dict where there is one. Prints per target the executions, the coverage libFuzzer
# reached (cov: edges, ft: features), and the crashes and leaks found, and exits non-zero on
# any. Found inputs are kept under the work directory (printed) for tests/fuzz/regressions/.
#
#   tests/fuzz/run.sh SECONDS [TARGET...]     (default: every target in tests/fuzz/corpus/)
#
# FUZZ_WORK (default /dev/shm, else /tmp) holds the work directory; it is removed at the end
# unless something was found. FUZZ_JOBS targets run at a time (default: the CPUs).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:?usage: tests/fuzz/run.sh SECONDS [TARGET...]}
shift
if (($#)); then
  targets=("$@")
else
  mapfile -t targets < <(ls tests/fuzz/corpus)
fi

trap 'bazel shutdown >/dev/null 2>&1 || true' EXIT
start=$SECONDS
labels=()
for t in "${targets[@]}"; do labels+=("//tests/fuzz:${t}_fuzzer"); done
bazel build --config=asan "${labels[@]}"
bin=$(bazel info --config=asan bazel-bin 2>/dev/null)
build_seconds=$((SECONDS - start))

base=${FUZZ_WORK:-$([[ -d /dev/shm ]] && echo /dev/shm || echo /tmp)}
work=$(mktemp -d "$base/verity-fuzz.XXXXXX")

# Runs target $1 for SECONDS; its line of the table into $work/$1/result, and "found" into
# $work/$1/found if it found something.
run_target() {
  local t=$1 dir=$work/$1 rc t0
  mkdir -p "$dir/corpus" "$dir/artifacts" "$dir/tmp"
  cp -r "tests/fuzz/corpus/$t/." "$dir/corpus/"
  [[ -d tests/fuzz/regressions/$t ]] && cp -r "tests/fuzz/regressions/$t/." "$dir/corpus/"
  local -a args=(-max_total_time="$seconds" -print_final_stats=1 -timeout=25
    -rss_limit_mb=2560 -artifact_prefix="$dir/artifacts/")
  [[ -f tests/fuzz/$t.dict ]] && args+=(-dict="tests/fuzz/$t.dict")
  t0=$SECONDS
  set +e
  # TEST_TMPDIR: where store_recovery_fuzzer builds its store roots.
  TEST_TMPDIR=$dir/tmp "$bin/tests/fuzz/${t}_fuzzer" "${args[@]}" "$dir/corpus" >"$dir/log" 2>&1
  rc=$?
  set -e
  local execs stats cov ft crashes leaks
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  stats=$(grep -E '^#[0-9]+.*cov: ' "$dir/log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$stats")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$stats")
  crashes=$(find "$dir/artifacts" -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' | wc -l)
  leaks=$(find "$dir/artifacts" -name 'leak-*' | wc -l)
  # libFuzzer exits non-zero on anything it stops for, with or without an artifact.
  if ((rc != 0 && crashes + leaks == 0)); then crashes=1; fi
  if ((crashes + leaks)); then echo found >"$dir/found"; fi
  echo "${execs:-0}" >"$dir/execs"
  printf '%-16s %12s %8s %8s %8s %6s %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" \
    "$crashes" "$leaks" $((SECONDS - t0)) >"$dir/result"
}

# FUZZ_JOBS targets at a time (default: one per CPU; each fuzzer is one thread), so that each
# still has SECONDS of a CPU to itself.
jobs=${FUZZ_JOBS:-$(nproc)}
running=0
for t in "${targets[@]}"; do
  if ((running == jobs)); then
    wait -n || true  # each target's outcome is in its files
    running=$((running - 1))
  fi
  run_target "$t" &
  running=$((running + 1))
done
wait || true
printf '%-16s %12s %8s %8s %8s %6s %s\n' target executions cov ft crashes leaks seconds
found=0 total=0
for t in "${targets[@]}"; do
  if [[ ! -f $work/$t/result ]]; then
    echo "$t: the run did not finish (its log: $work/$t/log)"
    found=1
    continue
  fi
  cat "$work/$t/result"
  [[ -f $work/$t/found ]] && found=1
  total=$((total + $(cat "$work/$t/execs")))
done
echo "fuzz: $total executions in total; build ${build_seconds} s, all $((SECONDS - start)) s"
if ((found)); then
  echo "fuzz: FOUND something: logs and inputs under $work (add each input to" \
    "tests/fuzz/regressions/TARGET/)" >&2
  exit 1
fi
rm -rf "$work"
echo "fuzz: no crashes, no leaks"
