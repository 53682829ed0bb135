// Function<T>: autograd for a C++ operator library's own operators, with a
// forward and a backward written as two static functions, as
// torch::autograd::Function.
//
//   struct ScaledAdd : autograd::Function<ScaledAdd> {
//     static Tensor forward(autograd::AutogradContext* ctx, const Tensor& a,
//                           const Tensor& b, double alpha) {
//       ctx->saved_data["alpha"] = alpha;
//       AutoDispatchBelowAutograd below;        // reach the CPU/Meta kernel
//       return op.call(a, b, alpha);
//     }
//     static autograd::variable_list backward(autograd::AutogradContext* ctx,
//                                             autograd::variable_list grads) {
//       double alpha = ctx->saved_data["alpha"].toDouble();
//       return {grads[0], mul(grads[0], alpha), Tensor()};  // one per argument
//     }
//   };
//   // The autograd kernel of myops::scaled_add, at the Autograd key:
//   Tensor scaledAddAutograd(const Tensor& a, const Tensor& b, double alpha) {
//     return ScaledAdd::apply(a, b, alpha);
//   }
//   TURNOUT_LIBRARY_IMPL(myops, Autograd, m) {
//     m.impl("scaled_add", TURNOUT_FN(scaledAddAutograd));
//   }
//
// apply(args...) runs forward with grad mode off and, when grad mode is on
// and a Tensor argument requires grad, makes the outputs' grad_fn a node
// that calls backward. The arguments are Tensors, optional Tensors and any
// other values (passed through as they are); forward returns a Tensor or a
// variable_list, and apply returns the same.
//
// backward receives one gradient per forward output (zeros where the output
// got none, unless set_materialize_grads(false) was called: then undefined)
// and returns one gradient per forward argument: undefined for the
// arguments that are not Tensors or need none; trailing undefined ones may
// be left out. A gradient is summed to its input's shape where it was
// broadcast, and cast to its input's dtype.
//
// Thread safety: as Node (kernels/autograd/node.h): the graph is built by
// the thread that calls apply and run by the one that calls backward().
#ifndef TURNOUT_KERNELS_AUTOGRAD_CUSTOM_FUNCTION_H_
#define TURNOUT_KERNELS_AUTOGRAD_CUSTOM_FUNCTION_H_

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "dispatcher/core/ivalue.h"
#include "dispatcher/core/tensor.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/autograd/node.h"
#include "kernels/autograd/saved_variable.h"

namespace turnout {
namespace autograd {

class CustomFunctionNode;

/// What forward leaves for backward: saved tensors (checked against later
/// in-place changes), other saved values, and the marks forward sets on its
/// outputs.
class AutogradContext {
 public:
  AutogradContext() = default;
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  /// Saves tensors (inputs, outputs, or others; undefined ones too) for
  /// backward. Call it in forward, once; a second call replaces the first.
  void save_for_backward(variable_list to_save);
  /// The tensors saved by save_for_backward, in order. Throws
  /// InvalidArgument when one was modified in place after forward returned
  /// (naming the function and both versions), or when called before forward
  /// returned.
  variable_list get_saved_variables() const;

  /// Values other than tensors that backward needs (sizes, scalars, flags).
  std::unordered_map<std::string, IValue> saved_data;

  /// Marks inputs that forward modified in place; each must also be
  /// returned as an output. Their version counters are bumped, and their
  /// grad_fn becomes this function's node. A leaf that requires grad may not
  /// be modified in place.
  void mark_dirty(const variable_list& inputs);
  /// Marks outputs that get no gradient (indices, masks): they do not
  /// require grad, and backward receives zeros (or undefined) for them.
  void mark_non_differentiable(const variable_list& outputs);
  /// Whether backward receives zeros (true, the default) or undefined
  /// tensors for the outputs that got no gradient.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }

  /// True when the `i`-th Tensor argument of forward (counting Tensor
  /// arguments only, as their gradients flow) needs a gradient. Valid in
  /// forward and backward. Throws Index for `i` past the Tensor arguments.
  bool needs_input_grad(size_t i) const;

 private:
  friend class CustomFunctionNode;
  variable_list to_save_;
  std::vector<SavedVariable> saved_;
  bool saved_done_ = false;
  std::unordered_set<const TensorImpl*> dirty_;
  std::unordered_set<const TensorImpl*> non_differentiable_;
  bool materialize_grads_ = true;
  const CustomFunctionNode* node_ = nullptr;  // the owner
};

/// The base of a user's function; see the file comment.
template <class T>
struct Function {
  /// Runs T::forward with a fresh context and records T::backward.
  template <class X = T, class... Args>
  static auto apply(Args&&... args)
      -> std::enable_if_t<std::is_same_v<X, T>,
                          decltype(X::forward(
                              static_cast<AutogradContext*>(nullptr),
                              std::forward<Args>(args)...))>;
};

// Implementation details.

/// The backward node of one apply; calls the function's backward.
class CustomFunctionNode : public Node {
 public:
  explicit CustomFunctionNode(std::string name) : name_(std::move(name)) {
    ctx_.node_ = this;
  }
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return name_; }
  AutogradContext& ctx() { return ctx_; }

  // Steps of Function<T>::apply, in this order. Not for users.
  void addArgument(const Tensor* t);  // nullptr: not a Tensor argument
  bool begin();                       // sets the edges; true when recording
  variable_list wrapOutputs(variable_list outputs, bool recording);

 protected:
  virtual variable_list callBackward(variable_list grads) = 0;

 private:
  friend class AutogradContext;
  struct OutputInfo {
    bool defined = false;
    DimVector sizes;
    ScalarType dtype = ScalarType::Float;
    Device device = Device(DeviceType::CPU);
  };
  struct InputInfo {
    DimVector sizes;
    ScalarType dtype = ScalarType::Float;
  };
  std::string name_;
  AutogradContext ctx_;
  std::vector<bool> is_tensor_arg_;  // per forward argument
  variable_list tensor_inputs_;      // cleared once recorded
  std::vector<InputInfo> inputs_;    // per Tensor argument
  std::vector<OutputInfo> outputs_;  // per forward output
};

namespace function_internal {

/// "ScaledAddBackward" for T = myops::ScaledAdd.
std::string nodeName(const std::type_info& type);

template <class T>
class Node final : public CustomFunctionNode {
 public:
  Node() : CustomFunctionNode(nodeName(typeid(T))) {}

 protected:
  variable_list callBackward(variable_list grads) override {
    return T::backward(&ctx(), std::move(grads));
  }
};

inline void addArgument(CustomFunctionNode& n, const Tensor& t) {
  n.addArgument(&t);
}
inline void addArgument(CustomFunctionNode& n, const std::optional<Tensor>& t) {
  n.addArgument(t ? &*t : nullptr);
}
template <class V>
void addArgument(CustomFunctionNode& n, const V&) {
  n.addArgument(nullptr);
}

inline variable_list toList(Tensor t) { return {std::move(t)}; }
inline variable_list toList(variable_list v) { return v; }
inline Tensor fromList(variable_list v, Tensor*) { return std::move(v[0]); }
inline variable_list fromList(variable_list v, variable_list*) { return v; }

}  // namespace function_internal

template <class T>
template <class X, class... Args>
auto Function<T>::apply(Args&&... args)
    -> std::enable_if_t<std::is_same_v<X, T>,
                        decltype(X::forward(static_cast<AutogradContext*>(
                                                nullptr),
                                            std::forward<Args>(args)...))> {
  using Out = decltype(X::forward(static_cast<AutogradContext*>(nullptr),
                                  std::forward<Args>(args)...));
  static_assert(std::is_same_v<Out, Tensor> || std::is_same_v<Out, variable_list>,
                "Function<T>: T::forward must return a Tensor or a "
                "variable_list");
  auto node = std::make_shared<function_internal::Node<X>>();
  (function_internal::addArgument(*node, args), ...);
  const bool recording = node->begin();
  variable_list outputs;
  {
    AutoGradMode no_grad(false);
    outputs = function_internal::toList(
        X::forward(&node->ctx(), std::forward<Args>(args)...));
  }
  outputs = node->wrapOutputs(std::move(outputs), recording);
  return function_internal::fromList(std::move(outputs),
                                     static_cast<Out*>(nullptr));
}

}  // namespace autograd
}  // namespace turnout

#endif  // TURNOUT_KERNELS_AUTOGRAD_CUSTOM_FUNCTION_H_
