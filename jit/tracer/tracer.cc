#include "jit/tracer/tracer.h"

#include <functional>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "dispatcher/core/error.h"
#include "dispatcher/core/thread_local.h"
#include "dispatcher/library.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "dispatcher/operator_handle.h"

namespace turnout {
namespace jit {
namespace {

// What one trace() knows: the graph so far and, for every tensor it has
// seen, the Value standing for it. The map keeps each tensor alive until
// the trace ends, so that a freed tensor's address cannot be reused by a
// new tensor and be mistaken for it.
struct TracingState {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  struct Seen {
    Value* value;
    Tensor keep_alive;
  };
  std::unordered_map<const TensorImpl*, Seen> values;

  void bind(const Tensor& t, Value* v) {
    values[t.unsafeGetTensorImpl()] = Seen{v, t};
  }
};

TURNOUT_THREAD_LOCAL TracingState* tracing_state = nullptr;

// True when `t` names one type (no type variable, no Any): then it can be
// a Value's type as it is.
bool isConcrete(const SchemaType& type) {
  // One-element types in a loop: lists may nest without bound.
  const SchemaType* t = &type;
  for (;;) {
    if (t->kind() == SchemaType::Kind::Var ||
        t->kind() == SchemaType::Kind::Any) {
      return false;
    }
    if (t->containedTypes().size() != 1) break;
    t = t->containedTypes()[0].get();
  }
  for (const SchemaTypePtr& c : t->containedTypes()) {
    if (!isConcrete(*c)) return false;
  }
  return true;
}

// The type of a value from what it holds.
SchemaTypePtr typeOfValue(const IValue& v) {
  using Kind = SchemaType::Kind;
  switch (v.tag()) {
    case IValue::Tag::None: return SchemaType::get(Kind::None);
    case IValue::Tag::Tensor: return SchemaType::get(Kind::Tensor);
    case IValue::Tag::Double: return SchemaType::get(Kind::Float);
    case IValue::Tag::Int: return SchemaType::get(Kind::Int);
    case IValue::Tag::Bool: return SchemaType::get(Kind::Bool);
    case IValue::Tag::String: return SchemaType::get(Kind::Str);
    case IValue::Tag::Device: return SchemaType::get(Kind::Device);
    case IValue::Tag::IntList:
      return SchemaType::list(SchemaType::get(Kind::Int));
    case IValue::Tag::DoubleList:
      return SchemaType::list(SchemaType::get(Kind::Float));
    case IValue::Tag::BoolList:
      return SchemaType::list(SchemaType::get(Kind::Bool));
    case IValue::Tag::TensorList:
      return SchemaType::list(SchemaType::get(Kind::Tensor));
    case IValue::Tag::GenericList: {
      const auto& elements = v.toListRef();
      return SchemaType::list(elements.empty()
                                  ? SchemaType::get(Kind::Any)
                                  : typeOfValue(elements.front()));
    }
    case IValue::Tag::Tuple: {
      std::vector<SchemaTypePtr> elements;
      for (const IValue& e : v.toTupleRef().elements()) {
        elements.push_back(typeOfValue(e));
      }
      return SchemaType::tuple(std::move(elements));
    }
    case IValue::Tag::Dict: {
      const auto& entries = v.toDictRef().entries();
      if (entries.empty()) {
        return SchemaType::dict(SchemaType::get(Kind::Any),
                                SchemaType::get(Kind::Any));
      }
      return SchemaType::dict(typeOfValue(entries.front().first),
                              typeOfValue(entries.front().second));
    }
    case IValue::Tag::Future:
      return SchemaType::future(SchemaType::get(Kind::Any));
  }
  return SchemaType::get(Kind::Any);
}

Type valueType(const IValue& v, const SchemaTypePtr& declared) {
  if (declared != nullptr && isConcrete(*declared)) return Type(declared);
  return Type(typeOfValue(v));
}

// Removes the nodes a failed recording added after `mark`, last first,
// and the tensors bound to their outputs, so that the trace is as it was
// before the call.
void rollback(TracingState& s, Node* mark) {
  Node* ret = s.graph->block()->returnNode();
  std::unordered_set<const Value*> gone;
  for (Node* n = ret->prev(); n != mark; n = n->prev()) {
    gone.insert(n->outputs().begin(), n->outputs().end());
  }
  for (auto it = s.values.begin(); it != s.values.end();) {
    if (gone.count(it->second.value) != 0) {
      it = s.values.erase(it);
    } else {
      ++it;
    }
  }
  while (ret->prev() != mark) ret->prev()->destroy();
}

// The Value standing for `v` in the graph: a tensor's producer (or a new
// tensor constant), a list or tuple built from its elements, or a
// constant. `where` names the argument for errors.
Value* valueFor(TracingState& s, const IValue& v,
                const SchemaTypePtr& declared,
                const std::function<std::string()>& where) {
  Graph& g = *s.graph;
  switch (v.tag()) {
    case IValue::Tag::Tensor: {
      const Tensor& t = v.toTensor();
      if (!t.defined()) return g.insertConstant(IValue());
      auto it = s.values.find(t.unsafeGetTensorImpl());
      if (it != s.values.end()) return it->second.value;
      // Made outside any operator the trace saw: frozen as a constant.
      Value* c = g.insertConstant(v);
      s.bind(t, c);
      return c;
    }
    case IValue::Tag::BoolList:
    case IValue::Tag::TensorList:
    case IValue::Tag::GenericList: {
      SchemaTypePtr element;
      if (declared != nullptr && declared->kind() == SchemaType::Kind::List) {
        element = declared->elementType();
      }
      std::vector<Value*> elements;
      for (const IValue& e : v.toList()) {
        elements.push_back(valueFor(s, e, element, where));
      }
      Node* n = g.create(std::string(prim::kListConstruct), elements, 1);
      n->output()->setType(valueType(v, declared));
      return g.insertNode(n)->output();
    }
    case IValue::Tag::Tuple: {
      std::vector<Value*> elements;
      for (const IValue& e : v.toTupleRef().elements()) {
        elements.push_back(valueFor(s, e, nullptr, where));
      }
      Node* n = g.create(std::string(prim::kTupleConstruct), elements, 1);
      n->output()->setType(Type(typeOfValue(v)));
      return g.insertNode(n)->output();
    }
    case IValue::Tag::Dict:
    case IValue::Tag::Future:
      throw Error(ErrorKind::Type,
                  "trace(): cannot record " + where() + ": a " +
                      v.tagKind() +
                      " is not recorded by trace() (torch 1.13 records a "
                      "dict output only with strict=False); return a tuple "
                      "or a list instead");
    default:
      try {
        return g.insertConstant(v);
      } catch (const Error& e) {
        throw Error(ErrorKind::InvalidArgument,
                    "trace(): cannot record " + where() + ": " + e.message());
      }
  }
}

void tracerFallback(const OperatorHandle& op, DispatchKeySet ks,
                    Stack* stack) {
  TracingState* s = tracing_state;
  TURNOUT_CHECK(s != nullptr, ErrorKind::InvalidArgument,
                toString(op.operator_name()),
                " reached the Tracer dispatch key on a thread that is not "
                "tracing. Work forked inside trace() is not traced: wait for "
                "it outside the traced function. Do not include the Tracer "
                "key by hand; call trace()");
  const FunctionSchema& schema = op.schema();
  TURNOUT_CHECK(!schema.is_vararg() && !schema.is_varret(),
                ErrorKind::NotImplemented, "trace(): cannot record ",
                toString(op.operator_name()),
                ": it takes or returns a variable number of values");
  const size_t num_args = schema.arguments().size();
  TURNOUT_INTERNAL_ASSERT(stack->size() >= num_args, "the Tracer fallback of ",
                          toString(op.operator_name()), " got ",
                          stack->size(), " values for ", num_args,
                          " arguments");
  Graph& g = *s->graph;
  Node* const mark = g.block()->returnNode()->prev();
  std::vector<Value*> inputs;
  inputs.reserve(num_args);
  try {
    const size_t base = stack->size() - num_args;
    for (size_t i = 0; i < num_args; ++i) {
      const Argument& arg = schema.arguments()[i];
      inputs.push_back(valueFor(*s, (*stack)[base + i], arg.type(), [&] {
        return "argument '" + arg.name() + "' (position " +
               std::to_string(i + 1) + ") of " +
               toString(op.operator_name());
      }));
    }
    // Calls the kernels below Tracer; with Tracer excluded, the operators
    // those kernels call in turn are not recorded.
    ExcludeDispatchKeyGuard no_tracing(DispatchKey::Tracer);
    op.redispatchBoxed(
        ks & DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::Tracer),
        stack);
  } catch (...) {
    rollback(*s, mark);
    throw;
  }
  Node* n = g.create(schema.name(), inputs, 0);
  n->setOp(op, /*print_overload=*/true);
  g.insertNode(n);
  const size_t num_returns = schema.returns().size();
  const size_t first = stack->size() - num_returns;
  for (size_t j = 0; j < num_returns; ++j) {
    const IValue& out = (*stack)[first + j];
    Value* v = n->addOutput(valueType(out, schema.returns()[j].type()));
    if (out.isTensor() && out.toTensor().defined()) {
      s->bind(out.toTensor(), v);
    } else if (out.isTensorList()) {
      const std::vector<Tensor>& ts = out.toTensorListRef();
      Node* unpack = g.create(std::string(prim::kListUnpack), {v}, ts.size());
      g.insertNode(unpack);
      for (size_t k = 0; k < ts.size(); ++k) {
        if (ts[k].defined()) s->bind(ts[k], unpack->output(k));
      }
    }
  }
}

// Registers the fallback the first time anyone traces, so that programs
// that never trace (and tests that register their own Tracer fallback)
// are unaffected. Never deregistered: the Library lives in static storage
// and is never destroyed (so leak checkers see what it holds as reachable,
// and no deregistration races calls at exit). A failed registration
// throws and is retried by the next trace().
void ensureFallbackRegistered() {
  alignas(Library) static unsigned char storage[sizeof(Library)];
  static const bool registered = [] {
    Library lib(Library::IMPL, "_", DispatchKey::Tracer, __FILE__, __LINE__);
    lib.fallback(CppFunction::makeFromBoxedFunction(&tracerFallback)
                     .debug("the tracer (jit/tracer/tracer.cc)"));
    new (storage) Library(std::move(lib));
    return true;
  }();
  (void)registered;
}

// Installs the tracing state and the Tracer key for its lifetime.
class TracingScope {
 public:
  explicit TracingScope(TracingState* s)
      : saved_(tls_local_dispatch_key_set()) {
    tracing_state = s;
    LocalDispatchKeySet local = saved_;
    local.included_ = local.included_.add(DispatchKey::Tracer);
    local.excluded_ = local.excluded_.remove(DispatchKey::Tracer);
    _force_tls_local_dispatch_key_set(local);
  }
  ~TracingScope() {
    _force_tls_local_dispatch_key_set(saved_);
    tracing_state = nullptr;
  }
  TracingScope(const TracingScope&) = delete;
  TracingScope& operator=(const TracingScope&) = delete;

 private:
  LocalDispatchKeySet saved_;
};

// The Value for one output of the traced function.
Value* outputValue(TracingState& s, const IValue& v, size_t i) {
  return valueFor(s, v, nullptr, [i] {
    return "output " + std::to_string(i) + " of the traced function";
  });
}

}  // namespace

bool isTracing() { return tracing_state != nullptr; }

std::unique_ptr<Graph> trace(const TracedFunction& fn,
                             const std::vector<IValue>& example_inputs,
                             const TraceOptions& options) {
  TURNOUT_CHECK(fn != nullptr, ErrorKind::InvalidArgument,
                "trace(): the function is empty");
  TURNOUT_CHECK(tracing_state == nullptr, ErrorKind::InvalidArgument,
                "trace(): this thread is already tracing; trace() does not "
                "nest (call the inner function directly, it is recorded)");
  TURNOUT_CHECK(options.input_names.empty() ||
                    options.input_names.size() == example_inputs.size(),
                ErrorKind::InvalidArgument, "trace(): ",
                options.input_names.size(), " input names for ",
                example_inputs.size(), " example inputs; give one name per "
                "input, or none");
  TracingState s;
  for (size_t i = 0; i < example_inputs.size(); ++i) {
    const IValue& v = example_inputs[i];
    TURNOUT_CHECK(v.isTensor() && v.toTensor().defined(),
                  ErrorKind::InvalidArgument, "trace(): example input ", i,
                  " is not a defined tensor (got ",
                  v.isTensor() ? "an undefined Tensor" : v.tagKind(),
                  "); example inputs must be tensors (pass other values by "
                  "capturing them in the function)");
    const Tensor& t = v.toTensor();
    for (size_t j = 0; j < i; ++j) {
      TURNOUT_CHECK(!example_inputs[j].toTensor().is_same(t),
                    ErrorKind::InvalidArgument, "trace(): example inputs ", j,
                    " and ", i, " are the same tensor; the graph could not "
                    "tell them apart. Pass distinct tensors (clone one)");
    }
    const std::string name =
        options.input_names.empty() ? std::string() : options.input_names[i];
    s.bind(t, s.graph->addInput(name));
  }
  ensureFallbackRegistered();
  std::vector<IValue> outputs;
  {
    TracingScope scope(&s);
    outputs = fn(example_inputs);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    s.graph->registerOutput(outputValue(s, outputs[i], i));
  }
  s.graph->lint();
  return std::move(s.graph);
}

}  // namespace jit
}  // namespace turnout
