// The native kernel's products called outside XLA, for the sanitizer runs of
// tests/sparse_arrays/test_native_sanitizers.py: an ASan/UBSan or TSan build of the library
// (xp/sparse/_products/native.py, SANITIZERS) linked into this program, whose runtime it then carries
// (inside CPython and jaxlib, neither instrumented, a sanitizer would need preloading, and TSan
// would not see XLA's thread pool synchronize).
//
// It calls the library's FFI handlers (XpCsrMatmul, ...) as XLA does: through a call frame, with
// an XLA_FFI_Api of its own whose thread pool is a few std::threads, so the handlers' decoding,
// their parallel loops (pool tasks, per-thread scatter buffers and their parallel reduction) and
// their loops over the entries all run instrumented. Each
// product is compared with a plain loop over the same buffers (the kernel's rules: padding
// indices add nothing, row pointers clamped to [0, nse]); the output buffers start filled with a
// sentinel, so an element the kernel fails to write shows. Prints what it checked; exits 1 on
// the first wrong value (a sanitizer's finding exits on its own, with its report).

#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "xla/ffi/api/c_api.h"

extern "C" {
XLA_FFI_Error* XpCsrMatmul(XLA_FFI_CallFrame* call_frame);
XLA_FFI_Error* XpCsrRmatmul(XLA_FFI_CallFrame* call_frame);
XLA_FFI_Error* XpCooMatmul(XLA_FFI_CallFrame* call_frame);
XLA_FFI_Error* XpCsrSampled(XLA_FFI_CallFrame* call_frame);
int64_t xp_spgemm_count(int64_t m, int64_t n, const int64_t* a_ptr, const int64_t* a_cols, const int64_t* b_ptr,
                        const int64_t* b_cols, int64_t* row_counts);
void xp_spgemm_fill_float64(int64_t m, int64_t n, const int64_t* a_ptr, const int64_t* a_cols, const double* a_data,
                            const int64_t* b_ptr, const int64_t* b_cols, const double* b_data,
                            const int64_t* row_counts, int64_t* out_cols, double* out_data);
}

struct XLA_FFI_Error {
  std::string message;
};

namespace {

// --- XLA's side: a thread pool and the API functions the handlers call ---------------------------

class Pool {
 public:
  explicit Pool(int n) {
    for (int i = 0; i < n; ++i) threads_.emplace_back([this] { Run(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    ready_.notify_all();
    for (auto& thread : threads_) thread.join();
  }
  void Schedule(XLA_FFI_Task* task, void* data) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.emplace_back(task, data);
    }
    scheduled.fetch_add(1);
    ready_.notify_one();
  }
  int64_t size() const { return static_cast<int64_t>(threads_.size()); }
  std::atomic<int64_t> scheduled{0};

 private:
  void Run() {
    for (;;) {
      std::pair<XLA_FFI_Task*, void*> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = tasks_.front();
        tasks_.pop_front();
      }
      task.first(task.second);
    }
  }
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::pair<XLA_FFI_Task*, void*>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

Pool* ThePool(XLA_FFI_ExecutionContext* ctx) { return reinterpret_cast<Pool*>(ctx); }

XLA_FFI_Error* ErrorCreate(XLA_FFI_Error_Create_Args* args) { return new XLA_FFI_Error{args->message}; }
void ErrorGetMessage(XLA_FFI_Error_GetMessage_Args* args) { args->message = args->error->message.c_str(); }
void ErrorDestroy(XLA_FFI_Error_Destroy_Args* args) { delete args->error; }
XLA_FFI_Error* Schedule(XLA_FFI_ThreadPool_Schedule_Args* args) {
  ThePool(args->ctx)->Schedule(args->task, args->data);
  return nullptr;
}
XLA_FFI_Error* NumThreads(XLA_FFI_ThreadPool_NumThreads_Args* args) {
  *args->num_threads = ThePool(args->ctx)->size();
  return nullptr;
}

XLA_FFI_Api MakeApi() {
  XLA_FFI_Api api{};
  api.struct_size = XLA_FFI_Api_STRUCT_SIZE;
  api.api_version = {XLA_FFI_Api_Version_STRUCT_SIZE, nullptr, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR};
  api.XLA_FFI_Error_Create = ErrorCreate;
  api.XLA_FFI_Error_GetMessage = ErrorGetMessage;
  api.XLA_FFI_Error_Destroy = ErrorDestroy;
  api.XLA_FFI_ThreadPool_Schedule = Schedule;
  api.XLA_FFI_ThreadPool_NumThreads = NumThreads;
  return api;
}

// --- buffers and calls ----------------------------------------------------------------------------

template <typename T> constexpr XLA_FFI_DataType kDType = XLA_FFI_DataType_INVALID;
template <> constexpr XLA_FFI_DataType kDType<float> = XLA_FFI_DataType_F32;
template <> constexpr XLA_FFI_DataType kDType<double> = XLA_FFI_DataType_F64;
template <> constexpr XLA_FFI_DataType kDType<std::complex<float>> = XLA_FFI_DataType_C64;
template <> constexpr XLA_FFI_DataType kDType<std::complex<double>> = XLA_FFI_DataType_C128;
template <> constexpr XLA_FFI_DataType kDType<int32_t> = XLA_FFI_DataType_S32;
template <> constexpr XLA_FFI_DataType kDType<int64_t> = XLA_FFI_DataType_S64;

// An operand or result as XLA passes it: dtype, data, dimensions.
struct Operand {
  std::vector<int64_t> dims;
  XLA_FFI_Buffer buffer{};
  template <typename T>
  Operand(std::vector<T>& values, std::vector<int64_t> shape) : dims(std::move(shape)) {
    buffer = {XLA_FFI_Buffer_STRUCT_SIZE, nullptr, kDType<T>, values.data(), static_cast<int64_t>(dims.size()),
              dims.data()};
  }
  Operand(const Operand&) = delete;
};

struct Attribute {
  std::string name;
  int64_t value;
};

class Caller {
 public:
  explicit Caller(int threads) : pool_(threads), api_(MakeApi()) {}
  // Calls `handler` on `args` into `result` with `attrs` (sorted by name, as XLA passes them).
  void Call(XLA_FFI_Handler* handler, std::vector<Operand*> args, Operand& result, std::vector<Attribute> attrs) {
    std::vector<XLA_FFI_ArgType> arg_types(args.size(), XLA_FFI_ArgType_BUFFER);
    std::vector<void*> arg_ptrs;
    for (Operand* arg : args) arg_ptrs.push_back(&arg->buffer);
    XLA_FFI_RetType ret_type = XLA_FFI_RetType_BUFFER;
    void* ret_ptr = &result.buffer;
    std::vector<XLA_FFI_AttrType> attr_types(attrs.size(), XLA_FFI_AttrType_SCALAR);
    std::vector<XLA_FFI_ByteSpan> spans;
    std::vector<XLA_FFI_Scalar> scalars;
    for (Attribute& attr : attrs) {
      spans.push_back({attr.name.data(), attr.name.size()});
      scalars.push_back({XLA_FFI_DataType_S64, &attr.value});
    }
    std::vector<XLA_FFI_ByteSpan*> names;
    std::vector<void*> attr_ptrs;
    for (size_t i = 0; i < attrs.size(); ++i) names.push_back(&spans[i]), attr_ptrs.push_back(&scalars[i]);
    XLA_FFI_CallFrame frame{};
    frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
    frame.api = &api_;
    frame.ctx = reinterpret_cast<XLA_FFI_ExecutionContext*>(&pool_);
    frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
    frame.args = {XLA_FFI_Args_STRUCT_SIZE, nullptr, static_cast<int64_t>(args.size()), arg_types.data(),
                  arg_ptrs.data()};
    frame.rets = {XLA_FFI_Rets_STRUCT_SIZE, nullptr, 1, &ret_type, &ret_ptr};
    frame.attrs = {XLA_FFI_Attrs_STRUCT_SIZE, nullptr, static_cast<int64_t>(attrs.size()), attr_types.data(),
                   names.data(), attr_ptrs.data()};
    if (XLA_FFI_Error* error = handler(&frame)) {
      std::fprintf(stderr, "native_driver: the handler failed: %s\n", error->message.c_str());
      std::exit(1);
    }
    ++calls;
  }
  int64_t scheduled() const { return pool_.scheduled.load(); }
  int64_t calls = 0;

 private:
  Pool pool_;
  XLA_FFI_Api api_;
};

// --- the reference, and the comparison ------------------------------------------------------------

template <typename T>
T Value(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> small(-5, 5);
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(small(rng));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(small(rng)) / T(4);
  } else {
    using R = typename T::value_type;
    return T(static_cast<R>(small(rng)) / R(4), static_cast<R>(small(rng)) / R(4));
  }
}

template <typename T>
T Sentinel() {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(12345);
  else return T(1e30f);
}

// Values are multiples of 1/4 no larger than 5/4 in magnitude, so every sum here is exact, in
// float32 too and in any order (the kernel's vector lanes, a fused multiply-add): results are
// compared for equality.
int64_t failures = 0;

template <typename T>
void Expect(const std::string& what, const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) std::abort();
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      std::fprintf(stderr, "native_driver: %s: element %zu differs from the reference\n", what.c_str(), i);
      ++failures;
      return;
    }
  }
}

int64_t Clamp(int64_t p, int64_t nse) { return std::clamp<int64_t>(p, 0, nse); }

// A matrix m x n as a BCOO's (nse, 2) index pairs with rows sorted and as CSR buffers of the same
// entries; indices m and n are JAX's padding (some entries past indptr[m] as well).
template <typename I>
struct Matrix {
  int64_t m, n, nse;
  std::vector<I> pairs, indices, indptr;
};

template <typename I>
Matrix<I> RandomMatrix(std::mt19937_64& rng, int64_t m, int64_t n, int64_t nse) {
  std::uniform_int_distribution<int64_t> row(0, m), col(0, n);  // m, n: padding
  std::vector<std::pair<int64_t, int64_t>> entries;
  for (int64_t j = 0; j < nse; ++j) entries.emplace_back(row(rng), col(rng));
  std::sort(entries.begin(), entries.end(), [](auto a, auto b) { return a.first < b.first; });
  Matrix<I> a{m, n, nse, {}, {}, std::vector<I>(m + 1, 0)};
  for (auto [r, c] : entries) {
    a.pairs.push_back(static_cast<I>(r)), a.pairs.push_back(static_cast<I>(c));
    a.indices.push_back(static_cast<I>(c));
    if (r < m) ++a.indptr[r + 1];
  }
  for (int64_t r = 0; r < m; ++r) a.indptr[r + 1] += a.indptr[r];
  return a;
}

template <typename T>
T Add(T a, T b) {  // integers wrap, as the kernel's do
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename T>
T Mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

// y[out] += d[j] * x[in] for the pairs (out, in) that `entries` gives, k columns.
template <typename T, typename Entries>
std::vector<T> Reference(int64_t n_out, int64_t n_in, int64_t k, const std::vector<T>& d, const std::vector<T>& x,
                         Entries&& entries) {
  std::vector<T> y(n_out * k, T{});
  entries([&](int64_t j, int64_t out, int64_t in) {
    if (out < 0 || out >= n_out || in < 0 || in >= n_in) return;
    for (int64_t c = 0; c < k; ++c) y[out * k + c] = Add(y[out * k + c], Mul(d[j], x[in * k + c]));
  });
  return y;
}

// Calls f(j, row, column) for the entries of each CSR row, as the kernel reads them.
template <typename I, typename F>
void CsrEntries(const std::vector<I>& indices, const std::vector<I>& indptr, int64_t nse, F&& f) {
  for (size_t r = 0; r + 1 < indptr.size(); ++r) {
    int64_t begin = Clamp(indptr[r], nse), end = std::max(begin, Clamp(indptr[r + 1], nse));
    for (int64_t j = begin; j < end; ++j) f(j, static_cast<int64_t>(r), static_cast<int64_t>(indices[j]));
  }
}

template <typename T, typename I>
void CheckProducts(Caller& caller, std::mt19937_64& rng, const Matrix<I>& a, int64_t k, const char* what) {
  std::vector<T> d(a.nse), x(a.n * k), xt(a.m * k);
  for (auto& v : d) v = Value<T>(rng);
  for (auto& v : x) v = Value<T>(rng);
  for (auto& v : xt) v = Value<T>(rng);
  std::vector<int64_t> x_shape = k == 1 ? std::vector<int64_t>{a.n} : std::vector<int64_t>{a.n, k};
  std::vector<int64_t> xt_shape = k == 1 ? std::vector<int64_t>{a.m} : std::vector<int64_t>{a.m, k};
  std::vector<I> indices = a.indices, indptr = a.indptr, pairs = a.pairs;
  Operand data_op(d, {a.nse}), indices_op(indices, {a.nse}), indptr_op(indptr, {a.m + 1});
  Operand pairs_op(pairs, {a.nse, 2}), x_op(x, x_shape), xt_op(xt, xt_shape);
  std::string name = std::string(what) + " k=" + std::to_string(k);

  auto csr = [&](auto f) { CsrEntries(a.indices, a.indptr, a.nse, f); };
  auto csr_t = [&](auto f) { CsrEntries(a.indices, a.indptr, a.nse, [&](int64_t j, int64_t r, int64_t c) { f(j, c, r); }); };
  auto coo = [&](int column) {
    return [&, column](auto f) {
      for (int64_t j = 0; j < a.nse; ++j) f(j, int64_t{a.pairs[2 * j + column]}, int64_t{a.pairs[2 * j + 1 - column]});
    };
  };

  std::vector<T> y(a.m * k, Sentinel<T>()), yt(a.n * k, Sentinel<T>());
  Operand y_op(y, xt_shape), yt_op(yt, x_shape);
  caller.Call(XpCsrMatmul, {&data_op, &indices_op, &indptr_op, &x_op}, y_op, {});
  Expect((name + ": CSR A @ x"), y, Reference(a.m, a.n, k, d, x, csr));
  caller.Call(XpCsrRmatmul, {&data_op, &indices_op, &indptr_op, &xt_op}, yt_op, {});
  Expect((name + ": CSR A.T @ x"), yt, Reference(a.n, a.m, k, d, xt, csr_t));
  for (int64_t claimed : {1, 0}) {
    std::fill(y.begin(), y.end(), Sentinel<T>());
    caller.Call(XpCooMatmul, {&data_op, &pairs_op, &x_op}, y_op, {{"column", 0}, {"rows_sorted", claimed}});
    Expect((name + ": COO A @ x"), y, Reference(a.m, a.n, k, d, x, coo(0)));
  }
  std::fill(yt.begin(), yt.end(), Sentinel<T>());
  caller.Call(XpCooMatmul, {&data_op, &pairs_op, &xt_op}, yt_op, {{"column", 1}, {"rows_sorted", 1}});
  Expect((name + ": COO A.T @ x"), yt, Reference(a.n, a.m, k, d, xt, coo(1)));

  // A COO whose rows are not sorted (entries reversed): the sorted path gives up, the scatter runs.
  std::vector<I> reversed(pairs.size());
  for (int64_t j = 0; j < a.nse; ++j) reversed[2 * j] = pairs[2 * (a.nse - 1 - j)], reversed[2 * j + 1] = pairs[2 * (a.nse - 1 - j) + 1];
  std::vector<T> d_reversed(d.rbegin(), d.rend());
  Operand reversed_op(reversed, {a.nse, 2}), d_reversed_op(d_reversed, {a.nse});
  std::fill(y.begin(), y.end(), Sentinel<T>());
  caller.Call(XpCooMatmul, {&d_reversed_op, &reversed_op, &x_op}, y_op, {{"column", 0}, {"rows_sorted", 0}});
  Expect((name + ": unsorted COO A @ x"), y, Reference(a.m, a.n, k, d, x, coo(0)));

  // The data cotangents: out[j] = ct[row of j] . x[column of j] (transposed: the other way round).
  for (int64_t transposed : {0, 1}) {
    // ct has A @ x's rows (m), x A's columns (n); transposed, the cotangent of A.T @ x: ct has
    // A.T @ x's rows (n) and x A's rows (m). Either way the entry (r, c) gives xt[r] . x[c].
    std::vector<T> out(a.nse, Sentinel<T>()), want(a.nse, T{});
    CsrEntries(a.indices, a.indptr, a.nse, [&](int64_t j, int64_t r, int64_t c) {
      if (c < 0 || c >= a.n) return;
      T acc{};
      for (int64_t q = 0; q < k; ++q) acc = Add(acc, Mul(xt[r * k + q], x[c * k + q]));
      want[j] = acc;
    });
    Operand out_op(out, {a.nse});
    if (transposed)
      caller.Call(XpCsrSampled, {&indices_op, &indptr_op, &x_op, &xt_op}, out_op, {{"transposed", 1}});
    else
      caller.Call(XpCsrSampled, {&indices_op, &indptr_op, &xt_op, &x_op}, out_op, {{"transposed", 0}});
    Expect((name + ": CSR data cotangent"), out, want);
  }
}

// Row pointers out of order and out of range: each read stays within the buffers.
template <typename T, typename I>
void CheckCorruptRowPointers(Caller& caller, std::mt19937_64& rng, int64_t k) {
  Matrix<I> a = RandomMatrix<I>(rng, 300, 200, 3000);
  std::uniform_int_distribution<int64_t> pointer(-50, a.nse + 50);
  for (size_t r = 1; r < a.indptr.size(); r += 3) a.indptr[r] = static_cast<I>(pointer(rng));
  std::vector<T> d(a.nse), x(a.n * k), y(a.m * k, Sentinel<T>());
  for (auto& v : d) v = Value<T>(rng);
  for (auto& v : x) v = Value<T>(rng);
  std::vector<int64_t> x_shape = k == 1 ? std::vector<int64_t>{a.n} : std::vector<int64_t>{a.n, k};
  std::vector<int64_t> y_shape = k == 1 ? std::vector<int64_t>{a.m} : std::vector<int64_t>{a.m, k};
  Operand data_op(d, {a.nse}), indices_op(a.indices, {a.nse}), indptr_op(a.indptr, {a.m + 1});
  Operand x_op(x, x_shape), y_op(y, y_shape);
  caller.Call(XpCsrMatmul, {&data_op, &indices_op, &indptr_op, &x_op}, y_op, {});
  auto csr = [&](auto f) { CsrEntries(a.indices, a.indptr, a.nse, f); };
  Expect("corrupt row pointers: CSR A @ x", y, Reference(a.m, a.n, k, d, x, csr));
}

// The eager product of two sparse matrices (native_spgemm.cc) against the dense product.
void CheckSpgemm(std::mt19937_64& rng) {
  const int64_t m = 40, inner = 30, n = 50;
  auto random_csr = [&](int64_t rows, int64_t cols, std::vector<int64_t>& ptr, std::vector<int64_t>& idx,
                        std::vector<double>& val, std::vector<double>& dense) {
    std::bernoulli_distribution stored(0.1);
    dense.assign(rows * cols, 0.0), ptr.assign(1, 0);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c)
        if (stored(rng)) {
          idx.push_back(c), val.push_back(Value<double>(rng));
          dense[r * cols + c] = val.back();
        }
      ptr.push_back(static_cast<int64_t>(idx.size()));
    }
  };
  std::vector<int64_t> a_ptr, a_idx, b_ptr, b_idx;
  std::vector<double> a_val, b_val, a_dense, b_dense;
  random_csr(m, inner, a_ptr, a_idx, a_val, a_dense);
  random_csr(inner, n, b_ptr, b_idx, b_val, b_dense);
  std::vector<int64_t> counts(m + 1);
  int64_t total = xp_spgemm_count(m, n, a_ptr.data(), a_idx.data(), b_ptr.data(), b_idx.data(), counts.data());
  std::vector<int64_t> cols(total);
  std::vector<double> vals(total);
  xp_spgemm_fill_float64(m, n, a_ptr.data(), a_idx.data(), a_val.data(), b_ptr.data(), b_idx.data(), b_val.data(),
                         counts.data(), cols.data(), vals.data());
  std::vector<double> got(m * n, 0.0), want(m * n, 0.0);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t p = counts[r]; p < counts[r + 1]; ++p) got[r * n + cols[p]] += vals[p];
  for (int64_t r = 0; r < m; ++r)
    for (int64_t q = 0; q < inner; ++q)
      for (int64_t c = 0; c < n; ++c) want[r * n + c] += a_dense[r * inner + q] * b_dense[q * n + c];
  Expect("sparse @ sparse", got, want);
}

template <typename T, typename I>
void CheckType(Caller& caller, std::mt19937_64& rng, const char* what) {
  Matrix<I> small = RandomMatrix<I>(rng, 300, 200, 3000);
  for (int64_t k : {1, 3, 8, 17, 64}) CheckProducts<T>(caller, rng, small, k, what);
  CheckCorruptRowPointers<T, I>(caller, rng, 1);
  CheckCorruptRowPointers<T, I>(caller, rng, 5);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 2;
  // Every product here on the parallel path (the kernel reads the setting at its first call)
  setenv("XP_NATIVE_MIN_PARALLEL_WORK", "64", 1);
  std::mt19937_64 rng(42);
  Caller caller(4);
  for (int round = 0; round < rounds; ++round) {
    CheckType<float, int32_t>(caller, rng, "float32/int32");
    CheckType<double, int32_t>(caller, rng, "float64/int32");
    CheckType<double, int64_t>(caller, rng, "float64/int64");
    CheckType<std::complex<float>, int32_t>(caller, rng, "complex64/int32");
    CheckType<std::complex<double>, int64_t>(caller, rng, "complex128/int64");
    CheckType<int32_t, int32_t>(caller, rng, "int32/int32");
    CheckType<int64_t, int64_t>(caller, rng, "int64/int64");
    CheckSpgemm(rng);
  }
  // A scatter whose per-thread buffers are added up in parallel (A.T @ X with 4096 x 64 outputs).
  Matrix<int32_t> wide = RandomMatrix<int32_t>(rng, 512, 4096, 40000);
  CheckProducts<double>(caller, rng, wide, 64, "float64/int32 wide");
  std::printf("native_driver: %lld products checked, %lld pool tasks scheduled, %lld failures\n",
              static_cast<long long>(caller.calls), static_cast<long long>(caller.scheduled()),
              static_cast<long long>(failures));
  return failures ? 1 : 0;
}
