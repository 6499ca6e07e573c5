// MaxPool with indices over NXC, a window of several columns: each input
// column's (d, h) rows are pooled once per output row (first maximum down
// the rows, in scan order), then each output combines the pooled columns of
// its window.  Across columns scan order is no longer the combining order
// (a column's winner may sit in a lower row than a later column's), so a
// column combine orders by the element's key, its index within the
// (d, h, w) volume: the greater value wins; between equal values, or
// between NaNs, the smaller key (the earlier element) wins; a NaN beats any
// number.  That is the row-major first maximum (first NaN) whatever the
// grouping, at rows + columns combines per output instead of rows * columns.
// Keys live in lanes as wide as the values; channels go a block of NV
// vectors at a time (a block's pooled columns fill 32 KB at 64 columns of
// f32 on AVX2).

// Channel vectors per block (plan.hpp's kIdxColumnBytes sizes the scratch).
constexpr int kColumnVecs = 4;
static_assert(kIdxColumnBytes >= (2 * kIdxShareRows + 2) * kColumnVecs * kVecBytes, "a column of a block fits its scratch");

// Whether this call's windows can take idx_columns: keys grow in scan order
// and fit a value lane, and every point has a vector of channels.
template <typename T>
static inline bool idx_columns_ok(const ExecCtx *c) {
    typedef IdxVec<typename Traits<T>::Acc> IV;
    const AxisPlan &AD = c->ax[0], &AH = c->ax[1], &AW = c->ax[2];
    if (c->C < Vec<T>::lanes || c->ss[1] != 1 || c->ds[1] != 1) return false;
    if (!idx_columns_pay(AD.k * AH.k, AW.k, AW.s, AW.in)) return false;   // (plan.cpp sized the scratch by the same test)
    const int64_t w_last = (AW.in - 1) * c->is[4], h_last = w_last + (AH.in - 1) * c->is[3];
    const bool ordered = c->is[4] > 0 && (AH.in == 1 || c->is[3] > w_last) && (AD.in == 1 || c->is[2] > h_last);
    constexpr int64_t lane_max = (int64_t)(~(uint64_t)0 >> (64 - 8 * sizeof(typename IV::Lane) + 1));
    return ordered && h_last + (AD.in - 1) * c->is[2] <= lane_max;
}

// a (+) b with its key, a before b in scan order: b where it wins
// (greater, or the first NaN).
template <typename V, typename M>
static inline __attribute__((always_inline)) void take_in_scan_order(V &a, M &ka, V b, M kb) {
    const M t = IdxVec<decltype(a[0] + 0)>::wins(a, b);
    a = t ? b : a;
    ka = t ? kb : ka;
}

// Columns [0, ncol) of one output row's window rows (src offsets roff, keys
// ridx, in scan order; nrows >= 1) pooled into P / Q (NV * VL lanes per
// column): values and keys of channels [0, NV * VL) at p, columns kstep
// apart, column 0's key key_w (+ a row's), the next kw_key more.
template <typename T, int NV>
static inline __attribute__((always_inline)) void pool_columns(const T *p, const int64_t *roff, const int64_t *ridx,
                                                               int64_t nrows, int64_t ncol, int64_t kstep, int64_t key_w, int64_t kw_key,
                                                               typename Traits<T>::Acc *P, typename IdxVec<typename Traits<T>::Acc>::Lane *Q) {
    typedef IdxVec<typename Traits<T>::Acc> IV;
    typedef typename IV::M M;
    typedef typename Vec<T>::V V;
    constexpr int64_t VL = Vec<T>::lanes;
    for (int64_t col = 0; col < ncol; ++col, p += kstep, key_w += kw_key) {
        V acc[NV];
        M key[NV];
        const M k0 = M{} + (typename IV::Lane)(ridx[0] + key_w);
        for (int v = 0; v < NV; ++v) {
            acc[v] = load_vec<T>(p + roff[0] + v * VL);
            key[v] = k0;
        }
        for (int64_t r = 1; r < nrows; ++r) {
            const M kr = M{} + (typename IV::Lane)(ridx[r] + key_w);
            for (int v = 0; v < NV; ++v) take_in_scan_order(acc[v], key[v], load_vec<T>(p + roff[r] + v * VL), kr);
        }
        for (int v = 0; v < NV; ++v) {
            *(typename Vec<T>::VU *)(P + (col * NV + v) * VL) = acc[v];
            *(M *)(Q + (col * NV + v) * VL) = key[v];
        }
    }
}

// G consecutive output rows whose windows are src rows [g, g + k) of rows
// p, p + rstep, ... (stride 1, undilated, all inside the input)
// pool their columns together: rows [G - 1, k) are common to all G windows
// (the core), row g's window is rows g .. G - 2 (+) core (+) rows k .. k + g - 1,
// the left parts grown downwards, the right ones upwards, every combine in
// scan order: k + 3G - 6 combines for G output rows instead of G(k - 1).
// Output row g's columns go to P / Q + g * gstride (pool_columns' layout,
// nv vectors per column).
template <typename T, int G>
static inline void pool_columns_shared(const T *p, int64_t rstep, int64_t rkey, int64_t key0, int64_t k, int64_t nv,
                                       int64_t ncol, int64_t kstep, int64_t key_w, int64_t kw_key,
                                       typename Traits<T>::Acc *P, typename IdxVec<typename Traits<T>::Acc>::Lane *Q,
                                       int64_t gstride) {
    typedef IdxVec<typename Traits<T>::Acc> IV;
    typedef typename IV::M M;
    typedef typename IV::Lane Lane;
    typedef typename Vec<T>::V V;
    typedef typename Vec<T>::VU VU;
    constexpr int64_t VL = Vec<T>::lanes;
    static_assert(G >= 2, "a group shares rows");
    for (int64_t col = 0; col < ncol; ++col, p += kstep, key_w += kw_key) {
        for (int64_t v = 0; v < nv; ++v) {
            const T *x = p + v * VL;
            const int64_t at = (col * nv + v) * VL;
            auto row = [&](int64_t r, V &b, M &kb) {
                b = load_vec<T>(x + r * rstep);
                kb = M{} + (Lane)(key0 + r * rkey + key_w);
            };
            V core, b, l, t;
            M kcore, kb, kl, kt;
            row(G - 1, core, kcore);
            for (int64_t r = G; r < k; ++r) {
                row(r, b, kb);
                take_in_scan_order(core, kcore, b, kb);
            }
            *(VU *)(P + (G - 1) * gstride + at) = core;
            *(M *)(Q + (G - 1) * gstride + at) = kcore;
            for (int g = G - 2; g >= 0; --g) {   // left parts: rows g .. G - 2, then the core
                row(g, b, kb);
                if (g < G - 2) take_in_scan_order(b, kb, l, kl);
                l = b, kl = kb;
                t = l, kt = kl;
                take_in_scan_order(t, kt, core, kcore);
                *(VU *)(P + g * gstride + at) = t;
                *(M *)(Q + g * gstride + at) = kt;
            }
            for (int g = 1; g < G; ++g) {   // right parts: rows k .. k + g - 1, after the rest
                row(k + g - 1, b, kb);
                if (g == 1) l = b, kl = kb;
                else take_in_scan_order(l, kl, b, kb);
                t = *(const VU *)(P + g * gstride + at);
                kt = *(const M *)(Q + g * gstride + at);
                take_in_scan_order(t, kt, l, kl);
                *(VU *)(P + g * gstride + at) = t;
                *(M *)(Q + g * gstride + at) = kt;
            }
        }
    }
}

// A lane-wise (value, key) maximum of NV vectors: b wins where it is
// greater or the first NaN, or equal to a (both NaN included) with a
// smaller key.  A total order, so any grouping of a window gives its winner.
template <typename T, int NV>
struct KeyedMax {
    typedef IdxVec<typename Traits<T>::Acc> IV;
    typedef typename IV::M M;
    typedef typename Vec<T>::V V;
    typedef typename Traits<T>::Acc Acc;
    typedef typename IV::Lane Lane;
    static constexpr int64_t VL = Vec<T>::lanes, W = NV * VL;
    V v[NV];
    M k[NV];
    __attribute__((always_inline)) void load(const Acc *p, const Lane *q) {
        for (int j = 0; j < NV; ++j) {
            v[j] = *(const typename Vec<T>::VU *)(p + j * VL);
            k[j] = *(const M *)(q + j * VL);
        }
    }
    __attribute__((always_inline)) void store(Acc *p, Lane *q) const {
        for (int j = 0; j < NV; ++j) {
            *(typename Vec<T>::VU *)(p + j * VL) = v[j];
            *(M *)(q + j * VL) = k[j];
        }
    }
    static __attribute__((always_inline)) void take1(V &a, M &ka, V b, M kb) {
        const M t = IV::wins(a, b) | ((kb < ka) & ((b == a) | (b != b)));
        a = t ? b : a;
        ka = t ? kb : ka;
    }
    __attribute__((always_inline)) void take(const Acc *p, const Lane *q) {
        for (int j = 0; j < NV; ++j) take1(v[j], k[j], *(const typename Vec<T>::VU *)(p + j * VL), *(const M *)(q + j * VL));
    }
    __attribute__((always_inline)) void take(const KeyedMax &b) {
        for (int j = 0; j < NV; ++j) take1(v[j], k[j], b.v[j], b.k[j]);
    }
};

// The outputs of one row for channels [0, NV * VL) from the pooled columns
// P / Q (column j is input column iw_lo + j, ncol of them): o, xo at the
// row's first point and the block's first channel; ibase: the block's
// first index value less its key.  Undilated windows go by window blocks
// (van Herk / Gil-Werman: suffixes S / SQ within blocks of k columns, a
// running prefix of the block a window ends in), O(1) combines per output;
// dilated ones column by column.
template <typename T, int NV>
static inline __attribute__((always_inline)) void combine_columns(const ExecCtx *c, const typename Traits<T>::Acc *P,
                                                                  const typename IdxVec<typename Traits<T>::Acc>::Lane *Q,
                                                                  typename Traits<T>::Acc *S,
                                                                  typename IdxVec<typename Traits<T>::Acc>::Lane *SQ,
                                                                  int64_t iw_lo, int64_t ncol, T *o, int64_t *xo, int64_t ibase) {
    typedef KeyedMax<T, NV> KM;
    constexpr int64_t VL = Vec<T>::lanes, W = KM::W;
    const AxisPlan &AW = c->ax[2];
    const int64_t os = c->ds[4], xws = c->xs[4], xcs = c->xs[1], ics = c->is[1], kb = AW.k;
    const bool blocks = AW.d == 1;
    if (blocks) {
        KM acc{};   // (set on every path; GCC cannot tell)
        for (int64_t j = ncol - 1; j >= 0; --j) {
            if (j == ncol - 1 || (j + 1) % kb == 0) acc.load(P + j * W, Q + j * W);
            else acc.take(P + j * W, Q + j * W);
            acc.store(S + j * W, SQ + j * W);
        }
    }
    KM pre{};                // the running prefix: columns [pre_at - pre_at % kb, pre_at]
    int64_t pre_at = -1;
    for (int64_t ow = 0; ow < AW.out; ++ow) {
        const int64_t kw0 = AW.kbeg[ow], n = AW.kend[ow] - kw0;
        T *oo = o + ow * os;
        int64_t *xx = xo + ow * xws;
        if (n == 0) {
            for (int64_t l = 0; l < W; ++l) {
                oo[l] = Traits<T>::lowest();
                xx[l * xcs] = -1;
            }
            continue;
        }
        const int64_t a = ow * AW.s - AW.pb + kw0 * AW.d - iw_lo, e = a + (n - 1) * AW.d;   // first, last column
        KM acc{};   // (set on every path; GCC cannot tell)
        if (blocks && a / kb != e / kb) {   // a block's suffix and the next block's prefix
            const int64_t bs = e - e % kb;
            for (int64_t j = pre_at < bs ? bs : pre_at + 1; j <= e; ++j) {
                if (j == bs) pre.load(P + j * W, Q + j * W);
                else pre.take(P + j * W, Q + j * W);
            }
            pre_at = e;
            acc.load(S + a * W, SQ + a * W);
            acc.take(pre);
        } else if (blocks && (e == ncol - 1 || (e + 1) % kb == 0)) {   // the suffix from a is the window
            acc.load(S + a * W, SQ + a * W);
        } else {
            acc.load(P + a * W, Q + a * W);
            for (int64_t t = 1; t < n; ++t) acc.take(P + (a + t * AW.d) * W, Q + (a + t * AW.d) * W);
        }
        for (int j = 0; j < NV; ++j) {
            store_as<T, true>(oo + j * VL, acc.v[j]);
            const int64_t first = ibase + j * VL * ics;
            if (xcs == 1) IdxVec<typename Traits<T>::Acc>::store_offsets(xx + j * VL, acc.k[j], first, ics);
            else
                for (int64_t l = 0; l < VL; ++l) xx[(j * VL + l) * xcs] = first + acc.k[j][l] + l * ics;
        }
    }
}

// The input columns [*lo, *lo + n) that some window of a row reads (the
// same for every row); n = 0 when every window is empty.
static inline int64_t columns_read(const AxisPlan &AW, int64_t *lo) {
    int64_t iw_lo = AW.in, iw_hi = 0;
    for (int64_t ow = 0; ow < AW.out; ++ow) {
        if (AW.kend[ow] == AW.kbeg[ow]) continue;
        const int64_t a = ow * AW.s - AW.pb + AW.kbeg[ow] * AW.d, e = ow * AW.s - AW.pb + (AW.kend[ow] - 1) * AW.d + 1;
        iw_lo = a < iw_lo ? a : iw_lo;
        iw_hi = e > iw_hi ? e : iw_hi;
    }
    *lo = iw_hi > iw_lo ? iw_lo : 0;
    return iw_hi > iw_lo ? iw_hi - iw_lo : 0;
}

// Output rows by idx_columns: one row (rows = 1; its window's rows at roff /
// ridx, nrows >= 1) or kIdxShareRows rows whose windows are src rows
// [g, g + nrows) from roff[0] / ridx[0] (pool_columns_shared), over input
// columns [iw_lo, iw_lo + ncol) (columns_read).  Channel
// blocks of kColumnVecs vectors, then single vectors, the last one
// overlapping the one before it when C is not a whole number of vectors (its
// lanes get the same bits again).  scratch: kIdxColumnBytes per input
// column, 64-byte aligned.
template <typename T>
static void idx_columns_rows(const ExecCtx *c, const T *src_n, const int64_t *roff, const int64_t *ridx, int64_t nrows,
                             int64_t rows, int64_t iw_lo, int64_t ncol, T *o_row, int64_t *xo_row, int64_t ibase_n,
                             char *scratch) {
    typedef typename Traits<T>::Acc Acc;
    typedef typename IdxVec<Acc>::Lane Lane;
    constexpr int64_t VL = Vec<T>::lanes;
    constexpr int NB = kColumnVecs, G = kIdxShareRows;
    const AxisPlan &AW = c->ax[2];
    const int64_t C = c->C, part = AW.in * NB * VL;   // lanes of each scratch array
    Acc *P = (Acc *)scratch, *S = P + G * part;       // P: a pooled row per output row
    Lane *Q = (Lane *)(S + part), *SQ = Q + G * part;
    const int64_t kstep = c->ss[4], kw_key = c->is[4];
    const T *p = src_n + iw_lo * kstep;
    auto block = [&](auto nv, int64_t c0) {
        constexpr int NV = decltype(nv)::value;
        if (rows == 1)
            pool_columns<T, NV>(p + c0, roff, ridx, nrows, ncol, kstep, iw_lo * kw_key, kw_key, P, Q);
        else
            pool_columns_shared<T, G>(p + c0 + roff[0], c->ss[3], c->is[3], ridx[0], nrows, NV, ncol, kstep,
                                      iw_lo * kw_key, kw_key, P, Q, part);
        for (int64_t g = 0; g < rows; ++g)
            combine_columns<T, NV>(c, P + g * part, Q + g * part, S, SQ, iw_lo, ncol, o_row + g * c->ds[3] + c0,
                                   xo_row + g * c->xs[3] + c0 * c->xs[1], ibase_n + c0 * c->is[1]);
    };
    int64_t c0 = 0;
    for (; c0 + NB * VL <= C; c0 += NB * VL) block(std::integral_constant<int, NB>{}, c0);
    for (; c0 + VL <= C; c0 += VL) block(std::integral_constant<int, 1>{}, c0);
    if (c0 < C) block(std::integral_constant<int, 1>{}, C - VL);
}
