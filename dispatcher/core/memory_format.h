// MemoryFormat: the order in which a dense tensor's dimensions are laid out,
// with c10's names and numbering.
//
//   MemoryFormat f = MemoryFormat::ChannelsLast;   // NHWC
//   toString(f);                                   // "ChannelsLast"
//   std::cout << MemoryFormat::Contiguous;         // Contiguous
//
// A value type with pure functions: thread-safe.
#ifndef TURNOUT_DISPATCHER_CORE_MEMORY_FORMAT_H_
#define TURNOUT_DISPATCHER_CORE_MEMORY_FORMAT_H_

#include <cstdint>
#include <ostream>

namespace turnout {

/// A requested memory format. Preserve means "whatever the input has"; it is
/// an argument value, never the format of an actual tensor.
enum class MemoryFormat : int8_t {
  Contiguous = 0,
  Preserve = 1,
  ChannelsLast = 2,    // NHWC for a 4-d tensor
  ChannelsLast3d = 3,  // NDHWC for a 5-d tensor
  NumOptions = 4,
};

/// True for the enumerators other than NumOptions. Use it before casting an
/// integer (from an IValue, from Python) to MemoryFormat.
constexpr bool isValidMemoryFormat(int64_t value) {
  return value >= 0 && value < static_cast<int64_t>(MemoryFormat::NumOptions);
}

/// c10's name: "Contiguous", "Preserve", "ChannelsLast", "ChannelsLast3d";
/// "InvalidMemoryFormat" for a value that is not an enumerator.
inline const char* toString(MemoryFormat format) {
  switch (format) {
    case MemoryFormat::Contiguous:
      return "Contiguous";
    case MemoryFormat::Preserve:
      return "Preserve";
    case MemoryFormat::ChannelsLast:
      return "ChannelsLast";
    case MemoryFormat::ChannelsLast3d:
      return "ChannelsLast3d";
    case MemoryFormat::NumOptions:
      break;
  }
  return "InvalidMemoryFormat";
}

inline std::ostream& operator<<(std::ostream& out, MemoryFormat format) {
  return out << toString(format);
}

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CORE_MEMORY_FORMAT_H_
