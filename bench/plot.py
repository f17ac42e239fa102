#!/usr/bin/env python3
"""Plots of Patchwork's benchmark results (PNG files for docs/benchmarks.md).

    python3 bench/plot.py [-o DIR] [MULTIGPU_TXT ...]

reads the tables in bench/results/*.csv and writes into DIR (default docs/img):
  operator-throughput.png  MatMult / kernel GDoF/s against the degree k, beside PETSc's SpMV and libCEED
  time-to-solution.png     time to solution against problem size, one panel per PC, beside the peers
  multigpu.png             one GPU against several: MatMult GDoF/s and solve times
Each MULTIGPU_TXT is an output of bench/multigpu.sh (its multigpu.txt, or the lines it printed last);
its MatMult lines ("matmult-k3-n2  k=3 DoF=... 143.878 GDoF/s ...") and its "-- solve-nN" and
"-- large-nN" blocks of bench_solve "run:" lines (or their "dim=..." remainders) replace the tabulated multi-GPU numbers in the third plot. The CSV files keep
date, machine and command in every row; lines starting with '#' are comments.
"""
import argparse
import csv
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")  # no display on the build machines
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")


def read_csv(name):
    with open(os.path.join(RESULTS, name), newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def num(s):
    return float(s) if s not in (None, "") else None


def is_peer(series):
    return series.startswith("peer:")


def style(series):
    """Patchwork solid with filled markers, peers dashed with open ones."""
    return dict(linestyle="--", marker="s", markerfacecolor="none") if is_peer(series) else dict(linestyle="-", marker="o")


# ------------------------------------------------------------------------------------------------ (a)
def plot_throughput(out):
    rows = read_csv("operator_throughput.csv")
    shown = [  # (series, dofs or None for any, label)
        ("DMDA MatMult", "1.2e8", "DMDA MatMult, 1.2e8 DoF"),
        ("DMDA MatMult", "1e6", "DMDA MatMult, 1e6 DoF"),
        ("DMDA kernel add", "1e8", "DMDA kernel alone (add), 1e8 DoF"),
        ("DMPlex kernel collocated on the fly", None, "DMPlex kernel, collocated, geometry on the fly"),
        ("DMPlex kernel Gauss k+2 on the fly", None, "DMPlex kernel, Gauss k+2, geometry on the fly"),
        ("DMPlex MatMult collocated", None, "DMPlex MatMult, collocated, variable c, 1.6e7 DoF"),
        ("peer: PETSc AIJCUSPARSE SpMV", None, "peer: PETSc AIJCUSPARSE SpMV, 1e6 DoF"),
    ]
    fig, ax = plt.subplots(figsize=(8, 5.2))
    for series, dofs, label in shown:
        pts = [(int(r["k"]), float(r["gdofs"])) for r in rows if r["series"] == series and (dofs is None or r["dofs"] == dofs)]
        if pts:
            pts.sort()
            ax.plot(*zip(*pts), label=label, **style(series))
    for series, color in (("peer: libCEED collocated", "tab:gray"), ("peer: libCEED Gauss k+2", "tab:brown")):
        sel = [r for r in rows if r["series"] == series]
        if sel:
            ks = [int(r["k"]) for r in sel]
            ax.fill_between(ks, [float(r["gdofs"]) for r in sel], [float(r["gdofs_hi"]) for r in sel], color=color, alpha=0.3,
                            label=series.replace("peer: ", "peer: ") + " (quoted range, k = 4..7)")
    ax.set_yscale("log")
    ax.set_xlabel("polynomial degree k (3D)")
    ax.set_ylabel("GDoF/s")
    ax.set_title("Tensor-product operator, one H100, double precision")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "operator-throughput.png"), dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------------------------------ (b)
def plot_time_to_solution(out):
    rows = read_csv("time_to_solution.csv")
    panels = [
        ("vertexpatch", "PCVERTEXPATCH (table-7 problem, solve time, H100)", "problem"),
        ("lor", "PCLOR, k = 5 (examples/lor, everything included)", None),
        ("patchamg", "PCPATCHAMG (set-up + solve, H100 / 16 CPU cores)", "problem"),
    ]
    markers = {"Q7": "o", "Q3": "s", "Q1": "^", "P1 regular": "o", "7-point Laplacian": "D", "k=5": "o"}
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.2))
    for ax, (pc, title, by) in zip(axes, panels):
        sel = [r for r in rows if r["pc"] == pc]
        series = list(dict.fromkeys(r["series"] for r in sel))
        colors = {s: "C%d" % i for i, s in enumerate(series)}
        groups = list(dict.fromkeys((r["series"], r["problem"]) for r in sel))
        for s, prob in groups:
            pts = sorted((float(r["dofs"]), float(r["time_s"])) for r in sel if r["series"] == s and r["problem"] == prob)
            st = style(s)
            st["marker"] = markers.get(prob, "o")
            label = s if by is None else "%s, %s" % (s, prob)
            ax.plot(*zip(*pts), color=colors[s], label=label, **st)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("unknowns")
        ax.set_ylabel("seconds")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6.5, loc="upper left")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "time-to-solution.png"), dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------------------------------ (c)
MATMULT_LINE = re.compile(r"^(matmult|latency|halo)-(\S+)\s+k=(\d+) DoF=(\d+) ([0-9.]+) GDoF/s")


def parse_multigpu(path):
    """MatMult rows and solve rows from an output of bench/multigpu.sh, in the CSV files' fields."""
    matmult, solve, block, run = [], [], None, os.path.basename(path)
    with open(path) as f:
        for line in f:
            m = MATMULT_LINE.match(line)
            if m:
                name = m.group(1) + "-" + m.group(2)
                gpus = int(re.search(r"-n(\d+)", name).group(1))
                path_ = "staged" if name.endswith("-staged") else "mpi" if name.endswith("-mpi") else ("" if gpus == 1 else "default")
                matmult.append(dict(run=run, k=m.group(3), dofs=m.group(4), gpus=gpus, path=path_, gdofs=m.group(5)))
                continue
            m = re.match(r"^-- (solve|weak|large)-n(\d+)(-mpi)?", line)
            if m:
                block = (m.group(1), int(m.group(2)), "mpi" if m.group(3) else ("" if m.group(2) == "1" else "default"))
                continue
            run_line = line.startswith("run:") or line.startswith("dim=")  # bench_solve's, or as multigpu.sh prints it
            if run_line and block and block[0] in ("solve", "large"):
                kv = dict(re.findall(r"(\w+)=(\S+)", line))
                if "solve_s" not in kv:
                    continue  # a skipped run
                solve.append(dict(problem="Q%s %.3gM" % (kv["k"], float(kv["dofs"]) / 1e6), dofs=kv["dofs"], solver=kv["solver"], gpus=block[1], path=block[2],
                                  dm_s=kv.get("dm_s"), op_s=kv.get("op_s"), setup_s=kv.get("pc_setup_s"), solve_s=kv["solve_s"]))
            elif not run_line:
                block = None if not line.strip() else block
    return matmult, solve


def plot_multigpu(out, fresh):
    matmult = [r for r in read_csv("multigpu_matmult.csv")]
    solve = [r for r in read_csv("multigpu_solve.csv") if r["date"] == "2026-11-28"]
    source = "bench/results (2 x H200, 2026-11-28)"
    if fresh:
        mm, so = [], []
        for p in fresh:
            a, b = parse_multigpu(p)
            mm += a
            so += b
        if mm:
            matmult = mm
        if so:
            solve = so
        source = ", ".join(os.path.basename(p) for p in fresh)
        print("multigpu: %d MatMult and %d solve results from %s" % (len(mm), len(so), source))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5.2))

    # MatMult: a group of bars per (run, k, DoF), a bar per (gpus, path)
    cases = list(dict.fromkeys((r["run"], int(r["k"]), float(r["dofs"])) for r in matmult))
    kinds = list(dict.fromkeys((int(r["gpus"]), r["path"]) for r in matmult))
    width = 0.8 / max(1, len(kinds))
    for j, (g, p) in enumerate(kinds):
        xs, ys = [], []
        for i, case in enumerate(cases):
            v = [float(r["gdofs"]) for r in matmult if (r["run"], int(r["k"]), float(r["dofs"])) == case and int(r["gpus"]) == g and r["path"] == p]
            if v:
                xs.append(i + j * width)
                ys.append(v[0])
        ax1.bar(xs, ys, width, label="%d GPU%s%s" % (g, "s" if g > 1 else "", ", " + p if p else ""))
    ax1.set_xticks([i + 0.4 - width / 2 for i in range(len(cases))])
    ax1.set_xticklabels(["k=%d, %.2g DoF\n%s run" % (k, n, run) for run, k, n in cases], fontsize=7)
    ax1.set_ylabel("GDoF/s, all GPUs together")
    ax1.set_title("MatMult, one GPU against several", fontsize=10)
    ax1.grid(True, axis="y", alpha=0.3)
    ax1.legend(fontsize=8)

    # solve: time on one and several GPUs per problem and solver
    cases = list(dict.fromkeys((r["problem"], r["solver"]) for r in solve))
    kinds = list(dict.fromkeys((int(r["gpus"]), r["path"]) for r in solve))
    width = 0.8 / max(1, len(kinds))
    for j, (g, p) in enumerate(kinds):
        xs, ys = [], []
        for i, (prob, s) in enumerate(cases):
            v = [float(r["solve_s"]) for r in solve if r["problem"] == prob and r["solver"] == s and int(r["gpus"]) == g and r["path"] == p]
            if v:
                xs.append(i + j * width)
                ys.append(v[0])
        ax2.bar(xs, ys, width, label="%d GPU%s%s" % (g, "s" if g > 1 else "", ", " + p if p else ""))
    ax2.set_xticks([i + 0.4 - width / 2 for i in range(len(cases))])
    ax2.set_xticklabels(["%s\n%s" % c for c in cases], fontsize=8)
    ax2.set_yscale("log")
    ax2.set_ylabel("solve seconds")
    ax2.set_title("Time to solution (bench_solve), one GPU against several", fontsize=10)
    ax2.grid(True, axis="y", which="both", alpha=0.3)
    ax2.legend(fontsize=8)
    fig.suptitle("Several GPUs, one rank per GPU: " + source, fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "multigpu.png"), dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", default=os.path.join(HERE, "..", "docs", "img"), help="directory of the PNG files")
    ap.add_argument("multigpu", nargs="*", help="outputs of bench/multigpu.sh for the multi-GPU plot")
    args = ap.parse_args()
    os.makedirs(args.output, exist_ok=True)
    plot_throughput(args.output)
    plot_time_to_solution(args.output)
    plot_multigpu(args.output, args.multigpu)
    for name in ("operator-throughput.png", "time-to-solution.png", "multigpu.png"):
        print(os.path.join(args.output, name))


if __name__ == "__main__":
    sys.exit(main())
