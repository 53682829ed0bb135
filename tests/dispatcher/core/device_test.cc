#include "dispatcher/core/device.h"

#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "gtest/gtest.h"

namespace turnout {
namespace {

TEST(DeviceType, C10NumberingNamesAndBackends) {
  struct Case {
    DeviceType type;
    int value;
    const char* name;
    const char* lower;
    BackendComponent backend;
  };
  const std::vector<Case> cases = {
      {DeviceType::CPU, 0, "CPU", "cpu", BackendComponent::CPUBit},
      {DeviceType::CUDA, 1, "CUDA", "cuda", BackendComponent::CUDABit},
      {DeviceType::HIP, 6, "HIP", "hip", BackendComponent::HIPBit},
      {DeviceType::XLA, 9, "XLA", "xla", BackendComponent::XLABit},
      {DeviceType::XPU, 12, "XPU", "xpu", BackendComponent::XPUBit},
      {DeviceType::MPS, 13, "MPS", "mps", BackendComponent::MPSBit},
      {DeviceType::Meta, 14, "Meta", "meta", BackendComponent::MetaBit},
      {DeviceType::HPU, 15, "HPU", "hpu", BackendComponent::HPUBit},
      {DeviceType::VE, 16, "VE", "ve", BackendComponent::VEBit},
      {DeviceType::Lazy, 17, "Lazy", "lazy", BackendComponent::LazyBit},
      {DeviceType::IPU, 18, "IPU", "ipu", BackendComponent::IPUBit},
      {DeviceType::MTIA, 19, "MTIA", "mtia", BackendComponent::MTIABit},
      {DeviceType::PrivateUse1, 20, "PrivateUse1", "privateuseone",
       BackendComponent::PrivateUse1Bit},
  };
  ASSERT_EQ(cases.size(), std::size(kAllDeviceTypes));
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(c.name);
    EXPECT_EQ(kAllDeviceTypes[i], c.type);
    EXPECT_EQ(static_cast<int>(c.type), c.value);
    EXPECT_TRUE(isValidDeviceType(c.value));
    EXPECT_LT(c.value, kCompileTimeMaxDeviceTypes);
    EXPECT_STREQ(toString(c.type), c.name);
    EXPECT_STREQ(deviceTypeName(c.type), c.lower);
    EXPECT_EQ(toBackendComponent(c.type), c.backend);
    std::ostringstream out;
    out << c.type;
    EXPECT_EQ(out.str(), c.name);
  }
  for (int gap : {-1, 2, 3, 4, 5, 7, 8, 10, 11, 21}) {
    SCOPED_TRACE(gap);
    EXPECT_FALSE(isValidDeviceType(gap));
  }
}

TEST(Device, ParsesAndPrintsLikePyTorch) {
  struct Case {
    const char* text;
    DeviceType type;
    int index;
    const char* printed;
  };
  const std::vector<Case> cases = {
      {"cpu", DeviceType::CPU, -1, "cpu"},
      {"cpu:0", DeviceType::CPU, 0, "cpu:0"},
      {"cuda", DeviceType::CUDA, -1, "cuda"},
      {"cuda:0", DeviceType::CUDA, 0, "cuda:0"},
      {"cuda:1", DeviceType::CUDA, 1, "cuda:1"},
      {"cuda:127", DeviceType::CUDA, 127, "cuda:127"},
      {"meta", DeviceType::Meta, -1, "meta"},
      {"mps:0", DeviceType::MPS, 0, "mps:0"},
      {"xla:3", DeviceType::XLA, 3, "xla:3"},
      {"privateuseone:2", DeviceType::PrivateUse1, 2, "privateuseone:2"},
      {"lazy", DeviceType::Lazy, -1, "lazy"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Device d(c.text);
    EXPECT_EQ(d.type(), c.type);
    EXPECT_EQ(d.index(), c.index);
    EXPECT_EQ(d.has_index(), c.index != -1);
    EXPECT_EQ(d.str(), c.printed);
    EXPECT_EQ(Device(std::string(c.text)), d);
    EXPECT_EQ(Device(std::string_view(c.text)), d);
    EXPECT_EQ(Device(d.str()), d);  // the printed form reads back
    std::ostringstream out;
    out << d;
    EXPECT_EQ(out.str(), c.printed);
  }
}

TEST(Device, BadStringsSayWhatIsExpected) {
  const std::string expected =
      "; expected e.g. 'cpu', 'cuda', 'cuda:1', 'meta'";
  struct Case {
    const char* text;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"cuda:x", ""},
      {"cuda:", ""},
      {"cuda:-1", ""},
      {"cuda:1:2", ""},
      {"cuda: 1", ""},
      {"cuda:01", "; the index must not have leading zeros"},
      {"cuda:128", "; the index is too large"},
      {"cpu:1", "; a CPU device index must be 0"},
      {"",
       "; '' is not a device type (known: cpu, cuda, hip, xla, xpu, mps, "
       "meta, hpu, ve, lazy, ipu, mtia, privateuseone)"},
      {"CUDA",
       "; 'CUDA' is not a device type (known: cpu, cuda, hip, xla, "
       "xpu, mps, meta, hpu, ve, lazy, ipu, mtia, privateuseone)"},
      {"gpu:0",
       "; 'gpu' is not a device type (known: cpu, cuda, hip, xla, "
       "xpu, mps, meta, hpu, ve, lazy, ipu, mtia, privateuseone)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      Device d(c.text);
      ADD_FAILURE() << "parsed as " << d;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_EQ(e.message(), std::string("Invalid device string: '") + c.text +
                                 "'" + expected + c.reason);
    }
  }
}

TEST(Device, IndexInvariants) {
  EXPECT_EQ(Device(DeviceType::CUDA, 3).str(), "cuda:3");
  EXPECT_EQ(Device(DeviceType::CPU, 0).str(), "cpu:0");
  try {
    Device(DeviceType::CPU, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "Device(): a CPU device index must be -1 or 0, got 1");
  }
  try {
    Device(DeviceType::CUDA, -2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "Device(): the index of a cuda device must be -1 (none) or "
              "non-negative, got -2");
  }
  Device d(DeviceType::CUDA);
  d.set_index(2);
  EXPECT_EQ(d, Device("cuda:2"));
  EXPECT_THROW(d.set_index(-5), Error);
  EXPECT_EQ(d, Device("cuda:2"));
}

TEST(Device, PredicatesEqualityAndHash) {
  EXPECT_TRUE(Device("cpu").is_cpu());
  EXPECT_TRUE(Device("cuda:0").is_cuda());
  EXPECT_TRUE(Device("meta").is_meta());
  EXPECT_TRUE(Device("privateuseone").is_privateuseone());
  EXPECT_FALSE(Device("cuda").is_cpu());
  EXPECT_NE(Device("cuda"), Device("cuda:0"));
  EXPECT_NE(Device("cuda:0"), Device("cuda:1"));
  EXPECT_EQ(Device("cpu"), Device(kCPU));
  std::unordered_set<Device> set = {Device("cpu"),    Device("cpu"),
                                    Device("cuda"),   Device("cuda:0"),
                                    Device("cuda:1"), Device("meta")};
  EXPECT_EQ(set.size(), 5u);
  static_assert(sizeof(Device) == 2, "a Device is two bytes");
  constexpr Device kConstant(DeviceType::CUDA, 1);
  static_assert(kConstant.index() == 1, "usable in constant expressions");
}

}  // namespace
}  // namespace turnout
