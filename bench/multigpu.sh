#!/usr/bin/env bash
# Several GPUs against one, in one run on one machine (one rank per GPU): MatMult alone on a DMDA (GPU-
# direct and, for the table of exchange paths, staged through host memory), and time to solution of
# the table-7 problems at the sizes that fit one GPU (PCVERTEXPATCH single and double, PCMG
# Chebyshev-Jacobi), with set-up beside solve. Run on the GPU machine after a CUDA build
# (tests/gpu/run.sh builds); logs go to $OUT (or build/bench-out), a short table is printed last.
# On the most ranks the runs are repeated with Patchwork's exchanges through MPI (-patchwork_nccl 0,
# names ending -mpi) beside NCCL (the default where built with it).
#   NPS="1 2" PARTS="matmult solve gather weak large setup breakdown plex amg p1 lor halo latency" bash bench/multigpu.sh [LIMIT_S per run, default 300]
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/bench-out}
mkdir -p "$OUT"
LIM=${1:-300}
. tests/gpu/env.sh || exit 1
NPS=${NPS:-"1 $NGPUS"}
NMAX=${NPS##* }
T=$OUT/multigpu.txt
: >"$T"
run() { # NAME NP ARGS...: one run of NP ranks, its log kept
  local name=$1 np=$2
  shift 2
  echo "== $name ($np ranks): $*" >>"$T"
  timeout "$LIM" $MPI -n "$np" "$@" >"$OUT/$name.log" 2>&1
  echo "exit $?" >>"$OUT/$name.log"
}
for part in ${PARTS:-matmult solve weak}; do
  case $part in
  matmult) # the operator alone at ~1.2e8 DoF, one run per degree; on the most ranks also with the exchanges
    # staged through host memory; -log_view's PWHalo row gives the time in exchanges (2 per apply)
    for k in ${MM_K:-3 5 7}; do
      for np in $NPS; do run matmult-k$k-n$np $np build/bench/bench_matmult $GPU -kmin $k -kmax $k -dofs ${MM_DOFS:-1.2e8} -spmv_max_nnz 0 -reps 20 -log_view; done
      [ "$NMAX" -gt 1 ] && run matmult-k$k-n$NMAX-mpi $NMAX build/bench/bench_matmult $GPU -kmin $k -kmax $k -dofs ${MM_DOFS:-1.2e8} -spmv_max_nnz 0 -reps 20 -log_view -patchwork_nccl 0
      [ "$NMAX" -gt 1 ] && run matmult-k$k-n$NMAX-staged $NMAX build/bench/bench_matmult $GPU -kmin $k -kmax $k -dofs ${MM_DOFS:-1.2e8} -spmv_max_nnz 0 -reps 20 -log_view -patchwork_gpu_direct 0 -patchwork_nccl 0
    done ;;
  latency) # MatMult where the exchanges' latency, not their volume, counts (k = 3, 1e6 and 1e7 DoF)
    for dofs in 1e6 1e7; do
      for np in $NPS; do run latency-$dofs-n$np $np build/bench/bench_matmult $GPU -kmin 3 -kmax 3 -dofs $dofs -spmv_max_nnz 0 -reps 100; done
      [ "$NMAX" -gt 1 ] && run latency-$dofs-n$NMAX-mpi $NMAX build/bench/bench_matmult $GPU -kmin 3 -kmax 3 -dofs $dofs -spmv_max_nnz 0 -reps 100 -patchwork_nccl 0
    done ;;
  solve) # strong scaling: Q7 90.5M, Q3 57.1M, Q1 17M DoF
    for np in $NPS; do run solve-n$np $np build/bench/bench_solve $GPU -degrees 7,3,1 -cells 64,128,256 -solvers ${SOLVERS:-vp-single,vp-double,mg-cheb} -restart 3 -log_view; done
    # SOLVE_VARIANTS: which of the variants below run (default both)
    [ "$NMAX" -gt 1 ] && [[ ${SOLVE_VARIANTS-mpi two} == *mpi* ]] && run solve-n$NMAX-mpi $NMAX build/bench/bench_solve $GPU -degrees 7,3,1 -cells 64,128,256 -solvers ${SOLVERS_MPI:-vp-single,vp-double} -restart 3 -log_view -patchwork_nccl 0
    # the boundary patches' corrections sent to their owners (two exchanges per color), as before redundancy
    [ "$NMAX" -gt 1 ] && [[ ${SOLVE_VARIANTS-mpi two} == *two* ]] && run solve-n$NMAX-two-exchanges $NMAX build/bench/bench_solve $GPU -degrees 7,3,1 -cells 64,128,256 -solvers ${SOLVERS_MPI:-vp-single,vp-double} -restart 3 -log_view -vp_pc_vertexpatch_redundant 0 -vp_pc_vertexpatch_gather_nodes 0 ;;
  gather) # PCVERTEXPATCH's coarse levels gathered from GATHER_NODES (0: every level shared) on the most ranks
    for g in ${GATHER_NODES:-0 262144 16777216}; do
      [ "$NMAX" -gt 1 ] && run solve-n$NMAX-gather-$g $NMAX build/bench/bench_solve $GPU -degrees 7,3,1 -cells 64,128,256 -solvers ${SOLVERS_MPI:-vp-single,vp-double} -restart 3 -vp_pc_vertexpatch_gather_nodes $g
    done ;;
  weak) # about 90M DoF per GPU: Q7 with 64 cells per direction per GPU along z
    for np in $NPS; do run weak-n$np $np build/bench/bench_solve $GPU -degrees 7 -cells 64 -cells_z_factor $np -solvers ${SOLVERS:-vp-single,vp-double} -restart 3; done ;;
  setup) # where PCVERTEXPATCH's set-up goes on 1 and N GPUs: set-up only (-reps 0), every event timed with GPU
    # timers (-log_view_gpu_time), Q7 90.5M and Q3 57.1M
    for np in $NPS; do run setup-n$np $np build/bench/bench_solve $GPU -degrees 7,3 -cells 64,128 -solvers vp-single,vp-double -reps 0 -log_view -log_view_gpu_time; done ;;
  breakdown) # where the solve's time goes per component and level on 1 and N GPUs (bench_solve -breakdown: GPU
    # timers on every kernel, so the solves are slower than in the solve part), Q7 90.5M and Q3 57.1M
    for np in $NPS; do run breakdown-n$np $np build/bench/bench_solve $GPU -degrees 7,3 -cells 64,128 -solvers vp-double -restart 3 -breakdown; done ;;
  large) # strong scaling of the largest table-7 problem that fits one GPU: Q7 on 128^3 cells, 721M DoF (without
    # node coordinates: dm_s is PETSc's DMDA alone)
    for np in $NPS; do run large-n$np $np build/bench/bench_solve $GPU -degrees 7 -cells ${LARGE_CELLS:-128} -solvers ${SOLVERS_LARGE:-vp-double} -restart 3 -dm_patchwork_coordinates false; done ;;
  plex) # MatMult on a general (DMPlex) hexahedral box mesh, geometry on the fly, no assembled matrix
    for np in $NPS; do run plex-n$np $np build/bench/bench_plex $GPU -domain box -kmin ${PLEX_K:-3} -kmax ${PLEX_K:-3} -dofs ${PLEX_DOFS:-3e7} -spmv_max_work 0; done ;;
  p1) # PCPATCHAMG on the P1 box of bench/patchamg_p1_large.sh (P1_CELLS^3 cubes, 6 tets each; 256: 16.97M
    # vertices), the mesh made on rank 0 and distributed
    for np in $NPS; do run p1-n$np $np build/examples/tets -mesh regular -cells ${P1_CELLS:-256} -interpolate 0 -pc_type patchamg -dm_mat_type aijcusparse $GPU -petscpartitioner_type simple -log_view; done ;;
  amg) # PCPATCHAMG on the 7-point Laplacian (AMG_N^3 points, default 193: 7.2M) on 1 and N GPUs; on several
    # ranks also with PETSc's products on the CPU (-matptap_backend_cpu -matmatmult_backend_cpu)
    # (several ranks: PETSc's products on the host by default; cusparse: PETSc's cuSPARSE SpGEMM instead)
    for np in $NPS; do run amg-n$np $np build/tests/mat/test_patchamg -problem fd7 -n ${AMG_N:-193} -dm_mat_type aijcusparse $GPU -log_view -log_view_gpu_time; done
    [ "$NMAX" -gt 1 ] && run amg-n$NMAX-cusparse $NMAX build/tests/mat/test_patchamg -problem fd7 -n ${AMG_N:-193} -dm_mat_type aijcusparse $GPU -log_view -log_view_gpu_time -pc_patchamg_mat_product_algorithm_backend_cpu 0
    # the product kernels on each rank's block (a block-diagonal prolongator: faster set-up, more iterations)
    [ "$NMAX" -gt 1 ] && run amg-n$NMAX-block $NMAX build/tests/mat/test_patchamg -problem fd7 -n ${AMG_N:-193} -dm_mat_type aijcusparse $GPU -log_view -log_view_gpu_time -pc_patchamg_block_products ;;
  lor) # PCLOR at k = 4 (LOR_CELLS^3 cells, default 48: 7.2M DoF) with PCPATCHAMG inside, 1 and N GPUs
    for np in $NPS; do run lor-n$np $np build/examples/lor -dim 3 -degree 4 -cells ${LOR_CELLS:-48} -lor_pc_type patchamg $GPU -log_view -log_view_gpu_time; done ;;
  halo) # the exchange paths at a small and the large size (k = 3), with GPU timers on so that -log_view times PWHalo
    for dofs in 1e6 1.2e8; do
      run halo-$dofs-direct $NMAX build/bench/bench_matmult $GPU -kmin 3 -kmax 3 -dofs $dofs -spmv_max_nnz 0 -reps 20 -log_view -log_view_gpu_time
      run halo-$dofs-mpi $NMAX build/bench/bench_matmult $GPU -kmin 3 -kmax 3 -dofs $dofs -spmv_max_nnz 0 -reps 20 -log_view -log_view_gpu_time -patchwork_nccl 0
      run halo-$dofs-staged $NMAX build/bench/bench_matmult $GPU -kmin 3 -kmax 3 -dofs $dofs -spmv_max_nnz 0 -reps 20 -log_view -log_view_gpu_time -patchwork_gpu_direct 0 -patchwork_nccl 0
    done ;;
  esac
done
{
  echo "== MatMult (all ranks together): GDoF/s; PWHalo: exchanges, total s, us per exchange"
  for f in "$OUT"/matmult-k*.log "$OUT"/latency-*.log "$OUT"/halo-*.log; do
    [ -f "$f" ] || continue
    printf '%-24s %s %s\n' "$(basename "$f" .log)" "$(grep -E '^3 +[0-9]' "$f" | awk '{printf "k=%s DoF=%s %s GDoF/s", $2, $3, $4}')" \
      "$(awk '$1 == "PWHalo" {printf "PWHalo %d %.4f s %.1f us", $2, $4, 1e6 * $4 / $2}' "$f")"
  done
  for f in "$OUT"/amg-n*.log; do
    [ -f "$f" ] || continue
    printf '%-24s %s setup %s s solve %s s %s\n' "$(basename "$f" .log)" "$(grep -m1 -o 'CG iterations [0-9]*' "$f")" "$(awk '$1 == "PCSetUp" {print $4; exit}' "$f")" "$(awk '$1 == "KSPSolve" {print $4; exit}' "$f")" "$(grep -m1 -i 'error' "$f" | cut -c1-80)"
  done
  for f in "$OUT"/p1-n*.log; do
    [ -f "$f" ] || continue
    printf '%-24s %s KSPSolve %s s %s\n' "$(basename "$f" .log)" "$(grep summary: "$f" | sed 's/^summary: //; s/ pc=.*setup_s/ setup_s/; s/ reason=.*//')" "$(awk '$1 == "KSPSolve" {print $4; exit}' "$f")" "$(grep -m1 'ERROR' "$f" | cut -c1-80)"
  done
  for f in "$OUT"/plex-n*.log; do [ -f "$f" ] && printf '%-24s %s\n' "$(basename "$f" .log)" "$(grep -E '^3 +[0-9]' "$f" | awk '{printf "k=%s cells=%s DoF=%s gll %s gauss %s GDoF/s", $2, $3, $4, $5, $6}')"; done
  for f in "$OUT"/lor-n*.log; do [ -f "$f" ] && printf '%-24s %s\n' "$(basename "$f" .log)" "$(grep summary: "$f" | sed 's/ op_apply_s.*//')"; done
  for f in "$OUT"/setup-n*.log; do # the set-up's largest events, each stage (vp-single, vp-double): count, seconds
    [ -f "$f" ] && echo "-- $(basename "$f" .log) events" && awk '/^--- Event Stage/ {st = $5} $1 ~ /^(PCSetUp|PWVPSetUp|PWVPGather|PWHaloSetUp|PWTensorSetUp|DMCoarsen|SFSetUp|BuildTwoSided|VecScatterCreate|DMCreateInterp)$/ && st != "" {printf "%s %s %s %s\n", st, $1, $2, $4}' "$f"
  done
  for f in "$OUT"/breakdown-n*.log; do [ -f "$f" ] && echo "-- $(basename "$f" .log)" && sed -n '/^breakdown/,/^run:/p' "$f"; done
  for part in solve weak large setup; do
    for f in "$OUT"/$part-n*.log; do [ -f "$f" ] && echo "-- $(basename "$f" .log)" && grep '^run:' "$f" | sed 's/^run: //'; done
  done
} | tee -a "$T"
