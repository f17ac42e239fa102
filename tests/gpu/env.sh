# Sourced by the GPU scripts (tests/gpu/run.sh, bench/*.sh) from the repository root: the CUDA PETSc of
# `make deps-gpu` (unpacked from deps/ when missing), its mpiexec, and the options of a device run:
#   PETSC_DIR, MPI (mpiexec with its flags), GPU (-dm_vec_type cuda ...), CUDA_AWARE (1 or empty), NGPUS
export PETSC_DIR=${PETSC_DIR:-/opt/patchwork/petsc-cuda} PETSC_ARCH=
if [ ! -f "$PETSC_DIR/lib/petsc/conf/variables" ]; then
  [ -f deps/petsc-cuda.tar.xz ] || { echo "no CUDA PETSc: run 'make deps-gpu' here and carry deps/"; return 1; }
  tar -C / -xJf deps/petsc-cuda.tar.xz || return 1
fi
export LD_LIBRARY_PATH=$PETSC_DIR/lib:${LD_LIBRARY_PATH:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# the prefix's own Open MPI (make deps-gpu) is CUDA-aware: PETSc and Patchwork hand device buffers to
# MPI (GPU to GPU). An older archive without it uses the machine's Open MPI, which is not: then PETSc
# needs -use_gpu_aware_mpi 0 (it aborts at its first device object otherwise)
if [ -x "$PETSC_DIR/bin/mpiexec" ] && "$PETSC_DIR/bin/ompi_info" --parsable --all 2>/dev/null | grep -q '^mca:mpi:base:param:mpi_built_with_cuda_support:value:true'; then
  MPIEXEC_BIN=$PETSC_DIR/bin/mpiexec GPU="-dm_vec_type cuda" CUDA_AWARE=1
else
  MPIEXEC_BIN=mpiexec GPU="-dm_vec_type cuda -use_gpu_aware_mpi 0" CUDA_AWARE=
  export PETSC_OPTIONS="${PETSC_OPTIONS:-} -use_gpu_aware_mpi 0"
fi
MPI="$MPIEXEC_BIN --allow-run-as-root --oversubscribe"
NGPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
echo "mpiexec: $MPIEXEC_BIN (CUDA-aware: ${CUDA_AWARE:-no}); GPUs: $NGPUS"
