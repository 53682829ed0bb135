#include "dispatcher/debug/counters.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "dispatcher/core/error.h"

namespace turnout {
namespace {

struct Registry {
  std::mutex mu;
  // Sorted by name; std::map nodes (and the Counters they own) never move.
  std::map<std::string, std::unique_ptr<Counter>, std::less<>> counters;
};

Registry& registry() {
  static auto* const r = new Registry();  // never destroyed
  return *r;
}

std::string normalise(std::string_view name) {
  TURNOUT_CHECK(!name.empty(), ErrorKind::InvalidArgument,
                "counter(name): the name is empty; use \"category.event\", "
                "e.g. \"jit.plans_built\"");
  const size_t dot = name.find('.');
  if (dot == std::string_view::npos) return "misc." + std::string(name);
  TURNOUT_CHECK(dot > 0 && dot + 1 < name.size(), ErrorKind::InvalidArgument,
                "counter(\"", name,
                "\"): the category or the event is empty; use "
                "\"category.event\", e.g. \"jit.plans_built\"");
  return std::string(name);
}

}  // namespace

Counter& counter(std::string_view name) {
  std::string full = normalise(name);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.counters.find(full);
  if (it == r.counters.end()) {
    auto c = std::make_unique<Counter>(full);
    it = r.counters.emplace(std::move(full), std::move(c)).first;
  }
  return *it->second;
}

std::vector<std::pair<std::string, int64_t>> counterValues() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::pair<std::string, int64_t>> out;
  out.reserve(r.counters.size());
  for (const auto& [name, c] : r.counters) out.emplace_back(name, c->value());
  return out;
}

void resetCounters() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& entry : r.counters) entry.second->reset();
}

}  // namespace turnout
