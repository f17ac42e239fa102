#!/usr/bin/env bash
# Build and run the PETSc-free GPU checks of the CUDA kernels (run from the repo root, on a machine
# with an NVIDIA GPU of compute capability 9.0), for each suite:
#   tensor: the tensor-product operator (cuda/tensor_apply.cu)
#   patch:  the vertex-patch smoother and the transfers (cuda/patch_smooth.cu, cuda/transfer.cu), and
#           the vector kernels of the single-precision cycles (cuda/vecops.cu)
#   lor:    the LOR assembly by macro element (cuda/lor_assemble.cu), and the split pattern of a
#           rank's rows (test_lor_split_pattern: test and sanitizers, no benchmark)
#   plex:   the operator on general (curved, unstructured) quad/hex cells (cuda/plex_apply*.cu)
#   amg:    the patch block-Jacobi relaxation of PCPATCHAMG on the patchSPM layout (cuda/amg_relax.cu)
#           and the construction of that layout (cuda/amg_spm.cu)
#   graph:  PCPATCHAMG's graph partitions (cuda/amg_graph.cu, cuda/amg_balance.cu), equal to the CPU's
#           bit for bit; the full tests print GPU vs CPU times instead of a separate benchmark
#   galerkin: PCPATCHAMG's smoothed prolongator, Galerkin product, the CSR operations of its
#           device levels and SPAI(1) by the normal equations (cuda/amg_prolong.cu,
#           cuda/amg_galerkin.cu, cuda/amg_csr.cu, cuda/amg_spai.cu) against their CPU references;
#           the full tests print GPU vs CPU times
#   1. nvcc builds build/gpu-kernels/{test,bench}_<suite>_kernels (ptxas register report kept)
#   2. the GPU-vs-CPU test, full
#   3. the test with --quick under compute-sanitizer memcheck, then racecheck
#   4. the throughput benchmark
# The suites build in parallel. Logs go to $OUT when set, else build/gpu-kernels/. A short summary
# table is printed last.
#   bash tests/gpu/kernels.sh [tensor] [patch] [lor] [plex] [amg] [graph] [galerkin]   (default: all seven)
# Exit status: 0 when every step passed; 77 (with a "SKIP:" line) when nothing failed and the tests
# found no CUDA device; 1 otherwise. A test program's exit 77 is a skip only with its "SKIP:" line; a
# missing test source is a failure.
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
SUITES=${*:-tensor patch lor plex amg graph galerkin}

declare -a STEP STATUS DETAIL
note() { STEP+=("$1"); STATUS+=("$2"); DETAIL+=("$3"); }
nskip=0
# status_of RC LOG: a test program's result: ok (exit 0), skip (exit 77 and a "SKIP:" line in its log:
# no device), FAIL (anything else)
status_of() {
  if [ "$1" = 0 ]; then echo ok
  elif [ "$1" = 77 ] && grep -q '^SKIP:' "$2"; then echo skip
  else echo FAIL; fi
}
has() { case " $SUITES " in *" $1 "*) return 0 ;; esac; return 1; }

build_core() {
  for f in tensor_ref basis1d fdm patch_ref transfer_ref lor_ref plex_ref hanging_ref amg_relax_ref amg_spm_ref amg_graph; do
    echo "+ $CC -O2 -Wall -Wextra -Iinclude -c src/core/$f.c"
    "$CC" -O2 -Wall -Wextra -Iinclude -c src/core/$f.c -o "$B/$f.o" || return 1
  done
}

build_tensor() {
  echo "+ $NVCC $FLAGS -Xptxas -v -c cuda/tensor_apply.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra -Xptxas -v -c cuda/tensor_apply.cu -o "$B/tensor_apply.o" 2> "$LOG/ptxas.txt" &&
    { grep -i -E "warning|error" "$LOG/ptxas.txt" || true; } &&
    echo "+ $NVCC $FLAGS tests/gpu/test_tensor_kernels.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra tests/gpu/test_tensor_kernels.cu "$B/tensor_apply.o" "$B/tensor_ref.o" "$B/basis1d.o" -lm -o "$B/test_tensor_kernels" &&
    echo "+ $NVCC $FLAGS bench/bench_tensor_kernels.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra bench/bench_tensor_kernels.cu "$B/tensor_apply.o" "$B/basis1d.o" -lm -o "$B/bench_tensor_kernels"
}

build_patch() {
  local r1 r2
  echo "+ $NVCC $FLAGS -Xptxas -v -c cuda/patch_smooth.cu cuda/transfer.cu (in parallel)"
  "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra -Xptxas -v -c cuda/patch_smooth.cu -o "$B/patch_smooth.o" 2> "$LOG/ptxas_patch.txt" &
  r1=$!
  "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra -Xptxas -v -c cuda/transfer.cu -o "$B/transfer.o" 2> "$LOG/ptxas_transfer.txt" &
  r2=$!
  wait $r1 || { cat "$LOG/ptxas_patch.txt" | grep -v "^ptxas info" | head -n 40; return 1; }
  wait $r2 || { cat "$LOG/ptxas_transfer.txt" | grep -v "^ptxas info" | head -n 40; return 1; }
  { cat "$LOG/ptxas_patch.txt" "$LOG/ptxas_transfer.txt" | grep -i -E "warning|error" || true; } &&
    echo "+ $NVCC $FLAGS tests/gpu/test_patch_kernels.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra tests/gpu/test_patch_kernels.cu "$B/patch_smooth.o" "$B/transfer.o" "$B/fdm.o" "$B/patch_ref.o" "$B/transfer_ref.o" "$B/basis1d.o" -lm -o "$B/test_patch_kernels" &&
    echo "+ $NVCC $FLAGS tests/gpu/test_vec_kernels.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra tests/gpu/test_vec_kernels.cu cuda/vecops.cu src/core/vecops_ref.c -o "$B/test_vec_kernels" &&
    echo "+ $NVCC $FLAGS bench/bench_patch_kernels.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra bench/bench_patch_kernels.cu "$B/patch_smooth.o" "$B/transfer.o" "$B/fdm.o" "$B/transfer_ref.o" "$B/basis1d.o" -lm -o "$B/bench_patch_kernels"
}

build_lor() {
  echo "+ $NVCC $FLAGS -Xptxas -v -c cuda/lor_assemble.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra -Xptxas -v -c cuda/lor_assemble.cu -o "$B/lor_assemble.o" 2> "$LOG/ptxas_lor.txt" &&
    { grep -i -E "warning|error" "$LOG/ptxas_lor.txt" || true; } &&
    echo "+ $NVCC $FLAGS tests/gpu/test_lor_kernels.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra tests/gpu/test_lor_kernels.cu "$B/lor_assemble.o" "$B/lor_ref.o" -lm -o "$B/test_lor_kernels" &&
    echo "+ $NVCC $FLAGS tests/gpu/test_lor_split_pattern.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra tests/gpu/test_lor_split_pattern.cu "$B/lor_assemble.o" "$B/lor_ref.o" -lm -o "$B/test_lor_split_pattern" &&
    echo "+ $NVCC $FLAGS bench/bench_lor_kernels.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra bench/bench_lor_kernels.cu "$B/lor_assemble.o" "$B/lor_ref.o" -lm -o "$B/bench_lor_kernels"
}

build_plex() {
  local f r=0 objs= pids=
  echo "+ $NVCC $FLAGS -Xptxas -v -c cuda/plex_apply.cu cuda/plex_apply3.cu cuda/plex_apply2.cu (in parallel)"
  for f in plex_apply plex_apply3 plex_apply2; do
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra -Xptxas -v -c cuda/$f.cu -o "$B/$f.o" 2> "$LOG/ptxas_$f.txt" &
    pids="$pids $!"
    objs="$objs $B/$f.o"
  done
  for f in $pids; do wait $f || r=1; done
  cat "$LOG"/ptxas_plex_apply*.txt > "$LOG/ptxas_plex.txt"
  [ $r = 0 ] || { grep -v "^ptxas info" "$LOG/ptxas_plex.txt" | head -n 40; return 1; }
  { grep -i -E "warning|error" "$LOG/ptxas_plex.txt" || true; } &&
    echo "+ $NVCC $FLAGS tests/gpu/test_plex_kernels.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra tests/gpu/test_plex_kernels.cu $objs "$B/plex_ref.o" "$B/hanging_ref.o" "$B/basis1d.o" -lm -o "$B/test_plex_kernels" &&
    echo "+ $NVCC $FLAGS bench/bench_plex_kernels.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra bench/bench_plex_kernels.cu $objs "$B/plex_ref.o" "$B/hanging_ref.o" "$B/basis1d.o" -lm -o "$B/bench_plex_kernels"
}

build_amg() {
  echo "+ $NVCC $FLAGS -Xptxas -v -c cuda/amg_relax.cu cuda/amg_spm.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra -Xptxas -v -c cuda/amg_relax.cu -o "$B/amg_relax.o" 2> "$LOG/ptxas_amg.txt" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra -Xptxas -v -c cuda/amg_spm.cu -o "$B/amg_spm.o" 2> "$LOG/ptxas_amg_spm.txt" &&
    { grep -i -E "warning|error" "$LOG/ptxas_amg.txt" "$LOG/ptxas_amg_spm.txt" || true; } &&
    echo "+ $NVCC $FLAGS tests/gpu/test_amg_kernels.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra tests/gpu/test_amg_kernels.cu "$B/amg_relax.o" "$B/amg_spm.o" "$B/amg_relax_ref.o" "$B/amg_spm_ref.o" -lm -o "$B/test_amg_kernels" &&
    echo "+ $NVCC $FLAGS bench/bench_amg_kernels.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra bench/bench_amg_kernels.cu "$B/amg_relax.o" -lm -o "$B/bench_amg_kernels"
}

# the CPU amg_graph object is $B/amg_graph.o (build_core); the CUDA ones get a _cu suffix
build_graph() {
  echo "+ $NVCC $FLAGS -Xptxas -v -c cuda/amg_graph.cu cuda/amg_balance.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra -Xptxas -v -c cuda/amg_graph.cu -o "$B/amg_graph_cu.o" 2> "$LOG/ptxas_graph.txt" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra -Xptxas -v -c cuda/amg_balance.cu -o "$B/amg_balance_cu.o" 2> "$LOG/ptxas_balance.txt" &&
    { grep -i -E "warning|error" "$LOG/ptxas_graph.txt" "$LOG/ptxas_balance.txt" || true; } &&
    echo "+ $NVCC $FLAGS tests/gpu/test_amg_{graph,balance}_kernels.cu" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra tests/gpu/test_amg_graph_kernels.cu "$B/amg_graph_cu.o" "$B/amg_graph.o" -o "$B/test_graph_kernels" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra tests/gpu/test_amg_balance_kernels.cu "$B/amg_balance_cu.o" "$B/amg_graph.o" -o "$B/test_balance_kernels"
}

# the prolongator, the Galerkin product, the device levels' CSR operations and SPAI(1): for each part p,
# the kernel cuda/amg_p.cu (ptxas report $LOG/ptxas_p.txt), its CPU reference src/core/amg_p_ref.c and
# the test tests/gpu/test_amg_p_kernels.cu; every test links all of them; a missing test source fails
# the build
GALERKIN_TESTS="galerkin prolong csr spai strength"
galerkin_ptxas() { local t; for t in $GALERKIN_TESTS; do printf '%s ' "$LOG/ptxas_$t.txt"; done; }
build_galerkin() {
  local t objs=
  for t in $GALERKIN_TESTS; do
    echo "+ $CC -O2 -Wall -Wextra -Iinclude -c src/core/amg_${t}_ref.c" &&
      "$CC" -O2 -Wall -Wextra -Iinclude -c "src/core/amg_${t}_ref.c" -o "$B/amg_${t}_ref.o" &&
      echo "+ $NVCC $FLAGS -Xptxas -v -c cuda/amg_$t.cu" &&
      "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra -Xptxas -v -c "cuda/amg_$t.cu" -o "$B/amg_$t.o" 2> "$LOG/ptxas_$t.txt" || return 1
    objs="$objs $B/amg_$t.o $B/amg_${t}_ref.o"
  done
  { grep -i -E "warning|error" $(galerkin_ptxas) || true; }
  # the strength test frees its graphs with PatchworkGraphFree(CUDA): src/core/amg_graph.c ($B/amg_graph.o, from
  # build_core) and cuda/amg_graph.cu (an object of its own: build_graph may be building amg_graph_cu.o meanwhile)
  echo "+ $NVCC $FLAGS -c cuda/amg_graph.cu (galerkin tests)" &&
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra -c cuda/amg_graph.cu -o "$B/amg_graph_galerkin.o" || return 1
  objs="$objs $B/amg_graph_galerkin.o $B/amg_graph.o"
  for t in $GALERKIN_TESTS; do
    rm -f "$B/test_${t}_kernels"
    [ -f "tests/gpu/test_amg_${t}_kernels.cu" ] || { echo "tests/gpu/test_amg_${t}_kernels.cu is missing"; return 1; }
    echo "+ $NVCC $FLAGS tests/gpu/test_amg_${t}_kernels.cu"
    "$NVCC" $FLAGS -Xcompiler -Wall,-Wextra "tests/gpu/test_amg_${t}_kernels.cu" $objs -lm -o "$B/test_${t}_kernels" || return 1
  done
}

# registers and spills of kernels, from ptxas reports (default: the patch kernels'): "max R regs, S with spills"
patch_regs() {
  local files=("$@")
  [ ${#files[@]} -gt 0 ] || files=("$LOG/ptxas_patch.txt" "$LOG/ptxas_transfer.txt")
  cat "${files[@]}" 2>/dev/null | awk '
    /Used [0-9]+ registers/ { for (i = 1; i <= NF; i++) if ($i == "Used") { r = $(i + 1) + 0; if (r > max) max = r } }
    /bytes spill stores/ { if ($5 + 0 > 0 || $9 + 0 > 0) spills++ }
    END { printf "max %d registers, %d kernels with spills", max, spills }'
}

# 1. build: the CPU reference objects, then the suites in parallel
t0=$SECONDS
if ! build_core > "$LOG/build.log" 2>&1; then
  note build FAIL "see $LOG/build.log"
  tail -n 40 "$LOG/build.log"
  exit 1
fi
pids=()
has tensor && { build_tensor >> "$LOG/build.log" 2>&1 & pids+=("tensor:$!"); }
has patch && { build_patch > "$LOG/build_patch.log" 2>&1 & pids+=("patch:$!"); }
has lor && { build_lor > "$LOG/build_lor.log" 2>&1 & pids+=("lor:$!"); }
has plex && { build_plex > "$LOG/build_plex.log" 2>&1 & pids+=("plex:$!"); }
has amg && { build_amg > "$LOG/build_amg.log" 2>&1 & pids+=("amg:$!"); }
has graph && { build_graph > "$LOG/build_graph.log" 2>&1 & pids+=("graph:$!"); }
has galerkin && { build_galerkin > "$LOG/build_galerkin.log" 2>&1 & pids+=("galerkin:$!"); }
bfail=0
for p in "${pids[@]}"; do
  s=${p%%:*}
  if wait "${p#*:}"; then
    case $s in
    tensor) note build ok "$((SECONDS - t0)) s; registers in $LOG/ptxas.txt" ;;
    patch) note patch-build ok "$((SECONDS - t0)) s; $(patch_regs) ($LOG/ptxas_patch.txt)" ;;
    lor) note lor-build ok "$((SECONDS - t0)) s; $(patch_regs "$LOG/ptxas_lor.txt") ($LOG/ptxas_lor.txt)" ;;
    plex) note plex-build ok "$((SECONDS - t0)) s; $(patch_regs "$LOG/ptxas_plex.txt") ($LOG/ptxas_plex.txt)" ;;
    amg) note amg-build ok "$((SECONDS - t0)) s; $(patch_regs "$LOG/ptxas_amg.txt" "$LOG/ptxas_amg_spm.txt") ($LOG/ptxas_amg*.txt)" ;;
    graph) note graph-build ok "$((SECONDS - t0)) s; $(patch_regs "$LOG/ptxas_graph.txt" "$LOG/ptxas_balance.txt")" ;;
    galerkin) note galerkin-build ok "$((SECONDS - t0)) s; $(patch_regs $(galerkin_ptxas))" ;;
    esac
  else
    bfail=1
    case $s in
    tensor) note build FAIL "see $LOG/build.log"; l="$LOG/build.log $LOG/ptxas.txt" ;;
    patch) note patch-build FAIL "see $LOG/build_patch.log"; l="$LOG/build_patch.log" ;;
    lor) note lor-build FAIL "see $LOG/build_lor.log"; l="$LOG/build_lor.log $LOG/ptxas_lor.txt" ;;
    plex) note plex-build FAIL "see $LOG/build_plex.log"; l="$LOG/build_plex.log $LOG/ptxas_plex.txt" ;;
    amg) note amg-build FAIL "see $LOG/build_amg.log"; l="$LOG/build_amg.log $LOG/ptxas_amg.txt" ;;
    graph) note graph-build FAIL "see $LOG/build_graph.log"; l="$LOG/build_graph.log $LOG/ptxas_graph.txt $LOG/ptxas_balance.txt" ;;
    galerkin) note galerkin-build FAIL "see $LOG/build_galerkin.log"; l="$LOG/build_galerkin.log $(galerkin_ptxas)" ;;
    esac
    cat $l 2>/dev/null | grep -v "^ptxas info" | tail -n 40
  fi
done
if [ $bfail = 1 ]; then
  for i in "${!STEP[@]}"; do printf '%-16s %-7s %s\n' "${STEP[$i]}" "${STATUS[$i]}" "${DETAIL[$i]}"; done
  exit 1
fi
rc=0

# run_suite NAME PREFIX: 2. full test, 3. sanitizers on the quick test, 4. benchmark
run_suite() {
  local name=$1 pre=$2 trc src st summ tests brc
  t0=$SECONDS
  "$B/test_${name}_kernels" > "$LOG/${pre}test.log" 2>&1
  trc=$?
  grep -E '^FAIL' "$LOG/${pre}test.log" | head -20
  st=$(status_of $trc "$LOG/${pre}test.log")
  if [ $st = skip ]; then # no device: no sanitizers, no benchmark
    note "${pre}test" skip "$(grep -m1 '^SKIP:' "$LOG/${pre}test.log")"
    nskip=$((nskip + 1))
    return
  fi
  [ $st = ok ] || rc=1
  note "${pre}test" $st "$(tail -n 1 "$LOG/${pre}test.log" | sed 's/^# //'), $((SECONDS - t0)) s"
  for tool in memcheck racecheck; do
    t0=$SECONDS
    timeout "$SAN_TIMEOUT" "$SAN" --tool $tool --error-exitcode 3 "$B/test_${name}_kernels" --quick > "$LOG/${pre}$tool.log" 2>&1
    src=$?
    summ=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/${pre}$tool.log" | tail -n 1 | sed 's/^========= //')
    tests=$(grep -E '^# [0-9]+ passed' "$LOG/${pre}$tool.log" | sed 's/^# //')
    if [ $src -eq 0 ]; then st=ok
    elif [ $src -eq 124 ]; then st=TIMEOUT; rc=1
    else st=FAIL; rc=1; fi
    note "${pre}$tool" $st "${summ:-no summary} | ${tests:-no test summary} | $((SECONDS - t0)) s"
  done
  t0=$SECONDS
  "$B/bench_${name}_kernels" > "$LOG/${pre}bench.log" 2>&1
  brc=$?
  [ $brc -eq 0 ] && st=ok || { st=FAIL; rc=1; }
  note "${pre}bench" $st "$((SECONDS - t0)) s, table in $LOG/${pre}bench.log"
}

has tensor && run_suite tensor ""
has patch && run_suite patch "patch-"
# the vector kernels of the single-precision cycles: test and memcheck (no benchmark: they stream)
if has patch; then
  "$B/test_vec_kernels" > "$LOG/vec-test.log" 2>&1
  st=$(status_of $? "$LOG/vec-test.log")
  note vec-test $st "$(tail -n 1 "$LOG/vec-test.log" | sed 's/^# //')"
  case $st in
  skip) nskip=$((nskip + 1)) ;;
  *)
    [ $st = ok ] || rc=1
    timeout "$SAN_TIMEOUT" "$SAN" --tool memcheck --error-exitcode 3 "$B/test_vec_kernels" > "$LOG/vec-memcheck.log" 2>&1 && st=ok || { st=FAIL; rc=1; }
    note vec-memcheck $st "$(grep -E 'ERROR SUMMARY' "$LOG/vec-memcheck.log" | tail -n 1 | sed 's/^========= //')" ;;
  esac
fi
has lor && run_suite lor "lor-"
# the split pattern of a rank's rows (PatchworkLORSplitPattern*CUDA): the full test, then the sanitizers
# on --quick (no benchmark)
if has lor; then
  t0=$SECONDS
  "$B/test_lor_split_pattern" > "$LOG/lor-split-test.log" 2>&1
  st=$(status_of $? "$LOG/lor-split-test.log")
  if [ $st = skip ]; then
    note lor-split-test skip "$(grep -m1 '^SKIP:' "$LOG/lor-split-test.log")"
    nskip=$((nskip + 1))
  else
    [ $st = ok ] || { rc=1; grep -E '^FAIL' "$LOG/lor-split-test.log" | head -20; }
    note lor-split-test $st "$(tail -n 1 "$LOG/lor-split-test.log" | sed 's/^# //'), $((SECONDS - t0)) s"
    for tool in memcheck racecheck; do
      t0=$SECONDS
      timeout "$SAN_TIMEOUT" "$SAN" --tool $tool --error-exitcode 3 "$B/test_lor_split_pattern" --quick > "$LOG/lor-split-$tool.log" 2>&1
      src=$?
      if [ $src -eq 0 ]; then st=ok
      elif [ $src -eq 124 ]; then st=TIMEOUT; rc=1
      else st=FAIL; rc=1; fi
      note "lor-split-$tool" $st "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/lor-split-$tool.log" | tail -n 1 | sed 's/^========= //') | $(grep -E '^# [0-9]+ passed' "$LOG/lor-split-$tool.log" | sed 's/^# //') | $((SECONDS - t0)) s"
    done
  fi
fi
has plex && run_suite plex "plex-"
has amg && run_suite amg "amg-"
# graph and balance: the full test (with its timing table), then the sanitizers on --quick
if has graph; then
  for t in graph balance; do
    t0=$SECONDS
    "$B/test_${t}_kernels" > "$LOG/$t-test.log" 2>&1
    st=$(status_of $? "$LOG/$t-test.log")
    if [ $st = skip ]; then
      note "$t-test" skip "$(grep -m1 '^SKIP:' "$LOG/$t-test.log")"
      nskip=$((nskip + 1))
      continue
    fi
    [ $st = ok ] || { rc=1; grep -E '^FAIL' "$LOG/$t-test.log" | head -20; }
    note "$t-test" $st "$(grep -E '^# [0-9]+ passed' "$LOG/$t-test.log" | tail -n 1 | sed 's/^# //'), $((SECONDS - t0)) s"
    for tool in memcheck racecheck; do
      t0=$SECONDS
      timeout "$SAN_TIMEOUT" "$SAN" --tool $tool --error-exitcode 3 "$B/test_${t}_kernels" --quick > "$LOG/$t-$tool.log" 2>&1 && st=ok || { st=FAIL; rc=1; }
      note "$t-$tool" $st "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/$t-$tool.log" | tail -n 1 | sed 's/^========= //') | $((SECONDS - t0)) s"
    done
  done
fi
# prolongator, Galerkin product, CSR operations, SPAI(1): as graph, each test full, then the
# sanitizers on --quick
if has galerkin; then
  for t in $GALERKIN_TESTS; do
    if [ ! -x "$B/test_${t}_kernels" ]; then
      note "$t-test" FAIL "not built (tests/gpu/test_amg_${t}_kernels.cu)"
      rc=1
      continue
    fi
    t0=$SECONDS
    "$B/test_${t}_kernels" > "$LOG/$t-test.log" 2>&1
    st=$(status_of $? "$LOG/$t-test.log")
    if [ $st = skip ]; then
      note "$t-test" skip "$(grep -m1 '^SKIP:' "$LOG/$t-test.log")"
      nskip=$((nskip + 1))
      continue
    fi
    [ $st = ok ] || { rc=1; grep -E '^FAIL' "$LOG/$t-test.log" | head -20; }
    note "$t-test" $st "$(grep -E '^# [0-9]+ passed' "$LOG/$t-test.log" | tail -n 1 | sed 's/^# //'), $((SECONDS - t0)) s"
    for tool in memcheck racecheck; do
      t0=$SECONDS
      timeout "$SAN_TIMEOUT" "$SAN" --tool $tool --error-exitcode 3 "$B/test_${t}_kernels" --quick > "$LOG/$t-$tool.log" 2>&1
      src=$?
      if [ $src -eq 0 ]; then st=ok
      elif [ $src -eq 124 ]; then st=TIMEOUT; rc=1
      else st=FAIL; rc=1; fi
      note "$t-$tool" $st "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/$t-$tool.log" | tail -n 1 | sed 's/^========= //') | $(grep -E '^# [0-9]+ passed' "$LOG/$t-$tool.log" | sed 's/^# //') | $((SECONDS - t0)) s"
    done
  done
fi

if has tensor; then
  echo
  echo "== benchmark table =="
  grep -v '^SUMMARY' "$LOG/bench.log" 2>/dev/null || echo "(not run)"
fi
if has patch; then
  echo
  echo "== patch benchmark table =="
  cat "$LOG/patch-bench.log" 2>/dev/null || echo "(not run)"
fi
if has lor; then
  echo
  echo "== lor benchmark table =="
  cat "$LOG/lor-bench.log" 2>/dev/null || echo "(not run)"
fi
if has plex; then
  echo
  echo "== plex benchmark table =="
  cat "$LOG/plex-bench.log" 2>/dev/null || echo "(not run)"
fi
if has amg; then
  echo
  echo "== amg benchmark table =="
  cat "$LOG/amg-bench.log" 2>/dev/null || echo "(not run)"
fi
if has graph; then
  echo
  echo "== graph partitions, GPU vs CPU =="
  for t in graph balance; do grep -E '^# ' "$LOG/$t-test.log" | grep -v -E 'passed|failed'; done
fi
if has galerkin; then
  echo
  echo "== prolongator, Galerkin product, CSR operations and SPAI(1), GPU vs CPU =="
  for t in $GALERKIN_TESTS; do [ -f "$LOG/$t-test.log" ] && grep -E '^# ' "$LOG/$t-test.log" | grep -v -E 'passed|failed'; done
fi
echo
echo "== summary =="
for i in "${!STEP[@]}"; do printf '%-16s %-7s %s\n' "${STEP[$i]}" "${STATUS[$i]}" "${DETAIL[$i]}"; done
has tensor && [ -f "$LOG/bench.log" ] && grep '^SUMMARY' "$LOG/bench.log" | sed 's/^SUMMARY //'
if [ $rc = 0 ] && [ $nskip -gt 0 ]; then
  echo "SKIP: $nskip test program(s) found no CUDA device"
  exit 77
fi
exit $rc
