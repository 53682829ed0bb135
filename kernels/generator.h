// The random number generator behind rand and randn: a 64-bit Mersenne
// Twister (std::mt19937_64) behind a mutex, seedable like torch.manual_seed.
//
//   manual_seed(42);
//   Tensor a = rand({3});
//   manual_seed(42);
//   Tensor b = rand({3});        // the same values as a
//
//   defaultGenerator().draw([&](std::mt19937_64& engine) {
//     for (...) out[i] = uniformReal(engine, 24);   // one lock for many
//   });
//
// Thread safety: every member locks; draws from several threads interleave
// in an unspecified order (so only a single-threaded sequence is
// reproducible).
#ifndef TURNOUT_KERNELS_GENERATOR_H_
#define TURNOUT_KERNELS_GENERATOR_H_

#include <cstdint>
#include <mutex>
#include <random>

namespace turnout {

class Generator {
 public:
  /// PyTorch's default CPU seed.
  static constexpr uint64_t kDefaultSeed = 67280421310721ull;

  explicit Generator(uint64_t seed = kDefaultSeed)
      : engine_(seed), seed_(seed) {}
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  /// Restarts the sequence from `seed`.
  void manualSeed(uint64_t seed) {
    std::lock_guard<std::mutex> lock(mu_);
    engine_.seed(seed);
    seed_ = seed;
  }
  /// The last seed set.
  uint64_t seed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return seed_;
  }
  /// 64 random bits.
  uint64_t random64() {
    std::lock_guard<std::mutex> lock(mu_);
    return engine_();
  }
  /// Calls `f(engine)` with the lock held: many draws for one lock.
  template <class F>
  void draw(F&& f) {
    std::lock_guard<std::mutex> lock(mu_);
    f(engine_);
  }

 private:
  mutable std::mutex mu_;
  std::mt19937_64 engine_;  // guarded by mu_
  uint64_t seed_;           // guarded by mu_
};

/// The process-wide generator that rand and randn use.
Generator& defaultGenerator();

/// Seeds the default generator (torch.manual_seed).
void manual_seed(uint64_t seed);

/// A uniform value in [0, 1) with `bits` random bits (1..53): k * 2^-bits.
/// Use the precision of the target type (24 for float, 11 for Half, 8 for
/// BFloat16, 53 for double) so that rounding never yields 1.
inline double uniformReal(std::mt19937_64& engine, int bits) {
  return static_cast<double>(engine() >> (64 - bits)) *
         (1.0 / static_cast<double>(uint64_t{1} << bits));
}

}  // namespace turnout

#endif  // TURNOUT_KERNELS_GENERATOR_H_
