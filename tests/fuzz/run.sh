#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan over the whole tree) in build/fuzz and runs
# each for SECONDS (default 300) from its seed corpus in tests/fuzz/corpus/<target>. A crash, a
# sanitizer report, a leak, a timeout or a broken property fails the script; the input is saved
# as build/fuzz/findings/<target>/crash-* (reproduce: build/fuzz/tests/fuzz/fuzz_<target> FILE).
#
#   tests/fuzz/run.sh [SECONDS] [TARGET...]        targets: npy npz csv safetensors raw labels manifest state calibration marginal
#
# Environment: MANO_FUZZ_BUILD_DIR (default build/fuzz), MANO_FUZZ_JOBS (targets run at once,
# default 1), MANO_FUZZ_MERGE=1 (afterwards, add the new inputs that reach new code to the
# committed corpus; review and commit them, keeping the corpus under 1 MB). Seeds are written by
# tests/fuzz/make_corpus.py.
# Needs the Debian packages clang and libclang-rt-14-dev.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-300}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(npy npz csv safetensors raw labels manifest state calibration marginal)
build=${MANO_FUZZ_BUILD_DIR:-build/fuzz}
jobs=${MANO_FUZZ_JOBS:-1}

cxx=$(command -v clang++ || command -v clang++-14 || true)
if [ -z "$cxx" ]; then
  echo "tests/fuzz/run.sh: clang++ not found: install the Debian packages clang and libclang-rt-14-dev" >&2
  exit 2
fi
generator=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" \
  -DMANO_BUILD_FUZZ=ON -DMANO_BUILD_TESTS=OFF -DMANO_BUILD_CLI=ON -DMANO_WITH_TORCH=OFF \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
  >/dev/null
cmake --build "$build" --target mano_fuzz --parallel "$(nproc)"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# One target: new inputs go to a scratch corpus in the build tree (the committed one is only read).
fuzz() {
  local target=$1
  local binary=$build/tests/fuzz/fuzz_$target scratch=$build/corpus/$target findings=$build/findings/$target
  local log=$build/logs/fuzz_$target.log
  mkdir -p "$scratch" "$findings" "$(dirname "$log")"
  local dict=()
  [ -f "tests/fuzz/dict/$target.dict" ] && dict=(-dict="tests/fuzz/dict/$target.dict")
  # CPU seconds (user + system) go to $log.cpu where GNU time is installed (Debian package time).
  local timer=()
  [ -x /usr/bin/time ] && timer=(/usr/bin/time -f '%U %S' -o "$log.cpu")
  if "${timer[@]}" "$binary" "${dict[@]}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
      -max_len=16384 -print_final_stats=1 -artifact_prefix="$findings/" "$scratch" "tests/fuzz/corpus/$target" \
      >"$log" 2>&1; then
    local cpu=""
    [ -s "$log.cpu" ] && cpu=" ($(awk '{printf "%.0f", $1 + $2}' "$log.cpu") CPU s)"
    echo "fuzz_$target: $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') runs in ${seconds}s$cpu, no findings"
  else
    echo "fuzz_$target: FINDING (log: $log, input: $(ls "$findings" | head -1))" >&2
    grep -E "mano fuzz finding|ERROR: |SUMMARY: " "$log" | head -5 >&2
    return 1
  fi
  if [ "${MANO_FUZZ_MERGE:-0}" = 1 ]; then
    # Only inputs that reach code no committed input reaches (edges, not hit counts): a small corpus.
    "$binary" -set_cover_merge=1 -use_counters=0 -max_len=16384 "tests/fuzz/corpus/$target" "$scratch" >>"$log" 2>&1
    echo "fuzz_$target: corpus now $(ls "tests/fuzz/corpus/$target" | wc -l) files, $(du -sb "tests/fuzz/corpus/$target" | cut -f1) bytes"
  fi
}

failed=0
pids=()
for target in "${targets[@]}"; do
  if [ ! -x "$build/tests/fuzz/fuzz_$target" ]; then
    echo "tests/fuzz/run.sh: no target '$target' (npy npz csv safetensors raw labels manifest state calibration marginal)" >&2
    exit 2
  fi
  fuzz "$target" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
exit $failed
