// Pooling kernels, written once and compiled once per instruction set:
// each csrc/isa_*.cpp includes this file inside a namespace under a
// `#pragma GCC target` (and defines kVecBytes, that ISA's vector width), so
// every template below is instantiated for that ISA.  No standard header may
// be included from here.
//
// Three kernels (chosen by plan.cpp):
//   kernels_block.hpp  channel-block: NXC, window taps accumulated in registers
//   kernels_sep.hpp    separable: W pass per input row, then H and D passes;
//                      large stride-1 windows by van Herk blocks (O(1)),
//                      two fused passes (O(sqrt k) loads) or doubling (O(log k))
//   kernels_global.hpp global planes: one contiguous reduction per (n, c)
// (kernels_transpose.hpp: NCX channel blocks moved to channels-last scratch
// and back, for the channel kernels)
// (kernels_phases.hpp: the separable kernel's small strided windows over
// one lane, stride phases picked by shuffles in registers)
//
// Types: T is the storage type, Acc the accumulator (f32 for f32/f16/bf16,
// f64 for f64, i32 for s8/u8).  16-bit values are widened on load and
// rounded once, to nearest even, on store.

struct bf16 { uint16_t bits; };

template <typename T> struct Traits;

// f32 and f64 are their own accumulators.
template <typename F>
struct SelfTraits {
    typedef F Acc;
    static inline Acc load(F v) { return v; }
    static inline F store(Acc v) { return v; }
    static inline F lowest() { return (F)(sizeof(F) == 4 ? -__FLT_MAX__ : -__DBL_MAX__); }
    static inline Acc max_init() { return -(F)__builtin_inf(); }
};
template <> struct Traits<float> : SelfTraits<float> {};
template <> struct Traits<double> : SelfTraits<double> {};
template <> struct Traits<_Float16> {
    typedef float Acc;
    static inline Acc load(_Float16 v) { return (float)v; }
    static inline _Float16 store(Acc v) { return (_Float16)v; }   // IEEE conversion: round to nearest even
    static inline _Float16 lowest() { return (_Float16)-65504.0f; }
    static inline Acc max_init() { return -__builtin_inff(); }
};
// bf16 bits of the f32 bits u of a number (a scalar or a vector of lanes):
// nearest, ties to even.
template <typename U>
static inline U bf16_rounded(U u) { return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16; }
// bf16_rounded for any f32: NaN stays NaN, made quiet.
template <typename U>
static inline U bf16_bits(U u) {
    const U quiet_nan = (u >> 16) | 0x40u;
    return (u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : bf16_rounded(u);
}

template <> struct Traits<bf16> {
    typedef float Acc;
    static inline Acc load(bf16 v) {
        uint32_t u = (uint32_t)v.bits << 16;
        float f;
        __builtin_memcpy(&f, &u, 4);
        return f;
    }
    static inline bf16 store(Acc f) {
        uint32_t u;
        __builtin_memcpy(&u, &f, 4);
        bf16 r;
        r.bits = (uint16_t)bf16_bits(u);
        return r;
    }
    static inline bf16 lowest() { bf16 r; r.bits = 0xff7f; return r; }
    static inline Acc max_init() { return -__builtin_inff(); }
};
template <> struct Traits<int8_t> {
    typedef int32_t Acc;
    static inline Acc load(int8_t v) { return v; }
    static inline int8_t store(Acc v) { return (int8_t)v; }
    static inline int8_t lowest() { return -128; }
    static inline Acc max_init() { return -128; }
    static inline float qmin() { return -128.0f; }
    static inline float qmax() { return 127.0f; }
};
template <> struct Traits<uint8_t> {
    typedef int32_t Acc;
    static inline Acc load(uint8_t v) { return v; }
    static inline uint8_t store(Acc v) { return (uint8_t)v; }
    static inline uint8_t lowest() { return 0; }
    static inline Acc max_init() { return 0; }
    static inline float qmin() { return 0.0f; }
    static inline float qmax() { return 255.0f; }
};

// 8-bit maxima in byte lanes (plan.cpp's byte_lane_maxima): a maximum
// needs no widening, so the channel-block kernel pools u8 and s8 maxima as
// bytes, four times the lanes of int32 accumulators (vpmaxub where a
// widened vector took a widening load and a narrowing store).  Kernels are
// instantiated per storage type, so these are types of their own (as bf16
// is) holding uint8_t's and int8_t's bits; their accumulators are those.
struct u8_lanes { uint8_t bits; };
struct s8_lanes { int8_t bits; };
template <typename B, typename I, I Lowest>
struct ByteLaneTraits {
    typedef I Acc;
    static inline Acc load(B v) { return v.bits; }
    static inline B store(Acc v) { return B{v}; }
    static inline B lowest() { return B{Lowest}; }
    static inline Acc max_init() { return Lowest; }
};
template <> struct Traits<u8_lanes> : ByteLaneTraits<u8_lanes, uint8_t, 0> {};
template <> struct Traits<s8_lanes> : ByteLaneTraits<s8_lanes, int8_t, -128> {};

// ---------------------------------------------------------------- combining

// Whether v is NaN.  Not `v != v`: GCC narrows a comparison of two widened
// halves back to a _Float16 one, which is a libgcc call (__nehf2) on CPUs
// without AVX512-FP16 (measured 14x on f16 channel tails).
static inline bool is_nan(float v) { return __builtin_isnan(v); }
static inline bool is_nan(double v) { return __builtin_isnan(v); }
static inline bool is_nan(_Float16 v) { return __builtin_isnan((float)v); }
static inline bool is_nan(int32_t) { return false; }

// Max that propagates NaN: once the accumulator is NaN it stays NaN.  Two
// selects, not `||`: GCC turns that into a branch on the data (random data
// mispredicts half the time).  Halves compare as floats (is_nan).
template <typename Acc>
static inline Acc max_nan(Acc acc, Acc v) {
    if constexpr (__is_same(Acc, _Float16)) {
        return (Acc)max_nan<float>((float)acc, (float)v);
    } else {
        const Acc m = v > acc ? v : acc;
        return is_nan(v) ? v : m;
    }
}

// Finalize one average: quantized outputs are rounded half to even and
// saturated.  `div` is the product of the per-axis divisors, converted once
// (exact: kernel volumes are far below 2^24).
// Quantization parameters, copied out of the context so that stores of
// 8-bit outputs (which may alias anything) do not force reloads.
struct QParams {
    float scale, zp_out;
    int32_t zp_in;
    float scale_div = 0.0f;   // scale / divisor of the output point being finished (vector stores)
    explicit QParams(const ExecCtx *c) : scale(c->qscale), zp_out(c->qzp_out), zp_in(c->qzp_in) {}
};

template <typename T, int K>
struct AvgOut {
    typedef typename Traits<T>::Acc Acc;
    typedef Acc Div;
    static inline T make(Acc sum, Div div, int32_t nvalid, QParams) {
        (void)nvalid;
        return Traits<T>::store(sum / div);
    }
};
template <typename T>
struct AvgOut<T, kQAvg> {
    typedef int32_t Acc;
    typedef float Div;
    static inline T make(Acc sum, Div div, int32_t nvalid, QParams q) {
        // Padded taps are real zeros, i.e. x_zp in the quantized domain.
        float centred = (float)(sum - nvalid * q.zp_in);
        float y = centred * (q.scale / div) + q.zp_out;   // one factor per output point
        y = __builtin_rintf(y);   // ties to even in the default rounding mode; vectorises
        y = Traits<T>::qmin() > y ? Traits<T>::qmin() : y;
        y = y > Traits<T>::qmax() ? Traits<T>::qmax() : y;
        return (T)(int32_t)y;
    }
};

// AvgOut<T, kQAvg>::make on a vector of sums (8-bit T) with a count and a
// scale_div (q.scale / div, as make forms it) per lane: the same float
// operations per lane; clamping before rounding is equivalent (the bounds
// are integers), and it keeps |y| small enough for the add-subtract
// rounding trick.  store_qavg_vec: one count and q.scale_div for all lanes.
template <typename T, typename V, typename F>
static inline void store_qavg_lanes(T *o, V sum, V nvalid, F scale_div, QParams q) {
    F y = __builtin_convertvector(sum - nvalid * q.zp_in, F) * scale_div + q.zp_out;
    const F lo = (F){} + Traits<T>::qmin(), hi = (F){} + Traits<T>::qmax();
    y = y < lo ? lo : y;
    y = y > hi ? hi : y;
    const F magic = (F){} + 12582912.0f;   // 1.5 * 2^23: rounds to an integer, ties to even
    y = (y + magic) - magic;
    isa_store_8bit(o, (IsaI32)__builtin_convertvector(y, V));
}
template <typename T, typename V>
static inline void store_qavg_vec(T *o, V sum, int32_t nvalid, QParams q) {
    typedef float F __attribute__((vector_size(sizeof(V))));
    store_qavg_lanes<T>(o, sum, (V){} + nvalid, (F){} + q.scale_div, q);
}

// Combining a left (earlier in scan order) and a right partial result: sums
// add; maxima keep the left one unless the right is greater or the first NaN.
// A partial result with index < 0 holds no input element (padding) and loses.
template <typename Acc, int K>
static inline Acc combine(Acc a, Acc b) { return K == kMax ? max_nan(a, b) : a + b; }

template <typename Acc>
static inline bool right_wins(Acc a, int64_t ai, Acc b) { return ai < 0 || b > a || (is_nan(b) && !is_nan(a)); }

// right_wins on vectors of lanes (a value vector and `parts` vectors of its
// int64 indices, lanes in order), and merges of whole rows with it.
template <typename Acc>
struct IdxVec {
    typedef Acc V __attribute__((vector_size(kVecBytes)));
    typedef Acc VU __attribute__((vector_size(kVecBytes), aligned(alignof(Acc))));
    typedef decltype(V{} < V{}) M;   // a lane mask of V: -1 or 0 per lane
    typedef decltype(M{}[0] + 0) Lane;   // M's signed integer lanes, as wide as Acc
    static constexpr int vl = (int)(kVecBytes / sizeof(Acc));
    static constexpr int lanes = (int)(kVecBytes / 8);   // int64 lanes per index vector
    static constexpr int parts = vl / lanes;
    typedef int64_t VI __attribute__((vector_size(kVecBytes)));
    typedef int64_t VIU __attribute__((vector_size(kVecBytes), aligned(8)));
    typedef int32_t Half __attribute__((vector_size(kVecBytes / 2)));
    static_assert(parts == 1 || (parts == 2 && sizeof(Acc) == 4), "4- or 8-byte lanes");

    static inline VI load(const int64_t *p) { return *(const VIU *)p; }
    static inline void store(int64_t *p, VI v) { *(VIU *)p = v; }

    // Part J of a mask, as int64 lanes (sign-extended).
    template <int J, int... L>
    static inline VI widen(M m, std::integer_sequence<int, L...>) {
        if constexpr (parts == 1) return (VI)m;
        else return __builtin_convertvector((Half)__builtin_shufflevector(m, m, (J * lanes + L)...), VI);
    }
    // The lanes of `parts` int64 masks as one mask of V.
    template <int... L>
    static inline M narrow(const VI *v, std::integer_sequence<int, L...>) {
        if constexpr (parts == 1) return (M)v[0];
        else return (M)__builtin_shufflevector(__builtin_convertvector(v[0], Half), __builtin_convertvector(v[1], Half), L...);
    }

    // The lanes where b wins over an element a: b > a, or b is NaN and a is not.
    static inline M wins(V a, V b) { return (a == a) & ~(b <= a); }

    // Whether the index offset of every tap of a window from its first tap
    // fits a lane of M (4-byte values: a window spanning under 2^31 index
    // values), bounded by the whole kernel's extent, axis by axis.
    static inline bool offsets_fit(const ExecCtx *c) {
        constexpr int64_t lane_max = (int64_t)(~(uint64_t)0 >> (64 - 8 * sizeof(Lane) + 1));
        int64_t span = 0;
        for (int a = 0; a < kAxes; ++a) {
            const int64_t step = c->ax[a].d * c->is[2 + a];
            span += (c->ax[a].k - 1) * (step < 0 ? -step : step);
        }
        return span <= lane_max;
    }

    // Lane offsets o (M's integer lanes, sign-extended) as the indices
    // base + o[l] + l * step, stored at x[0 .. vl).
    template <int... L>
    static inline void store_offsets(int64_t *x, M o, int64_t base, int64_t step, std::integer_sequence<int, L...> seq) {
        const VI first = VI{L...} * step + base;
        store(x, widen<0>(o, seq) + first);
        if constexpr (parts == 2) store(x + lanes, widen<1>(o, seq) + first + lanes * step);
    }
    static inline void store_offsets(int64_t *x, M o, int64_t base, int64_t step) {
        store_offsets(x, o, base, step, std::make_integer_sequence<int, lanes>());
    }

    // a, ai take b, bi in the lanes where b wins (a padding lane, index -1,
    // always loses).
    static inline void update(V &a, VI *ai, V b, const VI *bi) {
        VI pad[parts];
        for (int j = 0; j < parts; ++j) pad[j] = ai[j] < 0;
        const M take = wins(a, b) | narrow(pad, std::make_integer_sequence<int, vl>());
        a = take ? b : a;
        const auto seq = std::make_integer_sequence<int, lanes>();
        ai[0] = widen<0>(take, seq) ? bi[0] : ai[0];
        if constexpr (parts == 2) ai[1] = widen<1>(take, seq) ? bi[1] : ai[1];
    }

    // d = a (+) b with indices over the whole vectors of [0, n) (d may be a
    // or b; every vector is loaded before it is stored); returns where the
    // lane-by-lane tail starts.
    static inline int64_t merge(Acc *d, int64_t *di, const Acc *a, const int64_t *ai, const Acc *b,
                                const int64_t *bi, int64_t n) {
        int64_t x = 0;
        for (; x + vl <= n; x += vl) {
            V va = *(const VU *)(a + x);
            VI ia[parts], ib[parts];
            for (int j = 0; j < parts; ++j) {
                ia[j] = load(ai + x + j * lanes);
                ib[j] = load(bi + x + j * lanes);
            }
            update(va, ia, *(const VU *)(b + x), ib);
            *(VU *)(d + x) = va;
            for (int j = 0; j < parts; ++j) store(di + x + j * lanes, ia[j]);
        }
        return x;
    }
};

// One past src's last element, from its strides (a negative stride gives
// less, so reads bounded by it stay inside src): kernels whose vectors read
// past a point's or a row's own values stop where these reads would pass it.
template <typename T>
static inline const T *past_src(const ExecCtx *c) {
    const AxisPlan *A = c->ax;
    return (const T *)c->src + (c->N - 1) * c->ss[0] + (c->C - 1) * c->ss[1] + (A[0].in - 1) * c->ss[2] +
           (A[1].in - 1) * c->ss[3] + (A[2].in - 1) * c->ss[4] + 1;
}

// The (d, h) rows of output (od, oh)'s window that lie inside the input, in
// scan order: their src offsets and their index values; returns how many.
static inline int64_t window_rows(const ExecCtx *c, int64_t od, int64_t oh, int64_t *roff, int64_t *ridx) {
    const AxisPlan &AD = c->ax[0], &AH = c->ax[1];
    int64_t nrows = 0;
    for (int64_t kd = AD.kbeg[od]; kd < AD.kend[od]; ++kd) {
        const int64_t id = od * AD.s - AD.pb + kd * AD.d;
        for (int64_t kh = AH.kbeg[oh]; kh < AH.kend[oh]; ++kh, ++nrows) {
            const int64_t ih = oh * AH.s - AH.pb + kh * AH.d;
            roff[nrows] = id * c->ss[2] + ih * c->ss[3];
            ridx[nrows] = id * c->is[2] + ih * c->is[3];
        }
    }
    return nrows;
}

// Value a window without input elements starts from.
template <typename T, int K>
static inline typename Traits<T>::Acc identity() {
    return K == kMax ? Traits<T>::max_init() : (typename Traits<T>::Acc)0;
}

// a[x] = a[x] (+) b[x] for x < n; b lies after a in scan order.
template <typename Acc, int K, bool I>
static inline void combine_rows(Acc *__restrict a, int64_t *__restrict ai, const Acc *__restrict b,
                                const int64_t *__restrict bi, int64_t n) {
    if constexpr (I) {
        for (int64_t x = IdxVec<Acc>::merge(a, ai, a, ai, b, bi, n); x < n; ++x)
            if (right_wins(a[x], ai[x], b[x])) { a[x] = b[x]; ai[x] = bi[x]; }
    } else {
#pragma GCC ivdep
        for (int64_t x = 0; x < n; ++x) a[x] = combine<Acc, K>(a[x], b[x]);
    }
}

// a[x] = a[x] (+) a[x + sh] for x < n, sh > 0: in place, reading ahead only.
template <typename Acc, int K, bool I>
static inline void combine_shift(Acc *a, int64_t *ai, int64_t sh, int64_t n) {
    if constexpr (I) {
        for (int64_t x = IdxVec<Acc>::merge(a, ai, a, ai, a + sh, ai + sh, n); x < n; ++x)
            if (right_wins(a[x], ai[x], a[x + sh])) { a[x] = a[x + sh]; ai[x] = ai[x + sh]; }
    } else {
#pragma GCC ivdep
        for (int64_t x = 0; x < n; ++x) a[x] = combine<Acc, K>(a[x], a[x + sh]);
    }
}

template <typename Acc, bool I>
static inline void copy_rows(Acc *__restrict a, int64_t *__restrict ai, const Acc *__restrict b,
                             const int64_t *__restrict bi, int64_t n) {
    for (int64_t x = 0; x < n; ++x) a[x] = b[x];
    if constexpr (I) for (int64_t x = 0; x < n; ++x) ai[x] = bi[x];
}

template <typename Acc, bool I>
static inline void fill_rows(Acc *a, int64_t *ai, Acc v, int64_t n) {
    for (int64_t x = 0; x < n; ++x) a[x] = v;
    if constexpr (I) for (int64_t x = 0; x < n; ++x) ai[x] = -1;
}

// Window reduction of k consecutive positions by doubling.  B holds `npos`
// positions of `unit` values each (destroyed); out receives `nout` windows,
// window o covering positions [o, o + k).  Max: two overlapping power-of-two
// windows (the left one wins ties, so the first maximum survives); sums: one
// power-of-two piece per set bit of k, left to right.
template <typename Acc, int K, bool I>
static void window_doubling(Acc *B, int64_t *Bi, int64_t npos, int64_t unit, int64_t k,
                            Acc *out, int64_t *outi, int64_t nout) {
    int64_t len = 1, done = 0;   // B holds windows of len; `done` positions of out summed so far
    for (;;) {
        if (K != kMax && (k & len)) {
            if (done == 0) copy_rows<Acc, I>(out, outi, B, Bi, nout * unit);
            else combine_rows<Acc, K, I>(out, outi, B + done * unit, Bi + (I ? done * unit : 0), nout * unit);
            done += len;
        }
        if (2 * len > k) break;
        combine_shift<Acc, K, I>(B, Bi, len * unit, (npos - 2 * len + 1) * unit);
        len *= 2;
    }
    if constexpr (K == kMax) {
        if (len == k) {
            copy_rows<Acc, I>(out, outi, B, Bi, nout * unit);
        } else {
            copy_rows<Acc, I>(out, outi, B, Bi, nout * unit);
            combine_rows<Acc, K, I>(out, outi, B + (k - len) * unit, Bi + (I ? (k - len) * unit : 0), nout * unit);
        }
    }
}

// d[x] = a[x] (+) b[x] for x < n, a before b in scan order; d may be a or b.
template <typename Acc, int K, bool I>
static inline void merge_rows(Acc *d, int64_t *di, const Acc *a, const int64_t *ai, const Acc *b,
                              const int64_t *bi, int64_t n) {
    if constexpr (I) {
        for (int64_t x = IdxVec<Acc>::merge(d, di, a, ai, b, bi, n); x < n; ++x) {
            const bool w = right_wins(a[x], ai[x], b[x]);
            const Acc v = w ? b[x] : a[x];
            const int64_t i = w ? bi[x] : ai[x];
            d[x] = v;
            di[x] = i;
        }
    } else {
#pragma GCC ivdep
        for (int64_t x = 0; x < n; ++x) d[x] = combine<Acc, K>(a[x], b[x]);
    }
}

// Window reduction of k consecutive positions at O(1) per output (van Herk /
// Gil-Werman): positions are cut into blocks of k, aligned to absolute
// position `origin` + p = 0 mod k so that sums group the same way whatever
// the buffer's start (results identical across thread splits).  A window
// [o, o + k) is the suffix of o's block from o plus the prefix of the next
// block up to o + k - 1 (or o's whole block when o starts it).  Only sums of
// at most k terms are formed, so long lines lose no precision and an
// infinity never leaks outside its windows.  B is destroyed (prefixes).
template <typename Acc, int K, bool I>
static void window_blocks(Acc *B, int64_t *Bi, int64_t npos, int64_t unit, int64_t k, Acc *out,
                          int64_t *outi, int64_t nout, int64_t origin) {
    if (nout <= 0) return;
    const int64_t org = origin % k;
#define DP_ROW(buf, bufi, p) (buf) + (p) * unit, (bufi) + (I ? (p) * unit : 0)
    // Suffixes into out, block by block from the last one.
    for (int64_t p = nout - 1; p >= 0;) {
        int64_t bs = p - (p + org) % k;
        int64_t be = bs + k - 1;
        if (be > npos - 1) be = npos - 1;
        if (bs < 0) bs = 0;
        copy_rows<Acc, I>(DP_ROW(out, outi, p), DP_ROW(B, Bi, be), unit);
        for (int64_t q = be - 1; q >= p; --q)
            merge_rows<Acc, K, I>(DP_ROW(out, outi, p), DP_ROW(B, Bi, q), DP_ROW(out, outi, p), unit);
        for (int64_t q = p - 1; q >= bs; --q)
            merge_rows<Acc, K, I>(DP_ROW(out, outi, q), DP_ROW(B, Bi, q), DP_ROW(out, outi, q + 1), unit);
        p = bs - 1;
    }
    // Prefixes in place over the positions the windows' ends reach.
    // (`ph` tracks (position + origin) mod k without dividing per position.)
    const int64_t pend = nout + k - 1 < npos ? nout + k - 1 : npos;
    for (int64_t j = 1, ph = (1 + org) % k; j < pend; ++j, ph = ph + 1 == k ? 0 : ph + 1)
        if (ph != 0) merge_rows<Acc, K, I>(DP_ROW(B, Bi, j), DP_ROW(B, Bi, j - 1), DP_ROW(B, Bi, j), unit);
    for (int64_t o = 0, ph = org; o < nout; ++o, ph = ph + 1 == k ? 0 : ph + 1)
        if (ph != 0) merge_rows<Acc, K, I>(DP_ROW(out, outi, o), DP_ROW(out, outi, o), DP_ROW(B, Bi, o + k - 1), unit);
#undef DP_ROW
}

// Stride-1 window reduction by whichever of the two costs fewer passes
// (slide_passes in plan.hpp, the planner's cost model).
template <typename Acc, int K, bool I>
static void window_reduce(Acc *B, int64_t *Bi, int64_t npos, int64_t unit, int64_t k, Acc *out,
                          int64_t *outi, int64_t nout, int64_t origin) {
    if (blocks_win(k, K == kMax, unit))
        window_blocks<Acc, K, I>(B, Bi, npos, unit, k, out, outi, nout, origin);
    else
        window_doubling<Acc, K, I>(B, Bi, npos, unit, k, out, outi, nout);
}

template <typename T>
struct Vec {
    typedef typename Traits<T>::Acc Acc;
    static constexpr int64_t lanes = kVecBytes / (int64_t)sizeof(Acc);
    typedef Acc V __attribute__((vector_size(kVecBytes)));
    typedef Acc VU __attribute__((vector_size(kVecBytes), aligned(alignof(Acc))));   // unaligned access
};

// Stores one vector of accumulators (unaligned) without taking its address.
template <typename T>
static inline void store_vec(typename Traits<T>::Acc *p, typename Vec<T>::V v) {
    *(typename Vec<T>::VU *)p = v;
}

// Loads Vec<T>::lanes consecutive elements widened to the accumulator type.
template <typename T>
static inline typename Vec<T>::V load_vec(const T *p) {
    typedef typename Vec<T>::V V;
    if constexpr (sizeof(T) == sizeof(typename Traits<T>::Acc)) {
        return *(const typename Vec<T>::VU *)p;
    } else if constexpr (__is_same(T, bf16)) {
        return (V)isa_load_bf16(p);
    } else if constexpr (__is_same(T, _Float16)) {
        if constexpr (kHaveF16) {
            return (V)isa_load_f16(p);
        } else {
            V v;
            for (int64_t i = 0; i < Vec<T>::lanes; ++i) v[i] = (float)p[i];
            return v;
        }
    } else if constexpr (__is_same(T, uint8_t)) {
        return (V)isa_load_u8(p);
    } else {
        return (V)isa_load_s8(p);
    }
}

// The f32 lanes as bits (what bf16 stores take the high halves of).
typedef uint32_t F32Bits __attribute__((vector_size(kVecBytes)));

// The bits of f32 lanes that already are bf16 values (maxima), NaNs made
// quiet as rounding would: the high half is the value to store.  The NaN
// test is one float compare (v != v) rather than bf16_bits' unsigned integer
// one (three instructions on AVX2).
template <typename V>
static inline F32Bits bf16_quieted(V v) {
    const F32Bits u = (F32Bits)v;
    return v != v ? u | 0x400000u : u;
}

// Averages' lanes rounded to bf16 and stored: by the ISA's conversion where
// it has one (kHaveBf16Convert; its isa_* functions are declared only
// there, hence the calls on dependent operands), unless a lane is
// subnormal; else bf16_rounded's integer rounding and a narrowing store.
// The same bits either way.  Measured (AMD Zen 4, 1 thread, NXC averages,
// against the integer rounding): 3-D k2 s2 over 2 x 64 x 8 x 56 x 28 0.78
// of the time, 1-D k2 s2 over 2 x 48 x 4096 0.92, k3 s(1, 3) over 1 x 64 x
// 13 x 56 0.93, 1-D k4 s2 over 4 x 16 x 1000 0.93-1.0.
template <typename V>
static inline void store_bf16_rounded(void *o, V v) {
    if constexpr (kHaveBf16Convert)
        if (__builtin_expect(!isa_any_subnormal(v), 1)) return isa_store_bf16(o, v);
    isa_store_u16(o, (IsaI32)bf16_rounded((F32Bits)v));
}
template <typename V>
static inline void store_bf16_rounded_pair(void *o, V a, V b) {
    if constexpr (kHaveBf16Convert)
        if (__builtin_expect(!isa_any_subnormal(a, b), 1)) return isa_store_bf16_pair(o, a, b);
    isa_store_u16_pair(o, (IsaI32)bf16_rounded((F32Bits)a), (IsaI32)bf16_rounded((F32Bits)b));
}

// Stores one vector of accumulators as Vec<T>::lanes values of T, rounded
// like Traits<T>::store (8-bit types: the values are already in range).
// Exact: every lane already is a value of T (maxima), so bf16 only drops
// the low half (NaN still made quiet, as the rounding would).  Otherwise the
// lanes are quotients of sums of widened values (averages): for bf16 their
// NaNs came out of arithmetic, already quiet, with a zero low half (widened
// payloads, or the default NaN), so rounding them carries nothing into the
// high half and bf16_bits' NaN test is not needed.  NanFree (with Exact):
// lanes known to hold no NaN, stored without the test (a probed pass's
// maxima: they stand only when it loaded no NaN).
template <typename T, bool Exact = false, bool NanFree = false>
static inline void store_as(T *o, typename Vec<T>::V v) {
    typedef typename Traits<T>::Acc Acc;
    if constexpr (sizeof(T) == sizeof(Acc)) {   // (byte lanes too: their bits as they are)
        store_vec<T>((Acc *)o, v);
    } else if constexpr (__is_same(T, bf16)) {
        if constexpr (Exact && NanFree) isa_store_u16(o, (IsaI32)((F32Bits)v >> 16));
        else if constexpr (Exact) isa_store_u16(o, (IsaI32)(bf16_quieted(v) >> 16));
        else store_bf16_rounded(o, v);
    } else if constexpr (__is_same(T, _Float16)) {
        if constexpr (kHaveF16) {
            isa_store_f16(o, (IsaF32)v);
        } else {
            for (int64_t i = 0; i < Vec<T>::lanes; ++i) o[i] = Traits<T>::store(v[i]);
        }
    } else {
        isa_store_8bit(o, (IsaI32)v);
    }
}

// store_as of the first m lanes only (a row's tail: what follows o is not
// the caller's).
template <typename T, bool Exact = false>
static inline void store_head_as(T *o, typename Vec<T>::V v, int64_t m) {
    T buf[Vec<T>::lanes];
    store_as<T, Exact>(buf, v);
    for (int64_t i = 0; i < m; ++i) o[i] = buf[i];
}

// store_as of two consecutive vectors: rounded bf16 packs both at once.
template <typename T>
static inline void store_pair_as(T *o, typename Vec<T>::V a, typename Vec<T>::V b) {
    if constexpr (__is_same(T, bf16)) {
        store_bf16_rounded_pair(o, a, b);   // as store_as: averages
    } else {
        store_as<T>(o, a);
        store_as<T>(o + Vec<T>::lanes, b);
    }
}

// bf16 in pairs of vectors, split by parity: the 2 * Vec<bf16>::lanes
// values at p as one vector of the even ones and one of the odd ones,
// widened (one load, a shift and a mask, where two widening loads cost two
// shuffles and two shifts), and back, rounded as store_as rounds (one store,
// no narrowing shuffles).  Lane-wise code between the two computes every
// value exactly as it would in order.
template <typename T, int NV>   // whether NV consecutive vectors of T go in such pairs
constexpr bool kSplitPairs = __is_same(T, bf16) && kVecBytes == 64 && NV % 2 == 0;
// A probed pass's NaN check on split pairs (Nan = false, ran_without_nan):
// the lanes where neither half of any pair loaded so far was NaN, one
// ordered compare of the pair's two widened vectors a load (on AVX-512 into
// a mask register, under the lanes so far); infinities of both signs do not
// look like a NaN.  From L2 a pair's split and maxima alone keep the vector
// ports busy: on an Intel Xeon (Sapphire Rapids class) the 16-bit maxima of
// the halves' magnitudes before (an and and a maximum a load) took bf16 k2
// s2 NXC maxima over 128 x 56 x 56 1.08-1.15 of oneDNN's time, the compare
// (with blocks_row's probes carried across a row) 1.02-1.06, ResNet-50's
// slid k3 s2 p1 0.71 and 0.60-0.65.  (On an AMD Zen 4 the 16-bit maxima had
// taken 0.73-0.87 of the time of float sums, two adds a pair.)
struct PairProbe {
    IsaLanes ordered = kAllLanes;
    template <typename V>
    inline void add(V even, V odd) { ordered = isa_ordered_lanes(ordered, even, odd); }
    // As a float probe's sum: NaN (in every lane) once any pair held one.
    template <typename V>
    inline V as_sum() const {
        return ordered == kAllLanes ? V{} : V{} + __builtin_nanf("");
    }
};
// (probe: a probed pass's, or null)
template <typename T>
static inline __attribute__((always_inline)) void load_pair_split(const T *p, typename Vec<T>::V &even,
                                                                  typename Vec<T>::V &odd,
                                                                  PairProbe *probe = nullptr) {
    static_assert(__is_same(T, bf16), "split pairs are bf16's");
    typedef typename Vec<T>::V V;
    typedef uint32_t U __attribute__((vector_size(kVecBytes), aligned(2)));
    const U u = *(const U *)p;
    even = (V)(u << 16);
    odd = (V)(u & 0xffff0000u);
    if (probe) probe->add(even, odd);
}
// A split pair's lanes in channel order (two vectors of accumulators, as
// load_vec would give them), and channel-ordered vectors split so.
template <typename V>
static inline void unsplit_pair(V even, V odd, V &lo, V &hi) {
    static_assert(sizeof(V) == 64 && sizeof(even[0]) == 4, "split pairs are 16 lanes of f32");
    lo = __builtin_shufflevector(even, odd, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    hi = __builtin_shufflevector(even, odd, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
}
template <typename V>
static inline void split_pair(V lo, V hi, V &even, V &odd) {
    static_assert(sizeof(V) == 64 && sizeof(lo[0]) == 4, "split pairs are 16 lanes of f32");
    even = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    odd = __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
}
// store_bf16_rounded of a split pair, in channel order.
template <typename V>
static inline void store_bf16_rounded_split(void *o, V even, V odd) {
    typedef uint32_t UU __attribute__((vector_size(kVecBytes), aligned(2)));
    if constexpr (kHaveBf16Convert)
        if (__builtin_expect(!isa_any_subnormal(even, odd), 1)) return isa_store_bf16_split(o, even, odd);
    *(UU *)o = bf16_rounded((F32Bits)even) | (bf16_rounded((F32Bits)odd) << 16);
}
template <typename T, bool Exact = false, bool NanFree = false>
static inline void store_pair_split_as(T *o, typename Vec<T>::V even, typename Vec<T>::V odd) {
    static_assert(__is_same(T, bf16), "split pairs are bf16's");
    typedef uint32_t UU __attribute__((vector_size(kVecBytes), aligned(2)));
    if constexpr (Exact && NanFree)   // as store_as: no NaN to make quiet
        *(UU *)o = ((F32Bits)even >> 16) | ((F32Bits)odd & 0xffff0000u);
    else if constexpr (Exact)   // as store_as: NaNs made quiet, the low half dropped
        *(UU *)o = (bf16_quieted(even) >> 16) | (bf16_quieted(odd) & 0xffff0000u);
    else
        store_bf16_rounded_split(o, even, odd);
}

// buf[x] = widened p[x] for x < n: whole vectors, the last one overlapping
// the one before (short spans, e.g. NCX rows of 28, copied inline rather
// than by a library call per row).
template <typename T>
static inline void widen_span(typename Traits<T>::Acc *__restrict buf, const T *__restrict p, int64_t n) {
    constexpr int64_t VL = Vec<T>::lanes;
    int64_t x = 0;
    if (n >= VL) {
        for (; x + VL <= n; x += VL) store_vec<T>(buf + x, load_vec<T>(p + x));
        if (x < n) store_vec<T>(buf + n - VL, load_vec<T>(p + n - VL));
        return;
    }
    for (; x < n; ++x) buf[x] = Traits<T>::load(p[x]);
}

template <typename V>
static inline V vmax_nan(V acc, V v) {
    V m;   // v > acc ? v : acc: keeps acc on ties and when either is NaN
    if constexpr (__is_same(V, IsaF32) || __is_same(V, IsaF64)) m = isa_max(v, acc);
    else m = v > acc ? v : acc;
    return v != v ? v : m;   // a NaN tap takes over; a NaN acc stays
}
// Whether any lane of a vector of float or double sums is NaN (a probe
// that loaded values were added into: a NaN among them, or infinities of
// both signs, leaves a NaN).
template <typename V>
static inline bool holds_nan(V v) {
    if constexpr (__is_same(V, IsaF32) || __is_same(V, IsaF64)) return isa_any_nan(v);
    else return lanes_hold_nan(v);
}
// ... or of any of a kernel's probes.
template <typename V, int N>
static inline bool holds_nan(const V (&probes)[N]) {
    bool nan = false;
    for (int j = 0; j < N; ++j) nan |= holds_nan(probes[j]);
    return nan;
}
// Float maxima first run without NaN tests: run(probe) sums the values it
// loads into N zeroed probe vectors.  True when they show no NaN, so that
// run's results stand; false: the caller runs again with the tests (the
// first run must only have written what the second rewrites).
template <typename V, int N, typename Run>
static inline bool ran_without_nan(Run &&run) {
    V probe[N] = {};
    run(probe);
    return !holds_nan(probe);
}

// combine() on vectors of accumulators; Nan = false: maxima of operands
// known to hold no NaN (one instruction for floats, the same result).
template <int K, bool Nan = true, typename V>
static inline __attribute__((always_inline)) V vcombine(V acc, V v) {
    if constexpr (K == kMax && !Nan && (__is_same(V, IsaF32) || __is_same(V, IsaF64))) return isa_max(v, acc);
    else return K == kMax ? vmax_nan(acc, v) : acc + v;
}

// Values from p on, loaded a vector (Vec<T>::lanes of S) at a time: the
// first index whose load splits no cache line, or 0 when that leaves no whole
// vector within n (or p is not even aligned to S).  numpy aligns arrays to 16
// bytes only (large ones 16 bytes past a page), and split loads cost the
// shared H pass up to a third more time.
template <typename T, typename S>
static inline int64_t aligned_head(const S *p, int64_t n) {
    constexpr uintptr_t LB = Vec<T>::lanes * sizeof(S);   // bytes per load
    const uintptr_t a = (uintptr_t)p;
    const int64_t x = a % sizeof(S) ? 0 : (int64_t)((LB - a % LB) % LB / sizeof(S));
    return x + Vec<T>::lanes > n ? 0 : x;
}

// Loads one vector of accumulators from a storage-type source (widened) or
// from an accumulator buffer.
template <typename T, typename S>
static inline typename Vec<T>::V load_any(const S *p) {
    if constexpr (__is_same(S, T)) {
        return load_vec<T>(p);
    } else {
        return *(const typename Vec<T>::VU *)p;
    }
}
template <typename T, typename S>
static inline typename Traits<T>::Acc load_one(S v) {
    if constexpr (__is_same(S, T)) return Traits<T>::load(v);
    else return v;
}

// Pads: plain vector stores, no library call; writes v to [0, n) and may
// write up to lanes-1 values past n (the caller's buffers have that slack,
// and what follows is written afterwards).
template <typename T>
static inline void fill_pad(typename Traits<T>::Acc *b, typename Traits<T>::Acc v, int64_t n) {
    constexpr int64_t VL = Vec<T>::lanes;
    const typename Vec<T>::V vv = (typename Vec<T>::V){} + v;
    for (int64_t x = 0; x < n; x += VL) store_vec<T>(b + x, vv);
}

// Y[x] = X[x + off[0]] (+) X[x + off[1]] (+) ... for x < n, taps in order:
// one pass, the partial results of a block of kFuseVecs vectors in
// registers.  X is the storage type T (widened on load) or Acc.  `Into`
// (values only) continues the partial results already in Y instead:
// Y[x] = Y[x] (+) X[x + off[0]] (+) ...
constexpr int kFuseVecs = 4;

template <typename T, int K, bool I, typename S, bool Into = false, bool Nan = true>
static void taps_reduce(typename Traits<T>::Acc *__restrict Y, int64_t *__restrict Yi, const S *__restrict X,
                        const int64_t *__restrict Xi, const int64_t *off, int64_t nt, int64_t n) {
    typedef typename Traits<T>::Acc Acc;
    typedef typename Vec<T>::V V;
    constexpr int64_t VL = Vec<T>::lanes, B = kFuseVecs * VL;
    static_assert(!(I && Into), "indices restart from the first tap");
    constexpr int64_t t0 = Into ? 0 : 1;   // first tap combined into the start value
    int64_t x = 0;
    if constexpr (!I) {
        // bf16 blocks in pairs split by parity (load_pair_split), Y in
        // channel order: two shuffles a pair at either end of the pass
        // against two widening loads a pair every tap.  Global pooling of
        // 32 x 2048 x 7 x 7 bf16 NXC at 1 thread: averages 0.90 of the
        // time, maxima 0.81-0.94.
        constexpr bool kSplit = __is_same(S, T) && kSplitPairs<T, kFuseVecs>;
        for (; x + B <= n; x += B) {
            V acc[kFuseVecs];
            for (int j = 0; j < kFuseVecs; j += 1 + kSplit) {
                if constexpr (Into) {   // continued from Y (channel order)
                    const typename Vec<T>::VU *y = (const typename Vec<T>::VU *)(Y + x + j * VL);
                    if constexpr (kSplit) split_pair<V>(y[0], y[1], acc[j], acc[j + 1]);
                    else acc[j] = y[0];
                } else if constexpr (kSplit) {
                    load_pair_split<T>(X + x + off[0] + j * VL, acc[j], acc[j + 1]);
                } else {
                    acc[j] = load_any<T>(X + x + off[0] + j * VL);
                }
            }
            for (int64_t t = t0; t < nt; ++t) {
                const S *p = X + x + off[t];
                for (int j = 0; j < kFuseVecs; j += 1 + kSplit) {
                    V v[2];
                    if constexpr (kSplit) load_pair_split<T>(p + j * VL, v[0], v[1]);
                    else v[0] = load_any<T>(p + j * VL);
                    for (int h = 0; h <= kSplit; ++h) acc[j + h] = vcombine<K, Nan>(acc[j + h], v[h]);
                }
            }
            if constexpr (kSplit)
                for (int j = 0; j < kFuseVecs; j += 2) unsplit_pair<V>(acc[j], acc[j + 1], acc[j], acc[j + 1]);
            for (int j = 0; j < kFuseVecs; ++j) store_vec<T>(Y + x + j * VL, acc[j]);
        }
        auto one = [&](int64_t at) {
            V acc = Into ? *(const typename Vec<T>::VU *)(Y + at) : load_any<T>(X + at + off[0]);
            for (int64_t t = t0; t < nt; ++t) acc = vcombine<K, Nan>(acc, load_any<T>(X + at + off[t]));
            store_vec<T>(Y + at, acc);
        };
        for (; x + VL <= n; x += VL) one(x);
        // The tail of a row of a vector or more: one vector overlapping the
        // one before, which stores the same bits again (continued sums would
        // count the overlap twice), instead of up to VL - 1 values one by one
        // (on 16 lanes, 8 of every 56).
        if (x < n && n >= VL && (!Into || K == kMax)) {
            one(n - VL);
            return;
        }
        for (; x < n; ++x) {
            Acc acc = Into ? Y[x] : load_one<T>(X[x + off[0]]);
            for (int64_t t = t0; t < nt; ++t) acc = combine<Acc, K>(acc, load_one<T>(X[x + off[t]]));
            Y[x] = acc;
        }
        return;
    }
    if constexpr (I) {   // (IdxVec exists for 4- and 8-byte lanes only)
        typedef IdxVec<Acc> IV;
        for (; x + VL <= n; x += VL) {   // whole vectors, then the tail lane by lane
            V acc = load_any<T>(X + x + off[0]);
            typename IV::VI ai[IV::parts], bi[IV::parts];
            for (int j = 0; j < IV::parts; ++j) ai[j] = IV::load(Xi + x + off[0] + j * IV::lanes);
            for (int64_t t = 1; t < nt; ++t) {
                for (int j = 0; j < IV::parts; ++j) bi[j] = IV::load(Xi + x + off[t] + j * IV::lanes);
                IV::update(acc, ai, load_any<T>(X + x + off[t]), bi);
            }
            store_vec<T>(Y + x, acc);
            for (int j = 0; j < IV::parts; ++j) IV::store(Yi + x + j * IV::lanes, ai[j]);
        }
    }
    for (; x < n; x += B) {
        const int64_t m = n - x < B ? n - x : B;
        Acc acc[B];
        int64_t ai[I ? B : 1];
        const S *p = X + x + off[0];
        for (int64_t i = 0; i < m; ++i) acc[i] = load_one<T>(p[i]);
        if constexpr (I) for (int64_t i = 0; i < m; ++i) ai[i] = Xi[x + off[0] + i];
        for (int64_t t = 1; t < nt; ++t) {
            p = X + x + off[t];
            if constexpr (I) {
                const int64_t *pi = Xi + x + off[t];
                for (int64_t i = 0; i < m; ++i) {
                    const Acc v = load_one<T>(p[i]);
                    if (right_wins(acc[i], ai[i], v)) { acc[i] = v; ai[i] = pi[i]; }
                }
            } else {
                for (int64_t i = 0; i < m; ++i) acc[i] = combine<Acc, K>(acc[i], load_one<T>(p[i]));
            }
        }
        for (int64_t i = 0; i < m; ++i) Y[x + i] = acc[i];
        if constexpr (I) for (int64_t i = 0; i < m; ++i) Yi[x + i] = ai[i];
    }
}

// taps_reduce over nr rows with the same taps, row r at X + r * xs and Y + r
// * ys, each of n >= Vec<T>::lanes values.  A row under kFuseVecs vectors
// gives taps_reduce too few independent chains to hide the combine latency
// (rows of 28 floats: two chains of nt dependent combines per row); here the
// vectors of consecutive rows (each row's last overlapping the one before,
// as in taps_reduce) are reduced kRowVecs at a time.  The same taps in the
// same order: the same bits as taps_reduce row by row.
constexpr int kRowVecs = 8;

template <int G, typename T, int K, bool Into, bool Nan, typename S>
static inline __attribute__((always_inline)) void taps_units(typename Traits<T>::Acc *__restrict Y,
                                                             const S *__restrict X, const int64_t *yo,
                                                             const int64_t *xo, const int64_t *off, int64_t nt) {
    typedef typename Vec<T>::V V;
    V acc[G];
    for (int j = 0; j < G; ++j)
        acc[j] = Into ? *(const typename Vec<T>::VU *)(Y + yo[j]) : load_any<T>(X + xo[j] + off[0]);
    for (int64_t t = Into ? 0 : 1; t < nt; ++t)
        for (int j = 0; j < G; ++j) acc[j] = vcombine<K, Nan>(acc[j], load_any<T>(X + xo[j] + off[t]));
    for (int j = 0; j < G; ++j) store_vec<T>(Y + yo[j], acc[j]);
}

template <typename T, int K, typename S, bool Into = false, bool Nan = true>
static void taps_reduce_rows(typename Traits<T>::Acc *__restrict Y, int64_t ys, const S *__restrict X, int64_t xs,
                             const int64_t *off, int64_t nt, int64_t n, int64_t nr) {
    constexpr int64_t VL = Vec<T>::lanes;
    // Rows that abut in X and in Y (dense rows of the whole padded width,
    // a row per step) are one run: rows under a vector then vectorise too
    // (3-D k2x3x5 s1 maxima over rows of 7 floats went a value at a time).
    if (n == xs && n == ys) {
        taps_reduce<T, K, false, S, Into, Nan>(Y, nullptr, X, nullptr, off, nt, nr * n);
        return;
    }
    // Continued sums cannot overlap vectors (the overlap would count twice).
    if (n < VL || (Into && K != kMax && n % VL)) {
        for (int64_t r = 0; r < nr; ++r)
            taps_reduce<T, K, false, S, Into, Nan>(Y + r * ys, nullptr, X + r * xs, nullptr, off, nt, n);
        return;
    }
    const int64_t per = (n + VL - 1) / VL;
    int64_t yo[kRowVecs], xo[kRowVecs];
    int u = 0;
    for (int64_t r = 0; r < nr; ++r)
        for (int64_t j = 0; j < per; ++j) {
            const int64_t x = j * VL < n - VL ? j * VL : n - VL;
            yo[u] = r * ys + x;
            xo[u] = r * xs + x;
            if (++u == kRowVecs) {
                taps_units<kRowVecs, T, K, Into, Nan>(Y, X, yo, xo, off, nt);
                u = 0;
            }
        }
    int at = 0;
    if (u - at >= 4) taps_units<4, T, K, Into, Nan>(Y, X, yo + at, xo + at, off, nt), at += 4;
    if (u - at >= 2) taps_units<2, T, K, Into, Nan>(Y, X, yo + at, xo + at, off, nt), at += 2;
    if (u - at >= 1) taps_units<1, T, K, Into, Nan>(Y, X, yo + at, xo + at, off, nt);
}

// The lines of `bytes` bytes from p, into L2 (prefetcht1).  Into L1
// (prefetcht0) the same prefetches took 1.3-1.85x the time on src beyond
// the caches (1 thread, AMD Zen 4: 3-D NCX k3 s2 p1 over 51-103 MB, NXC
// ResNet-50 k3 s2 p1 at batch 32, 3-D NXC k3 s2 p1 over 103 MB): they hold
// L1 miss buffers that the demand loads need, for lines read only later.
static inline void prefetch_span(const void *p, int64_t bytes) {
    const char *b = (const char *)p;
    for (int64_t at = 0; at < bytes; at += 64) __builtin_prefetch(b + at, 0, 2);
    __builtin_prefetch(b + bytes - 1, 0, 2);   // the last line when b is not line-aligned
}

// Runs of output rows whose windows are up to three planes of three rows,
// h apart, the next output row two rows on (k3 s2 along H): a window's last
// row is the next one's first.  Each plane's last row stays in registers
// for the next output row, so a row loads 2 of its 3 rows per plane (24 of
// 36 vector loads for 3-D k3 s2 over rows of 49-64 values).  The taps
// combine in the order of taps_reduce_rows (plane by plane, rows in order):
// the same bits.  plane[d]: plane d's first row of the run's first window;
// rows of NV vectors (n values, the last vector overlapping the one before);
// ahead (values, 0: none): each row prefetched that far on, once, as the
// run reaches it.
template <typename T, int K, int NV, typename S>
static void taps_carry_rows(typename Traits<T>::Acc *__restrict Y, int64_t ys, const S *const *plane, int64_t planes,
                            int64_t h, int64_t n, int64_t nr, int64_t ahead) {
    typedef typename Vec<T>::V V;
    constexpr int64_t VL = Vec<T>::lanes;
    int64_t at[NV];
    for (int j = 0; j < NV; ++j) at[j] = j * VL < n - VL ? j * VL : n - VL;
    V carry[3][NV] = {};
#pragma GCC unroll 3
    for (int d = 0; d < 3; ++d)
        if (d < planes)
            for (int j = 0; j < NV; ++j) carry[d][j] = load_any<T>(plane[d] + at[j]);
    for (int64_t r = 0; r < nr; ++r) {
        V acc[NV];
#pragma GCC unroll 3
        for (int d = 0; d < 3; ++d) {
            if (d > 0 && d >= planes) break;
            const S *p = plane[d] + 2 * r * h;
            if (ahead) {
                prefetch_span(p + h + ahead, n * (int64_t)sizeof(S));
                prefetch_span(p + 2 * h + ahead, n * (int64_t)sizeof(S));
            }
            for (int j = 0; j < NV; ++j) {
                const V b = load_any<T>(p + h + at[j]), e = load_any<T>(p + 2 * h + at[j]);
                const V v = d == 0 ? carry[d][j] : vcombine<K>(acc[j], carry[d][j]);
                acc[j] = vcombine<K>(vcombine<K>(v, b), e);
                carry[d][j] = e;
            }
        }
        for (int j = 0; j < NV; ++j) store_vec<T>(Y + r * ys + at[j], acc[j]);
    }
}

// G windows of k consecutive rows (k >= G), window g over rows X + (g + t) *
// rs for t < k, NV vectors from value x of each row, each result handed to
// put(g, x + j * VL, v): a van Herk block of G windows in registers.  Rows
// G - 1 .. k - 1 (the core) belong to every window; window g adds the suffix
// of rows g .. G - 2 before it and the prefix of rows k .. k + g - 1 after
// it, both grown one row at a time: k + 3G - 6 combines for G windows
// instead of G(k - 1), every row loaded once.  Values only.  The order of a
// window's sums is fixed by g, so callers align blocks to fixed outputs
// (results independent of where a chunk starts).  "Rows" are D/H rows
// (taps_shared) or, C lanes apart, the positions of a W pass.
// Nan = false: maxima without NaN tests, for rows known to hold no NaN or,
// with Probe, every loaded row also added into *probe, which comes out NaN
// if any row held a NaN (or both infinities: a false alarm only), so the
// caller can redo the block with Nan = true.
template <typename T, int K, int G, int NV, bool Nan = true, bool Probe = !Nan, typename S, typename Put>
static inline __attribute__((always_inline)) void shared_block(const S *X, int64_t rs, int64_t k, int64_t x,
                                                               Put &&put, typename Vec<T>::V *probe = nullptr) {
    typedef typename Vec<T>::V V;
    constexpr int64_t VL = Vec<T>::lanes;
    V suf[G - 1][NV], core[NV], pre[NV], sum[NV];
    auto row = [&](int64_t i, int j) __attribute__((always_inline)) {
        const V v = load_any<T>(X + i * rs + x + j * VL);
        if constexpr (Probe) sum[j] = i == G - 2 ? v : sum[j] + v;   // row G - 2 comes first
        return v;
    };
    for (int j = 0; j < NV; ++j) suf[G - 2][j] = row(G - 2, j);
#pragma GCC unroll 8
    for (int i = G - 3; i >= 0; --i)
        for (int j = 0; j < NV; ++j) suf[i][j] = vcombine<K, Nan>(row(i, j), suf[i + 1][j]);
    for (int j = 0; j < NV; ++j) core[j] = row(G - 1, j);
    for (int64_t i = G; i < k; ++i)
        for (int j = 0; j < NV; ++j) core[j] = vcombine<K, Nan>(core[j], row(i, j));
    for (int j = 0; j < NV; ++j) put(0, x + j * VL, vcombine<K, Nan>(suf[0][j], core[j]));
#pragma GCC unroll 8
    for (int g = 1; g < G; ++g)
        for (int j = 0; j < NV; ++j) {
            const V v = row(k + g - 1, j);
            pre[j] = g == 1 ? v : vcombine<K, Nan>(pre[j], v);
            put(g, x + j * VL, vcombine<K, Nan>(g < G - 1 ? vcombine<K, Nan>(suf[g][j], core[j]) : core[j], pre[j]));
        }
    if constexpr (Probe)
        for (int j = 0; j < NV; ++j) *probe += sum[j];
}
template <typename T, int K, int G, bool Nan = true, bool Probe = !Nan, typename S>
static void taps_shared(typename Traits<T>::Acc *Y, int64_t ys, const S *X, int64_t rs, int64_t k, int64_t n, int g0,
                        int g1, typename Vec<T>::V *probe = nullptr) {
    typedef typename Traits<T>::Acc Acc;
    constexpr int64_t VL = Vec<T>::lanes;
    static_assert(G >= 2 && G <= 4, "a block shares rows (k >= G >= 2); G * NV accumulators stay in registers");
    constexpr int NV = G >= 3 ? 2 : 4;
    int64_t x = 0;
    auto put = [&](int g, int64_t at, typename Vec<T>::V v) {
        if (g >= g0 && g < g1) store_vec<T>(Y + (g - g0) * ys + at, v);
    };
    // The probe's sums in a register, not through *probe (which may alias Y)
    typename Vec<T>::V sums{};
    for (; x + NV * VL <= n; x += NV * VL) shared_block<T, K, G, NV, Nan, Probe>(X, rs, k, x, put, &sums);
    for (; x + VL <= n; x += VL) shared_block<T, K, G, 1, Nan, Probe>(X, rs, k, x, put, &sums);
    if constexpr (Probe) *probe += sums;
    for (; x < n; ++x) {   // the same sums, one value at a time (NaN-aware: only probed)
        Acc suf[G - 1], core = load_one<T>(X[(G - 1) * rs + x]), pre = 0;
        for (int64_t i = G; i < k; ++i) core = combine<Acc, K>(core, load_one<T>(X[i * rs + x]));
        suf[G - 2] = load_one<T>(X[(G - 2) * rs + x]);
        for (int i = G - 3; i >= 0; --i) suf[i] = combine<Acc, K>(load_one<T>(X[i * rs + x]), suf[i + 1]);
        for (int g = 0; g < G; ++g) {
            if (g > 0) {
                const Acc v = load_one<T>(X[(k + g - 1) * rs + x]);
                pre = g == 1 ? v : combine<Acc, K>(pre, v);
            }
            const Acc a = g < G - 1 ? combine<Acc, K>(suf[g], core) : core;
            if (g >= g0 && g < g1) Y[(g - g0) * ys + x] = g > 0 ? combine<Acc, K>(a, pre) : a;
        }
        if constexpr (Probe) (*probe)[0] += combine<Acc, K>(combine<Acc, K>(suf[0], core), pre);
    }
}

// One pass of a tap reduction done in several (values only): the first
// pass starts the partial results in Y, later ones continue them.
template <typename T, int K, bool Nan = true>
static inline void taps_pass(typename Traits<T>::Acc *Y, const T *X, const int64_t *off, int64_t nt, int64_t n,
                             bool continued) {
    if (continued) taps_reduce<T, K, false, T, true, Nan>(Y, nullptr, X, nullptr, off, nt, n);
    else taps_reduce<T, K, false, T, false, Nan>(Y, nullptr, X, nullptr, off, nt, n);
}

// Values only: window reduction of k consecutive positions of B (`unit`
// values each) in two fused passes (w_values_plan in plan.hpp): tmp[p] =
// windows of a taps, then out[o] = tmp[o], tmp[o + a], ... and, for sums,
// the k mod a leftover taps of B (maxima overlap the last window instead).
// tmp holds nout + k - a positions; toff has room for k offsets.
template <typename T, int K>
static void window_factored(const typename Traits<T>::Acc *B, int64_t unit, int64_t k, int64_t a,
                            typename Traits<T>::Acc *tmp, typename Traits<T>::Acc *out, int64_t nout,
                            int64_t *toff) {
    for (int64_t j = 0; j < a; ++j) toff[j] = j * unit;
    taps_reduce<T, K, false>(tmp, nullptr, B, nullptr, toff, a, (nout + k - a) * unit);
    int64_t nt = 0;
    for (int64_t at = 0; at + a <= k; at += a) toff[nt++] = at * unit;
    if (K == kMax) {
        if (k % a) toff[nt++] = (k - a) * unit;
    } else {
        // Leftover taps read B: offsets from tmp (both live in one scratch block).
        const int64_t from_tmp = B - tmp;
        for (int64_t at = k - k % a; at < k; ++at) toff[nt++] = from_tmp + at * unit;
    }
    taps_reduce<T, K, false>(out, nullptr, tmp, nullptr, toff, nt, nout * unit);
}

#include "kernels_columns.hpp"
#include "kernels_block.hpp"
#include "kernels_phases.hpp"
#include "kernels_doubling.hpp"
#include "kernels_sep.hpp"
#include "kernels_global.hpp"
#include "kernels_transpose.hpp"

// ---------------------------------------------------------------- selection

template <typename T, int K, bool WithIdx>
static RowFn pick_variant(int variant) {
    switch (variant) {
    case kChannelBlock: return &channel_block_rows<T, K, WithIdx>;
    case kSepPlane: return &sep_rows<T, K, WithIdx, false>;
    case kSepLanes: return &sep_rows<T, K, WithIdx, true>;
    case kGlobalPlane: return &global_plane_rows<T, K, WithIdx>;
    }
    return 0;
}

template <typename T>
static RowFn pick_kind(int kind, int variant, bool with_idx) {
    if (kind == kMax) return with_idx ? pick_variant<T, kMax, true>(variant) : pick_variant<T, kMax, false>(variant);
    if (kind == kAvg) return pick_variant<T, kAvg, false>(variant);
    return 0;
}

template <typename T>
static RowFn pick_quantized(int kind, int variant, bool with_idx) {
    if (kind == kQAvg) return pick_variant<T, kQAvg, false>(variant);
    if (kind == kMax) return with_idx ? pick_variant<T, kMax, true>(variant) : pick_variant<T, kMax, false>(variant);
    return 0;
}

#ifdef DNNPOOL_KERNELS_BF16_ONLY
// (a unit of bf16's kernels alone: every other type is another variant's)
RowFn select(int dtype, int kind, int variant, bool with_idx, bool byte_lanes) {
    return dtype == DP_BF16 && !byte_lanes ? pick_kind<bf16>(kind, variant, with_idx) : 0;
}
#else
RowFn select(int dtype, int kind, int variant, bool with_idx, bool byte_lanes) {
    if (byte_lanes) {   // (plan.cpp's byte_lane_maxima: channel-block maxima without indices)
        if (kind != kMax || variant != kChannelBlock || with_idx) return 0;
        return dtype == DP_U8   ? &channel_block_rows<u8_lanes, kMax, false>
               : dtype == DP_S8 ? &channel_block_rows<s8_lanes, kMax, false>
                                : 0;
    }
    switch (dtype) {
    case DP_F32: return pick_kind<float>(kind, variant, with_idx);
    case DP_F64: return pick_kind<double>(kind, variant, with_idx);
    case DP_F16: return pick_kind<_Float16>(kind, variant, with_idx);
    case DP_BF16: return pick_kind<bf16>(kind, variant, with_idx);
    case DP_S8: return pick_quantized<int8_t>(kind, variant, with_idx);
    case DP_U8: return pick_quantized<uint8_t>(kind, variant, with_idx);
    }
    return 0;
}

MoveFn select_move(int64_t bytes, bool to_last) { return to_last ? pick_move<true>(bytes) : pick_move<false>(bytes); }
#endif
