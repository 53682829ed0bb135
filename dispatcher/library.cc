#include "dispatcher/library.h"

#include <string>
#include <string_view>
#include <variant>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/load_library.h"
#include "dispatcher/schema/schema_parser.h"

namespace turnout {
namespace {

// `text` as a C++ string literal's contents.
std::string cppEscaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// "ns::op.overload" -> its name with the library's namespace filled in.
OperatorName qualify(OperatorName name, const std::string& ns) {
  if (name.getNamespace().empty()) name.name = ns + "::" + name.name;
  return name;
}

}  // namespace

CppFunction CppFunction::makeFallthrough() {
  return CppFunction(KernelFunction::makeFallthrough(), std::nullopt,
                     std::nullopt);
}

CppFunction CppFunction::makeFromBoxedFunction(BoxedFunction f) {
  return CppFunction(KernelFunction::makeFromBoxedFunction(f), std::nullopt,
                     std::nullopt);
}

CppFunction CppFunction::makeFromBoxedFunction(BoxedFunctionWithKeys f) {
  return CppFunction(KernelFunction::makeFromBoxedFunction(f), std::nullopt,
                     std::nullopt);
}

Library::Library(Kind kind, std::string ns, std::optional<DispatchKey> k,
                 const char* file, uint32_t line)
    : kind_(kind),
      ns_(std::move(ns)),
      dispatch_key_(k),
      file_(file),
      line_(line),
      debug_site_(detail::joinParts("registered at ", file, ":", line)) {
  TURNOUT_CHECK(!ns_.empty(), ErrorKind::InvalidArgument, kindName(),
                " library at ", file_, ":", line_,
                ": the namespace is empty; name it, e.g. \"myops\"");
  TURNOUT_CHECK(kind_ == IMPL || ns_ != "_", ErrorKind::InvalidArgument,
                kindName(), " library at ", file_, ":", line_,
                ": the wildcard namespace '_' is only for IMPL libraries "
                "that register fallbacks");
  TURNOUT_CHECK(kind_ == IMPL || !dispatch_key_.has_value(),
                ErrorKind::InvalidArgument, kindName(), " library at ", file_,
                ":", line_, ": only IMPL libraries take a dispatch key");
  if (kind_ == DEF) {
    registrars_.push_back(
        Dispatcher::singleton().registerLibrary(ns_, debugSite()));
  }
}

Library::~Library() {
  // Undo in reverse order of registration.
  while (!registrars_.empty()) registrars_.pop_back();
}

std::string Library::kindName() const {
  switch (kind_) {
    case DEF:
      return "TURNOUT_LIBRARY";
    case IMPL:
      return "TURNOUT_LIBRARY_IMPL";
    case FRAGMENT:
      return "TURNOUT_LIBRARY_FRAGMENT";
  }
  return "library";
}

const std::string& Library::debugSite() const { return debug_site_; }

Library& Library::def(std::string_view schema, AliasAnalysisKind alias_analysis,
                      std::vector<std::string> tags) {
  if (kind_ == IMPL) {
    std::string text(schema);
    throw Error(ErrorKind::InvalidArgument,
                "def(\"" + text +
                    "\"): cannot define an operator inside an IMPL library (" +
                    debugSite() +
                    "): it registers kernels only. Put the def in the DEF "
                    "library of namespace " +
                    ns_ + ", or in a FRAGMENT library of it:\n",
                FixIt{FixIt::Action::DefineOperator, ns_, "", "", text,
                      "TURNOUT_LIBRARY_FRAGMENT(" + ns_ + ", m) { m.def(\"" +
                          cppEscaped(text) + "\"); }"},
                "");
  }
  FunctionSchema parsed = parseSchema(schema);
  std::string schema_ns(parsed.operator_name().getNamespace());
  TURNOUT_CHECK(schema_ns.empty() || schema_ns == ns_,
                ErrorKind::InvalidArgument,
                "Explicitly provided namespace (", schema_ns,
                ") in schema string does not match namespace of enclosing ",
                kindName(), " block (", ns_, ") ", debugSite(),
                ". Move this definition to the library of namespace ",
                schema_ns, ", or drop the namespace from the schema string.");
  parsed.setNamespaceIfNotSet(ns_);
  if (tags.empty() && tags_for_ != nullptr) tags = tags_for_(parsed.operator_name());
  registrars_.push_back(Dispatcher::singleton().registerDef(
      std::move(parsed), debugSite(), alias_analysis, std::move(tags)));
  return *this;
}

Library& Library::defWithKernel(std::string_view name_or_schema, CppFunction f,
                                std::optional<AliasAnalysisKind> alias_analysis) {
  std::variant<OperatorName, FunctionSchema> parsed =
      parseSchemaOrName(name_or_schema);
  if (std::holds_alternative<FunctionSchema>(parsed)) {
    def(name_or_schema, alias_analysis.value_or(AliasAnalysisKind::FROM_SCHEMA));
  } else {
    TURNOUT_CHECK(f.schema_.has_value(), ErrorKind::InvalidArgument, "def(\"",
                  name_or_schema,
                  "\", f): cannot infer a schema from a boxed kernel; give the "
                  "full schema, e.g. def(\"",
                  name_or_schema, "(Tensor x) -> Tensor\", f)");
    const OperatorName& name = std::get<OperatorName>(parsed);
    std::string op = name.name + (name.overload_name.empty()
                                      ? std::string()
                                      : "." + name.overload_name);
    // The inferred schema reads "(Tensor _0) -> Tensor _0": prefix the name.
    // As in c10, an inferred schema says nothing of aliasing: CONSERVATIVE.
    def(op + *f.schema_,
        alias_analysis.value_or(AliasAnalysisKind::CONSERVATIVE));
  }
  std::string name = std::holds_alternative<FunctionSchema>(parsed)
                         ? toString(std::get<FunctionSchema>(parsed).operator_name())
                         : toString(std::get<OperatorName>(parsed));
  try {
    implKernel(name, std::move(f));
  } catch (...) {
    registrars_.pop_back();  // undo the def: a failed def+impl changes nothing
    throw;
  }
  return *this;
}

Library& Library::implKernel(std::string_view name, CppFunction f) {
  OperatorName op = parseName(name);
  std::string op_ns(op.getNamespace());
  TURNOUT_CHECK(ns_ != "_", ErrorKind::InvalidArgument, "impl(\"", name,
                "\"): a library of the wildcard namespace '_' (", debugSite(),
                ") can only register fallbacks; use the operator's namespace");
  TURNOUT_CHECK(op_ns.empty() || op_ns == ns_, ErrorKind::InvalidArgument,
                "Explicitly provided namespace (", op_ns,
                ") in operator name does not match namespace of enclosing ",
                kindName(), " block (", ns_, ") ", debugSite(),
                ". Move this impl to a library of namespace ", op_ns, ".");
  TURNOUT_CHECK(!f.dispatch_key_ || !dispatch_key_ ||
                    *f.dispatch_key_ == *dispatch_key_,
                ErrorKind::InvalidArgument, "impl(\"", name,
                "\"): explicitly provided dispatch key (",
                f.dispatch_key_ ? toString(*f.dispatch_key_) : "",
                ") is inconsistent with the dispatch key of the enclosing ",
                kindName(), " block (",
                dispatch_key_ ? toString(*dispatch_key_) : "", ") ",
                debugSite(), ". Register it in a block for that key.");
  std::optional<DispatchKey> key =
      f.dispatch_key_ ? f.dispatch_key_ : dispatch_key_;
  std::string debug = f.debug_.empty() ? debugSite() : f.debug_;
  registrars_.push_back(Dispatcher::singleton().registerImpl(
      qualify(std::move(op), ns_), key, std::move(f.func_),
      std::move(f.cpp_signature_), std::move(f.schema_), std::move(debug)));
  return *this;
}

Library& Library::fallbackKernel(CppFunction f) {
  TURNOUT_CHECK(kind_ == IMPL && dispatch_key_.has_value(),
                ErrorKind::InvalidArgument, "fallback(): ", kindName(),
                " block (", debugSite(),
                ") has no dispatch key; register fallbacks in "
                "TURNOUT_LIBRARY_IMPL(_, KEY, m)");
  TURNOUT_CHECK(!f.dispatch_key_ || *f.dispatch_key_ == *dispatch_key_,
                ErrorKind::InvalidArgument,
                "fallback(): the kernel's dispatch key (",
                f.dispatch_key_ ? toString(*f.dispatch_key_) : "",
                ") differs from the library's (", toString(*dispatch_key_),
                ")");
  // A typed kernel's boxed form pops and pushes what its C++ signature says,
  // which fits one schema; a fallback runs for every operator, so it would
  // leave other operators' stacks wrong.
  TURNOUT_CHECK(!f.cpp_signature_, ErrorKind::InvalidArgument,
                "fallback(): a backend fallback for ", toString(*dispatch_key_),
                " (", debugSite(),
                ") must be a boxed kernel, as it runs for every operator; got "
                "a typed one (",
                f.cpp_signature_ ? f.cpp_signature_->name() : "",
                "). Use CppFunction::makeFromBoxedFunction or "
                "CppFunction::makeFallthrough()");
  std::string debug = f.debug_.empty() ? debugSite() : f.debug_;
  registrars_.push_back(Dispatcher::singleton().registerFallback(
      *dispatch_key_, std::move(f.func_), std::move(debug)));
  return *this;
}

namespace detail {

LibraryInit::LibraryInit(Library::Kind kind, InitFn* fn, const char* ns,
                         std::optional<DispatchKey> k, const char* file,
                         uint32_t line) {
  LoadCapture* capture = currentLoadCapture();
  if (capture == nullptr) {
    // Linked into a program, or dlopened by other means: an error ends the
    // process (std::terminate prints it), as any static initializer's would.
    lib_ = new Library(kind, ns, k, file, line);
    fn(*lib_);
    return;
  }
  if (capture->error) return;  // an earlier block failed: all or nothing
  try {
    lib_ = new Library(kind, ns, k, file, line);
    fn(*lib_);
    capture->registered.push_back(this);
  } catch (...) {
    release();  // undoes what this block had registered
    capture->error = std::current_exception();
    const char* macro = kind == Library::DEF    ? "TURNOUT_LIBRARY("
                        : kind == Library::IMPL ? "TURNOUT_LIBRARY_IMPL("
                                                : "TURNOUT_LIBRARY_FRAGMENT(";
    capture->error_site = joinParts(
        macro, ns, k ? std::string(", ") + toString(*k) : std::string(),
        ") at ", file, ":", line);
  }
}

}  // namespace detail
}  // namespace turnout
