// Single-tap windows as a copy (copy.hpp).
#include "copy.hpp"

#include <algorithm>
#include <cstring>

namespace dnnpool {

namespace {

int64_t magnitude(int64_t v) { return v < 0 ? -v : v; }

// n bytes from s to d, which do not overlap.  Runs under 256 bytes (NXC
// points of a few dozen channels) go by fixed-size moves, the last one
// overlapping the one before, in line: a memcpy call per point of 8 f32
// channels took 2.5x oneDNN's time for a k1 s3 subsample.
inline void copy_bytes(char *d, const char *s, int64_t n) {
    if (n > 256) {
        std::memcpy(d, s, (size_t)n);
    } else if (n >= 16) {
        for (int64_t i = 0; i + 16 < n; i += 16) __builtin_memcpy(d + i, s + i, 16);
        __builtin_memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        __builtin_memcpy(d, s, 8);
        __builtin_memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        __builtin_memcpy(d, s, 4);
        __builtin_memcpy(d + n - 4, s + n - 4, 4);
    } else {
        for (int64_t i = 0; i < n; ++i) d[i] = s[i];
    }
}

template <typename E>
void copy_elements(const char *src, char *dst, int64_t n, int64_t ss, int64_t ds) {
    const E *s = (const E *)src;
    E *d = (E *)dst;
    for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];
}

// Rows [r0, r1) of a plan whose runs are whole (one piece each): the axis
// just outside the run in a loop of its own, an odometer over the rest
// (with a division per axis only at r0).  run(s, d) copies one run.
template <typename Run>
void walk_whole_runs(const CopyPlan &cp, const char *src, char *dst, int64_t r0, int64_t r1, Run run) {
    const int64_t es = cp.esize;
    if (cp.outer == 0) {   // one run
        run(src, dst);
        return;
    }
    int64_t idx[5] = {}, q = r0, so = 0, dof = 0;
    for (int i = cp.outer - 1; i >= 0; --i) {
        idx[i] = q % cp.n[i];
        q /= cp.n[i];
        so += idx[i] * cp.ss[i];
        dof += idx[i] * cp.ds[i];
    }
    const int in = cp.outer - 1;
    const int64_t step_s = cp.ss[in] * es, step_d = cp.ds[in] * es;
    for (int64_t r = r0; r < r1;) {
        const int64_t m = std::min(cp.n[in] - idx[in], r1 - r);
        const char *s = src + so * es;
        char *d = dst + dof * es;
        for (int64_t j = 0; j < m; ++j, s += step_s, d += step_d) run(s, d);
        r += m;
        idx[in] += m;
        so += m * cp.ss[in];
        dof += m * cp.ds[in];
        for (int i = in; i > 0 && idx[i] == cp.n[i]; --i) {   // carry into the axes outside
            so += cp.ss[i - 1] - cp.n[i] * cp.ss[i];
            dof += cp.ds[i - 1] - cp.n[i] * cp.ds[i];
            idx[i] = 0;
            ++idx[i - 1];
        }
    }
}

template <typename E>
void walk_strided_runs(const CopyPlan &cp, const char *src, char *dst, int64_t r0, int64_t r1) {
    walk_whole_runs(cp, src, dst, r0, r1,
                    [&](const char *s, char *d) { copy_elements<E>(s, d, cp.run, cp.run_ss, cp.run_ds); });
}

}  // namespace

int64_t CopyPlan::rows() const {
    int64_t r = pieces;
    for (int i = 0; i < outer; ++i) r *= n[i];
    return r;
}

CopyPlan plan_copy(const int64_t sizes[5], const int64_t ss[5], const int64_t ds[5], int64_t esize, int64_t pieces) {
    struct Axis {
        int64_t n, ss, ds;
    };
    Axis ax[5];
    int na = 0;
    for (int i = 0; i < 5; ++i)
        if (sizes[i] != 1) ax[na++] = {sizes[i], ss[i], ds[i]};
    // Innermost first, in dst's memory order: the writes stream.
    std::stable_sort(ax, ax + na, [](const Axis &a, const Axis &b) { return magnitude(a.ds) < magnitude(b.ds); });
    int merged = 0;
    for (int i = 0; i < na; ++i) {
        if (merged) {   // runs on from the axis inside it, in both tensors
            Axis &inside = ax[merged - 1];
            if (ax[i].ss == inside.ss * inside.n && ax[i].ds == inside.ds * inside.n) {
                inside.n *= ax[i].n;
                continue;
            }
        }
        ax[merged++] = ax[i];
    }
    CopyPlan cp{};
    cp.esize = esize;
    const Axis inner = merged ? ax[0] : Axis{1, 1, 1};
    cp.run = inner.n;
    cp.run_ss = inner.ss;
    cp.run_ds = inner.ds;
    cp.outer = merged ? merged - 1 : 0;
    for (int i = 0; i < cp.outer; ++i) {
        const Axis &a = ax[merged - 1 - i];
        cp.n[i] = a.n;
        cp.ss[i] = a.ss;
        cp.ds[i] = a.ds;
    }
    const int64_t most = std::max<int64_t>(1, cp.run * esize / kCopyPieceMinBytes);
    cp.pieces = std::max<int64_t>(1, std::min(pieces, most));
    return cp;
}

void copy_rows(const CopyPlan &cp, const void *src, void *dst, int64_t r0, int64_t r1) {
    if (r0 >= r1) return;
    if (cp.pieces == 1) {
        const char *s = (const char *)src;
        char *d = (char *)dst;
        if (cp.run_ss == 1 && cp.run_ds == 1) {
            const int64_t bytes = cp.run * cp.esize;
            walk_whole_runs(cp, s, d, r0, r1, [bytes](const char *a, char *b) { copy_bytes(b, a, bytes); });
            return;
        }
        switch (cp.esize) {
            case 1: walk_strided_runs<uint8_t>(cp, s, d, r0, r1); break;
            case 2: walk_strided_runs<uint16_t>(cp, s, d, r0, r1); break;
            case 4: walk_strided_runs<uint32_t>(cp, s, d, r0, r1); break;
            default: walk_strided_runs<uint64_t>(cp, s, d, r0, r1); break;
        }
        return;
    }
    // Runs split into pieces (each at least kCopyPieceMinBytes): a division
    // or two per piece is nothing against its memcpy.
    // r0's outer index, then an odometer: short runs (NCX rows of a few
    // dozen bytes) would otherwise pay a division per axis for each memcpy
    int64_t idx[5] = {}, q = r0 / cp.pieces, piece = r0 - q * cp.pieces, so = 0, dof = 0;
    for (int i = cp.outer - 1; i >= 0; --i) {
        idx[i] = q % cp.n[i];
        q /= cp.n[i];
        so += idx[i] * cp.ss[i];
        dof += idx[i] * cp.ds[i];
    }
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t b = cp.run * piece / cp.pieces, e = cp.run * (piece + 1) / cp.pieces;
        const char *s = (const char *)src + (so + b * cp.run_ss) * cp.esize;
        char *d = (char *)dst + (dof + b * cp.run_ds) * cp.esize;
        if (cp.run_ss == 1 && cp.run_ds == 1) {
            std::memcpy(d, s, (size_t)((e - b) * cp.esize));
        } else {
            switch (cp.esize) {
                case 1: copy_elements<uint8_t>(s, d, e - b, cp.run_ss, cp.run_ds); break;
                case 2: copy_elements<uint16_t>(s, d, e - b, cp.run_ss, cp.run_ds); break;
                case 4: copy_elements<uint32_t>(s, d, e - b, cp.run_ss, cp.run_ds); break;
                default: copy_elements<uint64_t>(s, d, e - b, cp.run_ss, cp.run_ds); break;
            }
        }
        if (++piece < cp.pieces) continue;
        piece = 0;
        for (int i = cp.outer - 1; i >= 0; --i) {   // the next outer index, innermost axis first
            so += cp.ss[i];
            dof += cp.ds[i];
            if (++idx[i] < cp.n[i]) break;
            so -= cp.n[i] * cp.ss[i];
            dof -= cp.n[i] * cp.ds[i];
            idx[i] = 0;
        }
    }
}

}  // namespace dnnpool
