// Every CUDA kernel against the CPU kernel: the same call on CPU inputs and
// on CUDA copies of them must give the same sizes, dtype and values (NaN
// matching NaN, an infinity the same infinity; floating results within a
// tolerance for reassociated sums and libm differences). Skips when no CUDA
// device is present.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "dispatcher/core/error.h"
#include "kernels/cuda/cuda_utils.h"
#include "kernels/ops.h"
#include "tests/error_of.h"
#include "tests/kernels/cuda/compare.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using testing::cpuDevice;
using testing::cudaDevice;
using testing::errorOf;
using testing::expectSame;
using testing::isReduced;
using testing::mixed;
using testing::on;
using testing::OnDevice;
using testing::rangeOf;
using testing::stridedCopy;
using testing::stridedOn;
using testing::tensorOf;
using testing::transposed;
using testing::valuesOf;

class CudaKernels : public testing::CudaTest {};

const ScalarType kDtypes[] = {kFloat, kDouble, kHalf, kBFloat16,
                              kLong,  kInt,    kByte, kBool};

TEST_F(CudaKernels, CopyRoundTripsEveryDtypeAndLayout) {
  for (ScalarType dt : kDtypes) {
    const Tensor x = mixed(dt, {3, 4});
    expectSame(std::string("contiguous ") + toString(dt),
               [&](Device d) { return on(d, x); });
    expectSame(std::string("transposed ") + toString(dt),
               [&](Device d) { return transposed(on(d, x), 0, 1); });
    expectSame(std::string("strided ") + toString(dt),
               [&](Device d) { return on(d, stridedCopy(x)); });
    // Device-side conversion and broadcast: copy_ into another dtype.
    expectSame(std::string("copy_ converting ") + toString(dt), [&](Device d) {
      Tensor out = empty({2, 3, 4}, TensorOptions(kDouble).device(d));
      copy_(out, on(d, x));
      return out;
    });
    // Device to host into a strided CPU tensor.
    expectSame(std::string("device to strided host ") + toString(dt),
               [&](Device d) {
                 Tensor host = stridedCopy(zeros({3, 4}, dt));
                 copy_(host, on(d, x));
                 return on(d, host);
               });
  }
}

TEST_F(CudaKernels, FillAndFactories) {
  expectSame("fill_", [](Device d) {
    Tensor t = empty({5}, TensorOptions(kInt).device(d));
    fill_(t, 7);
    return t;
  });
  expectSame("zeros", [](Device d) { return zeros({2, 3}, d); });
  expectSame("ones Half", [](Device d) {
    return ones({4}, TensorOptions(kHalf).device(d));
  });
  expectSame("full Long", [](Device d) {
    return full({3}, 5, TensorOptions().device(d));
  });
  expectSame("arange", [](Device d) {
    return arange(0, 2, 0.25, TensorOptions().device(d));
  });
  expectSame("empty_strided", [](Device d) {
    Tensor t = empty_strided({2, 3}, {1, 2}, TensorOptions().device(d));
    fill_(t, 1.5);
    return t;
  });
  EXPECT_THAT(errorOf([] { fill_(zeros({2}, TensorOptions(kByte).device(
                                               cudaDevice())),
                                 300); }),
              HasSubstr("cannot be converted to type Byte"));
}

TEST_F(CudaKernels, BinaryOperatorsMatchCpu) {
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&, const Tensor&)> f;
  };
  const std::vector<Case> cases = {
      {"add", [](const Tensor& a, const Tensor& b) { return add(a, b, 2); }},
      {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); }},
      {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }},
      {"div", [](const Tensor& a, const Tensor& b) { return div(a, b); }},
      {"eq", [](const Tensor& a, const Tensor& b) { return eq(a, b); }},
      {"ne", [](const Tensor& a, const Tensor& b) { return ne(a, b); }},
      {"lt", [](const Tensor& a, const Tensor& b) { return lt(a, b); }},
      {"le", [](const Tensor& a, const Tensor& b) { return le(a, b); }},
      {"gt", [](const Tensor& a, const Tensor& b) { return gt(a, b); }},
      {"ge", [](const Tensor& a, const Tensor& b) { return ge(a, b); }},
  };
  struct Inputs {
    const char* name;
    Tensor a, b;
  };
  const std::vector<Inputs> inputs = {
      {"float", mixed(kFloat, {3, 4}), mixed(kFloat, {3, 4}, 0.5, -1.0)},
      {"broadcast", mixed(kFloat, {2, 1, 4}), mixed(kFloat, {3, 1}, 0.7, 0.1)},
      {"int and float", mixed(kInt, {3, 4}, 1.0, -5.0), mixed(kFloat, {4})},
      {"long", mixed(kLong, {6}, 3.0, -7.0), mixed(kLong, {6}, 2.0, 1.0)},
      {"half and double 0-dim", mixed(kHalf, {5}), tensorOf({1.5}, {}, kDouble)},
      {"transposed", transposed(mixed(kDouble, {4, 3}), 0, 1),
       stridedCopy(mixed(kDouble, {3, 4}, 0.2, 0.3))},
  };
  for (const Case& c : cases) {
    for (const Inputs& in : inputs) {
      expectSame(std::string(c.name) + " " + in.name, [&](Device d) {
        return c.f(on(d, in.a), on(d, in.b));
      });
      // A 0-dim CPU tensor goes with a CUDA tensor, as a number would.
      expectSame(std::string(c.name) + " with a CPU scalar " + in.name,
                 [&](Device d) {
                   return c.f(on(d, in.a), tensorOf({2.0}, {}, kLong));
                 });
    }
  }
}

TEST_F(CudaKernels, ScalarInplaceAndOutOverloadsMatchCpu) {
  const Tensor x = mixed(kFloat, {3, 4});
  const Tensor y = mixed(kFloat, {4}, 0.25, 1.0);
  const Tensor n = mixed(kLong, {3, 4}, 1.0, -6.0);
  expectSame("add.Scalar", [&](Device d) { return add(on(d, x), 2.5, 3); });
  expectSame("sub.Scalar", [&](Device d) { return sub(on(d, n), 4); });
  expectSame("mul.Scalar long*float", [&](Device d) { return mul(on(d, n), 0.5); });
  expectSame("div.Scalar", [&](Device d) { return div(on(d, n), 4); });
  expectSame("lt.Scalar", [&](Device d) { return lt(on(d, x), 0.1); });
  expectSame("add_", [&](Device d) {
    Tensor t = on(d, x);
    add_(t, on(d, y), 2);
    return t;
  });
  expectSame("mul_ Scalar", [&](Device d) {
    Tensor t = on(d, n);
    mul_(t, 3);
    return t;
  });
  expectSame("div_ into a transposed view", [&](Device d) {
    Tensor t = on(d, mixed(kDouble, {4, 3}));
    div_(transposed(t, 0, 1), on(d, y));
    return t;
  });
  expectSame("add.out into Double", [&](Device d) {
    Tensor out = empty({3, 4}, TensorOptions(kDouble).device(d));
    add_out(out, on(d, x), on(d, y));
    return out;
  });
  expectSame("div.out", [&](Device d) {
    Tensor out = empty({3, 4}, TensorOptions(kFloat).device(d));
    div_out(out, on(d, n), on(d, y));
    return out;
  });
}

TEST_F(CudaKernels, UnaryOperatorsMatchCpu) {
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&)> f;
    std::vector<ScalarType> dtypes;
  };
  const std::vector<ScalarType> signed_types = {kFloat, kDouble, kHalf,
                                                kBFloat16, kLong, kInt};
  const std::vector<ScalarType> all = {kFloat, kDouble, kHalf, kBFloat16,
                                       kLong,  kInt,    kByte};
  const std::vector<Case> cases = {
      {"neg", [](const Tensor& x) { return neg(x); }, signed_types},
      {"abs", [](const Tensor& x) { return abs(x); }, signed_types},
      {"exp", [](const Tensor& x) { return exp(x); }, all},
      {"log", [](const Tensor& x) { return log(x); }, all},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }, all},
      {"tanh", [](const Tensor& x) { return tanh(x); }, all},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }, all},
      {"relu", [](const Tensor& x) { return relu(x); }, signed_types},
      {"pow 2", [](const Tensor& x) { return pow(x, 2); }, all},
      {"pow 1.5", [](const Tensor& x) { return pow(x, 1.5); }, all},
      {"pow 3 integral", [](const Tensor& x) { return pow(x, 3); }, {kLong, kInt}},
      {"clamp", [](const Tensor& x) { return clamp(x, 0, 2); }, all},
      {"clamp signed", [](const Tensor& x) { return clamp(x, -1, 2); },
       signed_types},
      {"clamp max only", [](const Tensor& x) { return clamp(x, std::nullopt, 0.5); },
       {kFloat, kDouble}},
  };
  for (const Case& c : cases) {
    for (ScalarType dt : c.dtypes) {
      const Tensor x = mixed(dt, {3, 5}, 0.41, -2.5);
      // Half and BFloat16 round each result: compare at their precision.
      const double rtol = dt == kHalf || dt == kBFloat16 ? 1e-2 : 1e-5;
      expectSame(std::string(c.name) + " " + toString(dt),
                 [&](Device d) { return c.f(on(d, x)); }, rtol);
      expectSame(std::string(c.name) + " transposed " + toString(dt),
                 [&](Device d) { return c.f(transposed(on(d, x), 0, 1)); },
                 rtol);
    }
  }
}

TEST_F(CudaKernels, WhereMatchesCpu) {
  const Tensor cond = gt(mixed(kFloat, {3, 1}), -1.7);
  expectSame("where broadcast and promoted", [&](Device d) {
    return where(on(d, cond), on(d, mixed(kInt, {4})),
                 on(d, mixed(kDouble, {3, 4})));
  });
}

TEST_F(CudaKernels, NanPropagatesAsOnCpu) {
  const Tensor x = tensorOf({1, std::nan(""), -3, 4}, {2, 2});
  expectSame("clamp NaN", [&](Device d) { return clamp(on(d, x), 0, 2); });
  expectSame("relu NaN", [&](Device d) { return relu(on(d, x)); });
  expectSame("amax NaN", [&](Device d) { return amax(on(d, x), {1}); });
  expectSame("argmax NaN", [&](Device d) { return argmax(on(d, x)); });
}

TEST_F(CudaKernels, ReductionsMatchCpu) {
  for (ScalarType dt : {kFloat, kDouble, kLong, kInt, kHalf, kBool}) {
    const Tensor x = mixed(dt, {3, 4, 5}, 0.13, -3.0);
    const double rtol = dt == kHalf ? 1e-2 : 1e-5;
    const std::string t = toString(dt);
    expectSame("sum " + t, [&](Device d) { return sum(on(d, x)); }, rtol, 1e-4);
    expectSame("sum dims " + t,
               [&](Device d) { return sum(on(d, x), {0, 2}, true); }, rtol, 1e-4);
    expectSame("sum transposed " + t, [&](Device d) {
      return sum(transposed(on(d, x), 0, 2), {1});
    }, rtol, 1e-4);
    expectSame("sum dtype " + t,
               [&](Device d) { return sum(on(d, x), {-1}, false, kDouble); });
    if (dt != kBool) {
      expectSame("amax " + t, [&](Device d) { return amax(on(d, x), {1}); });
      expectSame("amin " + t,
                 [&](Device d) { return amin(on(d, x), {0, 2}, true); });
      expectSame("amax all " + t, [&](Device d) { return amax(on(d, x)); });
      expectSame("argmax " + t, [&](Device d) { return argmax(on(d, x), 1); });
      expectSame("argmax flat " + t, [&](Device d) { return argmax(on(d, x)); });
    }
    if (isFloatingType(dt)) {
      expectSame("mean " + t, [&](Device d) { return mean(on(d, x)); }, rtol);
      expectSame("mean dims " + t,
                 [&](Device d) { return mean(on(d, x), {2}, false); }, rtol);
    }
  }
  expectSame("sum of an empty dim", [&](Device d) {
    return sum(on(d, zeros({3, 0})), {1});
  });
  expectSame("item", [&](Device d) {
    return on(d, tensorOf({sum(on(d, mixed(kFloat, {3, 4}))).item<double>()},
                          {}));
  });
  expectSame("sum of a 0-dim", [&](Device d) {
    return sum(on(d, tensorOf({2.5}, {})));
  });
}

// Contiguous operands of one dtype take elementwise.cu's flat kernel: a
// head of elements one at a time until every address is 16-byte aligned
// (when all are equally misaligned), 16-byte vectors, then a tail. Odd
// sizes, storage offset 1 (misaligned) and in-place writes exercise each
// part; operands misaligned differently, or of mixed dtypes, take the flat
// one-dimensional general kernel.
TEST_F(CudaKernels, LargeContiguousElementwiseMatchesCpu) {
  // Elements [offset, offset + n) of a copy on `d` of `t` (n + 1
  // elements), which the in-place cases may write.
  auto part = [](Device d, const Tensor& t, int64_t n, int64_t offset) {
    return makeView(on(d, t), {n}, {1}, offset);
  };
  for (const int64_t n : {int64_t{1}, int64_t{3}, int64_t{17}, int64_t{1000003}}) {
    for (ScalarType dt : {kFloat, kHalf, kDouble}) {
      // Within Half's range; Half and BFloat16 results are rounded alike on
      // both devices (computed in float, rounded once).
      const Tensor x = mixed(dt, {n + 1}, 1e-4, -50.0);
      const Tensor y = mixed(dt, {n + 1}, 3e-4, -20.0);
      const Tensor ints = mixed(kInt, {n + 1}, 1e-5, -7.0);  // -7 ... 3
      const double rtol = dt == kHalf ? 1e-3 : 1e-5;
      const std::string t = std::string(toString(dt)) + " n=" + std::to_string(n);
      for (const auto& [xo, yo] : {std::pair<int64_t, int64_t>{0, 0}, {1, 1},
                                   {1, 0}, {0, 1}}) {
        const std::string where = t + " offsets " + std::to_string(xo) + "," +
                                  std::to_string(yo);
        expectSame("add " + where, [&](Device d) {
          return add(part(d, x, n, xo), part(d, y, n, yo), 2);
        }, rtol);
        expectSame("mul " + where, [&](Device d) {
          return mul(part(d, x, n, xo), part(d, y, n, yo));
        }, rtol);
        expectSame("add_out " + where, [&](Device d) {
          Tensor out = part(d, zeros({n + 1}, dt), n, xo);
          add_out(out, part(d, x, n, xo), part(d, y, n, yo));
          return out;
        }, rtol);
        expectSame("add_ in place " + where, [&](Device d) {
          Tensor self = part(d, x, n, xo);
          add_(self, part(d, y, n, yo), -1);
          return self;
        }, rtol);
        expectSame("copy_ " + where, [&](Device d) {
          Tensor out = part(d, zeros({n + 1}, dt), n, yo);
          copy_(out, part(d, x, n, xo));
          return out;
        });
      }
      expectSame("add Scalar (not read from memory) " + t, [&](Device d) {
        return add(part(d, x, n, 1), 0.1);
      }, rtol);
      expectSame("mul with an Int tensor (converting) " + t, [&](Device d) {
        return mul(part(d, x, n, 1), part(d, ints, n, 0));
      }, rtol);
      expectSame("copy_ converting to Double " + t, [&](Device d) {
        Tensor out = part(d, zeros({n + 1}, kDouble), n, 1);
        copy_(out, part(d, x, n, 1));
        return out;
      });
    }
    // 1-byte dtypes: 16 elements per vector, a head of up to 15. Values
    // 0 ... 250 (Byte's products wrap alike on both devices).
    for (ScalarType dt : {kByte, kBool}) {
      const Tensor x = mixed(dt, {n + 1}, 2.5e-4, 0.0);
      const std::string t = std::string(toString(dt)) + " n=" + std::to_string(n);
      expectSame("copy_ " + t,
                 [&](Device d) {
                   Tensor out = part(d, zeros({n + 1}, dt), n, 1);
                   copy_(out, part(d, x, n, 1));
                   return out;
                 });
      expectSame("mul " + t,
                 [&](Device d) {
                   return mul(part(d, x, n, 1), part(d, x, n, 0));
                 });
    }
  }
}

// Few long rows take reduce.cu's two passes (many blocks per row, then one
// per row); rows start at any alignment.
TEST_F(CudaKernels, LargeReductionsMatchCpu) {
  constexpr int64_t kN = 10000019;
  for (ScalarType dt : {kFloat, kDouble, kHalf, kBFloat16, kInt, kLong, kBool}) {
    const std::string t = toString(dt);
    const bool reduced = dt == kHalf || dt == kBFloat16;
    // Sums that Half and BFloat16 can hold; integers summed exactly.
    const Tensor x = reduced ? mixed(dt, {kN}, 1e-6, -5.0)
                     : isIntegralType(dt, /*include_bool=*/false)
                         ? mixed(dt, {kN}, 1.0, -5e6)
                         : mixed(dt, {kN}, 1e-4, -50.0);
    const double rtol = reduced ? 1e-2 : 1e-5;
    expectSame("sum all " + t, [&](Device d) { return sum(on(d, x)); }, rtol,
               1e-3);
    expectSame("sum all from storage offset 1 " + t, [&](Device d) {
      return sum(makeView(on(d, x), {kN - 1}, {1}, 1));
    }, rtol, 1e-3);
    expectSame("sum of 3 long rows " + t, [&](Device d) {
      return sum(makeView(on(d, x), {3, kN / 3}, {kN / 3, 1}, 2), {1});
    }, rtol, 1e-3);
    if (isFloatingType(dt)) {
      expectSame("mean all " + t, [&](Device d) { return mean(on(d, x)); },
                 rtol, 1e-3);
    }
    if (dt != kBool) {
      expectSame("amax all " + t, [&](Device d) { return amax(on(d, x)); });
      expectSame("amin of 3 long rows " + t, [&](Device d) {
        return amin(makeView(on(d, x), {3, kN / 3}, {kN / 3, 1}, 1), {1});
      });
    }
  }
  // argmax: the first of several equal maxima, wherever the blocks split
  // the row; a NaN wins (the first NaN), as on the CPU.
  Tensor ties = zeros({kN}, kDouble);
  double* p = ties.data_ptr<double>();
  for (int64_t i : {int64_t{4000001}, int64_t{17}, kN - 1}) p[i] = 3.0;
  for (ScalarType dt : {kFloat, kDouble, kHalf, kLong}) {
    const Tensor x = to(ties, dt);
    const std::string t = toString(dt);
    expectSame("argmax ties " + t,
               [&](Device d) { return argmax(on(d, x)); });
    expectSame("argmax ties, 2 rows " + t, [&](Device d) {
      return argmax(makeView(on(d, x), {2, kN / 2}, {kN / 2, 1}, 1), 1);
    });
  }
  Tensor nans = ties.clone();
  nans.data_ptr<double>()[9000000] = std::nan("");
  nans.data_ptr<double>()[9000005] = std::nan("");
  for (ScalarType dt : {kFloat, kDouble}) {
    const Tensor x = to(nans, dt);
    const std::string t = toString(dt);
    expectSame("argmax NaN " + t,
               [&](Device d) { return argmax(on(d, x)); });
    expectSame("amax NaN " + t,
               [&](Device d) { return amax(on(d, x)); });
  }
}

TEST_F(CudaKernels, SoftmaxMatchesCpu) {
  for (ScalarType dt : {kFloat, kDouble, kHalf}) {
    const Tensor x = mixed(dt, {3, 4, 5}, 0.7, -9.0);
    const double rtol = dt == kHalf ? 1e-2 : 1e-5;
    const std::string t = toString(dt);
    for (int64_t dim : {0, 1, -1}) {
      const std::string where = t + " dim " + std::to_string(dim);
      expectSame("softmax " + where,
                 [&](Device d) { return softmax(on(d, x), dim); }, rtol);
      expectSame("log_softmax " + where,
                 [&](Device d) { return log_softmax(on(d, x), dim); }, rtol);
    }
    expectSame("softmax transposed " + t, [&](Device d) {
      return softmax(transposed(on(d, x), 0, 2), 1, kDouble);
    });
  }
  expectSame("softmax of a Long input to Float", [&](Device d) {
    return softmax(on(d, mixed(kLong, {2, 3}, 1.0, -2.0)), 1, kFloat);
  });
  expectSame("softmax NaN row", [&](Device d) {
    return softmax(on(d, tensorOf({1, std::nan(""), 2, 3}, {2, 2})), 1);
  });
}

TEST_F(CudaKernels, OutOverloadsOfReductionsAndProducts) {
  const Tensor x = mixed(kFloat, {3, 4}, 0.3, -1.0);
  expectSame("sum_out into Double", [&](Device d) {
    Tensor out = empty({3}, TensorOptions(kDouble).device(d));
    sum_out(out, on(d, x), {1}, false, std::nullopt);
    return out;
  });
  expectSame("amax_out resizes an empty out", [&](Device d) {
    Tensor out = empty({0}, TensorOptions(kFloat).device(d));
    amax_out(out, on(d, x), {0}, true);
    return out;
  });
  expectSame("argmax_out", [&](Device d) {
    Tensor out = empty({4}, TensorOptions(kLong).device(d));
    argmax_out(out, on(d, x), 0, false);
    return out;
  });
  expectSame("softmax_out", [&](Device d) {
    Tensor out = empty({3, 4}, TensorOptions(kFloat).device(d));
    softmax_out(out, on(d, x), 1, std::nullopt);
    return out;
  });
  expectSame("mm_out", [&](Device d) {
    Tensor out = empty({3, 3}, TensorOptions(kFloat).device(d));
    mm_out(out, on(d, x), transposed(on(d, x), 0, 1));
    return out;
  }, 1e-4, 1e-4);
  Tensor big = to(ones({2}), cudaDevice());
  EXPECT_THAT(errorOf([&] { sum_out(big, to(x, cudaDevice()), {1}, false,
                                    std::nullopt); }),
              HasSubstr("cannot grow a CUDA out tensor"));
  EXPECT_EQ(big.sizes(), IntArrayRef({2}));
}

TEST_F(CudaKernels, MatrixProductsMatchCpu) {
  for (ScalarType dt : {kFloat, kDouble}) {
    const Tensor a = mixed(dt, {5, 7}, 0.1, -1.0);
    const Tensor b = mixed(dt, {7, 3}, 0.05, -0.5);
    const Tensor ba = mixed(dt, {2, 5, 7}, 0.1, -1.0);
    const Tensor bb = mixed(dt, {2, 7, 3}, 0.05, -0.5);
    const std::string t = toString(dt);
    expectSame("mm " + t, [&](Device d) { return mm(on(d, a), on(d, b)); },
               1e-4, 1e-4);
    expectSame("mm transposed " + t, [&](Device d) {
      return mm(transposed(on(d, b), 0, 1), transposed(on(d, a), 0, 1));
    }, 1e-4, 1e-4);
    expectSame("bmm " + t, [&](Device d) { return bmm(on(d, ba), on(d, bb)); },
               1e-4, 1e-4);
    expectSame("addmm " + t, [&](Device d) {
      return addmm(on(d, mixed(dt, {3})), on(d, a), on(d, b), 0.5, 2);
    }, 1e-4, 1e-4);
    expectSame("addmm beta 0 ignores NaN " + t, [&](Device d) {
      return addmm(on(d, full({5, 3}, std::nan(""), dt)), on(d, a), on(d, b),
                   0, 1);
    }, 1e-4, 1e-4);
    expectSame("mm k = 0 " + t, [&](Device d) {
      return mm(on(d, zeros({2, 0}, dt)), on(d, zeros({0, 3}, dt)));
    });
  }
  for (const bool with_bias : {false, true}) {
    const Tensor input = mixed(kFloat, {2, 3, 5}, 0.1, -0.7);
    const Tensor weight = mixed(kFloat, {4, 5}, 0.05, -0.5);
    const Tensor bias = mixed(kFloat, {4}, 0.3, -0.2);
    const std::string b = with_bias ? " with bias" : "";
    expectSame("linear" + b, [&](Device d) {
      return linear(on(d, input), on(d, weight),
                    with_bias ? std::optional<Tensor>(on(d, bias))
                              : std::nullopt);
    }, 1e-4, 1e-4);
    expectSame("linear 1-D input, transposed weight" + b, [&](Device d) {
      return linear(on(d, mixed(kFloat, {5})),
                    transposed(on(d, mixed(kFloat, {5, 4})), 0, 1),
                    with_bias ? std::optional<Tensor>(on(d, bias))
                              : std::nullopt);
    }, 1e-4, 1e-4);
  }
  expectSame("mm Half", [&](Device d) {
    return mm(on(d, mixed(kHalf, {4, 8}, 0.1, -0.4)),
              on(d, mixed(kHalf, {8, 2}, 0.1, -0.2)));
  }, 1e-2, 1e-2);
  EXPECT_THAT(errorOf([] {
                mm(to(ones({2, 2}, kLong), cudaDevice()),
                   to(ones({2, 2}, kLong), cudaDevice()));
              }),
              HasSubstr("not implemented for 'Long'"));
}

TEST_F(CudaKernels, MatmulOutMatchesCpuInEveryCase) {
  struct Case {
    const char* name;
    std::vector<int64_t> a, b;
  };
  const std::vector<Case> cases = {
      {"dot", {5}, {5}},
      {"matrix @ vector", {3, 5}, {5}},
      {"vector @ matrix", {5}, {5, 4}},
      {"matrix @ matrix", {3, 5}, {5, 4}},
      {"batch @ matrix (rows folded)", {2, 3, 5}, {5, 4}},
      {"batch @ vector", {2, 3, 5}, {5}},
      {"4-D @ vector", {2, 2, 3, 5}, {5}},
      {"vector @ batch", {5}, {2, 5, 4}},
      {"matrix @ batch", {3, 5}, {2, 5, 4}},
      {"batch @ batch", {2, 3, 5}, {2, 5, 4}},
      {"batch dims broadcast", {2, 1, 3, 5}, {4, 5, 6}},
      {"batch dims broadcast both ways", {3, 1, 2, 5}, {1, 4, 5, 2}},
      {"k = 0", {3, 0}, {0, 4}},
      {"dot of empty vectors", {0}, {0}},
      {"batched k = 0", {2, 3, 0}, {2, 0, 4}},
      {"empty batch", {0, 3, 5}, {5, 4}},
      {"empty broadcast batch", {0, 1, 3, 5}, {2, 5, 4}},
  };
  for (ScalarType dt : {kFloat, kDouble, kHalf}) {
    // Half rounds the result: compare at its precision.
    const double tol = dt == kHalf ? 1e-2 : 1e-4;
    for (const Case& c : cases) {
      const Tensor a = mixed(dt, c.a, 0.1, -1.0);
      const Tensor b = mixed(dt, c.b, 0.05, -0.5);
      const std::string name = std::string(c.name) + " " + toString(dt);
      Tensor expected = empty({0}, dt);  // its shape, from the CPU kernel
      matmul_out(expected, a, b);
      expectSame(name + ", out resized from 0 elements", [&](Device d) {
        Tensor out = empty({0}, TensorOptions(dt).device(d));
        matmul_out(out, on(d, a), on(d, b));
        return out;
      }, tol, tol);
      expectSame(name + ", out of the right shape, strided operands",
                 [&](Device d) {
                   Tensor out =
                       empty(expected.sizes(), TensorOptions(dt).device(d));
                   matmul_out(out, stridedOn(d, a), stridedOn(d, b));
                   return out;
                 }, tol, tol);
    }
  }
  // Batch dimensions that cannot be folded into rows, a transposed matrix.
  const Tensor batch = mixed(kFloat, {3, 2, 5}, 0.1, -1.0);
  const Tensor mat = mixed(kFloat, {4, 5}, 0.05, -0.5);
  expectSame("transposed batch @ transposed matrix", [&](Device d) {
    Tensor out = empty({0}, TensorOptions(kFloat).device(d));
    matmul_out(out, transposed(on(d, batch), 0, 1),
               transposed(on(d, mat), 0, 1));
    return out;
  }, 1e-4, 1e-4);
  expectSame("matrix @ expanded batch", [&](Device d) {
    Tensor out = empty({0}, TensorOptions(kFloat).device(d));
    matmul_out(out, on(d, mixed(kFloat, {3, 5}, 0.1, -1.0)),
               expand(on(d, mixed(kFloat, {1, 5, 4}, 0.05, -0.5)), {3, 5, 4}));
    return out;
  }, 1e-4, 1e-4);
}

TEST_F(CudaKernels, MatmulOutResizesAndFailsAsOnCpu) {
  const Tensor a = mixed(kFloat, {3, 5}, 0.1, -1.0);
  const Tensor b = mixed(kFloat, {5, 4}, 0.05, -0.5);
  // Another shape with room for the result is resized (with the CPU
  // kernel's deprecation warning).
  expectSame("out of another shape", [&](Device d) {
    Tensor out = empty({4, 5}, TensorOptions(kFloat).device(d));
    matmul_out(out, on(d, a), on(d, b));
    return out;
  }, 1e-4, 1e-4);
  struct Case {
    const char* name;
    std::function<void(Device)> f;
  };
  auto call = [](Device d, IntArrayRef as, IntArrayRef bs,
                 ScalarType a_dt = kFloat, ScalarType b_dt = kFloat,
                 ScalarType out_dt = kFloat) {
    Tensor out = empty({0}, TensorOptions(out_dt).device(d));
    matmul_out(out, on(d, mixed(a_dt, as)), on(d, mixed(b_dt, bs)));
  };
  const std::vector<Case> cases = {
      {"inner sizes differ", [&](Device d) { call(d, {3, 5}, {4, 2}); }},
      {"vector sizes differ", [&](Device d) { call(d, {5}, {4}); }},
      {"matrix @ vector sizes differ", [&](Device d) { call(d, {3, 5}, {4}); }},
      {"batched inner sizes differ",
       [&](Device d) { call(d, {2, 3, 5}, {2, 4, 2}); }},
      {"batch dims do not broadcast",
       [&](Device d) { call(d, {2, 3, 5}, {3, 5, 4}); }},
      {"0-dim argument", [&](Device d) { call(d, {}, {3}); }},
      {"dtypes differ", [&](Device d) { call(d, {3, 5}, {5, 4}, kFloat, kDouble); }},
      {"out dtype differs",
       [&](Device d) { call(d, {3, 5}, {5, 4}, kFloat, kFloat, kDouble); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string want = errorOf([&] { c.f(cpuDevice()); });
    EXPECT_NE(want, "(no error)");
    EXPECT_EQ(errorOf([&] { c.f(cudaDevice()); }), want);
  }
  // What only the CUDA kernel refuses.
  Tensor small = to(ones({2}), cudaDevice());
  EXPECT_THAT(errorOf([&] {
                matmul_out(small, to(a, cudaDevice()), to(b, cudaDevice()));
              }),
              HasSubstr("cannot grow a CUDA out tensor"));
  EXPECT_EQ(small.sizes(), IntArrayRef({2}));
  Tensor cpu_out = empty({0});
  EXPECT_THAT(errorOf([&] {
                matmul_out(cpu_out, to(a, cudaDevice()), to(b, cudaDevice()));
              }),
              HasSubstr("Expected all tensors to be on the same device"));
  Tensor long_out = empty({0}, TensorOptions(kLong).device(cudaDevice()));
  EXPECT_THAT(errorOf([&] {
                matmul_out(long_out, to(ones({2, 2}, kLong), cudaDevice()),
                           to(ones({2, 2}, kLong), cudaDevice()));
              }),
              HasSubstr("not implemented for 'Long'"));
}

TEST_F(CudaKernels, SoftmaxBackwardMatchesCpu) {
  auto backward = [](bool log, const Tensor& grad, const Tensor& output,
                     int64_t dim, ScalarType input_dtype) {
    return log ? _log_softmax_backward_data(grad, output, dim, input_dtype)
               : _softmax_backward_data(grad, output, dim, input_dtype);
  };
  for (const bool log : {false, true}) {
    const std::string op = log ? "_log_softmax_backward_data " :
                                 "_softmax_backward_data ";
    for (ScalarType dt : {kFloat, kDouble, kHalf}) {
      const double rtol = dt == kHalf ? 1e-2 : 1e-5;
      const Tensor x = mixed(dt, {3, 4, 5}, 0.7, -9.0);
      const Tensor g = mixed(dt, {3, 4, 5}, 0.11, -3.0);
      for (int64_t dim : {0, 1, 2, -1}) {
        // The forward's output, from the CPU kernel.
        const Tensor y = log ? log_softmax(x, dim) : softmax(x, dim);
        const std::string where =
            op + toString(dt) + " dim " + std::to_string(dim);
        expectSame(where, [&](Device d) {
          return backward(log, on(d, g), on(d, y), dim, dt);
        }, rtol);
        expectSame(where + " strided", [&](Device d) {
          return backward(log, stridedOn(d, g), stridedOn(d, y), dim, dt);
        }, rtol);
        expectSame(where + " transposed", [&](Device d) {
          return backward(log, transposed(on(d, g), 0, 2),
                          transposed(on(d, y), 0, 2), dim, dt);
        }, rtol);
      }
    }
    struct Case {
      const char* name;
      std::vector<int64_t> sizes;
      int64_t dim;
      ScalarType grad_dtype, output_dtype, input_dtype;
    };
    const std::vector<Case> cases = {
        // _softmax(half_to_float=True)'s backward: Float in, Half out.
        {"Half input_dtype from Float", {4, 6}, 1, kFloat, kFloat, kHalf},
        {"Float input_dtype from Half", {4, 6}, 0, kHalf, kHalf, kFloat},
        {"BFloat16", {4, 6}, 1, kBFloat16, kBFloat16, kBFloat16},
        {"grad and output dtypes differ", {4, 6}, 1, kFloat, kDouble, kFloat},
        {"Half and BFloat16 into Double", {4, 6}, 0, kHalf, kBFloat16,
         kDouble},
        {"long rows", {3, 1000}, 1, kFloat, kFloat, kFloat},
        {"long rows, dim 0", {1000, 3}, 0, kDouble, kDouble, kDouble},
        {"rows of one", {5, 1}, 1, kFloat, kFloat, kFloat},
        {"0-dim", {}, 0, kFloat, kFloat, kFloat},
        {"empty dim", {3, 0}, 1, kFloat, kFloat, kFloat},
        {"empty other dim", {0, 4}, 1, kFloat, kFloat, kFloat},
    };
    for (const Case& c : cases) {
      const double rtol = isReduced(c.input_dtype) ||
                                  isReduced(c.grad_dtype) ||
                                  isReduced(c.output_dtype)
                              ? 1e-2
                              : 1e-5;
      const Tensor x = mixed(kDouble, c.sizes, 0.013, -4.0);
      const Tensor y = to(log ? log_softmax(x, c.dim) : softmax(x, c.dim),
                          c.output_dtype);
      const Tensor g = mixed(c.grad_dtype, c.sizes, 0.021, -2.0);
      expectSame(op + c.name, [&](Device d) {
        return backward(log, on(d, g), on(d, y), c.dim, c.input_dtype);
      }, rtol);
    }
    // The Meta kernel's checks, with the CPU kernel's messages.
    for (const auto& [name, f] :
         std::vector<std::pair<std::string, std::function<void(Device)>>>{
             {"shapes differ",
              [&](Device d) {
                backward(log, on(d, ones({2, 5})), on(d, ones({2, 4})), 0,
                         kFloat);
              }},
             {"integral input_dtype",
              [&](Device d) {
                backward(log, on(d, ones({2, 5})), on(d, ones({2, 5})), 0,
                         kLong);
              }},
             {"dim out of range",
              [&](Device d) {
                backward(log, on(d, ones({2, 5})), on(d, ones({2, 5})), 2,
                         kFloat);
              }},
         }) {
      SCOPED_TRACE(op + name);
      const std::string want = errorOf([&] { f(cpuDevice()); });
      EXPECT_NE(want, "(no error)");
      EXPECT_EQ(errorOf([&] { f(cudaDevice()); }), want);
    }
  }
}

// Autograd end to end: the gradients of a CUDA leaf, through the CUDA
// kernels of the forward and backward operators, against the CPU ones.
TEST_F(CudaKernels, GradientsThroughSoftmaxAndMatmulMatchCpu) {
  const Tensor x = mixed(kFloat, {3, 4, 5}, 0.3, -7.0);
  const Tensor w = mixed(kFloat, {3, 4, 5}, 0.17, -4.0);
  for (const bool log : {false, true}) {
    for (int64_t dim : {0, 1, -1}) {
      expectSame(std::string(log ? "log_softmax" : "softmax") + " dim " +
                     std::to_string(dim),
                 [&](Device d) {
                   Tensor leaf = clone(on(d, x));
                   leaf.requires_grad_();
                   Tensor y = log ? log_softmax(leaf, dim) : softmax(leaf, dim);
                   sum(mul(y, on(d, w))).backward();
                   return leaf.grad();
                 });
    }
  }
  const Tensor b = mixed(kFloat, {5, 2}, 0.1, -0.4);
  for (const bool want_a : {false, true}) {
    expectSame(want_a ? "matmul, grad of a" : "matmul, grad of b",
               [&](Device d) {
                 Tensor la = clone(on(d, x));
                 Tensor lb = clone(on(d, b));
                 la.requires_grad_();
                 lb.requires_grad_();
                 sum(mul(softmax(matmul(la, lb), -1),
                         on(d, mixed(kFloat, {3, 4, 2}, 0.3, -1.0))))
                     .backward();
                 return want_a ? la.grad() : lb.grad();
               }, 1e-4, 1e-5);
  }
}

TEST_F(CudaKernels, ViewReshapeAndCatMatchCpu) {
  const Tensor x = mixed(kFloat, {2, 3, 4});
  expectSame("view", [&](Device d) { return view(on(d, x), {6, 4}); });
  expectSame("view of a slice", [&](Device d) {
    return view(select(on(d, x), 0, 1), {12});
  });
  expectSame("reshape of a transpose (copies)", [&](Device d) {
    return reshape(transposed(on(d, x), 1, 2), {8, 3});
  });
  expectSame("matmul batched with broadcast", [&](Device d) {
    return matmul(on(d, x), on(d, mixed(kFloat, {4, 5}, 0.2, -1.0)));
  }, 1e-4, 1e-4);
  expectSame("linear (composite) with bias", [&](Device d) {
    return linear(on(d, x), on(d, mixed(kFloat, {5, 4}, 0.1, -0.3)),
                  on(d, mixed(kFloat, {5}, 0.5, 0.0)));
  }, 1e-4, 1e-4);
  expectSame("linear.out", [&](Device d) {
    Tensor out = empty({2, 3, 5}, TensorOptions(kFloat).device(d));
    linear_out(out, on(d, x), on(d, mixed(kFloat, {5, 4}, 0.1, -0.3)),
               on(d, mixed(kFloat, {5}, 0.5, 0.0)));
    return out;
  }, 1e-4, 1e-4);
  const std::vector<Tensor> parts = {mixed(kFloat, {2, 3, 4}),
                                     mixed(kInt, {2, 1, 4}),
                                     zeros({0}, kFloat)};
  expectSame("cat promoted, skipping [0]", [&](Device d) {
    std::vector<Tensor> on_d;
    for (const Tensor& p : parts) on_d.push_back(on(d, p));
    return cat(on_d, 1);
  });
}

TEST_F(CudaKernels, ErrorsAreTheCpuKernelsOnes) {
  const Tensor a = to(ones({2, 3}), cudaDevice());
  const Tensor b = to(ones({4}), cudaDevice());
  EXPECT_THAT(errorOf([&] { add(a, b); }),
              HasSubstr("The size of tensor a (3) must match the size of "
                        "tensor b (4) at non-singleton dimension 1"));
  EXPECT_THAT(errorOf([&] { add(a, ones({2, 3})); }),
              HasSubstr("Expected all tensors to be on the same device"));
  Tensor cpu = ones({2, 3});
  EXPECT_THAT(errorOf([&] { add_(cpu, a); }),
              HasSubstr("Expected all tensors to be on the same device"));
  EXPECT_THAT(errorOf([&] { sub(to(ones({2}, kBool), cudaDevice()),
                                to(ones({2}, kBool), cudaDevice())); }),
              HasSubstr("Subtraction, the `-` operator, with two bool"));
  EXPECT_THAT(errorOf([&] { mm(a, a); }), HasSubstr("cannot be multiplied"));
  EXPECT_THAT(errorOf([&] { sum(a, {2}); }), HasSubstr("Dimension out of range"));
}

// In-place, out= and copy_ writes over memory an input shares: the CPU
// kernels' errors (PyTorch's), and nothing written.
TEST_F(CudaKernels, OverlappingWritesFailAsOnCpu) {
  const char* partial =
      "unsupported operation: some elements of the input tensor and the "
      "written-to tensor refer to a single memory location";
  const Tensor z = to(rangeOf({8}), cudaDevice());
  EXPECT_THAT(errorOf([&] { add_(slice(z, 0, 1), slice(z, 0, 0, 7)); }),
              HasSubstr(std::string("add_(): ") + partial));
  EXPECT_THAT(errorOf([&] {
                add_out(slice(z, 0, 1), slice(z, 0, 0, 7), slice(z, 0, 0, 7));
              }),
              HasSubstr(partial));
  EXPECT_THAT(errorOf([&] { copy_(slice(z, 0, 1), slice(z, 0, 0, 7)); }),
              HasSubstr(std::string("copy_(): ") + partial));
  EXPECT_THAT(errorOf([&] { add_(expand(slice(z, 0, 0, 1), {3}), 1); }),
              HasSubstr("more than one element of the written-to tensor"));
  EXPECT_EQ(valuesOf(to(z, cpuDevice())), valuesOf(rangeOf({8})));
  add_(z, z);  // the same memory in the same layout: fine
  EXPECT_EQ(valuesOf(to(z, cpuDevice())),
            (std::vector<double>{0, 2, 4, 6, 8, 10, 12, 14}));
}

}  // namespace
}  // namespace turnout
