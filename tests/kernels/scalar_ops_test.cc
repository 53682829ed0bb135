// The scalar and list operators, called boxed as a TorchScript interpreter
// calls them, and item().
#include "kernels/scalar_ops.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/core/ivalue.h"
#include "dispatcher/dispatcher.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using testing::tensorOf;

// Calls ns::name.overload boxed with `args`; returns the one result.
IValue callOp(const std::string& name, const std::string& overload,
              Stack args) {
  OperatorHandle op = Dispatcher::singleton().findSchemaOrThrow(name, overload);
  op.callBoxed(args);
  EXPECT_EQ(args.size(), 1u);
  return args.empty() ? IValue() : args[0];
}

using testing::errorOf;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(ScalarOps, Int) {
  struct Case {
    const char* op;
    int64_t a, b;
    IValue want;
  };
  const std::vector<Case> cases = {
      {"add", 2, 3, IValue(5)},        {"add", kMax, 1, IValue(kMin)},
      {"sub", 2, 3, IValue(-1)},       {"mul", -4, 3, IValue(-12)},
      {"div", 7, 2, IValue(3.5)},      {"div", -1, 4, IValue(-0.25)},
      {"floordiv", 7, 2, IValue(3)},   {"floordiv", -7, 2, IValue(-4)},
      {"floordiv", 7, -2, IValue(-4)}, {"floordiv", -7, -2, IValue(3)},
      {"floordiv", -6, 2, IValue(-3)}, {"floordiv", kMin, -1, IValue(kMin)},
      {"lt", 1, 2, IValue(true)},      {"le", 2, 2, IValue(true)},
      {"gt", 1, 2, IValue(false)},     {"ge", 1, 2, IValue(false)},
      {"eq", 3, 3, IValue(true)},      {"ne", 3, 3, IValue(false)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.op) + "(" + std::to_string(c.a) + ", " +
                 std::to_string(c.b) + ")");
    EXPECT_EQ(callOp(std::string("aten::") + c.op, "int", {c.a, c.b}), c.want);
  }
  EXPECT_EQ(callOp("aten::neg", "int", {IValue(5)}), IValue(-5));
  EXPECT_EQ(callOp("aten::neg", "int", {IValue(kMin)}), IValue(kMin));
}

TEST(ScalarOps, Float) {
  struct Case {
    const char* op;
    double a, b;
    IValue want;
  };
  const std::vector<Case> cases = {
      {"add", 0.5, 0.25, IValue(0.75)},
      {"sub", 0.5, 1.0, IValue(-0.5)},
      {"mul", 1.5, -2.0, IValue(-3.0)},
      {"div", 1.0, 4.0, IValue(0.25)},
      {"floordiv", 7.5, 2.0, IValue(3.0)},
      {"floordiv", -7.5, 2.0, IValue(-4.0)},
      {"floordiv", 7.5, -2.0, IValue(-4.0)},
      {"lt", 1.0, 2.0, IValue(true)},
      {"le", 2.0, 2.0, IValue(true)},
      {"gt", 1.0, 2.0, IValue(false)},
      {"ge", 3.0, 2.0, IValue(true)},
      {"eq", 0.1, 0.1, IValue(true)},
      {"ne", NAN, NAN, IValue(true)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.op) + "(" + std::to_string(c.a) + ", " +
                 std::to_string(c.b) + ")");
    EXPECT_EQ(callOp(std::string("aten::") + c.op, "float", {c.a, c.b}),
              c.want);
  }
  EXPECT_EQ(callOp("aten::neg", "float", {IValue(2.5)}), IValue(-2.5));
}

// True division by zero is IEEE's, as torch 1.13's (op_db's differential
// test checks it against torch); only floordiv.int raises.
TEST(ScalarOps, DivisionByZeroIsIeee) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(callOp("aten::div", "int", {3, 0}), IValue(inf));
  EXPECT_EQ(callOp("aten::div", "int", {-3, 0}), IValue(-inf));
  EXPECT_EQ(callOp("aten::div", "float", {3.5, 0.0}), IValue(inf));
  EXPECT_EQ(callOp("aten::floordiv", "float", {3.5, 0.0}), IValue(inf));
  EXPECT_EQ(callOp("aten::floordiv", "float", {-3.5, 0.0}), IValue(-inf));
  EXPECT_TRUE(std::isnan(callOp("aten::div", "float", {0.0, 0.0}).toDouble()));
  EXPECT_TRUE(
      std::isnan(callOp("aten::floordiv", "float", {0.0, 0.0}).toDouble()));
}

TEST(ScalarOps, BoolAndConversions) {
  EXPECT_EQ(callOp("aten::__not__", "", {IValue(true)}), IValue(false));
  EXPECT_EQ(callOp("aten::__and__", "bool", {IValue(true), IValue(false)}),
            IValue(false));
  EXPECT_EQ(callOp("aten::__or__", "bool", {IValue(true), IValue(false)}),
            IValue(true));
  EXPECT_EQ(callOp("aten::Int", "float", {IValue(-2.7)}), IValue(-2));
  EXPECT_EQ(callOp("aten::Float", "int", {IValue(3)}), IValue(3.0));
  EXPECT_EQ(callOp("aten::Int", "Tensor", {IValue(full({}, 4.9))}), IValue(4));
  EXPECT_EQ(callOp("aten::Float", "Tensor", {IValue(full({1}, 3))}),
            IValue(3.0));
  EXPECT_EQ(callOp("aten::ScalarImplicit", "", {IValue(full({}, 2))}),
            IValue(2));
}

TEST(ScalarOps, NumToTensor) {
  struct Case {
    IValue in;
    ScalarType dtype;
  };
  for (const Case& c : {Case{IValue(3), kLong}, Case{IValue(2.5), kDouble},
                        Case{IValue(true), kBool}}) {
    SCOPED_TRACE(c.in.tagKind());
    Tensor t = callOp("prim::NumToTensor", "Scalar", {c.in}).toTensor();
    EXPECT_EQ(t.dim(), 0);
    EXPECT_EQ(t.scalar_type(), c.dtype);
    EXPECT_TRUE(item(t) == c.in.toScalar());
  }
}

TEST(ScalarOps, SizeAndDim) {
  Tensor x = zeros({2, 3, 4});
  EXPECT_EQ(callOp("aten::size", "", {IValue(x)}),
            IValue(std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(callOp("aten::size", "int", {IValue(x), IValue(-1)}), IValue(4));
  EXPECT_EQ(callOp("aten::dim", "", {IValue(x)}), IValue(3));
  Tensor m = empty({5}, "meta");
  EXPECT_EQ(callOp("aten::size", "int", {IValue(m), IValue(0)}), IValue(5));
}

TEST(ScalarOps, ListsOfEveryKind) {
  Tensor a = zeros({1});
  Tensor b = zeros({2});
  struct Case {
    const char* name;
    IValue list;
    IValue last;
    int64_t len;
  };
  const std::vector<Case> cases = {
      {"int", IValue(std::vector<int64_t>{4, 5, 6}), IValue(6), 3},
      {"float", IValue(std::vector<double>{0.5, 1.5}), IValue(1.5), 2},
      {"bool", IValue(std::vector<bool>{true, false}), IValue(false), 2},
      {"tensor", IValue(std::vector<Tensor>{a, b}), IValue(b), 2},
      {"generic", IValue(std::vector<IValue>{IValue("x"), IValue(1)}),
       IValue(1), 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(callOp("aten::len", "t", {c.list}), IValue(c.len));
    IValue last = callOp("aten::__getitem__", "t", {c.list, IValue(-1)});
    EXPECT_TRUE(last.isSameIdentity(c.last)) << last;
    EXPECT_TRUE(callOp("aten::__getitem__", "t", {c.list, IValue(0)})
                    .isSameIdentity(callOp("aten::__getitem__", "t",
                                           {c.list, IValue(-c.len)})));
  }
}

TEST(Item, ValuesByDtypeAndFrontEnd) {
  EXPECT_TRUE(item(full({}, 2.5)) == Scalar(2.5));
  EXPECT_TRUE(item(full({1, 1}, 7)) == Scalar(int64_t{7}));
  EXPECT_TRUE(item(full({}, true)) == Scalar(true));
  EXPECT_TRUE(item(full({}, 1.5, kHalf)) == Scalar(1.5));
  EXPECT_EQ(item<int64_t>(full({}, 3.9)), 3);
  EXPECT_EQ(item<double>(select(tensorOf({1, 2, 3}, {3}, kInt), 0, 2)), 3.0);
}

TEST(ScalarOps, Errors) {
  struct Case {
    const char* name;
    std::function<void()> f;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"floordiv 0",
       [] {
         callOp("aten::floordiv", "int", {1, 0});
       },
       "integer division or modulo by zero"},
      {"Int nan", [] { callOp("aten::Int", "float", {NAN}); },
       "cannot convert float NaN to integer"},
      {"Int inf", [] { callOp("aten::Int", "float", {INFINITY}); },
       "cannot convert float infinity to integer"},
      {"getitem range",
       [] {
         callOp("aten::__getitem__", "t", {std::vector<int64_t>{1}, 1});
       },
       "list index out of range"},
      {"getitem not a list",
       [] {
         callOp("aten::__getitem__", "t", {1, 0});
       },
       "expected a list, got Int"},
      {"item numel",
       [] {
         item(zeros({2, 3}));
       },
       "a Tensor with 6 elements cannot be converted to Scalar"},
      {"item meta", [] { item(empty({}, "meta")); },
       "Tensor.item() cannot be called on meta tensors"},
      {"ScalarImplicit dims",
       [] { callOp("aten::ScalarImplicit", "", {IValue(zeros({2}))}); },
       "ScalarImplicit(): expected a 0-dim tensor, got one of sizes [2]"},
      {"size.int dim",
       [] {
         callOp("aten::size", "int", {IValue(zeros({2})), 1});
       },
       "Dimension out of range"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(errorOf(c.f), HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace turnout
