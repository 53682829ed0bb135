// explain: why a call would go where it goes, without running it.
//
//   Stack args{IValue(x), IValue(2.0)};
//   DispatchExplanation e = explain(op, args);
//   e.entry.key;               // DispatchKey::AutogradCPU
//   e.entry.kind;              // EntryKind::AutogradKernel
//   std::cout << e.toString();
//
//   explain myops::scale(Tensor x, float factor) -> Tensor
//     argument 0 'x' (Tensor): DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU)
//     arguments' keys:  DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU)
//     thread included:  DispatchKeySet(BackendSelect, ADInplaceOrView)
//     thread excluded:  DispatchKeySet(AutocastCPU, ...)
//     fallthrough keys: DispatchKeySet(...)
//     skipped (fallthrough): ADInplaceOrView
//     dispatch key set: DispatchKeySet(CPU, AutogradCPU)
//     chosen: AutogradCPU -> registered at f.cc:12 [autograd kernel]
//     a redispatch below AutogradCPU would visit:
//       CPU -> registered at f.cc:9 [kernel]
//
// The key set is computed exactly as a call computes it, from the same
// published table and the calling thread's include/exclude sets. The
// redispatch chain assumes each kernel passes the call on with the keys
// below its own (DispatchKeySet(FULL_AFTER, key)), as autograd kernels and
// boxed fallbacks do; fallthrough keys are skipped as calls skip them.
//
// Thread safety: explain() takes the registry lock; it reads the calling
// thread's include/exclude sets.
#ifndef TURNOUT_DISPATCHER_DEBUG_EXPLAIN_H_
#define TURNOUT_DISPATCHER_DEBUG_EXPLAIN_H_

#include <cstddef>
#include <string>
#include <vector>

#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/operator_entry.h"
#include "dispatcher/operator_handle.h"

namespace turnout {

/// One argument the dispatcher reads keys from (Tensor, Tensor?, Tensor[],
/// Tensor?[] in the schema).
struct ExplainedArgument {
  size_t index;          // position in the schema
  std::string name;      // the schema's name for it
  std::string type;      // the schema's type, "Tensor[]"
  std::string value;     // what the stack holds: "Tensor", "undefined Tensor",
                         // "list of 2 tensors", "None", or another tag
  DispatchKeySet key_set;  // the keys it contributes
};

/// One computed table entry.
struct ExplainedEntry {
  DispatchKey key;
  EntryKind kind;
  std::string site;  // "registered at f.cc:12" or a kernel name; "" when
                     // missing or ambiguous
  bool fallthrough;  // the entry is a fallthrough kernel (calls skip it)
};

struct DispatchExplanation {
  std::string op;       // "ns::name.overload"
  std::string schema;   // "" when the operator has no schema
  std::vector<ExplainedArgument> arguments;
  DispatchKeySet argument_keys;   // OR of the arguments' key sets
  DispatchKeySet tls_included;    // the thread's include set
  DispatchKeySet tls_excluded;    // the thread's exclude set
  /// The keys this operator falls through for the call's backend (the
  /// functionalities whose bit the operator's mask clears).
  DispatchKeySet fallthrough_keys;
  /// (argument_keys | included) - excluded, before the fallthrough mask.
  DispatchKeySet before_mask;
  /// Keys of before_mask removed because they are fallthroughs.
  std::vector<DispatchKey> skipped;
  /// What the kernel receives: before_mask minus the fallthrough keys.
  DispatchKeySet dispatch_key_set;
  /// The chosen key's entry (key Undefined when no key is left).
  ExplainedEntry entry;
  /// The keys below entry.key that successive redispatches would reach,
  /// highest first, ending at the backend (or at a missing entry). The
  /// fallthrough keys are already gone from dispatch_key_set (see skipped).
  std::vector<ExplainedEntry> redispatch_chain;

  /// The readable form (see the file comment).
  std::string toString() const;
};

/// Why a call of `op` with these arguments would go where it goes, without
/// running it: the arguments' key sets, the thread-local sets, the
/// fallthrough mask, the key chosen, its table entry (kind, registration
/// site) and the keys a redispatch would visit below it. `args` holds the
/// arguments as callBoxed takes them (the schema's arguments on top of the
/// stack). Throws InvalidArgument when it holds fewer.
DispatchExplanation explain(const OperatorHandle& op, const Stack& args);

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_DEBUG_EXPLAIN_H_
