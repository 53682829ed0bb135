// Factories: values, dtypes (given and inferred), BackendSelect routing to
// CPU and Meta by the device argument, the seeded generator, *_like, errors.
#include "kernels/factory.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using testing::tensorOf;
using testing::valuesOf;
using testing::vec;
using Dims = std::vector<int64_t>;

using testing::errorOf;
using testing::expectErrors;

TEST(Factory, ValuesAndDtypes) {
  struct Case {
    const char* name;
    std::function<Tensor()> f;
    ScalarType dtype;
    Dims sizes;
    std::vector<double> values;
  };
  const std::vector<Case> cases = {
      {"zeros",
       [] {
         return zeros({2, 2});
       },
       kFloat,
       {2, 2},
       {0, 0, 0, 0}},
      {"zeros long", [] { return zeros({3}, kLong); }, kLong, {3}, {0, 0, 0}},
      {"ones half", [] { return ones({2}, kHalf); }, kHalf, {2}, {1, 1}},
      {"ones 0-dim", [] { return ones({}); }, kFloat, {}, {1}},
      {"zeros empty",
       [] {
         return zeros({0, 3});
       },
       kFloat,
       {0, 3},
       {}},
      {"full int", [] { return full({2}, 7); }, kLong, {2}, {7, 7}},
      {"full float", [] { return full({1}, 0.5); }, kFloat, {1}, {0.5}},
      {"full bool", [] { return full({1}, true); }, kBool, {1}, {1}},
      {"full dtype",
       [] { return full({2}, 2, kDouble); },
       kDouble,
       {2},
       {2, 2}},
      {"arange end", [] { return arange(4); }, kLong, {4}, {0, 1, 2, 3}},
      {"arange start", [] { return arange(2, 5); }, kLong, {3}, {2, 3, 4}},
      {"arange step",
       [] { return arange(0, 1, 0.25); },
       kFloat,
       {4},
       {0, 0.25, 0.5, 0.75}},
      {"arange neg", [] { return arange(5, 0, -2); }, kLong, {3}, {5, 3, 1}},
      {"arange dtype",
       [] { return arange(3, kDouble); },
       kDouble,
       {3},
       {0, 1, 2}},
      {"arange empty", [] { return arange(2, 2); }, kLong, {0}, {}},
      {"arange 1.5",
       [] { return arange(0, 1.5, 0.5); },
       kFloat,
       {3},
       {0, 0.5, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor x = c.f();
    EXPECT_EQ(x.scalar_type(), c.dtype);
    EXPECT_EQ(vec(x.sizes()), c.sizes);
    EXPECT_TRUE(x.is_cpu());
    EXPECT_EQ(valuesOf(x), c.values);
  }
}

TEST(Factory, BackendSelectRoutesByDevice) {
  const std::vector<
      std::pair<const char*, std::function<Tensor(TensorOptions)>>>
      factories = {
          {"empty",
           [](TensorOptions o) {
             return empty({2, 3}, o);
           }},
          {"empty_strided",
           [](TensorOptions o) {
             return empty_strided({2, 3}, {1, 2}, o);
           }},
          {"zeros",
           [](TensorOptions o) {
             return zeros({2, 3}, o);
           }},
          {"ones",
           [](TensorOptions o) {
             return ones({2, 3}, o);
           }},
          {"full",
           [](TensorOptions o) {
             return full({2, 3}, 1.5, o);
           }},
          {"arange",
           [](TensorOptions o) { return arange(6, o.dtype(kFloat)); }},
          {"arange.start",
           [](TensorOptions o) { return arange(0, 6, o.dtype(kFloat)); }},
          {"arange.start_step",
           [](TensorOptions o) { return arange(0, 6, 1, o.dtype(kFloat)); }},
          {"rand",
           [](TensorOptions o) {
             return rand({2, 3}, o);
           }},
          {"randn",
           [](TensorOptions o) {
             return randn({2, 3}, o);
           }},
      };
  for (const auto& [name, f] : factories) {
    SCOPED_TRACE(name);
    Tensor m = f(TensorOptions("meta"));
    EXPECT_TRUE(m.is_meta());
    EXPECT_EQ(m.scalar_type(), kFloat);
    EXPECT_EQ(m.numel(), 6);
    EXPECT_EQ(m.data_ptr(), nullptr);
    Tensor c = f(TensorOptions(Device("cpu")));
    EXPECT_TRUE(c.is_cpu());
    EXPECT_NE(c.data_ptr(), nullptr);
    // No CUDA kernels are registered: the dispatcher names the operator.
    EXPECT_THAT(errorOf([&] { f(TensorOptions("cuda")); }),
                HasSubstr("Could not run 'aten::"));
  }
  EXPECT_EQ(vec(empty_strided({2, 3}, {1, 2}).strides()), (Dims{1, 2}));
  EXPECT_EQ(vec(empty({1, 3, 2, 2}, {}, MemoryFormat::ChannelsLast).strides()),
            (Dims{12, 1, 6, 3}));
}

TEST(Factory, BackendSelectKernelIsRegistered) {
  for (const char* name : {"empty", "zeros", "ones", "full", "arange", "rand",
                           "randn", "empty_strided"}) {
    SCOPED_TRACE(name);
    std::string overload = std::string(name) == "empty" ? "memory_format" : "";
    OperatorHandle op = Dispatcher::singleton().findSchemaOrThrow(
        std::string("aten::") + name, overload);
    EXPECT_TRUE(op.hasKernelForDispatchKey(DispatchKey::BackendSelect));
    EXPECT_TRUE(op.hasKernelForDispatchKey(DispatchKey::CPU));
    EXPECT_TRUE(op.hasKernelForDispatchKey(DispatchKey::Meta));
  }
}

TEST(Factory, BackendSelectReachesAUserBackend) {
  // A kernel registered for PrivateUse1 receives zeros(device=privateuseone),
  // with the device argument intact.
  static int calls = 0;
  Library lib(Library::IMPL, "aten", DispatchKey::PrivateUse1, __FILE__,
              __LINE__);
  lib.impl("zeros",
           [](IntArrayRef size, std::optional<ScalarType> dtype,
              std::optional<Layout>, std::optional<Device> device,
              std::optional<bool>) -> Tensor {
             ++calls;
             EXPECT_EQ(device, Device("privateuseone"));
             return empty(size, TensorOptions(Device("meta")).dtype(dtype));
           });
  calls = 0;
  Tensor x = zeros({3}, Device("privateuseone"));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(vec(x.sizes()), Dims{3});
  zeros({3});  // the CPU kernel, not the user's
  EXPECT_EQ(calls, 1);
}

TEST(Generator, ConcurrentDrawsAreSafe) {
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([] {
      for (int j = 0; j < 20; ++j) {
        Tensor r = randn({64});
        EXPECT_EQ(r.numel(), 64);
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

TEST(Generator, SeededRandIsReproducibleAndInRange) {
  for (ScalarType dt : {kFloat, kDouble, kHalf, kBFloat16}) {
    SCOPED_TRACE(toString(dt));
    manual_seed(123);
    std::vector<double> a = valuesOf(rand({1000}, dt));
    manual_seed(123);
    std::vector<double> b = valuesOf(rand({1000}, dt));
    EXPECT_EQ(a, b);
    double sum = 0;
    for (double v : a) {
      EXPECT_GE(v, 0.0);
      EXPECT_LT(v, 1.0);
      sum += v;
    }
    EXPECT_NEAR(sum / a.size(), 0.5, 0.05);
  }
  manual_seed(7);
  std::vector<double> n = valuesOf(randn({4001}, kDouble));
  double mean = 0, var = 0;
  for (double v : n) mean += v;
  mean /= n.size();
  for (double v : n) var += (v - mean) * (v - mean);
  var /= n.size();
  EXPECT_NEAR(mean, 0.0, 0.1);
  EXPECT_NEAR(var, 1.0, 0.1);
  EXPECT_EQ(defaultGenerator().seed(), 7u);
}

TEST(Factory, LikeFactories) {
  Tensor x = tensorOf({1, 2, 3, 4, 5, 6}, {2, 3}, kInt);
  Tensor tx = t(x);
  Tensor z = zeros_like(tx);
  EXPECT_EQ(z.scalar_type(), kInt);
  EXPECT_EQ(vec(z.sizes()), (Dims{3, 2}));
  EXPECT_EQ(vec(z.strides()), (Dims{1, 3}));  // preserves the layout
  EXPECT_EQ(valuesOf(z), std::vector<double>(6, 0));
  Tensor o = ones_like(x, kDouble);
  EXPECT_EQ(o.scalar_type(), kDouble);
  EXPECT_EQ(valuesOf(o), std::vector<double>(6, 1));
  Tensor e = empty_like(x, {}, MemoryFormat::Contiguous);
  EXPECT_EQ(vec(e.strides()), (Dims{3, 1}));
  Tensor m = ones_like(x, "meta");
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.scalar_type(), kInt);
  Tensor back = zeros_like(empty({2}, "meta"), Device("cpu"));
  EXPECT_TRUE(back.is_cpu());
  EXPECT_EQ(valuesOf(back), (std::vector<double>{0, 0}));
}

TEST(Factory, FullLike) {
  // self's dtype, not the value's: 1.5 into Int truncates; -1 into Byte
  // wraps to 255 as torch's fill_ (down to -255); 256, -256 and inf are
  // refused.
  const Tensor x = t(tensorOf({1, 2, 3, 4, 5, 6}, {2, 3}, kInt));
  const Tensor f = full_like(x, 1.5);
  EXPECT_EQ(f.scalar_type(), kInt);
  EXPECT_EQ(vec(f.strides()), (Dims{1, 3}));
  EXPECT_EQ(valuesOf(f), std::vector<double>(6, 1));
  EXPECT_EQ(valuesOf(full_like(x, 2.5, kDouble, MemoryFormat::Contiguous)),
            std::vector<double>(6, 2.5));
  const Tensor b = tensorOf({0, 0}, {2}, kByte);
  EXPECT_EQ(valuesOf(full_like(b, -1)), (std::vector<double>{255, 255}));
  EXPECT_EQ(valuesOf(full_like(b, -255)), (std::vector<double>{1, 1}));
  EXPECT_THAT(errorOf([&] { full_like(b, 256); }),
              ::testing::HasSubstr("value 256 cannot be converted to type "
                                   "Byte without overflow"));
  EXPECT_THAT(errorOf([&] { full_like(b, -256); }),
              ::testing::HasSubstr("without overflow"));
  EXPECT_THAT(errorOf([&] { full_like(b, -1.5); }),
              ::testing::HasSubstr("without overflow"));
  EXPECT_THAT(errorOf([&] { full_like(x, INFINITY); }),
              ::testing::HasSubstr("without overflow"));
  EXPECT_TRUE(full_like(x, 3, "meta").is_meta());
}

TEST(Factory, Errors) {
  struct Case {
    const char* name;
    std::function<void()> f;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"negative size",
       [] {
         zeros({2, -1});
       },
       "Trying to create tensor with negative dimension -1: [2, -1]"},
      {"negative size meta", [] { zeros({-2}, "meta"); },
       "Trying to create tensor with negative dimension -2"},
      {"arange step 0", [] { arange(0, 5, 0); }, "step must be nonzero"},
      {"arange sign", [] { arange(5, 0, 1); },
       "upper bound and larger bound inconsistent with step sign"},
      {"arange sign meta", [] { arange(5, 0, 1, "meta"); },
       "upper bound and larger bound inconsistent with step sign"},
      {"rand long", [] { rand({2}, kLong); },
       "rand(): expected a floating-point dtype, got Long"},
      {"full overflow", [] { full({2}, 1000, kChar); },
       "cannot be converted to type Char without overflow"},
      // BackendSelect routes a sparse layout to SparseCPU, which has no kernel.
      {"layout", [] { zeros({2}, TensorOptions().layout(Layout::Sparse)); },
       "Could not run 'aten::zeros' with arguments from the 'SparseCPU' "
       "backend"},
      {"strided lengths",
       [] {
         empty_strided({2, 2}, {1});
       },
       "mismatch in length of strides and shape"},
      {"channels last rank",
       [] {
         empty({2, 2}, {}, MemoryFormat::ChannelsLast);
       },
       "required rank 4 tensor to use channels_last format"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(errorOf(c.f), HasSubstr(c.message));
  }
}

// Sizes whose number of elements or storage bytes overflow int64 are
// errors, on every device (empty(2^31, 2^31, 2^31) used to have numel 0).
// Which calls fail is PyTorch's (tests/python/test_size_overflow.py checks
// the same calls against torch).
TEST(Factory, OverflowingSizesAreErrors) {
  constexpr int64_t k31 = int64_t{1} << 31;
  constexpr int64_t k62 = int64_t{1} << 62;
  expectErrors(ErrorKind::InvalidArgument, {
      {"empty", [] { empty({k31, k31, k31}); },
       "empty(): the number of elements of sizes [2147483648, 2147483648, "
       "2147483648] overflows int64"},
      {"empty meta", [] { empty({k31, k31, k31}, "meta"); },
       "the number of elements of sizes [2147483648, 2147483648, 2147483648] "
       "overflows int64"},
      {"zeros", [] { zeros({k31, k31, k31}); }, "overflows int64"},
      {"ones meta", [] { ones({k31, k31, k31}, "meta"); }, "overflows int64"},
      {"full", [] { full({k31, k31, k31}, 1.0); }, "overflows int64"},
      {"rand", [] { rand({k31, k31, k31}); }, "overflows int64"},
      // The elements fit int64, their bytes do not.
      {"bytes", [] { empty({k62}); },
       "empty(): the storage for sizes [4611686018427387904], strides [1] "
       "and storage offset 0 with 4-byte elements overflows int64 bytes"},
      {"bytes meta", [] { empty({k62 / 4, 4}, "meta"); },
       "overflows int64 bytes"},
      {"a zero too late", [] { empty({k62, k62, 0}, "meta"); },
       "overflows int64"},
      {"channels last", [] {
         empty({k31, k31, k31, 2}, {}, MemoryFormat::ChannelsLast);
       },
       "overflows int64"},
      {"empty_strided numel", [] { empty_strided({k62, k62, 0}, {0, 0, 0}); },
       "empty_strided(): the number of elements of sizes"},
      {"empty_strided stride", [] { empty_strided({3}, {k62}); },
       "empty_strided(): the storage for sizes [3], strides "
       "[4611686018427387904] and storage offset 0 with 4-byte elements "
       "overflows int64 bytes"},
      {"empty_strided stride meta", [] { empty_strided({3}, {k62}, "meta"); },
       "overflows int64 bytes"},
      {"arange", [] { arange(k62); }, "arange(): the storage for sizes "
       "[4611686018427387904], strides [1] and storage offset 0 with 8-byte "
       "elements overflows int64 bytes"},
  });
  // Large shapes that fit are fine (on Meta: nothing is allocated), and so
  // are huge sizes after a zero, as in PyTorch.
  EXPECT_EQ(empty({int64_t{1} << 40, int64_t{1} << 20}, "meta").numel(),
            int64_t{1} << 60);
  EXPECT_EQ(empty({std::numeric_limits<int64_t>::max()},
                  TensorOptions(kByte).device("meta"))
                .numel(),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(empty({0, k62, k62}).numel(), 0);
  EXPECT_EQ(empty_strided({0, 2}, {k62, k62}).numel(), 0);
}

}  // namespace
}  // namespace turnout
