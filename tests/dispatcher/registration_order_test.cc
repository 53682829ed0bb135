// Registration is commutative and invertible: every order of a set of
// registrations gives the same dumps, and every order of deregistration walks
// back through states each of which some registration order also reaches.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

Tensor k_cpu(const Tensor& x) { return x; }
Tensor k_math(const Tensor& x) { return x; }
Tensor k_default(const Tensor& x) { return x; }
Tensor k_autograd(const Tensor& x) { return x; }
Tensor k_fpga(const Tensor& x) { return x; }

using Registration = std::function<std::unique_ptr<Library>()>;

std::unique_ptr<Library> fragment() {
  return std::make_unique<Library>(Library::FRAGMENT, "order", std::nullopt,
                                   "order.cc", 1);
}

// The registrations under test, each a library of its own.
std::vector<std::pair<std::string, Registration>> registrations() {
  return {
      {"def",
       [] {
         auto l = fragment();
         l->def("op(Tensor x) -> Tensor");
         return l;
       }},
      {"cpu",
       [] {
         auto l = fragment();
         l->impl("op", dispatch(DispatchKey::CPU,
                                CppFunction(TURNOUT_FN(k_cpu)).debug("k_cpu")));
         return l;
       }},
      {"math",
       [] {
         auto l = fragment();
         l->impl("op", CppFunction(TURNOUT_FN(k_math)).debug("k_math"));
         return l;
       }},
      {"default",
       [] {
         auto l = fragment();
         l->impl("op", dispatch(DispatchKey::CompositeExplicitAutograd,
                                CppFunction(TURNOUT_FN(k_default))
                                    .debug("k_default")));
         return l;
       }},
      {"autograd",
       [] {
         auto l = fragment();
         l->impl("op", dispatch(DispatchKey::Autograd,
                                CppFunction(TURNOUT_FN(k_autograd))
                                    .debug("k_autograd")));
         return l;
       }},
      {"fpga",
       [] {
         auto l = fragment();
         l->impl("op", dispatch(DispatchKey::FPGA,
                                CppFunction(TURNOUT_FN(k_fpga)).debug("k_fpga")));
         return l;
       }},
  };
}

std::string snapshot() {
  auto op = Dispatcher::singleton().findOp({"order::op", ""});
  if (!op) return "(no operator)";
  op->checkInvariants();
  return op->dumpState() + "---\n" + op->dumpComputedTable();
}

TEST(RegistrationOrder, EveryOrderGivesTheSameTables) {
  auto regs = registrations();
  std::vector<size_t> order(regs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;

  // The state reached by each subset of registrations, whatever the order.
  std::map<std::set<size_t>, std::string> state_of_subset;
  int permutations = 0;
  do {
    SCOPED_TRACE("permutation " + std::to_string(permutations));
    std::vector<std::unique_ptr<Library>> libs(regs.size());
    std::set<size_t> applied;
    for (size_t i : order) {
      libs[i] = regs[i].second();
      applied.insert(i);
      std::string state = snapshot();
      auto [it, inserted] = state_of_subset.emplace(applied, state);
      ASSERT_EQ(it->second, state) << "after registering " << regs[i].first;
    }
    // Deregister in reverse permutation order of a rotated sequence, so that
    // deregistration orders vary too.
    std::vector<size_t> undo(order.begin(), order.end());
    std::rotate(undo.begin(), undo.begin() + permutations % undo.size(),
                undo.end());
    for (size_t i : undo) {
      libs[i].reset();
      applied.erase(i);
      if (applied.empty()) break;
      auto it = state_of_subset.find(applied);
      std::string state = snapshot();
      if (it != state_of_subset.end()) {
        ASSERT_EQ(it->second, state) << "after deregistering " << regs[i].first;
      } else {
        state_of_subset.emplace(applied, state);
      }
    }
    ++permutations;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(permutations, 720);
  EXPECT_FALSE(Dispatcher::singleton().findOp({"order::op", ""}).has_value());
  Dispatcher::singleton().checkInvariants();
}

}  // namespace
}  // namespace turnout
