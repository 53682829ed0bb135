// Tests of the elementwise operators through the C++ front end (and a few
// boxed calls): values against double-precision references, dtypes,
// broadcasting, non-contiguous inputs, 0-dim and empty tensors, in-place and
// out= variants, Meta shapes, and PyTorch's errors.
#include "kernels/elementwise.h"

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/operator_handle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/loops.h"
#include "kernels/parallel.h"
#include "kernels/shape.h"
#include "kernels/tensor_utils.h"
#include "tests/error_of.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using Sizes = std::vector<int64_t>;
const Device kCpu(DeviceType::CPU);
const Device kMetaDevice(DeviceType::Meta);

// A CPU tensor of `dtype` and `sizes` holding `values` (row-major), each
// converted as a cast would.
Tensor make(ScalarType dtype, Sizes sizes, const std::vector<double>& values) {
  Tensor t = emptyTensor(sizes, dtype, kCpu);
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  visitDtype(dtype, "make", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = t.data_ptr<T>();
    for (size_t i = 0; i < values.size(); ++i) {
      data[i] = convertElement<T>(values[i]);
    }
  });
  return t;
}

Tensor floats(Sizes sizes, const std::vector<double>& values) {
  return make(kFloat, std::move(sizes), values);
}

// The elements of any CPU tensor in row-major order, as doubles.
std::vector<double> values(const Tensor& t) {
  Tensor c = emptyTensor(t.sizes(), kDouble, kCpu);
  copyCast(c, t);
  const double* data = c.data_ptr<double>();
  return std::vector<double>(data, data + c.numel());
}

Sizes sizesOf(const Tensor& t) { return Sizes(t.sizes().begin(), t.sizes().end()); }

// The message of the Error `f` throws ("" when it throws none).
using testing::errorOf;

void expectValues(const Tensor& t, const std::vector<double>& expected,
                  double tolerance = 0) {
  const std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
    } else if (tolerance == 0 || std::isinf(expected[i])) {
      EXPECT_EQ(got[i], expected[i]) << "element " << i;
    } else {
      EXPECT_NEAR(got[i], expected[i],
                  tolerance * std::max(1.0, std::abs(expected[i])))
          << "element " << i;
    }
  }
}

// ---- Binary arithmetic ---------------------------------------------------------

TEST(Elementwise, BinaryArithmeticValuesAndDtypes) {
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&, const Tensor&)> op;
    std::function<double(double, double)> ref;
    ScalarType a, b, expected;
  };
  auto add2 = [](const Tensor& a, const Tensor& b) { return add(a, b, 2); };
  const std::vector<Case> cases = {
      {"add", [](auto& a, auto& b) { return add(a, b); },
       [](double x, double y) { return x + y; }, kFloat, kFloat, kFloat},
      {"add alpha", add2, [](double x, double y) { return x + 2 * y; }, kInt,
       kLong, kLong},
      {"add int+float", [](auto& a, auto& b) { return a + b; },
       [](double x, double y) { return x + y; }, kInt, kFloat, kFloat},
      {"add double", [](auto& a, auto& b) { return a + b; },
       [](double x, double y) { return x + y; }, kDouble, kHalf, kDouble},
      {"sub", [](auto& a, auto& b) { return a - b; },
       [](double x, double y) { return x - y; }, kFloat, kDouble, kDouble},
      {"sub alpha", [](auto& a, auto& b) { return sub(a, b, 3); },
       [](double x, double y) { return x - 3 * y; }, kLong, kLong, kLong},
      {"mul", [](auto& a, auto& b) { return a * b; },
       [](double x, double y) { return x * y; }, kInt, kInt, kInt},
      {"mul short char", [](auto& a, auto& b) { return mul(a, b); },
       [](double x, double y) { return x * y; }, kChar, kShort, kShort},
      {"div", [](auto& a, auto& b) { return a / b; },
       [](double x, double y) { return x / y; }, kDouble, kDouble, kDouble},
      {"div int", [](auto& a, auto& b) { return div(a, b); },
       [](double x, double y) { return static_cast<float>(x / y); }, kInt,
       kLong, kFloat},
  };
  const std::vector<double> x = {1, -2, 3, 4, 7, 10};
  const std::vector<double> y = {2, 5, -3, 8, 2, 4};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor out = c.op(make(c.a, {2, 3}, x), make(c.b, {2, 3}, y));
    EXPECT_EQ(out.scalar_type(), c.expected);
    EXPECT_EQ(sizesOf(out), (Sizes{2, 3}));
    EXPECT_TRUE(out.is_contiguous());
    std::vector<double> expected;
    for (size_t i = 0; i < x.size(); ++i) expected.push_back(c.ref(x[i], y[i]));
    expectValues(out, expected);
  }
}

TEST(Elementwise, BoolArithmetic) {
  Tensor t = make(kBool, {4}, {0, 1, 0, 1});
  Tensor u = make(kBool, {4}, {0, 0, 1, 1});
  Tensor sum = add(t, u);
  EXPECT_EQ(sum.scalar_type(), kBool);
  expectValues(sum, {0, 1, 1, 1});
  Tensor prod = mul(t, u);
  EXPECT_EQ(prod.scalar_type(), kBool);
  expectValues(prod, {0, 0, 0, 1});
  Tensor quotient = div(t, make(kBool, {4}, {1, 1, 1, 1}));
  EXPECT_EQ(quotient.scalar_type(), kFloat);
  expectValues(quotient, {0, 1, 0, 1});
  Tensor plus_int = add(t, 2);
  EXPECT_EQ(plus_int.scalar_type(), kLong);
  expectValues(plus_int, {2, 3, 2, 3});
}

TEST(Elementwise, HalfAndBFloat16ComputeInFloat) {
  for (ScalarType dtype : {kHalf, kBFloat16}) {
    SCOPED_TRACE(toString(dtype));
    Tensor a = make(dtype, {3}, {1, 2.5, -4});
    Tensor b = make(dtype, {3}, {0.5, 0.25, 8});
    Tensor out = add(a, b);
    EXPECT_EQ(out.scalar_type(), dtype);
    expectValues(out, {1.5, 2.75, 4});
    Tensor scaled = mul(a, 0.5);  // a Python float keeps the 16-bit dtype
    EXPECT_EQ(scaled.scalar_type(), dtype);
    expectValues(scaled, {0.5, 1.25, -2});
    EXPECT_EQ(add(a, floats({3}, {1, 1, 1})).scalar_type(), kFloat);
  }
}

TEST(Elementwise, IntegerArithmeticWraps) {
  Tensor a = make(kLong, {1}, {0});
  a.data_ptr<int64_t>()[0] = std::numeric_limits<int64_t>::max();
  Tensor sum = add(a, 1);
  EXPECT_EQ(sum.data_ptr<int64_t>()[0], std::numeric_limits<int64_t>::min());
  Tensor b = make(kInt, {2}, {65536, -2147483648.0});
  expectValues(mul(b, make(kInt, {2}, {65536, 1})), {0, -2147483648.0});
  expectValues(neg(make(kInt, {1}, {-2147483648.0})), {-2147483648.0});
}

TEST(Elementwise, ScalarOverloadsPromoteByCategory) {
  Tensor i = make(kInt, {3}, {1, 2, 3});
  struct Case {
    const char* name;
    Tensor out;
    ScalarType dtype;
    std::vector<double> expected;
  };
  const std::vector<Case> cases = {
      {"int + 2", add(i, 2), kInt, {3, 4, 5}},
      {"int + 2.5", add(i, 2.5), kFloat, {3.5, 4.5, 5.5}},
      {"int - 1 alpha 2", sub(i, 1, 2), kInt, {-1, 0, 1}},
      {"int * 3", mul(i, 3), kInt, {3, 6, 9}},
      {"int / 2", div(i, 2), kFloat, {0.5, 1, 1.5}},
      {"int + true", add(i, true), kInt, {2, 3, 4}},
      {"double + 0.1", add(make(kDouble, {1}, {1}), 0.1), kDouble, {1.1}},
      {"2 * int", 2 * i, kInt, {2, 4, 6}},
      {"10 - int", 10 - i, kInt, {9, 8, 7}},
      {"1 + int", 1 + i, kInt, {2, 3, 4}},
      {"-int", -i, kInt, {-1, -2, -3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.out.scalar_type(), c.dtype);
    expectValues(c.out, c.expected);
  }
  // A 0-dim tensor of a higher category promotes; of the same, does not.
  Tensor zero_dim_double = make(kDouble, {}, {0.5});
  EXPECT_EQ(add(i, zero_dim_double).scalar_type(), kDouble);
  expectValues(add(i, zero_dim_double), {1.5, 2.5, 3.5});
  Tensor zero_dim_long = make(kLong, {}, {7});
  EXPECT_EQ(add(make(kByte, {2}, {1, 2}), zero_dim_long).scalar_type(), kByte);
  expectValues(add(make(kByte, {2}, {1, 2}), zero_dim_long), {8, 9});
  // A 0-dim tensor on the left.
  expectValues(sub(zero_dim_long, i), {6, 5, 4});
  expectValues(div(zero_dim_double, make(kFloat, {2}, {2, 4})), {0.25, 0.125});
}

// The 0-dim CPU tensor the Python bindings make of a number (`x * 4` is
// mul.Tensor(x, <4>)): bool, int64 or float64, flagged as a number.
Tensor wrappedNumber(ScalarType dtype, double value) {
  Tensor t = make(dtype, {}, {value});
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

// The Tensor overloads with a wrapped number give what the Scalar
// overloads give (torch 1.13: int tensor * 2.5 is float32, int8 + 1000
// stays int8), on either side; a plain 0-dim tensor does not.
TEST(Elementwise, WrappedNumbersPromoteAsScalars) {
  Tensor i = make(kInt, {3}, {1, 2, 3});
  Tensor c = make(kChar, {2}, {1, -2});
  Tensor h = make(kHalf, {2}, {1, 2});
  Tensor b = make(kBool, {2}, {0, 1});
  struct Case {
    const char* name;
    Tensor out;
    Tensor expected;
  };
  const std::vector<Case> cases = {
      {"int * 2.5", mul(i, wrappedNumber(kDouble, 2.5)), mul(i, 2.5)},
      {"2.5 * int", mul(wrappedNumber(kDouble, 2.5), i), mul(i, 2.5)},
      {"int / 2", div(i, wrappedNumber(kLong, 2)), div(i, 2)},
      {"int8 - 3 alpha 2", sub(c, wrappedNumber(kLong, 3), 2), sub(c, 3, 2)},
      {"half * 0.1", mul(h, wrappedNumber(kDouble, 0.1)), mul(h, 0.1)},
      {"bool + true", add(b, wrappedNumber(kBool, 1)), add(b, true)},
      {"bool * 3", mul(b, wrappedNumber(kLong, 3)), mul(b, 3)},
      {"int + true", add(i, wrappedNumber(kBool, 1)), add(i, true)},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    EXPECT_EQ(k.out.scalar_type(), k.expected.scalar_type());
    expectValues(k.out, values(k.expected));
  }
  EXPECT_EQ(mul(i, wrappedNumber(kDouble, 2.5)).scalar_type(), kFloat);
  // int8 + 1000 stays int8 and wraps, as torch's (the Scalar overload
  // refuses 1000 for int8 instead).
  Tensor wrapped_sum = add(c, wrappedNumber(kLong, 1000));
  EXPECT_EQ(wrapped_sum.scalar_type(), kChar);
  expectValues(wrapped_sum, {-23, -26});
  EXPECT_THAT(errorOf([&] { add(c, 1000); }), HasSubstr("overflow"));
  // The same values as plain 0-dim tensors promote as tensors.
  EXPECT_EQ(mul(i, make(kDouble, {}, {2.5})).scalar_type(), kDouble);
  // Number on the left of a non-commutative operator.
  Tensor f = make(kFloat, {2}, {2, 4});
  Tensor q = div(wrappedNumber(kLong, 1), f);
  EXPECT_EQ(q.scalar_type(), kFloat);
  expectValues(q, {0.5, 0.25});
  // In place: the wrapped number does not promote self.
  Tensor x = make(kInt, {2}, {1, 2});
  add_(x, wrappedNumber(kLong, 5));
  expectValues(x, {6, 7});
  EXPECT_THAT(errorOf([&] { mul_(x, wrappedNumber(kDouble, 1.5)); }),
              HasSubstr("result type Float can't be cast to the desired "
                        "output type Int"));
  expectValues(x, {6, 7});
}

// A wrapped number is a CPU tensor while the other operand may be on any
// device, as the CUDA kernels take it: the Meta kernels (which the CUDA
// kernels run for their shapes and dtypes, with CPU scalars passed as they
// are) accept it and put the result on the other operand's device.
TEST(Elementwise, WrappedNumbersGoWithTensorsOnAnyDevice) {
  Tensor m = emptyTensor({3}, kInt, kMetaDevice);
  for (const Tensor& out :
       {mul(m, wrappedNumber(kDouble, 2.5)), mul(wrappedNumber(kDouble, 2.5), m),
        add(m, wrappedNumber(kDouble, 0.5)), div(wrappedNumber(kLong, 1), m)}) {
    EXPECT_EQ(out.device(), kMetaDevice);
    EXPECT_EQ(out.scalar_type(), kFloat);
    EXPECT_EQ(sizesOf(out), Sizes({3}));
  }
  Tensor mi = emptyTensor({3}, kInt, kMetaDevice);
  add_(mi, wrappedNumber(kLong, 1));  // in place, self on the other device
  EXPECT_EQ(mi.device(), kMetaDevice);
  // A 1-dim CPU tensor is no number: refused, as torch refuses it.
  EXPECT_THAT(errorOf([&] { mul(m, make(kLong, {1}, {2})); }),
              HasSubstr("Expected all tensors to be on the same device"));
}

TEST(Elementwise, Broadcasting) {
  struct Case {
    Sizes a, b, out;
  };
  const std::vector<Case> cases = {
      {{3, 1}, {1, 4}, {3, 4}}, {{}, {2, 3}, {2, 3}}, {{2, 3}, {3}, {2, 3}},
      {{5, 1, 3}, {4, 1}, {5, 4, 3}}, {{0}, {1}, {0}}, {{2, 0}, {2, 1}, {2, 0}},
      {{}, {}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "a " << c.a.size() << "-d, b "
                                    << c.b.size() << "-d, out "
                                    << c.out.size() << "-d");
    auto iota = [](const Sizes& s, double start) {
      std::vector<double> v(numelOf(s));
      for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<double>(i);
      return v;
    };
    Tensor a = make(kDouble, c.a, iota(c.a, 1));
    Tensor b = make(kDouble, c.b, iota(c.b, 100));
    Tensor out = add(a, b);
    ASSERT_EQ(sizesOf(out), c.out);
    // Reference: index each operand by the broadcast rule.
    const std::vector<double> va = values(a), vb = values(b), vo = values(out);
    const DimVector strides_out = contiguousStrides(c.out);
    for (int64_t flat = 0; flat < numelOf(c.out); ++flat) {
      auto offset = [&](const Sizes& s) {
        int64_t off = 0;
        const DimVector st = contiguousStrides(s);
        const size_t shift = c.out.size() - s.size();
        for (size_t d = 0; d < s.size(); ++d) {
          const int64_t idx = (flat / strides_out[d + shift]) % c.out[d + shift];
          off += (s[d] == 1 ? 0 : idx) * st[d];
        }
        return off;
      };
      EXPECT_EQ(vo[flat], va[offset(c.a)] + vb[offset(c.b)]) << flat;
    }
  }
  EXPECT_EQ(errorOf([] { add(floats({2, 3}, {1, 2, 3, 4, 5, 6}),
                             floats({2}, {1, 2})); }),
            "The size of tensor a (3) must match the size of tensor b (2) at "
            "non-singleton dimension 1");
}

TEST(Elementwise, NonContiguousInputs) {
  // base is 3x4: 0..11. Its transpose (4x3) and a strided column slice.
  std::vector<double> iota(12);
  for (int i = 0; i < 12; ++i) iota[i] = i;
  Tensor base = floats({3, 4}, iota);
  Tensor transposed = makeView(base, {4, 3}, {1, 4}, 0);
  Tensor every_other = makeView(base, {3, 2}, {4, 2}, 1);  // columns 1 and 3
  EXPECT_FALSE(transposed.is_contiguous());

  Tensor t = add(transposed, 1);
  expectValues(t, {1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12});
  Tensor u = mul(every_other, floats({2}, {10, 100}));
  expectValues(u, {10, 300, 50, 700, 90, 1100});
  Tensor v = sub(transposed, transposed);
  expectValues(v, std::vector<double>(12, 0));
  Tensor w = exp(every_other);
  expectValues(w, {std::exp(1.0), std::exp(3.0), std::exp(5.0), std::exp(7.0),
                   std::exp(9.0), std::exp(11.0)},
               1e-6);
  // An expanded (stride 0) input.
  Tensor row = makeView(floats({3}, {1, 2, 3}), {2, 3}, {0, 1}, 0);
  expectValues(add(row, row), {2, 4, 6, 2, 4, 6});
  // A non-contiguous input with another dtype is cast first.
  Tensor ints = make(kInt, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor ints_t = makeView(ints, {3, 2}, {1, 3}, 0);
  expectValues(add(ints_t, 0.5), {1.5, 4.5, 2.5, 5.5, 3.5, 6.5});
}

TEST(Elementwise, ZeroDimAndEmpty) {
  Tensor s = floats({}, {3});
  Tensor out = add(s, s);
  EXPECT_EQ(out.dim(), 0);
  expectValues(out, {6});
  expectValues(relu(floats({}, {-1})), {0});
  Tensor empty = floats({0, 3}, {});
  EXPECT_EQ(sizesOf(add(empty, 1)), (Sizes{0, 3}));
  EXPECT_EQ(sizesOf(exp(empty)), (Sizes{0, 3}));
  EXPECT_EQ(sizesOf(lt(empty, floats({3}, {1, 2, 3}))), (Sizes{0, 3}));
  EXPECT_EQ(sizesOf(where(make(kBool, {0, 1}, {}), empty, s)), (Sizes{0, 3}));
}

TEST(Elementwise, ArithmeticErrors) {
  Tensor i = make(kInt, {2}, {1, 2});
  Tensor b = make(kBool, {2}, {1, 0});
  Tensor f = floats({2}, {1, 2});
  struct Case {
    const char* name;
    std::function<void()> call;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"float alpha", [&] { add(i, i, 0.5); },
       "For integral input tensors, argument alpha must not be a floating "
       "point number."},
      {"bool alpha", [&] { add(f, f, true); },
       "Boolean alpha only supported for Boolean results."},
      {"sub bools", [&] { sub(b, b); },
       "Subtraction, the `-` operator, with two bool tensors is not supported. "
       "Use the `^` or `logical_xor()` operator instead."},
      {"sub bool", [&] { sub(i, b); },
       "Subtraction, the `-` operator, with a bool tensor is not supported. If "
       "you are trying to invert a mask, use the `~` or `logical_not()` "
       "operator instead."},
      {"sub bool scalar", [&] { sub(b, true); },
       "Subtraction, the `-` operator, with two bool tensors is not supported. "
       "Use the `^` or `logical_xor()` operator instead."},
      {"neg bool", [&] { neg(b); },
       "Negation, the `-` operator, on a bool tensor is not supported. If you "
       "are trying to invert a mask, use the `~` or `logical_not()` operator "
       "instead."},
      {"abs bool", [&] { turnout::abs(b); },
       "\"abs_cpu\" not implemented for 'Bool'"},
      {"relu bool", [&] { relu(b); }, "Boolean inputs not supported for relu"},
      {"scalar overflow", [&] { add(make(kByte, {1}, {1}), 300); },
       "Scalar: value 300 cannot be converted to Byte without overflow"},
      {"undefined", [&] { add(Tensor(), f); },
       "add: expected a defined tensor, but got an undefined one"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(errorOf(c.call), c.message);
  }
}

// ---- In-place and out= -------------------------------------------------------------

TEST(Elementwise, InPlace) {
  Tensor a = floats({2, 2}, {1, 2, 3, 4});
  const Tensor& r = add_(a, floats({2}, {10, 20}));
  EXPECT_TRUE(r.is_same(a));
  expectValues(a, {11, 22, 13, 24});
  sub_(a, 1, 2);
  expectValues(a, {9, 20, 11, 22});
  mul_(a, floats({2, 1}, {2, 3}));
  expectValues(a, {18, 40, 33, 66});
  div_(a, 2);
  expectValues(a, {9, 20, 16.5, 33});
  a += 1;
  a -= floats({}, {1});
  a *= 2;
  a /= a;
  expectValues(a, {1, 1, 1, 1});

  // Into a transposed view: writes land in the base.
  Tensor base = floats({2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor view = makeView(base, {3, 2}, {1, 3}, 0);
  add_(view, floats({3, 2}, {10, 20, 30, 40, 50, 60}));
  expectValues(base, {10, 31, 52, 23, 44, 65});

  // Int self with a Long other: the result (Long) casts back to Int.
  Tensor i = make(kInt, {2}, {1, 2});
  add_(i, make(kLong, {2}, {5, 6}));
  EXPECT_EQ(i.scalar_type(), kInt);
  expectValues(i, {6, 8});
  // Float self with a Double 0-dim other stays Float.
  Tensor f = floats({2}, {1, 2});
  mul_(f, make(kDouble, {}, {0.5}));
  expectValues(f, {0.5, 1});
}

TEST(Elementwise, InPlaceErrors) {
  Tensor i = make(kInt, {2}, {1, 2});
  EXPECT_EQ(errorOf([&] { div_(i, 2); }),
            "result type Float can't be cast to the desired output type Int");
  EXPECT_EQ(errorOf([&] { add_(i, 0.5); }),
            "result type Float can't be cast to the desired output type Int");
  EXPECT_EQ(errorOf([&] { add_(floats({2}, {1, 2}), floats({3, 2}, {1, 2, 3, 4, 5, 6})); }),
            "output with shape [2] doesn't match the broadcast shape [3, 2]");
  Tensor expanded = makeView(floats({1}, {1}), {3}, {0}, 0);
  EXPECT_EQ(errorOf([&] { add_(expanded, 1); }),
            "add_(): unsupported operation: more than one element of the "
            "written-to tensor refers to a single memory location. Please "
            "clone() the tensor before performing the operation.");
}

// In-place and out= writes over memory an input shares, as PyTorch: z[1:]
// += z[:-1] used to compute [0, 1, 3, 5, 7, 12, 11, 18] on arange(8).
TEST(Elementwise, PartialOverlapWithAnInputIsAnError) {
  auto slice1 = [](const Tensor& t, int64_t lo, std::optional<int64_t> hi,
                   int64_t step = 1) { return slice(t, 0, lo, hi, step); };
  struct Case {
    const char* name;
    std::function<void(const Tensor&)> f;  // on z = [0, 1, ..., 7]
  };
  const std::vector<Case> raising = {
      {"add_", [&](const Tensor& z) { add_(slice1(z, 1, {}), slice1(z, 0, 7)); }},
      {"sub_", [&](const Tensor& z) { sub_(slice1(z, 1, {}), slice1(z, 0, 7)); }},
      {"mul_", [&](const Tensor& z) { mul_(slice1(z, 1, {}), slice1(z, 0, 7)); }},
      {"div_", [&](const Tensor& z) { div_(slice1(z, 1, {}), slice1(z, 0, 7)); }},
      {"+=", [&](const Tensor& z) { slice1(z, 1, {}) += slice1(z, 0, 7); }},
      {"add_out", [&](const Tensor& z) {
         add_out(slice1(z, 1, {}), slice1(z, 0, 7), slice1(z, 0, 7));
       }},
      {"mul_out other", [&](const Tensor& z) {
         mul_out(slice1(z, 1, {}), floats({7}, {1, 1, 1, 1, 1, 1, 1}),
                 slice1(z, 0, 7));
       }},
      {"transposed", [&](const Tensor& z) {
         Tensor x = view(z, {2, 2, 2});
         add_(x, transpose(x, 0, 2));
       }},
      {"broadcast row", [&](const Tensor& z) {
         Tensor x = view(z, {2, 4});
         mul_(x, select(x, 0, 0));
       }},
      {"0-dim inside", [&](const Tensor& z) {
         add_(slice1(z, 0, 7), select(z, 0, 3));
       }},
  };
  for (const Case& c : raising) {
    SCOPED_TRACE(c.name);
    Tensor z = floats({8}, {0, 1, 2, 3, 4, 5, 6, 7});
    EXPECT_THAT(errorOf([&] { c.f(z); }),
                HasSubstr("(): unsupported operation: some elements of the "
                          "input tensor and the written-to tensor refer to a "
                          "single memory location. Please clone() the tensor "
                          "before performing the operation."));
    expectValues(z, {0, 1, 2, 3, 4, 5, 6, 7});  // nothing written
  }
  // Allowed: the same memory in the same layout, disjoint ranges, and a
  // 0-dim operand outside the written range.
  Tensor z = floats({8}, {0, 1, 2, 3, 4, 5, 6, 7});
  add_(z, z);
  add_(slice1(z, 1, {}), slice1(z, 1, {}));
  add_out(z, z, z);
  expectValues(z, {0, 8, 16, 24, 32, 40, 48, 56});
  Tensor w = floats({8}, {0, 1, 2, 3, 4, 5, 6, 7});
  add_(slice1(w, 0, 4), slice1(w, 4, {}));
  add_(slice1(w, 1, {}), select(w, 0, 0));
  expectValues(w, {4, 10, 12, 14, 8, 9, 10, 11});
  // Strided views (gaps): overlap not computed, the input read from a copy.
  Tensor v = floats({8}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor even = slice1(v, 0, {}, 2);
  add_(slice1(even, 1, {}), slice1(even, 0, 3));
  expectValues(v, {0, 1, 2, 3, 6, 5, 10, 7});
  // Meta: the same check, by storage offsets.
  Tensor m = emptyTensor({8}, kFloat, Device("meta"));
  EXPECT_THAT(errorOf([&] { add_(slice1(m, 1, {}), slice1(m, 0, 7)); }),
              HasSubstr("some elements of the input tensor"));
  // An expanded out= tensor.
  EXPECT_THAT(errorOf([&] {
                add_out(makeView(floats({1}, {1}), {3}, {0}, 0),
                        floats({3}, {1, 2, 3}), floats({3}, {1, 2, 3}));
              }),
              HasSubstr("add.out(): unsupported operation: more than one "
                        "element of the written-to tensor"));
}

TEST(Elementwise, OutVariants) {
  Tensor a = floats({2}, {1, 2});
  Tensor b = floats({2}, {4, 8});
  Tensor out = emptyTensor({2}, kDouble, kCpu);  // a wider out is fine
  const Tensor& r = add_out(out, a, b, 2);
  EXPECT_TRUE(r.is_same(out));
  expectValues(out, {9, 18});
  sub_out(out, a, b);
  expectValues(out, {-3, -6});
  mul_out(out, a, b);
  expectValues(out, {4, 16});
  div_out(out, a, b);
  expectValues(out, {0.25, 0.25});
  // out may be an input.
  add_out(a, a, b);
  expectValues(a, {5, 10});

  EXPECT_EQ(errorOf([&] { div_out(emptyTensor({2}, kLong, kCpu), a, b); }),
            "result type Float can't be cast to the desired output type Long");
  // An out of another shape is resized, as torch's (op_db's differential
  // test checks it against torch 1.13).
  Tensor empty_out = emptyTensor({0}, kFloat, kCpu);
  mul_out(empty_out, a, b);
  EXPECT_EQ(empty_out.sizes(), IntArrayRef({2}));
  expectValues(empty_out, {20, 80});
  Tensor wrong_out = emptyTensor({3, 1}, kFloat, kCpu);
  sub_out(wrong_out, a, b);  // warns: it had elements
  EXPECT_EQ(wrong_out.sizes(), IntArrayRef({2}));
  expectValues(wrong_out, {1, 2});
  // A refused call leaves out as it was.
  Tensor kept = emptyTensor({0}, kLong, kCpu);
  EXPECT_EQ(errorOf([&] { div_out(kept, a, b); }),
            "result type Float can't be cast to the desired output type Long");
  EXPECT_EQ(kept.sizes(), IntArrayRef({0}));
}

// ---- Unary -----------------------------------------------------------------------

TEST(Elementwise, UnaryFloatingOps) {
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&)> op;
    std::function<double(double)> ref;
  };
  const std::vector<Case> cases = {
      {"exp", [](auto& t) { return exp(t); }, [](double x) { return std::exp(x); }},
      {"log", [](auto& t) { return log(t); }, [](double x) { return std::log(x); }},
      {"sqrt", [](auto& t) { return sqrt(t); },
       [](double x) { return std::sqrt(x); }},
      {"tanh", [](auto& t) { return tanh(t); },
       [](double x) { return std::tanh(x); }},
      {"sigmoid", [](auto& t) { return sigmoid(t); },
       [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"abs", [](auto& t) { return turnout::abs(t); },
       [](double x) { return std::abs(x); }},
      {"neg", [](auto& t) { return neg(t); }, [](double x) { return -x; }},
      {"relu", [](auto& t) { return relu(t); },
       [](double x) { return x < 0 ? 0.0 : x; }},
  };
  const std::vector<double> x = {0.5, 1, 2, 3.25, -1, 0, 10, -0.75};
  for (const Case& c : cases) {
    for (ScalarType dtype : {kFloat, kDouble, kHalf, kBFloat16}) {
      SCOPED_TRACE(::testing::Message() << c.name << " " << dtype);
      Tensor out = c.op(make(dtype, {2, 4}, x));
      EXPECT_EQ(out.scalar_type(), dtype);
      std::vector<double> expected;
      for (double v : x) {
        // The input as the dtype holds it.
        const double held = values(make(dtype, {1}, {v}))[0];
        expected.push_back(c.ref(held));
      }
      const double tolerance = dtype == kDouble  ? 1e-15
                               : dtype == kFloat ? 1e-6
                               : dtype == kHalf  ? 1e-3
                                                 : 1e-2;
      expectValues(out, expected, tolerance);
    }
  }
}

TEST(Elementwise, UnaryIntegralInputs) {
  Tensor i = make(kInt, {3}, {1, 4, -9});
  EXPECT_EQ(exp(i).scalar_type(), kFloat);
  expectValues(sqrt(make(kLong, {2}, {4, 9})), {2, 3});
  expectValues(sigmoid(make(kBool, {2}, {0, 1})), {0.5, 1 / (1 + std::exp(-1.0))},
               1e-7);
  EXPECT_EQ(turnout::abs(i).scalar_type(), kInt);
  expectValues(turnout::abs(i), {1, 4, 9});
  expectValues(neg(i), {-1, -4, 9});
  expectValues(relu(i), {1, 4, 0});
  expectValues(relu(make(kByte, {2}, {0, 200})), {0, 200});
  // NaN passes through relu, and log of a negative is NaN.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  expectValues(relu(floats({2}, {nan, -1})), {nan, 0});
  expectValues(log(floats({1}, {-1})), {nan});
  // -0.0 from neg.
  EXPECT_TRUE(std::signbit(values(neg(floats({1}, {0})))[0]));
}

TEST(Elementwise, Pow) {
  struct Case {
    const char* name;
    Tensor self;
    Scalar exponent;
    ScalarType dtype;
    std::vector<double> expected;
  };
  const std::vector<Case> cases = {
      {"float ** 2", floats({3}, {1, -2, 3}), 2, kFloat, {1, 4, 9}},
      {"float ** 0.5", floats({2}, {4, 2}), 0.5, kFloat, {2, std::sqrt(2.0)}},
      {"float ** -1", floats({2}, {4, 0.5}), -1, kFloat, {0.25, 2}},
      {"float ** 3.5", make(kDouble, {1}, {2}), 3.5, kDouble, {std::pow(2.0, 3.5)}},
      {"int ** 3", make(kInt, {3}, {2, -3, 0}), 3, kInt, {8, -27, 0}},
      {"int ** 0", make(kInt, {2}, {5, 0}), 0, kInt, {1, 1}},
      {"int ** 0.5", make(kInt, {2}, {4, 9}), 0.5, kFloat, {2, 3}},
      {"bool ** 2", make(kBool, {2}, {0, 1}), 2, kLong, {0, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor out = pow(c.self, c.exponent);
    EXPECT_EQ(out.scalar_type(), c.dtype);
    expectValues(out, c.expected, 1e-6);
  }
  EXPECT_EQ(errorOf([] { pow(make(kInt, {1}, {2}), -1); }),
            "Integers to negative integer powers are not allowed.");
}

TEST(Elementwise, Clamp) {
  Tensor f = floats({5}, {-2, -0.5, 0.5, 2, std::nan("")});
  expectValues(clamp(f, -1, 1), {-1, -0.5, 0.5, 1, std::nan("")});
  expectValues(clamp(f, 0), {0, 0, 0.5, 2, std::nan("")});
  expectValues(clamp(f, std::nullopt, 0), {-2, -0.5, 0, 0, std::nan("")});
  expectValues(clamp(f, 1, -1), {-1, -1, -1, -1, std::nan("")});  // min > max
  Tensor i = make(kInt, {3}, {-5, 0, 5});
  EXPECT_EQ(clamp(i, -1, 1).scalar_type(), kInt);
  expectValues(clamp(i, -1, 1), {-1, 0, 1});
  EXPECT_EQ(clamp(i, -1.5, 1).scalar_type(), kFloat);
  expectValues(clamp(i, -1.5, 1), {-1.5, 0, 1});
  EXPECT_EQ(errorOf([&] { clamp(f, std::nullopt, std::nullopt); }),
            "torch.clamp: At least one of 'min' or 'max' must not be None");
  EXPECT_EQ(errorOf([] { clamp(make(kBool, {1}, {1}), false); }),
            "clamp is not supported for boolean tensors");
}

// ---- where and comparisons ----------------------------------------------------------

TEST(Elementwise, Where) {
  Tensor cond = make(kBool, {2, 1}, {1, 0});
  Tensor a = floats({3}, {1, 2, 3});
  Tensor b = make(kLong, {}, {-1});
  Tensor out = where(cond, a, b);
  EXPECT_EQ(out.scalar_type(), kFloat);
  EXPECT_EQ(sizesOf(out), (Sizes{2, 3}));
  expectValues(out, {1, 2, 3, -1, -1, -1});
  Tensor mixed = where(make(kBool, {2}, {0, 1}), make(kInt, {2}, {1, 2}),
                       make(kDouble, {2}, {0.5, 0.25}));
  EXPECT_EQ(mixed.scalar_type(), kDouble);
  expectValues(mixed, {0.5, 2});
  EXPECT_EQ(errorOf([&] { where(floats({3}, {1, 0, 1}), a, a); }),
            "where expected condition to be a boolean tensor, but got a tensor "
            "with dtype Float");
  EXPECT_EQ(errorOf([&] { where(make(kBool, {2}, {1, 0}), a, a); }),
            "The size of tensor a (2) must match the size of tensor b (3) at "
            "non-singleton dimension 0");
}

TEST(Elementwise, Comparisons) {
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&, const Tensor&)> op;
    std::function<Tensor(const Tensor&, const Scalar&)> op_scalar;
    std::function<bool(double, double)> ref;
  };
  const std::vector<Case> cases = {
      {"eq", [](auto& a, auto& b) { return eq(a, b); },
       [](auto& a, auto& s) { return eq(a, s); }, std::equal_to<double>()},
      {"ne", [](auto& a, auto& b) { return ne(a, b); },
       [](auto& a, auto& s) { return ne(a, s); }, std::not_equal_to<double>()},
      {"lt", [](auto& a, auto& b) { return lt(a, b); },
       [](auto& a, auto& s) { return lt(a, s); }, std::less<double>()},
      {"le", [](auto& a, auto& b) { return le(a, b); },
       [](auto& a, auto& s) { return le(a, s); }, std::less_equal<double>()},
      {"gt", [](auto& a, auto& b) { return gt(a, b); },
       [](auto& a, auto& s) { return gt(a, s); }, std::greater<double>()},
      {"ge", [](auto& a, auto& b) { return ge(a, b); },
       [](auto& a, auto& s) { return ge(a, s); }, std::greater_equal<double>()},
  };
  const std::vector<double> x = {1, 2, 3, 2};
  const std::vector<double> y = {2, 2, 2, 2.5};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    // Int against Float compares as Float: 2 vs 2.5 is not equal.
    Tensor out = c.op(make(kInt, {4}, x), floats({4}, y));
    EXPECT_EQ(out.scalar_type(), kBool);
    std::vector<double> expected;
    for (size_t k = 0; k < x.size(); ++k) expected.push_back(c.ref(x[k], y[k]));
    expectValues(out, expected);
    Tensor out_scalar = c.op_scalar(make(kInt, {4}, x), 2.5);
    EXPECT_EQ(out_scalar.scalar_type(), kBool);
    expected.clear();
    for (double v : x) expected.push_back(c.ref(v, 2.5));
    expectValues(out_scalar, expected);
    // Broadcast against a 0-dim tensor.
    Tensor out_zero = c.op(make(kLong, {4}, x), make(kLong, {}, {2}));
    expected.clear();
    for (double v : x) expected.push_back(c.ref(v, 2));
    expectValues(out_zero, expected);
  }
}

// ---- Meta -----------------------------------------------------------------------

TEST(Elementwise, MetaShapesDtypesAndErrors) {
  Tensor a = emptyTensor({3, 1}, kInt, kMetaDevice);
  Tensor b = emptyTensor({4}, kFloat, kMetaDevice);
  Tensor z = emptyTensor({}, kDouble, kMetaDevice);
  struct Case {
    const char* name;
    Tensor out;
    Sizes sizes;
    ScalarType dtype;
  };
  const std::vector<Case> cases = {
      {"add", add(a, b), {3, 4}, kFloat},
      {"add scalar", add(a, 2), {3, 1}, kInt},
      {"sub", sub(a, z), {3, 1}, kDouble},
      {"mul", mul(b, 2.5), {4}, kFloat},
      {"div", div(a, a), {3, 1}, kFloat},
      {"neg", neg(a), {3, 1}, kInt},
      {"exp", exp(a), {3, 1}, kFloat},
      {"relu", relu(b), {4}, kFloat},
      {"pow", pow(a, 2), {3, 1}, kInt},
      {"clamp", clamp(a, 0.5), {3, 1}, kFloat},
      {"where",
       where(emptyTensor({3, 1}, kBool, kMetaDevice), a, b), {3, 4}, kFloat},
      {"lt", lt(a, b), {3, 4}, kBool},
      {"eq scalar", eq(b, 1), {4}, kBool},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(c.out.is_meta());
    EXPECT_EQ(sizesOf(c.out), c.sizes);
    EXPECT_EQ(c.out.scalar_type(), c.dtype);
    EXPECT_EQ(c.out.data_ptr(), nullptr);
  }
  EXPECT_EQ(errorOf([&] { add(a, emptyTensor({2, 1}, kFloat, kMetaDevice)); }),
            "The size of tensor a (3) must match the size of tensor b (2) at "
            "non-singleton dimension 0");
  EXPECT_EQ(errorOf([&] { add_(a, 0.5); }),
            "result type Float can't be cast to the desired output type Int");
  EXPECT_EQ(errorOf([&] { neg(emptyTensor({2}, kBool, kMetaDevice)); }),
            errorOf([&] { neg(make(kBool, {2}, {0, 1})); }));
  const Tensor& same = add_(b, b);
  EXPECT_TRUE(same.is_same(b));
  // A CPU scalar goes with a Meta tensor; a dimensioned CPU tensor does not.
  EXPECT_TRUE(add(b, floats({}, {1})).is_meta());
  EXPECT_EQ(errorOf([&] { add(b, floats({4}, {1, 2, 3, 4})); }),
            "Expected all tensors to be on the same device, but found at least "
            "two devices, meta and cpu!");
}

// ---- Dispatcher integration ------------------------------------------------------------

TEST(Elementwise, BoxedCalls) {
  OperatorHandle op =
      Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor");
  Stack stack{IValue(floats({2}, {1, 2})), IValue(floats({2}, {3, 4})),
              IValue(Scalar(10))};
  op.callBoxed(stack);
  ASSERT_EQ(stack.size(), 1u);
  expectValues(stack[0].toTensor(), {31, 42});

  OperatorHandle clamp_op =
      Dispatcher::singleton().findSchemaOrThrow("aten::clamp", "");
  Stack clamp_stack{IValue(floats({3}, {-1, 0.5, 2})), IValue(),
                    IValue(Scalar(1))};
  clamp_op.callBoxed(clamp_stack);
  expectValues(clamp_stack[0].toTensor(), {-1, 0.5, 1});

  OperatorHandle inplace =
      Dispatcher::singleton().findSchemaOrThrow("aten::mul_", "Scalar");
  Tensor t = floats({2}, {1, 2});
  Stack inplace_stack{IValue(t), IValue(Scalar(3))};
  inplace.callBoxed(inplace_stack);
  EXPECT_TRUE(inplace_stack[0].toTensor().is_same(t));
  expectValues(t, {3, 6});
}

TEST(Elementwise, EveryOperatorHasCpuAndMetaKernels) {
  const char* names[][2] = {
      {"add", "Tensor"}, {"add", "Scalar"}, {"add_", "Tensor"},
      {"add_", "Scalar"}, {"add", "out"}, {"sub", "Tensor"},
      {"sub", "Scalar"}, {"sub_", "Tensor"}, {"sub_", "Scalar"},
      {"sub", "out"}, {"mul", "Tensor"}, {"mul", "Scalar"},
      {"mul_", "Tensor"}, {"mul_", "Scalar"}, {"mul", "out"},
      {"div", "Tensor"}, {"div", "Scalar"}, {"div_", "Tensor"},
      {"div_", "Scalar"}, {"div", "out"}, {"neg", ""}, {"abs", ""},
      {"exp", ""}, {"log", ""}, {"sqrt", ""}, {"tanh", ""}, {"sigmoid", ""},
      {"relu", ""}, {"pow", "Tensor_Scalar"}, {"clamp", ""},
      {"where", "self"}, {"eq", "Tensor"}, {"eq", "Scalar"},
      {"ne", "Tensor"}, {"ne", "Scalar"}, {"lt", "Tensor"}, {"lt", "Scalar"},
      {"le", "Tensor"}, {"le", "Scalar"}, {"gt", "Tensor"}, {"gt", "Scalar"},
      {"ge", "Tensor"}, {"ge", "Scalar"},
  };
  for (const auto& n : names) {
    SCOPED_TRACE(::testing::Message() << n[0] << "." << n[1]);
    OperatorHandle op = Dispatcher::singleton().findSchemaOrThrow(
        std::string("aten::") + n[0], n[1]);
    EXPECT_TRUE(op.hasKernelForDispatchKey(DispatchKey::CPU));
    EXPECT_TRUE(op.hasKernelForDispatchKey(DispatchKey::Meta));
    op.checkInvariants();
  }
}

// ---- Large tensors: the parallel path ---------------------------------------------------

// Two contiguous same-shape same-dtype CPU operands take the kernels' flat
// fast path; the same values with a strided second operand take the
// general one. Both must agree, for every binary kind, for sizes with no,
// one, a few and more elements than one parallel grain, on 1 and 2 threads.
TEST(Elementwise, SameShapeFastPathMatchesTheGeneralPath) {
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&, const Tensor&)> op;
    std::vector<ScalarType> dtypes;
  };
  const std::vector<ScalarType> all = {kFloat, kDouble, kLong,
                                       ScalarType::Byte};
  const std::vector<Case> cases = {
      {"add", [](auto& a, auto& b) { return add(a, b); }, all},
      {"add alpha", [](auto& a, auto& b) { return add(a, b, 2); }, all},
      {"sub alpha", [](auto& a, auto& b) { return sub(a, b, 3); }, all},
      {"mul", [](auto& a, auto& b) { return mul(a, b); }, all},
      {"div", [](auto& a, auto& b) { return div(a, b); }, {kFloat, kDouble}},
      {"lt", [](auto& a, auto& b) { return lt(a, b); }, all},
      {"eq", [](auto& a, auto& b) { return eq(a, b); }, all},
  };
  const int saved = get_num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (int64_t n : {0, 1, 5, 40000}) {
      std::vector<double> x(n), y(n), y2(2 * n);
      for (int64_t i = 0; i < n; ++i) {
        x[i] = static_cast<double>(i % 11) + 1;
        y[i] = static_cast<double>(i % 7) + 1;
        y2[2 * i] = y[i];
        y2[2 * i + 1] = -1;
      }
      for (const Case& c : cases) {
        for (ScalarType dtype : c.dtypes) {
          SCOPED_TRACE(::testing::Message() << c.name << " " << dtype << " n="
                                            << n << " threads=" << threads);
          const Tensor a = make(dtype, {n}, x);
          const Tensor b = make(dtype, {n}, y);
          const Tensor strided = makeView(make(dtype, {2 * n}, y2), {n}, {2}, 0);
          ASSERT_FALSE(n > 1 && strided.is_contiguous());
          const Tensor fast = c.op(a, b);
          const Tensor general = c.op(a, strided);
          EXPECT_EQ(fast.scalar_type(), general.scalar_type());
          EXPECT_EQ(sizesOf(fast), sizesOf(general));
          EXPECT_TRUE(fast.is_contiguous());
          EXPECT_EQ(values(fast), values(general));
        }
      }
    }
  }
  set_num_threads(saved);
}

TEST(Elementwise, LargeTensorsMatchTheSerialResult) {
  const int saved = get_num_threads();
  const int64_t rows = 300, cols = 301;  // > 32K elements, odd sizes
  std::vector<double> x(rows * cols), y(cols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 97) - 40;
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<double>(i % 13) + 1;
  Tensor a = floats({rows, cols}, x);
  Tensor b = floats({cols}, y);
  Tensor at = makeView(a, {cols, rows}, {1, cols}, 0);  // transposed
  std::vector<Tensor> results;
  for (int threads : {1, 2, 4}) {
    set_num_threads(threads);
    results.push_back(add(a, b, 2));
    results.push_back(mul(at, 3));
    results.push_back(sigmoid(a));
  }
  set_num_threads(saved);
  // Against the reference, and identical across thread counts.
  std::vector<double> expected_add(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      expected_add[r * cols + c] = x[r * cols + c] + 2 * y[c];
    }
  }
  expectValues(results[0], expected_add);
  std::vector<double> expected_mul(x.size());
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) {
      expected_mul[c * rows + r] = 3 * x[r * cols + c];
    }
  }
  expectValues(results[1], expected_mul);
  for (size_t k = 3; k < results.size(); ++k) {
    EXPECT_EQ(values(results[k]), values(results[k % 3])) << k;
  }
}

}  // namespace
}  // namespace turnout
