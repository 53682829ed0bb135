// torch's operator tags for the reference operators: what
// torch.ops.aten.<op>.<overload>.tags shows in torch 1.13 (e.g.
// nondeterministic_seeded on aten::rand), with the `core` and `pointwise`
// tags torch 2.x added (aten::add.Tensor: core, pointwise). Every
// TURNOUT_LIBRARY_FRAGMENT(aten, m) block hands it to the library:
//
//   TURNOUT_LIBRARY_FRAGMENT(aten, m) {
//     m.tagsFor(&atenTags);
//     m.def("relu(Tensor self) -> Tensor");   // tags: core, pointwise
//
// The tags live with the schema (OperatorHandle::tags, OpOverload.tags in
// Python): they are read at registration, never on a call.
#ifndef TURNOUT_KERNELS_ATEN_TAGS_H_
#define TURNOUT_KERNELS_ATEN_TAGS_H_

#include <string>
#include <utility>
#include <vector>

#include "dispatcher/schema/operator_name.h"

namespace turnout {

/// torch's tags of reference operator `op` ("aten::add", overload "Tensor"),
/// in torch's order; empty for an operator torch gives none.
std::vector<std::string> atenTags(const OperatorName& op);

/// The whole table: "aten::add.Tensor" -> its tags (for the tests that check
/// it against torch and against the registered operators).
const std::vector<std::pair<std::string, std::vector<std::string>>>&
atenTagTable();

}  // namespace turnout

#endif  // TURNOUT_KERNELS_ATEN_TAGS_H_
