#!/usr/bin/env python3
"""Shared-memory wavefronts of the 3D tensor-product apply kernel (cuda/tensor_apply.cu), to pick the
paddings of its cell tiles (Lay3: LD, PS, CS).

Entry (i,j,l) of cell slot q lives at q*CS + l*PS + j*LD + i. Thread t is (a, q, b) =
(t mod n, (t / n) mod C, t / (n C)). Per line index m the kernel makes four accesses:
  gather store  q*CS + m*PS + b*LD + a      x pass  q*CS + b*PS + a*LD + m
  y pass        q*CS + b*PS + m*LD + a      z pass  q*CS + m*PS + b*LD + a
A request is served in wavefronts: per half warp for 8-byte words, per warp for 4-byte ones, as
many as the most distinct 4-byte words falling into one of the 32 banks. Prints, for each n, the
current layout's count and the layout (smallest CS among the best) that minimizes the sum of the
double and float counts, searching small paddings.

  python3 bench/smem_wavefronts.py
"""

CURRENT = {2: (3, 5, 10, 64), 3: (4, 11, 35, 32), 4: (5, 19, 76, 16), 5: (6, 34, 165, 10),
           6: (9, 52, 326, 8), 7: (10, 67, 471, 5), 8: (9, 71, 568, 4), 9: (11, 101, 905, 3)}


def request_wavefronts(addrs, word):
    total = 0
    for part in ([addrs[:16], addrs[16:]] if word == 8 else [addrs]):
        banks = {}
        for x in set(a for a in part if a is not None):
            for w in range(word // 4):
                w4 = x * (word // 4) + w
                banks.setdefault(w4 % 32, set()).add(w4)
        total += max((len(v) for v in banks.values()), default=0)
    return total


def wavefronts(n, ld, ps, cs, cells, word):
    threads, total = cells * n * n, 0
    for w0 in range(0, threads, 32):
        lanes = [(t % n, (t // n) % cells, t // (n * cells)) if t < threads else None for t in range(w0, w0 + 32)]
        for m in range(n):
            gather = lambda a, q, b: q * cs + m * ps + b * ld + a  # the z pass reads the same entries
            xpass = lambda a, q, b: q * cs + b * ps + a * ld + m
            ypass = lambda a, q, b: q * cs + b * ps + m * ld + a
            for f in (gather, xpass, ypass, gather):
                total += request_wavefronts([f(*x) if x else None for x in lanes], word)
    return total


def main():
    for n, (ld0, ps0, cs0, cells) in CURRENT.items():
        cur = (wavefronts(n, ld0, ps0, cs0, cells, 8), wavefronts(n, ld0, ps0, cs0, cells, 4))
        best = None
        for ld in range(n, n + 4):
            for ps in range((n - 1) * ld + n, (n - 1) * ld + n + 9):
                for cs in range((n - 1) * ps + (n - 1) * ld + n, (n - 1) * ps + (n - 1) * ld + n + 17):
                    d, f = wavefronts(n, ld, ps, cs, cells, 8), wavefronts(n, ld, ps, cs, cells, 4)
                    if best is None or (d + f, cs) < (best[0] + best[1], best[4]):
                        best = (d, f, ld, ps, cs)
        print(f"n={n} C={cells}: current LD,PS,CS = {ld0},{ps0},{cs0}: {cur[0]} / {cur[1]} wavefronts (double / float); "
              f"best {best[2]},{best[3]},{best[4]}: {best[0]} / {best[1]}", flush=True)


if __name__ == "__main__":
    main()
