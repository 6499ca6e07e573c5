// bf16 maxima in 16-bit integer lanes, for the channel-block kernel's
// whole windows over a vector of channels or more: points_row,
// row_group_points and blocks_row's rows, and flat_row's of one row.
//
// The float path widens each loaded vector (a widening load and a shift),
// takes the maximum and tests for NaN (or adds a probe), 16 values a
// vector; the maximum of bf16 values needs no arithmetic, so here the
// loaded bits stay 16-bit lanes, twice as many a vector, and go through
// three integer reductions, no conversion either way:
//   hi  = signed maximum of the bits: positives (sign clear) order as
//         integers as they do as floats, and rank above every negative;
//   lo  = signed minimum: among negatives (sign set) the smallest bits
//         are the smallest magnitude, the largest value;
//   top = unsigned maximum: negative NaNs (0xff81-0xffff) are the largest.
// A window's maximum is hi where hi is not negative (it held a positive
// value or +0), else lo.  Exact except where the float path's rules decide
// what integers cannot see, which Bf16MaxCheck flags for the caller to redo
// with the float path (the same bits as always):
//   - a NaN (hi above +inf's 0x7f80, or top above -inf's 0xff80): the float
//     path keeps the window's last NaN, made quiet;
//   - +0 as the maximum with -0 in the window (hi = 0, lo = -0's 0x8000):
//     the float path keeps the first of equal values, which the integer
//     order (-0 below +0) does not know.
// Every other tie is between equal bits.

template <int Bytes>
struct Bf16Lanes {
    typedef int16_t I __attribute__((vector_size(Bytes)));
    typedef uint16_t U __attribute__((vector_size(Bytes)));
    typedef int16_t IU __attribute__((vector_size(Bytes), aligned(2)));   // unaligned access
    typedef uint64_t Q __attribute__((vector_size(Bytes)));   // the same bits as 64-bit lanes
    static constexpr int64_t lanes = Bytes / 2;
};

// Whether T's maxima (kind K) go in 16-bit lanes on this ISA: bf16, and
// vectors of 32 bytes or more (SSE2 has no unsigned 16-bit maximum).
template <typename T, int K>
constexpr bool kBf16IntMaxima = __is_same(T, bf16) && K == kMax && kVecBytes >= 32;

// One window's three reductions over a vector of bf16 bits.
template <int Bytes>
struct Bf16Max {
    typedef typename Bf16Lanes<Bytes>::I I;
    typedef typename Bf16Lanes<Bytes>::U U;
    I hi, lo;
    U top;
    inline __attribute__((always_inline)) void first(I v) { hi = lo = v, top = (U)v; }
    inline __attribute__((always_inline)) void add(I v) {
        hi = v > hi ? v : hi;
        lo = v < lo ? v : lo;
        top = (U)v > top ? (U)v : top;
    }
    inline I maximum() const { return hi < 0 ? lo : hi; }
};

// The windows a row's pass finished, folded lane-wise (four operations a
// stored vector), and whether any needs the float path (see above).
template <int Bytes>
struct Bf16MaxCheck {
    typedef typename Bf16Lanes<Bytes>::I I;
    typedef typename Bf16Lanes<Bytes>::U U;
    I hi = I{} + (int16_t)-32768;   // the largest hi
    U top = U{};          // the largest top
    U zeros = U{} + 0xffff;   // the smallest hi | (lo ^ 0x8000): 0 where hi = +0 and lo = -0
    inline __attribute__((always_inline)) void add(const Bf16Max<Bytes> &m) {
        hi = m.hi > hi ? m.hi : hi;
        top = m.top > top ? m.top : top;
        const U z = (U)m.hi | ((U)m.lo ^ 0x8000);
        zeros = z < zeros ? z : zeros;
    }
    bool exact() const {
        typedef typename Bf16Lanes<Bytes>::Q Q;
        const Q flagged = (Q)((hi > 0x7f80) | (I)(top > 0xff80) | (I)(zeros == 0));
        uint64_t any = 0;
        for (int i = 0; i < Bytes / 8; ++i) any |= flagged[i];
        return any == 0;
    }
};

// The channel offsets of NW vectors of L lanes covering [c0, C) (L <= C - c0
// <= NW * L, or C >= L), the last one ending at C: it overlaps the one
// before, whose lanes it computes again to the same bits.
template <int64_t L, int NW>
static inline void bf16_lane_offsets(int64_t c0, int64_t C, int64_t (&at)[NW]) {
    for (int j = 0; j < NW; ++j) at[j] = c0 + j * L < C - L ? c0 + j * L : C - L;
}

// G output points (pstep apart in src, ostep in dst), each a window of
// nrows rows at roff of kw taps kstep apart (at least one tap), NW vectors
// of channels at `at`: reduced, stored, and folded into check.  Taps in the
// float path's order (the results do not depend on it).
template <int Bytes, int NW, int G>
static inline __attribute__((always_inline)) void bf16_max_group(const bf16 *p, const int64_t *roff,
                                                                 int64_t nrows, int64_t kw, int64_t kstep,
                                                                 int64_t pstep, const int64_t (&at)[NW], bf16 *o,
                                                                 int64_t ostep, Bf16MaxCheck<Bytes> &check) {
    typedef typename Bf16Lanes<Bytes>::IU IU;
    Bf16Max<Bytes> m[G][NW];
    for (int g = 0; g < G; ++g)
        for (int j = 0; j < NW; ++j) m[g][j].first(*(const IU *)(p + roff[0] + g * pstep + at[j]));
    for (int64_t r = 0; r < nrows; ++r) {
        const bf16 *q = p + roff[r];
        for (int64_t t = r == 0; t < kw; ++t)
            for (int g = 0; g < G; ++g)
                for (int j = 0; j < NW; ++j) {
                    IU v = *(const IU *)(q + t * kstep + g * pstep + at[j]);
                    // one load into a register: GCC would fold it into all three
                    // reductions' operands, three loads a vector (1.05x the float
                    // path's time over a 3-D k2 window)
                    if constexpr (Bytes <= kRegisterBytes) __asm__("" : "+v"(v));
                    m[g][j].add(v);
                }
    }
    for (int g = 0; g < G; ++g)
        for (int j = 0; j < NW; ++j) {
            check.add(m[g][j]);
            *(IU *)(o + g * ostep + at[j]) = m[g][j].maximum();
        }
}

// Calls run(bytes, nw) with the vector width and count (integral
// constants) that cover C channels, a vector of bf16's widened lanes
// (VL) up to a block (4 VL): half-width vectors below 2 VL, whole ones
// from there.
template <typename Run>
static inline void with_bf16_lanes(int64_t C, Run run) {
    constexpr int64_t VL = Vec<bf16>::lanes;   // = the lanes of a half-width vector of 16-bit lanes
    using Half = std::integral_constant<int, (int)kVecBytes / 2>;
    using Whole = std::integral_constant<int, (int)kVecBytes>;
    using One = std::integral_constant<int, 1>;
    using Two = std::integral_constant<int, 2>;
    if (C == VL) run(Half{}, One{});
    else if (C < 2 * VL) run(Half{}, Two{});
    else if (C == 2 * VL) run(Whole{}, One{});
    else run(Whole{}, Two{});
}

// points_row's n points (whole windows, VL <= C < 4 VL channels) in 16-bit
// lanes; false when Bf16MaxCheck flags any (the caller redoes them with the
// float path, which rewrites every point).
template <int Bytes, int NW, int KW, int NR>
static bool bf16_max_points_row(const bf16 *p, const int64_t *roff, int64_t nrows, int64_t kw, int64_t kstep,
                                int64_t pstep, bf16 *o, int64_t ostep, int64_t n, int64_t C) {
    if constexpr (KW != 0) kw = KW;
    if constexpr (NR != 0) nrows = NR;
    int64_t at[NW];
    bf16_lane_offsets<Bf16Lanes<Bytes>::lanes>(0, C, at);
    constexpr int G = NW == 1 ? 4 : 2;   // G * NW * 3 chains
    Bf16MaxCheck<Bytes> check;
    int64_t i = 0;
    for (; i + G <= n; i += G)
        bf16_max_group<Bytes, NW, G>(p + i * pstep, roff, nrows, kw, kstep, pstep, at, o + i * ostep, ostep, check);
    for (; i < n; ++i)
        bf16_max_group<Bytes, NW, 1>(p + i * pstep, roff, nrows, kw, kstep, pstep, at, o + i * ostep, ostep, check);
    return check.exact();
}
static bool bf16_max_points_row_any(const bf16 *p, const int64_t *roff, int64_t nrows, int64_t kw, int64_t kstep,
                                    int64_t pstep, bf16 *o, int64_t ostep, int64_t n, int64_t C) {
    bool exact = true;
    with_bf16_lanes(C, [&](auto bytes, auto nw) {
        with_window_constants(kw, nrows, [&](auto kw_c, auto nr_c) {
            exact = bf16_max_points_row<bytes.value, nw.value, kw_c.value, nr_c.value>(p, roff, nrows, kw, kstep,
                                                                                      pstep, o, ostep, n, C);
        });
    });
    return exact;
}

// row_group_points in 16-bit lanes: G rows (pstep apart in src, ostep in
// dst) point by point; false as bf16_max_points_row.
template <int Bytes, int NW, int G>
static bool bf16_max_row_group(const bf16 *p_row, const int64_t *roff, int64_t nrows, const AxisPlan &AW,
                               int64_t sw, int64_t pstep, bf16 *o_row, int64_t dw, int64_t ostep, int64_t C) {
    int64_t at[NW];
    bf16_lane_offsets<Bf16Lanes<Bytes>::lanes>(0, C, at);
    Bf16MaxCheck<Bytes> check;
    for (int64_t ow = 0; ow < AW.out; ++ow) {
        const int64_t kw0 = AW.kbeg[ow];
        bf16_max_group<Bytes, NW, G>(p_row + (ow * AW.s - AW.pb + kw0 * AW.d) * sw, roff, nrows, AW.kend[ow] - kw0,
                                     AW.d * sw, pstep, at, o_row + ow * dw, ostep, check);
    }
    return check.exact();
}
// (G: row_group_rows' count for C)
template <int G>
static bool bf16_max_row_group_any(const bf16 *p_row, const int64_t *roff, int64_t nrows, const AxisPlan &AW,
                                   int64_t sw, int64_t pstep, bf16 *o_row, int64_t dw, int64_t ostep, int64_t C) {
    bool exact = true;
    with_bf16_lanes(C, [&](auto bytes, auto nw) {
        exact = bf16_max_row_group<bytes.value, nw.value, G>(p_row, roff, nrows, AW, sw, pstep, o_row, dw, ostep, C);
    });
    return exact;
}

// blocks_row's n points (whole windows, C of a block of channels or more:
// two whole vectors of 16-bit lanes) in 16-bit lanes: each point's channels
// in chunks of kBf16ChunkVecs whole vectors (twelve accumulators), then one
// to four vectors, the last one ending at C; false as bf16_max_points_row.
constexpr int kBf16ChunkVecs = 4;
template <int NW, int KW, int NR>
static inline __attribute__((always_inline)) void bf16_max_point_tail(const bf16 *p, const int64_t *roff,
                                                                      int64_t nrows, int64_t kw, int64_t kstep,
                                                                      int64_t c0, int64_t C, bf16 *o,
                                                                      Bf16MaxCheck<kVecBytes> &check) {
    int64_t at[NW];
    bf16_lane_offsets<Bf16Lanes<kVecBytes>::lanes>(c0, C, at);
    bf16_max_group<kVecBytes, NW, 1>(p, roff, nrows, kw, kstep, 0, at, o, 0, check);
}
template <int KW, int NR>
static bool bf16_max_blocks_row(const bf16 *p, const int64_t *roff, int64_t nrows, int64_t kw, int64_t kstep,
                                int64_t pstep, bf16 *o, int64_t ostep, int64_t n, int64_t C) {
    if constexpr (KW != 0) kw = KW;
    if constexpr (NR != 0) nrows = NR;
    constexpr int64_t L = Bf16Lanes<kVecBytes>::lanes, chunk = kBf16ChunkVecs * L;
    static constexpr ConsecutiveAt<kBf16ChunkVecs, L> whole{};
    static_assert(kBf16ChunkVecs == 4, "the tails below are for chunks of 4 vectors");
    const int64_t full = C / chunk * chunk, tail = (C - full + L - 1) / L;   // tail: 0-4 vectors
    Bf16MaxCheck<kVecBytes> check;
    for (int64_t i = 0; i < n; ++i, p += pstep, o += ostep) {
        for (int64_t c0 = 0; c0 < full; c0 += chunk)
            bf16_max_group<kVecBytes, kBf16ChunkVecs, 1>(p + c0, roff, nrows, kw, kstep, 0, whole.at, o + c0, 0,
                                                         check);
        switch (tail) {
        case 0: break;
        case 1: bf16_max_point_tail<1, KW, NR>(p, roff, nrows, kw, kstep, full, C, o, check); break;
        case 2: bf16_max_point_tail<2, KW, NR>(p, roff, nrows, kw, kstep, full, C, o, check); break;
        case 3: bf16_max_point_tail<3, KW, NR>(p, roff, nrows, kw, kstep, full, C, o, check); break;
        default: bf16_max_point_tail<4, KW, NR>(p, roff, nrows, kw, kstep, full, C, o, check); break;
        }
    }
    return check.exact();
}
static bool bf16_max_blocks_row_any(const bf16 *p, const int64_t *roff, int64_t nrows, int64_t kw, int64_t kstep,
                                    int64_t pstep, bf16 *o, int64_t ostep, int64_t n, int64_t C) {
    bool exact = true;
    with_window_constants(kw, nrows, [&](auto kw_c, auto nr_c) {
        exact = bf16_max_blocks_row<kw_c.value, nr_c.value>(p, roff, nrows, kw, kstep, pstep, o, ostep, n, C);
    });
    return exact;
}

// flat_row's n outputs (n >= a vector of 16-bit lanes) of a window of one
// row: o[x] = the maximum of X[x + t * step] over its kw taps, in chunks of
// kBf16ChunkVecs vectors, then single ones, the last ending at n; false as
// bf16_max_points_row.
template <int KW>
static bool bf16_max_flat_row(const bf16 *X, int64_t kw, int64_t step, bf16 *o, int64_t n) {
    if constexpr (KW != 0) kw = KW;
    constexpr int64_t L = Bf16Lanes<kVecBytes>::lanes, chunk = kBf16ChunkVecs * L;
    static constexpr ConsecutiveAt<kBf16ChunkVecs, L> whole{};
    static constexpr int64_t zero[1] = {0};   // the one row at X; one vector at x
    Bf16MaxCheck<kVecBytes> check;
    int64_t x = 0;
    for (; x + chunk <= n; x += chunk)
        bf16_max_group<kVecBytes, kBf16ChunkVecs, 1>(X + x, zero, 1, kw, step, 0, whole.at, o + x, 0, check);
    for (; x + L <= n; x += L) bf16_max_group<kVecBytes, 1, 1>(X + x, zero, 1, kw, step, 0, zero, o + x, 0, check);
    if (x < n) bf16_max_group<kVecBytes, 1, 1>(X + n - L, zero, 1, kw, step, 0, zero, o + n - L, 0, check);
    return check.exact();
}
static bool bf16_max_flat_row_any(const bf16 *X, int64_t kw, int64_t step, bf16 *o, int64_t n) {
    switch (kw) {
    case 2: return bf16_max_flat_row<2>(X, kw, step, o, n);
    case 3: return bf16_max_flat_row<3>(X, kw, step, o, n);
    case 4: return bf16_max_flat_row<4>(X, kw, step, o, n);
    default: return bf16_max_flat_row<0>(X, kw, step, o, n);
    }
}
