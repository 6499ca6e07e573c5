// Channel-block kernel (NXC, unit channel stride in src and dst).
//
// Row space: (n, od, oh).  For every output point the channels are processed
// in blocks of kBlockVecs vectors kept in registers while the window's taps
// are visited in row-major order (depth, height, width); the tail block uses
// the same code with a runtime length.  Indices take the plain array path.
// Stride-1 windows pool each input position's rows once and then combine
// columns (flat rows over dense (w, c) rows; slid blocks otherwise), borders
// point by point.

constexpr int kBlockVecs = 4;
// Large windows that share no rows with their neighbours (global ones
// among them) over channel rows this long stream their taps in groups
// instead: registers would visit every tap row per block, and rows at a
// power-of-two stride conflict in L1 (measured up to 2x).  Windows that
// overlap reuse their rows from cache and stay in registers (1.5x faster).
constexpr int64_t kStreamRowBytes = 2048;
constexpr int64_t kStreamMinTaps = 24;
constexpr int kStreamTaps = 8;   // taps per pass over the partial results
// int64s of scratch past a streamed window's C partial results: their
// 64-byte alignment and a vector of slack
constexpr int64_t kStreamSlack = 16;
// Output points whose W windows share no columns, over a src past the
// plan's prefetching floor (beyond the caches: it streams from DRAM;
// prefetch_floor_bytes), prefetch the window of the
// point kAheadDisjoint on while they reduce their own: the point's loads, a
// few KB spread over its taps' rows, are too short a stream for the
// hardware prefetchers.  Measured (one point on, against none):
// 1-D k4 s4 NXC (32 MB) 0.59-0.82 of the time at 1 thread,
// 0.74-0.95 at 2, DenseNet k2 s2 NXC at batch 8 (26 MB) 0.68-0.86, VGG
// k2 s2 at batch 8 (51 MB) unchanged; on cache-resident shapes (VGG and
// DenseNet at batch 1) the prefetches cost 1.12-1.15x, hence the floor.
// How many points on disjoint and overlapping windows prefetch
// (channel_block_rows).  Two points on rather than one, 1 and 2 threads:
// VGG k2 s2 at batch 8 0.89-0.93, the 1-D k4 s4 0.77-1.00, DenseNet k2 s2
// at batch 8 0.98-1.05; four points on was mixed (DenseNet 1.18).
constexpr int64_t kAheadDisjoint = 2, kAheadPoints = 4;

// Rows of at most this many points go by row_group_points (where it
// applies).  Measured (AVX-512, 1 thread, NXC f32 unless named, against the
// rows one by one): 3-D k3 s(3,1,3) p(0,1,1) over 8 x 56 x 7 x 32, rows of
// 3 points, 0.58 of the time (bf16 0.67, 2 threads 0.66); k3 s3 p(0,1)
// over 2 x 224 x 5 x 48, rows of 2, 0.47 (f16 0.55); rows of 7-32 points
// 0.73-1.0 (k3 s2 p1 over 16 x 14 x 14 0.73, k4 s4 over 24 x 56 x 56
// 0.90); rows of 56-112 over 16-48 channels 0.96-1.10.
constexpr int64_t kRowGroupMaxPoints = 32;

// Src bytes from which kernels read their windows in address order
// (ordered_row, SepPass::rows_in_order).  AMD EPYC, against the register
// blocks: 12-13 MB of f32 (the k4 s4 over 256 channels at batch 3, VGG's k2
// s2 at batch 2, 3-D k2 s2 over 256 channels) 0.57-0.87 of the time at 1
// thread and 0.44-0.59 at 2; 8.4 MB 0.89; 3-6 MB 0.92-1.07, and VGG at batch
// 1 (3.2 MB) 1.7x from 2 MB on.  No software prefetches with ordered_row: in a
// C++ model of the loop, prefetching one to eight points on took 1.1-1.6x
// the time of the order alone; on an Intel Xeon, one to four points on took
// the k4 s4 average at batch 8 and VGG's k2 s2 maxima at batch 8 1.0-1.2x
// (the prefetched blocks instead of the order: 1.0-1.5x).  rows_in_order's
// caller does prefetch (SepPass::pair_rows_in_order).
constexpr int64_t kOrderedMinBytes = 8 << 20;
// Rows rows_in_order takes (its line lives on the stack); pair_rows uses it
// from ExecCtx::pair_ordered_floor bytes of src (pair_ordered_floor_bytes).
constexpr int64_t kOrderedRowValues = 512;

// Bytes of src (extent &AxisPlan::in) or dst (&AxisPlan::out): the whole
// tensor's, a row segment's too (its choices are the whole row's).
template <typename T>
static inline int64_t tensor_bytes(const ExecCtx *c, int64_t AxisPlan::*extent) {
    const AxisPlan *A = c->whole;
    return c->N * c->C * (A[0].*extent) * (A[1].*extent) * (A[2].*extent) * (int64_t)sizeof(T);
}

template <typename T>
static inline int64_t src_bytes(const ExecCtx *c) { return tensor_bytes<T>(c, &AxisPlan::in); }

// Whether src reaches the prefetching floor.
template <typename T>
static inline bool src_past_prefetch_floor(const ExecCtx *c) {
    return src_bytes<T>(c) >= c->prefetch_floor;
}

// Prefetches the window at p: its (d, h) rows' taps, `span` bytes each.
template <typename T>
static inline void prefetch_window(const T *p, const int64_t *roff, int64_t nrows, int64_t nkw, int64_t kstep,
                                   int64_t span) {
    for (int64_t rr = 0; rr < nrows; ++rr)
        for (int64_t kw = 0; kw < nkw; ++kw) prefetch_span(p + roff[rr] + kw * kstep, span);
}

// The quantization parameters for finishing an output point of divisor div.
template <int K, typename D>
static inline QParams point_params(const ExecCtx *c, D div) {
    QParams q(c);
    if constexpr (K == kQAvg) q.scale_div = q.scale / div;
    return q;
}

// The inverse of an average's divisor when it is a power of two (2 x 2, k4
// and 2 x 2 x 2 windows among others), else 0.  A multiply by it gives the
// division's bits (the same real quotient, rounded once).  An AVX-512
// division issues once per 10 cycles on an Intel Xeon: 16 of them per point
// of 256 bf16 channels; with the product, the 1-D k4 s4 NXC average over
// 256 bf16 or f16 channels at batch 8 took 0.86-0.88 of the time (1 and 2
// threads; f32 0.97-0.98, its points twice the bytes).
template <typename A>
struct ExactInverse {
    A value;
};
template <typename A>
static inline A exact_inverse(A div) {
    static_assert(__is_same(A, float) || __is_same(A, double), "floating-point divisors");
    typedef std::conditional_t<sizeof(A) == 4, uint32_t, uint64_t> U;
    constexpr U kFraction = ((U)1 << (sizeof(A) == 4 ? 23 : 52)) - 1;
    U u;
    __builtin_memcpy(&u, &div, sizeof u);
    return div >= (A)1 && div <= (A)0x1p60 && (u & kFraction) == 0 ? (A)1 / div : (A)0;
}
// An average's lanes over its divisor, or times the divisor's ExactInverse.
template <typename V, typename A>
static inline V quotient(V v, A div) { return v / div; }
template <typename V, typename A>
static inline V quotient(V v, ExactInverse<A> inverse) { return v * inverse.value; }

// Finishes one vector of accumulators of an output point into o (q from
// point_params; div: the divisor or its ExactInverse).  NanFree: maxima of a
// probed pass (store_as).
template <typename T, int K, bool NanFree = false, typename D = typename AvgOut<T, K>::Div>
static inline void finish_vec(T *o, typename Vec<T>::V v, int32_t nvalid, D div, QParams q) {
    if constexpr (K == kQAvg) store_qavg_vec<T>(o, v, nvalid, q);
    else if constexpr (K == kMax) store_as<T, true, NanFree>(o, v);
    else store_as<T>(o, quotient(v, div));
}

// finish_vec of NV consecutive vectors (averages store them in pairs).
template <typename T, int K, int NV, bool NanFree = false, typename D = typename AvgOut<T, K>::Div>
static inline void finish_vecs(T *o, const typename Vec<T>::V *v, int32_t nvalid, D div, QParams q) {
    constexpr int64_t VL = Vec<T>::lanes;
    int j = 0;
    if constexpr (K == kAvg)
        for (; j + 2 <= NV; j += 2) store_pair_as<T>(o + j * VL, quotient(v[j], div), quotient(v[j + 1], div));
    for (; j < NV; ++j) finish_vec<T, K, NanFree>(o + j * VL, v[j], nvalid, div, q);
}

// Writes `m` finished accumulators of one output point (whole vectors, then
// the tail element by element: both round the same way).
template <typename T, int K>
static inline void block_store(const typename Traits<T>::Acc *acc, int64_t m, T *__restrict o, int64_t nvalid,
                               typename AvgOut<T, K>::Div div, const ExecCtx *c) {
    constexpr int64_t VL = Vec<T>::lanes;
    int64_t i = 0;
    if (K == kMax && nvalid == 0) {   // no input element: the lowest value
        for (; i < m; ++i) o[i] = Traits<T>::lowest();
        return;
    }
    const QParams q = point_params<K>(c, div);
    for (; i + VL <= m; i += VL) finish_vec<T, K>(o + i, *(const typename Vec<T>::VU *)(acc + i), (int32_t)nvalid, div, q);
    for (; i < m; ++i) {
        if constexpr (K == kMax) o[i] = Traits<T>::store(acc[i]);
        else o[i] = AvgOut<T, K>::make(acc[i], div, (int32_t)nvalid, q);
    }
}

// Quantized averages of at most this many taps sum exactly in 16-bit lanes
// (255 * 128 < 2^15), twice as many per vector as 32-bit ones.
constexpr int64_t kNarrowTaps = 128;

template <typename T>
struct Narrow {
    static constexpr int64_t lanes = kVecBytes / 2;
    typedef IsaI16 V;
    typedef int16_t Half __attribute__((vector_size(kVecBytes / 2)));
    static inline V load(const T *p) {
        if constexpr (__is_same(T, uint8_t)) return isa_load_u8_i16(p);
        else return isa_load_s8_i16(p);
    }
};

// Finishes one vector of 16-bit sums: each half as the 32-bit path would.
template <typename T>
static inline void finish_narrow(T *o, typename Narrow<T>::V acc, int32_t nvalid, float div, QParams q) {
    typename Narrow<T>::Half h[2];
    __builtin_memcpy(h, &acc, sizeof h);
    for (int i = 0; i < 2; ++i)
        finish_vec<T, kQAvg>(o + i * Vec<T>::lanes, __builtin_convertvector(h[i], typename Vec<T>::V), nvalid, div, q);
}

// A block of kBlockVecs * Narrow<T>::lanes channels of an 8-bit quantized
// average, summed in 16-bit lanes and finished as the 32-bit path would be
// (the sums are the same integers).
template <typename T>
static inline void block_point_narrow(const T *p0, const int64_t *roff, int64_t nrows, int64_t nkw, int64_t kstep,
                                      T *o, int64_t nvalid, float div, const ExecCtx *c) {
    typedef typename Narrow<T>::V NV;
    constexpr int64_t NL = Narrow<T>::lanes;
    constexpr int kVecs = kBlockVecs;
    NV acc[kVecs];
    for (int j = 0; j < kVecs; ++j) acc[j] = (NV){};
    for (int64_t r = 0; r < nrows; ++r) {
        const T *p = p0 + roff[r];
        for (int64_t kw = 0; kw < nkw; ++kw, p += kstep)
            for (int j = 0; j < kVecs; ++j)
                acc[j] += Narrow<T>::load(p + j * NL);
    }
    const QParams q = point_params<kQAvg>(c, div);
    for (int j = 0; j < kVecs; ++j) finish_narrow<T>(o + j * NL, acc[j], (int32_t)nvalid, div, q);
}

// The channel offsets of NV consecutive vectors of VL lanes (point_vectors'
// at[]).
template <int NV, int64_t VL>
struct ConsecutiveAt {
    int64_t at[NV];
    constexpr ConsecutiveAt() : at() {
        for (int j = 0; j < NV; ++j) at[j] = j * VL;
    }
};

// One load of consecutive vectors at p: a pair split by parity (Split;
// Probed: into probe as well, see PairProbe) or one vector widened.
template <typename T, bool Split, bool Probed>
static inline __attribute__((always_inline)) void load_group(const T *p, typename Vec<T>::V (&v)[2],
                                                             PairProbe &probe) {
    if constexpr (Split) load_pair_split<T>(p, v[0], v[1], Probed ? &probe : nullptr);
    else v[0] = load_vec<T>(p);
}

// point_vectors' stores of its NV accumulators (div: the divisor or its
// ExactInverse).
template <typename T, int K, int NV, bool Consecutive, bool Nan, bool Split, typename D>
static inline __attribute__((always_inline)) void store_point_vectors(T *o, const int64_t (&at)[NV],
                                                                      const typename Vec<T>::V (&acc)[NV],
                                                                      int64_t nvalid, D div, const ExecCtx *c) {
    if constexpr (Split) {
        for (int j = 0; j < NV; j += 2) {
            if constexpr (K == kMax) store_pair_split_as<T, true, !Nan>(o + at[j], acc[j], acc[j + 1]);
            else store_pair_split_as<T>(o + at[j], quotient(acc[j], div), quotient(acc[j + 1], div));
        }
        return;
    }
    const QParams q = point_params<K>(c, div);
    if constexpr (Consecutive) finish_vecs<T, K, NV, !Nan>(o, acc, (int32_t)nvalid, div, q);   // in registers
    else
        for (int j = 0; j < NV; ++j) finish_vec<T, K, !Nan>(o + at[j], acc[j], (int32_t)nvalid, div, q);
}

// One tap of point_vectors: its NV vectors loaded at p + at[j] (G a load)
// and combined into acc (First: acc and the probe sums take them), summed
// into sum (probed float passes) or probed into pairs (split pairs).
template <typename T, int K, int NV, int NS, int NP, bool Split, bool Nan, bool First>
static inline __attribute__((always_inline)) void tap_vectors(const T *p, const int64_t (&at)[NV],
                                                              typename Vec<T>::V (&acc)[NV],
                                                              typename Vec<T>::V (&sum)[NS], PairProbe *pairs) {
    constexpr int G = 1 + Split;   // vectors a load gives
    for (int j = 0; j < NV; j += G) {
        typename Vec<T>::V v[2];
        load_group<T, Split, !Nan>(p + at[j], v, pairs[j / 2 % NP]);
        for (int h = 0; h < G; ++h) {
            acc[j + h] = First ? v[h] : vcombine<K, Nan>(acc[j + h], v[h]);
            if constexpr (!Nan && !Split) {
                if (First && j + h < NS) sum[j + h] = v[h];
                else sum[(j + h) % NS] += v[h];
            }
        }
    }
}

// NV vectors of one output point's channels in registers, vector j at
// channel at[j] of p0 and o.  Nan = false (full float blocks of maxima): no
// NaN tests, every loaded vector added into probe[] instead (a NaN, or
// infinities of both signs, make it NaN; the caller then pools the points
// again with the tests), summed in registers first: added to probe[] tap by
// tap, out of line (bf16), the sums went through memory and took the
// ResNet-50 k3 s2 p1 at batch 32 1.3x its time.  Split pairs probe by an
// ordered compare a load instead (PairProbe), folded into probe[] at the end,
// or into the row's row_pairs (NS / 2 of them: the caller folds them).
// Consecutive: at[j] = j * lanes (averages store those in pairs).
// Ordered: each tap's loads issue before the next tap's (see ordered_row).
template <typename T, int K, int NV, bool Consecutive, bool Nan = true, bool Ordered = false>
static inline __attribute__((always_inline)) void point_vectors(const T *p0, const int64_t *roff, int64_t nrows,
                                                                int64_t nkw, int64_t kstep, const int64_t (&at)[NV],
                                                                T *o, int64_t nvalid,
                                                                typename AvgOut<T, K>::Div div, const ExecCtx *c,
                                                                typename Vec<T>::V *probe,
                                                                PairProbe *row_pairs = nullptr) {
    typedef typename Vec<T>::V V;
    constexpr int64_t VL = Vec<T>::lanes;
    // bf16 blocks go in pairs split by parity (load_pair_split) on 64-byte
    // vectors: the 1-D k4 s4 average 0.93-0.94 of the time at 1 thread;
    // AVX2's widening load is one shuffle already, and split pairs took it
    // 1.0-1.1x.
    constexpr bool kSplit = Consecutive && kSplitPairs<T, NV>;
    constexpr int NS = NV < kBlockVecs ? NV : kBlockVecs;   // probe sums (wider points fold theirs)
    constexpr int NP = kSplit && !Nan ? NS / 2 : 1;         // pair probes, as many chains as the sums'
    V acc[NV], sum[NS];
    PairProbe own[NP];
    PairProbe *const pairs = row_pairs ? row_pairs : own;
    // Maxima start from their first tap's values, not from a maximum with
    // -inf (and the probe sums from them, not from 0 + v): a vector
    // operation fewer per vector and point (VGG's k2 s2 maxima over 128
    // channels NXC, 1 thread: bf16 0.94 of the time, f16 0.91, f32 alike).
    // Sums start from 0, as every path's do (0 + -0 is +0).  (The taps are
    // one always-inline step, not a lambda called twice: the lambda's
    // captured accumulators went through memory, at the Ordered barrier
    // above all; the 1-D k4 s4 average over 256 f32 channels at batch 8
    // took 1.4-1.9x its time, VGG's f32 k2 s2 1.1-1.2x.)
    int64_t kw0 = 0;   // row 0's taps already in acc
    if (K == kMax && nrows > 0 && nkw > 0) {
        tap_vectors<T, K, NV, NS, NP, kSplit, Nan, true>(p0 + roff[0], at, acc, sum, pairs);
        if constexpr (Ordered) asm volatile("" ::: "memory");
        kw0 = 1;
    } else {
        for (int j = 0; j < NV; ++j) acc[j] = (V){} + identity<T, K>();
        for (int j = 0; j < NS; ++j) sum[j] = (V){};
    }
    for (int64_t r = 0; r < nrows; ++r, kw0 = 0) {
        const T *p = p0 + roff[r] + kw0 * kstep;
        for (int64_t kw = kw0; kw < nkw; ++kw, p += kstep) {
            tap_vectors<T, K, NV, NS, NP, kSplit, Nan, false>(p, at, acc, sum, pairs);
            // A compiler barrier (registers stay put): the scheduler would
            // interleave the taps' loads otherwise.
            if constexpr (Ordered) asm volatile("" ::: "memory");
        }
    }
    if constexpr (!Nan && kSplit) {
        if (!row_pairs)
            for (int j = 0; j < NP; ++j) probe[j] += own[j].template as_sum<V>();
    } else if constexpr (!Nan)
        for (int j = 0; j < NS; ++j) probe[j] += sum[j];
    if (K == kMax && nvalid == 0) {
        for (int j = 0; j < NV; ++j)
            for (int64_t i = 0; i < VL; ++i) o[at[j] + i] = Traits<T>::lowest();
        return;
    }
    typedef typename AvgOut<T, K>::Div Div;
    if constexpr (K == kAvg && (__is_same(Div, float) || __is_same(Div, double))) {
        if (const Div inverse = exact_inverse(div)) {
            store_point_vectors<T, K, NV, Consecutive, Nan, kSplit>(o, at, acc, nvalid, ExactInverse<Div>{inverse}, c);
            return;
        }
    }
    store_point_vectors<T, K, NV, Consecutive, Nan, kSplit>(o, at, acc, nvalid, div, c);
}

// The channel offsets of NV vectors from c0 on, the last one ending at C
// (C a vector or more): it overlaps the one before, or repeats it.
template <typename T, int NV>
static inline void tail_offsets(int64_t c0, int64_t C, int64_t (&at)[NV]) {
    constexpr int64_t VL = Vec<T>::lanes;
    for (int j = 0; j < NV; ++j) at[j] = c0 + j * VL < C - VL ? c0 + j * VL : C - VL;
}

// The channels [c0, C) of an output point when fewer than a block remain
// and C is a vector or more (p0, o at channel 0): NV vectors, the last one
// ending at C.  It overlaps the one before and computes those lanes again,
// to the same bits (channels are independent), instead of a lane at a time
// (C = 16 f32 NXC k3 s2 took 4x oneDNN's time that way).
template <typename T, int K, int NV>
static void tail_point(const T *p0, const int64_t *roff, int64_t nrows, int64_t nkw, int64_t kstep, int64_t c0,
                       int64_t C, T *o, int64_t nvalid, typename AvgOut<T, K>::Div div, const ExecCtx *c) {
    int64_t at[NV];
    tail_offsets<T>(c0, C, at);
    point_vectors<T, K, NV, false>(p0, roff, nrows, nkw, kstep, at, o, nvalid, div, c, nullptr);
}

// G output points of points_row's at once, NV vectors each, their taps
// interleaved: each point's combines form one chain (a max or an add waits
// on the one before), and G * NV chains overlap where one point's NV would
// stall.  Every point's taps go in the same order as point_vectors', to
// the same bits; G = 1 pools one point.  Nan = false (float maxima of a
// probed pass): no NaN tests, and the loads of the first `probed` taps
// summed into probe[0, NV) (points_row's probe_taps).  ByInverse: averages
// whose divisors are all the one `inverse` is the ExactInverse of.
// SplitPair: bf16 averages whose vectors 0 and 1 are consecutive, loaded
// and stored as a pair split by parity (kSplitPairs' reasons; where
// kFirstPairSplits allows and C is two vectors or more).
template <typename T, int K, int NV>
constexpr bool kFirstPairSplits = K == kAvg && kSplitPairs<T, 2> && NV >= 2;
template <typename T, int K, int NV, int G, bool Nan = true, bool ByInverse = false, bool SplitPair = false>
static inline __attribute__((always_inline)) void points_group(const T *p, const int64_t *roff, int64_t nrows,
                                                               int64_t kw, int64_t kstep, int64_t pstep,
                                                               const int64_t (&at)[NV], T *o, int64_t ostep,
                                                               int64_t div_dh, const int64_t *wdiv, const ExecCtx *c,
                                                               typename Vec<T>::V *probe = nullptr,
                                                               int64_t probed = 0,
                                                               typename AvgOut<T, K>::Div inverse = 0) {
    typedef typename Vec<T>::V V;
    V acc[G][NV];
    // The probe's sums, in registers until the end, a chain per accumulator:
    // with one per vector, the G points' adds were the loop's critical path
    // (1-D k2 s2 maxima over 1 x 1000 x 48, 1 thread: bf16 0.90 of the time
    // with a chain each, f32 0.96).
    [[maybe_unused]] V sum[G][NV] = {};
    for (int g = 0; g < G; ++g)
        for (int j = 0; j < NV; ++j) acc[g][j] = (V){} + identity<T, K>();
    static_assert(!SplitPair || kFirstPairSplits<T, K, NV>, "split pairs of bf16 averages");
    constexpr int kFirstSingle = SplitPair ? 2 : 0;   // the first vector loaded on its own
    auto tap = [&](const T *q, auto probing) __attribute__((always_inline)) {
        for (int g = 0; g < G; ++g) {
            if constexpr (SplitPair) {
                V even, odd;
                load_pair_split<T>(q + g * pstep + at[0], even, odd);
                acc[g][0] += even;
                acc[g][1] += odd;
            }
            for (int j = kFirstSingle; j < NV; ++j) {
                const V v = load_vec<T>(q + g * pstep + at[j]);
                acc[g][j] = vcombine<K, Nan>(acc[g][j], v);
                if constexpr (probing.value) sum[g][j] += v;
            }
        }
    };
    for (int64_t r = 0; r < nrows; ++r) {
        const T *q = p + roff[r];
        int64_t t = 0;
        if constexpr (!Nan)
            for (; t < probed; ++t, q += kstep) tap(q, std::true_type{});
        for (; t < kw; ++t, q += kstep) tap(q, std::false_type{});
    }
    if constexpr (!Nan)
        for (int g = 0; g < G; ++g)
            for (int j = 0; j < NV; ++j) probe[j] += sum[g][j];
    for (int g = 0; g < G; ++g) {   // in point order: a point's extra lanes are the next one's to overwrite
        typedef typename AvgOut<T, K>::Div Div;
        const Div div = (Div)(div_dh * wdiv[g]);
        const QParams q = point_params<K>(c, div);
        auto finish = [&](auto d) __attribute__((always_inline)) {   // d: div or its ExactInverse
            if constexpr (SplitPair)
                store_pair_split_as<T>(o + g * ostep + at[0], quotient(acc[g][0], d), quotient(acc[g][1], d));
            for (int j = kFirstSingle; j < NV; ++j)
                finish_vec<T, K, !Nan>(o + g * ostep + at[j], acc[g][j], (int32_t)(nrows * kw), d, q);
        };
        if constexpr (ByInverse) finish(ExactInverse<Div>{inverse});
        else finish(div);
    }
}

// The taps of each of points_row's windows whose loads, over all its
// points, read every value any of them reads (a probed pass sums only
// those): the first pstep / kstep when a point's step is whole taps, the
// last point's other taps probed apart (probe_last_taps); all of them
// otherwise.
static inline int64_t probe_taps(int64_t kw, int64_t kstep, int64_t pstep) {
    if (kstep <= 0 || pstep % kstep) return kw;
    return pstep / kstep < kw ? pstep / kstep : kw;
}
// The probe's sums of the last point's taps [from, kw): what no earlier
// point's probed taps read.
template <typename T, int NV>
static inline void probe_last_taps(const T *p, const int64_t *roff, int64_t nrows, int64_t from, int64_t kw,
                                   int64_t kstep, const int64_t (&at)[NV], typename Vec<T>::V *probe) {
    for (int64_t r = 0; r < nrows; ++r)
        for (int64_t t = from; t < kw; ++t)
            for (int j = 0; j < NV; ++j) probe[j] += load_vec<T>(p + roff[r] + t * kstep + at[j]);
}

// n output points of one row whose windows are whole, fewer channels than a
// block, in one loop: p at the first point's window, pstep and ostep from
// one point to the next, wdiv their W divisors.  Per point, point()'s
// bookkeeping cost more than these few vectors' taps (16 channels: 2-3x
// oneDNN's time; 3 channels a lane at a time 9.6x).  NV vectors per point
// (tail_point's, C a vector or more); NV = 0, under a vector: one vector
// from channel 0, its lanes past C reading the next positions (the caller
// keeps every read inside src), stored whole where the points after it
// write their own channels over the extra lanes (dense dst rows), the last
// points through a buffer.  Nan = false: a probed pass (float maxima),
// every point's first probe_taps taps summed into probe, then the last
// point's others.
template <typename T, int K, int NV, int KW, int NR, bool Nan>
static void points_row(const T *p, const int64_t *roff, int64_t nrows, int64_t kw, int64_t kstep, int64_t pstep,
                       T *o, int64_t ostep, int64_t n, int64_t C, int64_t div_dh, const int64_t *wdiv,
                       const ExecCtx *c, typename Vec<T>::V *probe) {
    constexpr int64_t VL = Vec<T>::lanes;
    constexpr int NVR = NV ? NV : 1;
    if constexpr (KW != 0) kw = KW;
    if constexpr (NR != 0) nrows = NR;
    int64_t at[NVR];
    for (int j = 0; j < NVR; ++j) at[j] = NV == 0 ? 0 : j * VL < C - VL ? j * VL : C - VL;
    const int64_t whole = NV ? n : ostep == C && n * C >= VL ? (n * C - VL) / C + 1 : 0;
    const int64_t probed = Nan ? 0 : probe_taps(kw, kstep, pstep);
    T buf[VL] = {};   // points_group fills it whole; zeroed so GCC can see that it is set
    // Points in groups while their stores land in dst: a point at a time,
    // 8 channels of f32 (k4 s2, one chain per point) took 3.2x oneDNN's time.
    constexpr int G = NVR == 1 ? 4 : NVR == 2 ? 2 : 1;
    auto run_as = [&](auto by_inverse, auto split_pair, typename AvgOut<T, K>::Div inverse)
                          __attribute__((always_inline)) {
        constexpr bool kByInverse = by_inverse.value, kSplitPair = split_pair.value;
        int64_t i = 0;
        for (; i + G <= whole; i += G)
            points_group<T, K, NVR, G, Nan, kByInverse, kSplitPair>(p + i * pstep, roff, nrows, kw, kstep, pstep,
                                                                    at, o + i * ostep, ostep, div_dh, wdiv + i, c,
                                                                    probe, probed, inverse);
        for (; i < n; ++i) {   // the rest a point at a time, past `whole` through buf
            T *to = i < whole ? o + i * ostep : buf;
            points_group<T, K, NVR, 1, Nan, kByInverse, kSplitPair>(p + i * pstep, roff, nrows, kw, kstep, pstep,
                                                                    at, to, ostep, div_dh, wdiv + i, c, probe,
                                                                    probed, inverse);
            if (i >= whole)
                for (int64_t ch = 0; ch < C; ++ch) o[i * ostep + ch] = buf[ch];
        }
    };
    // bf16 averages over 32 channels or more split their first two vectors
    // by parity (those two are consecutive then): 1-D k2 s2 over 2 x 48 x
    // 4096 took 0.82 of the time, k4 s2 over 4 x 32 x 1000 0.67 (AMD Zen 4,
    // with AVX512_BF16's conversions).
    auto run = [&](auto by_inverse, typename AvgOut<T, K>::Div inverse) __attribute__((always_inline)) {
        if constexpr (kFirstPairSplits<T, K, NV>)
            if (C >= 2 * VL) return run_as(by_inverse, std::true_type{}, inverse);
        run_as(by_inverse, std::false_type{}, inverse);
    };
    // Averages of 16-bit floats whose points share one power-of-two divisor
    // multiply by its inverse, found once a row (once a point, its test cost
    // more than the division saved: 1.25x the time): against a division a
    // point, whose latency each point's converting stores wait for, bf16 1-D
    // k2 s2 over 2 x 48 x 4096 took 0.82 of the time, k4 s2 over 4 x 16 x
    // 1000 0.90, f16 0.90 and 0.94-1.05 (AMD Zen 4, 1 thread).  f32 keeps the
    // division: 1.06x over those 48 channels (from L3; its loads bound it),
    // 0.95-1.02 from L2.
    typedef typename AvgOut<T, K>::Div Div;
    Div inverse = 0;
    if constexpr (K == kAvg && sizeof(T) == 2 && (__is_same(Div, float) || __is_same(Div, double))) {
        int64_t same = n > 0 ? 1 : 0;
        while (same < n && wdiv[same] == wdiv[0]) ++same;
        if (same == n && n > 0) inverse = exact_inverse((Div)(div_dh * wdiv[0]));
        if (inverse) run(std::true_type{}, inverse);
    }
    if (!inverse) run(std::false_type{}, 0);
    if constexpr (!Nan)
        if (n > 0) probe_last_taps<T, NVR>(p + (n - 1) * pstep, roff, nrows, probed, kw, kstep, at, probe);
}
// G output rows whose H windows are alike (the same rows of each window,
// the same divisor), of a vector of channels to under a block, pooled
// point by point across the rows: point ow of each row at once, G * NV
// chains.  Rows of few points have few whole windows to group along W,
// and their border points (most of a row of 2-3 outputs) would go one at a
// time, NV chains each.  pstep and ostep: one row on in src and dst.
template <typename T, int K, int NV, int G>
static void row_group_points(const T *p_row, const int64_t *roff, int64_t nrows, const AxisPlan &AW, int64_t sw,
                             int64_t pstep, T *o_row, int64_t dw, int64_t ostep, int64_t C, int64_t div_dh,
                             const ExecCtx *c) {
    constexpr int64_t VL = Vec<T>::lanes;
    int64_t at[NV];
    for (int j = 0; j < NV; ++j) at[j] = j * VL < C - VL ? j * VL : C - VL;
    auto pool = [&](auto split_pair) __attribute__((always_inline)) {
        for (int64_t ow = 0; ow < AW.out; ++ow) {
            const int64_t kw0 = AW.kbeg[ow], nkw = AW.kend[ow] - kw0;
            int64_t wdiv[G];
            for (int g = 0; g < G; ++g) wdiv[g] = AW.div[ow];
            points_group<T, K, NV, G, true, false, split_pair.value>(
                    p_row + (ow * AW.s - AW.pb + kw0 * AW.d) * sw, roff, nrows, nkw, AW.d * sw, pstep, at,
                    o_row + ow * dw, ostep, div_dh, wdiv, c);
        }
    };
    // As points_row's: k3 s3 p(0, 1) over 2 x 224 x 5 x 48 took 0.90 of
    // the time, 3-D k3 s(3, 1, 3) p(0, 1, 1) over 2 x 48 x 8 x 56 x 7 0.87.
    if constexpr (kFirstPairSplits<T, K, NV>)
        if (C >= 2 * VL) return pool(std::true_type{});
    pool(std::false_type{});
}
// Rows per row_group_points call: G * NV chains, 4-8.
template <typename T>
static inline int64_t row_group_rows(int64_t C) { return C <= 2 * Vec<T>::lanes ? 4 : 2; }
template <typename T, int K>
static void row_group_points_any(const T *p_row, const int64_t *roff, int64_t nrows, const AxisPlan &AW, int64_t sw,
                                 int64_t pstep, T *o_row, int64_t dw, int64_t ostep, int64_t C, int64_t div_dh,
                                 const ExecCtx *c) {
    constexpr int64_t VL = Vec<T>::lanes;
    static_assert(kBlockVecs == 4, "a vector to under a block: 1 to 4 vectors, the last one overlapping");
    switch ((C + VL - 1) / VL) {
    case 1: row_group_points<T, K, 1, 4>(p_row, roff, nrows, AW, sw, pstep, o_row, dw, ostep, C, div_dh, c); break;
    case 2: row_group_points<T, K, 2, 4>(p_row, roff, nrows, AW, sw, pstep, o_row, dw, ostep, C, div_dh, c); break;
    case 3: row_group_points<T, K, 3, 2>(p_row, roff, nrows, AW, sw, pstep, o_row, dw, ostep, C, div_dh, c); break;
    default: row_group_points<T, K, 4, 2>(p_row, roff, nrows, AW, sw, pstep, o_row, dw, ostep, C, div_dh, c); break;
    }
}

// Calls run(KW, NR) with KW (and as many rows, square windows' whole rows)
// fixed at compile time for 2 and 3 (integral constants; 0: at run time):
// 0.80-0.90 of the time with both at run time.  The 2x2x2 window too (3-D
// k2 over 64-256 channels, AMD EPYC: averages 0.87-0.94, maxima 0.98).  One row of 4 columns too
// (1-D k4): k4 s2 over 128-256 channels 0.75-0.80 of the time, 8-16
// channels 0.85 (k4 s4 is memory-bound: 1.0).  And one row of 3 (1-D k3):
// k3 s3 maxima over 2 x 4096 x 80 f32 0.89-0.90, over 32 channels
// 0.91-0.94, k3 s3 averages over 128 channels 0.96-0.97.  Any other one row
// (1-D k5, k7, ...) fixes the row and counts its taps at run time: k7 s2
// averages over 1 x 96 x 4096 0.86-0.93 of the time, maxima 0.86.
template <typename Run>
static inline void with_window_constants(int64_t kw, int64_t nrows, Run run) {
    using I0 = std::integral_constant<int, 0>;
    using I1 = std::integral_constant<int, 1>;
    using I2 = std::integral_constant<int, 2>;
    using I3 = std::integral_constant<int, 3>;
    using I4 = std::integral_constant<int, 4>;
    if (kw == 4 && nrows == 1) run(I4{}, I1{});
    else if (kw == 3 && nrows == 1) run(I3{}, I1{});
    else if (kw == 2 && nrows == 2) run(I2{}, I2{});
    else if (kw == 2 && nrows == 4) run(I2{}, I4{});
    else if (kw == 3 && nrows == 3) run(I3{}, I3{});
    else if (kw == 2) run(I2{}, I0{});
    else if (kw == 3) run(I3{}, I0{});
    else if (nrows == 1) run(I0{}, I1{});
    else run(I0{}, I0{});
}
#include "kernels_bf16_maxima.hpp"   // (after with_window_constants)

template <typename T, int K, int NV, bool Nan>
static void points_row_kw(const T *p, const int64_t *roff, int64_t nrows, int64_t kw, int64_t kstep, int64_t pstep,
                          T *o, int64_t ostep, int64_t n, int64_t C, int64_t div_dh, const int64_t *wdiv,
                          const ExecCtx *c, typename Vec<T>::V *probe) {
    with_window_constants(kw, nrows, [&](auto kw_c, auto nr_c) {
        points_row<T, K, NV, kw_c.value, nr_c.value, Nan>(p, roff, nrows, kw, kstep, pstep, o, ostep, n, C, div_dh,
                                                          wdiv, c, probe);
    });
}
// points_row over C channels (fewer than a block); Nan = false: probed,
// probe[0, kBlockVecs) summing what it loads (points_group).
template <typename T, int K, bool Nan = true>
static void points_row_any(const T *p, const int64_t *roff, int64_t nrows, int64_t kw, int64_t kstep, int64_t pstep,
                           T *o, int64_t ostep, int64_t n, int64_t C, int64_t div_dh, const int64_t *wdiv,
                           const ExecCtx *c, typename Vec<T>::V *probe = nullptr) {
    constexpr int64_t VL = Vec<T>::lanes;
    static_assert(kBlockVecs == 4, "under a block: 1 to 4 vectors");
    switch (C < VL ? 0 : (C + VL - 1) / VL) {
    case 0: points_row_kw<T, K, 0, Nan>(p, roff, nrows, kw, kstep, pstep, o, ostep, n, C, div_dh, wdiv, c, probe); break;
    case 1: points_row_kw<T, K, 1, Nan>(p, roff, nrows, kw, kstep, pstep, o, ostep, n, C, div_dh, wdiv, c, probe); break;
    case 2: points_row_kw<T, K, 2, Nan>(p, roff, nrows, kw, kstep, pstep, o, ostep, n, C, div_dh, wdiv, c, probe); break;
    case 3: points_row_kw<T, K, 3, Nan>(p, roff, nrows, kw, kstep, pstep, o, ostep, n, C, div_dh, wdiv, c, probe); break;
    default: points_row_kw<T, K, 4, Nan>(p, roff, nrows, kw, kstep, pstep, o, ostep, n, C, div_dh, wdiv, c, probe); break;
    }
}

// NXC maxima over rows of fewer channels than a vector, stride-2 windows
// of KW = 2 or 3 columns (pads_begin pb < KW, no dilation): an output row
// from its window's rows pooled into one flat row B of (w, c) values (the
// identity in the padding: pb positions before it, the right padding and
// slack after), then a vector of outputs per P = VL / C points: lane j is
// point j / C, channel j % C, whose window starts at B position 2 (j / C),
// so the lane takes value 2 j - j % C of the two vectors at each of the
// window's taps (one permute).  Rows first, then columns, each keeping the
// first of equal values: the NCX planes' order, and their bits (+0 or -0).
// Each vector stores VL lanes (those past its P points are the next
// vector's, the same values again), the row's last one through a buffer.
// Out of line: inlined into channel_block_rows, it cost VGG's k2 s2 over 128
// channels (another path) 1.42x its time.
template <typename T, int K, int KW>
__attribute__((noinline)) static void decimated_row(const T *src_row, const int64_t *roff, int64_t nrows, int64_t W,
                                                    int64_t C, int64_t pb, int64_t OW, typename Traits<T>::Acc *B,
                                                    T *o) {
    typedef typename Traits<T>::Acc Acc;
    typedef typename Vec<T>::V V;
    typedef typename Vec<T>::VU VU;
    typedef decltype(V{} < V{}) M;
    constexpr int64_t VL = Vec<T>::lanes;
    const Acc id = identity<T, K>();
    const int64_t n = W * C, end = (2 * OW + KW - 1) * C + 2 * VL;   // B values read
    for (int64_t x = 0; x < pb * C; ++x) B[x] = id;
    for (int64_t x = (pb + W) * C; x < end; ++x) B[x] = id;
    Acc *row = B + pb * C;
    auto rows = [&](int64_t x) __attribute__((always_inline)) {
        V v = load_vec<T>(src_row + roff[0] + x);
        for (int64_t r = 1; r < nrows; ++r) v = vcombine<K>(v, load_vec<T>(src_row + roff[r] + x));
        return v;
    };
    int64_t x = 0;
    for (; x + VL <= n; x += VL) *(VU *)(row + x) = rows(x);
    if (x < n && n >= VL) {
        *(VU *)(row + n - VL) = rows(n - VL);   // overlapping the one before: the same values
    } else {
        for (; x < n; ++x) {
            Acc v = Traits<T>::load(src_row[roff[0] + x]);
            for (int64_t r = 1; r < nrows; ++r) v = combine<Acc, K>(v, Traits<T>::load(src_row[roff[r] + x]));
            row[x] = v;
        }
    }
    M take;
    for (int64_t j = 0; j < VL; ++j) take[j] = 2 * j - j % C;
    const int64_t P = VL / C, m = OW * C;   // points per vector; output values
    for (int64_t ow = 0; ow < OW; ow += P) {
        const Acc *b = B + 2 * ow * C;
        V lo = *(const VU *)b, hi = *(const VU *)(b + VL);
        for (int t = 1; t < KW; ++t) {
            lo = vcombine<K>(lo, *(const VU *)(b + t * C));
            hi = vcombine<K>(hi, *(const VU *)(b + t * C + VL));
        }
        const V v = __builtin_shuffle(lo, hi, take);
        if (ow * C + VL <= m) {
            store_as<T, true>(o + ow * C, v);
        } else {
            store_head_as<T, true>(o + ow * C, v, m - ow * C);
        }
    }
}

// One channel block of one output point, no indices: `Full` blocks have
// kBlockVecs vectors and live in registers (probe: see point_vectors); the
// tail, m channels, goes as tail_point's vectors when the point has a vector
// of channels (c0 and C: where the tail starts, how many the point has) and
// element-wise otherwise.
template <typename T, int K, bool Full, bool Nan = true>
static inline void block_point(const T *p0, const int64_t *roff, int64_t nrows, int64_t nkw, int64_t kstep,
                               int64_t m, T *o, int64_t nvalid, typename AvgOut<T, K>::Div div,
                               const ExecCtx *c, typename Vec<T>::V *probe = nullptr, int64_t c0 = 0, int64_t C = 0) {
    typedef typename Traits<T>::Acc Acc;
    constexpr int64_t VL = Vec<T>::lanes;
    constexpr int64_t VB = kBlockVecs * VL;
    if constexpr (Full) {
        static constexpr ConsecutiveAt<kBlockVecs, VL> block{};
        point_vectors<T, K, kBlockVecs, true, Nan>(p0, roff, nrows, nkw, kstep, block.at, o, nvalid, div, c, probe);
    } else if (C >= VL) {
        const T *p_ch0 = p0 - c0;
        T *o_ch0 = o - c0;
        switch ((m + VL - 1) / VL) {
        case 1: tail_point<T, K, 1>(p_ch0, roff, nrows, nkw, kstep, c0, C, o_ch0, nvalid, div, c); break;
        case 2: tail_point<T, K, 2>(p_ch0, roff, nrows, nkw, kstep, c0, C, o_ch0, nvalid, div, c); break;
        case 3: tail_point<T, K, 3>(p_ch0, roff, nrows, nkw, kstep, c0, C, o_ch0, nvalid, div, c); break;
        default: tail_point<T, K, 4>(p_ch0, roff, nrows, nkw, kstep, c0, C, o_ch0, nvalid, div, c); break;
        }
    } else {
        Acc res[VB];
        for (int64_t i = 0; i < m; ++i) res[i] = identity<T, K>();
        for (int64_t r = 0; r < nrows; ++r) {
            const T *p = p0 + roff[r];
            for (int64_t kw = 0; kw < nkw; ++kw, p += kstep)
                for (int64_t i = 0; i < m; ++i) res[i] = combine<Acc, K>(res[i], Traits<T>::load(p[i]));
        }
        block_store<T, K>(res, m, o, nvalid, div, c);
    }
}

// NXC rows whose every src position starts the same number of bytes past a
// cache line (numpy's large arrays start 16 bytes past one): the channels
// before the next line.  The register blocks then start there and load
// whole lines (and store them, when dst sits as far past a line); a head
// vector from channel 0 covers the channels before them (its lanes past the
// lead computed again, to the same bits: channels are independent).  VGG's
// k2 s2 over 128 channels (f32, 1 thread), against blocks from channel 0:
// src 16 bytes past a line and dst 0 or 48, 0.87-0.95 of the time; both 16
// past, as fast as both aligned.  32-byte vectors (bf16, f16) ran the same
// either way.  0: positions placed differently, vectors
// narrower than a line, or too few channels for a block after the lead.
template <typename T>
static inline int64_t channel_lead(const ExecCtx *c) {
    constexpr int64_t line = 64, size = (int64_t)sizeof(T), VL = Vec<T>::lanes;
    if (VL * size != line || c->ss[1] != 1 || c->ds[1] != 1) return 0;
    for (const int a : {0, 2, 3, 4})
        if (c->ss[a] * size % line) return 0;
    const int64_t lead = aligned_head<T>((const T *)c->src, c->C);   // 0 unless src is aligned to T
    return c->C >= lead + kBlockVecs * VL ? lead : 0;
}

// The head vector of a point whose blocks start at channel_lead's lead:
// channels [0, lanes), in the blocks' regime (Nan = false: probed).
template <typename T, int K, bool Nan>
static inline void lead_vector(const T *p0, const int64_t *roff, int64_t nrows, int64_t nkw, int64_t kstep, T *o,
                               int64_t nvalid, typename AvgOut<T, K>::Div div, const ExecCtx *c,
                               typename Vec<T>::V *probe) {
    constexpr int64_t at[1] = {0};
    point_vectors<T, K, 1, false, Nan>(p0, roff, nrows, nkw, kstep, at, o, nvalid, div, c, probe);
}

// A point's channels [from, C) after its whole blocks (C a block or more)
// as one more block of vectors from `from` on, the last ending at C
// (tail_offsets into at; those lanes computed again, to the same bits),
// inline in the blocks' regime (NaN tests probed away), where tail_point
// runs out of line with the tests: when they need four vectors (after an
// aligned lead over 64k channels every point has such a tail, 52 f32
// channels), or three for maxima.  AMD EPYC, 1 thread, against
// tail_point, the same bits: MaxPool k5 s2 along 1000
// columns NXC, 128 channels 0.71 of the time, 112 channels 0.79, 256 0.84;
// k2 and k3 s2 rows of 128-832 channels 0.93-1.01; averages with a
// three-vector tail (112 channels) 1.03-1.07, so those keep tail_point.
template <typename T, int K>
static inline bool tail_block(int64_t from, int64_t C, int64_t (&at)[kBlockVecs]) {
    constexpr int64_t VL = Vec<T>::lanes;
    tail_offsets<T>(from, C, at);  // filled either way: callers read at only on true, which gcc cannot see
    return C >= kBlockVecs * VL && C - from > (K == kMax ? 2 : 3) * VL;
}

// Points over a block of channels or more whose blocks come with a head
// vector (channel_lead) or a tail that tail_block leaves out of line pool
// all their channels in one loop of taps when they take at most this many
// vectors (whole_points_row): the head, each block and the tail had a loop
// each, and a head's or a tail's is one chain of dependent combines.  AMD
// EPYC, 1 thread, f32, src 16 bytes past a line (aligned): the 1-D k7 s2
// average over 1 x 96 x 4096 0.84 of the time (0.85), over 80 channels
// 0.80 (0.85), 112 0.86 (0.89); the k7 s2 maxima over 96 channels 0.90,
// the k3 s2 maxima over 2 x 160 x 4096 0.76-0.78, the k4 s4 average over 8 x
// 96 x 4096 0.89 (0.91); f64 k7 s2 averages over 48 channels 0.84.  2-D
// windows ran as fast either way (k2 s2 and k3 s2 over 96-160 channels,
// 0.93-1.02).  Three whole blocks and nothing else in one loop took the k3
// s2 average over 1 x 192 x 56 x 56 1.08x; thirteen to sixteen vectors were
// mixed (0.90-1.10).  AVX2 (no head vector: 32-byte vectors), same
// machine: k7 s2 averages over 1 x 48 and 80 x 4096 0.61-0.74, the 2-D k3
// s2 average over 48 channels 0.77, k3 s2 maxima 0.95-1.0; twelve vectors
// rather than eight took the 80 channels 0.78-0.83 of the time.  Split
// pairs (bf16) keep their blocks: one loop of single vectors took 1.3x.
constexpr int kWholePointVecs = 12;
template <typename T>
constexpr bool kWholePoints = __is_same(T, float) || __is_same(T, double);

// The channel offsets of a point's vectors in whole_points_row (at, in
// address order): the head vector at 0 (lead > 0), the blocks' from lead on
// to full and the tail's (tail_at, tail_block's); how many, or 0 where the
// point keeps its blocks (see kWholePointVecs).
template <typename T>
static inline int whole_point_offsets(int64_t lead, int64_t full, int64_t C, bool tail_inline,
                                      const int64_t (&tail_at)[kBlockVecs], int64_t (&at)[kWholePointVecs]) {
    constexpr int64_t VL = Vec<T>::lanes;
    const int64_t tail_vecs = (C - full + VL - 1) / VL;
    if ((lead == 0 && (full == C || tail_inline)) || (lead > 0) + (full - lead) / VL + tail_vecs > kWholePointVecs)
        return 0;
    int n = 0;
    if (lead > 0) at[n++] = 0;
    for (int64_t c0 = lead; c0 < full; c0 += VL) at[n++] = c0;
    for (int64_t j = 0; j < tail_vecs; ++j) at[n++] = tail_at[j];
    return n;
}

// blocks_row's n points as NV vectors each at the offsets at_row
// (whole_point_offsets).
template <typename T, int K, int KW, int NR, int NV, bool Nan>
static void whole_points_row(const T *p, const int64_t *roff, int64_t nrows, int64_t kw, int64_t kstep,
                             int64_t pstep, T *o, int64_t ostep, int64_t n, int64_t div_dh, const int64_t *wdiv,
                             const ExecCtx *c, typename Vec<T>::V *probe, const int64_t *at_row) {
    if constexpr (KW != 0) kw = KW;
    if constexpr (NR != 0) nrows = NR;
    const int64_t nvalid = nrows * kw;
    int64_t at[NV];
    for (int j = 0; j < NV; ++j) at[j] = at_row[j];
    for (int64_t i = 0; i < n; ++i, p += pstep, o += ostep) {
        const typename AvgOut<T, K>::Div div = (typename AvgOut<T, K>::Div)(div_dh * wdiv[i]);
        point_vectors<T, K, NV, false, Nan>(p, roff, nrows, kw, kstep, at, o, nvalid, div, c, probe);
    }
}

// Calls run(NV) with nv, a whole point's vector count (5 to
// kWholePointVecs: a block and a head or tail vector at least), as an
// integral constant.
template <int NV = kBlockVecs + 1, typename Run>
static inline void with_whole_point_vecs(int nv, Run run) {
    if constexpr (NV < kWholePointVecs) {
        if (nv > NV) return with_whole_point_vecs<NV + 1>(nv, run);
    }
    run(std::integral_constant<int, NV>{});
}

// n output points of one row whose windows are whole, a block of channels
// or more: every point's full blocks in registers (point_vectors; Nan =
// false: probed, as there), its channel tail by block_point (with NaN
// tests).  One loop with the window fixed at compile time where
// with_window_constants fixes it: a call per block with the taps counted
// at run time took VGG's k2 s2 over 128 channels 1.14x its time (bf16 and
// f16 1.5x).  lead > 0: the blocks start at channel lead (channel_lead).
// Points that whole_point_offsets takes go by whole_points_row instead.
template <typename T, int K, int KW, int NR, bool Nan>
static void blocks_row(const T *p, const int64_t *roff, int64_t nrows, int64_t kw, int64_t kstep, int64_t pstep,
                       T *o, int64_t ostep, int64_t n, int64_t C, int64_t div_dh, const int64_t *wdiv,
                       const ExecCtx *c, typename Vec<T>::V *probe, int64_t lead) {
    constexpr int64_t VL = Vec<T>::lanes, VB = kBlockVecs * VL;
    static constexpr ConsecutiveAt<kBlockVecs, VL> block{};
    if constexpr (KW != 0) kw = KW;
    if constexpr (NR != 0) nrows = NR;
    const int64_t nvalid = nrows * kw, full = lead + (C - lead) / VB * VB;
    int64_t tail_at[kBlockVecs];
    const bool tail_inline = tail_block<T, K>(full, C, tail_at);
    if constexpr (kWholePoints<T>) {
        int64_t whole_at[kWholePointVecs];
        if (const int nv = whole_point_offsets<T>(lead, full, C, tail_inline, tail_at, whole_at)) {
            with_whole_point_vecs(nv, [&](auto nv_c) {
                whole_points_row<T, K, KW, NR, nv_c.value, Nan>(p, roff, nrows, kw, kstep, pstep, o, ostep, n,
                                                                div_dh, wdiv, c, probe, whole_at);
            });
            return;
        }
    }
    // bf16 blocks' pair probes (masks) run on across the row and fold into
    // probe[] once, where a fold at every point went through memory.
    constexpr bool kRowPairs = !Nan && kSplitPairs<T, kBlockVecs>;
    PairProbe row_pairs[kBlockVecs / 2];
    for (int64_t i = 0; i < n; ++i, p += pstep, o += ostep) {
        const typename AvgOut<T, K>::Div div = (typename AvgOut<T, K>::Div)(div_dh * wdiv[i]);
        if (lead) lead_vector<T, K, Nan>(p, roff, nrows, kw, kstep, o, nvalid, div, c, probe);
        for (int64_t c0 = lead; c0 < full; c0 += VB)
            point_vectors<T, K, kBlockVecs, true, Nan>(p + c0, roff, nrows, kw, kstep, block.at, o + c0, nvalid, div,
                                                      c, probe, kRowPairs ? row_pairs : nullptr);
        if (tail_inline)
            point_vectors<T, K, kBlockVecs, false, Nan>(p, roff, nrows, kw, kstep, tail_at, o, nvalid, div, c, probe);
        else if (full < C)
            block_point<T, K, false>(p + full, roff, nrows, kw, kstep, C - full, o + full, nvalid, div, c, nullptr,
                                     full, C);
    }
    if constexpr (kRowPairs)
        for (int j = 0; j < kBlockVecs / 2; ++j) probe[j] += row_pairs[j].template as_sum<typename Vec<T>::V>();
}
template <typename T, int K, bool Nan>
static void blocks_row_any(const T *p, const int64_t *roff, int64_t nrows, int64_t kw, int64_t kstep, int64_t pstep,
                           T *o, int64_t ostep, int64_t n, int64_t C, int64_t div_dh, const int64_t *wdiv,
                           const ExecCtx *c, typename Vec<T>::V *probe, int64_t lead) {
    with_window_constants(kw, nrows, [&](auto kw_c, auto nr_c) {
        blocks_row<T, K, kw_c.value, nr_c.value, Nan>(p, roff, nrows, kw, kstep, pstep, o, ostep, n, C, div_dh, wdiv,
                                                      c, probe, lead);
    });
}

// Rows of one to kOrderedBlocks whole blocks of channels over a src of
// kOrderedMinBytes or more: every point's channels in registers, its window read
// in address order, tap by tap (Ordered point_vectors).  The hardware
// prefetchers follow ascending lines: block by block, a point's taps visit
// each row's lines out of order (and so does one block of registers per
// point once the compiler interleaves the taps' loads: hence the barrier).
// Against blocks_row (AMD EPYC, 1 thread): the 1-D k4 s4 average over 256
// channels at batch 8 and 16 (32-64 MB of f32) 0.36-0.39 of the time, bf16
// 0.37-0.61, f16 0.55; VGG's k2 s2 maxima over 128 channels at batch 4-8
// 0.53-0.58; k2 s2 averages over 256 channels at batch 8 0.44.
constexpr int64_t kOrderedBlocks = kVecBytes == 64 ? 4 : 2;   // accumulators: half the vector registers

// One row of dst whose points are contiguous, Bytes each (a multiple of
// 64), written a point at a time as whole cache lines past the caches
// (non-temporal stores).  A point's values go to an aligned stage at dst's
// offset past a line (point()); commit() streams the stage's whole lines,
// and the bytes past the last one carry over to the front of the stage,
// where the next point completes their line: no line is written in part
// past the caches, whatever dst's placement (a line written so in part
// would be read back anyway).  Only the row's first and last partial lines,
// shared with the neighbouring rows and points, go through ordinary stores.
// Used from the plan's uncached_floor of dst bytes on (uncached_floor_bytes:
// Intel cores only).  Every dst line an ordinary store reaches is read first
// (for ownership): the 1-D k4 s4 average over 256 f32 channels at batch 8
// moves 48 MB for 40.  Measured on an Intel Xeon against ordinary stores,
// dst 16 bytes past a line as numpy places it, 1 and 2 threads: that average
// 0.87-0.89 of the time (bf16, f16 0.96-0.97, ahead of the division's cost:
// ExactInverse), VGG's k2 s2 maxima over 128 channels at batch 8 0.77-0.92
// (bf16 0.94-0.96).
template <int64_t Bytes>
struct UncachedRow {
    static_assert(Bytes % 64 == 0, "whole lines a point");
    alignas(64) unsigned char stage[Bytes + 64];
    unsigned char *line;   // the dst line stage[0] stands for
    int64_t lead;          // dst's bytes past a line
    bool head;             // the stage's first line starts before the row

    explicit UncachedRow(void *dst)
        : line((unsigned char *)((uintptr_t)dst & ~(uintptr_t)63)), lead((int64_t)((uintptr_t)dst & 63)),
          head(lead != 0) {}
    template <typename T>
    T *point() { return (T *)(stage + lead); }
    void commit() {
        int64_t b = 0;
        if (head) {   // the row's first line, from its first byte on
            __builtin_memcpy(line + lead, stage + lead, 64 - lead);
            b = 64, head = false;
        }
        for (; b < Bytes; b += 64) isa_store_line_uncached(line + b, stage + b);
        line += Bytes;
        if (lead) __builtin_memcpy(stage, stage + Bytes, 64);
    }
    // After the last point: its carried bytes, and the non-temporal stores
    // ordered before whatever the thread does next.
    void finish() {
        if (lead) __builtin_memcpy(line, stage, lead);
#if defined(__x86_64__)
        _mm_sfence();
#endif
    }
};

template <typename T, int K, int NV, bool Nan>
static void ordered_row(const T *p, const int64_t *roff, int64_t nrows, int64_t kw, int64_t kstep, int64_t pstep,
                        T *o, int64_t ostep, int64_t n, int64_t div_dh, const int64_t *wdiv, const ExecCtx *c,
                        typename Vec<T>::V *probe, bool uncached) {
    static constexpr ConsecutiveAt<NV, Vec<T>::lanes> cons{};
    constexpr int64_t kPointBytes = NV * Vec<T>::lanes * (int64_t)sizeof(T);
    const int64_t nvalid = nrows * kw;
    if constexpr (kPointBytes % 64 == 0) {
        if (uncached && n > 0) {   // (the caller checked that the points are contiguous: ostep = C)
            UncachedRow<kPointBytes> row(o);
            for (int64_t i = 0; i < n; ++i, p += pstep) {
                point_vectors<T, K, NV, true, Nan, true>(p, roff, nrows, kw, kstep, cons.at, row.template point<T>(),
                                                         nvalid, (typename AvgOut<T, K>::Div)(div_dh * wdiv[i]), c,
                                                         probe);
                row.commit();
            }
            row.finish();
            return;
        }
    }
    for (int64_t i = 0; i < n; ++i, p += pstep, o += ostep)
        point_vectors<T, K, NV, true, Nan, true>(p, roff, nrows, kw, kstep, cons.at, o, nvalid,
                                                 (typename AvgOut<T, K>::Div)(div_dh * wdiv[i]), c, probe);
}
template <typename T, int K, bool Nan>
static void ordered_row_any(const T *p, const int64_t *roff, int64_t nrows, int64_t kw, int64_t kstep, int64_t pstep,
                            T *o, int64_t ostep, int64_t n, int64_t C, int64_t div_dh, const int64_t *wdiv,
                            const ExecCtx *c, typename Vec<T>::V *probe, bool uncached) {
    static_assert(kBlockVecs == 4 && kOrderedBlocks <= 4, "ordered_row is dispatched for 1-4 blocks");
    switch (C / (kBlockVecs * Vec<T>::lanes)) {
    case 1: ordered_row<T, K, 4, Nan>(p, roff, nrows, kw, kstep, pstep, o, ostep, n, div_dh, wdiv, c, probe, uncached); break;
    case 2: ordered_row<T, K, 8, Nan>(p, roff, nrows, kw, kstep, pstep, o, ostep, n, div_dh, wdiv, c, probe, uncached); break;
    case 3:
        if constexpr (kOrderedBlocks >= 3)
            ordered_row<T, K, 12, Nan>(p, roff, nrows, kw, kstep, pstep, o, ostep, n, div_dh, wdiv, c, probe, uncached);
        break;
    default:
        if constexpr (kOrderedBlocks >= 4)
            ordered_row<T, K, 16, Nan>(p, roff, nrows, kw, kstep, pstep, o, ostep, n, div_dh, wdiv, c, probe, uncached);
        break;
    }
}

// NV whole vectors of block_point_idx (a count known at compile time keeps
// the values and offsets in registers), from the first tap: no padding to
// lose.  Each lane keeps its winning tap's index as an offset from the first
// tap's, in lanes as wide as the values (one blend per tap), widened and
// stored as whole vectors at the end.
template <typename T, int NV>
static inline __attribute__((always_inline)) void idx_vectors(const T *p0, const int64_t *roff, const int64_t *ridx,
                                                              int64_t nrows, int64_t nkw, int64_t kstep, int64_t istep,
                                                              int64_t a0, int64_t icstep, T *o, int64_t *xo, int64_t xcs) {
    typedef IdxVec<typename Traits<T>::Acc> IV;
    typedef typename IV::M M;
    typedef typename Vec<T>::V V;
    constexpr int64_t VL = Vec<T>::lanes;
    V vacc[NV];
    M off[NV];
    for (int v = 0; v < NV; ++v) {
        vacc[v] = load_vec<T>(p0 + roff[0] + v * VL);
        off[v] = M{};
    }
    for (int64_t r = 0; r < nrows; ++r) {
        const T *p = p0 + roff[r];
        int64_t at = ridx[r] - ridx[0];
        for (int64_t kw = 0; kw < nkw; ++kw, p += kstep, at += istep) {
            if (r == 0 && kw == 0) continue;
            const M tv = M{} + (typename IV::Lane)at;
            for (int v = 0; v < NV; ++v) {
                const V b = load_vec<T>(p + v * VL);
                const M take = IV::wins(vacc[v], b);
                vacc[v] = take ? b : vacc[v];
                off[v] = take ? tv : off[v];
            }
        }
    }
    for (int v = 0; v < NV; ++v) {
        store_as<T, true>(o + v * VL, vacc[v]);
        const int64_t first = a0 + v * VL * icstep;
        if (xcs == 1) IV::store_offsets(xo + v * VL, off[v], first, icstep);
        else
            for (int64_t l = 0; l < VL; ++l) xo[(v * VL + l) * xcs] = first + off[v][l] + l * icstep;
    }
}

// One channel block of one output point with indices (first maximum, first
// NaN), `before` channels of the point preceding it: whole vectors by
// idx_vectors, a partial last one as a vector overlapping the one before it
// (the same lanes get the same bits again) when the point has that many
// channels, the remaining lanes one by one.  All lane by lane when the
// window's offsets do not fit the lanes (`fit`: IdxVec::offsets_fit).
template <typename T>
static inline void block_point_idx(const T *p0, const int64_t *roff, const int64_t *ridx, int64_t nrows,
                                   int64_t nkw, int64_t kstep, int64_t istep, int64_t ibase, int64_t icstep,
                                   int64_t m, int64_t before, T *o, int64_t *xo, int64_t xcs, int64_t nvalid,
                                   bool fit) {
    typedef typename Traits<T>::Acc Acc;
    constexpr int64_t VL = Vec<T>::lanes, VB = kBlockVecs * VL;
    static_assert(kBlockVecs == 4, "idx_vectors is dispatched for 1-4 vectors");
    const int64_t nv = m / VL, back = m - VL;   // back: where an overlapping last vector starts
    const bool overlap = m % VL && before + m >= VL;
    const bool vectors = (nv > 0 || overlap) && nvalid > 0 && fit;
    if (vectors) {
        const int64_t a0 = ibase + ridx[0];
        switch (nv) {
        case 4: idx_vectors<T, 4>(p0, roff, ridx, nrows, nkw, kstep, istep, a0, icstep, o, xo, xcs); break;
        case 3: idx_vectors<T, 3>(p0, roff, ridx, nrows, nkw, kstep, istep, a0, icstep, o, xo, xcs); break;
        case 2: idx_vectors<T, 2>(p0, roff, ridx, nrows, nkw, kstep, istep, a0, icstep, o, xo, xcs); break;
        case 1: idx_vectors<T, 1>(p0, roff, ridx, nrows, nkw, kstep, istep, a0, icstep, o, xo, xcs); break;
        }
        if (overlap)
            idx_vectors<T, 1>(p0 + back, roff, ridx, nrows, nkw, kstep, istep, a0 + back * icstep, icstep, o + back,
                              xo + back * xcs, xcs);
    }
    const int64_t done = !vectors ? 0 : overlap ? m : nv * VL;   // the rest lane by lane
    if (done == m) return;
    Acc acc[VB];
    int64_t arg[VB];
    for (int64_t i = done; i < m; ++i) { acc[i] = Traits<T>::max_init(); arg[i] = -1; }
    for (int64_t r = 0; r < nrows; ++r) {
        const T *p = p0 + roff[r];
        int64_t at = ibase + ridx[r];
        for (int64_t kw = 0; kw < nkw; ++kw, p += kstep, at += istep)
            for (int64_t i = done; i < m; ++i) {
                const Acc v = Traits<T>::load(p[i]);
                if (right_wins(acc[i], arg[i], v)) { acc[i] = v; arg[i] = at + i * icstep; }
            }
    }
    for (int64_t i = done; i < m; ++i) {
        o[i] = nvalid ? Traits<T>::store(acc[i]) : Traits<T>::lowest();
        xo[i * xcs] = nvalid ? arg[i] : -1;
    }
}

// Stride-1 windows over rows dense in (w, c): an output row's full windows
// are flat over x = (ow - fw0) * C + c.  Each input position's (d, h) rows
// are pooled once into P (P[x] = rows at X + x), and an output combines KW
// of those a column apart, left to right (the slid blocks' order):
// o[x] = finish(P[x] (+) P[x + step] (+) ... (+) P[x + span]).  P runs a
// window's span ahead of the outputs: its newest column stays in registers,
// the others come back from L1.  The head and the tail are single vectors
// overlapping their neighbours (dst never overlaps src, and a position
// pooled twice is the same value), so blocks start where the src loads are
// aligned (loads split across cache lines cost up to 30%).
constexpr int kFlatVecs = 4;

// Outputs [x, x + NV * Vec<T>::lanes) of flat_row (KW: the window, 0 = kw at
// run time).  Nan = false (float maxima): no NaN tests, each src vector
// loaded for a new column added into probe[] instead (point_vectors').
template <typename T, int K, int KW, int NV, bool Nan>
static inline __attribute__((always_inline)) void flat_block(
        const T *X, const int64_t *roff, int64_t nrows, int64_t kw, int64_t step, typename Traits<T>::Acc *P,
        T *__restrict o, int64_t x, typename AvgOut<T, K>::Div div, int32_t nvalid, QParams q,
        typename Vec<T>::V *probe) {
    typedef typename Vec<T>::V V;
    typedef typename Vec<T>::VU VU;
    constexpr int64_t VL = Vec<T>::lanes;
    if constexpr (KW != 0) kw = KW;
    const int64_t span = (kw - 1) * step;
    V vn[NV];
    for (int j = 0; j < NV; ++j) {
        vn[j] = load_vec<T>(X + roff[0] + span + x + j * VL);
        if constexpr (!Nan) probe[j] += vn[j];
    }
    for (int64_t r = 1; r < nrows; ++r)
        for (int j = 0; j < NV; ++j) {
            const V v = load_vec<T>(X + roff[r] + span + x + j * VL);
            if constexpr (!Nan) probe[j] += v;
            vn[j] = vcombine<K, Nan>(vn[j], v);
        }
    // One row (1-D, or windows of one row): P would be a copy of it (as
    // large as a whole src row, traffic to L2 and beyond), so the taps come
    // from src itself.
    const bool one = nrows == 1;
    auto pooled = [&](int64_t at) { return one ? load_vec<T>(X + roff[0] + at) : (V) * (const VU *)(P + at); };
    // stored before the reads below: columns under a vector apart (C < lanes) read these
    if (!one)
        for (int j = 0; j < NV; ++j) *(VU *)(P + span + x + j * VL) = vn[j];
    // the taps outer, the vectors inner: a window counted at run time (1-D
    // k4) kept acc[] on the stack the other way round
    V acc[NV];
    for (int j = 0; j < NV; ++j) acc[j] = kw > 1 ? pooled(x + j * VL) : vn[j];
    for (int64_t t = 1; t + 1 < kw; ++t)
        for (int j = 0; j < NV; ++j) acc[j] = vcombine<K, Nan>(acc[j], pooled(x + t * step + j * VL));
    if (kw > 1)
        for (int j = 0; j < NV; ++j) acc[j] = vcombine<K, Nan>(acc[j], vn[j]);
    finish_vecs<T, K, NV>(o + x, acc, nvalid, div, q);
}

// n >= Vec<T>::lanes outputs of one row: X is src at the first window's
// input column, P the pooled rows' scratch (n + span values and two vectors).
// Nan = false: probed (flat_block); the blocks see every src column past
// the first window's last but one, and those are added here.
template <typename T, int K, int KW, bool Nan>
__attribute__((noinline)) static void flat_row(const T *X, const int64_t *roff, int64_t nrows, int64_t kw, int64_t step,
                     typename Traits<T>::Acc *P, T *__restrict o, int64_t n, typename AvgOut<T, K>::Div div,
                     int32_t nvalid, QParams q, typename Vec<T>::V *probe_out) {
    constexpr int64_t VL = Vec<T>::lanes;
    if constexpr (KW != 0) kw = KW;
    const int64_t span = (kw - 1) * step;
    // summed here, in registers (probe_out may alias what the blocks store)
    typename Vec<T>::V probe[kFlatVecs] = {};
    if constexpr (!Nan)
        for (int64_t r = 0; r < nrows; ++r)   // n >= VL: each vector ends inside the row
            for (int64_t h = 0; h < span; h += VL) probe[0] += load_vec<T>(X + roff[r] + h);
    int64_t x = aligned_head<T>(X + roff[0] + span, n);
    // P moved on (within its slack) so that the blocks' vectors of P line up
    // with their src loads: with src 16 bytes past a line, P's loads split
    // across lines took Inception's k3 s1 over 192 channels (f32) 1.2x the
    // time of an aligned src.
    P += (Vec<T>::lanes - x % Vec<T>::lanes) % Vec<T>::lanes;
    if (nrows > 1) taps_reduce<T, K, false, T>(P, nullptr, X, nullptr, roff, nrows, span);   // the first window's columns but its last
    if (x) flat_block<T, K, KW, 1, Nan>(X, roff, nrows, kw, step, P, o, 0, div, nvalid, q, probe);
    for (; x + kFlatVecs * VL <= n; x += kFlatVecs * VL)
        flat_block<T, K, KW, kFlatVecs, Nan>(X, roff, nrows, kw, step, P, o, x, div, nvalid, q, probe);
    for (; x + VL <= n; x += VL) flat_block<T, K, KW, 1, Nan>(X, roff, nrows, kw, step, P, o, x, div, nvalid, q, probe);
    if (x < n) flat_block<T, K, KW, 1, Nan>(X, roff, nrows, kw, step, P, o, n - VL, div, nvalid, q, probe);
    if constexpr (!Nan)
        for (int j = 0; j < kFlatVecs; ++j) probe_out[j] += probe[j];
}
template <typename T, int K, bool Nan>
static void flat_row_kw(const T *X, const int64_t *roff, int64_t nrows, int64_t kw, int64_t step,
                        typename Traits<T>::Acc *P, T *o, int64_t n, typename AvgOut<T, K>::Div div, int32_t nvalid,
                        QParams q, typename Vec<T>::V *probe) {
    if (kw == 3) flat_row<T, K, 3, Nan>(X, roff, nrows, kw, step, P, o, n, div, nvalid, q, probe);
    else if (kw == 2) flat_row<T, K, 2, Nan>(X, roff, nrows, kw, step, P, o, n, div, nvalid, q, probe);
    else flat_row<T, K, 0, Nan>(X, roff, nrows, kw, step, P, o, n, div, nvalid, q, probe);
}
// Float maxima of one row, or of 16-bit values, go without NaN tests
// first, probed, and again with them when the probe shows a NaN (or
// infinities of both signs).  Measured against the tests throughout (one
// process, interleaved): 1-D k4 over 128 channels bf16 0.75 of the time,
// k3 s1 2-D f16 and bf16 0.87-0.99; 2-D f32 and f64 1.0-1.07, so those keep
// the tests.
template <typename T, int K>
static void flat_row_any(const T *X, const int64_t *roff, int64_t nrows, int64_t kw, int64_t step,
                         typename Traits<T>::Acc *P, T *o, int64_t n, typename AvgOut<T, K>::Div div, int32_t nvalid,
                         QParams q) {
    typedef typename Traits<T>::Acc Acc;
    constexpr bool floats = __is_same(Acc, float) || __is_same(Acc, double);
    if constexpr (kBf16IntMaxima<T, K>) {   // one row: in 16-bit lanes (kernels_bf16_maxima.hpp)
        if (nrows == 1 && n >= Bf16Lanes<kVecBytes>::lanes && bf16_max_flat_row_any(X + roff[0], kw, step, o, n))
            return;
    }
    if constexpr (K == kMax && floats) {
        if ((nrows == 1 || sizeof(T) == 2) && ran_without_nan<typename Vec<T>::V, kFlatVecs>([&](auto *probe) {
                flat_row_kw<T, K, false>(X, roff, nrows, kw, step, P, o, n, div, nvalid, q, probe);
            }))
            return;
    }
    flat_row_kw<T, K, true>(X, roff, nrows, kw, step, P, o, n, div, nvalid, q, nullptr);
}

// Values p sits past the boundary of a vector load (Vec<T>::lanes values)
// when every tap p + off[t] sits there too (offsets of whole vectors), else 0.
template <typename T>
static inline int64_t shared_misalignment(const T *p, const int64_t *off, int64_t nt) {
    constexpr int64_t VL = Vec<T>::lanes;
    const uintptr_t a = (uintptr_t)p;
    if (a % sizeof(T)) return 0;
    for (int64_t t = 0; t < nt; ++t)
        if (off[t] % VL) return 0;
    return (int64_t)(a % (VL * sizeof(T)) / sizeof(T));
}

// Reduces the n taps at X + off[t] (C values each, in order) into acc,
// kStreamTaps per pass.
template <typename T, int K>
static inline void stream_taps(typename Traits<T>::Acc *acc, const T *X, const int64_t *off, int64_t n, int64_t C) {
    for (int64_t i = 0; i < n; i += kStreamTaps)
        taps_pass<T, K>(acc, X, off + i, n - i < kStreamTaps ? n - i : kStreamTaps, C, i > 0);
}

// Sliding columns: a window of KW undilated columns at stride S < KW shares
// KW - S columns with the next one.  Interior windows of an output row reduce
// each input column's (d, h) rows once, keep the last KW column results in
// registers and combine them per output (column by column, so sums group
// differently from the row-major register blocks: a few ulps, never more than
// a window's own rounding; quantized sums are exact integers either way).
// A block walks a whole row, so only short channel rows slide (long ones
// reach the next position a page away).  Stride-1 rows dense in (w, c) go as
// flat rows instead (the same order and bits, faster): what slides at stride
// 1 are quantized averages (16-bit sums) and rows with gaps between columns.
// k3 s2 slides when its sums are exact (maxima, quantized averages), so that
// an output's bits do not depend on the path: ResNet-50 k3 s2 p1 max NXC
// 0.78 of the register blocks' time, the 3-D k3 s2 p1 0.87, 8-bit maxima
// 0.50.  Past the prefetching floor (from DRAM) a slid block prefetches the
// columns kAheadPoints points on, and k3 s2 slides only where one slid
// block covers the row's channels (slide_passes): ResNet-50 at batch 32
// (C = 64) 0.96 of the prefetched points' time in f32, 0.80 in bf16, 0.74
// in f16, 0.56 in u8, the 3-D k3 s2 p1 at batch 8 0.84-0.90 (f32) and
// 0.68-0.69 (bf16); two or more passes over a row reach each position's
// lines a block at a time and cost 1.2-1.3x (C = 48, 96, 128, 256 f32).
// Float averages summed column by column in the register blocks too cost up
// to 1.1 (3x on channel tails).
// Vectors per block: KW + 2 blocks stay in the registers (16 on AVX2, 32 on
// AVX-512); a channel remainder of half a block or more slides as one.
// Float averages keep blocks of 2 and no half block: the larger blocks'
// code moved their register blocks' timing by up to 1.2x (k3 s2, k3 s3 NXC,
// the same tap loop), and their slides (gapped stride-1 rows) are rare.
template <int K>
constexpr int kSlideVecs = kVecBytes == 64 && K != kAvg ? 4 : 2;
constexpr int64_t kSlideRowBytes = 1024;

// The vector arithmetic of a slid block of NV vectors: 8-bit quantized sums
// in 16-bit lanes (at most kNarrowTaps taps), everything else as the
// register blocks, bf16 maxima in pairs split by parity as there (64-byte
// vectors).  Maxima finished by a probed pass (Nan = false) hold no NaN
// when they stand (finish_vec's NanFree).  Both against widened single
// vectors stored with the NaN test, bf16 k3 s2 p1 NXC at 1 thread:
// ResNet-50's 0.80 of the time, 96 channels 0.83, the 3-D window 0.83.
template <typename T, int K>
struct SlideOps {
    typedef typename Vec<T>::V V;
    static constexpr int64_t lanes = Vec<T>::lanes;
    template <int NV>
    static constexpr bool kSplit = K == kMax && kSplitPairs<T, NV>;
    // (pairs: split pairs probed as they load, one PairProbe a pair; or null)
    template <int NV>
    static inline __attribute__((always_inline)) void load(const T *p, V (&v)[NV], PairProbe *pairs = nullptr) {
        if constexpr (kSplit<NV>)
            for (int j = 0; j < NV; j += 2)
                load_pair_split<T>(p + j * lanes, v[j], v[j + 1], pairs ? &pairs[j / 2] : nullptr);
        else
            for (int j = 0; j < NV; ++j) v[j] = load_vec<T>(p + j * lanes);
    }
    template <bool Nan = true>
    static inline V combine(V a, V b) { return vcombine<K, Nan>(a, b); }
    template <bool Nan, int NV>
    static inline void finish(T *o, const V (&acc)[NV], int32_t nvalid, typename AvgOut<T, K>::Div div, QParams q) {
        if constexpr (kSplit<NV>)
            for (int j = 0; j < NV; j += 2) store_pair_split_as<T, true, !Nan>(o + j * lanes, acc[j], acc[j + 1]);
        else
            for (int j = 0; j < NV; ++j) finish_vec<T, K, !Nan>(o + j * lanes, acc[j], nvalid, div, q);
    }
};
template <typename T>
struct SlideOps<T, kQAvg> {
    typedef typename Narrow<T>::V V;
    static constexpr int64_t lanes = Narrow<T>::lanes;
    template <int NV>
    static constexpr bool kSplit = false;
    template <int NV>
    static inline void load(const T *p, V (&v)[NV], PairProbe * = nullptr) {
        for (int j = 0; j < NV; ++j) v[j] = Narrow<T>::load(p + j * lanes);
    }
    template <bool Nan = true>
    static inline V combine(V a, V b) { return a + b; }
    template <bool Nan, int NV>
    static inline void finish(T *o, const V (&acc)[NV], int32_t nvalid, float div, QParams q) {
        for (int j = 0; j < NV; ++j) finish_narrow<T>(o + j * lanes, acc[j], nvalid, div, q);
    }
};

// A row of C channels slid as one block of 3 or 5 vectors where that is
// all of it (0: none), float maxima whose values are vectors as loaded, on
// AVX-512.  The blocks of 4 vectors and the half block walked such rows
// twice, the second pass over lines the first had left; one pass took k3
// s2 over 48 and 80 channels (f32 and f64, 1 and 2 threads) 0.75-0.94 of
// the time.  Blocks of 6 vectors no longer fit the registers with their
// NaN tests (gcc 12: 118 stack accesses in the k3 s2 block, 13 in the
// block of 4): k3 s2 over 96 f32 channels took 1.6-1.9x the time of a
// block of 4 and a half block (2-D and 3-D, 1 and 2 threads; 1.25x at
// 8 x 96 x 112 x 112, 38 MB), over 48 f64 channels 1.6x.  Maxima of 16-bit
// floats, with their probes, took 1.34-1.39x in blocks of 6.
template <typename T, int K>
constexpr bool kWholeSlides = kSlideVecs<K> == 4 && K == kMax && sizeof(T) == sizeof(typename Traits<T>::Acc);
template <typename T, int K>
static inline int whole_slide_vecs(int64_t C) {
    constexpr int64_t VS = SlideOps<T, K>::lanes;
    if (!kWholeSlides<T, K> || C % VS) return 0;
    return C == 3 * VS || C == 5 * VS ? (int)(C / VS) : 0;
}

// The slid passes over a row of C channels: one block of all of them (with
// `whole`: whole_slide_vecs), or blocks of kSlideVecs vectors, then (with
// `half`) one of half as many, then (with `one`) single vectors, the last
// one ending at C (overlapping the one before: maxima and integer sums come
// out the same in any order).  Calls pass(vectors, first channel) for each;
// returns the channels done.
template <typename T, int K, typename Pass>
static inline int64_t walk_slide_passes(int64_t C, bool whole, bool half, bool one, Pass &&pass) {
    constexpr int NV = kSlideVecs<K>;
    constexpr int64_t VS = SlideOps<T, K>::lanes, SB = NV * VS;
    if (whole) {
        pass(whole_slide_vecs<T, K>(C), 0);
        return C;
    }
    int64_t c0 = 0;
    for (; c0 + SB <= C; c0 += SB) pass(NV, c0);
    if (half && c0 + SB / 2 <= C) pass(NV / 2, c0), c0 += SB / 2;
    for (; one && c0 < C && C >= VS; c0 += VS) {
        if (c0 + VS > C) c0 = C - VS;
        pass(1, c0);
    }
    return c0;
}

// How many slid passes walk a row of C channels in blocks of kSlideVecs
// (maxima and quantized averages: row_slides gives them a half block and
// single vectors), whole blocks aside: past the prefetching floor, k3 s2
// over 96 channels slid as one block took 1.02-1.10x the time of the
// prefetched points (32 x 96 x 112 x 112 f32, 1 and 2 threads).
template <typename T, int K>
static inline int64_t slide_passes(int64_t C) {
    int64_t n = 0;
    walk_slide_passes<T, K>(C, false, K != kAvg, K != kAvg, [&](int, int64_t) { ++n; });
    return n;
}

// One input column of a slid block, NV vectors.
template <typename T, int K, int NV>
struct SlideCol {
    typename SlideOps<T, K>::V v[NV];
};

// One input column of a slid block: its (d, h) rows reduced (nrows >= 1;
// NR of them when NR > 0).  Nan = false: float maxima without NaN tests, the
// column's values summed into probe (see slide_block_erased), or split pairs
// probed into pairs[] by an ordered compare a load (PairProbe, one a pair;
// slide_block folds them into probe).
template <typename T, int K, int NV, int NR, bool Nan>
static inline SlideCol<T, K, NV> slide_column(const T *pc, const int64_t *roff, int64_t nrows,
                                              typename SlideOps<T, K>::V *probe, PairProbe *pairs) {
    typedef SlideOps<T, K> Ops;
    constexpr bool kPairs = !Nan && Ops::template kSplit<NV>, kSums = !Nan && !kPairs;
    if constexpr (NR != 0) nrows = NR;
    PairProbe *const pp = kPairs ? pairs : nullptr;
    SlideCol<T, K, NV> col, sum;
    Ops::load(pc + roff[0], col.v, pp);
    if constexpr (kSums) sum = col;
    for (int64_t r = 1; r < nrows; ++r) {
        typename Ops::V v[NV];
        Ops::load(pc + roff[r], v, pp);
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) {
            col.v[j] = Ops::template combine<Nan>(col.v[j], v[j]);
            if constexpr (kSums) sum.v[j] += v[j];
        }
    }
    if constexpr (kSums)
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) probe[j] += sum.v[j];   // one add a vector on the probe's chain
    return col;
}

// Output columns [ow0, ow1) (every one sees all KW columns) of one block of
// NV vectors: p at the block's channels of input column 0, roff the
// window's (d, h) rows (nrows >= 1; NR > 0: exactly NR), o at the block's
// channels of output 0; ahead > 0: from a point's new columns to those it
// prefetches (src values), 0: no prefetching.  Nan = false: see
// slide_column.
template <typename T, int K, int KW, int S, int NV, int NR, bool Nan>
static void slide_block(const T *p, const int64_t *roff, int64_t nrows, int64_t ws, T *o, int64_t os,
                        int64_t ow0, int64_t ow1, int64_t pb, int64_t div_dh, const AxisPlan &AW, const ExecCtx *c,
                        int64_t ahead, typename SlideOps<T, K>::V *probe) {
    typedef SlideOps<T, K> Ops;
    typedef typename Ops::V V;
    const int32_t nvalid = (int32_t)(nrows * KW);
    SlideCol<T, K, NV> col[KW];   // the window's columns, left to right (registers: every index is constant)
    constexpr bool kPairs = !Nan && Ops::template kSplit<NV>;
    PairProbe pairs[kPairs ? NV / 2 : 1];   // split pairs' probes (slide_column), folded at the end
#pragma GCC unroll 4
    for (int kw = S; kw < KW; ++kw)
        col[kw] = slide_column<T, K, NV, NR, Nan>(p + (ow0 * S - pb + kw - S) * ws, roff, nrows, probe, pairs);
    for (int64_t ow = ow0; ow < ow1; ++ow) {
#pragma GCC unroll 4
        for (int kw = 0; kw < KW - S; ++kw) col[kw] = col[kw + S];
        if (ahead)
            prefetch_window<T>(p + (ow * S - pb + KW - S) * ws + ahead, roff, nrows, S, ws,
                               NV * Ops::lanes * (int64_t)sizeof(T));
#pragma GCC unroll 4
        for (int kw = KW - S; kw < KW; ++kw)
            col[kw] = slide_column<T, K, NV, NR, Nan>(p + (ow * S - pb + kw) * ws, roff, nrows, probe, pairs);
        const typename AvgOut<T, K>::Div div = (typename AvgOut<T, K>::Div)(div_dh * AW.div[ow]);
        const QParams q = point_params<K>(c, div);
        V acc[NV];
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) {
            acc[j] = col[0].v[j];
#pragma GCC unroll 4
            for (int kw = 1; kw < KW; ++kw) acc[j] = Ops::template combine<Nan>(acc[j], col[kw].v[j]);
        }
        Ops::template finish<Nan>(o + ow * os, acc, nvalid, div, q);
    }
    if constexpr (kPairs)
        for (int j = 0; j < NV / 2; ++j) probe[j] += pairs[j].template as_sum<V>();
}

typedef void (*SlideFn)(const void *, const int64_t *, int64_t, int64_t, void *, int64_t, int64_t, int64_t, int64_t,
                        int64_t, const AxisPlan &, const ExecCtx *, int64_t);
template <typename T, int K, int KW, int S, int NV, int NR>
static void slide_block_erased(const void *p, const int64_t *roff, int64_t nrows, int64_t ws, void *o, int64_t os,
                               int64_t ow0, int64_t ow1, int64_t pb, int64_t div_dh, const AxisPlan &AW,
                               const ExecCtx *c, int64_t ahead) {
    // Maxima of 16-bit floats first compare without NaN tests, summing the
    // loaded values into a probe (bf16 split pairs: PairProbe), and slide
    // again with them when it shows a NaN (or, summed, infinities of both
    // signs); the first pass only writes dst.
    // ResNet-50's k3 s2 p1 in bf16 took 0.85 of the time, k3 s2 over 96
    // channels in f16 0.95; f32 ran as fast as with the tests, f64 1.08x.
    // k5 s2 (four combines a column loaded, where k3 s2 has two) probes
    // f32 and f64 too.
    typedef typename Traits<T>::Acc Acc;
    if constexpr (K == kMax && (sizeof(T) == 2 ? __is_same(Acc, float)
                                               : KW > 3 && (__is_same(T, float) || __is_same(T, double)))) {
        if (ran_without_nan<typename SlideOps<T, K>::V, NV>([&](auto *probe) {
                slide_block<T, K, KW, S, NV, NR, false>((const T *)p, roff, nrows, ws, (T *)o, os, ow0, ow1, pb,
                                                        div_dh, AW, c, ahead, probe);
            }))
            return;
    }
    slide_block<T, K, KW, S, NV, NR, true>((const T *)p, roff, nrows, ws, (T *)o, os, ow0, ow1, pb, div_dh, AW, c,
                                           ahead, nullptr);
}
// The slid shapes: k3 s1 (inception), k2 s1, k3 s2 (ResNet), k4 s2 and k5
// s2 maxima (the last three when s2: see slide_passes) as above; null
// otherwise.  Rows: the window's rows fixed at compile time, for the rows
// that have them all: kSquareRows, those of a square 2-D window (as many as
// its columns; C = 16 k3 s2 NXC: 0.80 of the time with the count at run
// time), or 1 (1-D windows: k3 s2 over 2 x 4096 x 80 f32, one block of 5
// vectors, 0.62-0.65 of the time), 0: at run time.  k5 s2 loads
// each column once where the points load it 2.5 times: 1-D over 2 x 1000
// x 32 f32 took 0.82-0.84 of the probed points' time (0.64-0.67 from
// numpy's 16-byte aligned src), over 1 x 1000 x 96 0.72.  k4 s2 and k5 s2
// never slide a row as one block of 3 or 5 vectors (whole_slide_vecs): 5
// columns of 5 vectors leave no room in the registers (k4 s2: not measured).
constexpr int kSquareRows = -1;
template <typename T, int K, int NV, int Rows>
static SlideFn slide_fn(const AxisPlan &AW, bool s2) {
    constexpr int R2 = Rows == kSquareRows ? 2 : Rows, R3 = Rows == kSquareRows ? 3 : Rows;
    constexpr int R4 = Rows == kSquareRows ? 4 : Rows;
    if (AW.d != 1) return nullptr;
    if (AW.k == 3 && AW.s == 1) return slide_block_erased<T, K, 3, 1, NV, R3>;
    if (AW.k == 2 && AW.s == 1) return slide_block_erased<T, K, 2, 1, NV, R2>;
    if (AW.k == 3 && AW.s == 2 && s2 && K != kAvg) return slide_block_erased<T, K, 3, 2, NV, R3>;
    if constexpr (K == kMax && (NV == kSlideVecs<K> || NV <= kSlideVecs<K> / 2)) {
        if (AW.k == 4 && AW.s == 2 && s2) return slide_block_erased<T, K, 4, 2, NV, R4>;
        if (AW.k == 5 && AW.s == 2 && s2) return slide_block_erased<T, K, 5, 2, NV, 0>;
    }
    return nullptr;
}

// The slid block functions of a row (walk_slide_passes): kSlideVecs
// vectors, half as many and one vector, and (whole_slide_vecs) one block of
// all C channels; float averages have no half block and no single vectors.
// Null `block` when the row does not slide.
struct Slides {
    SlideFn block = nullptr, half = nullptr, one = nullptr, whole = nullptr;
};
template <typename T, int K, int Rows>
static Slides row_slides(const AxisPlan &AW, bool s2, int64_t C) {
    Slides sl;
    sl.block = slide_fn<T, K, kSlideVecs<K>, Rows>(AW, s2);
    sl.half = sl.block && K != kAvg ? slide_fn<T, K, kSlideVecs<K> / 2, Rows>(AW, s2) : nullptr;
    sl.one = kSlideVecs<K> / 2 == 1 ? sl.half : sl.half ? slide_fn<T, K, 1, Rows>(AW, s2) : nullptr;
    if constexpr (kWholeSlides<T, K>) {
        switch (sl.block ? whole_slide_vecs<T, K>(C) : 0) {
        case 3: sl.whole = slide_fn<T, K, 3, Rows>(AW, s2); break;
        case 5: sl.whole = slide_fn<T, K, 5, Rows>(AW, s2); break;
        }
    }
    return sl;
}

// Outputs per strip of a slid row (channel_block_rows): all `full` of them
// when one pass slides the row's channels, else kSlideStripBytes of src
// (`src_step` values a point, its window rows included) and at least
// kSlideStripPoints, so that the next pass finds the strip's src in L1.
// Measured (AVX-512, 1 thread, NXC k3 s2 maxima, whole rows -> strips):
// 1-D over 4 x 4096 x 128 (2 MB rows, past L2) 1.65 -> 1.01 of oneDNN's
// time (bf16 1.33 -> 1.01); 2-D over 1 x 112 x 112 x 128 1.12 -> 0.97,
// 2 threads 1.22 -> 1.06.  Strips of 4 points (the 2-D rows) or of 16 KB
// lost (2-D bf16 at 2 threads 0.69 -> 0.76; 1-D bf16 1.01 -> 1.10).
constexpr int64_t kSlideStripBytes = 8192, kSlideStripPoints = 8;
template <typename T, int K>
static inline int64_t slide_strip_points(const Slides &sl, int64_t C, int64_t src_step, int64_t full) {
    full = full > 1 ? full : 1;
    if (!sl.block || sl.whole) return full;
    int64_t passes = 0;
    walk_slide_passes<T, K>(C, false, sl.half != nullptr, sl.one != nullptr, [&](int, int64_t) { ++passes; });
    const int64_t step_bytes = src_step * (int64_t)sizeof(T);   // (0 or less: a broadcast or reversed view)
    const int64_t bytes_points = step_bytes > 0 ? kSlideStripBytes / step_bytes : full;
    const int64_t points = bytes_points > kSlideStripPoints ? bytes_points : kSlideStripPoints;
    return passes < 2 || points > full ? full : points;
}

template <typename T, int K, bool WithIdx>
static void channel_block_rows(const ExecCtx *c, int64_t r0, int64_t r1, void *scratch) {
    const AxisPlan &AD = c->ax[0], &AH = c->ax[1], &AW = c->ax[2];
    constexpr int64_t VB = kBlockVecs * Vec<T>::lanes;
    typedef typename AvgOut<T, K>::Div Div;
    const T *src = (const T *)c->src;
    T *dst = (T *)c->dst;
    const int64_t C = c->C;
    typedef typename Traits<T>::Acc Acc;
    constexpr bool probe_points = K == kMax && !WithIdx && (__is_same(Acc, float) || __is_same(Acc, double));
    // f32 and f64 maxima on AVX-512 test for NaN as they go (a compare into a
    // mask and a masked move) in whole blocks and points instead of probing:
    // the probe's adds (one a loaded vector, on chains through memory
    // between points) limited the loop.  Against probed, 1 thread: 1-D k3 s2
    // over 2 x 4096 x 128 f32 0.84-0.85 of the time (routed to the points as
    // below), 1-D k3 s3 over 80 and 128 channels 0.90-0.92, VGG's k2 s2
    // 0.94-0.96 (2 threads 0.89-0.95), GoogLeNet's k3 s2 over 832 channels
    // 0.93-0.94.
    constexpr bool tested_blocks = probe_points && kVecBytes == 64 && (__is_same(T, float) || __is_same(T, double));
    int64_t *roff = (int64_t *)scratch;          // src offsets of the window's (d, h) rows
    int64_t *ridx = roff + c->taps_max;          // their index values
    const bool stream = windows_disjoint(AD) && windows_disjoint(AH) && windows_disjoint(AW) &&
                        AD.k * AH.k * AW.k >= kStreamMinTaps && C * (int64_t)sizeof(T) >= kStreamRowBytes;
    // ordered_row: disjoint windows over whole blocks of dense channels,
    // src past the private caches
    const bool ordered = !WithIdx && !stream && K != kQAvg && AW.out > 1 && src_bytes<T>(c) >= kOrderedMinBytes &&
                         windows_disjoint(AW) && AW.s > 0 && c->ss[4] > 0 && C % VB == 0 &&
                         C / VB <= kOrderedBlocks;
    // ordered_row's rows of contiguous points written past the caches
    // (UncachedRow); channels are unit-stride in src and dst here (choose_variant)
    const bool uncached = ordered && c->ds[4] == C && (uintptr_t)dst % sizeof(T) == 0 &&
                          tensor_bytes<T>(c, &AxisPlan::out) >= c->uncached_floor;
    const bool prefetch = !WithIdx && !stream && !ordered && AW.out > 1 && src_past_prefetch_floor<T>(c);
    // The window of output point ow + kAheadDisjoint, this far on
    // (prefetch_window); 0: none.
    const int64_t ahead = prefetch && windows_disjoint(AW) ? kAheadDisjoint * AW.s * c->ss[4] : 0;
    // Overlapping windows (k3 s2): the columns that point ow + kAheadPoints
    // adds to its window, while ow reduces its own.  Measured against none,
    // 1 and 2 threads: ResNet-50 k3 s2 p1 at batch 32 (128 MB) 0.61, the 3-D
    // k3 s2 p1 at batch 8 (51 MB) 0.66-0.70.
    const int64_t ahead_cols =
        prefetch && !windows_disjoint(AW) && AW.d == 1 ? (kAheadPoints * AW.s + AW.k - AW.s) * c->ss[4] : 0;
    // slid blocks prefetch the columns kAheadPoints points on
    const int64_t slide_ahead = prefetch ? kAheadPoints * AW.s * c->ss[4] : 0;
    // Whether k3 s2, k4 s2 and k5 s2 slide: rows one pass takes, and under the
    // prefetching floor k5 s2 (whose slides load each column once where the
    // points load it 2.5 times), rows of one whole block (whole_slide_vecs)
    // and k3 s2 rows that tested_blocks' points do not take.  Those take k3
    // s2 rows of more than two slid blocks, and over one-row (1-D) windows
    // of more than one: the later passes' gapped streams cost more than the
    // points' reloaded columns.  Against the slides, 1 thread, f32: 1-D over
    // 2 x 4096 x 96-256 channels 0.78-0.92 of the time (4 x 4096 x 128 at 2
    // threads 0.85-0.86), 2-D over 1 x 160-256 x 56 x 56 0.87-0.95 (256 at 2
    // threads 0.88-0.92); f64 1-D over 2 x 4096 x 48-128 0.79-0.85, 2-D over
    // 1 x 128 x 56 x 56 0.84-0.86.  Slid, 2-D rows of up to two blocks took
    // 0.91-0.97 of the points' time (96 and 128 f32 channels, 48 f64, 1-4 x
    // 56 x 56).  k4 s2 (whose points load each column twice) slides as k5
    // s2 does but for tested_blocks' rows of more than one slid block:
    // against the points (1 thread), f32 over 64 channels 0.66-0.71 of the
    // time (1-D over 2 x 4096, 2-D over 1 x 56 x 56; NCX 1 x 128 x 56 x 56
    // through channel blocks 0.85), 32 channels 0.71, f16 over 128 0.70,
    // bf16 0.65, u8 (byte lanes) over 256 0.63; f32 over 128 and 256
    // channels 1.06x.
    const bool one_row = AD.k == 1 && AH.k == 1;   // a 1-D window (or one of 1 x KW)
    const int64_t slid_block = kSlideVecs<K> * SlideOps<T, K>::lanes;
    const bool s2_points = tested_blocks && !whole_slide_vecs<T, K>(C) &&
                           ((AW.k == 3 && (C > 2 * slid_block || (one_row && C > slid_block))) ||
                            (AW.k == 4 && C > slid_block));
    const bool slide_s2 = slide_passes<T, K>(C) == 1 || (!prefetch && !s2_points);
    const bool slides = !WithIdx && !stream && C * (int64_t)sizeof(T) <= kSlideRowBytes;
    // where the points' and blocks_row's register blocks start
    // (channel_lead); not from DRAM (prefetching), where the head vector's
    // loads cost the 1-D k4 s4 at 2 threads 1.05-1.21x (1 thread 1.01)
    const int64_t lead = WithIdx || stream || prefetch ? 0 : channel_lead<T>(c);
    const Slides slides_any = slides ? row_slides<T, K, 0>(AW, slide_s2, C) : Slides{};
    // rows that have all of a square 2-D window's rows, or a 1-D window's
    // one row: the count fixed (fixed_rows of them)
    const bool square = AD.k == 1 && AH.k == AW.k;
    const int64_t fixed_rows = one_row ? 1 : AW.k;
    const Slides slides_fixed = !slides ? Slides{}
                                : one_row ? row_slides<T, K, 1>(AW, slide_s2, C)
                                : square  ? row_slides<T, K, kSquareRows>(AW, slide_s2, C) : Slides{};
    // Output columns [fw0, fw1) see their whole window (the same in every
    // row).  Stride-1 rows dense in (w, c) take those of fw0's divisor,
    // [fw0, flat1), as one flat row (flat_row); slid blocks take them all
    // otherwise.
    int64_t fw0 = 0, fw1, flat1;
    while (fw0 < AW.out && AW.kbeg[fw0] != 0) ++fw0;
    for (fw1 = fw0; fw1 < AW.out && AW.kbeg[fw1] == 0 && AW.kend[fw1] == AW.k;) ++fw1;
    for (flat1 = fw0; flat1 < fw1 && AW.div[flat1] == AW.div[fw0];) ++flat1;
    const bool flat = !WithIdx && !stream && K != kQAvg && AW.s == 1 && c->ss[4] == C && c->ds[4] == C &&
                      (flat1 - fw0) * C >= Vec<T>::lanes;
    // slid rows' full windows go in strips of this many outputs
    const int64_t slide_strip = slide_strip_points<T, K>(slides_any, C, AD.k * AH.k * AW.s * c->ss[4], fw1 - fw0);
    // points_row_any: rows of fewer channels than a block (past the
    // prefetching floor their points go one by one, prefetched); under a
    // vector, a point's vector reads on past its channels, so only points
    // whose reads end inside src (before src_end) go this way
    const bool few_channels = !WithIdx && !stream && !prefetch && C < VB && AW.s > 0 && c->ss[4] > 0;
    // blocks_row_any: rows of a block of channels or more (quantized
    // averages keep their 16-bit blocks)
    const bool blocks = !WithIdx && !stream && !prefetch && C >= VB && K != kQAvg && AW.s > 0 && c->ss[4] > 0;
    // decimated_row: maxima over two or more points a vector, stride-2
    // windows of 2 or 3 dense columns (one point a vector took 1.3x the
    // points' time, k2 s2 over 12 channels).  Every window must hold a
    // column: a ceil window wholly in the end padding is the lowest value,
    // which the points give and decimated_row (identities) would not.
    const bool decimate = !WithIdx && !stream && decimated_rows(K == kMax, AW, C, Vec<T>::lanes) &&
                          AW.kend[AW.out - 1] > AW.kbeg[AW.out - 1] && c->ss[4] == C && c->ds[4] == C;
    const T *src_end = past_src<T>(c);
    int64_t *toff = ridx + c->taps_max;   // a streamed window's taps
    [[maybe_unused]] bool idx_fit = false;
    if constexpr (WithIdx) idx_fit = IdxVec<typename Traits<T>::Acc>::offsets_fit(c);
    // flat_row's or decimated_row's pooled rows, 64-byte aligned (after a
    // streamed window's partial results: C values and a vector of slack)
    typename Traits<T>::Acc *pooled =
        (typename Traits<T>::Acc *)(((uintptr_t)(toff + c->taps_max * AW.k + C + kStreamSlack) + 63) & ~(uintptr_t)63);
    [[maybe_unused]] bool columns = false;
    if constexpr (WithIdx) columns = idx_columns_ok<T>(c);
    // idx_columns: groups of stride-1 rows share their rows (2-D windows)
    [[maybe_unused]] const bool share = columns && AD.k == 1 && AH.s == 1 && AH.d == 1 && AH.k >= kIdxShareRows;
    int64_t col_lo = 0;
    [[maybe_unused]] const int64_t col_n = columns ? columns_read(AW, &col_lo) : 0;
    // Rows of few points over a vector of channels to under a block, whose
    // windows all hold a column, and that no row path above takes whole:
    // row_group_points, row_group_rows rows at a time where their H windows
    // are alike.
    bool row_groups = few_channels && K != kQAvg && C >= Vec<T>::lanes && AW.out <= kRowGroupMaxPoints && !flat &&
                      !decimate && !(slides_any.block && fw1 - fw0 >= 2);
    for (int64_t ow = 0; row_groups && ow < AW.out; ++ow) row_groups = AW.kend[ow] > AW.kbeg[ow];
    const int64_t group_rows = row_group_rows<T>(C);
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t oh = r % AH.out, od = (r / AH.out) % AD.out, n = r / (AH.out * AD.out);
        const int64_t nrows = window_rows(c, od, oh, roff, ridx);
        if (row_groups && nrows > 0 && r + group_rows <= r1 && oh + group_rows <= AH.out) {
            bool alike = true;
            for (int64_t g = 1; alike && g < group_rows; ++g)
                alike = AH.kbeg[oh + g] == AH.kbeg[oh] && AH.kend[oh + g] == AH.kend[oh] && AH.div[oh + g] == AH.div[oh];
            if (alike) {
                bool exact = false;   // bf16 maxima in 16-bit lanes first (kernels_bf16_maxima.hpp)
                if constexpr (kBf16IntMaxima<T, K>) {
                    auto in_lanes = group_rows == 4 ? &bf16_max_row_group_any<4> : &bf16_max_row_group_any<2>;
                    exact = in_lanes(src + n * c->ss[0], roff, nrows, AW, c->ss[4], AH.s * c->ss[3],
                                     dst + n * c->ds[0] + od * c->ds[2] + oh * c->ds[3], c->ds[4], c->ds[3], C);
                }
                if (!exact)
                    row_group_points_any<T, K>(src + n * c->ss[0], roff, nrows, AW, c->ss[4], AH.s * c->ss[3],
                                           dst + n * c->ds[0] + od * c->ds[2] + oh * c->ds[3], c->ds[4], c->ds[3], C,
                                           AD.div[od] * AH.div[oh], c);
                r += group_rows - 1;
                continue;
            }
        }
        if constexpr (WithIdx) {
            if (columns && nrows > 0) {
                bool group = share && nrows == AH.k && r + kIdxShareRows <= r1 && oh + kIdxShareRows <= AH.out;
                for (int g = 0; group && g < kIdxShareRows; ++g)
                    group = AH.kbeg[oh + g] == 0 && AH.kend[oh + g] == AH.k;
                const int64_t rows = group ? kIdxShareRows : 1;
                idx_columns_rows<T>(c, src + n * c->ss[0], roff, ridx, nrows, rows, col_lo, col_n,
                                    dst + n * c->ds[0] + od * c->ds[2] + oh * c->ds[3],
                                    c->idx + n * c->xs[0] + od * c->xs[2] + oh * c->xs[3], n * c->is[0], (char *)pooled);
                r += rows - 1;
                continue;
            }
        }
        const int64_t div_dh = AD.div[od] * AH.div[oh];
        const T *src_n = src + n * c->ss[0];
        int64_t row_reach = 0;   // under a vector of channels: the furthest of the window's rows
        for (int64_t rr = 0; C < Vec<T>::lanes && rr < nrows; ++rr)
            row_reach = roff[rr] > row_reach ? roff[rr] : row_reach;
        // Output point ow, channels [c_first, C); without NaN tests in the
        // full blocks when nan is false (probe_points).
        auto point = [&](int64_t ow, int64_t c_first, auto nan, typename Vec<T>::V *probe) {
            const int64_t kw0 = AW.kbeg[ow], nkw = AW.kend[ow] - kw0;
            const int64_t iw0 = ow * AW.s - AW.pb + kw0 * AW.d;
            const int64_t nvalid = nrows * nkw;
            const Div div = (Div)(div_dh * AW.div[ow]);
            const T *p0 = src_n + iw0 * c->ss[4];
            T *o = dst + n * c->ds[0] + od * c->ds[2] + oh * c->ds[3] + ow * c->ds[4];
            const int64_t kstep = AW.d * c->ss[4];
            if constexpr (WithIdx) {
                int64_t *xo = c->idx + n * c->xs[0] + od * c->xs[2] + oh * c->xs[3] + ow * c->xs[4];
                const int64_t ibase = n * c->is[0] + iw0 * c->is[4];
                for (int64_t c0 = 0; c0 < C; c0 += VB)
                    block_point_idx<T>(p0 + c0, roff, ridx, nrows, nkw, kstep, AW.d * c->is[4],
                                       ibase + c0 * c->is[1], c->is[1], C - c0 < VB ? C - c0 : VB, c0, o + c0,
                                       xo + c0 * c->xs[1], c->xs[1], nvalid, idx_fit);
            } else if (stream) {
                typedef typename Traits<T>::Acc Acc;
                int64_t nt = 0;
                for (int64_t rr = 0; rr < nrows; ++rr)
                    for (int64_t kw = 0; kw < nkw; ++kw) toff[nt++] = roff[rr] + kw * kstep;
                // The taps from the vector boundary before p0 when it is
                // the same for every tap: numpy's 16-byte alignment split
                // every load across two cache lines (global-avgpool-n32
                // NXC, 1 thread: 1.16x the time from a 64-byte aligned src).
                // The lanes before p0 read its cache line and are dropped.
                const int64_t sh = shared_misalignment<T>(p0, toff, nt);
                Acc *acc = (Acc *)(((uintptr_t)(toff + nt) + 63) & ~(uintptr_t)63);
                if (nt == 0) fill_rows<Acc, false>(acc, nullptr, identity<T, K>(), C);
                stream_taps<T, K>(acc, p0 - sh, toff, nt, C + sh);
                block_store<T, K>(acc + sh, C, o, nvalid, div, c);
            } else {
                int64_t c0 = c_first;
                if (ahead) prefetch_window<T>(p0 + c_first + ahead, roff, nrows, nkw, kstep, (C - c_first) * (int64_t)sizeof(T));
                if (ahead_cols)
                    prefetch_window<T>(p0 + c_first + ahead_cols, roff, nrows, AW.s, kstep, (C - c_first) * (int64_t)sizeof(T));
                if constexpr (K == kQAvg) {
                    constexpr int64_t NB = kBlockVecs * Narrow<T>::lanes;
                    if (nvalid <= kNarrowTaps)
                        for (; c0 + NB <= C; c0 += NB)
                            block_point_narrow<T>(p0 + c0, roff, nrows, nkw, kstep, o + c0, nvalid, div, c);
                }
                if (lead && c0 == 0) {
                    lead_vector<T, K, nan.value>(p0, roff, nrows, nkw, kstep, o, nvalid, div, c, probe);
                    c0 = lead;
                }
                for (; c0 + VB <= C; c0 += VB)
                    block_point<T, K, true, nan.value>(p0 + c0, roff, nrows, nkw, kstep, VB, o + c0, nvalid, div, c,
                                                       probe);
                if (int64_t tail_at[kBlockVecs]; tail_block<T, K>(c0, C, tail_at)) {
                    point_vectors<T, K, kBlockVecs, false, nan.value>(p0, roff, nrows, nkw, kstep, tail_at, o, nvalid,
                                                                      div, c, probe);
                    c0 = C;
                }
                if (c0 == 0 && C < Vec<T>::lanes && nvalid > 0 &&
                    p0 + row_reach + (nkw - 1) * kstep + Vec<T>::lanes <= src_end) {
                    // Under a vector: one vector from channel 0, its lanes
                    // past C reading the next positions (inside src), as
                    // points_row's; a lane at a time cost the border points
                    // of 3 channels (k3 3-D average NXC) 2.9x oneDNN's time.
                    T buf[Vec<T>::lanes];
                    const int64_t at[1] = {0};
                    points_group<T, K, 1, 1>(p0, roff, nrows, nkw, kstep, 0, at, buf, 0, div_dh, AW.div + ow, c);
                    for (int64_t ch = 0; ch < C; ++ch) o[ch] = buf[ch];
                } else if (c0 < C) {
                    block_point<T, K, false>(p0 + c0, roff, nrows, nkw, kstep, C - c0, o + c0, nvalid, div, c,
                                             nullptr, c0, C);
                }
            }
        };
        // Columns [ow0, ow1) have channels [0, c_done) done as a flat row or
        // slid (full windows of stride-1 rows); the rest go point by point
        // (one call site: the point code stays inlined).
        int64_t ow0 = 0, ow1 = 0, c_done = 0;
        if (flat && nrows > 0) {
            const Div div = (Div)(div_dh * AW.div[fw0]);
            flat_row_any<T, K>(src_n + (fw0 - AW.pb) * C, roff, nrows, AW.k, AW.d * C, pooled,
                               dst + n * c->ds[0] + od * c->ds[2] + oh * c->ds[3] + fw0 * C, (flat1 - fw0) * C, div,
                               (int32_t)(nrows * AW.k), point_params<K>(c, div));
            ow0 = fw0, ow1 = flat1, c_done = C;
        } else if (slides_any.block && nrows > 0 && fw1 - fw0 >= 2 && C >= SlideOps<T, K>::lanes &&
                   !(K == kQAvg && nrows * AW.k > kNarrowTaps)) {
            const Slides &sl = slides_fixed.block && nrows == fixed_rows ? slides_fixed : slides_any;
            T *o_row = dst + n * c->ds[0] + od * c->ds[2] + oh * c->ds[3];
            for (int64_t s0 = fw0; s0 < fw1; s0 += slide_strip) {
                const int64_t s1 = fw1 - s0 > slide_strip ? s0 + slide_strip : fw1;
                c_done = walk_slide_passes<T, K>(C, sl.whole != nullptr, sl.half != nullptr, sl.one != nullptr,
                                                 [&](int nv, int64_t c0) {
                    const SlideFn fn = sl.whole ? sl.whole : nv == kSlideVecs<K> ? sl.block : nv == 1 ? sl.one : sl.half;
                    fn(src_n + c0, roff, nrows, c->ss[4], o_row + c0, c->ds[4], s0, s1, AW.pb, div_dh, AW, c,
                       slide_ahead);
                });
            }
            ow0 = fw0, ow1 = fw1;
        }
        if (decimate && nrows > 0) {
            T *o_row = dst + n * c->ds[0] + od * c->ds[2] + oh * c->ds[3];
            if (AW.k == 2) decimated_row<T, K, 2>(src_n, roff, nrows, AW.in, C, AW.pb, AW.out, pooled, o_row);
            else decimated_row<T, K, 3>(src_n, roff, nrows, AW.in, C, AW.pb, AW.out, pooled, o_row);
            continue;
        }
        // Rows of fewer channels than a block: the whole windows in one loop.
        if (few_channels && nrows > 0 && ow0 == ow1 && fw1 > fw0) {
            const T *p = src_n + (fw0 * AW.s - AW.pb) * c->ss[4];
            const int64_t pstep = AW.s * c->ss[4];
            int64_t np = fw1 - fw0;
            if (C < Vec<T>::lanes) {   // the points whose last tap's vector ends inside src
                const int64_t room = src_end - (p + row_reach + (AW.k - 1) * AW.d * c->ss[4] + Vec<T>::lanes);
                np = room < 0 ? 0 : (room / pstep + 1 < np ? room / pstep + 1 : np);
            }
            T *o = dst + n * c->ds[0] + od * c->ds[2] + oh * c->ds[3] + fw0 * c->ds[4];
            // Float maxima first without NaN tests, probed (points_group):
            // 1-D k5 s2 over 2 x 1000 x 32 took 0.84 of the tested points'
            // time in f32 (0.88-0.91 from numpy's 16-byte aligned src),
            // 0.75-0.77 in bf16.
            // bf16 maxima from a vector of channels on: in 16-bit lanes
            // (kernels_bf16_maxima.hpp), the tested float path where those
            // cannot be exact.
            const bool in_lanes = kBf16IntMaxima<T, K> && C >= Vec<T>::lanes;
            bool done = false;
            if constexpr (kBf16IntMaxima<T, K>) {
                if (in_lanes)
                    done = bf16_max_points_row_any(p, roff, nrows, AW.k, AW.d * c->ss[4], pstep, o, c->ds[4], np, C);
            }
            if constexpr (probe_points)
                if (!in_lanes)
                    done = ran_without_nan<typename Vec<T>::V, kBlockVecs>([&](auto *probe) {
                        points_row_any<T, K, false>(p, roff, nrows, AW.k, AW.d * c->ss[4], pstep, o, c->ds[4], np,
                                                    C, div_dh, AW.div + fw0, c, probe);
                    });
            if (!done)
                points_row_any<T, K>(p, roff, nrows, AW.k, AW.d * c->ss[4], pstep, o, c->ds[4], np, C, div_dh,
                                     AW.div + fw0, c);
            ow0 = fw0, ow1 = fw0 + np, c_done = C;
        }
        // Rows of a block of channels or more: the whole windows in one loop.
        bool row_blocks = blocks && nrows > 0 && ow0 == ow1 && fw1 > fw0;
        // bf16 maxima in 16-bit lanes (kernels_bf16_maxima.hpp) where the
        // windows are read in no particular order (not ordered_row's).
        if constexpr (kBf16IntMaxima<T, K>) {
            if (row_blocks && !ordered &&
                bf16_max_blocks_row_any(src_n + (fw0 * AW.s - AW.pb) * c->ss[4], roff, nrows, AW.k, AW.d * c->ss[4],
                                        AW.s * c->ss[4],
                                        dst + n * c->ds[0] + od * c->ds[2] + oh * c->ds[3] + fw0 * c->ds[4],
                                        c->ds[4], fw1 - fw0, C)) {
                row_blocks = false;
                ow0 = fw0, ow1 = fw1, c_done = C;
            }
        }
        auto whole_windows = [&](auto nan, typename Vec<T>::V *probe) {
            if (ordered) {
                ordered_row_any<T, K, nan.value>(src_n + (fw0 * AW.s - AW.pb) * c->ss[4], roff, nrows, AW.k,
                                                 AW.d * c->ss[4], AW.s * c->ss[4],
                                                 dst + n * c->ds[0] + od * c->ds[2] + oh * c->ds[3] + fw0 * c->ds[4],
                                                 c->ds[4], fw1 - fw0, C, div_dh, AW.div + fw0, c, probe, uncached);
                return;
            }
            blocks_row_any<T, K, nan.value>(src_n + (fw0 * AW.s - AW.pb) * c->ss[4], roff, nrows, AW.k,
                                            AW.d * c->ss[4], AW.s * c->ss[4],
                                            dst + n * c->ds[0] + od * c->ds[2] + oh * c->ds[3] + fw0 * c->ds[4],
                                            c->ds[4], fw1 - fw0, C, div_dh, AW.div + fw0, c, probe, lead);
        };
        // Float maxima whose points all go one by one or in blocks_row: the
        // row without NaN tests, probed, and again with them when the probe
        // shows a NaN (but see tested_blocks).
        if constexpr (probe_points && !tested_blocks) {
            auto untested = [&](auto *probe) {
                const int64_t b0 = row_blocks ? fw0 : AW.out, b1 = row_blocks ? fw1 : AW.out;
                const int64_t parts[2][2] = {{0, b0}, {b1, AW.out}};   // the points around the whole windows
                for (int part = 0; part < 2; ++part) {
                    for (int64_t ow = parts[part][0]; ow < parts[part][1]; ++ow) point(ow, 0, std::false_type{}, probe);
                    if (part == 0 && row_blocks) whole_windows(std::false_type{}, probe);
                }
            };
            if (!stream && ow0 == ow1 && nrows > 0 && C >= VB && ran_without_nan<typename Vec<T>::V, kBlockVecs>(untested))
                continue;
        }
        if (row_blocks) {
            whole_windows(std::true_type{}, nullptr);
            ow0 = fw0, ow1 = fw1, c_done = C;
        }
        // Only the columns left to do are visited: testing every column of a
        // row that slid whole cost C = 16 k3 s2 rows a third of the slides'
        // own time (the loop's state lives on the stack in this function).
        const int64_t segments[3][3] = {{0, ow0, 0}, {ow0, ow1, c_done}, {ow1, AW.out, 0}};   // [from, to), c_first
        for (const auto &seg : segments)
            if (seg[2] < C)
                for (int64_t ow = seg[0]; ow < seg[1]; ++ow) point(ow, seg[2], std::true_type{}, nullptr);
    }
}
