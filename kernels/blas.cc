#include "kernels/blas.h"

#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <thread>
#include <type_traits>
#include <vector>

#include "dispatcher/core/scalar_type.h"
#include "kernels/dtype_dispatch.h"

namespace turnout {
namespace blas_internal {
namespace {

// How row-major CBLAS sees a rows x cols operand with strides (rs, cs):
// NoTrans with leading dimension rs when its rows are contiguous, Trans with
// leading dimension cs when its columns are. A size-1 dimension's stride is
// meaningless, so it never disqualifies the operand.
struct BlasOperand {
  bool ok = false;
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  int64_t ld = 1;
};

BlasOperand describe(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  BlasOperand d;
  if (cs == 1 || cols <= 1) {
    const int64_t ld = rows <= 1 ? std::max<int64_t>(cols, 1) : rs;
    if (ld >= std::max<int64_t>(cols, 1)) {
      d.ok = true;
      d.trans = CblasNoTrans;
      d.ld = ld;
      return d;
    }
  }
  if (rs == 1 || rows <= 1) {
    const int64_t ld = cols <= 1 ? std::max<int64_t>(rows, 1) : cs;
    if (ld >= std::max<int64_t>(rows, 1)) {
      d.ok = true;
      d.trans = CblasTrans;
      d.ld = ld;
      return d;
    }
  }
  return d;
}

bool fitsBlasInt(int64_t v) { return v <= INT_MAX; }

// OpenBLAS and process exit. OpenBLAS's library destructor (gotoblas_quit,
// run by exit() after every atexit handler) tells its worker threads to stop
// and joins them; that join hangs for ever when a worker misses the stop,
// which happens when another thread is inside a BLAS call at that moment,
// or when the workers are still going back to sleep after one: a daemon
// thread in mm at the end of a Python program, a C++ program that returns
// from main while a worker thread multiplies.
//
// So exit() first runs drainAtExit (when it finalizes this library, before
// OpenBLAS's destructor, see DrainAtExit below): from then on a
// gemm takes the plain loop instead of OpenBLAS; it waits for the calls
// already inside OpenBLAS to return; then it tells OpenBLAS that its thread
// server is down (blas_server_avail, the exported flag its shutdown tests
// first, looked up by name so that another BLAS is left alone), so its
// destructor frees its buffers and joins nothing. The workers end with the
// process. Cost on every call: one atomic increment and decrement, and one
// load.
std::atomic<int> blas_calls_in_flight{0};
std::atomic<bool> blas_exiting{false};

void drainAtExit() {
  // seq_cst on both sides (here and in BlasCall): either this load sees a
  // caller's increment, or that caller sees the flag and stays out.
  blas_exiting.store(true);
  while (blas_calls_in_flight.load() != 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // No call is inside OpenBLAS (none holds its server lock), and none will
  // enter: its shutdown may skip the workers.
  if (void* avail = dlsym(RTLD_DEFAULT, "blas_server_avail")) {
    *static_cast<int*>(avail) = 0;
  }
}

// Registered as a static object's destructor, not with std::atexit: both
// go on glibc's exit list with this library's DSO handle, so they run when
// exit() finalizes this library, before the libraries it depends on
// (OpenBLAS's destructor among them). ThreadSanitizer's interceptor of
// atexit() registers the handler without the DSO handle, which moved it
// after every library destructor: OpenBLAS had joined its workers before
// the drain, and a product in flight waited for them for ever (the cause
// of blas_exit_test's hang under TSan). Its interceptor of __cxa_atexit,
// which static destructors use, keeps the handle.
struct DrainAtExit {
  ~DrainAtExit() { drainAtExit(); }
};
[[maybe_unused]] DrainAtExit drain_at_exit;

// Marks one call inside OpenBLAS; entered() is false once exit has begun
// (the caller must then not call OpenBLAS).
class BlasCall {
 public:
  BlasCall() {
    blas_calls_in_flight.fetch_add(1);
    entered_ = !blas_exiting.load();
    if (!entered_) blas_calls_in_flight.fetch_sub(1);
  }
  ~BlasCall() {
    if (entered_) blas_calls_in_flight.fetch_sub(1);
  }
  BlasCall(const BlasCall&) = delete;
  BlasCall& operator=(const BlasCall&) = delete;
  bool entered() const { return entered_; }

 private:
  bool entered_;
};

template <class T>
void cblasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n,
               int64_t k, T alpha, const T* a, int64_t lda, const T* b,
               int64_t ldb, T beta, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta, tb, static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
                static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta,
                c, static_cast<blasint>(ldc));
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
                static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta,
                c, static_cast<blasint>(ldc));
  }
}

// C (row-major with leading dimension ldc) = beta*C + alpha*A@B through
// CBLAS, copying an operand that CBLAS cannot describe.
template <class T>
void blasGemmRowMajorC(int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                       int64_t a_rs, int64_t a_cs, const T* b, int64_t b_rs,
                       int64_t b_cs, T beta, T* c, int64_t ldc) {
  std::vector<T> a_copy;
  std::vector<T> b_copy;
  BlasOperand da = describe(m, k, a_rs, a_cs);
  if (!da.ok) {
    a_copy.resize(static_cast<size_t>(m * k));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < k; ++j)
        a_copy[i * k + j] = a[i * a_rs + j * a_cs];
    }
    a = a_copy.data();
    da = describe(m, k, k, 1);
  }
  BlasOperand db = describe(k, n, b_rs, b_cs);
  if (!db.ok) {
    b_copy.resize(static_cast<size_t>(k * n));
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < n; ++j)
        b_copy[i * n + j] = b[i * b_rs + j * b_cs];
    }
    b = b_copy.data();
    db = describe(k, n, n, 1);
  }
  cblasGemm<T>(da.trans, db.trans, m, n, k, alpha, a, da.ld, b, db.ld, beta, c,
               ldc);
}

// The loop for the types BLAS does not have: i-k-j order with a row of
// accumulators, so the inner loop runs along B's and C's rows.
template <class T, class S>
void loopGemm(int64_t m, int64_t n, int64_t k, S alpha, const T* a,
              int64_t a_rs, int64_t a_cs, const T* b, int64_t b_rs,
              int64_t b_cs, S beta, T* c, int64_t c_rs, int64_t c_cs) {
  using Acc = OpMathType<T>;
  std::vector<Acc> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), Acc(0));
    for (int64_t p = 0; p < k; ++p) {
      const Acc av = static_cast<Acc>(a[i * a_rs + p * a_cs]);
      const T* brow = b + p * b_rs;
      for (int64_t j = 0; j < n; ++j) {
        row[j] += av * static_cast<Acc>(brow[j * b_cs]);
      }
    }
    T* crow = c + i * c_rs;
    for (int64_t j = 0; j < n; ++j) {
      Acc v = static_cast<Acc>(alpha) * row[j];
      if (beta != S(0))
        v += static_cast<Acc>(beta) * static_cast<Acc>(crow[j * c_cs]);
      crow[j * c_cs] = static_cast<T>(v);
    }
  }
}

}  // namespace

template <class T, class S>
void gemm(int64_t m, int64_t n, int64_t k, S alpha, const T* a, int64_t a_rs,
          int64_t a_cs, const T* b, int64_t b_rs, int64_t b_cs, S beta, T* c,
          int64_t c_rs, int64_t c_cs) {
  static_assert(std::is_same_v<S, OpMathType<T>>,
                "gemm: alpha and beta have the element's math type");
  if (m == 0 || n == 0) return;
  constexpr bool kBlas = std::is_same_v<T, float> || std::is_same_v<T, double>;
  if constexpr (kBlas) {
    const BlasCall call;
    if (call.entered() && fitsBlasInt(m) && fitsBlasInt(n) && fitsBlasInt(k) &&
        fitsBlasInt(std::max({a_rs, a_cs, b_rs, b_cs, c_rs, c_cs}))) {
      if (k == 0) {
        // CBLAS would do the same; this also covers k == 0 leading
        // dimensions that some BLAS builds reject.
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            T& v = c[i * c_rs + j * c_cs];
            v = beta == T(0) ? T(0) : beta * v;
          }
        }
        return;
      }
      BlasOperand dc = describe(m, n, c_rs, c_cs);
      if (dc.ok && dc.trans == CblasNoTrans) {
        blasGemmRowMajorC<T>(m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta,
                             c, dc.ld);
        return;
      }
      if (dc.ok) {
        // C is column-major: compute C^T = B^T @ A^T, which is row-major.
        blasGemmRowMajorC<T>(n, m, k, alpha, b, b_cs, b_rs, a, a_cs, a_rs, beta,
                             c, dc.ld);
        return;
      }
      // C has no unit stride: compute into a contiguous buffer.
      std::vector<T> tmp(static_cast<size_t>(m * n));
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) tmp[i * n + j] = c[i * c_rs + j * c_cs];
      }
      blasGemmRowMajorC<T>(m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta,
                           tmp.data(), n);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) c[i * c_rs + j * c_cs] = tmp[i * n + j];
      }
      return;
    }
  }
  loopGemm<T, S>(m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs,
                 c_cs);
}

#define TURNOUT_INSTANTIATE_GEMM(T)                                         \
  template void gemm<T, OpMathType<T>>(                                     \
      int64_t, int64_t, int64_t, OpMathType<T>, const T*, int64_t, int64_t, \
      const T*, int64_t, int64_t, OpMathType<T>, T*, int64_t, int64_t);
TURNOUT_INSTANTIATE_GEMM(uint8_t)
TURNOUT_INSTANTIATE_GEMM(int8_t)
TURNOUT_INSTANTIATE_GEMM(int16_t)
TURNOUT_INSTANTIATE_GEMM(int32_t)
TURNOUT_INSTANTIATE_GEMM(int64_t)
TURNOUT_INSTANTIATE_GEMM(Half)
TURNOUT_INSTANTIATE_GEMM(BFloat16)
TURNOUT_INSTANTIATE_GEMM(float)
TURNOUT_INSTANTIATE_GEMM(double)
#undef TURNOUT_INSTANTIATE_GEMM

}  // namespace blas_internal
}  // namespace turnout
