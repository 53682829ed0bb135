// torch 1.13's alias operators of the operators turnout implements:
// aten::arccos for aten::acos, multiply for mul, clip for clamp, fix for
// trunc, special_psi for digamma, special_expit for sigmoid, ... Each is an
// operator of its own (its own schema and overload names, as torch's), with
// one CompositeImplicitAutograd kernel that calls its target overload, as
// torch's alias kernels do: autograd, a Python mode and every backend see
// the target's call (`arccos(x).grad_fn` is AcosBackward0).
//
//   turnout.ops.aten.arccos(x)        # calls aten::acos
//   turnout.ops.aten.clip_(x, 0, 1)   # calls aten::clamp_
//
// An alias's arguments are its target's, position for position (checked
// when the kernel first runs), so the kernel passes the stack on unchanged.
// Aliases whose target turnout lacks (arctan2: atan2; divide_.Tensor_mode:
// div_.Tensor_mode; greater_: gt_; ...) are not registered.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/operator_handle.h"
#include "dispatcher/operator_kernel.h"
#include "kernels/aten_tags.h"

namespace turnout {
namespace {

struct Alias {
  const char* schema;  // the alias's schema, as torch 1.13's
  const char* target;  // "acos" or "round.decimals"
};

// clang-format off
constexpr Alias kAliases[] = {
    // Trigonometric and hyperbolic inverses (numpy's names).
    {"arccos(Tensor self) -> Tensor", "acos"},
    {"arccos_(Tensor(a!) self) -> Tensor(a!)", "acos_"},
    {"arccos.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "acos.out"},
    {"arcsin(Tensor self) -> Tensor", "asin"},
    {"arcsin_(Tensor(a!) self) -> Tensor(a!)", "asin_"},
    {"arcsin.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "asin.out"},
    {"arctan(Tensor self) -> Tensor", "atan"},
    {"arctan_(Tensor(a!) self) -> Tensor(a!)", "atan_"},
    {"arctan.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "atan.out"},
    {"arccosh(Tensor self) -> Tensor", "acosh"},
    {"arccosh_(Tensor(a!) self) -> Tensor(a!)", "acosh_"},
    {"arccosh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "acosh.out"},
    {"arcsinh(Tensor self) -> Tensor", "asinh"},
    {"arcsinh_(Tensor(a!) self) -> Tensor(a!)", "asinh_"},
    {"arcsinh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "asinh.out"},
    {"arctanh(Tensor self) -> Tensor", "atanh"},
    {"arctanh_(Tensor(a!) self) -> Tensor(a!)", "atanh_"},
    {"arctanh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "atanh.out"},
    // Unary.
    {"absolute(Tensor self) -> Tensor", "abs"},
    {"absolute_(Tensor(a!) self) -> Tensor(a!)", "abs_"},
    {"absolute.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "abs.out"},
    {"negative(Tensor self) -> Tensor", "neg"},
    {"negative_(Tensor(a!) self) -> Tensor(a!)", "neg_"},
    {"negative.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "neg.out"},
    {"fix(Tensor self) -> Tensor", "trunc"},
    {"fix_(Tensor(a!) self) -> Tensor(a!)", "trunc_"},
    {"fix.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "trunc.out"},
    // Arithmetic.
    {"multiply.Tensor(Tensor self, Tensor other) -> Tensor", "mul.Tensor"},
    {"multiply.Scalar(Tensor self, Scalar other) -> Tensor", "mul.Scalar"},
    {"multiply.out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
     "Tensor(a!)", "mul.out"},
    {"multiply_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
     "mul_.Tensor"},
    {"multiply_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
     "mul_.Scalar"},
    {"divide.Tensor(Tensor self, Tensor other) -> Tensor", "div.Tensor"},
    {"divide.Scalar(Tensor self, Scalar other) -> Tensor", "div.Scalar"},
    {"divide.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> "
     "Tensor", "div.Tensor_mode"},
    {"divide.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> "
     "Tensor", "div.Scalar_mode"},
    {"divide.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
     "div.out"},
    {"divide.out_mode(Tensor self, Tensor other, *, str? rounding_mode, "
     "Tensor(a!) out) -> Tensor(a!)", "div.out_mode"},
    {"divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
     "div_.Tensor"},
    {"divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
     "div_.Scalar"},
    {"true_divide.Tensor(Tensor self, Tensor other) -> Tensor", "div.Tensor"},
    {"true_divide.Scalar(Tensor self, Scalar other) -> Tensor", "div.Scalar"},
    {"true_divide.out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
     "Tensor(a!)", "div.out"},
    {"true_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
     "div_.Tensor"},
    {"true_divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
     "div_.Scalar"},
    {"subtract.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
     "sub.Tensor"},
    {"subtract.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
     "sub.Scalar"},
    {"subtract.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) "
     "out) -> Tensor(a!)", "sub.out"},
    {"subtract_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> "
     "Tensor(a!)", "sub_.Tensor"},
    {"subtract_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> "
     "Tensor(a!)", "sub_.Scalar"},
    // Comparisons (their in-place forms need gt_, le_, ...: not here).
    {"greater.Tensor(Tensor self, Tensor other) -> Tensor", "gt.Tensor"},
    {"greater.Scalar(Tensor self, Scalar other) -> Tensor", "gt.Scalar"},
    {"greater.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> "
     "Tensor(a!)", "gt.Scalar_out"},
    {"greater.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
     "Tensor(a!)", "gt.Tensor_out"},
    {"greater_equal.Tensor(Tensor self, Tensor other) -> Tensor", "ge.Tensor"},
    {"greater_equal.Scalar(Tensor self, Scalar other) -> Tensor", "ge.Scalar"},
    {"greater_equal.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) "
     "-> Tensor(a!)", "ge.Scalar_out"},
    {"greater_equal.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) "
     "-> Tensor(a!)", "ge.Tensor_out"},
    {"less.Tensor(Tensor self, Tensor other) -> Tensor", "lt.Tensor"},
    {"less.Scalar(Tensor self, Scalar other) -> Tensor", "lt.Scalar"},
    {"less.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> "
     "Tensor(a!)", "lt.Scalar_out"},
    {"less.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
     "Tensor(a!)", "lt.Tensor_out"},
    {"less_equal.Tensor(Tensor self, Tensor other) -> Tensor", "le.Tensor"},
    {"less_equal.Scalar(Tensor self, Scalar other) -> Tensor", "le.Scalar"},
    {"less_equal.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> "
     "Tensor(a!)", "le.Scalar_out"},
    {"less_equal.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
     "Tensor(a!)", "le.Tensor_out"},
    {"not_equal.Tensor(Tensor self, Tensor other) -> Tensor", "ne.Tensor"},
    {"not_equal.Scalar(Tensor self, Scalar other) -> Tensor", "ne.Scalar"},
    {"not_equal.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> "
     "Tensor(a!)", "ne.Scalar_out"},
    {"not_equal.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
     "Tensor(a!)", "ne.Tensor_out"},
    // clamp (clip_.Tensor needs clamp_.Tensor: not here).
    {"clip(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
     "clamp"},
    {"clip.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
     "clamp.Tensor"},
    {"clip.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) "
     "out) -> Tensor(a!)", "clamp.out"},
    {"clip.Tensor_out(Tensor self, Tensor? min=None, Tensor? max=None, *, "
     "Tensor(a!) out) -> Tensor(a!)", "clamp.Tensor_out"},
    {"clip_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> "
     "Tensor(a!)", "clamp_"},
    // torch.special's names.
    {"special_digamma(Tensor self) -> Tensor", "digamma"},
    {"special_digamma.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
     "digamma.out"},
    {"special_psi(Tensor self) -> Tensor", "digamma"},
    {"special_psi.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
     "digamma.out"},
    {"special_polygamma(int n, Tensor self) -> Tensor", "polygamma"},
    {"special_polygamma.out(int n, Tensor self, *, Tensor(a!) out) -> "
     "Tensor(a!)", "polygamma.out"},
    {"special_gammaln(Tensor self) -> Tensor", "lgamma"},
    {"special_gammaln.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
     "lgamma.out"},
    {"special_erf(Tensor self) -> Tensor", "erf"},
    {"special_erf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
     "erf.out"},
    {"special_erfc(Tensor self) -> Tensor", "erfc"},
    {"special_erfc.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
     "erfc.out"},
    {"special_expit(Tensor self) -> Tensor", "sigmoid"},
    {"special_expit.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
     "sigmoid.out"},
    {"special_expm1(Tensor self) -> Tensor", "expm1"},
    {"special_expm1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
     "expm1.out"},
    {"special_log1p(Tensor self) -> Tensor", "log1p"},
    {"special_log1p.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
     "log1p.out"},
    {"special_round(Tensor self, *, int decimals=0) -> Tensor",
     "round.decimals"},
    {"special_round.out(Tensor self, *, int decimals=0, Tensor(a!) out) -> "
     "Tensor(a!)", "round.decimals_out"},
    {"special_log_softmax(Tensor self, int dim, *, ScalarType? dtype=None) -> "
     "Tensor", "log_softmax.int"},
    {"special_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
     "softmax.int"},
    {"special_logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> "
     "Tensor", "logsumexp"},
    {"special_logsumexp.out(Tensor self, int[1] dim, bool keepdim=False, *, "
     "Tensor(a!) out) -> Tensor(a!)", "logsumexp.out"},
};
// clang-format on

// "name.overload(" of a schema, or "name(": the alias's operator name.
std::string_view aliasName(std::string_view schema) {
  return schema.substr(0, schema.find('('));
}

// The CompositeImplicitAutograd kernel of one alias: calls the target
// overload, found on first use (it may be registered after the alias), on
// the same stack.
class AliasKernel final : public OperatorKernel {
 public:
  explicit AliasKernel(const Alias& alias) : alias_(alias) {}

  void operator()(const OperatorHandle& op, DispatchKeySet, Stack* stack) {
    std::call_once(found_, [&] { find(op); });
    target_->callBoxed(stack);
  }

 private:
  void find(const OperatorHandle& op) {
    const std::string_view target(alias_.target);
    const size_t dot = target.find('.');
    const std::string name = "aten::" + std::string(target.substr(0, dot));
    const std::string overload = dot == std::string_view::npos
                                     ? ""
                                     : std::string(target.substr(dot + 1));
    auto handle = Dispatcher::singleton().findSchema({name, overload});
    TURNOUT_CHECK(handle.has_value(), ErrorKind::Internal, op.schema().name(),
                  ": the alias of ", alias_.target,
                  ", which is not registered (a turnout bug: kernels/"
                  "aliases.cc names a target that no library defines)");
    const auto& mine = op.schema().arguments();
    const auto& theirs = handle->schema().arguments();
    TURNOUT_INTERNAL_ASSERT(mine.size() == theirs.size(), op.schema().name(),
                            " and its target ", alias_.target,
                            " take different numbers of arguments");
    target_ = std::move(handle);
  }

  const Alias& alias_;
  std::once_flag found_;
  std::optional<OperatorHandle> target_;  // set once by find()
};

}  // namespace
}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);
  for (const turnout::Alias& a : turnout::kAliases) m.def(a.schema);
}

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  for (const turnout::Alias& a : turnout::kAliases) {
    m.impl(turnout::aliasName(a.schema),
           turnout::CppFunction::makeFromBoxedFunctor(
               std::make_unique<turnout::AliasKernel>(a)));
  }
}
