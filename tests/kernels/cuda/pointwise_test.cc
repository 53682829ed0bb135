// The CUDA kernels of kernels/cuda/pointwise.cc against the CPU kernels:
// the unary math operators (functional, in-place, out=), maximum, minimum,
// fmod, floor_divide, bitwise_xor, logical_not, masked_fill_, where.self_out,
// addcmul, addcdiv, lerp, and the composite activations that run on CUDA through them, over
// contiguous, transposed, strided, broadcast and 0-dim inputs of several
// dtypes. Skips when no CUDA device is present.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "dispatcher/core/error.h"
#include "kernels/ops.h"
#include "kernels/type_promotion.h"
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
using testing::op;
using testing::stridedOn;
using testing::tensorOf;
using testing::transposed;
using testing::valuesOf;

class CudaPointwise : public testing::CudaTest {};

using Unary = Tensor(const Tensor&);
using Binary = Tensor(const Tensor&, const Tensor&);

// Tolerances: libm and CUDA's math library differ in the last bits; Half
// and BFloat16 results by their precision.
double rtolFor(ScalarType dt) { return isReduced(dt) ? 1e-2 : 1e-5; }
double atolFor(ScalarType dt) { return isReduced(dt) ? 1e-2 : 1e-6; }

struct UnaryCase {
  const char* name;
  bool floating_only;  // no integral inputs (round.decimals)
  bool integral_only;  // bitwise_not
  bool rejects_bool;   // floor, ceil, round, trunc, neg, abs, relu
};

const UnaryCase kUnaryCases[] = {
    {"sin", false, false, false},        {"cos", false, false, false},
    {"tan", false, false, false},        {"asin", false, false, false},
    {"acos", false, false, false},       {"atan", false, false, false},
    {"sinh", false, false, false},       {"cosh", false, false, false},
    {"expm1", false, false, false},      {"log2", false, false, false},
    {"log10", false, false, false},      {"log1p", false, false, false},
    {"rsqrt", false, false, false},      {"reciprocal", false, false, false},
    {"erf", false, false, false},        {"sign", false, false, false},
    {"floor", false, false, true},       {"ceil", false, false, true},
    {"round", false, false, true},       {"trunc", false, false, true},
    {"bitwise_not", false, true, false}, {"exp", false, false, false},
    {"log", false, false, false},        {"sqrt", false, false, false},
    {"tanh", false, false, false},       {"sigmoid", false, false, false},
    {"neg", false, false, true},         {"abs", false, false, true},
    {"relu", false, false, true},        {"acosh", false, false, false},
    {"asinh", false, false, false},      {"atanh", false, false, false},
    {"erfc", false, false, false},       {"lgamma", false, false, false},
    {"digamma", false, false, false},
};

bool accepts(const UnaryCase& c, ScalarType dt) {
  if (c.integral_only) return isIntegralType(dt, /*include_bool=*/true);
  if (dt == kBool) return !c.rejects_bool;
  return true;
}

// Values where rounding matters (halves, both signs) and domain edges
// (|x| > 1 for asin, negatives for log and sqrt: NaN on both devices).
Tensor unaryInput(ScalarType dt, IntArrayRef sizes) {
  if (dt == kBool) return testing::rangeOf(sizes, dt, 1.0, 0.0);
  if (isIntegralType(dt, false)) return mixed(dt, sizes, 3.0, -7.0);
  return mixed(dt, sizes, 0.25, -1.5);
}

const ScalarType kUnaryDtypes[] = {kFloat, kDouble, kHalf, kBFloat16,
                                   kLong,  kInt,    kByte, kBool};

TEST_F(CudaPointwise, UnaryFunctionalMatchesCpu) {
  for (const UnaryCase& c : kUnaryCases) {
    const auto f = op<Unary>((std::string("aten::") + c.name).c_str());
    for (ScalarType dt : kUnaryDtypes) {
      if (!accepts(c, dt)) continue;
      const std::string name = std::string(c.name) + " " + toString(dt);
      const Tensor x = unaryInput(dt, {3, 4});
      const double rtol = rtolFor(dt), atol = atolFor(dt);
      expectSame(name + " contiguous",
                 [&](Device d) { return f.call(on(d, x)); }, rtol, atol);
      expectSame(name + " transposed",
                 [&](Device d) { return f.call(transposed(on(d, x), 0, 1)); },
                 rtol, atol);
      expectSame(name + " 0-dim",
                 [&](Device d) { return f.call(on(d, unaryInput(dt, {}))); },
                 rtol, atol);
      if (isFloatingType(dt)) {
        expectSame(name + " strided",
                   [&](Device d) { return f.call(stridedOn(d, x)); }, rtol,
                   atol);
      }
    }
  }
}

// angle has no in-place form: functional and out= (a Float out of a Long
// input, and a Double out of a Float one: the cast on the way).
TEST_F(CudaPointwise, AngleMatchesCpu) {
  const auto f = op<Unary>("aten::angle");
  const auto out_op =
      op<Tensor&(const Tensor&, Tensor&)>("aten::angle", "out");
  for (ScalarType dt : kUnaryDtypes) {
    const Tensor x = unaryInput(dt, {3, 4});
    expectSame(std::string("angle ") + toString(dt),
               [&](Device d) { return f.call(on(d, x)); });
    expectSame(std::string("angle transposed ") + toString(dt),
               [&](Device d) { return f.call(transposed(on(d, x), 0, 1)); });
  }
  expectSame("angle.out", [&](Device d) {
    Tensor o = empty({0}, TensorOptions(kDouble).device(d));
    out_op.call(on(d, unaryInput(kFloat, {3, 4})), o);
    return o;
  });
}

TEST_F(CudaPointwise, UnaryInplaceAndOutMatchCpu) {
  for (const UnaryCase& c : kUnaryCases) {
    const std::string qualified = std::string("aten::") + c.name;
    const auto inplace = op<Tensor&(Tensor&)>((qualified + "_").c_str());
    const auto out_op =
        op<Tensor&(const Tensor&, Tensor&)>(qualified.c_str(), "out");
    const ScalarType dt = c.integral_only ? kInt : kFloat;
    const Tensor x = unaryInput(dt, {3, 4});
    const std::string name = c.name;
    expectSame(name + "_ contiguous", [&](Device d) {
      Tensor t = on(d, x);
      inplace.call(t);
      return t;
    });
    expectSame(name + "_ transposed view", [&](Device d) {
      Tensor t = on(d, x);
      Tensor v = transposed(t, 0, 1);
      inplace.call(v);
      return t;
    });
    expectSame(name + ".out same shape", [&](Device d) {
      Tensor out = empty({3, 4}, TensorOptions(dt).device(d));
      out_op.call(on(d, x), out);
      return out;
    });
    expectSame(name + ".out resized from empty", [&](Device d) {
      Tensor out = empty({0}, TensorOptions(dt).device(d));
      out_op.call(transposed(on(d, x), 0, 1), out);
      return out;
    });
    if (!c.integral_only) {
      expectSame(name + ".out into a strided out", [&](Device d) {
        Tensor out = stridedOn(d, zeros({3, 4}));
        out_op.call(on(d, x), out);
        return out;
      });
    }
  }
  // The floating operators write integral inputs' results into a floating
  // out; an integral self cannot hold them, on CUDA as on the CPU.
  expectSame("sin.out of Long into Double", [&](Device d) {
    Tensor out = empty({4}, TensorOptions(kDouble).device(d));
    op<Tensor&(const Tensor&, Tensor&)>("aten::sin", "out")
        .call(on(d, mixed(kLong, {4}, 1.0, -2.0)), out);
    return out;
  });
  Tensor long_cuda = to(mixed(kLong, {4}, 1.0, -2.0), cudaDevice());
  EXPECT_THAT(errorOf([&] { sin_(long_cuda); }),
              HasSubstr("result type Float can't be cast to the desired "
                        "output type Long"));
  Tensor float_cuda = to(mixed(kFloat, {4}), cudaDevice());
  EXPECT_THAT(errorOf([&] { bitwise_not(float_cuda); }),
              HasSubstr("\"bitwise_not_cpu\" not implemented for 'Float'"));
}

TEST_F(CudaPointwise, RoundDecimalsMatchesCpu) {
  const Tensor x = tensorOf({1.2345, -2.5, 0.125, 1234.5, -0.0049, 2.675},
                            {2, 3}, kDouble);
  for (int64_t decimals : {0, 1, 2, -1, -2}) {
    for (ScalarType dt : {kFloat, kDouble, kHalf}) {
      const std::string name = "round.decimals " + std::to_string(decimals) +
                               " " + toString(dt);
      const Tensor xt = to(x, dt);
      expectSame(name, [&](Device d) { return round(on(d, xt), decimals); },
                 rtolFor(dt), atolFor(dt));
      expectSame(name + " in place", [&](Device d) {
        Tensor t = on(d, xt);
        round_(t, decimals);
        return t;
      }, rtolFor(dt), atolFor(dt));
      expectSame(name + " out", [&](Device d) {
        Tensor out = empty({0}, TensorOptions(dt).device(d));
        op<Tensor&(const Tensor&, int64_t, Tensor&)>("aten::round",
                                                      "decimals_out")
            .call(on(d, xt), decimals, out);
        return out;
      }, rtolFor(dt), atolFor(dt));
    }
  }
}

// polygamma(n, x) for n = 0 (digamma), 1 (trigamma in the compute type),
// 2..4 and 25 (the Hurwitz zeta in double): positive and negative
// non-integers, the poles; integers compute in Float.
TEST_F(CudaPointwise, PolygammaMatchesCpu) {
  const Tensor x = tensorOf(
      {0.3, 1.0, 2.5, 7.25, -0.5, -2.75, 0.0, -1.0, 30.0, 1e-3, 12.0, 0.75},
      {3, 4}, kDouble);
  const auto fn = op<Tensor(int64_t, const Tensor&)>("aten::polygamma");
  const auto inplace = op<Tensor&(Tensor&, int64_t)>("aten::polygamma_");
  const auto out_op =
      op<Tensor&(int64_t, const Tensor&, Tensor&)>("aten::polygamma", "out");
  for (int64_t n : {0, 1, 2, 3, 4, 25}) {
    for (ScalarType dt : {kFloat, kDouble, kBFloat16, kHalf, kLong}) {
      const std::string name =
          "polygamma " + std::to_string(n) + " " + toString(dt);
      const Tensor xt = to(x, dt);
      const double rtol = dt == kDouble ? 1e-10 : rtolFor(dt);
      if (dt == kHalf) {  // refused on CPU, as torch's
        continue;
      }
      expectSame(
          name, [&](Device d) { return fn.call(n, on(d, xt)); }, rtol,
          atolFor(dt));
      expectSame(
          name + " transposed",
          [&](Device d) { return fn.call(n, transposed(on(d, xt), 0, 1)); },
          rtol, atolFor(dt));
      if (dt == kLong) continue;
      expectSame(
          name + " in place",
          [&](Device d) {
            Tensor t = on(d, xt);
            inplace.call(t, n);
            return t;
          },
          rtol, atolFor(dt));
      expectSame(
          name + " out",
          [&](Device d) {
            Tensor out = empty({0}, TensorOptions(kDouble).device(d));
            out_op.call(n, on(d, xt), out);
            return out;
          },
          rtol, atolFor(dt));
    }
  }
  Tensor cuda_x = to(x, cudaDevice());
  EXPECT_THAT(errorOf([&] { fn.call(-1, cuda_x); }),
              HasSubstr("polygamma(n, x) does not support negative n."));
}

struct BinaryCase {
  const char* name;
  const char* overload;
  bool integral_only;  // bitwise_xor
  bool has_inplace;
};

const BinaryCase kBinaryCases[] = {
    {"maximum", "", false, false},
    {"minimum", "", false, false},
    {"fmod", "Tensor", false, true},
    {"floor_divide", "", false, true},
    {"bitwise_xor", "Tensor", true, true},
};

struct BinaryInputs {
  const char* name;
  Tensor a, b;
  bool integral;
};

// Divisors are never 0 (the integer case is tested on its own below).
std::vector<BinaryInputs> binaryInputs() {
  return {
      {"float", mixed(kFloat, {3, 4}, 0.7, -4.0),
       mixed(kFloat, {3, 4}, 0.3, 0.35), false},
      {"broadcast", mixed(kFloat, {2, 1, 4}, 0.9, -3.0),
       tensorOf({-1.5, 2.0, 0.75}, {3, 1}), false},
      {"int and float", mixed(kInt, {3, 4}, 1.0, -5.0),
       tensorOf({2.5, -1.25, 3.0, -0.5}, {4}), false},
      {"long", mixed(kLong, {6}, 5.0, -13.0),
       tensorOf({3, -4, 5, -2, 7, 1}, {6}, kLong), true},
      {"int broadcast with a Long", mixed(kInt, {2, 3}, 4.0, -9.0),
       tensorOf({-3, 2, 5}, {3}, kLong), true},
      {"half and a double 0-dim", mixed(kHalf, {5}, 0.6, -1.0),
       tensorOf({1.5}, {}, kDouble), false},
      {"transposed double", transposed(mixed(kDouble, {4, 3}, 0.8, -5.0), 0, 1),
       testing::stridedCopy(mixed(kDouble, {3, 4}, 0.2, 0.3)), false},
      {"with NaN", tensorOf({NAN, 1.0, -2.0, NAN}, {4}),
       tensorOf({0.5, NAN, 3.0, NAN}, {4}), false},
  };
}

TEST_F(CudaPointwise, BinaryOperatorsMatchCpu) {
  for (const BinaryCase& c : kBinaryCases) {
    const std::string qualified = std::string("aten::") + c.name;
    const auto f = op<Binary>(qualified.c_str(), c.overload);
    for (const BinaryInputs& in : binaryInputs()) {
      if (c.integral_only && !in.integral) continue;
      const std::string name = std::string(c.name) + " " + in.name;
      expectSame(name, [&](Device d) { return f.call(on(d, in.a), on(d, in.b)); });
      // A 0-dim CPU tensor goes with a CUDA tensor, as a number would.
      expectSame(name + " with a CPU scalar", [&](Device d) {
        return f.call(on(d, in.a), tensorOf({3.0}, {}, kLong));
      });
      if (c.has_inplace && in.a.sizes() == in.b.sizes() &&
          in.a.scalar_type() == resultType(in.a, in.b)) {
        expectSame(name + " in place", [&](Device d) {
          Tensor t = on(d, in.a);
          op<Tensor&(Tensor&, const Tensor&)>((qualified + "_").c_str(),
                                              "Tensor")
              .call(t, on(d, in.b));
          return t;
        });
      }
    }
  }
  // bitwise_xor of Bool, and Bool with a Byte.
  const Tensor p = tensorOf({1, 0, 1, 0}, {4}, kBool);
  const Tensor q = tensorOf({1, 1, 0, 0}, {4}, kBool);
  const auto xor_op = op<Binary>("aten::bitwise_xor", "Tensor");
  expectSame("bitwise_xor Bool",
             [&](Device d) { return xor_op.call(on(d, p), on(d, q)); });
  expectSame("bitwise_xor Bool and Byte", [&](Device d) {
    return xor_op.call(on(d, p), on(d, tensorOf({3, 2, 1, 0}, {4}, kByte)));
  });
  // The Scalar overloads are composite over the Tensor ones.
  expectSame("fmod.Scalar", [&](Device d) {
    return op<Tensor(const Tensor&, const Scalar&)>("aten::fmod", "Scalar")
        .call(on(d, mixed(kFloat, {5}, 0.9, -2.0)), 0.75);
  });
  expectSame("floor_divide.Scalar", [&](Device d) {
    return op<Tensor(const Tensor&, const Scalar&)>("aten::floor_divide",
                                                     "Scalar")
        .call(on(d, mixed(kLong, {5}, 3.0, -7.0)), -2);
  });
}

// Device code cannot raise: an integer fmod or floor_divide by zero gives 0
// on CUDA (the CPU kernels raise ZeroDivisionError).
TEST_F(CudaPointwise, IntegerDivisionByZeroGivesZero) {
  const Tensor a = to(tensorOf({7, -7, 0}, {3}, kLong), cudaDevice());
  const Tensor zero = to(tensorOf({0, 0, 0}, {3}, kLong), cudaDevice());
  for (const char* name : {"fmod", "floor_divide"}) {
    SCOPED_TRACE(name);
    const auto f = op<Binary>((std::string("aten::") + name).c_str(),
                              std::string(name) == "fmod" ? "Tensor" : "");
    EXPECT_EQ(valuesOf(to(f.call(a, zero), cpuDevice())),
              (std::vector<double>{0, 0, 0}));
    EXPECT_THAT(errorOf([&] {
                  f.call(to(a, cpuDevice()), to(zero, cpuDevice()));
                }),
                HasSubstr("ZeroDivisionError"));
  }
}

TEST_F(CudaPointwise, LogicalNotMatchesCpu) {
  const auto f = op<Unary>("aten::logical_not");
  const auto inplace = op<Tensor&(Tensor&)>("aten::logical_not_");
  for (ScalarType dt : kUnaryDtypes) {
    const Tensor x = dt == kBool ? tensorOf({1, 0, 1}, {3}, kBool)
                                 : to(tensorOf({0, 2, -1}, {3}), dt);
    const std::string name = toString(dt);
    expectSame("logical_not " + name,
               [&](Device d) { return f.call(on(d, x)); });
    expectSame("logical_not_ " + name, [&](Device d) {
      Tensor t = on(d, x);
      inplace.call(t);
      return t;
    });
  }
  expectSame("logical_not NaN",
             [&](Device d) { return f.call(on(d, tensorOf({NAN}, {1}))); });
}

TEST_F(CudaPointwise, MaskedFillAndWhereOutMatchCpu) {
  const Tensor mask = tensorOf({1, 0, 0, 1}, {4}, kBool);
  for (ScalarType dt : {kFloat, kHalf, kLong, kDouble}) {
    const std::string name = toString(dt);
    const Tensor x = to(mixed(kFloat, {3, 4}), dt);
    // 0.1 is rounded to Half as the CPU kernel rounds it.
    const Scalar value = isFloatingType(dt) ? Scalar(0.1) : Scalar(5);
    expectSame("masked_fill_.Scalar broadcast mask " + name, [&](Device d) {
      Tensor t = on(d, x);
      masked_fill_(t, on(d, mask), value);
      return t;
    });
    expectSame("masked_fill_.Tensor CPU value " + name, [&](Device d) {
      Tensor t = on(d, x);
      masked_fill_(t, on(d, mask), tensorOf({-3.0}, {}, kDouble));
      return t;
    });
    expectSame("masked_fill on a transposed input " + name, [&](Device d) {
      return masked_fill(transposed(on(d, to(mixed(kFloat, {4, 3}), dt)), 0, 1),
                         on(d, mask), 7);
    });
  }
  EXPECT_THAT(errorOf([&] {
                Tensor t = to(mixed(kByte, {4}), cudaDevice());
                masked_fill_(t, to(mask, cudaDevice()), 300);
              }),
              HasSubstr("cannot be converted"));
  const auto where_out =
      op<Tensor&(const Tensor&, const Tensor&, const Tensor&, Tensor&)>(
          "aten::where", "self_out");
  expectSame("where.self_out broadcast, resized", [&](Device d) {
    Tensor out = empty({0}, TensorOptions(kDouble).device(d));
    where_out.call(on(d, mask), on(d, mixed(kFloat, {3, 4})),
                   on(d, tensorOf({2.0}, {1}, kDouble)), out);
    return out;
  });
}

// addcmul, addcdiv and lerp (functional, in place, out=) through
// elementwise.cu's ternary operations, over broadcast, transposed and
// strided operands; the CPU-round-trip operators of select_ops.cc too.
TEST_F(CudaPointwise, AddcmulAddcdivLerpMatchCpu) {
  using Addc = Tensor(const Tensor&, const Tensor&, const Tensor&,
                      const Scalar&);
  using AddcInplace = Tensor&(Tensor&, const Tensor&, const Tensor&,
                              const Scalar&);
  using AddcOut = Tensor&(const Tensor&, const Tensor&, const Tensor&,
                          const Scalar&, Tensor&);
  const Tensor a = mixed(kFloat, {3, 4});
  const Tensor b = mixed(kFloat, {4}, 0.5, 0.25);
  const Tensor c = mixed(kFloat, {3, 1}, 0.7, 0.5);  // no zeros
  for (const char* name : {"aten::addcmul", "aten::addcdiv"}) {
    const std::string inplace = std::string(name) + "_";
    expectSame(name, [&](Device d) {
      return op<Addc>(name).call(transposed(on(d, mixed(kFloat, {4, 3})), 0, 1),
                                 on(d, b), stridedOn(d, c), 0.5);
    });
    expectSame(inplace, [&](Device d) {
      Tensor self = on(d, a);
      op<AddcInplace>(inplace.c_str()).call(self, on(d, b), on(d, c), -2);
      return self;
    });
    expectSame(std::string(name) + ".out resized", [&](Device d) {
      Tensor out = empty({0}, TensorOptions(kDouble).device(d));
      op<AddcOut>(name, "out").call(on(d, to(a, kDouble)), on(d, b), on(d, c),
                                    3, out);
      return out;
    });
  }
  expectSame("addcmul int wraps", [&](Device d) {
    const Tensor i8 = tensorOf({100, -100, 7}, {3}, kChar);
    return op<Addc>("aten::addcmul").call(on(d, i8), on(d, i8),
                                          on(d, tensorOf({1}, {}, kChar)), 2.7);
  });
  using LerpS = Tensor(const Tensor&, const Tensor&, const Scalar&);
  using LerpT = Tensor(const Tensor&, const Tensor&, const Tensor&);
  for (ScalarType dt : {kFloat, kDouble, kHalf}) {
    const double tol = isReduced(dt) ? 1e-2 : 1e-5;
    const Tensor w = mixed(dt, {4}, 0.4, -0.5);  // both formula branches
    expectSame("lerp.Scalar", [&](Device d) {
      return op<LerpS>("aten::lerp", "Scalar").call(
          on(d, mixed(dt, {3, 4})), on(d, mixed(dt, {4})), 0.75);
    }, tol, tol);
    expectSame("lerp.Tensor", [&](Device d) {
      return op<LerpT>("aten::lerp", "Tensor").call(
          on(d, mixed(dt, {3, 4})), stridedOn(d, mixed(dt, {3, 4}, 0.1)),
          on(d, w));
    }, tol, tol);
  }
  EXPECT_THAT(errorOf([&] {
                op<Addc>("aten::addcmul").call(
                    on(cudaDevice(), to(a, kBool)), on(cudaDevice(), to(a, kBool)),
                    on(cudaDevice(), to(a, kBool)), 1);
              }),
              ::testing::HasSubstr("not implemented for 'Bool'"));
  // Through the CPU round trip.
  expectSame("tril", [&](Device d) {
    return op<Tensor(const Tensor&, int64_t)>("aten::tril").call(on(d, a), 1);
  });
  expectSame("roll", [&](Device d) {
    return op<Tensor(const Tensor&, IntArrayRef, IntArrayRef)>("aten::roll")
        .call(on(d, a), {1, -1}, {0, 1});
  });
  expectSame("masked_select", [&](Device d) {
    return op<Tensor(const Tensor&, const Tensor&)>("aten::masked_select")
        .call(on(d, a), on(d, gt(b, 0.5)));
  });
}

// The activations are composite kernels over the operators above (and
// elementwise.cc's): every one of them, its in-place form and its backward
// operator run on CUDA.
TEST_F(CudaPointwise, ActivationsRunOnCudaAsOnCpu) {
  for (ScalarType dt : {kFloat, kDouble, kHalf}) {
    const Tensor x = to(mixed(kFloat, {3, 5}, 0.4, -3.0), dt);
    const Tensor g = to(mixed(kFloat, {3, 5}, 0.1, -0.6), dt);
    const double rtol = rtolFor(dt), atol = atolFor(dt);
    const std::string n = std::string(" ") + toString(dt);
    struct Case {
      std::string name;
      std::function<Tensor(const Tensor&, const Tensor&)> f;
    };
    const std::vector<Case> cases = {
        {"gelu", [](const Tensor& a, const Tensor&) { return gelu(a); }},
        {"gelu tanh",
         [](const Tensor& a, const Tensor&) { return gelu(a, "tanh"); }},
        {"gelu_backward",
         [](const Tensor& a, const Tensor& b) { return gelu_backward(b, a); }},
        {"silu", [](const Tensor& a, const Tensor&) { return silu(a); }},
        {"silu_backward",
         [](const Tensor& a, const Tensor& b) { return silu_backward(b, a); }},
        {"elu", [](const Tensor& a, const Tensor&) { return elu(a, 1.5); }},
        {"elu_backward",
         [](const Tensor& a, const Tensor& b) {
           return elu_backward(b, 1.5, 1, 1, false, a);
         }},
        {"leaky_relu",
         [](const Tensor& a, const Tensor&) { return leaky_relu(a, 0.2); }},
        {"leaky_relu_backward",
         [](const Tensor& a, const Tensor& b) {
           return leaky_relu_backward(b, a, 0.2, false);
         }},
        {"hardtanh",
         [](const Tensor& a, const Tensor&) { return hardtanh(a, -1, 2); }},
        {"hardtanh_backward",
         [](const Tensor& a, const Tensor& b) {
           return hardtanh_backward(b, a, -1, 2);
         }},
        {"softplus",
         [](const Tensor& a, const Tensor&) { return softplus(a, 2, 3); }},
        {"softplus_backward",
         [](const Tensor& a, const Tensor& b) {
           return softplus_backward(b, a, 2, 3);
         }},
        {"silu_", [](const Tensor& a, const Tensor&) {
           Tensor t = clone(a);
           silu_(t);
           return t;
         }},
        {"clamp_", [](const Tensor& a, const Tensor&) {
           Tensor t = clone(a);
           clamp_(t, -1, 1.5);
           return t;
         }},
    };
    for (const Case& c : cases) {
      expectSame(c.name + n, [&](Device d) { return c.f(on(d, x), on(d, g)); },
                 rtol, atol);
      expectSame(c.name + " strided" + n,
                 [&](Device d) { return c.f(stridedOn(d, x), on(d, g)); }, rtol,
                 atol);
    }
  }
}

// tanh_backward and sigmoid_backward: elementwise.cu's kernels against the
// CPU ones over contiguous, strided and broadcast inputs and mixed dtypes;
// Half (which torch 1.13's CPU tanh_backward refuses) against the CPU's
// Float result; integral inputs refused as torch's CUDA kernels refuse them.
TEST_F(CudaPointwise, TanhAndSigmoidBackwardRunOnCudaAsOnCpu) {
  const Tensor y = mixed(kFloat, {3, 5}, 0.1, -0.7);
  const Tensor g = mixed(kFloat, {3, 5}, 0.3, -2.0);
  const Tensor row = mixed(kDouble, {5}, 0.2, -0.4);
  for (const bool tanh_op : {true, false}) {
    const auto f = tanh_op ? tanh_backward : sigmoid_backward;
    const std::string n = tanh_op ? "tanh_backward" : "sigmoid_backward";
    for (ScalarType dt : {kFloat, kDouble, kBFloat16}) {
      const Tensor gd = to(g, dt), yd = to(y, dt);
      const double rtol = rtolFor(dt), atol = atolFor(dt);
      expectSame(n + " " + toString(dt),
                 [&](Device d) { return f(on(d, gd), on(d, yd)); }, rtol, atol);
      expectSame(n + " strided " + toString(dt),
                 [&](Device d) { return f(stridedOn(d, gd), on(d, yd)); },
                 rtol, atol);
      expectSame(n + " transposed " + toString(dt),
                 [&](Device d) {
                   return f(transposed(on(d, gd), 0, 1), transposed(on(d, yd), 0, 1));
                 },
                 rtol, atol);
    }
    // Broadcast, Float with Double: Double.
    expectSame(n + " broadcast mixed",
               [&](Device d) { return f(on(d, g), on(d, row)); });
    const Tensor half = f(to(to(g, kHalf), cudaDevice()),
                          to(to(y, kHalf), cudaDevice()));
    EXPECT_EQ(half.scalar_type(), kHalf);
    const std::vector<double> want =
        valuesOf(f(to(to(g, kHalf), kFloat), to(to(y, kHalf), kFloat)));
    const std::vector<double> have = valuesOf(to(half, cpuDevice()));
    ASSERT_EQ(have.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(have[i], want[i], 1e-2 + 1e-2 * std::abs(want[i])) << i;
    }
    const Tensor ints = to(to(g, kLong), cudaDevice());
    EXPECT_THAT(errorOf([&] { f(ints, ints); }),
                HasSubstr("\"" + n + "_cuda\" not implemented for 'Long'"));
  }
}

}  // namespace
}  // namespace turnout
