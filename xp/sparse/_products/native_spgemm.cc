// The product of two sparse matrices in CSR form, C = A @ B, on the host (xp/sparse/_products/sparse_sparse.py).
//
// Built into the same library as the products' FFI kernels (native_spmm.cc; xp/sparse/_products/native.py
// builds and loads it) and called through ctypes on NumPy buffers: the result's size depends on the
// operands' coordinates, so it is computed eagerly, outside XLA. Gustavson's algorithm in two passes,
// as SciPy's csr_matmat: the first counts each row's distinct columns (a marker per column), the
// second sums each row's products in a dense accumulator and writes its columns in increasing order.
//
// The result is the one NumPy computes in _sparse_products.py (which the tests check): every
// coordinate that a pair of stored elements reaches is stored, a sum of zero too, each sum starting
// from its first product (so a sum of one -0.0 is -0.0). The sums are added in the order of A's
// elements in the row, then B's in theirs (NumPy adds pairwise: the two may differ in rounding).
// Indices are int64; rows of A and B are their elements' runs, in any column order.

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

// Fills row_counts (m + 1 entries: 0, then running totals) and returns the number of stored elements.
int64_t CountRows(int64_t m, int64_t n, const int64_t* a_ptr, const int64_t* a_cols, const int64_t* b_ptr,
                  const int64_t* b_cols, int64_t* row_counts) {
  std::vector<int64_t> marker(static_cast<size_t>(n), -1);
  int64_t total = 0;
  row_counts[0] = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = a_ptr[i]; p < a_ptr[i + 1]; ++p) {
      const int64_t k = a_cols[p];
      for (int64_t q = b_ptr[k]; q < b_ptr[k + 1]; ++q) {
        const int64_t j = b_cols[q];
        if (marker[j] != i) {
          marker[j] = i;
          ++total;
        }
      }
    }
    row_counts[i + 1] = total;
  }
  return total;
}

template <typename T>
void FillRows(int64_t m, int64_t n, const int64_t* a_ptr, const int64_t* a_cols, const T* a_data,
              const int64_t* b_ptr, const int64_t* b_cols, const T* b_data, const int64_t* row_counts,
              int64_t* out_cols, T* out_data) {
  std::vector<T> sums(static_cast<size_t>(n));
  std::vector<int64_t> marker(static_cast<size_t>(n), -1);
  for (int64_t i = 0; i < m; ++i) {
    int64_t* cols = out_cols + row_counts[i];
    int64_t count = 0;
    for (int64_t p = a_ptr[i]; p < a_ptr[i + 1]; ++p) {
      const int64_t k = a_cols[p];
      const T a = a_data[p];
      for (int64_t q = b_ptr[k]; q < b_ptr[k + 1]; ++q) {
        const int64_t j = b_cols[q];
        const T product = a * b_data[q];
        if (marker[j] != i) {
          marker[j] = i;
          sums[j] = product;
          cols[count++] = j;
        } else {
          sums[j] += product;
        }
      }
    }
    std::sort(cols, cols + count);
    T* data = out_data + row_counts[i];
    for (int64_t c = 0; c < count; ++c) data[c] = sums[cols[c]];
  }
}

}  // namespace

extern "C" {

int64_t xp_spgemm_count(int64_t m, int64_t n, const int64_t* a_ptr, const int64_t* a_cols, const int64_t* b_ptr,
                        const int64_t* b_cols, int64_t* row_counts) {
  return CountRows(m, n, a_ptr, a_cols, b_ptr, b_cols, row_counts);
}

#define XP_SPGEMM_FILL(suffix, type)                                                                         \
  void xp_spgemm_fill_##suffix(int64_t m, int64_t n, const int64_t* a_ptr, const int64_t* a_cols,           \
                               const type* a_data, const int64_t* b_ptr, const int64_t* b_cols,             \
                               const type* b_data, const int64_t* row_counts, int64_t* out_cols,            \
                               type* out_data) {                                                             \
    FillRows<type>(m, n, a_ptr, a_cols, a_data, b_ptr, b_cols, b_data, row_counts, out_cols, out_data);     \
  }

// Real floating types only: integer products stay in NumPy, where overflow wraps (C++ leaves a signed
// overflow undefined), and complex ones too, whose infinities C++ (C's Annex G) and NumPy treat
// differently.
XP_SPGEMM_FILL(float32, float)
XP_SPGEMM_FILL(float64, double)

#undef XP_SPGEMM_FILL

}  // extern "C"
