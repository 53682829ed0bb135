#include "dispatcher/dispatcher.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "absl/hash/hash.h"
#include "dispatcher/call_section.h"

namespace turnout {
namespace {

size_t hashName(std::string_view name, std::string_view overload) {
  return absl::Hash<std::pair<std::string_view, std::string_view>>()(
      std::make_pair(name, overload));
}

constexpr size_t kInitialBuckets = 1024;

// Runtime table slots a registration for `key` covers.
std::vector<int> slotsFor(DispatchKey key) {
  std::vector<int> slots;
  if (isAliasDispatchKey(key)) {
    for (DispatchKey k : getRuntimeDispatchKeySet(key)) {
      slots.push_back(getDispatchTableIndexForDispatchKey(k));
    }
  } else {
    slots.push_back(getDispatchTableIndexForDispatchKey(key));
  }
  return slots;
}

}  // namespace

Dispatcher::Index::Index(size_t n)
    : mask(n - 1), buckets(new std::atomic<IndexNode*>[n]) {
  for (size_t i = 0; i < n; ++i) buckets[i].store(nullptr, std::memory_order_relaxed);
}

Dispatcher::Index::~Index() {
  for (IndexNode* node : nodes) delete node;
}

void Dispatcher::deleteIndex(void* p) { delete static_cast<Index*>(p); }

// Retired by the address of its `table`, the one readers load.
static_assert(std::is_standard_layout_v<Dispatcher::FallbackTable> &&
                  offsetof(Dispatcher::FallbackTable, table) == 0,
              "a FallbackTable and its table must share an address");
void Dispatcher::deleteFallbackTable(void* p) {
  delete reinterpret_cast<FallbackTable*>(static_cast<DispatchTable*>(p));
}

Dispatcher& Dispatcher::singleton() {
  // Never destroyed: calls may still happen during static destruction.
  static Dispatcher* const instance = new Dispatcher();
  return *instance;
}

Dispatcher::Dispatcher() : index_(new Index(kInitialBuckets)) {
  registerFrameworkFallthroughs();
  updateAllTablesLocked();  // no operators yet: builds fallback_table_
}

void Dispatcher::registerFrameworkFallthroughs() {
  // As in c10: with no autograd kernel, autograd keys pass calls straight to
  // the backend; BackendSelect and ADInplaceOrView are in every thread's
  // include set and fall through unless an operator registers for them.
  AnnotatedKernel fallthrough{KernelFunction::makeFallthrough(), std::nullopt,
                              std::nullopt,
                              "registered in turnout framework", std::nullopt};
  std::vector<int> slots = slotsFor(DispatchKey::Autograd);
  slots.push_back(getDispatchTableIndexForDispatchKey(DispatchKey::ADInplaceOrView));
  slots.push_back(getDispatchTableIndexForDispatchKey(DispatchKey::BackendSelect));
  for (int slot : slots) fallbacks_[slot].framework = fallthrough;
}

// ---- Lookup ------------------------------------------------------------------

OperatorEntry* Dispatcher::findEntry(std::string_view name,
                                     std::string_view overload) const {
  detail::CallSection section;  // the index may be replaced concurrently
  const Index* index = index_.load(detail::kReadOrder);
  const size_t h = hashName(name, overload);
  for (IndexNode* node = index->buckets[h & index->mask].load(detail::kReadOrder);
       node != nullptr; node = node->next) {
    if (node->hash != h) continue;
    const OperatorName& found = node->entry->operator_name();
    if (found.name == name && found.overload_name == overload) {
      return node->entry;
    }
  }
  return nullptr;
}

std::optional<OperatorHandle> Dispatcher::findSchema(
    const OperatorName& name) const {
  OperatorEntry* entry = findEntry(name.name, name.overload_name);
  if (entry == nullptr) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  if (!entry->hasSchema()) return std::nullopt;
  return OperatorHandle(entry);
}

std::optional<OperatorHandle> Dispatcher::findOp(const OperatorName& name) const {
  OperatorEntry* entry = findEntry(name.name, name.overload_name);
  if (entry == nullptr) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  if (entry->def_and_impl_count_ == 0) return std::nullopt;
  return OperatorHandle(entry);
}

OperatorHandle Dispatcher::findSchemaOrThrow(std::string_view name,
                                             std::string_view overload) const {
  OperatorEntry* entry = findEntry(name, overload);
  // The def count is read without the lock: a racing undef makes this
  // handle's later calls fail cleanly, never crash.
  if (entry != nullptr && entry->def_count_.load(std::memory_order_relaxed) > 0) {
    return OperatorHandle(entry);
  }
  std::string full(name);
  if (!overload.empty()) full += "." + std::string(overload);
  std::string hint;
  if (entry != nullptr && entry->def_and_impl_count_ > 0) {
    hint = " (the operator has kernels but no schema: a TURNOUT_LIBRARY "
           "block must def it)";
  } else {
    hint = "; is the library that defines it linked and loaded?";
  }
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument,
                "Could not find schema for ", full, hint);
}

std::vector<OperatorName> Dispatcher::getAllOpNames() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<OperatorName> names;
  for (const auto& entry : entries_) {
    if (entry->hasSchema()) names.push_back(entry->operator_name());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<OperatorHandle> Dispatcher::findDanglingImpls() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<OperatorHandle> dangling;
  for (const auto& entry : entries_) {
    if (!entry->hasSchema() && entry->def_and_impl_count_ > 0) {
      dangling.emplace_back(entry.get());
    }
  }
  return dangling;
}

std::vector<OperatorName> Dispatcher::getRegistrationsForDispatchKey(
    std::optional<DispatchKey> k) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<OperatorName> names;
  for (const auto& entry : entries_) {
    bool match = k ? entry->hasKernelForDispatchKey(*k)
                   : entry->def_and_impl_count_ > 0;
    if (match) names.push_back(entry->operator_name());
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool Dispatcher::hasBackendFallbackForDispatchKey(DispatchKey k) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (int slot : slotsFor(k)) {
    if (backendFallback(slot) != nullptr) return true;
  }
  return false;
}

void Dispatcher::checkInvariants() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& entry : entries_) entry->checkInvariants(*this);
}

// ---- Registration --------------------------------------------------------------

Dispatcher::EntryForUpdate Dispatcher::entryForUpdateLocked(
    const OperatorName& name) {
  EntryForUpdate e;
  e.entry = findEntry(name.name, name.overload_name);
  if (e.entry == nullptr) {
    e.fresh = std::make_unique<OperatorEntry>(name);
    e.entry = e.fresh.get();
  }
  return e;
}

void Dispatcher::publishLocked(EntryForUpdate& e) {
  e.entry->updateTable(*this);
  if (e.fresh) {
    // The table exists before any reader can find the entry.
    entries_.push_back(std::move(e.fresh));
    insertIndexLocked(e.entry);
  }
}

void Dispatcher::insertIndexLocked(OperatorEntry* entry) {
  Index* index = index_.load(std::memory_order_relaxed);
  if (index->nodes.size() + 1 > index->mask + 1) {
    // Grow: build a whole new index and publish it; readers of the old one
    // finish undisturbed, and it is freed after them.
    auto* grown = new Index(2 * (index->mask + 1));
    for (IndexNode* old : index->nodes) {
      const size_t h = old->hash;
      auto* node = new IndexNode{h, old->entry,
                                 grown->buckets[h & grown->mask].load(
                                     std::memory_order_relaxed)};
      grown->buckets[h & grown->mask].store(node, std::memory_order_relaxed);
      grown->nodes.push_back(node);
    }
    index_.store(grown, detail::kPublishOrder);
    detail::Reclaimer::global().retire(
        index, &deleteIndex,
        sizeof(Index) + (sizeof(IndexNode) + 16) * index->nodes.size());
    index = grown;
  }
  const OperatorName& name = entry->operator_name();
  size_t h = hashName(name.name, name.overload_name);
  std::atomic<IndexNode*>& bucket = index->buckets[h & index->mask];
  auto* node = new IndexNode{h, entry, bucket.load(std::memory_order_relaxed)};
  index->nodes.push_back(node);
  bucket.store(node, detail::kPublishOrder);  // node fully built first
}

RegistrationHandleRAII Dispatcher::registerDef(FunctionSchema schema,
                                               std::string debug,
                                               AliasAnalysisKind kind,
                                               std::vector<std::string> tags) {
  OperatorEntry* entry;
  {
    std::lock_guard<std::mutex> lock(mu_);
    EntryForUpdate e = entryForUpdateLocked(schema.operator_name());
    entry = e.entry;
    if (entry->hasSchema()) {
      // c10's facts in c10's order; the advice is turnout's hint.
      throw Error::withHint(
          ErrorKind::InvalidArgument,
          detail::joinParts(
              "Tried to register an operator (", toString(schema),
              ") with the same name and overload name multiple times. An "
              "overload's schema is registered by one def() call only. "
              "Duplicate registration: ",
              debug, ". Original registration: ", entry->schemaDebug()),
          "\nEach operator is defined once; to add a kernel to it, use "
          "impl().");
    }
    entry->registerSchema(std::move(schema), std::move(debug), kind,
                          std::move(tags));
    entry->def_count_.fetch_add(1, std::memory_order_relaxed);
    ++entry->def_and_impl_count_;
    publishLocked(e);
    for (const auto& listener : listeners_) {
      listener->onOperatorRegistered(OperatorHandle(entry));
    }
  }
  detail::Reclaimer::global().reclaimIfWorthIt();
  return RegistrationHandleRAII([this, entry] { deregisterDef(entry); });
}

void Dispatcher::deregisterDef(OperatorEntry* entry) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& listener : listeners_) {
      listener->onOperatorDeregistered(OperatorHandle(entry));
    }
    entry->deregisterSchema();
    entry->def_count_.fetch_sub(1, std::memory_order_relaxed);
    --entry->def_and_impl_count_;
    entry->updateTable(*this);
  }
  detail::Reclaimer::global().reclaimIfWorthIt();
}

RegistrationHandleRAII Dispatcher::registerImpl(
    OperatorName name, std::optional<DispatchKey> key, KernelFunction kernel,
    std::optional<CppSignature> cpp_signature,
    std::optional<std::string> inferred_schema, std::string debug) {
  const DispatchKey k = key.value_or(DispatchKey::CompositeImplicitAutograd);
  TURNOUT_CHECK(isRuntimeDispatchKey(k) || isAliasDispatchKey(k),
                ErrorKind::InvalidArgument, "impl of ", toString(name),
                ": cannot register a kernel for ", toString(k),
                "; use a runtime key such as CPU or AutogradCUDA, or an alias "
                "key such as CompositeImplicitAutograd");
  TURNOUT_CHECK(kernel.isValid() || kernel.isFallthrough(),
                ErrorKind::InvalidArgument, "impl of ", toString(name),
                " for ", toString(k), ": the kernel is empty");
  OperatorEntry* entry;
  OperatorEntry::KernelIterator it;
  {
    std::lock_guard<std::mutex> lock(mu_);
    EntryForUpdate e = entryForUpdateLocked(name);
    entry = e.entry;
    it = entry->registerKernel(
        k, AnnotatedKernel{std::move(kernel), std::move(inferred_schema),
                           cpp_signature, std::move(debug), std::nullopt});
    ++entry->def_and_impl_count_;
    publishLocked(e);
  }
  detail::Reclaimer::global().reclaimIfWorthIt();
  return RegistrationHandleRAII(
      [this, entry, k, it] { deregisterImpl(entry, k, it); });
}

void Dispatcher::deregisterImpl(OperatorEntry* entry, DispatchKey key,
                                OperatorEntry::KernelIterator it) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    entry->deregisterKernel(key, it);
    --entry->def_and_impl_count_;
    entry->updateTable(*this);
  }
  detail::Reclaimer::global().reclaimIfWorthIt();
}

void Dispatcher::updateAllTablesLocked() {
  auto fallback_table = std::make_unique<FallbackTable>();
  OperatorEntry({"", ""}).computeKernelEntries(*this, &fallback_table->table,
                                               &fallback_table->info);
  FallbackTable* old = std::exchange(fallback_table_, fallback_table.release());
  // Empty operators move to the new shared table here; the old one is
  // retired only once none of them points at it.
  for (const auto& entry : entries_) entry->updateTable(*this);
  if (old != nullptr) {
    detail::Reclaimer::global().retire(&old->table, &deleteFallbackTable,
                                       sizeof(FallbackTable));
  }
}

RegistrationHandleRAII Dispatcher::registerFallback(DispatchKey key,
                                                    KernelFunction kernel,
                                                    std::string debug) {
  TURNOUT_CHECK(isRuntimeDispatchKey(key) || isAliasDispatchKey(key),
                ErrorKind::InvalidArgument, "fallback: cannot register a "
                "backend fallback for ", toString(key));
  TURNOUT_CHECK(kernel.isValid() || kernel.isFallthrough(),
                ErrorKind::InvalidArgument, "fallback for ", toString(key),
                ": the kernel is empty");
  std::vector<int> slots = slotsFor(key);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int slot : slots) {
      const std::optional<AnnotatedKernel>& existing = fallbacks_[slot].user;
      if (existing.has_value()) {
        throw Error::withHint(
            ErrorKind::InvalidArgument,
            detail::joinParts("Tried to register multiple backend fallbacks "
                              "for the same dispatch key ",
                              toString(key), "; previous registration ",
                              existing->debug, ", new registration ", debug),
            "\nDestroy the previous library first, or register one fallback "
            "that handles both cases.");
      }
    }
    for (int slot : slots) {
      fallbacks_[slot].user =
          AnnotatedKernel{kernel, std::nullopt, std::nullopt, debug,
                          std::nullopt};
    }
    updateAllTablesLocked();
  }
  detail::Reclaimer::global().reclaimIfWorthIt();
  return RegistrationHandleRAII([this, slots] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int slot : slots) fallbacks_[slot].user.reset();
      updateAllTablesLocked();
    }
    detail::Reclaimer::global().reclaimIfWorthIt();
  });
}

void Dispatcher::setFrameworkFallback(DispatchKey key, KernelFunction kernel,
                                      std::string debug,
                                      std::optional<FallbackFilter> filter) {
  TURNOUT_CHECK(isRuntimeDispatchKey(key) || isAliasDispatchKey(key),
                ErrorKind::InvalidArgument, "setFrameworkFallback: ",
                toString(key), " is not a runtime or alias key");
  const bool restore = !kernel.isValid() && !kernel.isFallthrough();
  AnnotatedKernel framework{
      restore ? KernelFunction::makeFallthrough() : std::move(kernel),
      std::nullopt, std::nullopt,
      restore ? std::string("registered in turnout framework") : std::move(debug),
      std::nullopt};
  if (!restore && filter.has_value()) {
    TURNOUT_CHECK(filter->selects != nullptr && filter->active != nullptr &&
                      !framework.kernel.isFallthrough(),
                  ErrorKind::InvalidArgument, "setFrameworkFallback(",
                  toString(key), "): a filter needs a boxed fallback and both "
                  "its tests (selects, active)");
    framework.fallback_filter = filter;
  }
  std::vector<int> slots = slotsFor(key);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int slot : slots) fallbacks_[slot].framework = framework;
    updateAllTablesLocked();
  }
  detail::Reclaimer::global().reclaimIfWorthIt();
}

RegistrationHandleRAII Dispatcher::registerLibrary(std::string ns,
                                                   std::string debug) {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = libraries_.find(ns);
  if (found != libraries_.end()) {
    throw Error(
        ErrorKind::InvalidArgument,
        "Only one DEF library may define the namespace " + ns +
            ": its DEF library was " + found->second +
            ", and another DEF library was " + debug +
            ". Put all of the namespace's definitions in the first; to "
            "define operators in more places, use FRAGMENT libraries, and "
            "to register kernels, IMPL libraries (each of these may be "
            "repeated):\n",
        FixIt{FixIt::Action::UseFragmentOrImpl, ns, "", "", "",
              "TURNOUT_LIBRARY_FRAGMENT(" + ns +
                  ", m) { m.def(\"op(Tensor x) -> Tensor\"); }\n"
                  "TURNOUT_LIBRARY_IMPL(" +
                  ns + ", CPU, m) { m.impl(\"op\", kernel); }"},
        "");
  }
  libraries_.emplace(ns, std::move(debug));
  return RegistrationHandleRAII([this, ns] {
    std::lock_guard<std::mutex> lock(mu_);
    libraries_.erase(ns);
  });
}

RegistrationHandleRAII Dispatcher::addRegistrationListener(
    std::unique_ptr<OpRegistrationListener> listener) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& entry : entries_) {
    if (entry->hasSchema()) listener->onOperatorRegistered(OperatorHandle(entry.get()));
  }
  OpRegistrationListener* raw = listener.get();
  listeners_.push_back(std::move(listener));
  return RegistrationHandleRAII([this, raw] {
    std::lock_guard<std::mutex> lock(mu_);
    listeners_.erase(
        std::remove_if(listeners_.begin(), listeners_.end(),
                       [raw](const auto& l) { return l.get() == raw; }),
        listeners_.end());
  });
}

}  // namespace turnout
