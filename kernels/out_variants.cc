// The out= overloads of torch 1.13 whose functional overload turnout
// already computes, made by one boxed CompositeExplicitAutograd kernel per
// overload instead of a hand-written kernel each:
//
//   turnout.eq(a, b, out=o)          # aten::eq.Tensor_out
//   turnout.zeros(2, 3, out=o)       # aten::zeros.out
//
// A call runs the functional overload through the dispatcher, below
// autograd (as a CompositeExplicitAutograd kernel does), checks every out
// tensor against its result by the overload's OutRule (what torch 1.13
// does for that operator), then resizes each out to its result's shape
// (reduce_internal::resizeOutput: the deprecation warning when out had
// elements; an elementwise operator's out gets its result's layout, as
// torch's TensorIterator gives it) and copies the result in (converting
// the dtype where the rule allows another). The returned tensors are the out arguments themselves.
// Every check is made before anything is written: a refused call leaves
// the out tensors as they were.
//
// Meta and CUDA come through the same kernel: the functional overload runs
// at the arguments' backend and copy_ writes on the out's device.
//
// The cost over a hand-written out kernel: one result tensor and one copy.
// Operators whose out= path is hot have their own kernels (add.out,
// sum.IntList_out, ...) and are not listed here.
//
// Six out= forms torch 1.13 writes over other operators (empty.out and
// randn.out over resize_ and normal_, max.out and min.out over maximum.out
// and minimum.out, nll_loss.out and nll_loss2d.out over their forward's
// out= form) are CompositeImplicitAutograd kernels at the end of this file,
// so that a mode sees what torch's sees.
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/core/ivalue.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "dispatcher/operator_handle.h"
#include "dispatcher/operator_kernel.h"
#include "dispatcher/schema/default_ivalue.h"
#include "dispatcher/stack.h"
#include "kernels/aten_tags.h"
#include "kernels/copy.h"
#include "kernels/factory.h"
#include "kernels/mem_overlap.h"
#include "kernels/reduce_utils.h"
#include "kernels/type_promotion.h"

namespace turnout {
namespace {

/// What an out tensor must be for its result, as torch 1.13 checks it for
/// the operator (probed per family; tests/python/test_out_variants_torch.py
/// compares every overload with torch).
enum class OutRule {
  /// torch generates the overload from the functional one ("generated"
  /// tag): the result is resized into and copy_'d to out, which converts
  /// to any dtype and writes on any device.
  kCopy,
  /// A TensorIterator operator: any out dtype the result can be cast to
  /// (canCast: no floating into integral, nothing but Bool into Bool);
  /// out on the result's device; no partial overlap with an input.
  kCast,
  /// out must have the result's dtype exactly, on its device.
  kExact,
  /// all/any: a Bool or Byte out (the result converted), on its device.
  kBoolOrByte,
  /// logsumexp/norm: a floating-point out, on the result's device.
  kFloating,
  /// A reduction with `ScalarType? dtype`: without dtype= it computes in
  /// out's dtype; then out must have the result's dtype exactly.
  kReduceInOutDtype,
  /// A factory (no tensor input, or a *_like one whose out= form lacks
  /// dtype and device): the functional overload makes the result with
  /// out's dtype and on out's device (its own dtype errors apply, e.g.
  /// rand or rand_like into an integer out).
  kFactory,
};

/// One out= overload: torch 1.13's schema, the overload of the same
/// operator that computes it ("" for the default one), and its rule.
struct OutVariant {
  const char* schema;
  const char* functional;
  OutRule rule;
  /// torch resizes out without the deprecation warning (resize_): the
  /// factories but arange, and nll_loss2d_backward.grad_input.
  bool silent_resize = false;
};

// Sorted by name. The functional overload's arguments are the out
// overload's others, by name; a functional argument the out overload lacks
// gets its default, except dtype and device under kFactory (out's).
constexpr OutVariant kOutVariants[] = {
    {"_unsafe_view.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "", OutRule::kCopy},
    {"add.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "Scalar", OutRule::kCopy},
    {"all.all_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kBoolOrByte},
    {"all.out(Tensor self, int dim, bool keepdim=False, *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "dim", OutRule::kBoolOrByte},
    {"any.all_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kBoolOrByte},
    {"any.out(Tensor self, int dim, bool keepdim=False, *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "dim", OutRule::kBoolOrByte},
    {"arange.out(Scalar end, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kFactory},
    {"arange.start_out(Scalar start, Scalar end, Scalar step=1, *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "start_step", OutRule::kFactory},
    {"baddbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, "
     "Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kExact},
    {"bitwise_xor.Scalar_Tensor_out(Scalar self, Tensor other, *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "Scalar_Tensor", OutRule::kCopy},
    {"bitwise_xor.Scalar_out(Tensor self, Scalar other, *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "Scalar", OutRule::kCast},
    {"bitwise_xor.Tensor_out(Tensor self, Tensor other, *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "Tensor", OutRule::kCast},
    {"clamp.Tensor_out(Tensor self, Tensor? min=None, Tensor? "
     "max=None, *, Tensor(a!) out) -> Tensor(a!)",
     "Tensor", OutRule::kCast},
    {"clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kExact},
    {"clamp_max.Tensor_out(Tensor self, Tensor max, *, Tensor(a!) "
     "out) -> Tensor(a!)",
     "Tensor", OutRule::kCast},
    {"clamp_max.out(Tensor self, Scalar max, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "", OutRule::kExact},
    {"clamp_min.Tensor_out(Tensor self, Tensor min, *, Tensor(a!) "
     "out) -> Tensor(a!)",
     "Tensor", OutRule::kCast},
    {"clamp_min.out(Tensor self, Scalar min, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "", OutRule::kExact},
    {"clone.out(Tensor self, *, MemoryFormat? memory_format=None, "
     "Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCopy},
    {"constant_pad_nd.out(Tensor self, int[] pad, Scalar value=0, *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCopy},
    {"convolution_backward.out(Tensor grad_output, Tensor input, "
     "Tensor weight, SymInt[]? bias_sizes, int[] stride, int[] "
     "padding, int[] dilation, bool transposed, int[] "
     "output_padding, int groups, bool[3] output_mask, *, Tensor(a!) "
     "out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), "
     "Tensor(b!), Tensor(c!))",
     "", OutRule::kCopy},
    {"copy.out(Tensor self, Tensor src, bool non_blocking=False, *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCopy},
    {"div.Scalar_mode_out(Tensor self, Scalar other, *, str? "
     "rounding_mode, Tensor(a!) out) -> Tensor(a!)",
     "Scalar_mode", OutRule::kCopy},
    {"div.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) "
     "-> Tensor(a!)",
     "Scalar", OutRule::kCopy},
    {"div.out_mode(Tensor self, Tensor other, *, str? rounding_mode, "
     "Tensor(a!) out) -> Tensor(a!)",
     "Tensor_mode", OutRule::kCast},
    {"dot.out(Tensor self, Tensor tensor, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "", OutRule::kExact},
    {"elu_backward.grad_input(Tensor grad_output, Scalar alpha, "
     "Scalar scale, Scalar input_scale, bool is_result, Tensor "
     "self_or_result, *, Tensor(a!) grad_input) -> Tensor(a!)",
     "", OutRule::kCast},
    {"embedding.out(Tensor weight, Tensor indices, int "
     "padding_idx=-1, bool scale_grad_by_freq=False, bool "
     "sparse=False, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCopy},
    {"embedding_dense_backward.out(Tensor grad_output, Tensor "
     "indices, SymInt num_weights, int padding_idx, bool "
     "scale_grad_by_freq, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCopy},
    {"empty_like.out(Tensor self, *, MemoryFormat? "
     "memory_format=None, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCopy},
    {"empty_strided.out(SymInt[] size, SymInt[] stride, *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCopy},
    {"eq.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "Scalar", OutRule::kCast},
    {"eq.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "Tensor", OutRule::kCast},
    {"eye.m_out(int n, int m, *, Tensor(a!) out) -> Tensor(a!)",
     "m", OutRule::kFactory,
     true},
    {"eye.out(int n, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kFactory,
     true},
    {"flip.out(Tensor self, int[] dims, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "", OutRule::kCopy},
    {"floor_divide.out(Tensor self, Tensor other, *, Tensor(a!) out) "
     "-> Tensor(a!)",
     "", OutRule::kCast},
    {"fmod.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) "
     "-> Tensor(a!)",
     "Scalar", OutRule::kCast},
    {"fmod.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) "
     "-> Tensor(a!)",
     "Tensor", OutRule::kCast},
    {"full.out(SymInt[] size, Scalar fill_value, *, Tensor(a!) out) "
     "-> Tensor(a!)",
     "", OutRule::kFactory,
     true},
    {"full_like.out(Tensor self, Scalar fill_value, *, MemoryFormat? "
     "memory_format=None, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kFactory},
    {"gather.out(Tensor self, int dim, Tensor index, *, bool "
     "sparse_grad=False, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kExact},
    {"ge.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "Scalar", OutRule::kCast},
    {"ge.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "Tensor", OutRule::kCast},
    {"gelu_backward.grad_input(Tensor grad_output, Tensor self, *, "
     "str approximate=\"none\", Tensor(a!) grad_input) -> Tensor(a!)",
     "", OutRule::kCast},
    {"gt.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "Scalar", OutRule::kCast},
    {"gt.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "Tensor", OutRule::kCast},
    {"hardtanh_backward.grad_input(Tensor grad_output, Tensor self, "
     "Scalar min_val, Scalar max_val, *, Tensor(a!) grad_input) -> "
     "Tensor(a!)",
     "", OutRule::kCast},
    {"index_put.out(Tensor self, Tensor?[] indices, Tensor values, "
     "bool accumulate=False, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCopy},
    {"isinf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCopy},
    {"isnan.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCopy},
    {"le.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "Scalar", OutRule::kCast},
    {"le.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "Tensor", OutRule::kCast},
    {"leaky_relu_backward.grad_input(Tensor grad_output, Tensor "
     "self, Scalar negative_slope, bool self_is_result, *, "
     "Tensor(a!) grad_input) -> Tensor(a!)",
     "", OutRule::kCast},
    {"logical_not.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCast},
    {"logical_or.out(Tensor self, Tensor other, *, Tensor(a!) out) "
     "-> Tensor(a!)",
     "", OutRule::kCast},
    {"logsumexp.out(Tensor self, int[1] dim, bool keepdim=False, *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kFloating},
    {"lt.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "Scalar", OutRule::kCast},
    {"lt.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "Tensor", OutRule::kCast},
    {"masked_fill.Scalar_out(Tensor self, Tensor mask, Scalar value, "
     "*, Tensor(a!) out) -> Tensor(a!)",
     "Scalar", OutRule::kCopy},
    {"masked_fill.Tensor_out(Tensor self, Tensor mask, Tensor value, "
     "*, Tensor(a!) out) -> Tensor(a!)",
     "Tensor", OutRule::kCopy},
    {"maximum.out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "", OutRule::kCast},
    {"minimum.out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "", OutRule::kCast},
    {"mul.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) "
     "-> Tensor(a!)",
     "Scalar", OutRule::kCopy},
    {"mv.out(Tensor self, Tensor vec, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "", OutRule::kExact},
    {"native_batch_norm.out(Tensor input, Tensor? weight, Tensor? "
     "bias, Tensor? running_mean, Tensor? running_var, bool "
     "training, float momentum, float eps, *, Tensor(a!) out, "
     "Tensor(b!) save_mean, Tensor(c!) save_invstd) -> (Tensor(a!), "
     "Tensor(b!), Tensor(c!))",
     "", OutRule::kExact},
    {"native_batch_norm_backward.out(Tensor grad_out, Tensor input, "
     "Tensor? weight, Tensor? running_mean, Tensor? running_var, "
     "Tensor? save_mean, Tensor? save_invstd, bool train, float eps, "
     "bool[3] output_mask, *, Tensor(a!) out0, Tensor(b!) out1, "
     "Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
     "", OutRule::kCopy},
    {"native_layer_norm.out(Tensor input, SymInt[] normalized_shape, "
     "Tensor? weight, Tensor? bias, float eps, *, Tensor(a!) out0, "
     "Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), "
     "Tensor(c!))",
     "", OutRule::kCopy},
    {"native_layer_norm_backward.out(Tensor grad_out, Tensor input, "
     "SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? "
     "weight, Tensor? bias, bool[3] output_mask, *, Tensor(a!) out0, "
     "Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), "
     "Tensor(c!))",
     "", OutRule::kCopy},
    {"ne.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "Scalar", OutRule::kCast},
    {"ne.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "Tensor", OutRule::kCast},
    {"new_empty.out(Tensor self, SymInt[] size, *, Tensor(a!) out) "
     "-> Tensor(a!)",
     "", OutRule::kCopy},
    {"new_empty_strided.out(Tensor self, SymInt[] size, SymInt[] "
     "stride, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCopy},
    {"new_full.out(Tensor self, SymInt[] size, Scalar fill_value, *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCopy},
    {"new_ones.out(Tensor self, SymInt[] size, *, Tensor(a!) out) "
     "-> Tensor(a!)",
     "", OutRule::kCopy},
    {"new_zeros.out(Tensor self, SymInt[] size, *, Tensor(a!) out) "
     "-> Tensor(a!)",
     "", OutRule::kCopy},
    {"nll_loss2d_backward.grad_input(Tensor grad_output, Tensor "
     "self, Tensor target, Tensor? weight, int reduction, int "
     "ignore_index, Tensor total_weight, *, Tensor(a!) grad_input) "
     "-> Tensor(a!)",
     "", OutRule::kExact,
     true},
    {"nll_loss2d_forward.output(Tensor self, Tensor target, Tensor? "
     "weight, int reduction, int ignore_index, *, Tensor(a!) output, "
     "Tensor(b!) total_weight) -> (Tensor(a!), Tensor(b!))",
     "", OutRule::kExact},
    {"nll_loss_backward.grad_input(Tensor grad_output, Tensor self, "
     "Tensor target, Tensor? weight, int reduction, int "
     "ignore_index, Tensor total_weight, *, Tensor(a!) grad_input) "
     "-> Tensor(a!)",
     "", OutRule::kExact},
    {"nll_loss_forward.output(Tensor self, Tensor target, Tensor? "
     "weight, int reduction, int ignore_index, *, Tensor(a!) output, "
     "Tensor(b!) total_weight) -> (Tensor(a!), Tensor(b!))",
     "", OutRule::kExact},
    {"norm.ScalarOpt_dtype_out(Tensor self, Scalar? p, *, ScalarType "
     "dtype, Tensor(a!) out) -> Tensor(a!)",
     "ScalarOpt_dtype", OutRule::kCopy},
    {"norm.Scalar_out(Tensor self, Scalar p=2, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "Scalar", OutRule::kCopy},
    {"norm.dtype_out(Tensor self, Scalar? p, int[1] dim, bool "
     "keepdim, *, ScalarType dtype, Tensor(a!) out) -> Tensor(a!)",
     "ScalarOpt_dim_dtype", OutRule::kFloating},
    {"norm.out(Tensor self, Scalar? p, int[1] dim, bool "
     "keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
     "ScalarOpt_dim", OutRule::kFloating},
    {"ones.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kFactory,
     true},
    {"ones_like.out(Tensor self, *, MemoryFormat? "
     "memory_format=None, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCopy},
    {"prod.int_out(Tensor self, int dim, bool keepdim=False, *, "
     "ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
     "dim_int", OutRule::kReduceInOutDtype},
    {"prod.out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) "
     "out) -> Tensor(a!)",
     "", OutRule::kCopy},
    {"rand.out(int[] size, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kFactory,
     true},
    {"rand_like.out(Tensor self, *, MemoryFormat? memory_format=None, "
     "Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kFactory},
    {"randint.low_out(int low, int high, int[] size, *, Tensor(a!) "
     "out) -> Tensor(a!)",
     "low", OutRule::kFactory,
     true},
    {"randint.out(int high, int[] size, *, Tensor(a!) out) -> "
     "Tensor(a!)",
     "", OutRule::kFactory,
     true},
    {"randint_like.low_dtype_out(Tensor self, int low, int high, *, "
     "MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)",
     "low_dtype", OutRule::kFactory},
    {"randint_like.out(Tensor self, int high, *, MemoryFormat? "
     "memory_format=None, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kFactory},
    {"randn_like.out(Tensor self, *, MemoryFormat? memory_format=None, "
     "Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kFactory},
    {"randperm.out(int n, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kFactory,
     true},
    {"repeat.out(Tensor self, SymInt[] repeats, *, Tensor(a!) out) "
     "-> Tensor(a!)",
     "", OutRule::kCopy},
    {"roll.out(Tensor self, int[1] shifts, int[1] dims=[], *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCopy},
    {"rsub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "Scalar", OutRule::kCopy},
    {"rsub.Tensor_out(Tensor self, Tensor other, *, Scalar alpha=1, "
     "Tensor(a!) out) -> Tensor(a!)",
     "Tensor", OutRule::kCopy},
    {"scalar_tensor.out(Scalar s, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCopy},
    {"scatter_add.out(Tensor self, int dim, Tensor index, Tensor "
     "src, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kExact},
    {"silu_backward.grad_input(Tensor grad_output, Tensor self, *, "
     "Tensor(a!) grad_input) -> Tensor(a!)",
     "", OutRule::kCast},
    {"sigmoid_backward.grad_input(Tensor grad_output, Tensor output, *, "
     "Tensor(a!) grad_input) -> Tensor(a!)",
     "", OutRule::kCast},
    {"softplus_backward.grad_input(Tensor grad_output, Tensor self, "
     "Scalar beta, Scalar threshold, *, Tensor(a!) grad_input) -> "
     "Tensor(a!)",
     "", OutRule::kCast},
    {"sub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, "
     "Tensor(a!) out) -> Tensor(a!)",
     "Scalar", OutRule::kCopy},
    {"tanh_backward.grad_input(Tensor grad_output, Tensor output, *, "
     "Tensor(a!) grad_input) -> Tensor(a!)",
     "", OutRule::kCast},
    {"threshold_backward.grad_input(Tensor grad_output, Tensor self, "
     "Scalar threshold, *, Tensor(a!) grad_input) -> Tensor(a!)",
     "", OutRule::kCast},
    {"unsafe_split.Tensor_out(Tensor self, int split_size, int "
     "dim=0, *, Tensor(a!)[] out) -> ()",
     "Tensor", OutRule::kCopy},
    {"unsafe_split_with_sizes.out(Tensor self, int[] split_sizes, "
     "int dim=0, *, Tensor(a!)[] out) -> ()",
     "", OutRule::kCopy},
    {"zeros.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kFactory,
     true},
    {"zeros_like.out(Tensor self, *, MemoryFormat? "
     "memory_format=None, Tensor(a!) out) -> Tensor(a!)",
     "", OutRule::kCopy},
};

// Where a functional argument comes from: an argument of the out overload
// (its index), or the out tensor's dtype or device, or its default.
struct Source {
  enum Kind { kArg, kOutDtype, kOutDevice, kDefault } kind = kDefault;
  size_t index = 0;       // kArg
  IValue default_value;   // kDefault
};

/// The boxed kernel of one out= overload. Thread safety: the plan is made
/// once, under std::call_once, on the first call; calls only read it.
class OutVariantKernel final : public OperatorKernel {
 public:
  explicit OutVariantKernel(const OutVariant& v) : variant_(v) {}

  void operator()(const OperatorHandle& op, DispatchKeySet, Stack* stack) {
    std::call_once(planned_, [&] { plan(op); });
    const size_t n = op.schema().arguments().size();
    TURNOUT_INTERNAL_ASSERT(stack->size() >= n, name_, ": stack too short");
    const size_t first = stack->size() - n;
    IValue* args = stack->data() + first;

    std::vector<Tensor> outs;
    for (size_t i : out_args_) appendTensors(args[i], "out", &outs);

    Stack call;
    call.reserve(sources_.size());
    for (const Source& s : sources_) {
      switch (s.kind) {
        case Source::kArg: {
          const IValue& v = args[s.index];
          if (variant_.rule == OutRule::kReduceInOutDtype &&
              s.index == dtype_arg_ && v.isNone()) {
            call.emplace_back(outs.front().scalar_type());
          } else {
            call.push_back(v);
          }
          break;
        }
        case Source::kOutDtype:
          call.emplace_back(outs.front().scalar_type());
          break;
        case Source::kOutDevice:
          call.emplace_back(outs.front().device());
          break;
        case Source::kDefault:
          call.push_back(s.default_value);
          break;
      }
    }
    {
      AutoDispatchBelowAutograd below;
      functional_->callBoxed(&call);
    }
    std::vector<Tensor> results;
    for (IValue& v : call) appendTensors(v, "result", &results);
    TURNOUT_CHECK(results.size() == outs.size(), ErrorKind::InvalidArgument,
                  name_, ": expected ", results.size(),
                  " out tensors, one per result, but got ", outs.size());

    // Every check before any write.
    for (size_t i = 0; i < outs.size(); ++i) check(outs[i], results[i], args);
    for (size_t i = 0; i < outs.size(); ++i) resize(outs[i], results[i]);
    {
      AutoDispatchBelowAutograd below;
      for (size_t i = 0; i < outs.size(); ++i) copy_(outs[i], results[i]);
    }

    std::vector<IValue> returns;
    if (has_returns_) {
      for (size_t i : out_args_) returns.push_back(args[i]);
    }
    stack->erase(stack->begin() + static_cast<std::ptrdiff_t>(first),
                 stack->end());
    for (IValue& r : returns) stack->push_back(std::move(r));
  }

 private:
  // Maps the functional overload's arguments to their sources. Throws
  // Internal when the table names an overload that does not fit.
  void plan(const OperatorHandle& op) {
    name_ = toString(op.operator_name());
    elementwise_ = variant_.rule == OutRule::kCast ||
                   name_.rfind("aten::clamp", 0) == 0;
    const auto& args = op.schema().arguments();
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].isWrite()) out_args_.push_back(i);
    }
    has_returns_ = !op.schema().returns().empty();
    const std::string base = op.operator_name().name;
    std::optional<OperatorHandle> f = Dispatcher::singleton().findSchema(
        OperatorName{base, variant_.functional});
    TURNOUT_INTERNAL_ASSERT(f.has_value(), name_, ": no functional overload ",
                            base, ".", variant_.functional);
    functional_ = f;
    for (const Argument& fa : f->schema().arguments()) {
      Source s;
      s.kind = Source::kDefault;
      bool found = false;
      for (size_t i = 0; i < args.size(); ++i) {
        if (!args[i].isWrite() && args[i].name() == fa.name()) {
          s.kind = Source::kArg;
          s.index = i;
          found = true;
          if (fa.name() == "dtype") dtype_arg_ = i;
        }
      }
      if (!found && variant_.rule == OutRule::kFactory &&
          (fa.name() == "dtype" || fa.name() == "device")) {
        s.kind = fa.name() == "dtype" ? Source::kOutDtype : Source::kOutDevice;
        found = true;
      }
      if (!found) {
        TURNOUT_INTERNAL_ASSERT(fa.default_value().has_value(), name_,
                                ": the functional argument ", fa.name(),
                                " has no source and no default");
        s.default_value = defaultToIValue(fa);
      }
      sources_.push_back(std::move(s));
    }
  }

  // Gives `out` the result's shape: keeps it (and its strides) when it
  // has it already, else warns (unless silent_resize) and resizes.
  void resize(const Tensor& out, const Tensor& result) const {
    const IntArrayRef sizes = result.sizes();
    if (out.sizes() == sizes) return;
    if (elementwise_ && !variant_.silent_resize) {
      // The result's layout (kernels/output_layout.h), as torch's.
      reduce_internal::resizeOutput(out, sizes, result.strides(),
                                    name_.c_str());
      return;
    }
    if (!variant_.silent_resize || out.numel() == 0) {
      reduce_internal::resizeOutput(out, sizes, name_.c_str());
      return;
    }
    // resizeOutput warns for an out with elements: seen with none, it
    // grows the storage (keeping its bytes) without a word. On a throw
    // the out gets its geometry back.
    TensorImpl* impl = out.unsafeGetTensorImpl();
    const DimVector old_sizes(out.sizes().begin(), out.sizes().end());
    const DimVector old_strides(out.strides().begin(), out.strides().end());
    const int64_t empty[] = {0};
    impl->set_sizes_contiguous(IntArrayRef(empty, 1));
    try {
      reduce_internal::resizeOutput(out, sizes, name_.c_str());
    } catch (...) {
      impl->set_sizes_and_strides(old_sizes, old_strides);
      throw;
    }
  }

  void appendTensors(const IValue& v, const char* what,
                     std::vector<Tensor>* ts) const {
    if (v.isTensor()) {
      TURNOUT_CHECK(v.toTensor().defined(), ErrorKind::InvalidArgument,
                    name_, ": expected a defined ", what,
                    " tensor, but got an undefined one");
      ts->push_back(v.toTensor());
    } else if (v.isTensorList()) {
      for (const Tensor& t : v.toTensorListRef()) {
        TURNOUT_CHECK(t.defined(), ErrorKind::InvalidArgument, name_,
                      ": expected defined ", what,
                      " tensors, but got an undefined one");
        ts->push_back(t);
      }
    }
  }

  // Throws, as torch 1.13 refuses it, when `out` cannot take `result`.
  void check(const Tensor& out, const Tensor& result,
             const IValue* args) const {
    const OutRule rule = variant_.rule;
    if (rule == OutRule::kCopy || rule == OutRule::kFactory) return;
    TURNOUT_CHECK(out.device() == result.device(), ErrorKind::InvalidArgument,
                  name_,
                  ": Expected all tensors to be on the same device, but found "
                  "at least two devices, ",
                  result.device(), " and ", out.device(),
                  "! (pass an out tensor on ", result.device(), ")");
    const ScalarType want = result.scalar_type();
    const ScalarType got = out.scalar_type();
    switch (rule) {
      case OutRule::kCast:
        TURNOUT_CHECK(canCast(want, got), ErrorKind::InvalidArgument, name_,
                      ": result type ", want,
                      " can't be cast to the desired output type ", got);
        break;
      case OutRule::kExact:
      case OutRule::kReduceInOutDtype:
        TURNOUT_CHECK(want == got, ErrorKind::InvalidArgument, name_,
                      ": Expected out tensor to have dtype ", want,
                      ", but got ", got, " instead");
        break;
      case OutRule::kBoolOrByte:
        TURNOUT_CHECK(got == ScalarType::Bool || got == ScalarType::Byte,
                      ErrorKind::InvalidArgument, name_,
                      ": only supports a Bool (or Byte) out tensor, got: ",
                      got);
        break;
      case OutRule::kFloating:
        TURNOUT_CHECK(isFloatingType(got), ErrorKind::InvalidArgument, name_,
                      ": Expected floating point type for the out tensor, "
                      "but got: ",
                      got);
        break;
      case OutRule::kCopy:
      case OutRule::kFactory:
        break;
    }
    // The result was computed aside, so any overlap gives the right
    // values; refused where torch refuses it.
    checkNoInternalOverlap(out, name_);
    for (const Source& s : sources_) {
      if (s.kind != Source::kArg || !args[s.index].isTensor()) continue;
      const Tensor& input = args[s.index].toTensor();
      if (input.defined()) checkNoPartialOverlap(out, input, name_);
    }
  }

  const OutVariant& variant_;
  std::once_flag planned_;
  // Set once by plan().
  std::string name_;
  // An elementwise (TensorIterator) operator, clamp's exact-dtype ones
  // included: a resized out takes its result's layout.
  bool elementwise_ = false;
  std::optional<OperatorHandle> functional_;
  std::vector<Source> sources_;
  std::vector<size_t> out_args_;
  size_t dtype_arg_ = static_cast<size_t>(-1);
  bool has_returns_ = false;
};

// The overload name of a schema: "eq.Scalar_out" of "eq.Scalar_out(...".
std::string_view schemaName(std::string_view schema) {
  return schema.substr(0, schema.find('('));
}

// ---- CompositeImplicitAutograd out= forms ------------------------------------------
// The out= overloads torch 1.13 writes over other operators rather than
// over their functional overload: a mode sees the operators they call, as
// torch's, and those refuse what torch's refuse (maximum.out's and
// nll_loss_forward.output's gradients through the autograd fallback, a
// resize_ of an out that requires grad by resize_'s Autograd kernel). Meta
// and CUDA come through the operators called.

template <class Sig>
TypedOperatorHandle<Sig> lookup(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

using ResizeSig = Tensor&(Tensor&, IntArrayRef, std::optional<MemoryFormat>);

// empty.out: out resized to `size`, its values left as they are.
Tensor& emptyOut(IntArrayRef size, std::optional<MemoryFormat> memory_format,
                 Tensor& out) {
  TURNOUT_CHECK(!memory_format.has_value(), ErrorKind::InvalidArgument,
                "empty.out(): 'memory_format' argument is incompatible with "
                "'out' tensor argument (an out keeps its own layout; drop "
                "memory_format, or call empty() without out=)");
  static const auto resize = lookup<ResizeSig>("aten::resize_", "");
  return resize.call(out, size, std::nullopt);
}

// randn.out: out resized to `size`, then filled by normal_(0, 1).
Tensor& randnOut(IntArrayRef size, Tensor& out) {
  static const auto resize = lookup<ResizeSig>("aten::resize_", "");
  static const OperatorHandle normal =
      Dispatcher::singleton().findSchemaOrThrow("aten::normal_", "");
  resize.call(out, size, std::nullopt);
  Stack stack{IValue(out), IValue(0.0), IValue(1.0), IValue()};
  normal.callBoxed(&stack);
  return out;
}

// max.out / min.out (the elementwise ones): maximum.out / minimum.out.
template <bool kMax>
Tensor& maxMinOut(const Tensor& self, const Tensor& other, Tensor& out) {
  static const auto op =
      lookup<Tensor&(const Tensor&, const Tensor&, Tensor&)>(
          kMax ? "aten::maximum" : "aten::minimum", "out");
  return op.call(self, other, out);
}

// nll_loss.out / nll_loss2d.out: the forward's out= overload, with a
// total_weight made here (in self's dtype, on its device) and dropped.
template <bool k2d>
Tensor& nllLossOut(const Tensor& self, const Tensor& target,
                   const std::optional<Tensor>& weight, int64_t reduction,
                   int64_t ignore_index, Tensor& out) {
  using Sig = std::tuple<Tensor&, Tensor&>(
      const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t,
      int64_t, Tensor&, Tensor&);
  static const auto forward = lookup<Sig>(
      k2d ? "aten::nll_loss2d_forward" : "aten::nll_loss_forward", "output");
  Tensor total_weight = empty({0}, TensorOptions()
                                       .dtype(self.scalar_type())
                                       .layout(Layout::Strided)
                                       .device(self.device()));
  forward.call(self, target, weight, reduction, ignore_index, out,
               total_weight);
  return out;
}

// Their schemas (torch 1.13's), defined with the table's.
constexpr const char* kCompositeOutSchemas[] = {
    "empty.out(SymInt[] size, *, MemoryFormat? memory_format=None, "
    "Tensor(a!) out) -> Tensor(a!)",
    "max.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    "min.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    "nll_loss.out(Tensor self, Tensor target, Tensor? weight=None, int "
    "reduction=1, int ignore_index=-100, *, Tensor(a!) out) -> Tensor(a!)",
    "nll_loss2d.out(Tensor self, Tensor target, Tensor? weight=None, int "
    "reduction=1, int ignore_index=-100, *, Tensor(a!) out) -> Tensor(a!)",
    "randn.out(int[] size, *, Tensor(a!) out) -> Tensor(a!)",
};

}  // namespace
}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);
  for (const turnout::OutVariant& v : turnout::kOutVariants) m.def(v.schema);
  for (const char* schema : turnout::kCompositeOutSchemas) m.def(schema);
}

TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  for (const turnout::OutVariant& v : turnout::kOutVariants) {
    m.impl(turnout::schemaName(v.schema),
           turnout::CppFunction::makeFromBoxedFunctor(
               std::make_unique<turnout::OutVariantKernel>(v)));
  }
}

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  using namespace turnout;  // NOLINT: the kernels above
  m.impl("empty.out", TURNOUT_FN(emptyOut));
  m.impl("max.out", TURNOUT_FN(maxMinOut<true>));
  m.impl("min.out", TURNOUT_FN(maxMinOut<false>));
  m.impl("nll_loss.out", TURNOUT_FN(nllLossOut<false>));
  m.impl("nll_loss2d.out", TURNOUT_FN(nllLossOut<true>));
  m.impl("randn.out", TURNOUT_FN(randnOut));
}
