// The table of kernels/aten_tags.h. Sources: torch 1.13's
// OpOverload.tags (tests/python/test_aten_tags.py checks every entry against
// it), and torch 2.x's native_functions.yaml for `core` (the Core ATen
// opset) and `pointwise` (elementwise operators, their in-place and out=
// variants included), which torch 1.13 does not have yet.
#include "kernels/aten_tags.h"

#include <algorithm>

namespace turnout {

const std::vector<std::pair<std::string, std::vector<std::string>>>&
atenTagTable() {
  // Sorted by name; leaked so that it outlives every static registration.
  static const auto* table =
      new std::vector<std::pair<std::string, std::vector<std::string>>>{
      {"aten::_log_softmax", {"core"}},
      {"aten::_softmax", {"core"}},
      {"aten::_to_copy", {"core"}},
      {"aten::abs", {"core", "pointwise"}},
      {"aten::add.Scalar", {"core", "pointwise"}},
      {"aten::add.Tensor", {"core", "pointwise"}},
      {"aten::add.out", {"pointwise"}},
      {"aten::add_.Scalar", {"pointwise"}},
      {"aten::add_.Tensor", {"pointwise"}},
      {"aten::addmm", {"core"}},
      {"aten::amax", {"core"}},
      {"aten::amin", {"core"}},
      {"aten::arange.start_step", {"core"}},
      {"aten::argmax", {"core"}},
      {"aten::as_strided", {"core"}},
      {"aten::bmm", {"core"}},
      {"aten::cat", {"core"}},
      {"aten::clamp", {"core", "pointwise"}},
      {"aten::clone", {"core"}},
      {"aten::div.Scalar", {"core", "pointwise"}},
      {"aten::div.Tensor", {"core", "pointwise"}},
      {"aten::div.out", {"pointwise"}},
      {"aten::div_.Scalar", {"pointwise"}},
      {"aten::div_.Tensor", {"pointwise"}},
      {"aten::empty.memory_format", {"core"}},
      {"aten::empty_strided", {"core"}},
      {"aten::eq.Scalar", {"core", "pointwise"}},
      {"aten::eq.Tensor", {"core", "pointwise"}},
      {"aten::exp", {"core", "pointwise"}},
      {"aten::expand", {"core"}},
      {"aten::full", {"core"}},
      {"aten::ge.Scalar", {"core", "pointwise"}},
      {"aten::ge.Tensor", {"core", "pointwise"}},
      {"aten::gt.Scalar", {"core", "pointwise"}},
      {"aten::gt.Tensor", {"core", "pointwise"}},
      {"aten::index.Tensor", {"core", "dynamic_output_shape"}},
      {"aten::index_put", {"core"}},
      {"aten::index_select", {"core"}},
      {"aten::item", {"data_dependent_output"}},
      {"aten::le.Scalar", {"core", "pointwise"}},
      {"aten::le.Tensor", {"core", "pointwise"}},
      {"aten::log", {"core", "pointwise"}},
      {"aten::lt.Scalar", {"core", "pointwise"}},
      {"aten::lt.Tensor", {"core", "pointwise"}},
      {"aten::mean.dim", {"core"}},
      {"aten::mm", {"core"}},
      {"aten::mul.Scalar", {"core", "pointwise"}},
      {"aten::mul.Tensor", {"core", "pointwise"}},
      {"aten::mul.out", {"pointwise"}},
      {"aten::mul_.Scalar", {"pointwise"}},
      {"aten::mul_.Tensor", {"pointwise"}},
      {"aten::ne.Scalar", {"core", "pointwise"}},
      {"aten::ne.Tensor", {"core", "pointwise"}},
      {"aten::neg", {"core", "pointwise"}},
      {"aten::nonzero", {"core", "dynamic_output_shape"}},
      {"aten::nonzero.out", {"dynamic_output_shape"}},
      {"aten::permute", {"core"}},
      {"aten::pow.Tensor_Scalar", {"core", "pointwise"}},
      {"aten::rand", {"nondeterministic_seeded"}},
      {"aten::randn", {"nondeterministic_seeded"}},
      {"aten::relu", {"core", "pointwise"}},
      {"aten::scalar_tensor", {"core"}},
      {"aten::select.int", {"core"}},
      {"aten::sigmoid", {"core", "pointwise"}},
      {"aten::slice.Tensor", {"core"}},
      {"aten::split_with_sizes", {"core"}},
      {"aten::sqrt", {"core", "pointwise"}},
      {"aten::squeeze.dim", {"core"}},
      {"aten::sub.Scalar", {"core", "pointwise"}},
      {"aten::sub.Tensor", {"core", "pointwise"}},
      {"aten::sub.out", {"pointwise"}},
      {"aten::sub_.Scalar", {"pointwise"}},
      {"aten::sub_.Tensor", {"pointwise"}},
      {"aten::sum.dim_IntList", {"core"}},
      {"aten::sum.out", {"generated"}},
      {"aten::tanh", {"core", "pointwise"}},
      {"aten::view", {"core"}},
      {"aten::where.self", {"core", "pointwise"}},
      };
  return *table;
}

std::vector<std::string> atenTags(const OperatorName& op) {
  const std::string name =
      op.overload_name.empty() ? op.name : op.name + "." + op.overload_name;
  const auto& table = atenTagTable();
  auto it = std::lower_bound(
      table.begin(), table.end(), name,
      [](const auto& entry, const std::string& n) { return entry.first < n; });
  if (it == table.end() || it->first != name) return {};
  return it->second;
}

}  // namespace turnout
