#include "dispatcher/operator_handle.h"

#include <algorithm>
#include <mutex>

#include "dispatcher/dispatcher.h"
#include "dispatcher/schema/schema_matching.h"
#include "dispatcher/schema/schema_parser.h"

namespace turnout {
namespace {

std::mutex& registryMutex() { return Dispatcher::singleton().registryMutex(); }

}  // namespace

const FunctionSchema& OperatorHandle::schema() const {
  std::lock_guard<std::mutex> lock(registryMutex());
  // The schema object lives as long as its def: callers hold the def.
  return entry_->schema();
}

bool OperatorHandle::hasSchema() const {
  std::lock_guard<std::mutex> lock(registryMutex());
  return entry_->hasSchema();
}

std::string OperatorHandle::debug() const {
  std::lock_guard<std::mutex> lock(registryMutex());
  return entry_->schemaDebug();
}

std::vector<std::string> OperatorHandle::tags() const {
  std::lock_guard<std::mutex> lock(registryMutex());
  return entry_->tags();
}

bool OperatorHandle::hasTag(std::string_view tag) const {
  std::lock_guard<std::mutex> lock(registryMutex());
  const std::vector<std::string>& tags = entry_->tags();
  return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

namespace {
// callBoxed's error, out of line and cold: building the message inline gave
// every boxed call a 0.5 KB frame and a stack-protector check.
[[noreturn]] __attribute__((noinline, cold)) void throwSchemaStackTooShort(
    const OperatorHandle& op, size_t needed, size_t found) {
  detail::throwError(ErrorKind::InvalidArgument,
                     detail::joinParts("calling ", toString(op.operator_name()),
                                       " boxed: its schema takes ", needed,
                                       " arguments but the stack holds only ",
                                       found));
}
}  // namespace

void OperatorHandle::callBoxed(Stack* stack) const {
  detail::HazardGuard<DispatchTable> guard(entry_->publishedTable());
  const DispatchTable& table = *guard;
  if (__builtin_expect(stack->size() < table.num_arguments, 0)) {
    throwSchemaStackTooShort(*this, table.num_arguments, stack->size());
  }
  DispatchKeySet ks = table.computeDispatchKeySet(table.extractFromStack(*stack));
  const KernelFunction& kernel = table.lookup(ks);
  if (__builtin_expect(detail::dispatchObserved(), 0)) {
    callBoxedObserved(kernel, ks, detail::CallKind::CallBoxed, stack);
    return;
  }
  kernel.callBoxed(*this, ks, stack);
}

void OperatorHandle::redispatchBoxed(DispatchKeySet ks, Stack* stack) const {
  detail::HazardGuard<DispatchTable> guard(entry_->publishedTable());
  const DispatchTable& table = *guard;
  ks = table.maskFallthrough(ks);
  const KernelFunction& kernel = table.lookup(ks);
  if (__builtin_expect(detail::dispatchObserved(), 0)) {
    callBoxedObserved(kernel, ks, detail::CallKind::RedispatchBoxed, stack);
    return;
  }
  kernel.callBoxed(*this, ks, stack);
}

void OperatorHandle::callBoxedObserved(const KernelFunction& kernel,
                                       DispatchKeySet ks, detail::CallKind kind,
                                       Stack* stack) const {
  detail::ObservedDispatch scope(*this, ks, kind);
  kernel.callBoxed(*this, ks, stack);
}

void OperatorHandle::callBoxedForDispatchKey(DispatchKey k, Stack& stack) const {
  TURNOUT_CHECK(isRuntimeDispatchKey(k), ErrorKind::InvalidArgument,
                "callBoxedForDispatchKey on ", toString(operator_name()),
                ": ", toString(k),
                " is not a runtime key (alias keys have no table entry)");
  detail::HazardGuard<DispatchTable> guard(entry_->publishedTable());
  const KernelFunction& kernel =
      guard->kernels[getDispatchTableIndexForDispatchKey(k)];
  TURNOUT_CHECK(!kernel.isFallthrough(), ErrorKind::InvalidArgument,
                "callBoxedForDispatchKey on ", toString(operator_name()),
                ": the entry for ", toString(k),
                " is a fallthrough, which has no kernel to run");
  if (__builtin_expect(detail::dispatchObserved(), 0)) {
    callBoxedObserved(kernel, DispatchKeySet(k), detail::CallKind::CallForKey,
                      &stack);
    return;
  }
  kernel.callBoxed(*this, DispatchKeySet(k), &stack);
}

void OperatorHandle::checkTyped(const CppSignature& sig,
                                const std::string& inferred_schema) const {
  std::lock_guard<std::mutex> lock(registryMutex());
  if (entry_->hasSchema()) {
    std::optional<std::string> difference = findSchemaDifferences(
        parseSchema("typed" + inferred_schema), entry_->schema());
    TURNOUT_CHECK(!difference.has_value(), ErrorKind::Type, "typed<",
                  sig.name(), ">() on ", toString(operator_name()),
                  ": the C++ signature does not fit the schema ",
                  toString(entry_->schema()), " (", entry_->schemaDebug(),
                  "): ", *difference, " (signature as a schema: ",
                  inferred_schema, ")");
  }
  std::optional<std::pair<CppSignature, std::string>> in_use =
      entry_->cppSignatureInUse();
  TURNOUT_CHECK(!in_use || in_use->first == sig, ErrorKind::Type,
                "Tried to access or call an operator with a wrong signature.\n"
                "  operator: ",
                toString(operator_name()), "\n  correct signature:  ",
                in_use ? in_use->first.name() : "", "\n    ",
                in_use ? in_use->second : "", "\n  accessed/called as: ",
                sig.name(),
                "\nUse typed<Sig>() with the kernel's exact C++ signature.");
}

bool OperatorHandle::hasKernelForDispatchKey(DispatchKey k) const {
  std::lock_guard<std::mutex> lock(registryMutex());
  return entry_->hasKernelForDispatchKey(k);
}

bool OperatorHandle::hasKernelForAnyDispatchKey(DispatchKeySet ks) const {
  std::lock_guard<std::mutex> lock(registryMutex());
  return entry_->hasKernelForAnyDispatchKey(ks);
}

bool OperatorHandle::hasComputedKernelForDispatchKey(DispatchKey k) const {
  TURNOUT_CHECK(isRuntimeDispatchKey(k), ErrorKind::InvalidArgument,
                "hasComputedKernelForDispatchKey: ", toString(k),
                " is not a runtime key");
  std::lock_guard<std::mutex> lock(registryMutex());
  return entry_->computedEntry(k).kind != EntryKind::Missing;
}

bool OperatorHandle::isKernelFallthroughKernel(DispatchKey k) const {
  TURNOUT_CHECK(isRuntimeDispatchKey(k), ErrorKind::InvalidArgument,
                "isKernelFallthroughKernel: ", toString(k),
                " is not a runtime key");
  std::lock_guard<std::mutex> lock(registryMutex());
  const ComputedEntry& e = entry_->computedEntry(k);
  return e.source != nullptr && e.source->kernel.isFallthrough();
}

std::string OperatorHandle::dumpState() const {
  std::lock_guard<std::mutex> lock(registryMutex());
  return entry_->dumpState();
}

std::string OperatorHandle::dumpComputedTable() const {
  std::lock_guard<std::mutex> lock(registryMutex());
  return entry_->dumpComputedTable();
}

void OperatorHandle::checkInvariants() const {
  std::lock_guard<std::mutex> lock(registryMutex());
  entry_->checkInvariants(Dispatcher::singleton());
}

}  // namespace turnout
