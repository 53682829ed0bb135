// Library: how operator libraries register with the dispatcher, from C++.
//
//   TURNOUT_LIBRARY(myops, m) {                 // the one DEF block of myops
//     m.def("scale(Tensor x, float s) -> Tensor");
//     m.def("twice(Tensor x) -> Tensor", &twice_math);  // CompositeImplicitAutograd
//   }
//   TURNOUT_LIBRARY_IMPL(myops, CPU, m) {       // kernels for one key
//     m.impl("scale", TURNOUT_FN(scale_cpu));
//   }
//   TURNOUT_LIBRARY_IMPL(_, Tracer, m) {        // a backend fallback
//     m.fallback(turnout::CppFunction::makeFallthrough());
//   }
//
// A Library made at run time (tests, Python, notebooks) undoes everything it
// registered when destroyed. Every registration records the file and line of
// its Library, which dumps and errors print.
//
// Thread safety: a Library is used by one thread at a time; registration is
// safe while other threads call operators.
#ifndef TURNOUT_DISPATCHER_LIBRARY_H_
#define TURNOUT_DISPATCHER_LIBRARY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "dispatcher/core/dispatch_key.h"
#include "dispatcher/cpp_signature.h"
#include "dispatcher/infer_schema.h"
#include "dispatcher/kernel_function.h"
#include "dispatcher/operator_entry.h"
#include "dispatcher/registration_handle.h"

namespace turnout {

/// A kernel on its way into a Library: a C++ callable with, when it is typed,
/// its C++ signature and inferred schema, and optionally a dispatch key and a
/// debug name.
class CppFunction {
 public:
  /// A typed function pointer.
  template <class Func, std::enable_if_t<std::is_function_v<Func>, int> = 0>
  explicit CppFunction(Func* f)
      : func_(KernelFunction::makeFromUnboxedRuntimeFunction(f)),
        cpp_signature_(CppSignature::make<Func>()),
        schema_(inferSchemaString<Func>()) {}
  /// A typed function known at compile time: TURNOUT_FN(f).
  template <auto F>
  explicit CppFunction(CompileTimeFunctionPointer<F> f)
      : func_(KernelFunction::makeFromUnboxedFunction(f)),
        cpp_signature_(
            CppSignature::make<std::remove_pointer_t<decltype(F)>>()),
        schema_(inferSchemaString<std::remove_pointer_t<decltype(F)>>()) {}
  /// A lambda or other callable object with one typed operator().
  template <class Lambda,
            std::enable_if_t<std::is_class_v<std::decay_t<Lambda>> &&
                                 !std::is_same_v<std::decay_t<Lambda>,
                                                 CppFunction>,
                             int> = 0>
  explicit CppFunction(Lambda&& l)
      : func_(KernelFunction::makeFromUnboxedLambda(std::forward<Lambda>(l))),
        cpp_signature_(CppSignature::make<
                       detail::FunctorSignature<std::decay_t<Lambda>>>()),
        schema_(inferSchemaString<
                detail::FunctorSignature<std::decay_t<Lambda>>>()) {}

  /// The dispatcher skips this key (for impl) or this backend (for fallback).
  static CppFunction makeFallthrough();
  /// A boxed kernel: sees the operator and the stack.
  static CppFunction makeFromBoxedFunction(BoxedFunction f);
  static CppFunction makeFromBoxedFunction(BoxedFunctionWithKeys f);
  template <class F>
  static CppFunction makeFromBoxedFunctor(std::unique_ptr<F> functor) {
    return CppFunction(KernelFunction::makeFromBoxedFunctor(std::move(functor)),
                       std::nullopt, std::nullopt);
  }
  /// A KernelFunction made by other means (the Python bindings).
  static CppFunction fromKernelFunction(KernelFunction f,
                                        std::optional<std::string> schema) {
    return CppFunction(std::move(f), std::nullopt, std::move(schema));
  }

  /// A name shown in dumps instead of "registered at FILE:LINE".
  CppFunction&& debug(std::string d) && {
    debug_ = std::move(d);
    return std::move(*this);
  }

 private:
  friend class Library;
  template <class Func>
  friend CppFunction dispatch(DispatchKey k, Func&& f);
  CppFunction(KernelFunction f, std::optional<CppSignature> sig,
              std::optional<std::string> schema)
      : func_(std::move(f)),
        cpp_signature_(std::move(sig)),
        schema_(std::move(schema)) {}

  std::optional<DispatchKey> dispatch_key_;
  KernelFunction func_;
  std::optional<CppSignature> cpp_signature_;
  std::optional<std::string> schema_;
  std::string debug_;
};

/// `f` registered for key `k`: m.impl("op", dispatch(DispatchKey::CPU, f)).
template <class Func>
CppFunction dispatch(DispatchKey k, Func&& f) {
  CppFunction cf = [&] {
    if constexpr (std::is_same_v<std::decay_t<Func>, CppFunction>) {
      return std::forward<Func>(f);
    } else {
      return CppFunction(std::forward<Func>(f));
    }
  }();
  cf.dispatch_key_ = k;
  return cf;
}

class Library {
 public:
  enum Kind {
    DEF,       // defines the namespace's operators; one per namespace
    IMPL,      // kernels (and fallbacks) for one dispatch key
    FRAGMENT,  // more definitions for a namespace whose DEF is elsewhere
  };

  /// `ns` "_" with IMPL means "every namespace" (fallbacks only).
  Library(Kind kind, std::string ns, std::optional<DispatchKey> k,
          const char* file, uint32_t line);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  Library(Library&&) = default;
  Library& operator=(Library&&) = default;

  /// Declares an operator by its schema; a schema without a namespace gets
  /// the library's. `tags` (identifiers such as "pointwise") are kept with
  /// the schema: OperatorHandle::tags(), OpOverload.tags in Python. Returns
  /// *this for chaining.
  ///
  ///   m.def("scale(Tensor x, float s) -> Tensor",
  ///         AliasAnalysisKind::FROM_SCHEMA, {"pointwise"});
  Library& def(std::string_view schema,
               AliasAnalysisKind alias_analysis = AliasAnalysisKind::FROM_SCHEMA,
               std::vector<std::string> tags = {});
  /// Gives every later def of this library that names no tags the tags
  /// `tags_for(op)` returns (the reference operators take torch's from one
  /// table so). Called at registration only, never on a call.
  ///
  ///   TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  ///     m.tagsFor(&atenTags);
  ///     m.def("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  using TagsFor = std::vector<std::string> (*)(const OperatorName& op);
  Library& tagsFor(TagsFor tags_for) {
    tags_for_ = tags_for;
    return *this;
  }
  /// Declares an operator and registers `f` as its CompositeImplicitAutograd
  /// kernel (or for the key of dispatch(k, f)). `name_or_schema` may be a
  /// bare name: the schema is then inferred from `f`'s C++ signature.
  template <class Func>
  Library& def(std::string_view name_or_schema, Func&& f) {
    return defWithKernel(name_or_schema, toCppFunction(std::forward<Func>(f)));
  }
  /// The same with the alias analysis kind given: all or nothing (a kernel
  /// that does not fit the schema leaves no def behind).
  Library& def(std::string_view schema, AliasAnalysisKind alias_analysis,
               CppFunction f) {
    return defWithKernel(schema, std::move(f), alias_analysis);
  }
  /// Registers `f` for operator `name` ("op", "op.overload" or
  /// "ns::op.overload") at the library's key, the key of dispatch(k, f), or
  /// CompositeImplicitAutograd.
  template <class Func>
  Library& impl(std::string_view name, Func&& f) {
    return implKernel(name, toCppFunction(std::forward<Func>(f)));
  }
  /// Registers a backend fallback for the library's key (IMPL libraries).
  template <class Func>
  Library& fallback(Func&& f) {
    return fallbackKernel(toCppFunction(std::forward<Func>(f)));
  }

  /// Where this library was declared: "registered at file.cc:12".
  const std::string& debugSite() const;
  const std::string& ns() const { return ns_; }
  Kind kind() const { return kind_; }

 private:
  template <class Func>
  static CppFunction toCppFunction(Func&& f) {
    if constexpr (std::is_same_v<std::decay_t<Func>, CppFunction>) {
      return std::forward<Func>(f);
    } else {
      return CppFunction(std::forward<Func>(f));
    }
  }
  Library& defWithKernel(
      std::string_view name_or_schema, CppFunction f,
      std::optional<AliasAnalysisKind> alias_analysis = std::nullopt);
  Library& implKernel(std::string_view name, CppFunction f);
  Library& fallbackKernel(CppFunction f);
  std::string kindName() const;

  Kind kind_;
  std::string ns_;
  std::optional<DispatchKey> dispatch_key_;
  const char* file_;
  uint32_t line_;
  std::string debug_site_;
  std::vector<RegistrationHandleRAII> registrars_;
  TagsFor tags_for_ = nullptr;  // see tagsFor()
};

// Implementation details: the static registration macros.
namespace detail {

// One TURNOUT_LIBRARY* block: registers when the library holding it is
// loaded. While loadLibrary() (load_library.h) loads the library, a block
// that throws is reported to the loader, which undoes the blocks before it,
// instead of ending the process.
//
// Its registrations then last as long as the process: the Library is never
// destroyed, as the Dispatcher itself is not. Undoing them in a static
// destructor would take the operators away from threads that still call
// them while the process exits (return from main, exit()): they would find
// no kernel, or none of the operator. No library is ever unloaded
// (load_library.h), so nothing needs them undone before the end.
class LibraryInit {
 public:
  using InitFn = void(Library&);
  LibraryInit(Library::Kind kind, InitFn* fn, const char* ns,
              std::optional<DispatchKey> k, const char* file, uint32_t line);
  LibraryInit(const LibraryInit&) = delete;
  LibraryInit& operator=(const LibraryInit&) = delete;
  // No destructor: see above. The Library stays reachable from this static
  // object, so a leak checker does not report it.

  /// Undoes this block's registrations (the loader's rollback).
  void release() {
    delete lib_;
    lib_ = nullptr;
  }

 private:
  Library* lib_ = nullptr;  // owned; deleted only by release()
};

}  // namespace detail
}  // namespace turnout

#define TURNOUT_CONCAT_IMPL(a, b) a##b
#define TURNOUT_CONCAT(a, b) TURNOUT_CONCAT_IMPL(a, b)

/// Defines the operators of namespace `ns`. One per namespace.
#define TURNOUT_LIBRARY(ns, m)                                              \
  static void TURNOUT_LIBRARY_init_##ns(::turnout::Library&);               \
  static const ::turnout::detail::LibraryInit                               \
      TURNOUT_LIBRARY_static_init_##ns(::turnout::Library::DEF,             \
                                       &TURNOUT_LIBRARY_init_##ns, #ns,     \
                                       std::nullopt, __FILE__, __LINE__);   \
  void TURNOUT_LIBRARY_init_##ns(::turnout::Library& m)

/// More definitions for namespace `ns` (any number of these).
#define TURNOUT_LIBRARY_FRAGMENT(ns, m) \
  TURNOUT_LIBRARY_FRAGMENT_UID(ns, m, TURNOUT_CONCAT(frag_, __COUNTER__))
#define TURNOUT_LIBRARY_FRAGMENT_UID(ns, m, uid)                             \
  static void TURNOUT_CONCAT(TURNOUT_LIBRARY_FRAGMENT_init_##ns##_,          \
                             uid)(::turnout::Library&);                      \
  static const ::turnout::detail::LibraryInit TURNOUT_CONCAT(                \
      TURNOUT_LIBRARY_FRAGMENT_static_init_##ns##_, uid)(                    \
      ::turnout::Library::FRAGMENT,                                          \
      &TURNOUT_CONCAT(TURNOUT_LIBRARY_FRAGMENT_init_##ns##_, uid), #ns,      \
      std::nullopt, __FILE__, __LINE__);                                     \
  void TURNOUT_CONCAT(TURNOUT_LIBRARY_FRAGMENT_init_##ns##_,                 \
                      uid)(::turnout::Library & m)

/// Kernels of namespace `ns` (or `_`, fallbacks for all) for dispatch key k.
#define TURNOUT_LIBRARY_IMPL(ns, k, m) \
  TURNOUT_LIBRARY_IMPL_UID(ns, k, m, TURNOUT_CONCAT(impl_, __COUNTER__))
#define TURNOUT_LIBRARY_IMPL_UID(ns, k, m, uid)                              \
  static void TURNOUT_CONCAT(TURNOUT_LIBRARY_IMPL_init_##ns##_##k##_,        \
                             uid)(::turnout::Library&);                      \
  static const ::turnout::detail::LibraryInit TURNOUT_CONCAT(                \
      TURNOUT_LIBRARY_IMPL_static_init_##ns##_##k##_, uid)(                  \
      ::turnout::Library::IMPL,                                              \
      &TURNOUT_CONCAT(TURNOUT_LIBRARY_IMPL_init_##ns##_##k##_, uid), #ns,    \
      ::turnout::DispatchKey::k, __FILE__, __LINE__);                        \
  void TURNOUT_CONCAT(TURNOUT_LIBRARY_IMPL_init_##ns##_##k##_,               \
                      uid)(::turnout::Library & m)

#endif  // TURNOUT_DISPATCHER_LIBRARY_H_
