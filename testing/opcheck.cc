#include "testing/opcheck.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "dispatcher/core/allocator.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/intrusive_ptr.h"
#include "dispatcher/core/tensor_impl.h"
#include "dispatcher/debug/explain.h"
#include "dispatcher/schema/default_ivalue.h"
#include "dispatcher/schema/function_schema.h"
#include "jit/runtime/graph_executor.h"
#include "jit/tracer/tracer.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/autograd/gradcheck.h"
#include "kernels/copy.h"
#include "kernels/factory.h"
#include "kernels/shape.h"

namespace turnout {
namespace testing {
namespace {

constexpr const char* kSchema = "test_schema";
constexpr const char* kFake = "test_faketensor";
constexpr const char* kAutograd = "test_autograd_registration";
constexpr const char* kGraph = "test_graph";

// A failed rule: the message of the test's result.
struct Failure {
  std::string message;
};

[[noreturn]] void fail(std::string message) { throw Failure{std::move(message)}; }

std::string join(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(v[i]);
  }
  return out + "]";
}
std::string join(IntArrayRef v) { return join(std::vector<int64_t>(v.begin(), v.end())); }

// ---- The schema's annotations, as written -----------------------------------

// The annotation that binds an argument or return: its own, or for a list
// (`Tensor(a!)[]`) its element's. Null when it has none.
const AliasInfo* aliasOf(const std::optional<AliasInfo>& info) {
  if (!info) return nullptr;
  if (!info->beforeSets().empty()) return &*info;
  if (!info->containedTypes().empty() &&
      !info->containedTypes()[0].beforeSets().empty()) {
    return &info->containedTypes()[0];
  }
  return nullptr;
}

bool isWrite(const std::optional<AliasInfo>& info) {
  const AliasInfo* a = aliasOf(info);
  return a != nullptr && a->isWrite();
}

bool isWildcard(const AliasInfo* a) {
  return a != nullptr && (a->isWildcardBefore() || a->isWildcardAfter());
}

// The type of `arg` as the schema writes it: "Tensor(a!)", "Tensor?[]".
std::string typeAsWritten(const Argument& arg) {
  std::string s = toString(arg);
  if (!arg.name().empty()) {
    const size_t at = s.rfind(" " + arg.name());
    if (at != std::string::npos) s.resize(at);
  }
  return s;
}

// The plain type with the annotation `annotation` ("(a!)") after "Tensor".
std::string typeWith(const Argument& arg, const std::string& annotation) {
  std::string s = arg.type()->toString();
  const size_t at = s.find("Tensor");
  if (at != std::string::npos) s.insert(at + 6, annotation);
  return s;
}

std::string setName(const AliasInfo* a) {
  return a != nullptr ? a->beforeSets()[0] : "a";
}

// "scale.out" for myops::scale.out.
std::string shortName(const OperatorHandle& op) {
  const std::string& n = op.operator_name().name;
  const size_t at = n.find("::");
  const std::string base = at == std::string::npos ? n : n.substr(at + 2);
  const std::string& o = op.operator_name().overload_name;
  return o.empty() ? base : base + "." + o;
}

std::string argName(const FunctionSchema& schema, size_t i) {
  return "argument '" + schema.arguments()[i].name() + "'";
}

std::string outputName(const FunctionSchema& schema, size_t k) {
  std::string s = "output " + std::to_string(k);
  if (k < schema.returns().size() && !schema.returns()[k].name().empty()) {
    s += " ('" + schema.returns()[k].name() + "')";
  }
  return s;
}

std::string returnType(const FunctionSchema& schema, size_t k) {
  return k < schema.returns().size() ? typeAsWritten(schema.returns()[k])
                                     : std::string("?");
}

// ---- Tensors inside arguments -----------------------------------------------

// The defined tensors an IValue holds (a Tensor, a Tensor[] or a Tensor?[]).
std::vector<Tensor> tensorsOf(const IValue& v) {
  std::vector<Tensor> out;
  if (v.isTensor()) {
    if (v.toTensor().defined()) out.push_back(v.toTensor());
  } else if (v.isTensorList()) {
    for (const Tensor& t : v.toTensorListRef()) {
      if (t.defined()) out.push_back(t);
    }
  } else if (v.isGenericList()) {
    for (const IValue& e : v.toListRef()) {
      for (Tensor& t : tensorsOf(e)) out.push_back(std::move(t));
    }
  }
  return out;
}

// `v` with every tensor in it replaced by f(tensor).
IValue mapTensors(const IValue& v, const std::function<Tensor(const Tensor&)>& f) {
  if (v.isTensor()) return IValue(f(v.toTensor()));
  if (v.isTensorList()) {
    std::vector<Tensor> out;
    for (const Tensor& t : v.toTensorListRef()) out.push_back(f(t));
    return IValue(std::move(out));
  }
  if (v.isGenericList()) {
    std::vector<IValue> out;
    for (const IValue& e : v.toListRef()) out.push_back(mapTensors(e, f));
    return IValue(std::move(out));
  }
  return v;
}

const StorageImpl* storageOf(const Tensor& t) {
  return t.has_storage() ? t.storage().unsafeGetStorageImpl() : nullptr;
}

// Copies of the arguments' tensors on the CPU or the Meta device: the same
// sizes, strides, storage offset and dtype over a copy of the storage, so
// that arguments that share memory share the copy too. A Meta copy reads no
// bytes, so it is made so from any device (CUDA too). A "CPU" copy of a
// CUDA tensor is made the same way on its own device (the real kernel runs
// where the caller's tensors are); one of a Meta tensor is a clone.
class Copier {
 public:
  explicit Copier(DeviceType target) : target_(target) {}

  Tensor copy(const Tensor& t) {
    if (!t.defined()) return t;
    const DeviceType from = t.device().type();
    const Device to = target_ == DeviceType::Meta ? Device(DeviceType::Meta)
                      : from == DeviceType::CUDA  ? t.device()
                                                  : Device(target_);
    const bool raw = from == DeviceType::CPU || from == DeviceType::Meta ||
                     from == DeviceType::CUDA || target_ == DeviceType::Meta;
    if (!raw || !t.has_storage() ||
        (target_ == DeviceType::CPU && from == DeviceType::Meta)) {
      autograd::NoGradGuard no_grad;
      return turnout::clone(turnout::detach(t));
    }
    Storage& s = storages_[storageOf(t)];
    if (!s.defined()) {
      const size_t nbytes = t.storage().nbytes();
      s = Storage::allocate(nbytes, getAllocator(to.type()), /*resizable=*/true);
      if (to.is_cpu() && nbytes > 0) {
        std::memcpy(s.mutable_data(), t.storage().data(), nbytes);
      } else if (to.is_cuda() && nbytes > 0) {
        autograd::NoGradGuard no_grad;
        bytesOf(s, to).copy_(bytesOf(t.storage(), to));
      }
    }
    Tensor out(make_intrusive<TensorImpl>(s, t.scalar_type(), to));
    out.unsafeGetTensorImpl()->set_sizes_and_strides(t.sizes(), t.strides());
    out.unsafeGetTensorImpl()->set_storage_offset(t.storage_offset());
    return out;
  }

  Stack copy(const Stack& args) {
    Stack out;
    out.reserve(args.size());
    for (const IValue& v : args) {
      out.push_back(mapTensors(v, [this](const Tensor& t) { return copy(t); }));
    }
    return out;
  }

 private:
  // A storage's bytes as a 1-d Byte tensor on `device`.
  static Tensor bytesOf(const Storage& storage, Device device) {
    Tensor b(make_intrusive<TensorImpl>(storage, ScalarType::Byte, device));
    b.unsafeGetTensorImpl()->set_sizes_contiguous(
        {static_cast<int64_t>(storage.nbytes())});
    return b;
  }

  DeviceType target_;
  std::map<const StorageImpl*, Storage> storages_;
};

Stack copyArgs(const Stack& args, DeviceType target = DeviceType::CPU) {
  return Copier(target).copy(args);
}

// The bytes of every element of a CPU (or CUDA) tensor, in row-major order.
std::string elementBytes(const Tensor& t) {
  std::string out;
  if (t.is_cuda()) return elementBytes(turnout::to(t, Device(DeviceType::CPU)));
  if (!t.is_cpu() || t.numel() == 0) return out;
  const size_t item = t.itemsize();
  out.reserve(static_cast<size_t>(t.numel()) * item);
  const char* base = static_cast<const char*>(t.data_ptr());
  for (int64_t flat = 0; flat < t.numel(); ++flat) {
    int64_t rest = flat, off = 0;
    for (int64_t d = t.dim() - 1; d >= 0; --d) {
      off += (rest % t.size(d)) * t.stride(d);
      rest /= t.size(d);
    }
    out.append(base + off * static_cast<int64_t>(item), item);
  }
  return out;
}

// The elements as double (CPU tensors), for messages and comparisons.
std::vector<double> valuesOf(const Tensor& t) {
  autograd::NoGradGuard no_grad;
  AutoDispatchBelowAutograd below;
  Tensor d = turnout::contiguous(turnout::to(turnout::detach(t), kDouble));
  if (d.is_cuda()) d = turnout::to(d, Device(DeviceType::CPU));
  const double* p = d.numel() ? d.data_ptr<double>() : nullptr;
  return std::vector<double>(p, p + d.numel());
}

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// What a tensor argument looked like before the call.
struct Snapshot {
  std::vector<int64_t> sizes, strides;
  int64_t offset;
  ScalarType dtype;
  const StorageImpl* storage;
  std::string bytes;

  explicit Snapshot(const Tensor& t)
      : sizes(t.sizes().begin(), t.sizes().end()),
        strides(t.strides().begin(), t.strides().end()),
        offset(t.storage_offset()),
        dtype(t.scalar_type()),
        storage(storageOf(t)),
        bytes(elementBytes(t)) {}

  // How `t` differs from the snapshot, or "" when it does not.
  std::string changeIn(const Tensor& t) const {
    if (t.scalar_type() != dtype) {
      return std::string("its dtype changed from ") + toString(dtype) + " to " +
             toString(t.scalar_type());
    }
    if (t.sizes() != IntArrayRef(sizes)) {
      return "its sizes changed from " + join(sizes) + " to " + join(t.sizes());
    }
    if (t.strides() != IntArrayRef(strides)) {
      return "its strides changed from " + join(strides) + " to " +
             join(t.strides());
    }
    if (t.storage_offset() != offset) {
      return "its storage offset changed from " + std::to_string(offset) +
             " to " + std::to_string(t.storage_offset());
    }
    if (storageOf(t) != storage) return "its storage was replaced";
    const std::string now = elementBytes(t);
    if (now == bytes) return "";
    const size_t item = t.itemsize();
    size_t first = 0;
    while (first < now.size() && now[first] == bytes[first]) ++first;
    const size_t element = first / item;
    std::string was, is;
    if (!t.is_meta()) {
      // The old value, decoded from the snapshot's bytes.
      Tensor old = turnout::empty({1}, TensorOptions(dtype));
      std::memcpy(old.data_ptr(), bytes.data() + element * item, item);
      was = number(valuesOf(old)[0]);
      is = number(valuesOf(t)[element]);
    }
    return "its values changed (element " + std::to_string(element) + " was " +
           was + ", is " + is + ")";
  }
};

// ---- Running the operator -----------------------------------------------------

// Runs `op` on `args` (consumed); returns the outputs.
Stack run(const OperatorHandle& op, Stack args) {
  op.callBoxed(args);
  return args;
}

std::string describeError(const std::exception& e) {
  if (const auto* err = dynamic_cast<const Error*>(&e)) {
    return std::string(toString(err->kind())) + ": " + err->what();
  }
  return e.what();
}

// One tensor output: (output index, tensor); lists are flattened.
struct Output {
  size_t index;
  Tensor tensor;
};
std::vector<Output> tensorOutputs(const Stack& outs) {
  std::vector<Output> out;
  for (size_t k = 0; k < outs.size(); ++k) {
    for (Tensor& t : tensorsOf(outs[k])) out.push_back({k, std::move(t)});
  }
  return out;
}

// The argument (schema position) whose tensors share storage with `t`, and
// whether `t` is one of them; nullopt when none does.
struct AliasTarget {
  size_t arg;
  bool same;
};
std::optional<AliasTarget> aliasTarget(const Tensor& t, const Stack& args) {
  const StorageImpl* s = storageOf(t);
  for (size_t i = 0; i < args.size(); ++i) {
    for (const Tensor& a : tensorsOf(args[i])) {
      if (a.is_same(t)) return AliasTarget{i, true};
    }
  }
  if (s == nullptr) return std::nullopt;
  for (size_t i = 0; i < args.size(); ++i) {
    for (const Tensor& a : tensorsOf(args[i])) {
      if (storageOf(a) == s) return AliasTarget{i, false};
    }
  }
  return std::nullopt;
}

// ---- test_schema ----------------------------------------------------------------

void testSchema(const OperatorHandle& op, const Stack& args) {
  const FunctionSchema& schema = op.schema();
  Stack copies = copyArgs(args);
  std::vector<std::vector<Snapshot>> before(copies.size());
  for (size_t i = 0; i < copies.size(); ++i) {
    for (const Tensor& t : tensorsOf(copies[i])) before[i].emplace_back(t);
  }
  // Storages a mutable argument writes: arguments sharing them may change.
  std::set<const StorageImpl*> written;
  for (size_t i = 0; i < copies.size(); ++i) {
    if (!isWrite(schema.arguments()[i].alias_info())) continue;
    for (const Tensor& t : tensorsOf(copies[i])) written.insert(storageOf(t));
  }
  // A CompositeImplicitAutograd kernel's `Tensor(a)` output may alias
  // (contiguous, reshape, to: a view when they can, a new tensor when not).
  bool may_alias = false;
  {
    const DispatchExplanation e = explain(op, copies);
    may_alias = e.entry.kind == EntryKind::MathKernel;
    for (const ExplainedEntry& entry : e.redispatch_chain) {
      may_alias = may_alias || entry.kind == EntryKind::MathKernel;
    }
  }
  Stack outs;
  try {
    outs = run(op, copies);
  } catch (const std::exception& e) {
    fail("the operator raised on the sample arguments: " + describeError(e));
  }
  // Arguments not marked mutable are left as they were.
  for (size_t i = 0; i < copies.size(); ++i) {
    const Argument& arg = schema.arguments()[i];
    if (isWrite(arg.alias_info())) continue;
    const std::vector<Tensor> now = tensorsOf(copies[i]);
    for (size_t e = 0; e < now.size() && e < before[i].size(); ++e) {
      if (written.count(before[i][e].storage) &&
          !(before[i][e].dtype != now[e].scalar_type() ||
            now[e].sizes() != IntArrayRef(before[i][e].sizes))) {
        continue;  // shares memory with an argument written in place
      }
      const std::string change = before[i][e].changeIn(now[e]);
      if (change.empty()) continue;
      const AliasInfo* a = aliasOf(arg.alias_info());
      fail(argName(schema, i) + (now.size() > 1 ? " (element " +
                                                      std::to_string(e) + ")"
                                                : "") +
           " was mutated (" + change + ") but its schema type is '" +
           typeAsWritten(arg) + "', not '" +
           typeWith(arg, "(" + setName(a) + "!)") +
           "': mark it mutable in the schema, or write into a new tensor");
    }
  }
  // Outputs alias what their annotations say, and nothing else.
  for (const Output& o : tensorOutputs(outs)) {
    const Argument* ret =
        o.index < schema.returns().size() ? &schema.returns()[o.index] : nullptr;
    if (ret == nullptr) continue;  // a vararg return: nothing declared
    const AliasInfo* ra = aliasOf(ret->alias_info());
    if (isWildcard(ra)) continue;
    const std::optional<AliasTarget> target = aliasTarget(o.tensor, copies);
    if (ra == nullptr) {
      if (!target) continue;
      const Argument& arg = schema.arguments()[target->arg];
      fail(outputName(schema, o.index) + " aliases " +
           argName(schema, target->arg) +
           (target->same ? " (it is that tensor)" : " (they share storage)") +
           " but its schema type is '" + returnType(schema, o.index) +
           "', not '" + typeWith(*ret, "(a)") +
           "': return a new tensor (e.g. clone()), or annotate the alias in "
           "the schema ('" + typeWith(arg, "(a)") + " " + arg.name() +
           "' and '-> " + typeWith(*ret, "(a)") + "')");
    }
    // The arguments the annotation names.
    std::vector<size_t> named;
    for (size_t i = 0; i < schema.arguments().size(); ++i) {
      const AliasInfo* aa = aliasOf(schema.arguments()[i].alias_info());
      if (aa == nullptr) continue;
      for (const std::string& set : ra->beforeSets()) {
        for (const std::string& s : aa->beforeSets()) {
          if (s == set) named.push_back(i);
        }
      }
    }
    if (named.empty()) continue;  // an alias of another output: not checked
    const Argument& arg = schema.arguments()[named[0]];
    const std::string declared = "'" + typeAsWritten(arg) + " " + arg.name() +
                                 "' -> '" + returnType(schema, o.index) + "'";
    bool hits_named = false, same = false;
    for (size_t i : named) {
      if (target && target->arg == i) {
        hits_named = true;
        same = target->same;
      }
    }
    if (ra->isWrite()) {
      if (same) continue;
      fail(outputName(schema, o.index) + " must be " +
           argName(schema, named[0]) +
           " itself, written in place (schema " + declared + "), but " +
           (hits_named ? "is a different tensor that shares its storage (a "
                         "view): return the argument"
                       : "is a new tensor: write into the argument and return "
                         "it"));
    }
    if (!hits_named && !may_alias) {
      fail(outputName(schema, o.index) +
           " is declared as an alias of " + argName(schema, named[0]) +
           " (schema " + declared + ") but is not a view of it: it shares no "
           "storage with it. Return a view of '" + arg.name() +
           "', or drop the annotation ('-> " + typeWith(*ret, "") +
           "') if the output is a new tensor");
    }
  }
}

// ---- test_faketensor --------------------------------------------------------------

// A refusal of the arguments, which the Meta kernel must repeat: every
// error but turnout's NotImplemented and Internal ones (a missing kernel, a
// bug). A Python kernel's exception counts.
bool isShapeError(const std::exception& e) {
  const auto* err = dynamic_cast<const Error*>(&e);
  return err == nullptr || (err->kind() != ErrorKind::NotImplemented &&
                            err->kind() != ErrorKind::Internal);
}

void testFakeTensor(const OperatorHandle& op, const Stack& args) {
  const FunctionSchema& schema = op.schema();
  const std::string name = toString(op.operator_name());
  if (!op.hasComputedKernelForDispatchKey(DispatchKey::Meta)) {
    fail("operator " + name + " has no Meta kernel (its dispatch table has "
         "no entry for Meta), so shape propagation and meta tensors cannot "
         "run it: register one (C++: TURNOUT_LIBRARY_IMPL(" +
         std::string(op.operator_name().getNamespace()) +
         ", Meta, m) { m.impl(\"" + shortName(op) +
         "\", ...); }; Python: turnout.library.register_fake), or make the "
         "kernel CompositeImplicitAutograd");
  }
  Stack real_args = copyArgs(args, DeviceType::CPU);
  Stack meta_args = copyArgs(args, DeviceType::Meta);
  // A Device argument says where the outputs go (a factory, a to(device)):
  // the meta run asks for meta, as FakeTensorMode would.
  for (size_t i = 0; i < schema.arguments().size() && i < meta_args.size(); ++i) {
    const SchemaType* type = schema.arguments()[i].type().get();
    if (type->kind() == SchemaType::Kind::Optional) {
      type = type->containedTypes()[0].get();
    }
    if (type->kind() == SchemaType::Kind::Device &&
        (meta_args[i].isNone() || meta_args[i].isDevice())) {
      meta_args[i] = IValue(Device(DeviceType::Meta));
    }
  }
  Stack real_outs, meta_outs;
  std::optional<std::string> real_error, meta_error;
  bool real_shape_error = false;
  try {
    real_outs = run(op, real_args);
  } catch (const std::exception& e) {
    real_error = describeError(e);
    real_shape_error = isShapeError(e);
  }
  try {
    meta_outs = run(op, meta_args);
  } catch (const std::exception& e) {
    meta_error = describeError(e);
  }
  if (real_error) {
    if (!real_shape_error) {
      fail("the operator raised on the sample arguments: " + *real_error);
    }
    if (!meta_error) {
      fail("the real kernel raised (" + *real_error +
           ") but the Meta kernel did not: it must check the same sizes and "
           "dtypes and raise the same error");
    }
    return;
  }
  if (meta_error) {
    fail("the Meta kernel raised (" + *meta_error +
         ") where the real kernel succeeded");
  }
  const std::vector<Output> real = tensorOutputs(real_outs);
  const std::vector<Output> meta = tensorOutputs(meta_outs);
  if (real.size() != meta.size()) {
    fail("the Meta kernel returned " + std::to_string(meta.size()) +
         " tensor(s) but the real kernel " + std::to_string(real.size()));
  }
  for (size_t n = 0; n < real.size(); ++n) {
    const Tensor& r = real[n].tensor;
    const Tensor& m = meta[n].tensor;
    const std::string what = outputName(schema, real[n].index);
    if (!m.is_meta()) {
      fail(what + " of the Meta kernel is on " + m.device().str() +
           ", not meta: a Meta kernel returns meta tensors");
    }
    if (r.scalar_type() != m.scalar_type()) {
      fail(what + ": the Meta kernel gives dtype " +
           toString(m.scalar_type()) + " but the real kernel " +
           toString(r.scalar_type()));
    }
    if (r.sizes() != m.sizes()) {
      fail(what + ": the Meta kernel gives sizes " + join(m.sizes()) +
           " but the real kernel " + join(r.sizes()));
    }
    bool strides_agree = true;
    if (r.numel() > 0) {
      for (int64_t d = 0; d < r.dim(); ++d) {
        if (r.size(d) > 1 && r.stride(d) != m.stride(d)) strides_agree = false;
      }
    }
    if (!strides_agree) {
      fail(what + ": the Meta kernel gives strides " + join(m.strides()) +
           " but the real kernel " + join(r.strides()) + " (sizes " +
           join(r.sizes()) + ")");
    }
    const std::optional<AliasTarget> ra = aliasTarget(r, real_args);
    const std::optional<AliasTarget> ma = aliasTarget(m, meta_args);
    auto describe = [&](const std::optional<AliasTarget>& a) {
      if (!a) return std::string("a new tensor");
      return (a->same ? std::string("") : std::string("a view of ")) +
             argName(schema, a->arg) + (a->same ? " itself" : "");
    };
    if (ra.has_value() != ma.has_value() ||
        (ra && (ra->arg != ma->arg || ra->same != ma->same))) {
      fail(what + ": the real kernel returns " + describe(ra) +
           " but the Meta kernel " + describe(ma));
    }
    if (ra && !ra->same && r.storage_offset() != m.storage_offset()) {
      fail(what + ": the Meta kernel's view starts at storage offset " +
           std::to_string(m.storage_offset()) + " but the real kernel's at " +
           std::to_string(r.storage_offset()));
    }
  }
}

// ---- test_autograd_registration ---------------------------------------------------

bool isAutogradKey(DispatchKey k) {
  return toFunctionalityKey(k) == DispatchKey::AutogradFunctionality ||
         k == DispatchKey::AutogradOther ||
         k == DispatchKey::AutogradNestedTensor;
}

// Positions of the arguments whose floating-point tensors may require grad:
// a Tensor, or a list of them; never an out= argument.
std::vector<size_t> differentiableArgs(const FunctionSchema& schema,
                                       const Stack& args) {
  std::vector<size_t> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (schema.arguments()[i].is_out()) continue;
    for (const Tensor& t : tensorsOf(args[i])) {
      if (isFloatingType(t.scalar_type()) && (t.is_cpu() || t.is_cuda())) {
        out.push_back(i);
        break;
      }
    }
  }
  return out;
}

std::string names(const FunctionSchema& schema, const std::vector<size_t>& is) {
  std::string out;
  for (size_t n = 0; n < is.size(); ++n) {
    out += (n ? ", '" : "'") + schema.arguments()[is[n]].name() + "'";
  }
  return out;
}

void testAutogradRegistration(const OperatorHandle& op, const Stack& args,
                              const OpCheckOptions& options) {
  const FunctionSchema& schema = op.schema();
  const std::string name = toString(op.operator_name());
  for (const Argument& a : schema.arguments()) {
    if (a.is_out()) return;  // out= variants are not differentiable
  }
  const std::vector<size_t> diff = differentiableArgs(schema, args);
  if (diff.empty()) return;  // nothing can require grad
  Stack plain_outs;
  try {
    autograd::NoGradGuard no_grad;
    plain_outs = run(op, copyArgs(args));
  } catch (const std::exception& e) {
    fail("the operator raised on the sample arguments: " + describeError(e));
  }
  bool floating_output = false;
  for (const Output& o : tensorOutputs(plain_outs)) {
    if (isFloatingType(o.tensor.scalar_type())) floating_output = true;
  }
  if (!floating_output) return;  // not differentiable: no floating output
  // Declared not differentiable: a fallthrough registered for the operator
  // at the Autograd key (autograd does nothing for it, on purpose).
  if ((op.hasKernelForDispatchKey(DispatchKey::Autograd) ||
       op.hasKernelForDispatchKey(DispatchKey::AutogradCPU)) &&
      op.isKernelFallthroughKernel(DispatchKey::AutogradCPU)) {
    return;
  }

  // The floating arguments require grad (non-leaves, so that in-place
  // kernels may write them); where does the call go?
  Stack grad_args = copyArgs(args);
  for (size_t i : diff) {
    grad_args[i] = mapTensors(grad_args[i], [](const Tensor& t) {
      if (!t.defined() || !isFloatingType(t.scalar_type())) return t;
      autograd::setRequiresGrad(t, true);
      return turnout::clone(t);
    });
  }
  const DispatchExplanation e = explain(op, grad_args);
  std::vector<ExplainedEntry> chain{e.entry};
  chain.insert(chain.end(), e.redispatch_chain.begin(),
               e.redispatch_chain.end());
  const ExplainedEntry* reached = nullptr;
  for (const ExplainedEntry& entry : chain) {
    if (isAutogradKey(entry.key)) {
      reached = &entry;
      break;
    }
  }
  const bool has_kernel =
      reached != nullptr && !reached->fallthrough &&
      (reached->kind == EntryKind::Kernel ||
       reached->kind == EntryKind::AutogradKernel ||
       reached->kind == EntryKind::MathKernel);
  if (!has_kernel) {
    std::string where;
    if (reached != nullptr) {
      where = std::string(toString(reached->key)) + " resolves to " +
              toString(reached->kind) +
              (reached->fallthrough ? " (a fallthrough)" : "") +
              (reached->site.empty() ? "" : " " + reached->site);
    } else {
      std::string autograd_key = "the autograd key";
      for (DispatchKey k : e.skipped) {
        if (isAutogradKey(k)) autograd_key = toString(k);
      }
      where = "the call skips " + autograd_key + " and goes to " +
              std::string(toString(e.entry.key)) +
              (e.entry.site.empty() ? "" : ", " + e.entry.site);
    }
    fail("operator " + name + " returns floating-point tensors and its "
         "arguments " + names(schema, diff) + " may require grad, but it has "
         "no autograd kernel (" + where + "): no gradient would reach those "
         "arguments. Register an autograd kernel (C++: TURNOUT_LIBRARY_IMPL(" +
         std::string(op.operator_name().getNamespace()) +
         ", Autograd, m); Python: turnout.library.register_autograd), or make "
         "the kernel CompositeImplicitAutograd; if it is not differentiable, "
         "say so with a fallthrough kernel at the Autograd key (C++: "
         "CppFunction::makeFallthrough(); Python: "
         "turnout.library.fallthrough_kernel)");
  }

  // gradcheck, in double where the kernel takes it.
  std::vector<size_t> positions;  // argument of each gradcheck input
  std::vector<size_t> elements;   // element within that argument
  for (size_t i : diff) {
    const std::vector<Tensor> ts = tensorsOf(args[i]);
    for (size_t el = 0; el < ts.size(); ++el) {
      if (isFloatingType(ts[el].scalar_type())) {
        positions.push_back(i);
        elements.push_back(el);
      }
    }
  }
  auto attempt = [&](bool in_double, autograd::GradcheckOptions gc) {
    Stack base = copyArgs(args);
    std::vector<Tensor> inputs;
    for (size_t n = 0; n < positions.size(); ++n) {
      Tensor t = tensorsOf(base[positions[n]])[elements[n]];
      autograd::NoGradGuard no_grad;
      t = in_double ? turnout::to(t, kDouble, false, /*copy=*/true)
                    : turnout::clone(t);
      autograd::setRequiresGrad(t, true);
      inputs.push_back(t);
    }
    autograd::GradcheckFunction fn =
        [&, base](const std::vector<Tensor>& leaves) {
          Stack stack = base;
          std::vector<Tensor> written;
          size_t n = 0;
          for (size_t i : diff) {
            stack[i] = mapTensors(stack[i], [&](const Tensor& t) {
              if (!t.defined() || !isFloatingType(t.scalar_type())) return t;
              Tensor c = turnout::clone(leaves[n++]);  // writable, recorded
              if (isWrite(schema.arguments()[i].alias_info())) {
                written.push_back(c);
              }
              return c;
            });
          }
          Stack outs = run(op, std::move(stack));
          std::vector<Tensor> result;
          for (const Output& o : tensorOutputs(outs)) result.push_back(o.tensor);
          for (const Tensor& w : written) result.push_back(w);
          return result;
        };
    gc.raise_exception = false;
    fn(inputs);  // throws where the kernel does not take these dtypes
    return autograd::gradcheck(fn, inputs, gc);
  };
  autograd::GradcheckOptions gc;
  gc.eps = options.eps;
  gc.atol = options.atol;
  gc.rtol = options.rtol;
  autograd::GradcheckResult result;
  std::string precision = "double";
  try {
    result = attempt(true, gc);
  } catch (const std::exception& first) {
    autograd::GradcheckOptions loose;
    loose.eps = 1e-3;
    loose.atol = 1e-2;
    loose.rtol = 1e-2;
    precision = "the arguments' own dtype (the kernel raised in double: " +
                describeError(first) + ")";
    try {
      result = attempt(false, loose);
    } catch (const std::exception& e) {
      fail("gradcheck could not run the operator with arguments that "
           "require grad: " + describeError(e));
    }
  }
  if (!result.ok) {
    std::string inputs;
    for (size_t n = 0; n < positions.size(); ++n) {
      inputs += (n ? ", " : "") + std::to_string(n) + " is '" +
                schema.arguments()[positions[n]].name() + "'" +
                (tensorsOf(args[positions[n]]).size() > 1
                     ? "[" + std::to_string(elements[n]) + "]"
                     : "");
    }
    fail("the gradients of " + name + " disagree with finite differences "
         "(gradcheck in " + precision + "; input " + inputs + "): " +
         result.message);
  }
}

// ---- test_graph -----------------------------------------------------------------

bool sameValues(const Tensor& a, const Tensor& b) {
  if (a.is_meta() || b.is_meta()) return true;  // meta: nothing to compare
  const std::vector<double> x = valuesOf(a), y = valuesOf(b);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) && std::isnan(y[i])) continue;
    if (x[i] == y[i]) continue;  // infinities too: inf - inf is nan
    if (!(std::fabs(x[i] - y[i]) <= 1e-9 + 1e-6 * std::fabs(y[i]))) return false;
  }
  return true;
}

void testGraph(const OperatorHandle& op, const Stack& args) {
  const FunctionSchema& schema = op.schema();
  // The defined Tensor arguments are the graph's inputs; the rest are
  // constants of the trace.
  std::vector<size_t> inputs_at;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].isTensor() && args[i].toTensor().defined()) inputs_at.push_back(i);
  }
  auto inputsOf = [&](const Stack& s) {
    std::vector<IValue> in;
    for (size_t i : inputs_at) in.push_back(s[i]);
    return in;
  };
  Stack eager_args = copyArgs(args);
  Stack eager_outs;
  try {
    eager_outs = run(op, eager_args);
  } catch (const std::exception& e) {
    fail("the operator raised on the sample arguments: " + describeError(e));
  }
  const Stack trace_args = copyArgs(args);
  std::unique_ptr<jit::Graph> graph;
  try {
    graph = jit::trace(
        [&](const std::vector<IValue>& in) {
          Stack stack = trace_args;
          for (size_t n = 0; n < inputs_at.size(); ++n) stack[inputs_at[n]] = in[n];
          return run(op, std::move(stack));
        },
        inputsOf(copyArgs(args)));
  } catch (const std::exception& e) {
    fail("tracing the operator failed: " + describeError(e));
  }
  jit::GraphExecutorOptions gopts;
  gopts.specialize_sizes = true;
  Stack graph_args = copyArgs(args);
  Stack stack = inputsOf(graph_args);
  std::shared_ptr<const jit::Graph> plan_graph;
  try {
    jit::GraphExecutor executor(*graph, gopts);
    plan_graph = executor.getPlanFor(stack).graph;
    executor.run(stack);
  } catch (const std::exception& e) {
    fail("the graph executor failed to run the traced graph: " +
         describeError(e) + "\ngraph:\n" + graph->toString());
  }
  const std::string where = "\ngraph:\n" + plan_graph->toString();
  if (stack.size() != eager_outs.size()) {
    fail("the traced graph returns " + std::to_string(stack.size()) +
         " value(s) but the operator " + std::to_string(eager_outs.size()) +
         where);
  }
  for (size_t k = 0; k < stack.size(); ++k) {
    const std::vector<Tensor> g = tensorsOf(stack[k]);
    const std::vector<Tensor> e = tensorsOf(eager_outs[k]);
    const std::string what = outputName(schema, k);
    if (g.size() != e.size() || (g.empty() && !(stack[k] == eager_outs[k]))) {
      fail(what + " of the graph differs from the eager one" + where);
    }
    for (size_t n = 0; n < g.size(); ++n) {
      if (g[n].sizes() != e[n].sizes() ||
          g[n].scalar_type() != e[n].scalar_type()) {
        fail(what + ": the graph gives a " + toString(g[n].scalar_type()) +
             " tensor of sizes " + join(g[n].sizes()) + " but eager gives " +
             toString(e[n].scalar_type()) + " " + join(e[n].sizes()) + where);
      }
      if (!sameValues(g[n], e[n])) {
        fail(what + ": the graph's values differ from the eager ones" + where);
      }
    }
    // What shape propagation inferred, where it inferred it.
    if (k < plan_graph->outputs().size() && e.size() == 1) {
      const jit::TensorRefinement* r =
          plan_graph->outputs()[k]->type().refinement();
      if (r != nullptr && r->dtype && *r->dtype != e[0].scalar_type()) {
        fail(what + ": shape propagation typed it " + toString(*r->dtype) +
             " but the operator returns " + toString(e[0].scalar_type()) +
             where);
      }
      if (r != nullptr && r->sizes) {
        bool agree = r->sizes->size() == static_cast<size_t>(e[0].dim());
        for (size_t d = 0; agree && d < r->sizes->size(); ++d) {
          const auto& s = (*r->sizes)[d];
          if (s && *s != e[0].size(static_cast<int64_t>(d))) agree = false;
        }
        if (!agree) {
          fail(what + ": shape propagation typed it " +
               plan_graph->outputs()[k]->type().toString() +
               " but the operator returns sizes " + join(e[0].sizes()) + where);
        }
      }
    }
  }
  // Mutated arguments: the graph's writes match eager's.
  for (size_t n = 0; n < inputs_at.size(); ++n) {
    const size_t i = inputs_at[n];
    if (!isWrite(schema.arguments()[i].alias_info())) continue;
    if (!sameValues(graph_args[i].toTensor(), eager_args[i].toTensor())) {
      fail(argName(schema, i) + " (" + typeAsWritten(schema.arguments()[i]) +
           ") holds different values after the graph ran than after the "
           "eager call" + where);
    }
  }
}

// ---- Arguments ------------------------------------------------------------------

Stack bindArgs(const OperatorHandle& op, const Stack& args,
               const std::vector<std::pair<std::string, IValue>>& kwargs) {
  const FunctionSchema& schema = op.schema();
  const std::string name = toString(op.operator_name());
  const auto& params = schema.arguments();
  TURNOUT_CHECK(args.size() <= params.size(), ErrorKind::InvalidArgument,
                "opcheck(", name, "): ", args.size(),
                " arguments given but the schema takes ", params.size(), ": ",
                toString(schema));
  Stack out(args.begin(), args.end());
  std::vector<bool> given(params.size(), false);
  for (size_t i = 0; i < args.size(); ++i) given[i] = true;
  std::vector<std::optional<IValue>> named(params.size());
  for (const auto& [key, value] : kwargs) {
    const std::optional<size_t> at = schema.argumentIndexWithName(key);
    TURNOUT_CHECK(at.has_value(), ErrorKind::InvalidArgument, "opcheck(",
                  name, "): no argument named '", key, "' in ",
                  toString(schema));
    TURNOUT_CHECK(!given[*at] && !named[*at], ErrorKind::InvalidArgument,
                  "opcheck(", name, "): argument '", key,
                  "' given twice (by position and by name)");
    named[*at] = value;
  }
  for (size_t i = args.size(); i < params.size(); ++i) {
    if (named[i]) {
      out.push_back(*named[i]);
    } else {
      TURNOUT_CHECK(params[i].default_value().has_value(),
                    ErrorKind::InvalidArgument, "opcheck(", name,
                    "): missing argument '", params[i].name(), "' (position ",
                    i + 1, ") of ", toString(schema));
      out.push_back(defaultToIValue(params[i]));
    }
  }
  return out;
}

}  // namespace

const std::vector<std::string>& opcheckTestNames() {
  static const std::vector<std::string> kNames{kSchema, kAutograd, kFake,
                                               kGraph};
  return kNames;
}

bool OpCheckReport::ok() const { return firstFailure() == nullptr; }

const OpCheckResult* OpCheckReport::firstFailure() const {
  for (const OpCheckResult& r : results) {
    if (!r.ok) return &r;
  }
  return nullptr;
}

const OpCheckResult* OpCheckReport::find(const std::string& test) const {
  for (const OpCheckResult& r : results) {
    if (r.test == test) return &r;
  }
  return nullptr;
}

std::string OpCheckReport::toString() const {
  size_t passed = 0;
  for (const OpCheckResult& r : results) passed += r.ok ? 1 : 0;
  std::string out = "opcheck " + op + ": " + std::to_string(passed) + " of " +
                    std::to_string(results.size()) + " tests passed";
  for (const OpCheckResult& r : results) {
    out += "\n  " + r.test + ": " + (r.ok ? "SUCCESS" : r.message);
  }
  return out;
}

OpCheckReport opcheck(const OperatorHandle& op, const Stack& args,
                      const OpCheckOptions& options) {
  return opcheck(op, args, {}, options);
}

OpCheckReport opcheck(const OperatorHandle& op, const Stack& args,
                      const std::vector<std::pair<std::string, IValue>>& kwargs,
                      const OpCheckOptions& options) {
  TURNOUT_CHECK(op.hasSchema(), ErrorKind::InvalidArgument, "opcheck(",
                toString(op.operator_name()),
                "): the operator has no schema; define it first");
  const std::string name = toString(op.operator_name());
  std::set<std::string> seen;
  for (const std::string& t : options.tests) {
    bool known = false;
    for (const std::string& k : opcheckTestNames()) known = known || k == t;
    TURNOUT_CHECK(known, ErrorKind::InvalidArgument, "opcheck(", name,
                  "): unknown test '", t, "'; the tests are test_schema, "
                  "test_autograd_registration, test_faketensor, test_graph");
    TURNOUT_CHECK(seen.insert(t).second, ErrorKind::InvalidArgument,
                  "opcheck(", name, "): test '", t, "' named twice");
  }
  const Stack bound = bindArgs(op, args, kwargs);
  OpCheckReport report;
  report.op = name;
  for (const std::string& test : options.tests) {
    OpCheckResult r;
    r.test = test;
    try {
      if (test == kSchema) {
        testSchema(op, bound);
      } else if (test == kFake) {
        testFakeTensor(op, bound);
      } else if (test == kAutograd) {
        testAutogradRegistration(op, bound, options);
      } else {
        testGraph(op, bound);
      }
    } catch (const Failure& f) {
      r.ok = false;
      r.message = f.message;
    } catch (const std::exception& e) {
      r.ok = false;
      r.message = "the check itself failed: " + describeError(e);
    }
    report.results.push_back(std::move(r));
  }
  return report;
}

}  // namespace testing
}  // namespace turnout
