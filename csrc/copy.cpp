// Single-tap windows as a copy (copy.hpp).
#include "copy.hpp"

#include <algorithm>
#include <cstring>

namespace dnnpool {

namespace {

int64_t magnitude(int64_t v) { return v < 0 ? -v : v; }

template <typename E>
void copy_elements(const char *src, char *dst, int64_t n, int64_t ss, int64_t ds) {
    const E *s = (const E *)src;
    E *d = (E *)dst;
    for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];
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
