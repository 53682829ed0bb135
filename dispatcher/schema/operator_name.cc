#include "dispatcher/schema/operator_name.h"

namespace turnout {

std::string_view OperatorName::getNamespace() const {
  size_t pos = name.find("::");
  if (pos == std::string::npos) return {};
  return std::string_view(name).substr(0, pos);
}

std::string toString(const OperatorName& op) {
  if (op.overload_name.empty()) return op.name;
  std::string out;
  out.reserve(op.name.size() + 1 + op.overload_name.size());
  out.append(op.name).append(1, '.').append(op.overload_name);
  return out;
}

std::ostream& operator<<(std::ostream& out, const OperatorName& op) {
  out << op.name;
  if (!op.overload_name.empty()) out << '.' << op.overload_name;
  return out;
}

}  // namespace turnout
