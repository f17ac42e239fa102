# PETSc's own tutorials, built from the PETSc's installed examples as they are (never copied into
# Patchwork): tests/run.sh builds the Neumann ones with
#   make -f tests/dll/tutorials.mk OUT=build/tutorials build/tutorials/ex50
# and runs them with -dll_append lib/libpetscpatchwork.so -pc_type patchamg.
PETSC_DIR ?= /usr/lib/petsc
TUTORIALS ?= $(PETSC_DIR)/share/petsc/examples/src/ksp/ksp/tutorials
OUT       ?= build/tutorials
include $(PETSC_DIR)/lib/petsc/conf/variables

$(OUT)/%: $(TUTORIALS)/%.c
	@mkdir -p $(OUT)
	@$(PCC) $(PCC_FLAGS) $(CFLAGS) $(CCPPFLAGS) -O2 -o $@ $< $(PETSC_LIB) -lm
