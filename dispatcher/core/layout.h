// Layout: how a tensor's elements are arranged in memory, with c10's names and
// numbering.
//
//   Layout l = Layout::Sparse;
//   toString(l);                  // "Sparse"
//   std::cout << Layout::Strided; // Strided
//
// A value type with pure functions: thread-safe.
#ifndef TURNOUT_DISPATCHER_CORE_LAYOUT_H_
#define TURNOUT_DISPATCHER_CORE_LAYOUT_H_

#include <cstdint>
#include <ostream>

namespace turnout {

/// A tensor layout. Strided is the dense layout with sizes and strides; the
/// others are c10's sparse and opaque layouts, listed so that their numbers
/// match c10's even where turnout has no kernels for them.
enum class Layout : int8_t {
  Strided = 0,
  Sparse = 1,  // COO
  SparseCsr = 2,
  Mkldnn = 3,
  SparseCsc = 4,
  SparseBsr = 5,
  SparseBsc = 6,
  Jagged = 7,
  NumOptions = 8,
};

// c10's short spellings.
constexpr Layout kStrided = Layout::Strided;
constexpr Layout kSparse = Layout::Sparse;
constexpr Layout kSparseCsr = Layout::SparseCsr;
constexpr Layout kMkldnn = Layout::Mkldnn;

/// True for the enumerators other than NumOptions. Use it before casting an
/// integer (from an IValue, from Python) to Layout.
constexpr bool isValidLayout(int64_t value) {
  return value >= 0 && value < static_cast<int64_t>(Layout::NumOptions);
}

/// c10's name: "Strided", "Sparse", "SparseCsr", ...; "InvalidLayout" for a
/// value that is not an enumerator.
inline const char* toString(Layout layout) {
  switch (layout) {
    case Layout::Strided:
      return "Strided";
    case Layout::Sparse:
      return "Sparse";
    case Layout::SparseCsr:
      return "SparseCsr";
    case Layout::Mkldnn:
      return "Mkldnn";
    case Layout::SparseCsc:
      return "SparseCsc";
    case Layout::SparseBsr:
      return "SparseBsr";
    case Layout::SparseBsc:
      return "SparseBsc";
    case Layout::Jagged:
      return "Jagged";
    case Layout::NumOptions:
      break;
  }
  return "InvalidLayout";
}

inline std::ostream& operator<<(std::ostream& out, Layout layout) {
  return out << toString(layout);
}

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CORE_LAYOUT_H_
