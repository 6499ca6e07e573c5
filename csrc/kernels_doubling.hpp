// Stride-1 windows over one lane (NCX rows) by doubling, in registers:
// level l holds the combine of 2^l consecutive positions, one shuffle and one
// combine from the level below.  A window of KW taps, A = 2^NL <= KW:
//   * maxima: two overlapping windows of level NL, KW - A apart;
//   * sums: level NL, then the levels of KW's other binary digits, each
//     shifted past the digits above it (k15 = 8 + 4 + 2 + 1).
// About NL + 1 shuffles and combines per vector of outputs, against KW - 1
// combines over unaligned (mostly line-splitting) loads tap by tap: maxima
// over an L1 row took 0.4-0.45 of the tap-by-tap time at k7, 0.35 at k15.
// The plan picks the windows (doubling_fits): 64-byte vectors, where a shift
// known only at run time is one two-source permute.
//
// Ties keep the left operand and a NaN on the right takes over (vmax_nan), so
// a window's maximum is the one of its taps in order: the first maximum, or
// the last NaN.  Sums add in a fixed order per window (not tap order).

constexpr int floor_log2(int64_t k) { return k < 2 ? 0 : 1 + floor_log2(k / 2); }

// The shuffles the windows of kw need (fixed per window: built once per
// thread's pass over its rows, not per row).
template <typename T>
struct DoublingShifts {
    typedef typename std::conditional<sizeof(typename Traits<T>::Acc) == 8, int64_t, int32_t>::type Lane;
    typedef Lane M __attribute__((vector_size(kVecBytes)));
    int nl = 0;        // the top level: 2^nl <= kw
    int digits = 0;    // kw - 2^nl: the overlap (maxima), the digits below the top one (sums)
    M last{};          // maxima: lanes from the overlap on
    M at[5] = {};      // sums: digit l >= 1 from the digits above it on
    int64_t at0 = 0;   // sums: digit 0 from there on (a load)
    // Lanes d .. d + VL - 1 of a pair of consecutive vectors.
    static M from(int64_t d) {
        M m;
        for (int i = 0; i < Vec<T>::lanes; ++i) m[i] = (Lane)(d + i);
        return m;
    }
    explicit DoublingShifts(int64_t kw) {
        if (kw < 2) return;
        nl = floor_log2(kw);
        digits = (int)(kw - ((int64_t)1 << nl));
        last = from(digits);
        int64_t above = (int64_t)1 << nl;
        for (int l = nl - 1; l >= 0; --l) {
            if (l) at[l] = from(above);
            else at0 = above;
            if (digits >> l & 1) above += (int64_t)1 << l;
        }
    }
};

// put(b, v) for blocks b in [0, nblocks) of VL outputs: v[i] = the window
// of X[b VL + i .. b VL + i + kw) combined.  Reads NL + 2 vectors past the
// last block's start, at most kDoublingSlackBytes past the last window's
// end: X needs that slack (any values: they reach only lanes past the last
// window).
template <typename T, int K, int NL, bool Nan, typename Src, typename Put, int... R>
__attribute__((always_inline)) static inline void doubled_blocks(const Src *X, int64_t nblocks, const DoublingShifts<T> &sh,
                                                                 Put &&put, LaneSeq<R...> lanes) {
    typedef typename Vec<T>::V V;
    constexpr int VL = sizeof...(R), D = NL + 2;
    // h[l][j]: level l at block b + NL + 1 - l - j (j = 0: the newest)
    V h[NL + 1][D] = {};
    auto push = [&](int l, V v) __attribute__((always_inline)) {
        for (int j = D - 1; j > 0; --j) h[l][j] = h[l][j - 1];
        h[l][0] = v;
    };
    auto climb = [&](auto lc) __attribute__((always_inline)) {
        constexpr int l = decltype(lc)::value;
        if constexpr (l >= 1 && l <= NL)
            push(l, vcombine<K, Nan>(h[l - 1][1], pair_shift<(1 << (l - 1))>(h[l - 1][1], h[l - 1][0], lanes)));
    };
    // Blocks -(NL + 1) .. -1 fill the levels (their windows are not put).
    for (int64_t b = -(NL + 1); b < nblocks; ++b) {
        push(0, load_any<T>(X + (b + NL + 1) * VL));
        (climb(std::integral_constant<int, R>{}), ...);
        if (b < 0) continue;
        // level l at blocks b and b + 1: h[l][NL + 1 - l], h[l][NL - l]
        V w = h[NL][1];
        if constexpr (K == kMax) {
            if (sh.digits) w = vcombine<K, Nan>(w, __builtin_shuffle(w, h[NL][0], sh.last));
        } else {
            auto digit = [&](auto lc) __attribute__((always_inline)) {
                constexpr int l = NL - 1 - decltype(lc)::value;
                if constexpr (l >= 1)
                    if (sh.digits >> l & 1) w += __builtin_shuffle(h[l][NL + 1 - l], h[l][NL - l], sh.at[l]);
            };
            (digit(std::integral_constant<int, R>{}), ...);
            if (sh.digits & 1) w += load_any<T>(X + b * VL + sh.at0);
        }
        put(b, w);
    }
}
