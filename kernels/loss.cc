// The negative log-likelihood and cross-entropy losses of nn.h, with torch
// 1.13's schemas, errors and registrations:
//
//   cross_entropy_loss ─> log_softmax + nll_loss_nd     (CompositeImplicit)
//   nll_loss_nd ─> nll_loss (1-2 dims) | nll_loss2d (4 dims; others viewed
//                  as 4 dims)                             (CompositeImplicit)
//   nll_loss ─> nll_loss_forward, nll_loss2d ─> nll_loss2d_forward
//   nll_loss_forward, nll_loss2d_forward: CompositeExplicitAutograd (one
//       kernel for CPU, Meta and CUDA; gradient in autograd/nn_autograd.cc)
//   nll_loss_backward, nll_loss2d_backward: CompositeExplicitAutograd, as
//       torch 1.13's are backend kernels (double backward in
//       autograd/nn_autograd.cc)
//
// The forward kernels pick each row's target column through a one-hot mask
// (eq against arange, where, sum), so they run wherever those operators do.
// On CPU the targets are read first and one out of [0, C) that is not
// ignore_index is an IndexError ("Target 7 is out of bounds."), as torch's.
//
// reduction: 0 none, 1 mean (divided by the total weight of the targets
// that are not ignored), anything else sum, as torch's kernels read it.
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_join.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/operator_handle.h"
#include "kernels/aten_tags.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/indexing.h"
#include "kernels/nn.h"
#include "kernels/reduce.h"
#include "kernels/shape.h"

namespace turnout {
namespace {

template <class Sig>
TypedOperatorHandle<Sig> lookup(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

constexpr int64_t kReductionNone = 0;
constexpr int64_t kReductionMean = 1;

std::string shapeText(IntArrayRef s) {
  return "[" + absl::StrJoin(s, ", ") + "]";
}

bool present(const std::optional<Tensor>& t) {
  return t.has_value() && t->defined();
}

void checkDefined(const Tensor& t, const char* op, const char* arg) {
  TURNOUT_CHECK(t.defined(), ErrorKind::InvalidArgument, op, ": expected ",
                arg, " to be a defined tensor, but got an undefined one");
}

// Checks the dtypes and the weight; returns the number of classes.
int64_t checkCommon(const Tensor& self, const Tensor& target,
                    const std::optional<Tensor>& weight, int64_t class_dim) {
  TURNOUT_CHECK(target.scalar_type() == ScalarType::Long, ErrorKind::Type,
                "expected scalar type Long but found ",
                toString(target.scalar_type()));
  TURNOUT_CHECK(isFloatingType(self.scalar_type()), ErrorKind::NotImplemented,
                "\"nll_loss_out_frame\" not implemented for '",
                toString(self.scalar_type()), "'");
  const int64_t classes = self.size(class_dim);
  if (present(weight)) {
    TURNOUT_CHECK(weight->numel() == classes, ErrorKind::InvalidArgument,
                  "weight tensor should be defined either for all ", classes,
                  " classes or no classes but got weight tensor of shape: ",
                  shapeText(weight->sizes()));
    TURNOUT_CHECK(weight->scalar_type() == self.scalar_type(), ErrorKind::Type,
                  "expected scalar type ", toString(self.scalar_type()),
                  " but found ", toString(weight->scalar_type()));
  }
  return classes;
}

// Every target is ignore_index or a class in [0, classes). Meta: no values;
// CUDA: the targets are read back (a synchronisation, where torch's CUDA
// kernel stops the process with a device-side assert instead).
void checkTargetsInRange(const Tensor& target, int64_t classes,
                         int64_t ignore_index) {
  if (target.is_meta()) return;
  const Tensor t = contiguous(
      target.is_cpu() ? target : to(target, Device(DeviceType::CPU)));
  const int64_t* data = t.data_ptr<int64_t>();
  for (int64_t i = 0, n = t.numel(); i < n; ++i) {
    const int64_t v = data[i];
    TURNOUT_CHECK(v == ignore_index || (v >= 0 && v < classes),
                  ErrorKind::Index, "Target ", v, " is out of bounds.");
  }
}

struct Picked {
  Tensor valid;   // [M] bool: target != ignore_index
  Tensor onehot;  // [M, C] bool: column == target (none for ignored rows)
  Tensor w;       // [M] the weight of each row's target, 0 where ignored
};

// rows: [M, C] scores; t: [M] targets.
Picked pick(const Tensor& rows, const Tensor& t,
            const std::optional<Tensor>& weight, int64_t ignore_index) {
  Picked p;
  p.valid = ne(t, ignore_index);
  const Tensor safe = where(p.valid, t, zeros_like(t));
  const Tensor columns = arange(
      rows.size(1), TensorOptions(ScalarType::Long).device(rows.device()));
  p.onehot = eq(unsqueeze(safe, 1), columns);
  const Tensor zero = zeros_like(t, TensorOptions(rows.scalar_type()));
  if (present(weight)) {
    p.w = where(p.valid, index_select(reshape(*weight, {-1}), 0, safe), zero);
  } else {
    p.w = to(p.valid, rows.scalar_type());
  }
  return p;
}

// (output, total_weight) over rows [M, C] and targets [M]; a none reduction
// has `none_shape`.
// batched: total_weight of a none reduction is 0 (torch's; an unbatched
// input's is its target's weight).
std::tuple<Tensor, Tensor> nllFlat(const Tensor& rows, const Tensor& t,
                                   const std::optional<Tensor>& weight,
                                   int64_t reduction, int64_t ignore_index,
                                   IntArrayRef none_shape, bool batched) {
  const Picked p = pick(rows, t, weight, ignore_index);
  const Tensor picked =
      turnout::sum(where(p.onehot, rows, zeros_like(rows)), {1});
  const Tensor losses =
      where(p.valid, neg(mul(picked, p.w)), zeros_like(picked));
  const TensorOptions options =
      TensorOptions(rows.scalar_type()).device(rows.device());
  const Tensor total = turnout::sum(p.w);
  if (reduction == kReductionNone) {
    return {reshape(losses, none_shape), batched ? zeros({}, options) : total};
  }
  Tensor out = turnout::sum(losses);
  if (reduction == kReductionMean) out = div(out, total);
  return {out, total};
}

// The gradient of nllFlat's output with respect to rows ([M, C]).
Tensor nllFlatBackward(const Tensor& grad_output, const Tensor& rows,
                       const Tensor& t, const std::optional<Tensor>& weight,
                       int64_t reduction, int64_t ignore_index,
                       const Tensor& total_weight) {
  TURNOUT_CHECK(grad_output.scalar_type() == rows.scalar_type(),
                ErrorKind::Type, "expected scalar type ",
                toString(rows.scalar_type()), " but found ",
                toString(grad_output.scalar_type()));
  const Picked p = pick(rows, t, weight, ignore_index);
  Tensor coef = neg(p.w);  // [M]
  if (reduction == kReductionNone) {
    TURNOUT_CHECK(grad_output.numel() == t.numel(), ErrorKind::InvalidArgument,
                  "nll_loss_backward: grad_output should have ", t.numel(),
                  " elements for reduction='none', got ",
                  grad_output.numel());
    coef = mul(coef, reshape(grad_output, {-1}));
  } else {
    TURNOUT_CHECK(grad_output.numel() == 1, ErrorKind::InvalidArgument,
                  "nll_loss_backward: expected a single-element grad_output, "
                  "got one of shape ",
                  shapeText(grad_output.sizes()));
    coef = mul(coef, reshape(grad_output, {}));
    if (reduction == kReductionMean) coef = div(coef, total_weight);
  }
  return where(p.onehot, unsqueeze(coef, 1), zeros_like(rows));
}

// ---- nll_loss (1-D or 2-D input) ------------------------------------------------

void checkNll(const Tensor& self, const Tensor& target,
              const std::optional<Tensor>& weight, int64_t* classes) {
  checkDefined(self, "nll_loss_forward", "self");
  checkDefined(target, "nll_loss_forward", "target");
  TURNOUT_CHECK(self.dim() > 0 && self.dim() <= 2, ErrorKind::InvalidArgument,
                "input tensor should be 1D or 2D");
  TURNOUT_CHECK(target.dim() <= 1, ErrorKind::InvalidArgument,
                "0D or 1D target tensor expected, multi-target not supported");
  const bool no_batch = self.dim() == 1 && target.dim() == 0;
  TURNOUT_CHECK(no_batch || self.size(0) == target.size(0),
                ErrorKind::InvalidArgument, "size mismatch (got input: ",
                shapeText(self.sizes()), ", target: ",
                shapeText(target.sizes()), ")");
  *classes = checkCommon(self, target, weight, self.dim() - 1);
}

std::tuple<Tensor, Tensor> nllLossForward(const Tensor& self,
                                          const Tensor& target,
                                          const std::optional<Tensor>& weight,
                                          int64_t reduction,
                                          int64_t ignore_index) {
  int64_t classes = 0;
  checkNll(self, target, weight, &classes);
  checkTargetsInRange(target, classes, ignore_index);
  const Tensor rows = self.dim() == 1 ? unsqueeze(self, 0) : self;
  const std::vector<int64_t> none_shape =
      self.dim() == 1 ? std::vector<int64_t>{}
                      : std::vector<int64_t>{self.size(0)};
  return nllFlat(rows, reshape(target, {-1}), weight, reduction, ignore_index,
                 none_shape, /*batched=*/self.dim() == 2);
}

Tensor nllLossBackward(const Tensor& grad_output, const Tensor& self,
                       const Tensor& target,
                       const std::optional<Tensor>& weight, int64_t reduction,
                       int64_t ignore_index, const Tensor& total_weight) {
  checkDefined(grad_output, "nll_loss_backward", "grad_output");
  checkDefined(total_weight, "nll_loss_backward", "total_weight");
  int64_t classes = 0;
  checkNll(self, target, weight, &classes);
  const Tensor rows = self.dim() == 1 ? unsqueeze(self, 0) : self;
  const Tensor grad =
      nllFlatBackward(grad_output, rows, reshape(target, {-1}), weight,
                      reduction, ignore_index, total_weight);
  return reshape(grad, self.sizes());
}

Tensor nllLoss(const Tensor& self, const Tensor& target,
               const std::optional<Tensor>& weight, int64_t reduction,
               int64_t ignore_index) {
  return std::get<0>(
      nll_loss_forward(self, target, weight, reduction, ignore_index));
}

// ---- nll_loss2d (N, C, H, W input, N, H, W target) ----------------------------------

void checkNll2d(const Tensor& self, const Tensor& target,
                const std::optional<Tensor>& weight, int64_t* classes) {
  checkDefined(self, "nll_loss2d_forward", "self");
  checkDefined(target, "nll_loss2d_forward", "target");
  TURNOUT_CHECK(target.dim() == 3, ErrorKind::InvalidArgument,
                "only batches of spatial targets supported (3D tensors) but "
                "got targets of dimension: ",
                target.dim());
  TURNOUT_CHECK(self.dim() == 4, ErrorKind::InvalidArgument,
                "only batches of spatial inputs supported (4D tensors), but "
                "got input of dimension: ",
                self.dim());
  TURNOUT_CHECK(self.size(0) == target.size(0) &&
                    self.size(2) == target.size(1) &&
                    self.size(3) == target.size(2),
                ErrorKind::InvalidArgument,
                "input and target batch or spatial sizes don't match: target ",
                shapeText(target.sizes()), ", input ", shapeText(self.sizes()));
  *classes = checkCommon(self, target, weight, 1);
}

// [N, C, H, W] -> [N H W, C].
Tensor channelsLast(const Tensor& self) {
  return reshape(permute(self, {0, 2, 3, 1}), {-1, self.size(1)});
}

std::tuple<Tensor, Tensor> nllLoss2dForward(const Tensor& self,
                                            const Tensor& target,
                                            const std::optional<Tensor>& weight,
                                            int64_t reduction,
                                            int64_t ignore_index) {
  int64_t classes = 0;
  checkNll2d(self, target, weight, &classes);
  checkTargetsInRange(target, classes, ignore_index);
  return nllFlat(channelsLast(self), reshape(target, {-1}), weight, reduction,
                 ignore_index, target.sizes(), /*batched=*/true);
}

Tensor nllLoss2dBackward(const Tensor& grad_output, const Tensor& self,
                         const Tensor& target,
                         const std::optional<Tensor>& weight,
                         int64_t reduction, int64_t ignore_index,
                         const Tensor& total_weight) {
  checkDefined(grad_output, "nll_loss2d_backward", "grad_output");
  checkDefined(total_weight, "nll_loss2d_backward", "total_weight");
  int64_t classes = 0;
  checkNll2d(self, target, weight, &classes);
  const Tensor grad =
      nllFlatBackward(grad_output, channelsLast(self), reshape(target, {-1}),
                      weight, reduction, ignore_index, total_weight);
  const Tensor nhwc = reshape(
      grad, {self.size(0), self.size(2), self.size(3), self.size(1)});
  return contiguous(permute(nhwc, {0, 3, 1, 2}));
}

Tensor nllLoss2d(const Tensor& self, const Tensor& target,
                 const std::optional<Tensor>& weight, int64_t reduction,
                 int64_t ignore_index) {
  return std::get<0>(
      nll_loss2d_forward(self, target, weight, reduction, ignore_index));
}

// ---- nll_loss_nd, cross_entropy_loss ---------------------------------------------

Tensor nllLossNd(const Tensor& self, const Tensor& target,
                 const std::optional<Tensor>& weight, int64_t reduction,
                 int64_t ignore_index) {
  checkDefined(self, "nll_loss_nd", "self");
  checkDefined(target, "nll_loss_nd", "target");
  TURNOUT_CHECK(self.dim() >= 1, ErrorKind::InvalidArgument,
                "Expected 1 or more dimensions (got ", self.dim(), ")");
  TURNOUT_CHECK(self.dim() == 1 ||
                    (target.dim() >= 1 && self.size(0) == target.size(0)),
                ErrorKind::InvalidArgument, "Expected input batch_size (",
                self.size(0), ") to match target batch_size (",
                target.dim() >= 1 ? target.size(0) : 0, ").");
  if (self.dim() <= 2) {
    return nllLoss(self, target, weight, reduction, ignore_index);
  }
  if (self.dim() == 4) {
    return nllLoss2d(self, target, weight, reduction, ignore_index);
  }
  // 3 or 5+ dims: viewed as [N, C, 1, rest] against [N, 1, rest].
  const int64_t n = self.size(0);
  std::vector<int64_t> out_size{n};
  for (int64_t d = 2; d < self.dim(); ++d) out_size.push_back(self.size(d));
  const IntArrayRef target_rest = target.sizes().subspan(1);
  TURNOUT_CHECK(target_rest == IntArrayRef(out_size).subspan(1),
                ErrorKind::InvalidArgument, "Expected target size ",
                shapeText(out_size), ", got ", shapeText(target.sizes()));
  Tensor input = contiguous(self);
  Tensor tgt = contiguous(target);
  if (n > 0) {
    input = reshape(input, {n, self.size(1), 1, -1});
    tgt = reshape(tgt, {n, 1, -1});
  } else {
    input = reshape(input, {n, self.size(1), 1, 0});
    tgt = reshape(tgt, {n, 1, 0});
  }
  const Tensor out = nllLoss2d(input, tgt, weight, reduction, ignore_index);
  return reduction == kReductionNone ? reshape(out, out_size) : out;
}

Tensor crossEntropyLoss(const Tensor& self, const Tensor& target,
                        const std::optional<Tensor>& weight, int64_t reduction,
                        int64_t ignore_index, double label_smoothing) {
  checkDefined(self, "cross_entropy_loss", "self");
  checkDefined(target, "cross_entropy_loss", "target");
  TURNOUT_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0,
                ErrorKind::InvalidArgument,
                "label_smoothing must be between 0.0 and 1.0. Got: ",
                label_smoothing);
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  if (self.dim() >= 1 && self.sizes() == target.sizes()) {
    // Class probabilities.
    TURNOUT_CHECK(isFloatingType(target.scalar_type()), ErrorKind::Type,
                  "Expected floating point type for target with class "
                  "probabilities, got ",
                  toString(target.scalar_type()));
    TURNOUT_CHECK(ignore_index < 0, ErrorKind::InvalidArgument,
                  "ignore_index is not supported for floating point target");
    const int64_t classes = self.size(class_dim);
    const Tensor logp = log_softmax(self, class_dim, self.scalar_type());
    Tensor probs = target;
    if (label_smoothing > 0) {
      probs = add(mul(target, 1 - label_smoothing),
                  label_smoothing / static_cast<double>(classes));
    }
    Tensor prod = mul(logp, probs);
    if (present(weight)) {
      TURNOUT_CHECK(weight->dim() == 1 && weight->size(0) == classes,
                    ErrorKind::InvalidArgument,
                    "cross_entropy_loss: weight should have one element per "
                    "class (", classes, "), got shape ",
                    shapeText(weight->sizes()));
      std::vector<int64_t> shape(self.dim(), 1);
      shape[class_dim] = classes;
      prod = mul(prod, view(*weight, shape));
    }
    const Tensor loss = neg(turnout::sum(prod, {class_dim}));
    if (reduction == kReductionNone) return loss;
    if (reduction == kReductionMean) {
      // Divided by the number of samples (elements over classes).
      return div(turnout::sum(loss),
                 static_cast<double>(classes == 0 ? 0 : self.numel() / classes));
    }
    return turnout::sum(loss);
  }
  const Tensor logp = log_softmax(self, class_dim, self.scalar_type());
  static const auto nd =
      lookup<Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&,
                    int64_t, int64_t)>("aten::nll_loss_nd", "");
  const Tensor nll = nd.call(logp, target, weight, reduction, ignore_index);
  if (label_smoothing <= 0) return nll;
  // Index targets with smoothing: (1 - ls) nll + ls / C * the loss against
  // the uniform distribution (weighted, ignored targets left out).
  const int64_t classes = self.size(class_dim);
  Tensor prod = logp;
  if (present(weight)) {
    std::vector<int64_t> shape(self.dim(), 1);
    shape[class_dim] = classes;
    prod = mul(prod, view(*weight, shape));
  }
  const Tensor keep = ne(target, ignore_index);
  const Tensor smooth_all = neg(turnout::sum(prod, {class_dim}));
  const Tensor smooth = where(keep, smooth_all, zeros_like(smooth_all));
  Tensor smooth_red;
  if (reduction == kReductionNone) {
    smooth_red = smooth;
  } else if (reduction == kReductionMean) {
    if (present(weight)) {
      const Tensor safe = where(keep, target, zeros_like(target));
      const Tensor picked = reshape(
          index_select(*weight, 0, reshape(safe, {-1})), target.sizes());
      const Tensor w = where(
          keep, picked, zeros_like(target, TensorOptions(self.scalar_type())));
      smooth_red = div(turnout::sum(smooth), turnout::sum(w));
    } else {
      smooth_red = div(turnout::sum(smooth),
                       turnout::sum(to(keep, self.scalar_type())));
    }
  } else {
    smooth_red = turnout::sum(smooth);
  }
  return add(mul(nll, 1 - label_smoothing),
             mul(smooth_red, label_smoothing / static_cast<double>(classes)));
}

}  // namespace

std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self,
                                            const Tensor& target,
                                            const std::optional<Tensor>& weight,
                                            int64_t reduction,
                                            int64_t ignore_index) {
  static const auto op = lookup<std::tuple<Tensor, Tensor>(
      const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t,
      int64_t)>("aten::nll_loss_forward", "");
  return op.call(self, target, weight, reduction, ignore_index);
}

Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self,
                         const Tensor& target,
                         const std::optional<Tensor>& weight, int64_t reduction,
                         int64_t ignore_index, const Tensor& total_weight) {
  static const auto op = lookup<Tensor(
      const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&,
      int64_t, int64_t, const Tensor&)>("aten::nll_loss_backward", "");
  return op.call(grad_output, self, target, weight, reduction, ignore_index,
                 total_weight);
}

std::tuple<Tensor, Tensor> nll_loss2d_forward(
    const Tensor& self, const Tensor& target,
    const std::optional<Tensor>& weight, int64_t reduction,
    int64_t ignore_index) {
  static const auto op = lookup<std::tuple<Tensor, Tensor>(
      const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t,
      int64_t)>("aten::nll_loss2d_forward", "");
  return op.call(self, target, weight, reduction, ignore_index);
}

Tensor nll_loss2d_backward(const Tensor& grad_output, const Tensor& self,
                           const Tensor& target,
                           const std::optional<Tensor>& weight,
                           int64_t reduction, int64_t ignore_index,
                           const Tensor& total_weight) {
  static const auto op = lookup<Tensor(
      const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&,
      int64_t, int64_t, const Tensor&)>("aten::nll_loss2d_backward", "");
  return op.call(grad_output, self, target, weight, reduction, ignore_index,
                 total_weight);
}

Tensor cross_entropy_loss(const Tensor& self, const Tensor& target,
                          const std::optional<Tensor>& weight,
                          int64_t reduction, int64_t ignore_index,
                          double label_smoothing) {
  static const auto op =
      lookup<Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&,
                    int64_t, int64_t, double)>("aten::cross_entropy_loss", "");
  return op.call(self, target, weight, reduction, ignore_index,
                 label_smoothing);
}

}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);
  m.def(
      "nll_loss_nd(Tensor self, Tensor target, Tensor? weight=None, int "
      "reduction=1, int ignore_index=-100) -> Tensor");
  m.def(
      "nll_loss(Tensor self, Tensor target, Tensor? weight=None, int "
      "reduction=1, int ignore_index=-100) -> Tensor");
  m.def(
      "nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int "
      "reduction, int ignore_index) -> (Tensor output, Tensor total_weight)");
  m.def(
      "nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, "
      "Tensor? weight, int reduction, int ignore_index, Tensor total_weight) "
      "-> Tensor");
  m.def(
      "nll_loss2d(Tensor self, Tensor target, Tensor? weight=None, int "
      "reduction=1, int ignore_index=-100) -> Tensor");
  m.def(
      "nll_loss2d_forward(Tensor self, Tensor target, Tensor? weight, int "
      "reduction, int ignore_index) -> (Tensor output, Tensor total_weight)");
  m.def(
      "nll_loss2d_backward(Tensor grad_output, Tensor self, Tensor target, "
      "Tensor? weight, int reduction, int ignore_index, Tensor total_weight) "
      "-> Tensor");
  m.def(
      "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, "
      "int reduction=1, int ignore_index=-100, float label_smoothing=0.) -> "
      "Tensor");
}

TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("nll_loss_forward", TURNOUT_FN(turnout::nllLossForward));
  m.impl("nll_loss2d_forward", TURNOUT_FN(turnout::nllLoss2dForward));
  // As torch 1.13's (backend kernels there): a Python mode sees them whole;
  // their double-backward nodes are in autograd/nn_autograd.cc.
  m.impl("nll_loss_backward", TURNOUT_FN(turnout::nllLossBackward));
  m.impl("nll_loss2d_backward", TURNOUT_FN(turnout::nllLoss2dBackward));
}

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("nll_loss_nd", TURNOUT_FN(turnout::nllLossNd));
  m.impl("nll_loss", TURNOUT_FN(turnout::nllLoss));
  m.impl("nll_loss2d", TURNOUT_FN(turnout::nllLoss2d));
  m.impl("cross_entropy_loss", TURNOUT_FN(turnout::crossEntropyLoss));
}
