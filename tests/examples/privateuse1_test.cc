// The example PrivateUse1 backend (examples/privateuse1): its allocator and
// kernels, and above all its CPU fallback: operators without a PrivateUse1
// kernel run and give the CPU result on the device, in-place and out=
// operators write back to their device arguments, and the dispatch tables
// say where each call goes.
#include <string>
#include <vector>

#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "examples/privateuse1/backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/ops.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using privateuse1_example::stats;
using testing::errorOf;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using testing::sizesOf;
using testing::tensorOf;

Device pu1() { return privateuse1_example::device(); }

// Values of a tensor on any device, through copy_ to the CPU.
std::vector<double> valuesOf(const Tensor& t) {
  return testing::valuesOf(t.to(kCPU));
}

Tensor a() { return tensorOf({1, -2, 3, -4, 5, 6}, {2, 3}); }
Tensor b() { return tensorOf({2, 3, 5, 7, 11, 13}, {2, 3}); }

std::string computedEntry(const char* name, const char* overload) {
  std::string table = Dispatcher::singleton()
                          .findSchemaOrThrow(name, overload)
                          .dumpComputedTable();
  size_t at = table.find("\nPrivateUse1: ");
  if (at == std::string::npos) return "(no PrivateUse1 line in)\n" + table;
  size_t end = table.find('\n', at + 1);
  return table.substr(at + 1, end - at - 1);
}

TEST(PrivateUse1Example, TensorsLiveOnTheDeviceInItsAllocatorsMemory) {
  const int64_t before = stats().allocations;
  Tensor x = empty({2, 3}, TensorOptions(kFloat).device(pu1()));
  EXPECT_EQ(x.device(), pu1());
  EXPECT_EQ(x.device().str(), "privateuseone");
  EXPECT_EQ(x.storage().device_type(), DeviceType::PrivateUse1);
  EXPECT_TRUE(x.key_set().has(DispatchKey::PrivateUse1));
  EXPECT_FALSE(x.key_set().has(DispatchKey::CPU));
  EXPECT_EQ(stats().allocations, before + 1);

  const int64_t live = stats().live_allocations;
  x.reset();
  EXPECT_EQ(stats().live_allocations, live - 1);

  Tensor s =
      empty_strided({2, 3}, {1, 2}, TensorOptions(kDouble).device(pu1()));
  EXPECT_EQ(s.device(), pu1());
  EXPECT_EQ(testing::vec(s.strides()), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(s.scalar_type(), kDouble);
}

TEST(PrivateUse1Example, CopiesToAndFromTheCpu) {
  Tensor x = a().to(pu1());
  EXPECT_EQ(x.device(), pu1());
  EXPECT_EQ(valuesOf(x), valuesOf(a()));
  // Converting, strided, broadcasting copies are the CPU kernel's rules.
  EXPECT_EQ(valuesOf(x.t().to(kCPU)), valuesOf(a().t()));
  EXPECT_EQ(valuesOf(x.to(pu1(), kLong)), valuesOf(a().to(kLong)));
  Tensor y = empty({2, 3}, TensorOptions(kFloat).device(pu1()));
  y.copy_(tensorOf({7, 8, 9}, {3}));
  EXPECT_EQ(valuesOf(y), (std::vector<double>{7, 8, 9, 7, 8, 9}));
  Tensor z = x.clone();  // CompositeExplicitAutograd: empty_strided + copy_
  EXPECT_EQ(z.device(), pu1());
  EXPECT_NE(z.storage().data(), x.storage().data());
  EXPECT_EQ(valuesOf(z), valuesOf(a()));

  // The device's copy_ kernel, called with a meta source (the dispatcher
  // itself would send that pair to the Meta kernel).
  Stack stack{IValue(x), IValue(x.to(Device("meta"))), IValue(false)};
  EXPECT_THAT(errorOf([&] {
                Dispatcher::singleton()
                    .findSchemaOrThrow("aten::copy_", "")
                    .callBoxedForDispatchKey(DispatchKey::PrivateUse1, stack);
              }),
              HasSubstr("copy_(): the privateuseone example backend copies "
                        "between privateuseone and cpu only, got a copy from "
                        "meta to privateuseone"));
  EXPECT_EQ(valuesOf(x), valuesOf(a()));
}

TEST(PrivateUse1Example, OwnKernelsRunWithoutTheFallback) {
  Tensor x = a().to(pu1()), y = b().to(pu1());
  const privateuse1_example::Stats before = stats();
  Tensor sum = x.add(y, 2);
  EXPECT_EQ(stats().add_kernel_calls, before.add_kernel_calls + 1);
  EXPECT_EQ(stats().fallback_calls, before.fallback_calls);
  EXPECT_EQ(sum.device(), pu1());
  EXPECT_EQ(valuesOf(sum), valuesOf(add(a(), b(), 2)));

  x.fill_(4);
  EXPECT_EQ(valuesOf(x), (std::vector<double>(6, 4)));
  Tensor v = y.view({3, 2});  // a view: shares the device memory
  EXPECT_EQ(v.device(), pu1());
  EXPECT_EQ(v.storage().data(), y.storage().data());
  v.fill_(-1);
  EXPECT_EQ(valuesOf(y), (std::vector<double>(6, -1)));
  EXPECT_EQ(stats().fallback_calls, before.fallback_calls);
  EXPECT_THAT(errorOf([&] { y.t().view({6}); }), HasSubstr("reshape"));
}

TEST(PrivateUse1Example, FallbackRunsOperatorsWithoutAKernel) {
  const Tensor x = a(), y = b();
  const Tensor m = tensorOf({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor dx = x.to(pu1()), dy = y.to(pu1()), dm = m.to(pu1());
  struct Case {
    const char* name;
    Tensor device_result;
    Tensor cpu_result;
  };
  const int64_t before = stats().fallback_calls;
  std::vector<Case> cases = {
      {"mul", dx.mul(dy), x.mul(y)},
      {"sub scalar", dx.sub(2.5), x.sub(2.5)},
      {"relu", dx.relu(), x.relu()},
      {"lt", dx.lt(dy), x.lt(y)},
      {"sum dim", dx.sum({1}), x.sum({1})},
      {"softmax", dx.softmax(0), x.softmax(0)},
      {"argmax", dx.argmax(), x.argmax()},
      {"mm", dx.mm(dm), x.mm(m)},
      {"add broadcast (own kernel, CPU path)",
       dx.add(tensorOf({1, 2, 3}, {3}).to(pu1())),
       x.add(tensorOf({1, 2, 3}, {3}))},
      {"cat (tensor list)", cat({dx, dy}, 1), cat({x, y}, 1)},
      {"zeros (device argument)", zeros({2, 2}, pu1()), zeros({2, 2})},
      {"full (device argument)", full({3}, 7, pu1()), full({3}, 7)},
  };
  EXPECT_GE(stats().fallback_calls, before + 11);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.device_result.device(), pu1());
    EXPECT_EQ(c.device_result.scalar_type(), c.cpu_result.scalar_type());
    EXPECT_EQ(sizesOf(c.device_result), sizesOf(c.cpu_result));
    EXPECT_EQ(valuesOf(c.device_result), valuesOf(c.cpu_result));
  }
  EXPECT_EQ(dx.sum().item<double>(), x.sum().item<double>());
  EXPECT_EQ(dx.select(0, 1).select(0, 2).item<double>(), 6);
}

TEST(PrivateUse1Example, FallbackWritesBackInPlaceAndOutArguments) {
  Tensor dx = a().to(pu1());
  const Tensor dy = b().to(pu1());
  const int64_t before = stats().fallback_calls;

  const Tensor& r = dx.mul_(dy);  // aten::mul_.Tensor: no PrivateUse1 kernel
  EXPECT_EQ(&r, &dx);
  EXPECT_EQ(dx.device(), pu1());
  EXPECT_EQ(valuesOf(dx), valuesOf(a().mul(b())));
  dx.sub_(1);
  EXPECT_EQ(valuesOf(dx), valuesOf(a().mul(b()).sub(1)));

  // A view of a device tensor written in place writes its base.
  Tensor base = zeros({2, 3}, pu1());
  base.view({6}).add_(dy.view({6}));
  EXPECT_EQ(valuesOf(base), valuesOf(b()));

  // out=: the result is the device argument itself.
  Tensor out = empty({2, 3}, TensorOptions(kFloat).device(pu1()));
  const Tensor& o = mul_out(out, a().to(pu1()), dy);
  EXPECT_TRUE(o.is_same(out));
  EXPECT_EQ(valuesOf(out), valuesOf(a().mul(b())));
  Tensor mout = empty({2, 2}, TensorOptions(kFloat).device(pu1()));
  Tensor& mr = mm_out(mout, a().to(pu1()), b().t().to(pu1()));
  EXPECT_TRUE(mr.is_same(mout));
  EXPECT_EQ(valuesOf(mout), valuesOf(a().mm(b().t())));
  Tensor sout = empty({2}, TensorOptions(kFloat).device(pu1()));
  sum_out(sout, dy, {1}, false, std::nullopt);
  EXPECT_EQ(valuesOf(sout), valuesOf(b().sum({1})));
  EXPECT_GE(stats().fallback_calls, before + 6);
}

TEST(PrivateUse1Example, AnErrorOfTheCpuKernelLeavesTheArgumentsAlone) {
  Tensor out = full({2, 2}, 5, TensorOptions(kFloat).device(pu1()));
  const Tensor dx = a().to(pu1());
  // The CPU kernel's own message, unchanged.
  EXPECT_EQ(errorOf([&] { mm_out(out, dx, dx); }), errorOf([&] {
              Tensor cpu_out = full({2, 2}, 5.0);
              mm_out(cpu_out, a(), a());
            }));
  EXPECT_EQ(valuesOf(out), (std::vector<double>(4, 5)));
  EXPECT_THAT(errorOf([&] {
                dx.mul_(tensorOf({1, 2}, {2}).to(pu1()));
              }),
              HasSubstr("must match the size of tensor b (2)"));
  EXPECT_EQ(valuesOf(dx), valuesOf(a()));
}

// An operator that returns a view, with a CPU kernel only: the fallback
// must refuse it rather than return a copy that only looks like a view.
Tensor viewOfCpu(const Tensor& self) { return self.view({-1}); }

TEST(PrivateUse1Example, FallbackRefusesViewOperators) {
  Library def(Library::DEF, "pu1_test", std::nullopt, __FILE__, __LINE__);
  def.def("flat_view(Tensor(a) self) -> Tensor(a)");
  Library impl(Library::IMPL, "pu1_test", DispatchKey::CPU, __FILE__, __LINE__);
  impl.impl("flat_view", TURNOUT_FN(viewOfCpu));
  auto op = Dispatcher::singleton()
                .findSchemaOrThrow("pu1_test::flat_view", "")
                .typed<Tensor(const Tensor&)>();
  EXPECT_EQ(valuesOf(op.call(a())), valuesOf(a()));

  const int64_t before = stats().fallback_calls;
  EXPECT_THAT(errorOf([&] { op.call(a().to(pu1())); }),
              HasSubstr("pu1_test::flat_view: the privateuseone CPU fallback "
                        "cannot run an operator that returns a view of its "
                        "argument"));
  EXPECT_EQ(stats().fallback_calls, before);
}

TEST(PrivateUse1Example, DispatchTablesShowKernelsAndTheFallback) {
  EXPECT_THAT(computedEntry("aten::add", "Tensor"),
              MatchesRegex("PrivateUse1: registered at "
                           ".*examples/privateuse1/backend.cc:[0-9]+ "
                           "\\[kernel\\]"));
  EXPECT_THAT(computedEntry("aten::copy_", ""),
              MatchesRegex(".*backend.cc:[0-9]+ \\[kernel\\]"));
  for (const char* op : {"aten::mul", "aten::relu", "aten::mm"}) {
    SCOPED_TRACE(op);
    const char* overload = std::string(op) == "aten::mul" ? "Tensor" : "";
    EXPECT_THAT(computedEntry(op, overload),
                MatchesRegex("PrivateUse1: .*registered at "
                             ".*examples/privateuse1/backend.cc:[0-9]+ "
                             "\\[backend fallback\\]"));
  }
  // clone is CompositeExplicitAutograd: it serves the device without the
  // fallback, through the device's empty_strided and copy_.
  EXPECT_THAT(computedEntry("aten::clone", ""),
              Not(HasSubstr("backend fallback")));
}

}  // namespace
}  // namespace turnout
