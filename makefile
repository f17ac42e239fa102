# Patchwork: GPU preconditioners and matrix-free operators for high-order finite elements in PETSc.
#
#   make run     dependencies, library, then the main example (examples/poisson)
#   make check   dependencies, library, then the whole test suite (last line: N passed, N failed, N skipped)
#   make lib     lib/libpatchwork.so and its plugin alias lib/libpetscpatchwork.so
#   make bench   the benchmark drivers (run them on a GPU machine: tests/gpu/run.sh --no-tests, bench/*.sh)
#   make install PREFIX=/path   include/patchwork.h, the libraries and lib/pkgconfig/patchwork.pc
#   make deps    Debian's petsc-dev when no PETSC_DIR is given (idempotent)
#   make deps-gpu  a CUDA-enabled PETSc packed under deps/ for the GPU machine (config/deps-gpu.sh)
#
# It builds with PETSc's own compilers and flags: PETSC_DIR (and PETSC_ARCH) select the PETSc;
# without one, Debian's /usr/lib/petsc is used. A PETSc configured with CUDA gets the CUDA kernels
# linked in; otherwise the kernels are still compiled (with nvcc, when present) as a check.

PETSC_DIR_DEFAULT := /usr/lib/petsc
PETSC_DIR ?= $(PETSC_DIR_DEFAULT)
PREFIX    ?= /usr/local
NVCC      ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))

-include $(PETSC_DIR)/lib/petsc/conf/variables

BUILD   := build
LIBDIR  := lib
LIBNAME := $(LIBDIR)/libpatchwork.so
PLUGIN  := $(LIBDIR)/libpetscpatchwork.so

PW_CFLAGS := -Iinclude -Isrc -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -O2
CORE_SRC  := $(wildcard src/core/*.c)
HOST_SRC  := $(wildcard src/sys/*.c src/mat/*/*.c src/pc/*/*.c)
CUDA_SRC  := $(wildcard cuda/*.cu)
CORE_OBJ  := $(CORE_SRC:%.c=$(BUILD)/%.o)
HOST_OBJ  := $(HOST_SRC:%.c=$(BUILD)/%.o)
CUDA_OBJ  := $(CUDA_SRC:%.cu=$(BUILD)/%.o)

# PETSc with CUDA: link the kernels into the library and tell the host code
ifneq ($(strip $(CUDAC)),)
  PW_HAVE_CUDA := 1
  PW_CFLAGS    += -DPATCHWORK_HAVE_CUDA
  LIB_OBJ      := $(CORE_OBJ) $(HOST_OBJ) $(CUDA_OBJ)
  PW_NVCC      := $(CUDAC)
  PW_NVCC_FLAGS := $(CUDAC_FLAGS) $(CUDA_INCLUDE) -Iinclude # PETSc's: language standard, -gencode, -fPIC
else
  LIB_OBJ      := $(CORE_OBJ) $(HOST_OBJ)
  PW_NVCC      := $(NVCC)
  # the kernels are only checked here, not linked into the library: host code at -O0, device code with
  # -Ofast-compile=max where nvcc has it (CUDA >= 12.8), a fifth of the CPU time of -O3. Every phase still
  # runs, ptxas too, so its errors (too much shared memory, ...) are still caught
  PW_NVCC_FLAGS := -O0 -std=c++17 -arch=sm_90 -Xcompiler -fPIC -Iinclude \
                   $(if $(NVCC),$(shell $(NVCC) --help 2>/dev/null | grep -q -e '--Ofast-compile' && echo -Ofc=max))
endif

# NCCL, for the halo exchanges between GPUs, where its header is: NCCL_DIR, else beside nvcc's CUDA or in
# /usr (the GPU machine's libnccl-dev). Without it the halo uses MPI, and cuda/nccl_halo.cu says so.
NCCL_DIR ?= $(firstword $(foreach d,$(dir $(realpath $(firstword $(PW_NVCC))))..  /usr,$(if $(wildcard $(d)/include/nccl.h),$(abspath $(d)))))
ifneq ($(strip $(NCCL_DIR)),)
  NCCL_LIBDIR   := $(firstword $(foreach d,$(NCCL_DIR)/lib64 $(NCCL_DIR)/lib $(wildcard $(NCCL_DIR)/lib/*-linux-gnu),$(if $(wildcard $(d)/libnccl.so),$(d))))
endif
ifneq ($(strip $(NCCL_LIBDIR)),)
  PW_NVCC_FLAGS += -DPATCHWORK_HAVE_NCCL $(if $(filter /usr,$(NCCL_DIR)),,-I$(NCCL_DIR)/include)
  PW_NCCL_LIB   := -L$(NCCL_LIBDIR) -Wl,-rpath,$(NCCL_LIBDIR) -lnccl
endif

EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
UNIT     := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(wildcard tests/unit/*.c))
PTESTS   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/mat/test_*.c tests/dll/*.c))
MATHELP  := $(filter-out tests/mat/test_%.c,$(wildcard tests/mat/*.c))

.PHONY: all lib run check run-poisson check-suite mpiexec-check deps deps-gpu bench install clean examples tests cuda-check petsc-check
.DELETE_ON_ERROR:

all: lib examples

# ---------------------------------------------------------------------- the two README commands
# Both install the dependencies first and then do their work in a make of their own: on a fresh machine
# this make started before deps installed PETSc, so it read no PETSc variables (no MPIEXEC, no PCC);
# the second make reads them afresh. It builds in parallel, -j the number of cores (JOBS=N to change;
# a -j given to this make is kept). tests/fresh_make.sh checks the fresh path.
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
SUBMAKEFLAGS = --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))

run: deps
	@$(MAKE) $(SUBMAKEFLAGS) run-poisson

check: deps
	@$(MAKE) $(SUBMAKEFLAGS) check-suite

# the second halves of run and check (they need PETSc's variables: run them through run and check). The
# suite runs make itself (make install), not as a part of this make: it gets no -j and no jobserver
# (Open MPI refuses to run as root, as in a fresh container, unless told: the suite tells it too)
run-poisson: lib examples mpiexec-check
	@echo "== examples/poisson: 3D Q4 Poisson, matrix-free operator, CG + Jacobi"
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 $(MPIEXEC) -n 1 $(BUILD)/examples/poisson -dim 3 -degree 4 -cells 8 -ksp_type cg -pc_type jacobi -ksp_rtol 1e-10

check-suite: lib examples tests cuda-check mpiexec-check
	@MAKEFLAGS="$(filter-out -j% --jobserver%,$(MAKEFLAGS))" MPIEXEC="$(MPIEXEC)" PW_HAVE_CUDA="$(PW_HAVE_CUDA)" PETSC_DIR="$(PETSC_DIR)" PCC="$(PCC)" bash tests/run.sh

# a clear error where PETSc defines no MPIEXEC (the old recipe line then began "-n 1 ...": make ran "n" and,
# taking the "-" for its ignore-errors prefix, went on with exit status 0)
mpiexec-check: petsc-check
	@test -n "$(strip $(MPIEXEC))" || { echo "error: PETSc's variables at PETSC_DIR=$(PETSC_DIR) define no MPIEXEC"; exit 1; }

# ---------------------------------------------------------------------- dependencies
deps:
	@PETSC_DIR="$(PETSC_DIR)" PETSC_DIR_DEFAULT="$(PETSC_DIR_DEFAULT)" bash config/deps.sh

deps-gpu:
	@bash config/deps-gpu.sh

petsc-check:
	@test -f "$(PETSC_DIR)/lib/petsc/conf/variables" || { echo "error: no PETSc at PETSC_DIR=$(PETSC_DIR); run 'make deps' or set PETSC_DIR"; exit 1; }

# ---------------------------------------------------------------------- the library
lib: petsc-check $(LIBNAME) $(PLUGIN)

$(LIBNAME): $(LIB_OBJ)
	@mkdir -p $(LIBDIR)
	@echo "  LD    $@"
	@$(PCC_LINKER) -shared -o $@ $(LIB_OBJ) $(PETSC_LIB) $(if $(PW_HAVE_CUDA),$(PW_NCCL_LIB)) -lm

# PETSc's -dll_append derives the registration symbol from the file name (libpetscpatchwork)
$(PLUGIN): $(LIBNAME)
	@ln -sf libpatchwork.so $@

$(BUILD)/src/%.o: src/%.c $(wildcard include/*.h include/patchwork/*.h src/*/*.h src/*/*/*.h)
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	@$(PCC) $(PCC_FLAGS) $(CFLAGS) $(CCPPFLAGS) $(PW_CFLAGS) -c $< -o $@

$(BUILD)/cuda/%.o: cuda/%.cu $(wildcard include/patchwork/*.h cuda/*.h)
	@mkdir -p $(dir $@)
	@echo "  NVCC  $<"
	@$(PW_NVCC) $(PW_NVCC_FLAGS) -c $< -o $@

# Without a CUDA PETSc the kernels are still compiled (CI has nvcc but no GPU)
cuda-check:
ifeq ($(strip $(NVCC)),)
	@echo "cuda-check: no nvcc found; CUDA kernels not compiled"
else
	@$(MAKE) --no-print-directory $(CUDA_OBJ) $(BUILD)/tests/gpu/test_tensor_kernels
endif

$(BUILD)/tests/gpu/test_tensor_kernels: tests/gpu/test_tensor_kernels.cu $(CUDA_OBJ) $(CORE_SRC) $(wildcard src/core/*.h tests/*.h tests/gpu/*.h)
	@mkdir -p $(dir $@)
	@echo "  NVLD  $@"
	@$(PW_NVCC) $(PW_NVCC_FLAGS) -o $@ $< $(filter-out $(BUILD)/cuda/nccl_halo.o,$(CUDA_OBJ)) $(CORE_SRC) -lm

# ---------------------------------------------------------------------- examples and tests
examples: lib $(EXAMPLES)

$(BUILD)/examples/%: examples/%.c $(wildcard examples/*.h) $(LIBNAME) include/patchwork.h
	@mkdir -p $(dir $@)
	@echo "  CCLD  $@"
	@$(PCC) $(PCC_FLAGS) $(CFLAGS) $(CCPPFLAGS) -Iinclude -O2 -o $@ $< -L$(LIBDIR) -lpatchwork -Wl,-rpath,$(CURDIR)/$(LIBDIR) $(PETSC_LIB) -lm

tests: $(UNIT) $(PTESTS)

# PETSc-free unit tests of src/core
$(BUILD)/tests/unit/%: tests/unit/%.c $(CORE_SRC) $(wildcard include/patchwork/*.h src/core/*.h tests/*.h tests/unit/*.h)
	@mkdir -p $(dir $@)
	@echo "  CCLD  $@"
	@$(CC) -std=c99 -O2 -Wall -Wextra -Iinclude -o $@ $< $(CORE_SRC) -lm

# tests/dll/ programs are never linked against Patchwork: they reach it through -dll_append only
$(BUILD)/tests/dll/%: tests/dll/%.c
	@mkdir -p $(dir $@)
	@echo "  CCLD  $@"
	@$(PCC) $(PCC_FLAGS) $(CFLAGS) $(CCPPFLAGS) -O2 -o $@ $< $(PETSC_LIB) -lm

# tests/mat/test_*.c are programs; the other .c files there are helpers linked into each
$(BUILD)/tests/mat/%: tests/mat/%.c $(LIBNAME) $(MATHELP) $(wildcard tests/*.h tests/mat/*.h examples/*.h)
	@mkdir -p $(dir $@)
	@echo "  CCLD  $@"
	@$(PCC) $(PCC_FLAGS) $(CFLAGS) $(CCPPFLAGS) -Iinclude -O2 -o $@ $< $(MATHELP) -L$(LIBDIR) -lpatchwork -Wl,-rpath,$(CURDIR)/$(LIBDIR) $(PETSC_LIB) -lm

# ---------------------------------------------------------------------- benchmarks
bench: lib
	@$(MAKE) --no-print-directory $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))

# benchmarks may use the kernel ABI (src/core), which the library does not export (PETSc builds
# with -fvisibility=hidden; only PETSC_EXTERN symbols are public): link those objects directly
$(BUILD)/bench/%: bench/%.c bench/benchutil.h $(wildcard examples/*.h) $(LIBNAME) $(CORE_OBJ)
	@mkdir -p $(dir $@)
	@echo "  CCLD  $@"
	@$(PCC) $(PCC_FLAGS) $(CFLAGS) $(CCPPFLAGS) -Iinclude -O2 -o $@ $< $(CORE_OBJ) -L$(LIBDIR) -lpatchwork -Wl,-rpath,$(CURDIR)/$(LIBDIR) $(PETSC_LIB) -lm

# ---------------------------------------------------------------------- install
install: lib
	install -d $(PREFIX)/include $(PREFIX)/lib/pkgconfig
	install -m 644 include/patchwork.h $(PREFIX)/include/
	install -m 755 $(LIBNAME) $(PREFIX)/lib/
	ln -sf libpatchwork.so $(PREFIX)/lib/libpetscpatchwork.so
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(shell sed -n 's/^#define PATCHWORK_VERSION_\(MAJOR\|MINOR\|PATCH\) *//p' include/patchwork.h | paste -sd.)|g' \
	    -e 's|@PETSC_DIR@|$(PETSC_DIR)|g' config/patchwork.pc.in > $(PREFIX)/lib/pkgconfig/patchwork.pc
	@echo "installed Patchwork into $(PREFIX)"

clean:
	rm -rf $(BUILD) $(LIBDIR)
