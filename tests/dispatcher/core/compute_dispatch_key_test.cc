#include "dispatcher/core/compute_dispatch_key.h"

#include <string>
#include <vector>

#include "dispatcher/core/error.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

TEST(ComputeDispatchKey, AsC10) {
  struct Case {
    Layout layout;
    const char* device;
    DispatchKey key;
  };
  const std::vector<Case> cases = {
      {Layout::Strided, "cpu", DispatchKey::CPU},
      {Layout::Strided, "cuda:1", DispatchKey::CUDA},
      {Layout::Strided, "hip", DispatchKey::HIP},
      {Layout::Strided, "xla", DispatchKey::XLA},
      {Layout::Strided, "mps", DispatchKey::MPS},
      {Layout::Strided, "xpu", DispatchKey::XPU},
      {Layout::Strided, "hpu", DispatchKey::HPU},
      {Layout::Strided, "ipu", DispatchKey::IPU},
      {Layout::Strided, "ve", DispatchKey::VE},
      {Layout::Strided, "lazy", DispatchKey::Lazy},
      {Layout::Strided, "mtia", DispatchKey::MTIA},
      {Layout::Strided, "meta", DispatchKey::Meta},
      {Layout::Strided, "privateuseone", DispatchKey::PrivateUse1},
      {Layout::Sparse, "cpu", DispatchKey::SparseCPU},
      {Layout::Sparse, "cuda", DispatchKey::SparseCUDA},
      {Layout::Sparse, "hip", DispatchKey::SparseHIP},
      {Layout::Sparse, "xpu", DispatchKey::SparseXPU},
      {Layout::Sparse, "ve", DispatchKey::SparseVE},
      {Layout::Sparse, "mps", DispatchKey::SparseMPS},
      {Layout::Sparse, "meta", DispatchKey::SparseMeta},
      {Layout::Sparse, "privateuseone", DispatchKey::SparsePrivateUse1},
      {Layout::SparseCsr, "cpu", DispatchKey::SparseCsrCPU},
      {Layout::SparseCsc, "cpu", DispatchKey::SparseCsrCPU},
      {Layout::SparseBsr, "cuda", DispatchKey::SparseCsrCUDA},
      {Layout::SparseBsc, "cuda:0", DispatchKey::SparseCsrCUDA},
      {Layout::Mkldnn, "cpu", DispatchKey::MkldnnCPU},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(toString(c.layout)) + " on " + c.device);
    for (ScalarType dtype : kAllScalarTypes) {
      EXPECT_EQ(computeDispatchKey(dtype, c.layout, Device(c.device)), c.key);
    }
  }
}

TEST(ComputeDispatchKey, UnsupportedCombinationsNameLayoutAndDevice) {
  struct Case {
    Layout layout;
    const char* device;
    const char* message;
  };
  const std::vector<Case> cases = {
      {Layout::Mkldnn, "cuda:0",
       "computeDispatchKey(): layout Mkldnn is not supported on device type "
       "CUDA (device 'cuda:0'); it is supported on CPU only"},
      {Layout::Sparse, "xla",
       "computeDispatchKey(): layout Sparse is not supported on device type "
       "XLA (device 'xla'); Sparse is supported on CPU, CUDA, HIP, XPU, VE, "
       "MPS, Meta and PrivateUse1"},
      {Layout::SparseCsr, "meta",
       "computeDispatchKey(): layout SparseCsr is not supported on device "
       "type Meta (device 'meta'); it is supported on CPU and CUDA"},
      {Layout::Jagged, "cpu",
       "computeDispatchKey(): layout Jagged is not supported on device type "
       "CPU (device 'cpu'); turnout has no dispatch key for this layout"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    try {
      computeDispatchKey(kFloat, c.layout, Device(c.device));
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::NotImplemented);
      EXPECT_EQ(e.message(), c.message);
    }
  }
}

}  // namespace
}  // namespace turnout
