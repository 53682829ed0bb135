#include "dispatcher/operator_entry.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/schema/schema_matching.h"
#include "dispatcher/schema/schema_parser.h"

namespace turnout {

const char* toString(AliasAnalysisKind kind) {
  switch (kind) {
    case AliasAnalysisKind::INTERNAL_SPECIAL_CASE:
      return "INTERNAL_SPECIAL_CASE";
    case AliasAnalysisKind::CONSERVATIVE:
      return "CONSERVATIVE";
    case AliasAnalysisKind::FROM_SCHEMA:
      return "FROM_SCHEMA";
    case AliasAnalysisKind::PURE_FUNCTION:
      return "PURE_FUNCTION";
  }
  return "UNKNOWN";
}

AliasAnalysisKind parseAliasAnalysisKind(std::string_view name) {
  if (name.empty() || name == "FROM_SCHEMA") return AliasAnalysisKind::FROM_SCHEMA;
  if (name == "CONSERVATIVE") return AliasAnalysisKind::CONSERVATIVE;
  if (name == "PURE_FUNCTION") return AliasAnalysisKind::PURE_FUNCTION;
  if (name == "INTERNAL_SPECIAL_CASE") {
    return AliasAnalysisKind::INTERNAL_SPECIAL_CASE;
  }
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument, "unknown alias analysis kind '",
                name,
                "'; expected one of '', 'FROM_SCHEMA', 'CONSERVATIVE', "
                "'PURE_FUNCTION'");
}

const char* toString(EntryKind kind) {
  switch (kind) {
    case EntryKind::Missing:
      return "missing";
    case EntryKind::Kernel:
      return "kernel";
    case EntryKind::DefaultBackendKernel:
      return "default backend kernel";
    case EntryKind::NestedKernel:
      return "nested kernel";
    case EntryKind::MathKernel:
      return "math kernel";
    case EntryKind::AmbiguousAutogradOther:
      return "ambiguous autogradother";
    case EntryKind::AutogradKernel:
      return "autograd kernel";
    case EntryKind::BatchedDecomposition:
      return "batched kernel";
    case EntryKind::BackendFallback:
      return "backend fallback";
  }
  return "unknown";
}

namespace detail {

const std::vector<DispatchKey>& allRuntimeKeys() {
  static const auto* const keys = [] {
    auto* v = new std::vector<DispatchKey>{DispatchKey::Undefined};
    for (DispatchKey k : DispatchKeySet(DispatchKeySet::FULL)) v->push_back(k);
    return v;
  }();
  return *keys;
}

}  // namespace detail

namespace {

void deleteTable(void* p) { delete static_cast<DispatchTable*>(p); }

// Keys printed in dumps in enum order, as c10 does.
bool keyOrder(DispatchKey a, DispatchKey b) {
  return static_cast<int>(a) < static_cast<int>(b);
}

// "scale" or "add.Tensor": the operator as a library of its namespace names it.
std::string nameInNamespace(const OperatorName& name) {
  std::string_view base = name.name;
  std::size_t colons = base.find("::");
  if (colons != std::string_view::npos) base.remove_prefix(colons + 2);
  std::string out(base);
  if (!name.overload_name.empty()) out += "." + name.overload_name;
  return out;
}

std::string keyName(DispatchKey k) {
  return std::string(toString(k)) + (isAliasDispatchKey(k) ? "[alias]" : "");
}

}  // namespace

OperatorEntry::OperatorEntry(OperatorName name)
    : name_(std::move(name)), table_(nullptr) {}

OperatorEntry::Registrations& OperatorEntry::registrations() {
  if (regs_ == nullptr) regs_ = std::make_unique<Registrations>();
  return *regs_;
}

const std::string& OperatorEntry::schemaDebug() const {
  static const std::string* const kNone = new std::string();
  return regs_ ? regs_->schema_debug : *kNone;
}

AliasAnalysisKind OperatorEntry::aliasAnalysis() const {
  return regs_ ? regs_->alias_analysis : AliasAnalysisKind::FROM_SCHEMA;
}

const std::vector<std::string>& OperatorEntry::tags() const {
  static const std::vector<std::string>* const kNone =
      new std::vector<std::string>();
  return regs_ ? regs_->tags : *kNone;
}

const FunctionSchema& OperatorEntry::schema() const {
  TURNOUT_CHECK(hasSchema(), ErrorKind::InvalidArgument,
                "operator ", toString(name_),
                " has kernels but no schema: it was never defined (def), or "
                "its definition was removed. Define it with "
                "TURNOUT_LIBRARY(ns, m) { m.def(\"schema\"); }");
  return *regs_->schema;
}

const std::list<AnnotatedKernel>* OperatorEntry::kernelsFor(DispatchKey k) const {
  if (regs_ == nullptr) return nullptr;
  for (const KeyKernels& kk : regs_->kernels) {
    if (kk.key == k) return &kk.kernels;
  }
  return nullptr;
}

bool OperatorEntry::hasKernelForDispatchKey(DispatchKey k) const {
  return kernelsFor(k) != nullptr;
}

bool OperatorEntry::hasKernelForAnyDispatchKey(DispatchKeySet ks) const {
  if (regs_ == nullptr) return false;
  for (const KeyKernels& kk : regs_->kernels) {
    if (!isAliasDispatchKey(kk.key) && kk.key != DispatchKey::Undefined &&
        ks.has(kk.key)) {
      return true;
    }
  }
  return false;
}

std::vector<DispatchKey> OperatorEntry::registeredKeys() const {
  std::vector<DispatchKey> keys;
  if (regs_ == nullptr) return keys;
  for (const KeyKernels& kk : regs_->kernels) keys.push_back(kk.key);
  std::sort(keys.begin(), keys.end(), keyOrder);
  return keys;
}

std::optional<std::pair<CppSignature, std::string>>
OperatorEntry::cppSignatureInUse() const {
  if (regs_ == nullptr) return std::nullopt;
  for (const KeyKernels& kk : regs_->kernels) {
    for (const AnnotatedKernel& k : kk.kernels) {
      if (k.cpp_signature) return std::make_pair(*k.cpp_signature, k.debug);
    }
  }
  return std::nullopt;
}

void OperatorEntry::checkKernelAgainstSchema(
    DispatchKey key, const AnnotatedKernel& k, const FunctionSchema& schema,
    const std::string& schema_debug) const {
  if (!k.inferred_schema) return;
  // Parsed once per distinct C++ signature (the registry lock is held).
  static auto* const parsed =
      new absl::flat_hash_map<std::string, FunctionSchema>();
  auto found = parsed->find(*k.inferred_schema);
  if (found == parsed->end()) {
    found = parsed
                ->emplace(*k.inferred_schema,
                          parseSchema("inferred" + *k.inferred_schema))
                .first;
  }
  const FunctionSchema& inferred = found->second;
  std::optional<std::string> difference =
      findSchemaDifferences(inferred, schema);
  if (difference.has_value()) {
    // c10's lines, in c10's order; the key and the fix are turnout's hint.
    throw Error::withHint(
        ErrorKind::InvalidArgument,
        detail::joinParts(
            "Inferred operator schema for a C++ kernel function doesn't "
            "match the expected function schema.\n  operator: ",
            toString(name_), "\n  expected schema: ", toString(schema),
            "\n    ", schema_debug, "\n  inferred schema: ",
            *k.inferred_schema, "\n    ", k.debug, "\n  reason: ",
            *difference),
        detail::joinParts("\n  dispatch key: ", toString(key),
                          "\nFix the kernel's C++ signature or the declared "
                          "schema so that they agree."));
  }
}

void OperatorEntry::checkCppSignature(DispatchKey key,
                                      const AnnotatedKernel& k) const {
  if (!k.cpp_signature || regs_ == nullptr) return;
  for (const KeyKernels& kk : regs_->kernels) {
    for (const AnnotatedKernel& other : kk.kernels) {
      if (!other.cpp_signature || *other.cpp_signature == *k.cpp_signature) {
        continue;
      }
      TURNOUT_CHECK(false, ErrorKind::Type,
                    "Mismatch in kernel C++ signatures\n  operator: ",
                    toString(name_), "\n  kernel 1: ",
                    other.cpp_signature->name(), "\n    dispatch key: ",
                    toString(kk.key), "\n    ", other.debug,
                    "\n  kernel 2: ", k.cpp_signature->name(),
                    "\n    dispatch key: ", toString(key), "\n    ", k.debug,
                    "\nEvery unboxed kernel of one operator must have the same "
                    "C++ signature.");
    }
  }
}

void checkOperatorTags(const OperatorName& op,
                       const std::vector<std::string>& tags) {
  for (size_t i = 0; i < tags.size(); ++i) {
    const std::string& tag = tags[i];
    bool valid = !tag.empty() && !std::isdigit(static_cast<unsigned char>(tag[0]));
    for (char c : tag) {
      valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    }
    TURNOUT_CHECK(valid, ErrorKind::InvalidArgument, "def of ", toString(op),
                  ": tag ", i, " is '", tag,
                  "', which is not a tag; a tag is an identifier such as "
                  "'pointwise' or 'core' (letters, digits and '_')");
    for (size_t j = 0; j < i; ++j) {
      TURNOUT_CHECK(tags[j] != tag, ErrorKind::InvalidArgument, "def of ",
                    toString(op), ": tag '", tag, "' is given twice (tags ", j,
                    " and ", i, "); give each tag once");
    }
  }
}

void OperatorEntry::registerSchema(FunctionSchema schema, std::string debug,
                                   AliasAnalysisKind kind,
                                   std::vector<std::string> tags) {
  TURNOUT_INTERNAL_ASSERT(!hasSchema(), "schema registered twice for ",
                          toString(name_));
  checkOperatorTags(name_, tags);
  for (size_t i : schema.tensorArgumentIndices()) {
    TURNOUT_CHECK(i < 64, ErrorKind::InvalidArgument, "operator ",
                  toString(name_), ": argument ", i,
                  " holds tensors, but turnout dispatches on the first 64 "
                  "arguments only; move tensor arguments to the front");
  }
  // Check before changing anything: a failed def leaves the entry as it was.
  if (regs_ != nullptr) {
    for (const KeyKernels& kk : regs_->kernels) {
      for (const AnnotatedKernel& k : kk.kernels) {
        checkKernelAgainstSchema(kk.key, k, schema, debug);
      }
    }
  }
  Registrations& r = registrations();
  r.dispatch_arg_mask = 0;
  for (size_t i : schema.tensorArgumentIndices()) {
    r.dispatch_arg_mask |= uint64_t{1} << i;
  }
  r.schema = std::move(schema);
  r.schema_debug = std::move(debug);
  r.alias_analysis = kind;
  r.tags = std::move(tags);
}

void OperatorEntry::deregisterSchema() {
  TURNOUT_INTERNAL_ASSERT(hasSchema());
  // The rest goes with the registrations (updateTable) when no kernel is
  // left either.
  regs_->schema.reset();
  regs_->schema_debug.clear();
  regs_->alias_analysis = AliasAnalysisKind::FROM_SCHEMA;
  regs_->tags.clear();
  regs_->tags.shrink_to_fit();
}

OperatorEntry::KernelIterator OperatorEntry::registerKernel(
    DispatchKey key, AnnotatedKernel kernel) {
  if (hasSchema()) {
    checkKernelAgainstSchema(key, kernel, *regs_->schema, regs_->schema_debug);
  }
  checkCppSignature(key, kernel);

  std::vector<KeyKernels>& kernels = registrations().kernels;
  const std::optional<FunctionSchema>& schema = regs_->schema;
  auto it = std::find_if(kernels.begin(), kernels.end(),
                         [key](const KeyKernels& kk) { return kk.key == key; });
  if (it == kernels.end()) {
    kernels.push_back(KeyKernels{key, {}});
    it = kernels.end() - 1;
  } else {
    const AnnotatedKernel& previous = it->kernels.front();
    TURNOUT_WARN("Overriding a previously registered kernel for the same "
                 "operator and the same dispatch key\n  operator: ",
                 schema ? toString(*schema) : toString(name_), "\n    ",
                 schema ? regs_->schema_debug : std::string("(no schema yet)"),
                 "\n  dispatch key: ", toString(key),
                 "\n  previous kernel: ", previous.debug,
                 "\n       new kernel: ", kernel.debug,
                 "\nThe previous kernel comes back when the new one is "
                 "deregistered.");
  }
  it->kernels.push_front(std::move(kernel));
  return it->kernels.begin();
}

void OperatorEntry::deregisterKernel(DispatchKey key, KernelIterator kernel) {
  TURNOUT_INTERNAL_ASSERT(regs_ != nullptr, "no kernels on ", toString(name_));
  std::vector<KeyKernels>& kernels = regs_->kernels;
  auto it = std::find_if(kernels.begin(), kernels.end(),
                         [key](const KeyKernels& kk) { return kk.key == key; });
  TURNOUT_INTERNAL_ASSERT(it != kernels.end(), "no kernels for ",
                          toString(key), " on ", toString(name_));
  it->kernels.erase(kernel);
  if (it->kernels.empty()) kernels.erase(it);
}

namespace {

// What computeTable needs to know about one runtime key, computed once.
struct RuntimeKeyInfo {
  DispatchKey key;
  int slot;
  bool in_non_functional;  // CompositeExplicitAutogradNonFunctional (and Undefined)
  bool in_explicit;        // CompositeExplicitAutograd (and Undefined)
  bool in_implicit;        // CompositeImplicitAutograd (and Undefined)
  bool in_nested;          // CompositeImplicitAutogradNestedTensor
  bool in_autograd;        // Autograd
  DispatchKeySet backends_under_autograd;  // getBackendKeySetFromAutograd
  uint64_t functionality_bit;
  int backend;         // 1..kNumBackends for per-backend keys, else 0
  int per_backend_group;  // index of its per-backend functionality, or -1
};

const std::vector<RuntimeKeyInfo>& runtimeKeyInfos() {
  static const auto* const infos = [] {
    auto* v = new std::vector<RuntimeKeyInfo>();
    for (DispatchKey k : detail::allRuntimeKeys()) {
      RuntimeKeyInfo info;
      const bool undefined = k == DispatchKey::Undefined;
      info.key = k;
      info.slot = getDispatchTableIndexForDispatchKey(k);
      info.in_non_functional =
          undefined || runtimeDispatchKeySetHas(
                           DispatchKey::CompositeExplicitAutogradNonFunctional, k);
      info.in_explicit =
          undefined ||
          runtimeDispatchKeySetHas(DispatchKey::CompositeExplicitAutograd, k);
      info.in_implicit =
          undefined ||
          runtimeDispatchKeySetHas(DispatchKey::CompositeImplicitAutograd, k);
      info.in_nested = runtimeDispatchKeySetHas(
          DispatchKey::CompositeImplicitAutogradNestedTensor, k);
      info.in_autograd = runtimeDispatchKeySetHas(DispatchKey::Autograd, k);
      info.backends_under_autograd = getBackendKeySetFromAutograd(k);
      DispatchKey functionality = toFunctionalityKey(k);
      info.functionality_bit = DispatchKeySet(functionality).raw_repr();
      info.backend = static_cast<int>(toBackendComponent(k));
      info.per_backend_group = -1;
      if (isPerBackendFunctionalityKey(functionality)) {
        const DispatchKey groups[] = {
            DispatchKey::Dense, DispatchKey::Quantized, DispatchKey::Sparse,
            DispatchKey::NestedTensor, DispatchKey::AutogradFunctionality};
        for (int g = 0; g < kNumPerBackendFunctionalities; ++g) {
          if (groups[g] == functionality) info.per_backend_group = g;
        }
      }
      v->push_back(info);
    }
    return v;
  }();
  return *infos;
}

}  // namespace

void OperatorEntry::computeTable(
    const Dispatcher& dispatcher, DispatchTable* table,
    std::array<ComputedEntry, kNumRuntimeEntries>* info) const {
  if (regs_ == nullptr || regs_->kernels.empty()) {
    // Only backend fallbacks apply: the same for every such operator, so the
    // dispatcher keeps that table ready (a def costs one table copy).
    const Dispatcher::FallbackTable& prototype = dispatcher.fallbackTable();
    *table = prototype.table;
    *info = prototype.info;
  } else {
    computeKernelEntries(dispatcher, table, info);
  }
  table->dispatch_arg_mask = hasSchema() ? regs_->dispatch_arg_mask : 0;
  table->num_arguments =
      hasSchema() ? static_cast<uint32_t>(regs_->schema->arguments().size())
                  : 0;
}

void OperatorEntry::computeKernelEntries(
    const Dispatcher& dispatcher, DispatchTable* table,
    std::array<ComputedEntry, kNumRuntimeEntries>* info) const {
  auto active = [this](DispatchKey k) -> const AnnotatedKernel* {
    const std::list<AnnotatedKernel>* list = kernelsFor(k);
    return list ? &list->front() : nullptr;
  };
  // Direct kernels by slot, from the few keys this operator has.
  std::array<const AnnotatedKernel*, kNumRuntimeEntries> direct{};
  if (regs_ != nullptr) {  // null: the dispatcher's fallback table
    for (const KeyKernels& kk : regs_->kernels) {
      if (!isAliasDispatchKey(kk.key)) {
        direct[getDispatchTableIndexForDispatchKey(kk.key)] =
            &kk.kernels.front();
      }
    }
  }
  const AnnotatedKernel* non_functional =
      active(DispatchKey::CompositeExplicitAutogradNonFunctional);
  const AnnotatedKernel* explicit_autograd =
      active(DispatchKey::CompositeExplicitAutograd);
  const AnnotatedKernel* nested =
      active(DispatchKey::CompositeImplicitAutogradNestedTensor);
  const AnnotatedKernel* math = active(DispatchKey::CompositeImplicitAutograd);
  const AnnotatedKernel* autograd = active(DispatchKey::Autograd);
  const AnnotatedKernel* batched =
      active(DispatchKey::FuncTorchBatchedDecomposition);
  const bool ambiguous_autogradother =
      math != nullptr && hasKernelForAnyDispatchKey(autogradother_backends);
  static const KernelFunction kMissing = KernelFunction::makeMissing();
  static const KernelFunction kAmbiguous =
      KernelFunction::makeAmbiguousAutogradOther();

  // A filtered backend fallback becomes, in this operator's own table, an
  // entry that knows the operator, this table and the unboxed entry point of
  // its signature (fallback_filter.h). Those entries are made last, once the
  // fallthrough masks are final: they precompute their pass-through from
  // them. The prototype (regs_ null) holds the plain fallback: its entries
  // are copied into other tables.
  std::array<const AnnotatedKernel*, kNumRuntimeEntries> filtered_at{};

  uint64_t mask = ~uint64_t{0};
  uint64_t per_backend_clear[kNumBackends + 1] = {};
  int fallthroughs_per_group[kNumPerBackendFunctionalities] = {};

  for (const RuntimeKeyInfo& key : runtimeKeyInfos()) {
    ComputedEntry entry;
    if (const AnnotatedKernel* d = direct[key.slot]) {
      entry = {EntryKind::Kernel, d};
    } else if (non_functional && key.in_non_functional) {
      entry = {EntryKind::DefaultBackendKernel, non_functional};
    } else if (explicit_autograd && key.in_explicit) {
      entry = {EntryKind::DefaultBackendKernel, explicit_autograd};
    } else {
      if (nested && key.in_nested) {
        entry = {EntryKind::NestedKernel, nested};
      } else if (math && key.in_implicit) {
        // A CompositeImplicitAutograd kernel serves an autograd key only when
        // the backends under that key have no kernel of their own and there
        // is no CompositeExplicitAutograd kernel: otherwise autograd must run
        // (or fall through) before the backend kernel. As in c10, a
        // CompositeExplicitAutogradNonFunctional kernel does not count.
        const bool has_backend_kernel =
            explicit_autograd != nullptr ||
            (!key.backends_under_autograd.empty() &&
             hasKernelForAnyDispatchKey(key.backends_under_autograd));
        if (key.key == DispatchKey::AutogradOther && ambiguous_autogradother) {
          entry = {EntryKind::AmbiguousAutogradOther, nullptr};
        } else if (!has_backend_kernel) {
          entry = {EntryKind::MathKernel, math};
        }
      }
      if (entry.kind == EntryKind::Missing && autograd && key.in_autograd) {
        entry = {EntryKind::AutogradKernel, autograd};
      }
      if (entry.kind == EntryKind::Missing && batched &&
          key.key == DispatchKey::FuncTorchBatched) {
        entry = {EntryKind::BatchedDecomposition, batched};
      }
      if (entry.kind == EntryKind::Missing) {
        if (const AnnotatedKernel* fallback =
                dispatcher.backendFallback(key.slot)) {
          entry = {EntryKind::BackendFallback, fallback};
        }
      }
    }
    (*info)[key.slot] = entry;
    switch (entry.kind) {
      case EntryKind::Missing:
        table->kernels[key.slot] = kMissing;
        break;
      case EntryKind::AmbiguousAutogradOther:
        table->kernels[key.slot] = kAmbiguous;
        break;
      case EntryKind::BackendFallback:
        if (entry.source->fallback_filter.has_value() && regs_ != nullptr) {
          filtered_at[key.slot] = entry.source;  // made below
          break;
        }
        [[fallthrough]];
      default:
        table->kernels[key.slot] = entry.source->kernel;
        // Fallthrough masks: a fallthrough key's bit is cleared so that
        // calls skip it with no call at all.
        if (entry.source->kernel.isFallthrough()) {
          if (key.per_backend_group < 0) {
            mask &= ~key.functionality_bit;
          } else {
            per_backend_clear[key.backend] |= key.functionality_bit;
            ++fallthroughs_per_group[key.per_backend_group];
          }
        }
    }
  }

  // A per-backend functionality that falls through for every backend is
  // cleared in the shared mask; one that does for some backends only needs
  // the per-backend masks.
  bool per_backend = false;
  for (const RuntimeKeyInfo& key : runtimeKeyInfos()) {
    if (key.per_backend_group < 0 || key.backend != 1) continue;
    int n = fallthroughs_per_group[key.per_backend_group];
    if (n == kNumBackends) {
      mask &= ~key.functionality_bit;
    } else if (n > 0) {
      per_backend = true;
    }
  }
  table->non_fallthrough_keys = mask;
  table->per_backend_fallthrough = per_backend;
  for (int b = 0; b <= kNumBackends; ++b) {
    table->non_fallthrough_keys_per_backend[b] = mask & ~per_backend_clear[b];
  }

  // The filtered entries: one functor serves every slot of the same
  // fallback.
  const OperatorHandle handle(const_cast<OperatorEntry*>(this));
  void* unboxed_filtered = nullptr;
  if (regs_ != nullptr) {
    if (auto sig = cppSignatureInUse()) {
      unboxed_filtered = sig->first.unboxedFilteredFallback();
    }
  }
  const AnnotatedKernel* filtered_source = nullptr;
  KernelFunction filtered;
  for (int slot = 0; slot < kNumRuntimeEntries; ++slot) {
    const AnnotatedKernel* source = filtered_at[slot];
    if (source == nullptr) continue;
    if (source != filtered_source) {
      filtered_source = source;
      filtered = detail::makeFilteredFallbackEntry(
          source->kernel, *source->fallback_filter, table, handle,
          unboxed_filtered);
    }
    table->kernels[slot] = filtered;
  }
}

void OperatorEntry::updateTable(const Dispatcher& dispatcher) {
  if (regs_ != nullptr && !regs_->schema && regs_->kernels.empty()) {
    // Nothing left: only the entry stays, for the handles that point at it.
    regs_.reset();
  }
  const DispatchTable* table;
  if (regs_ == nullptr) {
    // What computeTable gives for no def and no kernel, shared by every such
    // operator (the dispatcher retires it when the fallbacks change, after
    // pointing every empty entry at the new one).
    table = &dispatcher.fallbackTable().table;
  } else {
    auto own = std::make_unique<DispatchTable>();
    computeTable(dispatcher, own.get(), &regs_->computed);
    table = own.release();
  }
  const DispatchTable* old = table_.exchange(table, detail::kPublishOrder);
  if (old != nullptr && owns_table_) {
    detail::Reclaimer::global().retire(const_cast<DispatchTable*>(old),
                                       &deleteTable, sizeof(DispatchTable));
  }
  owns_table_ = regs_ != nullptr;
}

const ComputedEntry& OperatorEntry::computedEntry(DispatchKey k) const {
  const int slot = getDispatchTableIndexForDispatchKey(k);
  if (regs_ == nullptr) {
    return Dispatcher::singleton().fallbackTable().info[slot];
  }
  return regs_->computed[slot];
}

std::string OperatorEntry::computedEntryLine(DispatchKey k) const {
  const ComputedEntry& entry = computedEntry(k);
  std::string line = std::string(toString(k)) + ": ";
  if (entry.kind == EntryKind::AmbiguousAutogradOther) {
    line += "ambiguous_autogradother";
  } else {
    if (entry.source->kernel.isFallthrough()) line += "fallthrough ";
    line += entry.source->debug;
  }
  return line + " [" + toString(entry.kind) + "]\n";
}

std::string OperatorEntry::dumpComputedTable() const {
  std::string out;
  for (DispatchKey k : detail::allRuntimeKeys()) {
    if (computedEntry(k).kind != EntryKind::Missing) out += computedEntryLine(k);
  }
  return out;
}

std::string OperatorEntry::dumpState() const {
  std::ostringstream out;
  out << "name: " << toString(name_) << "\n";
  if (hasSchema()) {
    out << "schema: " << toString(*regs_->schema) << "\n";
    out << "debug: " << regs_->schema_debug << "\n";
    out << "alias analysis kind: " << toString(regs_->alias_analysis) << "\n";
    if (!regs_->tags.empty()) {
      out << "tags:";
      for (const std::string& tag : regs_->tags) out << " " << tag;
      out << "\n";
    }
  } else {
    out << "schema: (none)\n";
  }
  for (DispatchKey k : registeredKeys()) {
    int i = 0;
    for (const AnnotatedKernel& kernel : *kernelsFor(k)) {
      out << keyName(k) << (i++ > 0 ? " (inactive)" : "") << ": "
          << kernel.debug << " :: "
          << (kernel.inferred_schema ? *kernel.inferred_schema : "(none)")
          << " [ " << (kernel.kernel.isFallthrough() ? "fallthrough " : "")
          << (kernel.kernel.isValid() ? "boxed " : "")
          << (kernel.kernel.isValidUnboxed() ? "unboxed " : "") << "]\n";
    }
  }
  return out.str();
}

Error OperatorEntry::missingKernelError(DispatchKey k,
                                        DispatchKeySet ks) const {
  std::string available;
  std::string lines;
  for (DispatchKey key : detail::allRuntimeKeys()) {
    if (computedEntry(key).kind == EntryKind::Missing) continue;
    if (!available.empty()) available += ", ";
    available += toString(key);
    lines += computedEntryLine(key);
  }
  std::ostringstream out;
  out << "Could not run '" << toString(name_) << "' with arguments from the '"
      << toString(k) << "' backend. ";
  if (!hasSchema()) {
    out << "The operator has no schema (no def registered yet), so its "
           "arguments were not inspected. ";
  }
  out << "'" << toString(name_) << "' is only available for these backends: ["
      << available << "].\n"
      << "The call's dispatch key set was " << toString(ks)
      << "; its highest key, " << toString(k) << ", has no kernel.\n"
      << "To fix it, register a kernel for " << toString(k)
      << ", or a CompositeExplicitAutograd kernel that serves every "
         "backend:\n";
  std::string ns(name_.getNamespace());
  std::string op = nameInNamespace(name_);
  std::string key(toString(k));
  std::string cpp = "TURNOUT_LIBRARY_IMPL(" + ns + ", " + key +
                    ", m) { m.impl(\"" + op + "\", kernel); }";
  return Error(ErrorKind::NotImplemented, out.str(),
               FixIt{FixIt::Action::RegisterKernel, ns, op, key, "", cpp},
               "\n" + lines);
}

void OperatorEntry::checkInvariants(const Dispatcher& dispatcher) const {
  int kernels = 0;
  static const std::vector<KeyKernels>* const kNoKernels =
      new std::vector<KeyKernels>();
  for (const KeyKernels& kk : regs_ ? regs_->kernels : *kNoKernels) {
    TURNOUT_INTERNAL_ASSERT(!kk.kernels.empty(), toString(name_),
                            ": empty kernel list for ", toString(kk.key));
    for (const AnnotatedKernel& k : kk.kernels) {
      ++kernels;
      TURNOUT_INTERNAL_ASSERT(k.kernel.isValid() || k.kernel.isFallthrough(),
                              toString(name_), ": invalid kernel for ",
                              toString(kk.key));
    }
  }
  const int defs = def_count_.load(std::memory_order_relaxed);
  TURNOUT_INTERNAL_ASSERT(hasSchema() == (defs > 0), toString(name_),
                          ": schema present ", hasSchema(),
                          " but def count ", defs);
  TURNOUT_INTERNAL_ASSERT(hasSchema() || tags().empty(), toString(name_),
                          ": has ", tags().size(), " tags but no schema");
  TURNOUT_INTERNAL_ASSERT((regs_ == nullptr) == (def_and_impl_count_ == 0),
                          toString(name_), ": registrations kept ",
                          regs_ != nullptr, " with def_and_impl_count ",
                          def_and_impl_count_);
  TURNOUT_INTERNAL_ASSERT(
      owns_table_ == (regs_ != nullptr) &&
          (owns_table_ || &table() == &dispatcher.fallbackTable().table),
      toString(name_), ": an empty operator must use the shared table, and "
      "only an empty one");
  TURNOUT_INTERNAL_ASSERT(def_and_impl_count_ == defs + kernels,
                          toString(name_), ": def_and_impl_count ",
                          def_and_impl_count_, " != ", defs, " + ",
                          kernels);
  DispatchTable expected;
  std::array<ComputedEntry, kNumRuntimeEntries> info;
  computeTable(dispatcher, &expected, &info);
  const DispatchTable& actual = table();
  for (DispatchKey k : detail::allRuntimeKeys()) {
    int slot = getDispatchTableIndexForDispatchKey(k);
    TURNOUT_INTERNAL_ASSERT(
        expected.kernels[slot].boxedFunction() ==
                actual.kernels[slot].boxedFunction() &&
            info[slot].kind == computedEntry(k).kind &&
            info[slot].source == computedEntry(k).source,
        toString(name_), ": stale table entry for ", toString(k));
    TURNOUT_INTERNAL_ASSERT(
        detail::filteredFallbackAgreesWith(actual.kernels[slot], actual),
        toString(name_), ": the filtered fallback entry for ", toString(k),
        " names another table, or its precomputed pass-through disagrees "
        "with the table's fallthrough masks");
  }
  TURNOUT_INTERNAL_ASSERT(
      expected.non_fallthrough_keys == actual.non_fallthrough_keys &&
          expected.per_backend_fallthrough == actual.per_backend_fallthrough &&
          expected.dispatch_arg_mask == actual.dispatch_arg_mask,
      toString(name_), ": stale fallthrough mask or argument layout");
}

}  // namespace turnout
