// Small strided windows over one lane (NCX rows) in registers: the values of
// tap kw for VL consecutive outputs (stride S) are the positions = kw (mod S)
// of S consecutive vectors loaded whole, picked by two-input shuffles.
//
// For 32-bit lanes and S = 2 or 4 the picks are in-lane shuffles (shufps on
// x86: one instruction each, no lane crossing).  They leave the outputs in a
// fixed scrambled order that every tap shares, so a window's result is put
// in output order once (in_order).  Other cases pick exactly (GCC chooses
// the instructions).

template <int... I> struct LaneSeq {};
template <int N> using LaneIdx = LaneSeq<__integer_pack(N)...>;

// 32-bit values per 128-bit group: the unit of in-lane shuffles.
constexpr int kGroup = 4;

template <int S, typename Acc>
constexpr bool phases_in_lane() { return sizeof(Acc) == 4 && (S == 2 || S == 4); }

// Even (p = 0) or odd (p = 1) values of the pair (x, y), group by group:
// lane j of group g is x[gG + 2j + p] for j < G/2, else y[gG + 2(j - G/2) + p].
constexpr int pair_pick(int lane, int vl, int p) {
    const int g = lane / kGroup, j = lane % kGroup;
    return j < kGroup / 2 ? g * kGroup + 2 * j + p : vl + g * kGroup + 2 * (j - kGroup / 2) + p;
}
// The output each scrambled lane holds.
constexpr int scrambled_output(int S, int lane, int vl) {
    if (S == 4) return (lane % kGroup) * (vl / 4) + lane / kGroup;
    const int g = lane / kGroup, j = lane % kGroup;
    return j < kGroup / 2 ? g * kGroup / 2 + j : vl / 2 + g * kGroup / 2 + j - kGroup / 2;
}
constexpr int lane_holding(int S, int out, int vl) {
    for (int lane = 0; lane < vl; ++lane)
        if (scrambled_output(S, lane, vl) == out) return lane;
    return -1;
}

// The even (P = 0) or odd (P = 1) positions of the 2 VL consecutive values
// (a, b), in order: lane i holds position 2i + P.
template <int P, typename V, int... I>
__attribute__((always_inline)) static inline V pair_phase(V a, V b, LaneSeq<I...>) {
    return __builtin_shufflevector(a, b, (2 * I + P)...);
}

// Lanes of phase P (< S) of the S vectors v (stride 1: the one vector):
// scrambled when in-lane.
template <int S, int P, typename Acc, typename V, int... I>
__attribute__((always_inline)) static inline V phase_lanes(const V *v, LaneSeq<I...>) {
    constexpr int VL = sizeof...(I);
    if constexpr (S == 1) {
        return v[0];
    } else if constexpr (phases_in_lane<S, Acc>() && S == 2) {
        return __builtin_shufflevector(v[0], v[1], pair_pick(I, VL, P)...);
    } else if constexpr (phases_in_lane<S, Acc>()) {   // S == 4: pairs of pairs
        const V ab = __builtin_shufflevector(v[0], v[1], pair_pick(I, VL, P % 2)...);
        const V cd = __builtin_shufflevector(v[2], v[3], pair_pick(I, VL, P % 2)...);
        return __builtin_shufflevector(ab, cd, pair_pick(I, VL, P / 2)...);
    } else if constexpr (S == 2) {
        return pair_phase<P>(v[0], v[1], LaneSeq<I...>{});
    } else if constexpr (S == 3) {
        const V ab = __builtin_shufflevector(v[0], v[1], (I * 3 + P < 2 * VL ? I * 3 + P : -1)...);
        return __builtin_shufflevector(ab, v[2], (I * 3 + P < 2 * VL ? I : I * 3 + P - VL)...);
    } else {   // S == 4
        const V ab = __builtin_shufflevector(v[0], v[1], (I < VL / 2 ? I * 4 + P : -1)...);
        const V cd = __builtin_shufflevector(v[2], v[3], (I < VL / 2 ? I * 4 + P : -1)...);
        return __builtin_shufflevector(ab, cd, (I < VL / 2 ? I : I + VL / 2)...);
    }
}

template <int S, typename Acc, typename V, int... I>
__attribute__((always_inline)) static inline V in_order(V r, LaneSeq<I...>) {
    if constexpr (phases_in_lane<S, Acc>()) return __builtin_shufflevector(r, r, lane_holding(S, I, sizeof...(I))...);
    else return r;
}

// Vector j of the VL values from `base` past a block's first window start:
// one row's (Src: the storage type T, widened on load, or accumulators), or
// (SepPass::direct_rows) several rows' combined per load.
template <typename T, typename Src>
__attribute__((always_inline)) static inline auto row_load(const Src *p) {
    return [p](int64_t base, int j) __attribute__((always_inline)) { return load_any<T>(p + base + j * Vec<T>::lanes); };
}

// Stride-1 taps over one lane (NCX rows).  The VL values from offset R of
// the pair of consecutive vectors (a, b): a[R..VL) then b[0..R).
template <int R, typename V, int... I>
__attribute__((always_inline)) static inline V pair_shift(V a, V b, LaneSeq<I...>) {
    return __builtin_shufflevector(a, b, (I + R)...);
}
// Tap offsets (mod VL) taken from two whole vectors by one shuffle rather
// than loaded: half a vector (a 128-bit swap on AVX2) and, from 8 lanes on,
// three quarters (the same swap and one in-lane shuffle, which the compiler
// shares with the half).  Every other offset stays a load: shuffles and
// loads then split the work between the ports (k9 over an L1 row: 0.75-0.8
// of the time with every tap loaded, 1.05 with every tap shuffled).
constexpr bool tap_by_shuffle(int r, int vl) { return vl >= 4 && (r == vl / 2 || (vl >= 8 && r == 3 * vl / 4)); }
constexpr int first_tap_by_shuffle(int vl) { return vl >= 4 ? vl / 2 : vl; }

// acc[j] = X[j VL] (+) X[j VL + 1] (+) ... (+) X[j VL + k - 1] for j < NV,
// taps in order (the bits of loading every tap).  Per VL taps the vectors
// at whole-vector offsets are loaded once; reads up to VL - 1 values past
// the last tap, so X must be a buffer with that slack.  Nan = false: X
// holds no NaN.
template <typename T, int K, int NV, bool Nan, typename Src, int... R>
__attribute__((always_inline)) static inline void slide_taps(const Src *X, int64_t k, typename Vec<T>::V *acc,
                                                             LaneSeq<R...> lanes) {
    typedef typename Vec<T>::V V;
    constexpr int VL = sizeof...(R);
    for (int j = 0; j < NV; ++j) acc[j] = load_any<T>(X + j * VL);   // tap 0 (q = 0 loads it again: one load)
    for (int64_t q = 0; q * VL < k; ++q) {
        const Src *Xq = X + q * VL;
        const int64_t taps = k - q * VL < VL ? k - q * VL : VL;
        V a[NV + 1];
        for (int j = 0; j < NV; ++j) a[j] = load_any<T>(Xq + j * VL);
        a[NV] = taps > first_tap_by_shuffle(VL) ? load_any<T>(Xq + NV * VL) : V{};   // read only when shuffled taps need it
        auto tap = [&](auto rc) __attribute__((always_inline)) {
            constexpr int r = decltype(rc)::value;
            if (r >= taps || (r == 0 && q == 0)) return;
            for (int j = 0; j < NV; ++j) {
                V v;
                if constexpr (r == 0) v = a[j];
                else if constexpr (tap_by_shuffle(r, VL)) v = pair_shift<r>(a[j], a[j + 1], lanes);
                else v = load_any<T>(Xq + j * VL + r);
                acc[j] = vcombine<K, Nan>(acc[j], v);
            }
        };
        (tap(std::integral_constant<int, R>{}), ...);
    }
}

// Tap kw of VL outputs whose windows start at 0, S, ... of `ld`.
template <typename T, int S, int KW_AT, typename Load>
__attribute__((always_inline)) static inline typename Vec<T>::V strided_tap(const Load &ld) {
    typedef typename Vec<T>::V V;
    constexpr int64_t VL = Vec<T>::lanes;
    constexpr int64_t base = KW_AT / S * S;   // taps past the stride read the next phase group
    V v[S];
    for (int j = 0; j < S; ++j) v[j] = ld(base, j);
    return phase_lanes<S, KW_AT % S, typename Traits<T>::Acc>(v, LaneIdx<VL>{});
}

// The windows of KW taps (in tap order) of VL outputs at stride S, in order.
// Reads the S * VL values from 0 (and S more when KW > S).
template <typename T, int K, int S, int KW, typename Load>
__attribute__((always_inline)) static inline typename Vec<T>::V strided_windows(const Load &ld) {
    typedef typename Vec<T>::V V;
    static_assert(S >= 1 && S <= 4 && KW >= 1 && KW <= 4, "small windows only");
    V r = strided_tap<T, S, 0>(ld);
    if constexpr (KW > 1) r = vcombine<K>(r, strided_tap<T, S, 1>(ld));
    if constexpr (KW > 2) r = vcombine<K>(r, strided_tap<T, S, 2>(ld));
    if constexpr (KW > 3) r = vcombine<K>(r, strided_tap<T, S, 3>(ld));
    return in_order<S, typename Traits<T>::Acc>(r, LaneIdx<Vec<T>::lanes>{});
}

// Taps J .. KW - 1 of one window row for VL outputs at stride S, with
// indices: each lane keeps the value winning so far (first maximum, first
// NaN) and its tap's offset from the window's first index value, which is
// the same for every lane (off0: the row's, istep: one tap's).  Lanes stay
// scrambled like strided_tap's; in_order sorts values and offsets alike.
template <typename T, int S, int KW, int J>
__attribute__((always_inline)) static inline void strided_idx_taps(const T *p, int64_t off0, int64_t istep,
                                                                   typename Vec<T>::V &acc,
                                                                   typename IdxVec<typename Traits<T>::Acc>::M &off) {
    typedef IdxVec<typename Traits<T>::Acc> IV;
    if constexpr (J < KW) {
        const typename Vec<T>::V b = strided_tap<T, S, J>(row_load<T>(p));
        const typename IV::M take = IV::wins(acc, b);
        acc = take ? b : acc;
        off = take ? typename IV::M{} + (typename IV::Lane)(off0 + J * istep) : off;
        strided_idx_taps<T, S, KW, J + 1>(p, off0, istep, acc, off);
    }
}

// v one output on (lane i holds v[i + 1]), the last lane the last lane of
// `tail` (SepPass::pair_rows at a row's end, where the next value is the last
// of a vector loaded to end there; pair_shift<1> when it is the first of the
// next vector).
template <typename V, int... I>
__attribute__((always_inline)) static inline V shift_in_last(V v, V tail, LaneSeq<I...>) {
    constexpr int VL = sizeof...(I);
    return __builtin_shufflevector(v, tail, (I + 1 < VL ? I + 1 : 2 * VL - 1)...);
}
