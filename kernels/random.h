// The C++ front end of the random operators over the default generator
// (kernels/generator.h): aten::manual_seed, randint, randperm, normal_,
// uniform_ and bernoulli_. rand and randn are in kernels/factory.h.
//
//   turnout::manual_seed_op(0);                  // through aten::manual_seed
//   Tensor i = turnout::randint(0, 10, {3, 4});  // Long in [0, 10)
//   Tensor p = turnout::randperm(5);             // a permutation of 0..4
//   turnout::normal_(x, 0.0, 2.0);               // in place
//
// The same seed gives the same values on every run; they are not torch's
// values (a different generator). Thread safety: every call draws under the
// generator's lock; concurrent calls interleave in an unspecified order.
#ifndef TURNOUT_KERNELS_RANDOM_H_
#define TURNOUT_KERNELS_RANDOM_H_

#include <cstdint>

#include "dispatcher/core/tensor.h"
#include "kernels/factory.h"

namespace turnout {

/// aten::manual_seed: seeds the default generator (as manual_seed() in
/// generator.h, but through the dispatcher, as a graph calls it).
void manual_seed_op(int64_t seed);

/// aten::randint.low: uniform integers in [low, high) (Long unless the
/// options say otherwise). Throws InvalidArgument when low >= high.
Tensor randint(int64_t low, int64_t high, IntArrayRef size,
               TensorOptions options = {});
/// aten::randperm: a random permutation of 0 .. n-1.
Tensor randperm(int64_t n, TensorOptions options = {});

/// aten::normal_: self's elements drawn from N(mean, std^2). Floating only.
const Tensor& normal_(const Tensor& self, double mean = 0.0, double std = 1.0);
/// aten::uniform_: drawn uniformly from [from, to). Floating only.
const Tensor& uniform_(const Tensor& self, double from = 0.0, double to = 1.0);
/// aten::bernoulli_.float: 1 with probability p, else 0.
const Tensor& bernoulli_(const Tensor& self, double p = 0.5);

/// aten::rand_like, randn_like: uniform in [0, 1) / standard normal values
/// of self's sizes, with empty_like's dtype, device and strides. Floating
/// dtypes only.
Tensor rand_like(const Tensor& self, TensorOptions options = {},
                 std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor randn_like(const Tensor& self, TensorOptions options = {},
                  std::optional<MemoryFormat> memory_format = std::nullopt);
/// aten::randint_like.low_dtype: integers in [low, high), in self's dtype
/// unless given. Throws InvalidArgument (torch's random_ messages) when
/// low >= high or either end is outside the dtype.
Tensor randint_like(const Tensor& self, int64_t low, int64_t high,
                    TensorOptions options = {},
                    std::optional<MemoryFormat> memory_format = std::nullopt);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_RANDOM_H_
