// The Autograd kernels of the operators of kernels/shape_ops.h and
// kernels/indexing.h, registered at the Autograd alias key the way
// autograd_kernels.cc registers the others: decide whether to record, run
// the operator below autograd, record a FunctionNode with the formula.
//
// Operators that return several views (split.Tensor, split_with_sizes,
// unbind.int) record one node per piece, each a view of `self` whose
// gradient is the piece's gradient written into zeros of self's shape (the
// pieces' gradients add up in self's). unsafe_split's pieces are recorded
// the same way but as results, not views, so that they may be modified in
// place (torch's lstm_cell does). as_strided's gradient assumes that
// self's own elements do not overlap (no expanded input), which is every
// case but torch's most general one.
//
// chunk, split.sizes, flatten, where's Scalar overloads and where(condition)
// are CompositeImplicitAutograd: their gradients come from the operators they
// call. nonzero is not differentiable.
#include <optional>
#include <utility>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "kernels/autograd/function_node.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/indexing.h"
#include "kernels/shape.h"
#include "kernels/shape_ops.h"
#include "kernels/strided_walk.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace autograd {
namespace {

using detail::checkInplaceAllowed;
using detail::record;
using detail::shouldRecord;
using F = FunctionNode;

using detail::belowAutograd;
using detail::writeInplace;

TensorOptions optionsOf(const Tensor& g) {
  return TensorOptions(g.scalar_type()).device(g.device());
}

DimVector sizesOf(const Tensor& t) {
  return DimVector(t.sizes().begin(), t.sizes().end());
}

// ---- Several views -----------------------------------------------------------

// Records one view node per piece: piece i covers [starts[i], starts[i] +
// pieces[i].size(dim)) of `dim` (or, for unbind, index i).
// `extra(node)` adds each node's saved values (torch's names). `views`:
// false for unsafe_split's pieces (results that may be modified in place, as
// torch's).
template <class Extra>
void recordPieces(const char* name, const Tensor& self,
                  const std::vector<Tensor>& pieces, int64_t dim, bool selects,
                  Extra extra, bool views = true) {
  const DimVector sizes = sizesOf(self);
  int64_t start = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const int64_t at = selects ? static_cast<int64_t>(i) : start;
    const int64_t len = selects ? 1 : pieces[i].size(dim);
    Node* node = record(
        name, {self}, pieces[i],
        [sizes, dim, at, len, selects](const F&, const Tensor& g) {
          return variable_list{detail::viewBackward(
              selects ? "SelectBackwardBackward0" : "SliceBackwardBackward0", g,
              sizes, [=](const Tensor& z) {
                return selects ? select(z, dim, at)
                               : slice(z, dim, at, at + len, 1);
              })};
        },
        /*is_view=*/views);
    if (node != nullptr) extra(node);
    start += len;
  }
}

std::vector<Tensor> splitKernel(const Tensor& self, int64_t split_size,
                                int64_t dim) {
  const bool rec = shouldRecord("split", self);
  std::vector<Tensor> out =
      belowAutograd([&] { return split(self, split_size, dim); });
  for (const Tensor& piece : out) setViewBase(piece, self);
  if (rec) {
    recordPieces("SplitBackward0", self, out, maybeWrapDim(dim, self.dim()),
                 false, [&](Node* n) {
                   n->addSaved("dim", IValue(dim));  // as given
                   n->addSaved("self_sizes", IValue(self.sizes()));
                   n->addSaved("split_size", IValue(split_size));
                 });
  }
  return out;
}

std::vector<Tensor> splitWithSizesKernel(const Tensor& self,
                                         IntArrayRef split_sizes, int64_t dim) {
  const bool rec = shouldRecord("split_with_sizes", self);
  std::vector<Tensor> out =
      belowAutograd([&] { return split_with_sizes(self, split_sizes, dim); });
  for (const Tensor& piece : out) setViewBase(piece, self);
  if (rec) {
    recordPieces("SplitWithSizesBackward0", self, out,
                 maybeWrapDim(dim, self.dim()), false, [&](Node* n) {
                   n->addSaved("dim", IValue(dim));
                   n->addSaved("self_sizes", IValue(self.sizes()));
                   n->addSaved("split_sizes", IValue(split_sizes));
                 });
  }
  return out;
}

std::vector<Tensor> unsafeSplitKernel(const Tensor& self, int64_t split_size,
                                      int64_t dim) {
  const bool rec = shouldRecord("unsafe_split", self);
  std::vector<Tensor> out =
      belowAutograd([&] { return unsafe_split(self, split_size, dim); });
  if (rec) {
    recordPieces(
        "UnsafeSplitBackward0", self, out, maybeWrapDim(dim, self.dim()),
        false,
        [&](Node* n) {
          n->addSaved("dim", IValue(dim));  // as given
          n->addSaved("self_sizes", IValue(self.sizes()));
          n->addSaved("split_size", IValue(split_size));
        },
        /*views=*/false);
  }
  return out;
}

std::vector<Tensor> unsafeSplitWithSizesKernel(const Tensor& self,
                                               IntArrayRef split_sizes,
                                               int64_t dim) {
  const bool rec = shouldRecord("unsafe_split_with_sizes", self);
  std::vector<Tensor> out = belowAutograd(
      [&] { return unsafe_split_with_sizes(self, split_sizes, dim); });
  if (rec) {
    recordPieces(
        "UnsafeSplitWithSizesBackward0", self, out,
        maybeWrapDim(dim, self.dim()), false,
        [&](Node* n) {
          n->addSaved("dim", IValue(dim));
          n->addSaved("self_sizes", IValue(self.sizes()));
          n->addSaved("split_sizes", IValue(split_sizes));
        },
        /*views=*/false);
  }
  return out;
}

std::vector<Tensor> unbindKernel(const Tensor& self, int64_t dim) {
  const bool rec = shouldRecord("unbind", self);
  std::vector<Tensor> out = belowAutograd([&] { return unbind(self, dim); });
  for (const Tensor& piece : out) setViewBase(piece, self);
  if (rec) {
    recordPieces("UnbindBackward0", self, out, maybeWrapDim(dim, self.dim()),
                 true, [dim](Node* n) { n->addSaved("dim", IValue(dim)); });
  }
  return out;
}

// ---- Views -------------------------------------------------------------------

Tensor diagonalKernel(const Tensor& self, int64_t offset, int64_t dim1,
                      int64_t dim2) {
  const bool rec = shouldRecord("diagonal", self);
  Tensor out = belowAutograd([&] { return diagonal(self, offset, dim1, dim2); });
  setViewBase(out, self);
  if (rec) {
    const DimVector sizes = sizesOf(self);
    Node* node = record(
        "DiagonalBackward0", {self}, out,
        [sizes, offset, dim1, dim2](const F&, const Tensor& g) {
          return variable_list{detail::viewBackward(
              "DiagonalBackwardBackward0", g, sizes, [=](const Tensor& z) {
                return diagonal(z, offset, dim1, dim2);
              })};
        },
        /*is_view=*/true);
    if (node != nullptr) {
      node->addSaved("dim1", IValue(dim1));
      node->addSaved("dim2", IValue(dim2));
      node->addSaved("offset", IValue(offset));
      node->addSaved("self_sym_sizes", IValue(self.sizes()));
    }
  }
  return out;
}

// The largest element offset a geometry reaches (sizes all > 0).
int64_t lastOffset(IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  for (size_t d = 0; d < sizes.size(); ++d) offset += (sizes[d] - 1) * strides[d];
  return offset;
}

Tensor asStridedKernel(const Tensor& self, IntArrayRef size,
                       IntArrayRef stride,
                       std::optional<int64_t> storage_offset) {
  const bool rec = shouldRecord("as_strided", self);
  Tensor out = belowAutograd(
      [&] { return as_strided(self, size, stride, storage_offset); });
  setViewBase(out, self);
  if (rec) {
    const DimVector in_sizes = sizesOf(self);
    const DimVector in_strides(self.strides().begin(), self.strides().end());
    const int64_t in_offset = self.storage_offset();
    const DimVector out_sizes = sizesOf(out);
    const DimVector out_strides(out.strides().begin(), out.strides().end());
    const int64_t out_offset = out.storage_offset();
    Node* node = record(
        "AsStridedBackward0", {self}, out,
        [=](const F&, const Tensor& g) {
          if (numelOf(in_sizes) == 0 || numelOf(out_sizes) == 0) {
            return variable_list{zeros(in_sizes, optionsOf(g))};
          }
          // Scatter-add g into a flat buffer over the storage both
          // geometries span, then read self's geometry out of it.
          const int64_t lo = std::min(in_offset, out_offset);
          const int64_t hi =
              std::max(lastOffset(in_sizes, in_strides, in_offset),
                       lastOffset(out_sizes, out_strides, out_offset));
          Tensor flat = zeros({hi - lo + 1}, optionsOf(g));
          Tensor pos = emptyTensor(out_sizes, ScalarType::Long,
                                   Device(DeviceType::CPU));
          int64_t* p = static_cast<int64_t*>(pos.data_ptr());
          forEachOffset(out_sizes, out_strides, out_strides,
                        [&](int64_t o, int64_t) { *p++ = o + out_offset - lo; });
          index_put_(flat, {std::optional<Tensor>(pos)}, g, true);
          return variable_list{
              clone(as_strided(flat, in_sizes, in_strides, in_offset - lo),
                    MemoryFormat::Contiguous)};
        },
        /*is_view=*/true);
    if (node != nullptr) {
      node->addSaved("size", IValue(size));
      node->addSaved("storage_offset",
                     storage_offset ? IValue(*storage_offset) : IValue());
      node->addSaved("stride", IValue(stride));
    }
  }
  return out;
}

// lift_fresh returns its input itself. Meant for fresh tensors, which never
// require grad; given one that does, torch 1.13's records
// LiftFreshBackward0 (gradient: g) as the input's new grad_fn, over its old
// history, and so does this kernel. On a leaf that requires grad torch's
// would make the leaf a non-leaf over its own AccumulateGrad (a reference
// cycle, and a backward that fails: "leaf variable has been moved into the
// graph interior"); this kernel refuses that call instead.
Tensor liftFreshKernel(const Tensor& self) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::lift_fresh", "")
                             .typed<Tensor(const Tensor&)>();
  const bool rec = shouldRecord("lift_fresh", self);
  TURNOUT_CHECK(!rec || !isLeaf(self), ErrorKind::InvalidArgument,
                "lift_fresh: the input is a leaf that requires grad; torch "
                "1.13 would move it into the graph (its backward then fails "
                "with \"leaf variable has been moved into the graph "
                "interior\"). lift_fresh is for fresh tensors: pass "
                "self.detach(), or call it under no_grad");
  Tensor out = belowAutograd([&] { return op.call(self); });
  if (rec) {
    record("LiftFreshBackward0", {self}, out,
           [](const F&, const Tensor& g) { return variable_list{g}; });
  }
  return out;
}

// ---- Indexing --------------------------------------------------------------------

// The index tensors as torch's nodes show them (`_saved_indices`: a tuple,
// None for a None index).
std::vector<SavedVariable> savedIndices(const OptionalTensorList& indices) {
  std::vector<SavedVariable> out;
  out.reserve(indices.size());
  for (const std::optional<Tensor>& t : indices) {
    out.emplace_back(t ? *t : Tensor());
  }
  return out;
}

Tensor indexKernel(const Tensor& self, const OptionalTensorList& indices) {
  const bool rec = shouldRecord("index", self);
  Tensor out = belowAutograd([&] { return index(self, indices); });
  if (rec) {
    const DimVector sizes = sizesOf(self);
    Node* node = record("IndexBackward0", {self}, out,
                        [sizes, indices](const F&, const Tensor& g) {
                          Tensor z = zeros(sizes, optionsOf(g));
                          index_put_(z, indices, g, /*accumulate=*/true);
                          return variable_list{z};
                        });
    if (node != nullptr) {
      node->addSaved("indices", savedIndices(indices));
      node->addSaved("self_sizes", IValue(self.sizes()));
    }
  }
  return out;
}

// index_put / index_put_: g with the written places zeroed (unless
// accumulating) for self, g at the indexed places for values (summed to
// values' shape by the node).
F::Formula indexPutBackward(OptionalTensorList indices, bool accumulate) {
  return [indices = std::move(indices), accumulate](const F& n,
                                                    const Tensor& g) {
    Tensor gs, gv;
    if (n.needsGrad(0)) {
      gs = accumulate ? g
                      : index_put(g, indices, zeros({}, optionsOf(g)), false);
    }
    if (n.needsGrad(1)) gv = index(g, indices);
    return variable_list{gs, gv};
  };
}

void addIndexPutSaved(Node* node, const OptionalTensorList& indices,
                      bool accumulate) {
  if (node == nullptr) return;
  node->addSaved("accumulate", IValue(accumulate));
  node->addSaved("indices", savedIndices(indices));
}

Tensor& indexPutInplaceKernel(Tensor& self, const OptionalTensorList& indices,
                              const Tensor& values, bool accumulate) {
  const bool rec = shouldRecord("index_put_", self, values);
  writeInplace(self, rec, "index_put_",
               [&] { index_put_(self, indices, values, accumulate); });
  if (rec) {
    addIndexPutSaved(record("IndexPutBackward0", {self, values}, self,
                            indexPutBackward(indices, accumulate)),
                     indices, accumulate);
  }
  return self;
}

Tensor indexPutKernel(const Tensor& self, const OptionalTensorList& indices,
                      const Tensor& values, bool accumulate) {
  const bool rec = shouldRecord("index_put", self, values);
  Tensor out =
      belowAutograd([&] { return index_put(self, indices, values, accumulate); });
  if (rec) {
    addIndexPutSaved(record("IndexPutBackward0", {self, values}, out,
                            indexPutBackward(indices, accumulate)),
                     indices, accumulate);
  }
  return out;
}

Tensor indexSelectKernel(const Tensor& self, int64_t dim, const Tensor& index) {
  const bool rec = shouldRecord("index_select", self);
  Tensor out = belowAutograd([&] { return index_select(self, dim, index); });
  if (rec) {
    const DimVector sizes = sizesOf(self);
    const int64_t d = maybeWrapDim(dim, self.dim());
    const Tensor idx = to(index.dim() == 0 ? view(index, {1}) : index,
                          ScalarType::Long);
    Node* node =
        record("IndexSelectBackward0", {self}, out,
               [sizes, d, idx](const F&, const Tensor& g) {
                 if (sizes.empty()) return variable_list{reshape(g, {})};
                 Tensor z = zeros(sizes, optionsOf(g));
                 OptionalTensorList list(static_cast<size_t>(d), std::nullopt);
                 list.emplace_back(idx);
                 // A 0-dim index keeps its dimension (size 1) in g.
                 index_put_(z, list, g, /*accumulate=*/true);
                 return variable_list{z};
               });
    if (node != nullptr) {
      node->addSaved("dim", IValue(dim));
      node->addSaved("index", SavedVariable(index));
      node->addSaved("self_sizes", IValue(self.sizes()));
    }
  }
  return out;
}

// masked_fill: zero where filled for self; the filled places' sum for a
// tensor value (summed to its 0-dim shape by the node).
// `with_value`: the node's second input is the value tensor.
F::Formula maskedFillBackward(Tensor mask, bool with_value) {
  return [mask = std::move(mask), with_value](const F& n, const Tensor& g) {
    Tensor z = zeros({}, optionsOf(g));
    Tensor gs, gv;
    if (n.needsGrad(0)) gs = where(mask, z, g);
    if (!with_value) return variable_list{gs};
    if (n.needsGrad(1)) gv = where(mask, g, z);
    return variable_list{gs, gv};
  };
}

void addMaskSaved(Node* node, const Tensor& mask) {
  if (node != nullptr) node->addSaved("mask", SavedVariable(mask));
}

Tensor maskedFillScalar(const Tensor& self, const Tensor& mask,
                        const Scalar& value) {
  const bool rec = shouldRecord("masked_fill", self);
  Tensor out = belowAutograd([&] { return masked_fill(self, mask, value); });
  if (rec) {
    addMaskSaved(record("MaskedFillBackward0", {self}, out,
                        maskedFillBackward(mask, false)),
                 mask);
  }
  return out;
}

Tensor maskedFillTensor(const Tensor& self, const Tensor& mask,
                        const Tensor& value) {
  const bool rec = shouldRecord("masked_fill", self, value);
  Tensor out = belowAutograd([&] { return masked_fill(self, mask, value); });
  if (rec) {
    addMaskSaved(record("MaskedFillBackward1", {self, value}, out,
                        maskedFillBackward(mask, true)),
                 mask);
  }
  return out;
}

Tensor& maskedFillInplaceScalar(Tensor& self, const Tensor& mask,
                                const Scalar& value) {
  const bool rec = shouldRecord("masked_fill_", self);
  writeInplace(self, rec, "masked_fill_",
               [&] { masked_fill_(self, mask, value); });
  if (rec) {
    addMaskSaved(record("MaskedFillBackward0", {self}, self,
                        maskedFillBackward(mask, false)),
                 mask);
  }
  return self;
}

Tensor& maskedFillInplaceTensor(Tensor& self, const Tensor& mask,
                                const Tensor& value) {
  const bool rec = shouldRecord("masked_fill_", self, value);
  writeInplace(self, rec, "masked_fill_",
               [&] { masked_fill_(self, mask, value); });
  if (rec) {
    addMaskSaved(record("MaskedFillBackward1", {self, value}, self,
                        maskedFillBackward(mask, true)),
                 mask);
  }
  return self;
}

}  // namespace
}  // namespace autograd
}  // namespace turnout

namespace turnout {
namespace autograd {
namespace {

// _unsafe_view (UnsafeViewBackward0, saving self's sizes as torch 1.13's):
// the gradient reshaped back; the result is not recorded as a view.
Tensor unsafeViewKernel(const Tensor& self, IntArrayRef size) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::_unsafe_view", "")
                             .typed<Tensor(const Tensor&, IntArrayRef)>();
  const bool rec = shouldRecord("_unsafe_view", self);
  Tensor out = belowAutograd([&] { return op.call(self, size); });
  if (rec) {
    DimVector sizes = sizesOf(self);
    Node* node = record("UnsafeViewBackward0", {self}, out,
                        [sizes](const F&, const Tensor& g) {
                          return variable_list{
                              turnout::reshape(g, IntArrayRef(sizes))};
                        });
    if (node != nullptr) {
      node->addSaved("self_sym_sizes", IValue(IntArrayRef(sizes)));
    }
  }
  return out;
}

}  // namespace
}  // namespace autograd
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, Autograd, m) {
  using namespace turnout::autograd;  // NOLINT: the kernels above
  m.impl("_unsafe_view", TURNOUT_FN(unsafeViewKernel));
  m.impl("split.Tensor", TURNOUT_FN(splitKernel));
  m.impl("split_with_sizes", TURNOUT_FN(splitWithSizesKernel));
  m.impl("unbind.int", TURNOUT_FN(unbindKernel));
  m.impl("unsafe_split.Tensor", TURNOUT_FN(unsafeSplitKernel));
  m.impl("unsafe_split_with_sizes", TURNOUT_FN(unsafeSplitWithSizesKernel));
  m.impl("diagonal", TURNOUT_FN(diagonalKernel));
  m.impl("as_strided", TURNOUT_FN(asStridedKernel));
  m.impl("index.Tensor", TURNOUT_FN(indexKernel));
  m.impl("index_put_", TURNOUT_FN(indexPutInplaceKernel));
  m.impl("index_put", TURNOUT_FN(indexPutKernel));
  m.impl("index_select", TURNOUT_FN(indexSelectKernel));
  m.impl("masked_fill.Scalar", TURNOUT_FN(maskedFillScalar));
  m.impl("masked_fill.Tensor", TURNOUT_FN(maskedFillTensor));
  m.impl("masked_fill_.Scalar", TURNOUT_FN(maskedFillInplaceScalar));
  m.impl("masked_fill_.Tensor", TURNOUT_FN(maskedFillInplaceTensor));
  m.impl("lift_fresh", TURNOUT_FN(liftFreshKernel));
  // Not differentiable: integer results, or a number.
  for (const char* op : {"nonzero", "scalar_tensor"}) {
    m.impl(op, turnout::CppFunction::makeFallthrough());
  }
}
