#include "dispatcher/debug/explain.h"

#include <mutex>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/local_dispatch_key_set.h"

namespace turnout {
namespace {

constexpr uint64_t kPerBackendFunctionalities =
    DispatchKeySet({DispatchKey::Dense, DispatchKey::Quantized,
                    DispatchKey::Sparse, DispatchKey::NestedTensor,
                    DispatchKey::AutogradFunctionality})
        .raw_repr();

// Precondition: the registry lock is held.
ExplainedEntry explainEntry(const OperatorEntry& entry, DispatchKey k) {
  const ComputedEntry& computed = entry.computedEntry(k);
  ExplainedEntry e{k, computed.kind, "", false};
  if (computed.source != nullptr) {
    e.site = computed.source->debug;
    e.fallthrough = computed.source->kernel.isFallthrough();
  }
  return e;
}

// The runtime keys of the functionalities removed from `before` to give
// `after`, paired with `before`'s backends.
std::vector<DispatchKey> removedKeys(DispatchKeySet before,
                                     DispatchKeySet after) {
  const uint64_t removed = before.raw_repr() & ~after.raw_repr() &
                           ~DispatchKeySet::kBackendMask;
  std::vector<DispatchKey> keys;
  if (removed == 0) return keys;
  DispatchKeySet named(DispatchKeySet::RAW,
                       removed | (before.raw_repr() & DispatchKeySet::kBackendMask));
  for (DispatchKey k : named) keys.push_back(k);
  // Highest priority first, as dispatch visits them.
  return std::vector<DispatchKey>(keys.rbegin(), keys.rend());
}

std::string describeValue(const IValue& v, DispatchKeySet* keys) {
  if (v.isTensor()) {
    const Tensor& t = v.toTensor();
    if (!t.defined()) return "undefined Tensor";
    *keys = t.key_set();
    return "Tensor";
  }
  if (v.isTensorList()) {
    size_t n = 0;
    for (const Tensor& t : v.toTensorListRef()) {
      if (t.defined()) *keys = *keys | t.key_set();
      ++n;
    }
    return "list of " + std::to_string(n) + " tensors";
  }
  if (v.isList()) {
    size_t n = 0;
    for (const IValue& e : v.toListRef()) {
      if (e.isTensor() && e.toTensor().defined()) {
        *keys = *keys | e.toTensor().key_set();
      }
      ++n;
    }
    return "list of " + std::to_string(n) + " values";
  }
  return v.tagKind();
}

void appendEntry(std::string* out, const ExplainedEntry& e) {
  *out += toString(e.key);
  if (e.fallthrough) *out += " (fallthrough, skipped)";
  *out += " -> ";
  if (e.kind == EntryKind::Missing) {
    *out += "no kernel [missing]: a call here fails with \"Could not run\"";
    return;
  }
  if (e.kind == EntryKind::AmbiguousAutogradOther) {
    *out +=
        "ambiguous [ambiguous autogradother]: a CompositeImplicitAutograd "
        "kernel and a kernel for a backend without its own autograd key; a "
        "call here fails";
    return;
  }
  *out += e.site;
  *out += " [";
  *out += toString(e.kind);
  *out += "]";
}

}  // namespace

DispatchExplanation explain(const OperatorHandle& op, const Stack& args) {
  std::lock_guard<std::mutex> lock(Dispatcher::singleton().registryMutex());
  detail::CallSection section;
  const OperatorEntry* entry = op.entry();
  const DispatchTable& table = entry->table();
  TURNOUT_CHECK(args.size() >= table.num_arguments, ErrorKind::InvalidArgument,
                "explain(", toString(op.operator_name()), "): its schema takes ",
                table.num_arguments, " arguments but the stack holds only ",
                args.size(), "; push every argument, as for callBoxed");

  DispatchExplanation e;
  e.op = toString(op.operator_name());
  if (entry->hasSchema()) {
    const FunctionSchema& schema = entry->schema();
    e.schema = toString(schema);
    const IValue* base = args.data() + (args.size() - table.num_arguments);
    for (size_t i : schema.tensorArgumentIndices()) {
      ExplainedArgument a;
      a.index = i;
      a.name = schema.arguments()[i].name();
      a.type = schema.arguments()[i].type()->toString();
      a.value = describeValue(base[i], &a.key_set);
      e.arguments.push_back(std::move(a));
    }
  }
  // The same extraction and masking as the call path.
  e.argument_keys = table.extractFromStack(args);
  const LocalDispatchKeySet local = tls_local_dispatch_key_set();
  e.tls_included = local.included_;
  e.tls_excluded = local.excluded_;
  e.before_mask = DispatchKeySet(
      DispatchKeySet::RAW,
      (e.argument_keys.raw_repr() | local.included_.raw_repr()) &
          ~(local.excluded_.raw_repr() & ~DispatchKeySet::kBackendMask));
  e.dispatch_key_set = table.computeDispatchKeySet(e.argument_keys);
  // The functionality bits the operator's mask clears for this call's
  // backend: probe with every functionality and the call's backends.
  const uint64_t backends =
      e.before_mask.raw_repr() & DispatchKeySet::kBackendMask;
  const DispatchKeySet probe(
      DispatchKeySet::RAW,
      (DispatchKeySet::kFullMask & ~DispatchKeySet::kBackendMask) | backends);
  const uint64_t cleared =
      probe.raw_repr() & ~table.maskFallthrough(probe).raw_repr();
  e.fallthrough_keys = DispatchKeySet(
      DispatchKeySet::RAW,
      cleared | ((cleared & kPerBackendFunctionalities) != 0 ? backends : 0));
  e.skipped = removedKeys(e.before_mask, e.dispatch_key_set);

  DispatchKey k = e.dispatch_key_set.highestPriorityTypeId();
  e.entry = explainEntry(*entry, k);
  DispatchKeySet ks = e.dispatch_key_set;
  while (k != DispatchKey::Undefined && e.entry.kind != EntryKind::Missing &&
         e.entry.kind != EntryKind::AmbiguousAutogradOther) {
    const DispatchKeySet below =
        ks & DispatchKeySet(DispatchKeySet::FULL_AFTER, k);
    // `ks` has no fallthrough key left: the mask only keeps it so.
    const DispatchKeySet next = table.maskFallthrough(below);
    if (next.emptyFunctionality()) break;
    k = next.highestPriorityTypeId();
    ExplainedEntry step = explainEntry(*entry, k);
    e.redispatch_chain.push_back(step);
    if (step.kind == EntryKind::Missing ||
        step.kind == EntryKind::AmbiguousAutogradOther) {
      break;
    }
    ks = next;
  }
  return e;
}

std::string DispatchExplanation::toString() const {
  std::string out = "explain " + (schema.empty() ? op : schema) + "\n";
  if (schema.empty()) {
    out += "  (no schema: the arguments were not inspected)\n";
  }
  for (const ExplainedArgument& a : arguments) {
    out += "  argument " + std::to_string(a.index) + " '" + a.name + "' (" +
           a.type + "): " + a.value;
    if (!a.key_set.empty()) out += " " + turnout::toString(a.key_set);
    out += "\n";
  }
  out += "  arguments' keys:  " + turnout::toString(argument_keys) + "\n";
  out += "  thread included:  " + turnout::toString(tls_included) + "\n";
  out += "  thread excluded:  " + turnout::toString(tls_excluded) + "\n";
  out += "  fallthrough keys: " + turnout::toString(fallthrough_keys) + "\n";
  if (!skipped.empty()) {
    out += "  skipped (fallthrough):";
    for (DispatchKey k : skipped) out += std::string(" ") + turnout::toString(k);
    out += "\n";
  }
  out += "  dispatch key set: " + turnout::toString(dispatch_key_set) + "\n";
  out += "  chosen: ";
  appendEntry(&out, entry);
  out += "\n";
  if (!redispatch_chain.empty()) {
    out += "  a redispatch below " + std::string(turnout::toString(entry.key)) +
           " would visit:\n";
    for (const ExplainedEntry& step : redispatch_chain) {
      out += "    ";
      appendEntry(&out, step);
      out += "\n";
    }
  }
  return out;
}

}  // namespace turnout
