// The operators that the TorchScript graphs of nn.MultiheadAttention call
// (scripted: the inlined F.multi_head_attention_forward and the fast path;
// traced: `head_dim = embed_dim // num_heads` on size tensors), with torch
// 1.13's schemas (issue 20 item 4):
//
// - div.Tensor_mode, div.Scalar_mode (rounding_mode None, "trunc",
//   "floor"): CompositeExplicitAutograd over div, floor_divide, trunc, sign
//   and abs; their Autograd kernels are in
//   kernels/autograd/attention_autograd.cc (a rounded quotient has zero
//   gradient, as torch's).
// - logical_or, logical_or_: CPU and Meta, broadcasting, Bool result (in
//   place keeps self's dtype); not differentiable.
// - baddbmm, constant_pad_nd (cat of constant blocks and narrow for
//   negative pads): CompositeExplicitAutograd as torch 1.13's (a Python
//   mode sees them, not their parts), with Autograd kernels in
//   kernels/autograd/attention_autograd.cc.
// - CompositeImplicitAutograd (gradients, Meta and other devices from the
//   operators they call): pad (mode "constant"; the other modes
//   are refused with NotImplemented), and _native_multi_head_attention,
//   nn.MultiheadAttention's fast path (batch first, query, key and value
//   of one shape; a key padding mask, mask_type 1, or none: the other mask
//   types are refused with NotImplemented; a row whose keys are all masked
//   is NaN, as torch 1.13's). Unlike torch 1.13's it is differentiable.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar.h"
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
#include "kernels/linalg.h"
#include "kernels/loops.h"
#include "kernels/mem_overlap.h"
#include "kernels/reduce.h"
#include "kernels/shape.h"
#include "kernels/shape_ops.h"
#include "kernels/tensor_utils.h"
#include "kernels/type_promotion.h"
#include "kernels/unary_math.h"

namespace turnout {
namespace {

template <class Sig>
TypedOperatorHandle<Sig> lookup(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

void checkDefined(const char* op, const Tensor& t, const char* what) {
  TURNOUT_CHECK(t.defined(), ErrorKind::InvalidArgument, op, ": expected ",
                what, " to be a defined tensor, but got an undefined one");
}

// ---- div with a rounding mode ------------------------------------------------

Tensor divTensorMode(const Tensor& self, const Tensor& other,
                     const std::optional<std::string>& mode) {
  static const auto floor_divide =
      lookup<Tensor(const Tensor&, const Tensor&)>("aten::floor_divide", "");
  if (!mode) return div(self, other);
  if (*mode == "floor") return floor_divide.call(self, other);
  TURNOUT_CHECK(*mode == "trunc", ErrorKind::InvalidArgument,
                "div expected rounding_mode to be one of None, 'trunc', or "
                "'floor' but found '",
                *mode, "'");
  checkDefined("div", self, "self");
  checkDefined("div", other, "other");
  const ScalarType common = resultType(self, other);
  if (isFloatingType(common)) return trunc(div(self, other));
  TURNOUT_CHECK(common != ScalarType::Bool, ErrorKind::NotImplemented,
                "\"div_trunc_cpu\" not implemented for 'Bool'");
  // Integers: C's truncating quotient, |a| // |b| with the sign of a * b
  // (floor_divide raises ZeroDivisionError as torch does).
  const Tensor q = floor_divide.call(abs(self), abs(other));
  return mul(q, mul(sign(self), sign(other)));
}

Tensor divScalarMode(const Tensor& self, const Scalar& other,
                     const std::optional<std::string>& mode) {
  static const auto op =
      lookup<Tensor(const Tensor&, const Tensor&,
                    const std::optional<std::string>&)>("aten::div",
                                                         "Tensor_mode");
  checkDefined("div", self, "self");
  return op.call(self,
                 scalar_tensor(other, resultType(self, other), self.device()),
                 mode);
}

// ---- logical_or ------------------------------------------------------------------

DimVector logicalOrSizes(const char* op, const Tensor& self,
                         const Tensor& other) {
  checkDefined(op, self, "self");
  checkDefined(op, other, "other");
  const bool self_scalar = self.dim() == 0 && self.is_cpu();
  const bool other_scalar = other.dim() == 0 && other.is_cpu();
  TURNOUT_CHECK(self.device() == other.device() || self_scalar || other_scalar,
                ErrorKind::InvalidArgument,
                "Expected all tensors to be on the same device, but found at "
                "least two devices, ",
                self.device(), " and ", other.device(), "!");
  return inferBroadcastSize(self.sizes(), other.sizes());
}

template <bool kCpu>
Tensor logicalOr(const Tensor& self, const Tensor& other) {
  const DimVector sizes = logicalOrSizes("logical_or", self, other);
  const Device device =
      self.dim() == 0 && self.is_cpu() ? other.device() : self.device();
  Tensor out = emptyTensor(sizes, ScalarType::Bool, device);
  if constexpr (kCpu) {
    if (out.numel() > 0) {
      cpuKernel(out, castTo(self, ScalarType::Bool),
                castTo(other, ScalarType::Bool),
                [](bool a, bool b) -> bool { return a || b; });
    }
  }
  return out;
}

template <bool kCpu>
Tensor& logicalOrInplace(Tensor& self, const Tensor& other) {
  const DimVector sizes = logicalOrSizes("logical_or_", self, other);
  TURNOUT_CHECK(self.sizes() == IntArrayRef(sizes), ErrorKind::InvalidArgument,
                "output with shape ", shapeString(self.sizes()),
                " doesn't match the broadcast shape ", shapeString(sizes));
  checkNoInternalOverlap(self, "logical_or_");
  if constexpr (kCpu) copyCast(self, logicalOr<true>(self, other));
  return self;
}

// ---- baddbmm ------------------------------------------------------------------------

Tensor baddbmmKernel(const Tensor& self, const Tensor& batch1,
                     const Tensor& batch2, const Scalar& beta,
                     const Scalar& alpha) {
  checkDefined("baddbmm", self, "self");
  Tensor prod = bmm(batch1, batch2);  // checks the batches
  const IntArrayRef out = prod.sizes();
  bool fits = self.dim() <= 3;
  for (int64_t i = 1; fits && i <= self.dim(); ++i) {
    const int64_t s = self.sizes()[self.dim() - i];
    fits = s == 1 || s == out[3 - i];
  }
  TURNOUT_CHECK(fits, ErrorKind::InvalidArgument,
                "baddbmm(): self of shape ", shapeString(self.sizes()),
                " cannot be broadcast to the shape of batch1 @ batch2, ",
                shapeString(out));
  if (!(alpha.isIntegral(true) && alpha.toLong() == 1)) prod = mul(prod, alpha);
  // beta == 0: self's values are not read (its NaN and inf do not
  // propagate), but it gets a zero gradient, as torch's: where() picks 0
  // everywhere.
  if (beta.isIntegral(true) ? beta.toLong() == 0 : beta.toDouble() == 0.0) {
    const Tensor none =
        zeros(self.sizes(), TensorOptions().dtype(ScalarType::Bool)
                                .device(self.device()));
    return add(prod, where(none, self, Scalar(0)));
  }
  const Tensor scaled =
      beta.isIntegral(true) && beta.toLong() == 1 ? self : mul(self, beta);
  return add(scaled, prod);
}

// ---- constant_pad_nd, pad ------------------------------------------------------------

Tensor constantPadNd(const Tensor& self, IntArrayRef pad,
                     const Scalar& value) {
  static const auto narrow =
      lookup<Tensor(const Tensor&, int64_t, int64_t, int64_t)>("aten::narrow",
                                                              "");
  checkDefined("constant_pad_nd", self, "self");
  const int64_t n = static_cast<int64_t>(pad.size());
  TURNOUT_CHECK(n % 2 == 0, ErrorKind::InvalidArgument,
                "Length of pad must be even but instead it equals ", n);
  TURNOUT_CHECK(n / 2 <= self.dim(), ErrorKind::InvalidArgument,
                "Length of pad should be no more than twice the number of "
                "dimensions of the input. Pad length is ",
                n, " while the input has ", self.dim(), " dimensions.");
  Tensor x = self;
  // pad = (last_left, last_right, second_last_left, ...).
  for (int64_t i = 0; i < n / 2; ++i) {
    const int64_t d = self.dim() - 1 - i;
    const int64_t left = pad[2 * i];
    const int64_t right = pad[2 * i + 1];
    const int64_t size = x.sizes()[d];
    TURNOUT_CHECK(size + left + right >= 0, ErrorKind::InvalidArgument,
                  "The input size ", size, ", plus negative padding ", left,
                  " and ", right,
                  " resulted in a negative output size, which is invalid. "
                  "Check dimension ",
                  d, " of your input.");
    if (left < 0) x = narrow.call(x, d, -left, x.sizes()[d] + left);
    if (right < 0) x = narrow.call(x, d, 0, x.sizes()[d] + right);
    std::vector<Tensor> parts;
    auto block = [&](int64_t width) {
      DimVector sizes(x.sizes().begin(), x.sizes().end());
      sizes[d] = width;
      return full(sizes, value,
                  TensorOptions().dtype(x.scalar_type()).device(x.device()));
    };
    if (left > 0) parts.push_back(block(left));
    parts.push_back(x);
    if (right > 0) parts.push_back(block(right));
    if (parts.size() > 1) x = cat(parts, d);
  }
  // A result that is the input itself would alias it; torch's is new.
  return x.is_same(self) ? clone(self) : x;
}

Tensor padKernel(const Tensor& self, IntArrayRef pad, std::string_view mode,
                 std::optional<double> value) {
  static const auto constant_pad_nd =
      lookup<Tensor(const Tensor&, IntArrayRef, const Scalar&)>(
          "aten::constant_pad_nd", "");
  if (mode == "constant") {
    return constant_pad_nd.call(self, pad, Scalar(value.value_or(0.0)));
  }
  TURNOUT_CHECK(!value.has_value(), ErrorKind::InvalidArgument,
                "Padding mode \"", mode,
                "\" doesn't take in value argument");
  TURNOUT_CHECK(mode == "reflect" || mode == "replicate" || mode == "circular",
                ErrorKind::InvalidArgument, "Unrecognised padding mode ", mode);
  TURNOUT_CHECK(false, ErrorKind::NotImplemented, "pad(): mode \"", mode,
                "\" is not implemented by turnout (only \"constant\"); pad "
                "with F.pad(x, pad, mode=\"constant\") or cat");
  return {};
}

// ---- _native_multi_head_attention ----------------------------------------------------

std::tuple<Tensor, Tensor> nativeMultiHeadAttention(
    const Tensor& query, const Tensor& key, const Tensor& value,
    int64_t embed_dim, int64_t num_head, const Tensor& qkv_weight,
    const Tensor& qkv_bias, const Tensor& proj_weight, const Tensor& proj_bias,
    const std::optional<Tensor>& mask, bool need_weights,
    bool average_attn_weights, std::optional<int64_t> mask_type) {
  constexpr const char* kOp = "_native_multi_head_attention";
  for (const auto& [t, what] :
       {std::pair<const Tensor&, const char*>{query, "query"},
        {key, "key"},
        {value, "value"},
        {qkv_weight, "qkv_weight"},
        {qkv_bias, "qkv_bias"},
        {proj_weight, "proj_weight"},
        {proj_bias, "proj_bias"}}) {
    checkDefined(kOp, t, what);
  }
  TURNOUT_CHECK(query.dim() == 3, ErrorKind::InvalidArgument, kOp,
                ": expected query to be 3-D (batch, sequence, embedding; "
                "batch first), got ",
                query.dim(), "-D");
  TURNOUT_CHECK(query.sizes() == key.sizes() && key.sizes() == value.sizes(),
                ErrorKind::InvalidArgument,
                "expected `query`/`key`/`value` shapes to match");
  TURNOUT_CHECK(query.sizes()[2] == embed_dim, ErrorKind::InvalidArgument,
                "passed-in embed_dim ", embed_dim,
                " didn't match last dim of query ", query.sizes()[2]);
  TURNOUT_CHECK(num_head > 0 && embed_dim % num_head == 0,
                ErrorKind::InvalidArgument,
                "`embed_dim` must divide evenly by `num_heads`");
  TURNOUT_CHECK(qkv_weight.dim() == 2 && qkv_weight.sizes()[0] == 3 * embed_dim &&
                    qkv_weight.sizes()[1] == embed_dim,
                ErrorKind::InvalidArgument, kOp,
                ": expected qkv_weight of shape [", 3 * embed_dim, ", ",
                embed_dim, "], got ", shapeString(qkv_weight.sizes()));
  TURNOUT_CHECK(qkv_bias.dim() == 1 && qkv_bias.sizes()[0] == 3 * embed_dim,
                ErrorKind::InvalidArgument, kOp,
                ": expected qkv_bias of shape [", 3 * embed_dim, "], got ",
                shapeString(qkv_bias.sizes()));
  const int64_t b = query.sizes()[0];
  const int64_t t = query.sizes()[1];
  const int64_t s = t;
  const int64_t dh = embed_dim / num_head;
  const std::vector<Tensor> w = chunk(qkv_weight, 3, 0);
  const std::vector<Tensor> bias = chunk(qkv_bias, 3, 0);
  // (B, L, D) -> (B, heads, L, dh)
  auto heads = [&](const Tensor& x, int64_t len) {
    return transpose(view(x, {b, len, num_head, dh}), 1, 2);
  };
  const Tensor q = heads(
      div(linear(query, w[0], bias[0]), std::sqrt(static_cast<double>(dh))), t);
  const Tensor k = heads(linear(key, w[1], bias[1]), s);
  const Tensor v = heads(linear(value, w[2], bias[2]), s);
  Tensor scores = matmul(q, transpose(k, -2, -1));  // (B, heads, T, S)
  if (mask.has_value() && mask->defined()) {
    TURNOUT_CHECK(mask_type.has_value(), ErrorKind::InvalidArgument,
                  "Mask Type should be defined");
    // nn.MultiheadAttention's fast path passes a key padding mask
    // (mask_type 1) or none.
    TURNOUT_CHECK(*mask_type == 1, ErrorKind::NotImplemented, kOp,
                  ": mask_type ", *mask_type,
                  " is not implemented by turnout; only a key padding mask "
                  "(mask_type 1, shape [batch, sequence]) is, as "
                  "nn.MultiheadAttention's fast path passes");
    TURNOUT_CHECK(mask->dim() == 2 && mask->sizes()[0] == b &&
                      mask->sizes()[1] == s,
                  ErrorKind::InvalidArgument, kOp,
                  ": a key padding mask (mask_type 1) has shape [", b, ", ", s,
                  "], got ", shapeString(mask->sizes()));
    // A mask of another dtype counts as bool (nonzero masks), as torch's.
    const Tensor m = mask->scalar_type() == ScalarType::Bool
                         ? *mask
                         : ne(*mask, Scalar(0));
    scores = masked_fill(scores, view(m, {b, 1, 1, s}),
                         -std::numeric_limits<double>::infinity());
  }
  // A row whose keys are all masked is NaN, as torch 1.13's.
  const Tensor attn = softmax(scores, -1);
  const Tensor ctx = reshape(transpose(matmul(attn, v), 1, 2), {b, t, embed_dim});
  Tensor out = linear(ctx, proj_weight, proj_bias);
  Tensor weights;  // undefined (None) without need_weights, as torch's
  if (need_weights && average_attn_weights) {
    const int64_t dims[] = {1};
    weights = mean(attn, dims);
  } else if (need_weights) {
    weights = attn;
  }
  return {out, weights};
}

}  // namespace
}  // namespace turnout

// ---- Registration
// ------------------------------------------------------------

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);  // torch's tags (kernels/aten_tags.h)
  m.def("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) "
        "-> Tensor");
  m.def("div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) "
        "-> Tensor");
  m.def("logical_or(Tensor self, Tensor other) -> Tensor");
  m.def("logical_or_(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  m.def(
      "baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
      "Scalar alpha=1) -> Tensor");
  m.def("constant_pad_nd(Tensor self, int[] pad, Scalar value=0) -> Tensor");
  m.def(
      "pad(Tensor self, int[] pad, str mode=\"constant\", float? value=None) "
      "-> Tensor");
  m.def(
      "_native_multi_head_attention(Tensor query, Tensor key, Tensor value, "
      "int embed_dim, int num_head, Tensor qkv_weight, Tensor qkv_bias, "
      "Tensor proj_weight, Tensor proj_bias, Tensor? mask=None, bool "
      "need_weights=True, bool average_attn_weights=True, int? "
      "mask_type=None) -> (Tensor, Tensor)");
}

TURNOUT_LIBRARY_IMPL(aten, CPU, m) {
  using namespace turnout;  // NOLINT: the kernels above
  m.impl("logical_or", TURNOUT_FN(logicalOr<true>));
  m.impl("logical_or_", TURNOUT_FN(logicalOrInplace<true>));
}
TURNOUT_LIBRARY_IMPL(aten, Meta, m) {
  using namespace turnout;  // NOLINT: the kernels above
  m.impl("logical_or", TURNOUT_FN(logicalOr<false>));
  m.impl("logical_or_", TURNOUT_FN(logicalOrInplace<false>));
}

// Gradients in kernels/autograd/attention_autograd.cc.
TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  using namespace turnout;  // NOLINT: the kernels above
  m.impl("div.Tensor_mode", TURNOUT_FN(divTensorMode));
  // As torch 1.13's: a Python mode sees these operators, not their parts.
  m.impl("div.Scalar_mode", TURNOUT_FN(divScalarMode));
  m.impl("baddbmm", TURNOUT_FN(baddbmmKernel));
  m.impl("constant_pad_nd", TURNOUT_FN(constantPadNd));
}

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  using namespace turnout;  // NOLINT: the kernels above
  m.impl("pad", TURNOUT_FN(padKernel));
  m.impl("_native_multi_head_attention", TURNOUT_FN(nativeMultiHeadAttention));
}
