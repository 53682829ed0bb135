// The CUDA kernels reach a C++ program through the shared runtime only when
// it links libturnout_cuda.so (//runtime:turnout_cuda): the library's static
// initialisers register them into libturnout.so's registry when it is
// loaded, though the program names none of its symbols. Without it
// (//runtime:turnout alone), the registry has no CUDA kernel.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "dispatcher/dispatcher.h"

namespace turnout {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(SharedRuntimeCuda, CudaKernelsAreRegisteredIffTheLibraryIsLinked) {
  const std::string table = Dispatcher::singleton()
                                .findSchemaOrThrow("aten::add", "Tensor")
                                .dumpComputedTable();
#ifdef TURNOUT_TEST_LINKS_CUDA
  EXPECT_THAT(table, HasSubstr("\nCUDA: registered at kernels/cuda/"));
#else
  EXPECT_THAT(table, Not(HasSubstr("\nCUDA: ")));
#endif
  EXPECT_THAT(table, HasSubstr("CPU: registered at kernels/"));
}

}  // namespace
}  // namespace turnout
