// Stack: the arguments and results of a boxed call, and the helpers that
// torch::jit's interpreter uses on it.
//
//   Stack stack;
//   push(stack, tensor, 2, 0.5);          // three IValues
//   double alpha = pop(stack).toDouble(); // 0.5
//   peek(stack, 0, 2).toTensor();         // the first of the last two
//   drop(stack, 2);                       // empty again
//
// Plain functions on a caller-owned vector: a Stack is not shared between
// threads.
#ifndef TURNOUT_DISPATCHER_STACK_H_
#define TURNOUT_DISPATCHER_STACK_H_

#include <cstddef>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/ivalue.h"

namespace turnout {

/// Arguments in schema order, then (after the call) the results.
using Stack = std::vector<IValue>;

/// Pushes each value, converted to an IValue, in order.
template <class... Values>
void push(Stack& stack, Values&&... values) {
  stack.reserve(stack.size() + sizeof...(Values));
  (stack.emplace_back(std::forward<Values>(values)), ...);
}

/// Removes and returns the last value. Throws Error(Index) when empty.
IValue pop(Stack& stack);

/// Removes the last `n` values and returns them in stack order. Throws
/// Error(Index) when the stack has fewer.
std::vector<IValue> pop(Stack& stack, size_t n);

/// Pops the last sizeof...(Types) values into `args`, converted with
/// IValue::to<T>(): `pop(stack, self, dim)` after `push(stack, self, dim)`.
template <class... Types>
void pop(Stack& stack, Types&... args);

/// The i-th of the last `n` values (i in [0, n)), by reference. Throws
/// Error(Index) when the stack has fewer than `n` values or i >= n.
IValue& peek(Stack& stack, size_t i, size_t n);
const IValue& peek(const Stack& stack, size_t i, size_t n);

/// The last `n` values, in stack order, without removing them. Valid until
/// the stack changes. Throws Error(Index) when the stack has fewer.
absl::Span<const IValue> last(const Stack& stack, size_t n);

/// Removes the last `n` values. Throws Error(Index) when the stack has fewer.
void drop(Stack& stack, size_t n);

// Implementation details.
namespace detail {

// Throws Error(Index) unless the stack holds at least `n` values.
inline void checkStackSize(const Stack& stack, size_t n, const char* caller) {
  TURNOUT_CHECK(stack.size() >= n, ErrorKind::Index, caller,
                "(): the stack has ", stack.size(), " values but ", n,
                " are needed");
}

}  // namespace detail

inline IValue pop(Stack& stack) {
  detail::checkStackSize(stack, 1, "pop");
  IValue result = std::move(stack.back());
  stack.pop_back();
  return result;
}

inline std::vector<IValue> pop(Stack& stack, size_t n) {
  detail::checkStackSize(stack, n, "pop");
  std::vector<IValue> result;
  result.reserve(n);
  for (auto it = stack.end() - static_cast<std::ptrdiff_t>(n);
       it != stack.end(); ++it) {
    result.push_back(std::move(*it));
  }
  stack.resize(stack.size() - n);
  return result;
}

template <class... Types>
void pop(Stack& stack, Types&... args) {
  constexpr size_t kCount = sizeof...(Types);
  detail::checkStackSize(stack, kCount, "pop");
  size_t i = stack.size() - kCount;
  ((args = std::move(stack[i++]).template to<Types>()), ...);
  stack.resize(stack.size() - kCount);
}

inline IValue& peek(Stack& stack, size_t i, size_t n) {
  detail::checkStackSize(stack, n, "peek");
  TURNOUT_CHECK(i < n, ErrorKind::Index, "peek(): index ", i,
                " is not below the count ", n);
  return stack[stack.size() - n + i];
}

inline const IValue& peek(const Stack& stack, size_t i, size_t n) {
  return peek(const_cast<Stack&>(stack), i, n);
}

inline absl::Span<const IValue> last(const Stack& stack, size_t n) {
  detail::checkStackSize(stack, n, "last");
  return absl::Span<const IValue>(stack.data() + (stack.size() - n), n);
}

inline void drop(Stack& stack, size_t n) {
  detail::checkStackSize(stack, n, "drop");
  stack.resize(stack.size() - n);
}

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_STACK_H_
