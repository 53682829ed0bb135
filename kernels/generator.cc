#include "kernels/generator.h"

namespace turnout {

Generator& defaultGenerator() {
  // Never destroyed: kernels may run during static destruction.
  static Generator* const generator = new Generator();
  return *generator;
}

void manual_seed(uint64_t seed) { defaultGenerator().manualSeed(seed); }

}  // namespace turnout
