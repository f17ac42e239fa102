#!/usr/bin/env bash
# Build and run the PETSc-free GPU checks of the tensor-product kernels (run from the repo root,
# on a machine with an NVIDIA GPU of compute capability 9.0):
#   1. nvcc builds build/gpu-kernels/{test,bench}_tensor_kernels (ptxas register report kept)
#   2. the GPU-vs-CPU test, full
#   3. the test with --quick under compute-sanitizer memcheck, then racecheck
#   4. the throughput benchmark
# Logs go to $OUT when set, else build/gpu-kernels/. A short summary table is printed last.
# Exit status: 0 when every step passed; the test's 77 (no device) is passed through.
set -u
cd "$(dirname "$0")/../.."
B=build/gpu-kernels
LOG=${OUT:-$B}
mkdir -p "$B" "$LOG"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo "$(dirname "$NVCC")/compute-sanitizer")}
CC=${CC:-gcc}
FLAGS="-O3 -std=c++17 -arch=sm_90 -Iinclude"
SAN_TIMEOUT=${SAN_TIMEOUT:-150}

declare -a STEP STATUS DETAIL
note() { STEP+=("$1"); STATUS+=("$2"); DETAIL+=("$3"); }

build() {
  echo "+ $CC -O2 -Wall -Wextra -Iinclude -c src/core/{tensor_ref,basis1d}.c" &&
    "$CC" -O2 -Wall -Wextra -Iinclude -c src/core/tensor_ref.c -o "$B/tensor_ref.o" &&
    "$CC" -O2 -Wall -Wextra -Iinclude -c src/core/basis1d.c -o "$B/basis1d.o" &&
    echo "+ $NVCC $FLAGS -Xptxas -v -c cuda/tensor_apply.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra -Xptxas -v -c cuda/tensor_apply.cu -o "$B/tensor_apply.o" 2> "$LOG/ptxas.txt" &&
    { grep -i -E "warning|error" "$LOG/ptxas.txt" || true; } &&
    echo "+ $NVCC $FLAGS tests/gpu/test_tensor_kernels.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra tests/gpu/test_tensor_kernels.cu "$B/tensor_apply.o" "$B/tensor_ref.o" "$B/basis1d.o" -lm -o "$B/test_tensor_kernels" &&
    echo "+ $NVCC $FLAGS bench/bench_tensor_kernels.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra bench/bench_tensor_kernels.cu "$B/tensor_apply.o" "$B/basis1d.o" -lm -o "$B/bench_tensor_kernels"
}

t0=$SECONDS
if build > "$LOG/build.log" 2>&1; then
  note build ok "$((SECONDS - t0)) s; registers in $LOG/ptxas.txt"
else
  note build FAIL "see $LOG/build.log"
  cat "$LOG/build.log" "$LOG/ptxas.txt" 2>/dev/null | grep -v "^ptxas info" | tail -n 40
  printf '%-10s %-7s %s\n' "${STEP[0]}" "${STATUS[0]}" "${DETAIL[0]}"
  exit 1
fi
rc=0

# 2. full test
t0=$SECONDS
"$B/test_tensor_kernels" > "$LOG/test.log" 2>&1
trc=$?
grep -E '^FAIL' "$LOG/test.log" | head -20
if [ $trc -eq 77 ]; then
  note test skip "no CUDA device"
  printf '%-10s %-7s %s\n' test skip "no CUDA device"
  exit 77
fi
[ $trc -eq 0 ] && st=ok || { st=FAIL; rc=1; }
note test $st "$(tail -n 1 "$LOG/test.log" | sed 's/^# //'), $((SECONDS - t0)) s"

# 3. sanitizers on the quick test
for tool in memcheck racecheck; do
  t0=$SECONDS
  timeout "$SAN_TIMEOUT" "$SAN" --tool $tool --error-exitcode 3 "$B/test_tensor_kernels" --quick > "$LOG/$tool.log" 2>&1
  src=$?
  summ=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/$tool.log" | tail -n 1 | sed 's/^========= //')
  tests=$(grep -E '^# [0-9]+ passed' "$LOG/$tool.log" | sed 's/^# //')
  if [ $src -eq 0 ]; then st=ok
  elif [ $src -eq 124 ]; then st=TIMEOUT; rc=1
  else st=FAIL; rc=1; fi
  note $tool $st "${summ:-no summary} | ${tests:-no test summary} | $((SECONDS - t0)) s"
done

# 4. benchmark
t0=$SECONDS
"$B/bench_tensor_kernels" > "$LOG/bench.log" 2>&1
brc=$?
[ $brc -eq 0 ] && st=ok || { st=FAIL; rc=1; }
note bench $st "$((SECONDS - t0)) s, table in $LOG/bench.log"

echo
echo "== benchmark table =="
grep -v '^SUMMARY' "$LOG/bench.log"
echo
echo "== summary =="
for i in "${!STEP[@]}"; do printf '%-10s %-7s %s\n' "${STEP[$i]}" "${STATUS[$i]}" "${DETAIL[$i]}"; done
grep '^SUMMARY' "$LOG/bench.log" | sed 's/^SUMMARY //'
exit $rc
