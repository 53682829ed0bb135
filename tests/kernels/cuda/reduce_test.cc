// The CUDA reductions added for issues 18 and 20 (kernels/cuda/reduce.cc:
// all, any, prod, argmin, max and min with and without a dim, their out=
// overloads) and the composite reductions that run on CUDA through the
// CUDA kernels (logsumexp, norm, var, std), against the CPU kernels, over
// contiguous, transposed and strided inputs of several dtypes, with NaN,
// ties and empty dimensions. Skips when no CUDA device is present.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "dispatcher/core/error.h"
#include "kernels/ops.h"
#include "tests/error_of.h"
#include "tests/kernels/cuda/compare.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using testing::cudaDevice;
using testing::errorOf;
using testing::expectSame;
using testing::isReduced;
using testing::mixed;
using testing::on;
using testing::op;
using testing::stridedOn;
using testing::tensorOf;
using testing::transposed;

class CudaReductions : public testing::CudaTest {};

using Dt = std::optional<ScalarType>;

// Inputs of one dtype: plain, transposed, strided (floating only), and
// with ties and NaN.
struct Input {
  std::string name;
  std::function<Tensor(Device)> make;
};

std::vector<Input> inputsOf(ScalarType dt) {
  const Tensor x = to(mixed(kFloat, {3, 4}, 0.6, dt == kByte ? 0.0 : -3.0), dt);
  std::vector<Input> in = {
      {"contiguous", [x](Device d) { return on(d, x); }},
      {"transposed", [x](Device d) { return transposed(on(d, x), 0, 1); }},
      {"ties", [dt](Device d) {
         return on(d, to(tensorOf({2, 5, 5, 1, 1, 2, 0, 0, 0}, {3, 3}), dt));
       }},
  };
  if (isFloatingType(dt)) {
    in.push_back({"strided", [x](Device d) { return stridedOn(d, x); }});
    in.push_back({"NaN", [dt](Device d) {
                    return on(d, to(tensorOf({1, NAN, 3, NAN, -1, 2}, {2, 3}),
                                    dt));
                  }});
  }
  return in;
}

const ScalarType kDtypes[] = {kFloat, kDouble, kHalf, kLong, kInt, kByte};

TEST_F(CudaReductions, ExtremaAndTheirIndicesMatchCpu) {
  const auto argmin_op =
      op<Tensor(const Tensor&, std::optional<int64_t>, bool)>("aten::argmin");
  for (ScalarType dt : kDtypes) {
    for (const Input& in : inputsOf(dt)) {
      const std::string n = in.name + " " + toString(dt);
      expectSame("max() " + n, [&](Device d) { return max(in.make(d)); });
      expectSame("min() " + n, [&](Device d) { return min(in.make(d)); });
      expectSame("argmin() " + n, [&](Device d) {
        return argmin_op.call(in.make(d), std::nullopt, false);
      });
      for (int64_t dim : {0, 1, -1}) {
        for (bool keepdim : {false, true}) {
          const std::string nd = n + " dim " + std::to_string(dim) +
                                 (keepdim ? " keepdim" : "");
          expectSame("max.dim values " + nd, [&](Device d) {
            return std::get<0>(max(in.make(d), dim, keepdim));
          });
          expectSame("max.dim indices " + nd, [&](Device d) {
            return std::get<1>(max(in.make(d), dim, keepdim));
          });
          expectSame("min.dim values " + nd, [&](Device d) {
            return std::get<0>(min(in.make(d), dim, keepdim));
          });
          expectSame("min.dim indices " + nd, [&](Device d) {
            return std::get<1>(min(in.make(d), dim, keepdim));
          });
          expectSame("argmin " + nd, [&](Device d) {
            return argmin_op.call(in.make(d), dim, keepdim);
          });
        }
      }
    }
  }
  expectSame("max.dim of a 0-dim tensor", [&](Device d) {
    return std::get<1>(max(on(d, tensorOf({4.0}, {})), 0, false));
  });
}

TEST_F(CudaReductions, OutOverloadsOfExtremaMatchCpu) {
  const Tensor x = mixed(kFloat, {4, 5}, 0.45, -4.0);
  const auto max_out = op<std::tuple<Tensor&, Tensor&>(
      const Tensor&, int64_t, bool, Tensor&, Tensor&)>("aten::max", "dim_max");
  const auto min_out = op<std::tuple<Tensor&, Tensor&>(
      const Tensor&, int64_t, bool, Tensor&, Tensor&)>("aten::min", "dim_min");
  for (int part : {0, 1}) {
    expectSame("max.dim_max resized", [&](Device d) {
      Tensor v = empty({0}, TensorOptions(kFloat).device(d));
      Tensor i = empty({0}, TensorOptions(kLong).device(d));
      max_out.call(on(d, x), 1, false, v, i);
      return part == 0 ? v : i;
    });
    expectSame("min.dim_min keepdim", [&](Device d) {
      Tensor v = empty({1, 4}, TensorOptions(kFloat).device(d));
      Tensor i = empty({1, 4}, TensorOptions(kLong).device(d));
      min_out.call(transposed(on(d, x), 0, 1), 0, true, v, i);
      return part == 0 ? v : i;
    });
  }
  expectSame("argmin.out", [&](Device d) {
    Tensor out = empty({0}, TensorOptions(kLong).device(d));
    op<Tensor&(const Tensor&, std::optional<int64_t>, bool, Tensor&)>(
        "aten::argmin", "out")
        .call(on(d, x), 0, false, out);
    return out;
  });
  // The Meta kernels' errors, on CUDA as on the CPU.
  const Tensor empty_cuda = to(zeros({0, 3}), cudaDevice());
  EXPECT_THAT(errorOf([&] { max(empty_cuda); }),
              HasSubstr("Expected reduction dim to be specified"));
  EXPECT_THAT(errorOf([&] { min(empty_cuda, 0); }),
              HasSubstr("Expected reduction dim 0 to have non-zero size"));
}

TEST_F(CudaReductions, AllAnyAndProdMatchCpu) {
  const auto all_op = op<Tensor(const Tensor&)>("aten::all");
  const auto any_op = op<Tensor(const Tensor&)>("aten::any");
  const auto all_dim = op<Tensor(const Tensor&, int64_t, bool)>("aten::all",
                                                                 "dim");
  const auto any_dim = op<Tensor(const Tensor&, int64_t, bool)>("aten::any",
                                                                 "dim");
  const auto prod_op = op<Tensor(const Tensor&, Dt)>("aten::prod");
  const auto prod_dim =
      op<Tensor(const Tensor&, int64_t, bool, Dt)>("aten::prod", "dim_int");
  std::vector<std::pair<std::string, Tensor>> logical = {
      {"Bool", tensorOf({1, 1, 0, 1, 1, 1}, {2, 3}, kBool)},
      {"Byte (uint8 result)", tensorOf({3, 0, 0, 1, 2, 0}, {2, 3}, kByte)},
      {"Float with NaN", tensorOf({NAN, 0, 1, 2, 0, 0}, {2, 3})},
      {"Half", to(tensorOf({0.5, 0, 0, 0, 0, 0}, {2, 3}), kHalf)},
      {"empty rows", zeros({2, 0})},
      {"empty", zeros({0, 3}, TensorOptions(kLong))},
  };
  for (const auto& [name, x] : logical) {
    expectSame("all " + name, [&](Device d) { return all_op.call(on(d, x)); });
    expectSame("any " + name, [&](Device d) { return any_op.call(on(d, x)); });
    for (int64_t dim : {0, 1}) {
      const std::string nd = name + " dim " + std::to_string(dim);
      expectSame("all.dim " + nd,
                 [&](Device d) { return all_dim.call(on(d, x), dim, false); });
      expectSame("any.dim keepdim " + nd,
                 [&](Device d) { return any_dim.call(on(d, x), dim, true); });
      expectSame("any.dim transposed " + nd, [&](Device d) {
        return any_dim.call(transposed(on(d, x), 0, 1), dim, false);
      });
    }
  }
  for (ScalarType dt : kDtypes) {
    const Tensor x =
        to(mixed(kFloat, {3, 4}, 0.5, dt == kByte ? 0.0 : -1.25), dt);
    const std::string n = toString(dt);
    const double rtol = isReduced(dt) ? 1e-2 : 1e-5;
    expectSame("prod " + n, [&](Device d) {
      return prod_op.call(on(d, x), std::nullopt);
    }, rtol);
    expectSame("prod dtype=Double " + n, [&](Device d) {
      return prod_op.call(on(d, x), kDouble);
    });
    for (int64_t dim : {0, 1}) {
      expectSame("prod.dim_int " + n, [&](Device d) {
        return prod_dim.call(transposed(on(d, x), 0, 1), dim, dim == 1,
                             std::nullopt);
      }, rtol);
    }
  }
  expectSame("prod of Long wraps", [&](Device d) {
    return prod_op.call(on(d, full({70}, 3, TensorOptions(kLong))), std::nullopt);
  });
  expectSame("prod of an empty dim", [&](Device d) {
    return prod_dim.call(on(d, zeros({2, 0})), 1, false, std::nullopt);
  });
  expectSame("prod of Bool", [&](Device d) {
    return prod_op.call(on(d, tensorOf({1, 1, 0}, {3}, kBool)), std::nullopt);
  });
}

// logsumexp, norm, var and std are composite kernels over CUDA ones.
TEST_F(CudaReductions, CompositeReductionsRunOnCudaAsOnCpu) {
  const auto logsumexp = op<Tensor(const Tensor&, IntArrayRef, bool)>(
      "aten::logsumexp");
  const auto norm_dim =
      op<Tensor(const Tensor&, const std::optional<Scalar>&, IntArrayRef,
                bool)>("aten::norm", "ScalarOpt_dim");
  const Tensor x = mixed(kFloat, {4, 6}, 0.7, -8.0);
  const Tensor with_inf = tensorOf({-INFINITY, 1, INFINITY, 2}, {2, 2});
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{1}, std::vector<int64_t>{0, 1}}) {
    const std::string n = "dims " + std::to_string(dims.size());
    expectSame("logsumexp " + n,
               [&](Device d) { return logsumexp.call(on(d, x), dims, false); });
    expectSame("logsumexp with infinities " + n, [&](Device d) {
      return logsumexp.call(on(d, with_inf), dims, true);
    });
    for (double p : {0.0, 1.0, 2.0, 3.0, double{INFINITY}, -double{INFINITY}}) {
      expectSame("norm p=" + std::to_string(p) + " " + n, [&](Device d) {
        return norm_dim.call(stridedOn(d, x), Scalar(p), dims, false);
      });
    }
    for (int64_t correction : {0, 1}) {
      expectSame("var " + n, [&](Device d) {
        return var(transposed(on(d, x), 0, 1), dims, correction);
      });
      expectSame("std keepdim " + n, [&](Device d) {
        return turnout::std(on(d, to(x, kDouble)), dims, correction, true);
      });
    }
  }
}

}  // namespace
}  // namespace turnout
