// Fuzz target: registration through the C++ Library API. The input bytes
// decode into a sequence of steps on three operators of namespace "fz":
// def (two schema variants each, alias analysis kinds, tags good and bad),
// def with a kernel, impl (every kind of key: runtime, per-backend, alias,
// and none; boxed, typed and fallthrough kernels, through IMPL and FRAGMENT
// libraries), backend fallbacks (runtime and alias keys), the namespace's
// one DEF library, boxed calls with chosen key sets, and the drop of any
// live registration (its Library, hence its RAII handle) in any order. The
// rest of the input drops every registration left, in an order it decides.
//
// After each step:
//   - Dispatcher::checkInvariants() (every table equals the one computed
//     from the registrations now);
//   - every operator's state (schema, kernels per key newest first, computed
//     table with provenance) equals that of a shadow operator (namespace
//     "fzs") onto which only the live registrations are replayed, in their
//     order, from scratch: what was registered and dropped before leaves no
//     trace;
//   - a registration that failed left the registry exactly as it was (the
//     registry snapshot before and after are equal);
// and at the end of the input the registry equals the one before it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dispatcher/call_section.h"
#include "dispatcher/core/dispatch_key.h"
#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/ivalue.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/debug/registry_snapshot.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/schema/schema_parser.h"
#include "dispatcher/stack.h"
#include "tests/fuzz/fuzz_support.h"

namespace turnout {
namespace fuzz {
namespace {

// Every Library gets this site, so that the real and the shadow operators'
// "registered at" lines agree.
constexpr const char* kFile = "registry_fuzzer.cc";
constexpr uint32_t kLine = 1;

// ---- The input --------------------------------------------------------------------

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  // The next byte, or 0 once the input is used up.
  uint8_t next() { return pos_ < size_ ? data_[pos_++] : 0; }
  size_t pick(size_t n) { return n == 0 ? 0 : next() % n; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// ---- What can be registered ------------------------------------------------------

struct OpSpec {
  const char* name;  // with its overload
  const char* schemas[2];  // after the name; the second one conflicts
};
constexpr OpSpec kOps[] = {
    {"a", {"(Tensor x) -> Tensor", "(Tensor x, int n) -> Tensor"}},
    {"b.ov", {"(Tensor x, Tensor y) -> Tensor", "(Tensor x) -> Tensor"}},
    {"c", {"(int n) -> int", "(Tensor(a!) x) -> Tensor(a!)"}},
};
constexpr size_t kNumOps = sizeof(kOps) / sizeof(kOps[0]);

const std::vector<DispatchKey>& keys() {
  static const std::vector<DispatchKey>* k = [] {
    auto* v = new std::vector<DispatchKey>;
    for (const char* name :
         {"CPU", "CUDA", "Meta", "PrivateUse1", "QuantizedCPU", "SparseCPU",
          "NestedTensorCPU", "AutogradCPU", "AutogradCUDA", "AutogradOther",
          "AutogradPrivateUse1", "AutogradNestedTensor", "ADInplaceOrView",
          "BackendSelect", "Python", "Tracer", "FuncTorchBatched",
          "Functionalize", "Conjugate", "AutocastCPU", "Undefined",
          "Autograd", "CompositeImplicitAutograd",
          "CompositeExplicitAutograd",
          "CompositeExplicitAutogradNonFunctional",
          "FuncTorchBatchedDecomposition",
          "CompositeImplicitAutogradNestedTensor"}) {
      v->push_back(parseDispatchKey(name));
    }
    return v;
  }();
  return *k;
}

// Keys a call's tensor may carry.
const std::vector<DispatchKey>& tensorKeys() {
  static const std::vector<DispatchKey>* k = [] {
    auto* v = new std::vector<DispatchKey>;
    for (const char* name :
         {"CPU", "CUDA", "Meta", "PrivateUse1", "AutogradCPU", "AutogradCUDA",
          "AutogradPrivateUse1", "ADInplaceOrView", "Python", "Conjugate"}) {
      v->push_back(parseDispatchKey(name));
    }
    return v;
  }();
  return *k;
}

// A boxed kernel: pops the arguments, pushes one value per return (the
// first tensor argument, or 0).
void boxedKernel(const OperatorHandle& op, Stack* stack) {
  const FunctionSchema& s = op.schema();
  const size_t n = s.arguments().size();
  TURNOUT_INTERNAL_ASSERT(stack->size() >= n, "stack too short");
  std::optional<IValue> tensor;
  for (size_t i = stack->size() - n; i < stack->size(); ++i) {
    if ((*stack)[i].isTensor() && !tensor) tensor = (*stack)[i];
  }
  stack->resize(stack->size() - n);
  for (size_t i = 0; i < s.returns().size(); ++i) {
    stack->push_back(tensor ? *tensor : IValue(int64_t{0}));
  }
}

enum class KernelKind : uint8_t { Boxed, Fallthrough, TypedTensor, TypedInt };

CppFunction makeKernel(KernelKind kind, const std::string& debug) {
  switch (kind) {
    case KernelKind::Boxed:
      return CppFunction::makeFromBoxedFunction(&boxedKernel).debug(debug);
    case KernelKind::Fallthrough:
      return CppFunction::makeFallthrough().debug(debug);
    case KernelKind::TypedTensor:
      return CppFunction([](const Tensor& x) -> Tensor { return x; })
          .debug(debug);
    case KernelKind::TypedInt:
      return CppFunction([](int64_t n) -> int64_t { return n; }).debug(debug);
  }
  return CppFunction::makeFallthrough();
}

// One registration, as data: replayable onto another namespace.
struct Reg {
  enum class What : uint8_t {
    Def,             // FRAGMENT def(schema)
    DefWithKernel,   // FRAGMENT def(schema, kernel): a def and an impl
    ImplAtLibKey,    // IMPL library of `key`, impl(name, kernel)
    ImplViaDispatch, // FRAGMENT library, impl(name, dispatch(key, kernel))
    ImplNoKey,       // FRAGMENT library, impl(name, kernel)
    Fallback,        // IMPL library of `key` in namespace _, fallback(kernel)
    DefLibrary,      // the namespace's one DEF library, empty
  };
  What what;
  size_t op = 0;
  int variant = 0;
  AliasAnalysisKind alias = AliasAnalysisKind::FROM_SCHEMA;
  std::vector<std::string> tags;
  DispatchKey key = DispatchKey::Undefined;
  KernelKind kernel = KernelKind::Boxed;
  std::string debug;

  // Registers this in namespace `ns`; the Library holds it.
  std::unique_ptr<Library> apply(const std::string& ns) const {
    const OpSpec& spec = kOps[op];
    std::string schema = std::string(spec.name) + spec.schemas[variant];
    std::unique_ptr<Library> lib;
    switch (what) {
      case What::Def:
        lib = std::make_unique<Library>(Library::FRAGMENT, ns, std::nullopt,
                                        kFile, kLine);
        lib->def(schema, alias, tags);
        break;
      case What::DefWithKernel:
        lib = std::make_unique<Library>(Library::FRAGMENT, ns, std::nullopt,
                                        kFile, kLine);
        lib->def(schema, makeKernel(kernel, debug));
        break;
      case What::ImplAtLibKey:
        lib = std::make_unique<Library>(Library::IMPL, ns, key, kFile, kLine);
        lib->impl(spec.name, makeKernel(kernel, debug));
        break;
      case What::ImplViaDispatch:
        lib = std::make_unique<Library>(Library::FRAGMENT, ns, std::nullopt,
                                        kFile, kLine);
        lib->impl(spec.name, dispatch(key, makeKernel(kernel, debug)));
        break;
      case What::ImplNoKey:
        lib = std::make_unique<Library>(Library::FRAGMENT, ns, std::nullopt,
                                        kFile, kLine);
        lib->impl(spec.name, makeKernel(kernel, debug));
        break;
      case What::Fallback:
        lib = std::make_unique<Library>(Library::IMPL, "_", key, kFile, kLine);
        lib->fallback(makeKernel(kernel, debug));
        break;
      case What::DefLibrary:
        lib = std::make_unique<Library>(Library::DEF, ns, std::nullopt, kFile,
                                        kLine);
        break;
    }
    return lib;
  }

  // The operator this touches (none for fallbacks and DEF libraries).
  std::optional<size_t> opIndex() const {
    if (what == What::Fallback || what == What::DefLibrary) return std::nullopt;
    return op;
  }
};

struct Live {
  Reg reg;
  std::unique_ptr<Library> lib;
};

// ---- Checks ---------------------------------------------------------------------

bool sameOperator(const OperatorRecord& a, const OperatorRecord& b) {
  return a.name == b.name && a.schema == b.schema && a.site == b.site &&
         a.alias_analysis == b.alias_analysis &&
         a.registered_keys == b.registered_keys && a.table == b.table;
}

// Equal snapshots (compared as values: writing JSON would cost most of the
// target's time).
bool sameRegistry(const RegistrySnapshot& a, const RegistrySnapshot& b) {
  if (a.operators.size() != b.operators.size()) return false;
  for (size_t i = 0; i < a.operators.size(); ++i) {
    if (!sameOperator(a.operators[i], b.operators[i])) return false;
  }
  return a.fallbacks == b.fallbacks;
}

std::string replaceAll(std::string s, std::string_view from,
                       std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

std::string stateOf(const std::string& qualified) {
  std::optional<OperatorHandle> op =
      Dispatcher::singleton().findOp(parseName(qualified));
  if (!op) return "(no operator)\n";
  return op->dumpState() + "---\n" + op->dumpComputedTable();
}

const char* kWhatNames[] = {"def",  "def+kernel", "impl@lib", "impl(dispatch)",
                            "impl", "fallback",   "DEF library"};
const char* kKernelNames[] = {"boxed", "fallthrough", "Tensor(Tensor)",
                              "int(int)"};

std::string describe(const Reg& r) {
  return std::string(kWhatNames[static_cast<int>(r.what)]) + " " +
         kOps[r.op].name + " variant " + std::to_string(r.variant) + " key " +
         toString(r.key) + " kernel " +
         kKernelNames[static_cast<int>(r.kernel)] + " " + r.debug;
}

std::string describe(const std::vector<Live>& live) {
  std::string out;
  for (const Live& l : live) out += "  " + describe(l.reg) + "\n";
  return out;
}

// TURNOUT_FUZZ_VERBOSE=1: print every step (to read a crash input).
bool verbose() {
  static const bool v = [] {
    const char* e = std::getenv("TURNOUT_FUZZ_VERBOSE");
    return e != nullptr && std::string_view(e) == "1";
  }();
  return v;
}

void checkRegistry(const std::vector<Live>& live, const char* after) {
  try {
    Dispatcher::singleton().checkInvariants();
  } catch (const Error& e) {
    FUZZ_CHECK(false, "after ", after,
               ": checkInvariants failed: ", e.message(), "\nlive:\n",
               describe(live));
  }
  for (size_t i = 0; i < kNumOps; ++i) {
    // The same registrations, replayed from scratch onto fzs::<op>.
    std::vector<std::unique_ptr<Library>> shadow;
    for (const Live& l : live) {
      if (l.reg.opIndex() != i) continue;
      try {
        shadow.push_back(l.reg.apply("fzs"));
      } catch (const Error& e) {
        FUZZ_CHECK(false, "after ", after, ": replaying the live ",
                   "registrations of fz::", kOps[i].name,
                   " from scratch fails: ", e.message(), "\nlive:\n",
                   describe(live));
      }
    }
    const std::string name = kOps[i].name;
    const std::string real = stateOf("fz::" + name);
    const std::string fresh =
        replaceAll(stateOf("fzs::" + name), "fzs::", "fz::");
    FUZZ_CHECK(real == fresh, "after ", after, ": fz::", name,
               " differs from its registrations replayed from scratch:\n",
               real, "\nreplayed:\n", fresh, "\nlive:\n", describe(live));
    while (!shadow.empty()) shadow.pop_back();  // newest first
  }
}

// ---- Steps ----------------------------------------------------------------------

Reg decodeRegistration(Bytes& in, int& next_id) {
  Reg r;
  const uint8_t what = in.next() % 10;
  r.op = in.pick(kNumOps);
  r.variant = (in.next() % 4 == 0) ? 1 : 0;
  r.key = keys()[in.pick(keys().size())];
  r.kernel = static_cast<KernelKind>(in.pick(4));
  r.debug = "k" + std::to_string(next_id++);
  switch (what) {
    case 0:
    case 1: {
      r.what = Reg::What::Def;
      const uint8_t flags = in.next();
      r.alias = flags & 1   ? AliasAnalysisKind::CONSERVATIVE
                : flags & 2 ? AliasAnalysisKind::PURE_FUNCTION
                            : AliasAnalysisKind::FROM_SCHEMA;
      if (flags & 4) r.tags.push_back("pointwise");
      if (flags & 8) r.tags.push_back("core");
      if (flags & 16) r.tags.push_back(flags & 32 ? "pointwise" : "bad tag");
      break;
    }
    case 2:
      r.what = Reg::What::DefWithKernel;
      break;
    case 3:
    case 4:
      r.what = Reg::What::ImplAtLibKey;
      break;
    case 5:
      r.what = Reg::What::ImplViaDispatch;
      break;
    case 6:
      r.what = Reg::What::ImplNoKey;
      break;
    case 7:
    case 8:
      r.what = Reg::What::Fallback;
      break;
    default:
      r.what = Reg::What::DefLibrary;
      break;
  }
  return r;
}

void callOperator(Bytes& in) {
  const OpSpec& spec = kOps[in.pick(kNumOps)];
  std::optional<OperatorHandle> op = Dispatcher::singleton().findSchema(
      parseName(std::string("fz::") + spec.name));
  if (!op) return;
  DispatchKeySet ks;
  const uint16_t mask = static_cast<uint16_t>(in.next() | (in.next() << 8));
  for (size_t i = 0; i < tensorKeys().size(); ++i) {
    if (mask & (1u << i)) ks = ks.add(tensorKeys()[i]);
  }
  if (verbose()) {
    std::fprintf(stderr, "call: %s with %s\n", toString(op->operator_name()).c_str(),
                 toString(ks).c_str());
  }
  Stack stack;
  for (const Argument& a : op->schema().arguments()) {
    if (a.type()->kind() == SchemaType::Kind::Tensor) {
      stack.push_back(IValue(detail::makeTensorWithKeySet(ks)));
    } else {
      stack.push_back(IValue(int64_t{1}));
    }
  }
  try {
    op->callBoxed(stack);
  } catch (const Error& e) {
    // A missing kernel, a fallthrough to nothing, a typed kernel of the
    // wrong type: errors are fine, as long as they say something.
    FUZZ_CHECK(!e.message().empty(), "a call threw an empty message");
    return;
  }
  FUZZ_CHECK(stack.size() == op->schema().returns().size(),
             "a call left ", stack.size(), " values for ",
             op->schema().returns().size(), " returns");
}

void run(Bytes& in) {
  static const RegistrySnapshot* baseline =
      new RegistrySnapshot(takeRegistrySnapshot());
  std::vector<Live> live;
  int next_id = 0;
  for (int step = 0; step < 48 && !in.empty(); ++step) {
    const uint8_t action = in.next() % 8;
    if (action < 5) {
      Reg r = decodeRegistration(in, next_id);
      if (verbose()) std::fprintf(stderr, "register: %s\n", describe(r).c_str());
      const RegistrySnapshot before = takeRegistrySnapshot();
      try {
        std::unique_ptr<Library> lib = r.apply("fz");
        live.push_back(Live{std::move(r), std::move(lib)});
      } catch (const Error& e) {
        if (verbose()) std::fprintf(stderr, "  refused: %s\n", e.what());
        FUZZ_CHECK(e.kind() != ErrorKind::Internal,
                   "a registration failed with an internal error: ",
                   e.message());
        FUZZ_CHECK(!e.message().empty(),
                   "a failed registration said nothing");
        const RegistrySnapshot after = takeRegistrySnapshot();
        FUZZ_CHECK(sameRegistry(before, after), "a failed registration (",
                   e.message(), ") changed the registry:\n",
                   diffSnapshots(before, after).toString());
      }
      checkRegistry(live, "a registration");
    } else if (action < 7) {
      if (live.empty()) continue;
      const size_t i = in.pick(live.size());
      if (verbose()) {
        std::fprintf(stderr, "drop: %s\n", describe(live[i].reg).c_str());
      }
      live.erase(live.begin() + static_cast<long>(i));
      checkRegistry(live, "a drop");
    } else {
      callOperator(in);
    }
  }
  while (!live.empty()) {
    live.erase(live.begin() + static_cast<long>(in.pick(live.size())));
    checkRegistry(live, "a final drop");
  }
  // Free the tables the steps retired now, in this input, rather than in a
  // later one: libFuzzer then sees every input free what it allocated and
  // need not look for leaks after each one (a leak check costs 4/5 of the
  // time).
  detail::Reclaimer::global().reclaim();
  detail::Reclaimer::global().reclaim();
  const RegistrySnapshot end = takeRegistrySnapshot();
  FUZZ_CHECK(sameRegistry(*baseline, end),
             "with every registration dropped, the registry differs from the "
             "one before:\n",
             diffSnapshots(*baseline, end).toString());
}

}  // namespace
}  // namespace fuzz
}  // namespace turnout

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace turnout::fuzz;
  setCurrentInput(std::string_view(reinterpret_cast<const char*>(data), size));
  Bytes in(data, size);
  run(in);
  return 0;
}
