// Sparse-dense matrix products for XLA on CPU, called through JAX's FFI (see xp/sparse/_products/native.py).
//
// Four handlers, each for float32/64, complex64/128 and int32/64 values with int32 or int64
// indices (the Python side gives the index arrays of one call one dtype), a dense operand of the
// values' dtype with 1 (a vector) or k (a row-major matrix) columns:
//
//   xp_csr_matmul   y = A @ x     data, indices, indptr, x     -> y (n_rows, k)
//   xp_csr_rmatmul  y = A.T @ x   data, indices, indptr, x     -> y (n_cols, k)
//   xp_coo_matmul   y[out[j]] += data[j] * x[in[j]]            -> y (n_out, k): data, indices
//                   (nse, 2) as a BCOO holds them, x; attribute column: which index column is
//                   `out` (0: A @ x, 1: A.T @ x); attribute rows_sorted: whether the rows (index
//                   column 0) are claimed sorted (JAX's indices_sorted, a promise its own kernels
//                   rely on too). A @ x takes the sorted path (rows claimed sorted: checked by
//                   blocks of entries; else tried, the order checked entry by entry, an unsorted
//                   input costing a zero fill and a start of the threads more); A.T @ x scatters
//                   (the columns of a row-sorted matrix are nearly never sorted).
//
//   xp_csr_sampled  out[j] = ct[row of j] . x[column of j]      -> out (nse,): indices, indptr, ct,
//                   x; the cotangent of A @ x with respect to data (reverse mode), ct (n_rows,
//                   k) and x (n_cols, k); attribute transposed: of A.T @ x instead (ct indexed
//                   by the column, x by the row).
//
// The products with one column (k == 1) of float32 and float64 values with int32 indices gather x
// by vectors where the compiler targets AVX-512 (below, "one row's sum"; a CSR's short rows as one
// stream of entries, CsrRowDotsVector); the rest is scalar code.
//
// Stored entries whose index is out of range (JAX pads with index == n_rows or n_cols) contribute
// nothing; row pointers are clamped to [0, nse] so a corrupt indptr can never make a read out of
// bounds. Integer products wrap (computed in unsigned arithmetic), as XLA's do.
//
// Threads: the work runs on XLA's intra-op thread pool (the FFI ThreadPool context), in chunks
// taken from an atomic counter by the pool's tasks and by the calling thread itself, so the call
// finishes even if no pool thread ever becomes free (no deadlock when XLA's own threads are all
// busy), and waits for the helpers' last chunks on a condition variable (ParallelFor, below).
// Products below kMinParallelWork multiply-adds run on the calling thread alone: waking pool
// threads costs some microseconds, more than small products take.
//
// Scatters (A.T @ x, an unsorted COO) give each participating thread its own output buffer,
// added up at the end; a COO with sorted rows is split at row boundaries so that every thread
// owns whole rows, and a chunk that turns out unsorted sends the call to the scatter path.

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <atomic>
#include <complex>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "xla/ffi/api/ffi.h"

// AVX-512 (F and VL): the gathers of the one-column products (below).
#if defined(__AVX512F__) && defined(__AVX512VL__)
#define XP_AVX512 1
#include <immintrin.h>
#endif

namespace ffi = xla::ffi;

namespace {

// Below this many multiply-adds one thread beats waking the pool (one thread and two break even
// at about 40k entries, see xp/sparse/_products/native.py; XP_NATIVE_MIN_PARALLEL_WORK overrides it).
constexpr int64_t kMinParallelWork = 1 << 15;
// Chunks per participating thread: many, because a pool thread starts some microseconds after
// the caller (and later still when another process holds its core) and the chunks it finds left
// are its share: with 4 chunks a thread, the second thread took too small a share of a
// 400k-entry A @ x (about a seventh more time than with 32).
constexpr int64_t kChunksPerThread = 32;
// Scatters' per-thread buffers are added up on the calling thread alone below this many elements.
constexpr int64_t kMinParallelReduce = 1 << 18;

// --- arithmetic ------------------------------------------------------------------------------

template <typename T>
struct Arith {
  static inline T mul(T a, T b) { return a * b; }
  static inline T add(T a, T b) { return a + b; }
};

// Integer products wrap, as XLA's do (signed overflow is undefined in C++).
template <typename T>
  requires std::is_integral_v<T>
struct Arith<T> {
  using U = std::make_unsigned_t<T>;
  static inline T mul(T a, T b) { return static_cast<T>(static_cast<U>(a) * static_cast<U>(b)); }
  static inline T add(T a, T b) { return static_cast<T>(static_cast<U>(a) + static_cast<U>(b)); }
};

// The textbook complex product, as XLA computes it (std::complex's operator* goes through
// __mulsc3's inf/nan recovery, several times slower).
template <typename R>
struct Arith<std::complex<R>> {
  using C = std::complex<R>;
  static inline C mul(C a, C b) {
    return C(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
  }
  static inline C add(C a, C b) { return C(a.real() + b.real(), a.imag() + b.imag()); }
};

// out[0:k] += a * x[0:k]
template <typename T>
inline void axpy(T* __restrict out, T a, const T* __restrict x, int64_t k) {
  for (int64_t c = 0; c < k; ++c) out[c] = Arith<T>::add(out[c], Arith<T>::mul(a, x[c]));
}

// Asks for the row x[c * k : (c + 1) * k] to be brought into cache (no effect on results; an
// index out of range is not followed). The products with k columns read one row of x per stored
// entry, at random: from L3 for the bench's 5-10 MB operand, a latency the multiply-adds of one
// entry do not hide. Fetching the row of the entry kPrefetchDistance ahead saves a BCOO's A @ X
// (64 columns) about a tenth of its time, a BCSR's within noise; distances 4 and 16 do the same as
// 8 (docs/sparse.md, "The native CPU kernel").
constexpr int64_t kPrefetchDistance = 8;

template <typename T, typename U>
inline void PrefetchRow(const T* x, U c, U n, int64_t k) {
  if (c >= n) return;
  const char* p = reinterpret_cast<const char*>(x + static_cast<int64_t>(c) * k);
  for (int64_t b = 0; b < k * static_cast<int64_t>(sizeof(T)); b += 64) __builtin_prefetch(p + b);
}

// --- one row of A @ X (the products with k columns) ------------------------------------------

// out[0:k] = the sum over the entries j in [begin, end) of data[j] * x[column of j, 0:k], the
// columns read at cols[j * stride] (1: a CSR's indices; 2: a BCOO's (row, column) pairs). Scalar
// code for every value type: out zeroed, then one axpy an entry, the x row of the entry
// kPrefetchDistance ahead fetched (`limit`: entries past it are not read).
template <typename T, typename I>
inline void RowTimesMatrix(const T* data, const I* cols, int64_t stride, const T* x, int64_t n_in, int64_t k,
                           int64_t begin, int64_t end, int64_t limit, T* out) {
  using U = std::make_unsigned_t<I>;
  std::fill(out, out + k, T{});
  for (int64_t j = begin; j < end; ++j) {
    if (j + kPrefetchDistance < limit)
      PrefetchRow(x, static_cast<U>(cols[(j + kPrefetchDistance) * stride]), static_cast<U>(n_in), k);
    U c = static_cast<U>(cols[j * stride]);
    if (c < static_cast<U>(n_in)) axpy(out, data[j], x + static_cast<int64_t>(c) * k, k);
  }
}

// float32 and float64: the row's sums are kept in registers, a panel of up to 8 vectors of 32
// bytes (64 float32 or 32 float64 columns) at a time, and written once. The scalar loop above
// read, added into and stored the output row at every entry (the compiler cannot keep a row of
// runtime length in registers), and on CPUs whose compiler tuning prefers 128-bit vectors did so
// 4 floats an instruction: the panels make A @ X with many columns faster than the scalar loop
// (bench/RESULTS.md, "Sparse arrays"; docs/sparse.md, "The native CPU kernel").
template <typename T>
struct Vectors {
  typedef T V __attribute__((vector_size(32)));
  static constexpr int64_t kLanes = 32 / sizeof(T);
};

template <int NV, typename T, typename I>
inline void PanelSums(const T* data, const I* cols, int64_t stride, const T* x, int64_t n_in, int64_t k,
                      int64_t begin, int64_t end, int64_t limit, int64_t c0, T* out) {
  using U = std::make_unsigned_t<I>;
  using V = typename Vectors<T>::V;
  constexpr int64_t L = Vectors<T>::kLanes;
  constexpr int64_t kPanelBytes = NV * 32;
  V acc[NV];
  for (int q = 0; q < NV; ++q) acc[q] = V{};
  for (int64_t j = begin; j < end; ++j) {
    if (j + kPrefetchDistance < limit) {
      U p = static_cast<U>(cols[(j + kPrefetchDistance) * stride]);
      if (p < static_cast<U>(n_in)) {
        const char* line = reinterpret_cast<const char*>(x + static_cast<int64_t>(p) * k + c0);
        for (int64_t b = 0; b < kPanelBytes; b += 64) __builtin_prefetch(line + b);
      }
    }
    U c = static_cast<U>(cols[j * stride]);
    if (c >= static_cast<U>(n_in)) continue;
    const T* row = x + static_cast<int64_t>(c) * k + c0;
    const T a = data[j];
    for (int q = 0; q < NV; ++q) {
      V v;
      std::memcpy(&v, row + q * L, sizeof(V));
      acc[q] += a * v;
    }
  }
  for (int q = 0; q < NV; ++q) std::memcpy(out + c0 + q * L, &acc[q], sizeof(V));
}

template <typename T, typename I>
  requires std::is_same_v<T, float> || std::is_same_v<T, double>
inline void RowTimesMatrix(const T* data, const I* cols, int64_t stride, const T* x, int64_t n_in, int64_t k,
                           int64_t begin, int64_t end, int64_t limit, T* out) {
  using U = std::make_unsigned_t<I>;
  constexpr int64_t L = Vectors<T>::kLanes;
  int64_t c0 = 0;
  for (; c0 + 8 * L <= k; c0 += 8 * L) PanelSums<8>(data, cols, stride, x, n_in, k, begin, end, limit, c0, out);
  auto panel = [&]<int NV>() { PanelSums<NV>(data, cols, stride, x, n_in, k, begin, end, limit, c0, out); };
  switch ((k - c0) / L) {
    case 7: panel.template operator()<7>(); break;
    case 6: panel.template operator()<6>(); break;
    case 5: panel.template operator()<5>(); break;
    case 4: panel.template operator()<4>(); break;
    case 3: panel.template operator()<3>(); break;
    case 2: panel.template operator()<2>(); break;
    case 1: panel.template operator()<1>(); break;
    default: break;
  }
  c0 += (k - c0) / L * L;
  if (c0 == k) return;
  // The last k % L columns, entry by entry.
  std::fill(out + c0, out + k, T{});
  for (int64_t j = begin; j < end; ++j) {
    U c = static_cast<U>(cols[j * stride]);
    if (c < static_cast<U>(n_in)) axpy(out + c0, data[j], x + static_cast<int64_t>(c) * k + c0, k - c0);
  }
}

// --- one row's sum of data[j] * x[column of j] (the products with one column) -----------------

// The scalar loops, for every value and index type: a CSR row (indices contiguous) and a run of one
// row of a COO with sorted rows (indices interleaved as (row, column) pairs, from entry j on, j
// advanced past the run). An index at or past n (JAX's padding) adds nothing.
template <typename T, typename I>
inline T RowDot(const T* data, const I* indices, const T* x, int64_t begin, int64_t end, int64_t n) {
  using U = std::make_unsigned_t<I>;
  T acc{};
  for (int64_t j = begin; j < end; ++j) {
    U c = static_cast<U>(indices[j]);
    if (c < static_cast<U>(n)) acc = Arith<T>::add(acc, Arith<T>::mul(data[j], x[c]));
  }
  return acc;
}

template <typename T, typename I>
inline T RunDot(const T* data, const I* pairs, const T* x, int64_t& j, int64_t end, I row, int64_t n,
                bool claimed) {
  using U = std::make_unsigned_t<I>;
  T acc{};
  // Rows claimed sorted (JAX's indices_sorted): a block of 8 entries whose last is in this row is
  // all in it, so 7 of 8 comparisons are skipped (the loop alone about a tenth faster). Unclaimed
  // orders are checked entry by entry.
  if (claimed) {
    for (; j + 8 <= end && pairs[2 * (j + 7)] == row; j += 8) {
      T part{};
      for (int b = 0; b < 8; ++b) {
        U c = static_cast<U>(pairs[2 * (j + b) + 1]);
        if (c < static_cast<U>(n)) part = Arith<T>::add(part, Arith<T>::mul(data[j + b], x[c]));
      }
      acc = Arith<T>::add(acc, part);
    }
  }
  for (; j < end && pairs[2 * j] == row; ++j) {
    U c = static_cast<U>(pairs[2 * j + 1]);
    if (c < static_cast<U>(n)) acc = Arith<T>::add(acc, Arith<T>::mul(data[j], x[c]));
  }
  return acc;
}

// With AVX-512, float32 and float64 values with int32 indices (JAX's default index type) gather 16
// or 8 of x's elements at once; the range check is the gather's mask (a lane masked off reads
// nothing, so a padding index is never followed, and adds nothing, whatever its value). The
// scalar loop costs about 2 cycles an entry (a load of the index, the value and x's element, a
// multiply-add, the check), more than SciPy's loop without the check; the gathers take less than
// half the scalar loop's time (the loops alone, the bench's 400k entries; docs/sparse.md, "The
// native CPU kernel"). The sum is taken in lanes and the lanes added up at the end, so its
// rounding differs from a sequential sum's (as XLA's reductions' does).
#ifdef XP_AVX512

// The mask of the first `count` lanes (none for count <= 0).
inline __mmask16 FirstLanes16(int64_t count) {
  return count >= 16 ? __mmask16(0xFFFF) : count <= 0 ? __mmask16(0) : static_cast<__mmask16>((1u << count) - 1);
}
inline __mmask8 FirstLanes8(int64_t count) {
  return count >= 8 ? __mmask8(0xFF) : count <= 0 ? __mmask8(0) : static_cast<__mmask8>((1u << count) - 1);
}

// The sums of a vector's lanes, each adding the upper half to the lower one until one lane is
// left: the order of _mm512_reduce_add_ps/pd. Not those: GCC 12's headers implement them, and
// _mm512_extractf64x4_pd, _mm512_srli_epi64 and _mm512_alignr_epi64, with an uninitialized vector
// (_mm512_undefined_*) that -Wmaybe-uninitialized reports wherever they are inlined (GCC bug
// 105593). Their zero-masking forms with every lane kept compile to the same instructions without
// it, and are used here and in the COO's one-pass loop below.
inline float LaneSum(__m256 a) {
  __m128 half = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  half = _mm_add_ps(half, _mm_movehl_ps(half, half));
  return _mm_cvtss_f32(_mm_add_ss(half, _mm_movehdup_ps(half)));
}
inline float LaneSum(__m512 a) {
  const __m512d bits = _mm512_castps_pd(a);
  return LaneSum(_mm256_add_ps(_mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, bits, 1)),
                               _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, bits, 0))));
}
inline double LaneSum(__m512d a) {
  __m256d half = _mm256_add_pd(_mm512_maskz_extractf64x4_pd(0xF, a, 1), _mm512_maskz_extractf64x4_pd(0xF, a, 0));
  __m128d quarter = _mm_add_pd(_mm256_extractf128_pd(half, 1), _mm256_castpd256_pd128(half));
  return _mm_cvtsd_f64(quarter) + _mm_cvtsd_f64(_mm_unpackhi_pd(quarter, quarter));
}

// acc + data[lane] * x[cols[lane]] in the lanes set in `lanes` whose column is below n; the others
// keep acc.
inline __m512 MaddGathered(__m512 acc, __mmask16 lanes, __m512i cols, const float* data, const float* x,
                           __m512i n) {
  __mmask16 ok = _mm512_mask_cmplt_epu32_mask(lanes, cols, n);
  __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), ok, cols, x, 4);
  return _mm512_mask3_fmadd_ps(_mm512_maskz_loadu_ps(ok, data), v, acc, ok);
}
inline __m512d MaddGathered(__m512d acc, __mmask8 lanes, __m256i cols, const double* data, const double* x,
                            __m256i n) {
  __mmask8 ok = _mm256_mask_cmplt_epu32_mask(lanes, cols, n);
  __m512d v = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), ok, cols, x, 8);
  return _mm512_mask3_fmadd_pd(_mm512_maskz_loadu_pd(ok, data), v, acc, ok);
}

template <>
inline float RowDot<float, int32_t>(const float* data, const int32_t* indices, const float* x, int64_t begin,
                                    int64_t end, int64_t n) {
  const __m512i bound = _mm512_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(n)));
  __m512 acc = _mm512_setzero_ps();
  for (int64_t j = begin; j < end; j += 16) {
    __mmask16 lanes = FirstLanes16(end - j);
    acc = MaddGathered(acc, lanes, _mm512_maskz_loadu_epi32(lanes, indices + j), data + j, x, bound);
  }
  return LaneSum(acc);
}

template <>
inline double RowDot<double, int32_t>(const double* data, const int32_t* indices, const double* x,
                                      int64_t begin, int64_t end, int64_t n) {
  const __m256i bound = _mm256_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(n)));
  __m512d acc = _mm512_setzero_pd();
  for (int64_t j = begin; j < end; j += 8) {
    __mmask8 lanes = FirstLanes8(end - j);
    acc = MaddGathered(acc, lanes, _mm256_maskz_loadu_epi32(lanes, indices + j), data + j, x, bound);
  }
  return LaneSum(acc);
}

// A COO with sorted rows in one pass, by blocks of 8 entries at a fixed stride: each (row, column)
// pair is a 64-bit lane (the row its low half), the columns its high halves, and the entries whose
// row differs from the one before (a run of one row starts there) a mask from comparing the block
// with itself shifted by one pair (x86 is little-endian). The block's products go to the running
// sum up to each run's start, where that sum is emitted. On the loops alone the alternatives took
// longer: the scalar loop and one pass that found a run's end from the rows of the block it was
// summing (every block's address waited on the comparison of the block before it) about 40%, a
// first pass marking the runs and a second summing them as CSR rows about 20%.
template <typename T>
struct Lanes8;  // 8 lanes of T: the vector type and the operations the one-pass loop needs

template <>
struct Lanes8<float> {
  using V = __m256;
  static V zero() { return _mm256_setzero_ps(); }
  static V products(__mmask8 ok, __m512i cols, const float* data, const float* x) {
    V v = _mm512_mask_i64gather_ps(zero(), ok, cols, x, 4);
    return _mm256_mul_ps(_mm256_maskz_loadu_ps(ok, data), v);  // 0 * 0 outside ok
  }
  static V products(__mmask8 ok, __m256i cols, const float* data, const float* x) {  // 32-bit indices
    V v = _mm256_mmask_i32gather_ps(zero(), ok, cols, x, 4);
    return _mm256_mul_ps(_mm256_maskz_loadu_ps(ok, data), v);
  }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V add(V a, __mmask8 lanes, V b) { return _mm256_mask_add_ps(a, lanes, a, b); }
  static float sum(V a) { return LaneSum(a); }
};

template <>
struct Lanes8<double> {
  using V = __m512d;
  static V zero() { return _mm512_setzero_pd(); }
  static V products(__mmask8 ok, __m512i cols, const double* data, const double* x) {
    V v = _mm512_mask_i64gather_pd(zero(), ok, cols, x, 8);
    return _mm512_mul_pd(_mm512_maskz_loadu_pd(ok, data), v);  // 0 * 0 outside ok
  }
  static V products(__mmask8 ok, __m256i cols, const double* data, const double* x) {  // 32-bit indices
    V v = _mm512_mask_i32gather_pd(zero(), ok, cols, x, 8);
    return _mm512_mul_pd(_mm512_maskz_loadu_pd(ok, data), v);
  }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V add(V a, __mmask8 lanes, V b) { return _mm512_mask_add_pd(a, lanes, a, b); }
  static double sum(V a) { return LaneSum(a); }
};

template <typename T, typename Emit>
bool SortedRowSumsVector(const T* data, const int32_t* pairs, const T* x, int64_t begin, int64_t end, int64_t n,
                         Emit&& emit) {
  using L = Lanes8<T>;
  if (begin >= end) return true;
  const __m512i bound = _mm512_set1_epi64(static_cast<uint32_t>(n));
  const __m512i row_half = _mm512_set1_epi64(0xFFFFFFFF);
  __m512i before = _mm512_set1_epi64(*reinterpret_cast<const int64_t*>(pairs + 2 * begin));
  int32_t row = pairs[2 * begin];
  typename L::V sum = L::zero();
  for (int64_t j = begin; j < end; j += 8) {
    __mmask8 lanes = FirstLanes8(end - j);
    __m512i block = _mm512_maskz_loadu_epi64(lanes, pairs + 2 * j);
    __m512i cols = _mm512_maskz_srli_epi64(0xFF, block, 32);
    __mmask8 ok = _mm512_mask_cmplt_epu64_mask(lanes, cols, bound);
    typename L::V products = L::products(ok, cols, data + j, x);
    __m512i shifted = _mm512_maskz_alignr_epi64(0xFF, block, before, 7);  // the pairs of entries j - 1 .. j + 6
    unsigned starts = _mm512_mask_test_epi64_mask(lanes, _mm512_xor_si512(block, shifted), row_half);
    before = block;
    if (starts == 0) {
      sum = L::add(sum, products);
      continue;
    }
    unsigned from = 0;  // the first lane of the run being summed
    for (; starts; starts &= starts - 1) {
      unsigned lane = std::countr_zero(starts);
      sum = L::add(sum, static_cast<__mmask8>((1u << lane) - (1u << from)), products);
      int32_t next = pairs[2 * (j + lane)];
      if (next < row) return false;
      emit(row, L::sum(sum));
      sum = L::zero(), row = next, from = lane;
    }
    sum = L::add(sum, static_cast<__mmask8>(0x100u - (1u << from)), products);
  }
  emit(row, L::sum(sum));
  return true;
}

#endif  // XP_AVX512

// Calls emit(row, the sum of data[j] * x[column of j] over the row's entries) for each row of the
// entries [begin, end) of a COO with sorted rows (`pairs`: its (nse, 2) indices), in order; false
// (and stops) where a row is below the one before it.
template <typename T, typename I, typename Emit>
bool SortedRowSums(const T* data, const I* pairs, const T* x, int64_t begin, int64_t end, int64_t n,
                   bool claimed, Emit&& emit) {
#ifdef XP_AVX512
  if constexpr (std::is_same_v<I, int32_t> && (std::is_same_v<T, float> || std::is_same_v<T, double>))
    return SortedRowSumsVector(data, pairs, x, begin, end, n, emit);
#endif
  int64_t j = begin;
  I previous = j < end ? pairs[2 * j] : I{};
  while (j < end) {
    I row = pairs[2 * j];
    if (row < previous) return false;
    previous = row;
    T sum = RunDot(data, pairs, x, j, end, row, n, claimed);
    emit(row, sum);
  }
  return true;
}

// --- a parallel loop on XLA's pool -----------------------------------------------------------

// One parallel loop: the chunks left, the chunks done, the slots handed out, and the body,
// type-erased. `body` lives on the caller's stack: it is called only for a chunk claimed below
// n_chunks, and the caller returns only when every claimed chunk is done, so a pool task that
// starts late only touches this shared state (which it holds a reference to).
struct LoopState {
  int64_t n_chunks = 0;
  int max_slots = 1;  // slot 0 (the caller) and one for each helper: per-thread buffers
  const void* body = nullptr;
  void (*run)(const void* body, int64_t chunk, int slot) = nullptr;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::atomic<int> slots{1};
  std::mutex mutex;
  std::condition_variable finished;

  void Work(int slot) {
    for (int64_t c; (c = next.fetch_add(1)) < n_chunks;) {
      run(body, c, slot);
      if (done.fetch_add(1) + 1 == n_chunks) {
        std::lock_guard<std::mutex> lock(mutex);
        finished.notify_all();
      }
    }
  }
  void Join() {  // a helper: takes a slot if one is left and chunks remain
    if (next.load() >= n_chunks) return;
    int slot = slots.fetch_add(1);
    if (slot < max_slots) Work(slot);
  }
};

// A setting from the environment (for measuring), at least `minimum`, or `fallback` where unset.
int64_t Setting(const char* name, int64_t fallback, int64_t minimum) {
  const char* text = std::getenv(name);
  return text ? std::max<int64_t>(minimum, std::atoll(text)) : fallback;
}

// Calls body(chunk, slot) for every chunk in [0, n_chunks), on the calling thread and up to
// `helpers` pool tasks; `slot` (below 1 + helpers) names the participating thread (slot 0: the
// caller), so per-thread buffers can be indexed by it. Returns when every chunk is done; the
// caller alone does them all if no pool task ever starts (no deadlock when XLA's threads are all
// busy). The caller waits for the helpers' last chunks on the loop's condition variable: the
// simplest correct synchronization. A caller spinning before it blocked, and helpers lingering on
// their pool threads for the next loop (polling a mailbox), lost time against it on
// bench/sparse.py's products on a shared machine (bench/RESULTS.md, "native_threads").
template <typename Body>
void ParallelFor(ffi::ThreadPool& pool, int64_t n_chunks, int64_t helpers, const Body& body) {
  if (n_chunks <= 1 || helpers <= 0) {
    for (int64_t c = 0; c < n_chunks; ++c) body(c, 0);
    return;
  }
  auto state = std::make_shared<LoopState>();
  state->n_chunks = n_chunks;
  state->max_slots = static_cast<int>(helpers) + 1;
  state->body = &body;
  state->run = [](const void* b, int64_t c, int slot) { (*static_cast<const Body*>(b))(c, slot); };
  for (int64_t h = 0; h < helpers; ++h) pool.Schedule([state]() { state->Join(); });
  state->Work(0);
  std::unique_lock<std::mutex> lock(state->mutex);
  state->finished.wait(lock, [&] { return state->done.load() == n_chunks; });
}

// Large outputs get the hint that huge pages back them. XLA allocates a fresh output each call,
// and malloc hands large blocks back to the kernel on free (or not: it depends on what the
// process freed before), so the first write into an output can fault once every 4 KB page: over a
// thousand faults a call for a 10 MB BCSR `A @ X` (20000 x 64, float64) in bench/sparse.py's loop.
// Under MADV_HUGEPAGE a first touch maps a whole 2 MB page instead: about a tenth of the faults,
// and the call about 15% faster; where the memory is still mapped the hint changes nothing
// (docs/sparse.md, "The native CPU kernel"). Only the 2 MB-aligned interior of the buffer is
// advised; a hint, so failure (an old kernel, transparent huge pages off) is ignored.
// MADV_POPULATE_WRITE (map the pages in one system call) was slower: it walks the pages that are
// already mapped too.
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kHugePageHintBytes = 2 * kHugePage;

void AdviseHugePages([[maybe_unused]] void* buffer, [[maybe_unused]] size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes < kHugePageHintBytes) return;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(buffer) + kHugePage - 1) & ~(kHugePage - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(buffer) + bytes) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

// XP_NATIVE_MIN_PARALLEL_WORK overrides kMinParallelWork (read once; for measuring it).
int64_t MinParallelWork() {
  static const int64_t value = Setting("XP_NATIVE_MIN_PARALLEL_WORK", kMinParallelWork, 1);
  return value;
}

int64_t Helpers(ffi::ThreadPool& pool, int64_t work) {
  int64_t minimum = MinParallelWork();
  if (work < minimum) return 0;
  int64_t threads = pool.num_threads();
  return std::max<int64_t>(0, std::min<int64_t>(threads, work / minimum) - 1);
}

// --- CSR -------------------------------------------------------------------------------------

template <typename I>
inline int64_t Pointer(const I* indptr, int64_t row, int64_t nse) {
  return std::clamp<int64_t>(static_cast<int64_t>(indptr[row]), 0, nse);
}

#ifdef XP_AVX512
// Chunks whose rows average fewer entries than this go through CsrRowDotsVector, the others
// through RowDot: on rows of 5 entries (the Poisson matrix of bench/cg.py) the stream takes less
// than half RowDot's time, while on rows of 20 (bench/sparse.py's matrix) RowDot stays slightly
// ahead (docs/sparse.md, "The native CPU kernel").
constexpr int64_t kShortRows = 16;

// The rows [row_begin, row_end) of a CSR matrix times a vector in one pass over their entries,
// by blocks of 8 at a fixed stride whatever the rows' lengths, as SortedRowSumsVector does for a
// COO: a row whose last entry falls in the block takes the block's products up to it, and its
// sum is written. RowDot, a loop of its own for each row, pays a gather (16 lanes of float32, 8 of
// float64), a mask and a reduction of all lanes a row however few its entries: on the 2-D Poisson
// matrix (rows of 5 entries) that made a BCSR's float32 A @ x nearly twice SciPy's time. False (y partly written)
// where the row pointers decrease: the caller then runs RowDot, which reads each row on its own
// and takes such a row as empty.
template <typename T>
bool CsrRowDotsVector(const T* data, const int32_t* indices, const int32_t* indptr, const T* x, T* y,
                      int64_t nse, int64_t n, int64_t row_begin, int64_t row_end) {
  using L = Lanes8<T>;
  if (row_begin >= row_end) return true;
  const __m256i bound = _mm256_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(n)));
  const int64_t start = Pointer(indptr, row_begin, nse), stop = Pointer(indptr, row_end, nse);
  int64_t r = row_begin;
  int64_t last = Pointer(indptr, r + 1, nse);  // the end of row r's entries
  if (last < start || stop < start) return false;
  typename L::V sum = L::zero();
  for (int64_t j = start; j < stop; j += 8) {
    __mmask8 lanes = FirstLanes8(stop - j);
    __m256i cols = _mm256_maskz_loadu_epi32(lanes, indices + j);
    __mmask8 ok = _mm256_mask_cmplt_epu32_mask(lanes, cols, bound);
    typename L::V products = L::products(ok, cols, data + j, x);
    unsigned from = 0;  // the first lane of the row being summed
    while (last <= j + 8) {  // row r ends in this block (at lane `last - j`, 0 for an empty row)
      unsigned lane = static_cast<unsigned>(last - j);
      sum = L::add(sum, static_cast<__mmask8>((1u << lane) - (1u << from)), products);
      y[r] = L::sum(sum);
      sum = L::zero(), from = lane;
      if (++r == row_end) return true;
      int64_t next = Pointer(indptr, r + 1, nse);
      if (next < last) return false;
      last = next;
    }
    sum = L::add(sum, static_cast<__mmask8>(0x100u - (1u << from)), products);
  }
  for (;;) {  // the rows left end at the last entry: the one being summed, then empty ones
    y[r] = L::sum(sum);
    sum = L::zero();
    if (++r == row_end) return true;
    int64_t next = Pointer(indptr, r + 1, nse);
    if (next < last) return false;
    last = next;
  }
}
#endif  // XP_AVX512

// The first row whose entries start at or after `entry` (rows split so chunks hold equal entries).
template <typename I>
int64_t RowAtEntry(const I* indptr, int64_t n_rows, int64_t nse, int64_t entry) {
  int64_t lo = 0, hi = n_rows;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (Pointer(indptr, mid, nse) < entry) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// Row boundaries of n_chunks chunks with about equal numbers of entries (and of rows, so that
// empty rows are shared too).
template <typename I>
std::vector<int64_t> RowChunks(const I* indptr, int64_t n_rows, int64_t nse, int64_t n_chunks) {
  std::vector<int64_t> bounds(n_chunks + 1);
  bounds[0] = 0;
  for (int64_t c = 1; c < n_chunks; ++c) {
    int64_t by_entries = RowAtEntry(indptr, n_rows, nse, nse * c / n_chunks);
    bounds[c] = std::max(bounds[c - 1], std::min(by_entries, n_rows));
  }
  bounds[n_chunks] = n_rows;
  return bounds;
}

template <typename T, typename I>
void CsrRows(const T* data, const I* indices, const I* indptr, const T* x, T* y, int64_t nse,
             int64_t n_cols, int64_t k, int64_t row_begin, int64_t row_end) {
#ifdef XP_AVX512
  if constexpr (std::is_same_v<I, int32_t> && (std::is_same_v<T, float> || std::is_same_v<T, double>))
    if (k == 1 &&
        Pointer(indptr, row_end, nse) - Pointer(indptr, row_begin, nse) < kShortRows * (row_end - row_begin) &&
        CsrRowDotsVector(data, indices, indptr, x, y, nse, n_cols, row_begin, row_end))
      return;
#endif
  for (int64_t r = row_begin; r < row_end; ++r) {
    int64_t begin = Pointer(indptr, r, nse);
    int64_t end = std::max(begin, Pointer(indptr, r + 1, nse));
    if (k == 1) {
      y[r] = RowDot(data, indices, x, begin, end, n_cols);
    } else {
      RowTimesMatrix(data, indices, 1, x, n_cols, k, begin, end, nse, y + r * k);
    }
  }
}

// y[indices[j]] += data[j] * x[row of j] for the rows [row_begin, row_end)
template <typename T, typename I>
void CsrRowsTransposed(const T* data, const I* indices, const I* indptr, const T* x, T* y,
                       int64_t nse, int64_t n_cols, int64_t k, int64_t row_begin, int64_t row_end) {
  using U = std::make_unsigned_t<I>;
  for (int64_t r = row_begin; r < row_end; ++r) {
    int64_t begin = Pointer(indptr, r, nse);
    int64_t end = std::max(begin, Pointer(indptr, r + 1, nse));
    if (k == 1) {
      // A loop of its own, x[r] read once into a register. The loop shared with k > 1 tested k
      // and read x[r] through the pointer for every entry (after each store into y, which may
      // alias x for all the compiler knows): this loop takes about 0.6 of that one's time,
      // which puts a CSR's A.T @ x ahead of SciPy's (bench/RESULTS.md, "Sparse arrays").
      const T xr = x[r];
      for (int64_t j = begin; j < end; ++j) {
        U c = static_cast<U>(indices[j]);
        if (c < static_cast<U>(n_cols)) y[c] = Arith<T>::add(y[c], Arith<T>::mul(data[j], xr));
      }
      continue;
    }
    const T* xr = x + r * k;
    for (int64_t j = begin; j < end; ++j) {
      U c = static_cast<U>(indices[j]);
      if (c < static_cast<U>(n_cols)) axpy(y + static_cast<int64_t>(c) * k, data[j], xr, k);
    }
  }
}

// Per-thread output buffers for scatters: slot 0 writes into y itself.
template <typename T>
struct Buffers {
  T* y;
  int64_t size;
  std::vector<std::unique_ptr<T[]>> extra;
  Buffers(T* y, int64_t size, int64_t slots) : y(y), size(size), extra(slots) {}
  T* get(int slot) {
    if (slot == 0) return y;
    if (!extra[slot]) {  // zeroed by its own thread, the only one that touches it
      extra[slot].reset(new T[size]);
      AdviseHugePages(extra[slot].get(), size * sizeof(T));
      std::fill(extra[slot].get(), extra[slot].get() + size, T{});
    }
    return extra[slot].get();
  }
  // y += every other buffer, in parallel over pieces of y
  void Reduce(ffi::ThreadPool& pool, int64_t helpers) {
    std::vector<T*> used;
    for (auto& b : extra)
      if (b) used.push_back(b.get());
    if (used.empty()) return;
    // One chunk (the caller alone) below kMinParallelReduce: a few microseconds, less than a
    // helper's wake-up.
    int64_t n_chunks = size < kMinParallelReduce
                           ? 1
                           : std::max<int64_t>(1, std::min<int64_t>((helpers + 1) * kChunksPerThread, size / 4096));
    ParallelFor(pool, n_chunks, helpers, [&](int64_t c, int) {
      int64_t begin = size * c / n_chunks, end = size * (c + 1) / n_chunks;
      for (T* b : used)
        for (int64_t i = begin; i < end; ++i) y[i] = Arith<T>::add(y[i], b[i]);
    });
  }
};

// Threads for a scatter into n_out * k outputs: each extra thread zeroes and adds up a buffer of
// that size, so it takes at least as many products as outputs to pay.
int64_t ScatterHelpers(ffi::ThreadPool& pool, int64_t work, int64_t outputs) {
  int64_t helpers = Helpers(pool, work);
  return std::min<int64_t>(helpers, std::max<int64_t>(0, work / std::max<int64_t>(outputs, 1) - 1));
}

int64_t Columns(const ffi::AnyBuffer& x) {
  auto dims = x.dimensions();
  return dims.size() == 2 ? dims[1] : 1;
}

int64_t Rows(const ffi::AnyBuffer& x) {
  auto dims = x.dimensions();
  return dims.size() ? dims[0] : 0;
}

template <typename T, typename I>
ffi::Error CsrTyped(ffi::ThreadPool& pool, ffi::AnyBuffer data, ffi::AnyBuffer indices,
                    ffi::AnyBuffer indptr, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                    bool transposed) {
  const T* d = reinterpret_cast<const T*>(data.untyped_data());
  const I* idx = reinterpret_cast<const I*>(indices.untyped_data());
  const I* ptr = reinterpret_cast<const I*>(indptr.untyped_data());
  const T* xv = reinterpret_cast<const T*>(x.untyped_data());
  T* out = reinterpret_cast<T*>(y->untyped_data());
  AdviseHugePages(out, y->size_bytes());
  int64_t nse = std::min<int64_t>(data.element_count(), indices.element_count());
  int64_t n_rows = static_cast<int64_t>(indptr.element_count()) - 1;
  int64_t k = Columns(x);
  int64_t n_x = Rows(x), n_y = Rows(*y);
  if (n_rows < 0 || n_rows != (transposed ? n_x : n_y))
    return ffi::Error::InvalidArgument("xp_csr: indptr does not match the operands' rows");
  int64_t n_cols = transposed ? n_y : n_x;
  int64_t helpers = Helpers(pool, nse * k + n_rows);
  int64_t n_chunks = (helpers + 1) * kChunksPerThread;
  if (helpers == 0) n_chunks = 1;
  std::vector<int64_t> bounds = RowChunks(ptr, n_rows, nse, n_chunks);
  if (!transposed) {
    ParallelFor(pool, n_chunks, helpers, [&](int64_t c, int) {
      CsrRows(d, idx, ptr, xv, out, nse, n_cols, k, bounds[c], bounds[c + 1]);
    });
    return ffi::Error::Success();
  }
  helpers = ScatterHelpers(pool, nse * k, n_cols * k);
  if (helpers == 0) n_chunks = 1, bounds = RowChunks(ptr, n_rows, nse, 1);
  std::fill(out, out + n_cols * k, T{});
  Buffers<T> buffers(out, n_cols * k, helpers + 1);
  ParallelFor(pool, n_chunks, helpers, [&](int64_t c, int slot) {
    CsrRowsTransposed(d, idx, ptr, xv, buffers.get(slot), nse, n_cols, k, bounds[c], bounds[c + 1]);
  });
  buffers.Reduce(pool, helpers);
  return ffi::Error::Success();
}

// --- the data cotangent of a CSR product ------------------------------------------------------

// out[j] = sum over c of ct[o_j, c] * x[i_j, c] for the stored entries j of the rows
// [row_begin, row_end): o_j the row of j and i_j its column (transposed: the other way round).
// An entry with an out-of-range column (JAX's padding) gets 0.
template <typename T, typename I>
void CsrSampledRows(const I* __restrict indices, const I* __restrict indptr, const T* __restrict ct,
                    const T* __restrict x, T* __restrict out, int64_t nse, int64_t n_cols, int64_t k,
                    bool transposed, int64_t row_begin, int64_t row_end) {
  using U = std::make_unsigned_t<I>;
  const T* by_column = transposed ? ct : x;  // the operand indexed by the entry's column
  for (int64_t r = row_begin; r < row_end; ++r) {
    int64_t begin = Pointer(indptr, r, nse);
    int64_t end = std::max(begin, Pointer(indptr, r + 1, nse));
    const T* row = (transposed ? x : ct) + r * k;  // the operand indexed by the entry's row
    if (k == 1) {  // a vector: one product an entry, in a loop the compiler can vectorize
      T v = row[0];
      for (int64_t j = begin; j < end; ++j) {
        U c = static_cast<U>(indices[j]);
        out[j] = c < static_cast<U>(n_cols) ? Arith<T>::mul(v, by_column[c]) : T{};
      }
      continue;
    }
    for (int64_t j = begin; j < end; ++j) {
      U c = static_cast<U>(indices[j]);
      T acc{};
      if (c < static_cast<U>(n_cols)) {
        const T* other = by_column + static_cast<int64_t>(c) * k;
        for (int64_t q = 0; q < k; ++q) acc = Arith<T>::add(acc, Arith<T>::mul(row[q], other[q]));
      }
      out[j] = acc;
    }
  }
}

// ct (n_out, k) and x (n_in, k), or both 1-d; out (nse,). For A @ x, n_out is the number of rows;
// transposed (A.T @ x), the number of columns.
template <typename T, typename I>
ffi::Error CsrSampledTyped(ffi::ThreadPool& pool, ffi::AnyBuffer indices, ffi::AnyBuffer indptr,
                           ffi::AnyBuffer ct, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                           bool transposed) {
  const I* idx = reinterpret_cast<const I*>(indices.untyped_data());
  const I* ptr = reinterpret_cast<const I*>(indptr.untyped_data());
  const T* ctv = reinterpret_cast<const T*>(ct.untyped_data());
  const T* xv = reinterpret_cast<const T*>(x.untyped_data());
  T* out = reinterpret_cast<T*>(y->untyped_data());
  AdviseHugePages(out, y->size_bytes());
  int64_t nse = static_cast<int64_t>(y->element_count());
  if (static_cast<int64_t>(indices.element_count()) < nse)
    return ffi::Error::InvalidArgument("xp_csr_sampled: fewer indices than stored entries");
  int64_t n_rows = static_cast<int64_t>(indptr.element_count()) - 1;
  int64_t k = Columns(x);
  int64_t n_ct = Rows(ct), n_x = Rows(x);
  if (n_rows < 0 || n_rows != (transposed ? n_x : n_ct))
    return ffi::Error::InvalidArgument("xp_csr_sampled: indptr does not match the operands' rows");
  int64_t n_cols = transposed ? n_ct : n_x;
  int64_t helpers = Helpers(pool, nse * std::max<int64_t>(k, 1) + n_rows);
  int64_t n_chunks = helpers == 0 ? 1 : (helpers + 1) * kChunksPerThread;
  std::vector<int64_t> bounds = RowChunks(ptr, n_rows, nse, n_chunks);
  ParallelFor(pool, n_chunks, helpers, [&](int64_t c, int) {
    CsrSampledRows(idx, ptr, ctv, xv, out, nse, n_cols, k, transposed, bounds[c], bounds[c + 1]);
  });
  // Entries in no row (before indptr[0], past indptr[-1]: JAX's padding) get 0. With a valid,
  // nondecreasing indptr the rows cover the rest exactly once; an invalid one can only make
  // rows overlap (each row ends at or past the next one's start), never leave a gap or read
  // out of bounds.
  int64_t first = Pointer(ptr, 0, nse), last = Pointer(ptr, n_rows, nse);
  std::fill(out, out + first, T{});
  std::fill(out + std::max(first, last), out + nse, T{});
  return ffi::Error::Success();
}

// --- COO -------------------------------------------------------------------------------------

// One column of a row-major (nse, 2) index array.
template <typename I>
struct StridedIndex {
  const I* p;
  I operator[](int64_t j) const { return p[2 * j]; }
};

// The sorted path of A @ x (`pairs`: the (nse, 2) indices, rows at even positions): chunks split
// where the row changes, so every row belongs to one chunk; a chunk that meets a decreasing row
// stops and reports it (its rows stay its own, so no thread ever writes another's rows). Returns
// false if the rows were not sorted.
template <typename T, typename I>
bool CooSorted(ffi::ThreadPool& pool, const T* d, const I* pairs, const T* xv, T* out, int64_t nse,
               int64_t n_out, int64_t n_in, int64_t k, int64_t helpers, bool claimed) {
  using U = std::make_unsigned_t<I>;
  StridedIndex<I> out_idx{pairs};
  int64_t n_chunks = helpers == 0 ? 1 : (helpers + 1) * kChunksPerThread;
  std::vector<int64_t> bounds(n_chunks + 1);
  bounds[0] = 0;
  for (int64_t c = 1; c < n_chunks; ++c) {
    int64_t b = std::max(bounds[c - 1], nse * c / n_chunks);
    while (b > 0 && b < nse && out_idx[b] == out_idx[b - 1]) ++b;
    if (b > 0 && b < nse && out_idx[b] < out_idx[b - 1]) return false;
    bounds[c] = b;
  }
  bounds[n_chunks] = nse;
  // The output rows a chunk writes (zeros where no entry falls): from the row after the last one
  // of the entries before it to the last row of its own (the last chunk: to the end). Each chunk
  // zeroes its rows as it goes, while they are in cache, instead of one thread zeroing the whole
  // output before the others start (a pass over n_out * k values on one core).
  auto rows_before = [&](int64_t b) -> int64_t {
    return b == 0 ? 0 : std::clamp<int64_t>(static_cast<int64_t>(out_idx[b - 1]) + 1, 0, n_out);
  };
  std::atomic<bool> unsorted{false};
  ParallelFor(pool, n_chunks, helpers, [&, out_idx, d, xv, out, n_out, n_in, k](int64_t c, int) {
    int64_t next_row = rows_before(bounds[c]);  // the first row not yet written
    int64_t last_row = c + 1 == n_chunks ? n_out : rows_before(bounds[c + 1]);
    auto zero_until = [&](int64_t row) {
      if (row > next_row) std::fill(out + next_row * k, out + row * k, T{});
      next_row = std::max(next_row, row);
    };
    int64_t j = bounds[c], end = bounds[c + 1];
    if (k == 1) {
      bool sorted = SortedRowSums(d, pairs, xv, j, end, n_in, claimed, [&](I r, T sum) {
        if (static_cast<U>(r) >= static_cast<U>(n_out)) return;  // a padding row
        zero_until(static_cast<int64_t>(r));
        out[r] = sum, next_row = static_cast<int64_t>(r) + 1;
      });
      if (sorted) zero_until(last_row);
      else unsorted.store(true, std::memory_order_relaxed);
      return;
    }
    // Run by run (the entries of one row), each a tight loop as in CsrRows.
    I previous = j < end ? out_idx[j] : I{};
    while (j < end) {
      I r = out_idx[j];
      if (r < previous) {
        unsorted.store(true, std::memory_order_relaxed);
        return;
      }
      previous = r;
      if (static_cast<U>(r) < static_cast<U>(n_out)) {
        zero_until(static_cast<int64_t>(r));
        int64_t run_end = j;
        while (run_end < end && out_idx[run_end] == r) ++run_end;
        RowTimesMatrix(d, pairs + 1, 2, xv, n_in, k, j, run_end, nse, out + static_cast<int64_t>(r) * k);
        next_row = static_cast<int64_t>(r) + 1;
        j = run_end;
      } else {  // a padding row: nothing to add
        for (; j < end && out_idx[j] == r; ++j) {}
      }
    }
    zero_until(last_row);
  });
  return !unsorted.load();
}

// y[out[j]] += data[j] * x[in[j]] for the entries [j, end) of a COO's (nse, 2) indices, `column`
// the index column that is `out`: one flat loop, every pointer a local (inside CooTyped's loop
// body, a lambda capturing by reference, the compiler reloaded the data and index pointers at
// every entry). No loop over runs of one row, though A.T @ x of a matrix with sorted rows could
// read x's element once a run: a run's end is a branch the CPU mispredicts once a row, more than
// the flat loop's load of x[row] (a cache hit) costs: by runs, the loop took about a sixth longer
// (docs/sparse.md, "The native CPU kernel").
template <typename T, typename I>
void CooScatterVector(const T* d, const I* pairs, int64_t column, const T* xv, T* y, int64_t j, int64_t end,
                      int64_t n_in, int64_t n_out) {
  using U = std::make_unsigned_t<I>;
  const I* out_idx = pairs + column;
  const I* in_idx = pairs + (1 - column);
  for (; j < end; ++j) {
    U o = static_cast<U>(out_idx[2 * j]), i = static_cast<U>(in_idx[2 * j]);
    // One branch for both checks (always taken but for padding).
    if ((o < static_cast<U>(n_out)) & (i < static_cast<U>(n_in))) y[o] = Arith<T>::add(y[o], Arith<T>::mul(d[j], xv[i]));
  }
}

template <typename T, typename I>
ffi::Error CooTyped(ffi::ThreadPool& pool, ffi::AnyBuffer data, ffi::AnyBuffer indices,
                    ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y, int64_t column, int64_t rows_sorted) {
  using U = std::make_unsigned_t<I>;
  auto dims = indices.dimensions();
  if (dims.size() != 2 || dims[1] != 2 || (column != 0 && column != 1))
    return ffi::Error::InvalidArgument("xp_coo_matmul: indices must be (nse, 2), column 0 or 1");
  int64_t nse = std::min<int64_t>(static_cast<int64_t>(data.element_count()), dims[0]);
  // The (nse, 2) indices are read in place with a stride of 2 (no copies of the columns).
  const I* base = reinterpret_cast<const I*>(indices.untyped_data());
  StridedIndex<I> oi{base + column}, ii{base + (1 - column)};
  const T* d = reinterpret_cast<const T*>(data.untyped_data());
  const T* xv = reinterpret_cast<const T*>(x.untyped_data());
  T* out = reinterpret_cast<T*>(y->untyped_data());
  AdviseHugePages(out, y->size_bytes());
  int64_t k = Columns(x);
  int64_t n_in = Rows(x), n_out = Rows(*y);
  if (column == 0 && CooSorted(pool, d, base, xv, out, nse, n_out, n_in, k, Helpers(pool, nse * k), rows_sorted))
    return ffi::Error::Success();
  int64_t helpers = ScatterHelpers(pool, nse * k, n_out * k);
  int64_t n_chunks = helpers == 0 ? 1 : (helpers + 1) * kChunksPerThread;
  std::fill(out, out + n_out * k, T{});
  Buffers<T> buffers(out, n_out * k, helpers + 1);
  ParallelFor(pool, n_chunks, helpers, [&](int64_t c, int slot) {
    T* target = buffers.get(slot);
    int64_t j = nse * c / n_chunks, end = nse * (c + 1) / n_chunks;
    if (k == 1) return CooScatterVector(d, base, column, xv, target, j, end, n_in, n_out);
    for (; j < end; ++j) {
      U r = static_cast<U>(oi[j]), col = static_cast<U>(ii[j]);
      if (r < static_cast<U>(n_out) && col < static_cast<U>(n_in))
        axpy(target + static_cast<int64_t>(r) * k, d[j], xv + static_cast<int64_t>(col) * k, k);
    }
  });
  buffers.Reduce(pool, helpers);
  return ffi::Error::Success();
}

// --- dtype dispatch --------------------------------------------------------------------------

template <template <typename, typename> class Fn, typename... Args>
ffi::Error Dispatch(const char* name, ffi::DataType value, ffi::DataType index, Args&&... args) {
  auto with_index = [&]<typename T>() -> ffi::Error {
    switch (index) {
      case ffi::DataType::S32: return Fn<T, int32_t>::Call(std::forward<Args>(args)...);
      case ffi::DataType::S64: return Fn<T, int64_t>::Call(std::forward<Args>(args)...);
      default: return ffi::Error::InvalidArgument(std::string(name) + ": indices must be int32 or int64");
    }
  };
  switch (value) {
    case ffi::DataType::F32: return with_index.template operator()<float>();
    case ffi::DataType::F64: return with_index.template operator()<double>();
    case ffi::DataType::C64: return with_index.template operator()<std::complex<float>>();
    case ffi::DataType::C128: return with_index.template operator()<std::complex<double>>();
    case ffi::DataType::S32: return with_index.template operator()<int32_t>();
    case ffi::DataType::S64: return with_index.template operator()<int64_t>();
    default: return ffi::Error::InvalidArgument(std::string(name) + ": unsupported value dtype");
  }
}

template <typename T, typename I>
struct CsrCall {
  template <typename... A>
  static ffi::Error Call(A&&... a) { return CsrTyped<T, I>(std::forward<A>(a)...); }
};

template <typename T, typename I>
struct CsrSampledCall {
  template <typename... A>
  static ffi::Error Call(A&&... a) { return CsrSampledTyped<T, I>(std::forward<A>(a)...); }
};

template <typename T, typename I>
struct CooCall {
  template <typename... A>
  static ffi::Error Call(A&&... a) { return CooTyped<T, I>(std::forward<A>(a)...); }
};

ffi::Error CheckTypes(const char* name, ffi::AnyBuffer data, ffi::AnyBuffer a, ffi::AnyBuffer b,
                      ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer>& y) {
  if (x.element_type() != data.element_type() || y->element_type() != data.element_type())
    return ffi::Error::InvalidArgument(std::string(name) + ": data, x and the result must share a dtype");
  if (a.element_type() != b.element_type())
    return ffi::Error::InvalidArgument(std::string(name) + ": both index arrays must share a dtype");
  if (x.dimensions().size() != y->dimensions().size() || x.dimensions().size() < 1 ||
      x.dimensions().size() > 2 || (x.dimensions().size() == 2 && x.dimensions()[1] != y->dimensions()[1]))
    return ffi::Error::InvalidArgument(std::string(name) + ": x and the result must be 1-d or 2-d alike");
  return ffi::Error::Success();
}

ffi::Error CsrMatmul(ffi::ThreadPool pool, ffi::AnyBuffer data, ffi::AnyBuffer indices,
                     ffi::AnyBuffer indptr, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y) {
  if (auto e = CheckTypes("xp_csr_matmul", data, indices, indptr, x, y); e.failure()) return e;
  return Dispatch<CsrCall>("xp_csr_matmul", data.element_type(), indices.element_type(), pool, data,
                           indices, indptr, x, y, false);
}

ffi::Error CsrRmatmul(ffi::ThreadPool pool, ffi::AnyBuffer data, ffi::AnyBuffer indices,
                      ffi::AnyBuffer indptr, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y) {
  if (auto e = CheckTypes("xp_csr_rmatmul", data, indices, indptr, x, y); e.failure()) return e;
  return Dispatch<CsrCall>("xp_csr_rmatmul", data.element_type(), indices.element_type(), pool, data,
                           indices, indptr, x, y, true);
}

ffi::Error CooMatmul(ffi::ThreadPool pool, ffi::AnyBuffer data, ffi::AnyBuffer indices,
                     ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y, int64_t column, int64_t rows_sorted) {
  if (auto e = CheckTypes("xp_coo_matmul", data, indices, indices, x, y); e.failure()) return e;
  return Dispatch<CooCall>("xp_coo_matmul", data.element_type(), indices.element_type(), pool, data,
                           indices, x, y, column, rows_sorted);
}

ffi::Error CsrSampled(ffi::ThreadPool pool, ffi::AnyBuffer indices, ffi::AnyBuffer indptr,
                      ffi::AnyBuffer ct, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y, int64_t transposed) {
  if (ct.element_type() != x.element_type() || y->element_type() != x.element_type())
    return ffi::Error::InvalidArgument("xp_csr_sampled: ct, x and the result must share a dtype");
  if (indices.element_type() != indptr.element_type())
    return ffi::Error::InvalidArgument("xp_csr_sampled: both index arrays must share a dtype");
  auto cd = ct.dimensions(), xd = x.dimensions();
  if (cd.size() != xd.size() || xd.size() < 1 || xd.size() > 2 || (xd.size() == 2 && cd[1] != xd[1]) ||
      y->dimensions().size() != 1)
    return ffi::Error::InvalidArgument("xp_csr_sampled: ct and x must be 1-d or 2-d alike, the result 1-d");
  return Dispatch<CsrSampledCall>("xp_csr_sampled", x.element_type(), indices.element_type(), pool, indices,
                                  indptr, ct, x, y, transposed != 0);
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(XpCsrMatmul, CsrMatmul,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(XpCsrRmatmul, CsrRmatmul,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(XpCooMatmul, CooMatmul,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<int64_t>("column")
                                  .Attr<int64_t>("rows_sorted"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(XpCsrSampled, CsrSampled,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<int64_t>("transposed"));
