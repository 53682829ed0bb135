// The example PrivateUse1 backend: see backend.h and README.md.
#include "examples/privateuse1/backend.h"

#include <atomic>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

#include "dispatcher/core/allocator.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/ivalue.h"
#include "dispatcher/core/storage.h"
#include "dispatcher/core/tensor_impl.h"
#include "dispatcher/library.h"
#include "dispatcher/schema/function_schema.h"
#include "kernels/ops.h"

namespace privateuse1_example {

using turnout::Allocator;
using turnout::DataPtr;
using turnout::Device;
using turnout::DeviceType;
using turnout::ErrorKind;
using turnout::IntArrayRef;
using turnout::IValue;
using turnout::Layout;
using turnout::MemoryFormat;
using turnout::OperatorHandle;
using turnout::Scalar;
using turnout::ScalarType;
using turnout::Stack;
using turnout::Tensor;

namespace {

std::atomic<int64_t> g_live_allocations{0};
std::atomic<int64_t> g_allocations{0};
std::atomic<int64_t> g_fallback_calls{0};
std::atomic<int64_t> g_add_kernel_calls{0};

const Device kCpu(DeviceType::CPU);

// ---- The allocator ----------------------------------------------------------
// A real device would call its driver here (cudaMalloc, a DMA heap, ...).
// This one hands out host memory, but records the device as PrivateUse1, so
// the storage and every tensor on it belong to this backend.
class DeviceAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return DataPtr(nullptr, device());
    constexpr size_t kAlignment = 64;
    void* data = std::aligned_alloc(
        kAlignment, (nbytes + kAlignment - 1) / kAlignment * kAlignment);
    TURNOUT_CHECK(data != nullptr, ErrorKind::InvalidArgument,
                  "privateuseone allocator: out of memory allocating ", nbytes,
                  " bytes");
    g_live_allocations.fetch_add(1, std::memory_order_relaxed);
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    return DataPtr(data, data, &release, device());
  }

 private:
  static void release(void* data) {
    g_live_allocations.fetch_sub(1, std::memory_order_relaxed);
    std::free(data);
  }
};

// Registered before main(); the registry does not own it, so it is a static
// that outlives every tensor.
DeviceAllocator g_allocator;
[[maybe_unused]] const bool g_allocator_registered =
    (turnout::setAllocator(DeviceType::PrivateUse1, &g_allocator), true);

// ---- Helpers ----------------------------------------------------------------

bool onDevice(const Tensor& t) {
  return t.defined() && t.device().is_privateuseone();
}

// A CPU tensor over the same bytes as `t` (same sizes, strides, offset), so
// that the CPU kernels can read or write the device's memory. This is the
// one place that relies on the memory being host memory: a real device
// would do a host <-> device transfer in copy_ instead.
Tensor hostAlias(const Tensor& t) {
  if (!onDevice(t)) return t;
  const turnout::Storage& storage = t.storage();
  turnout::Storage alias(turnout::make_intrusive<turnout::StorageImpl>(
      storage.nbytes(), DataPtr(storage.mutable_data(), kCpu),
      /*allocator=*/nullptr, /*resizable=*/false));
  auto impl = turnout::make_intrusive<turnout::TensorImpl,
                                      turnout::UndefinedTensorImpl>(
      std::move(alias), t.scalar_type(), kCpu);
  impl->set_sizes_and_strides(t.sizes(), t.strides());
  impl->set_storage_offset(t.storage_offset());
  return Tensor(std::move(impl));
}

// A device tensor sharing `base`'s storage (and version counter) with the
// geometry of `host_view`, a view of hostAlias(base).
Tensor deviceView(const Tensor& base, const Tensor& host_view) {
  auto impl = turnout::make_intrusive<turnout::TensorImpl,
                                      turnout::UndefinedTensorImpl>(
      base.storage(), base.scalar_type(), base.device());
  impl->set_sizes_and_strides(host_view.sizes(), host_view.strides());
  impl->set_storage_offset(host_view.storage_offset());
  impl->set_version_counter(base.unsafeGetTensorImpl()->version_counter());
  return Tensor(std::move(impl));
}

void checkOptions(const char* op, std::optional<Layout> layout,
                  std::optional<bool> pin_memory) {
  TURNOUT_CHECK(layout.value_or(Layout::Strided) == Layout::Strided,
                ErrorKind::NotImplemented, op,
                "(): the privateuseone example backend has strided tensors "
                "only, got layout ",
                *layout);
  TURNOUT_CHECK(!pin_memory.value_or(false), ErrorKind::NotImplemented, op,
                "(): pin_memory is a CPU option; the privateuseone example "
                "backend has no pinned memory");
}

// ---- Kernels ----------------------------------------------------------------

// aten::empty_strided on the device: one allocation from the allocator above
// (through detail::makeEmptyTensor), then the requested geometry.
Tensor empty_strided_device(IntArrayRef size, IntArrayRef stride,
                            std::optional<ScalarType> dtype,
                            std::optional<Layout> layout,
                            std::optional<Device> device_arg,
                            std::optional<bool> pin_memory) {
  checkOptions("empty_strided", layout, pin_memory);
  TURNOUT_CHECK(size.size() == stride.size(), ErrorKind::InvalidArgument,
                "empty_strided(): got ", size.size(), " sizes and ",
                stride.size(), " strides; give one stride per size");
  int64_t storage_numel = 1;  // one past the furthest element
  for (size_t i = 0; i < size.size(); ++i) {
    TURNOUT_CHECK(size[i] >= 0 && stride[i] >= 0, ErrorKind::InvalidArgument,
                  "empty_strided(): sizes and strides must be non-negative, "
                  "got size ",
                  size[i], " and stride ", stride[i], " at dimension ", i);
    if (size[i] == 0) storage_numel = 0;
    if (storage_numel != 0) storage_numel += (size[i] - 1) * stride[i];
  }
  Tensor t = turnout::detail::makeEmptyTensor({storage_numel},
                                              dtype.value_or(ScalarType::Float),
                                              device_arg.value_or(device()));
  t.unsafeGetTensorImpl()->set_sizes_and_strides(size, stride);
  return t;
}

// aten::empty.memory_format on the device: contiguous tensors only.
Tensor empty_device(IntArrayRef size, std::optional<ScalarType> dtype,
                    std::optional<Layout> layout,
                    std::optional<Device> device_arg,
                    std::optional<bool> pin_memory,
                    std::optional<MemoryFormat> memory_format) {
  checkOptions("empty", layout, pin_memory);
  const MemoryFormat format = memory_format.value_or(MemoryFormat::Contiguous);
  TURNOUT_CHECK(
      format == MemoryFormat::Contiguous || format == MemoryFormat::Preserve,
      ErrorKind::NotImplemented,
      "empty(): the privateuseone example backend supports "
      "memory_format=Contiguous only, got ",
      format);
  Tensor t = turnout::detail::makeEmptyTensor(
      size, dtype.value_or(ScalarType::Float), device_arg.value_or(device()));
  return t;
}

// aten::copy_ between this device and the CPU, or within the device. Called
// for any copy_ with a device tensor on either side: the dispatcher picks
// the highest backend of the two arguments, and PrivateUse1 is above CPU.
Tensor& copy_device(Tensor& self, const Tensor& src, bool non_blocking) {
  auto supported = [](const Tensor& t) {
    return t.device().is_cpu() || t.device().is_privateuseone();
  };
  TURNOUT_CHECK(supported(self) && supported(src), ErrorKind::NotImplemented,
                "copy_(): the privateuseone example backend copies between "
                "privateuseone and cpu only, got a copy from ",
                src.device(), " to ", self.device());
  // Conversion, broadcasting and strides are the CPU kernel's, on the host
  // view of the device memory (a real device: a host <-> device transfer).
  Tensor dst = hostAlias(self);
  turnout::copy_(dst, hostAlias(src), non_blocking);
  return self;
}

// aten::fill_.Scalar on the device (the CPU kernel over the device memory:
// it checks that the value fits the dtype).
Tensor& fill_device(Tensor& self, const Scalar& value) {
  Tensor host = hostAlias(self);
  turnout::fill_(host, value);
  return self;
}

// aten::view on the device: the CPU kernel computes the geometry (and the
// errors); the result shares the device storage.
Tensor view_device(const Tensor& self, IntArrayRef size) {
  return deviceView(self, turnout::view(hostAlias(self), size));
}

// aten::item: the value of a one-element device tensor (the shared
// CompositeExplicitAutograd kernel reads CPU memory only).
Scalar item_device(const Tensor& self) {
  return turnout::item(hostAlias(self));
}

// aten::add.Tensor: a loop of this backend's own for same-shape contiguous
// Float tensors; broadcasting, type promotion and CPU operands take the
// general path on the CPU.
Tensor add_device(const Tensor& self, const Tensor& other,
                  const Scalar& alpha) {
  g_add_kernel_calls.fetch_add(1, std::memory_order_relaxed);
  if (onDevice(self) && onDevice(other) &&
      self.scalar_type() == ScalarType::Float &&
      other.scalar_type() == ScalarType::Float &&
      self.sizes() == other.sizes() && self.is_contiguous() &&
      other.is_contiguous() && !alpha.isBoolean()) {
    Tensor out = turnout::empty(
        self.sizes(),
        turnout::TensorOptions(ScalarType::Float).device(self.device()));
    const float a = static_cast<float>(alpha.toDouble());
    const float* x = self.data_ptr<float>();
    const float* y = other.data_ptr<float>();
    float* z = out.data_ptr<float>();
    for (int64_t i = 0; i < self.numel(); ++i) z[i] = x[i] + a * y[i];
    return out;
  }
  const Device target = onDevice(self) ? self.device() : other.device();
  return turnout::add(self.to(kCpu), other.to(kCpu), alpha).to(target);
}

// ---- The fallback -----------------------------------------------------------

// One argument the operator may write: the device tensor and its CPU copy.
struct WrittenArgument {
  Tensor device_tensor;
  Tensor cpu_tensor;
};

// The CPU copy of a device tensor, or `t` itself.
Tensor toCpu(const Tensor& t, std::optional<Device>* device_seen) {
  if (!onDevice(t)) return t;
  *device_seen = t.device();
  return t.to(kCpu);
}

// Replaces the device tensors in `value` (a tensor, a list of tensors, or a
// list of optional tensors) by CPU copies, recording the ones the operator
// may write.
void argumentToCpu(IValue& value, bool written,
                   std::optional<Device>* device_seen,
                   std::vector<WrittenArgument>* writes) {
  auto convert = [&](const Tensor& t) {
    Tensor cpu = toCpu(t, device_seen);
    if (written && !cpu.is_same(t)) writes->push_back({t, cpu});
    return cpu;
  };
  if (value.isTensor()) {
    value = IValue(convert(value.toTensor()));
  } else if (value.isTensorList()) {
    std::vector<Tensor> list = value.toTensorVector();
    for (Tensor& t : list) t = convert(t);
    value = IValue(std::move(list));
  } else if (value.isGenericList()) {
    std::vector<IValue> list = value.toListRef();
    for (IValue& v : list) {
      if (v.isTensor()) v = IValue(convert(v.toTensor()));
    }
    value = IValue(std::move(list));
  } else if (value.isDevice() && value.toDevice().is_privateuseone()) {
    // A factory's device argument: create on the CPU, move the result.
    *device_seen = value.toDevice();
    value = IValue(Device(kCpu));
  }
}

// The device version of one result: a written argument itself (for
// `Tensor(a!)` results), or a copy of a new CPU tensor on the device.
IValue resultToDevice(const IValue& value, const turnout::Argument& result,
                      const std::vector<turnout::Argument>& arguments,
                      const std::vector<IValue>& original_arguments,
                      Device target) {
  if (result.isWrite()) {
    // The result is the argument in the same alias set: return the device
    // tensor, whose memory now holds what the kernel wrote.
    const auto& set = result.alias_info()->beforeSets();
    for (size_t i = 0; i < arguments.size(); ++i) {
      if (arguments[i].alias_info() &&
          arguments[i].alias_info()->beforeSets() == set) {
        return original_arguments[i];
      }
    }
  }
  auto move = [&](const Tensor& t) {
    return t.defined() && t.device().is_cpu() ? t.to(target) : t;
  };
  if (value.isTensor()) return IValue(move(value.toTensor()));
  if (value.isTensorList()) {
    std::vector<Tensor> list = value.toTensorVector();
    for (Tensor& t : list) t = move(t);
    return IValue(std::move(list));
  }
  return value;
}

}  // namespace

void cpuFallback(const OperatorHandle& op, Stack* stack) {
  const turnout::FunctionSchema& schema = op.schema();
  const std::vector<turnout::Argument>& arguments = schema.arguments();
  const std::vector<turnout::Argument>& results = schema.returns();
  const turnout::OperatorName& name = op.operator_name();

  // Views cannot be emulated by copies: refuse before touching anything.
  for (const turnout::Argument& r : results) {
    TURNOUT_CHECK(!r.alias_info() || r.isWrite(), ErrorKind::NotImplemented,
                  name,
                  ": the privateuseone CPU fallback cannot run an operator "
                  "that returns a view of its argument (its result must "
                  "share the device memory, and the fallback works on CPU "
                  "copies); register a PrivateUse1 kernel for it, as "
                  "examples/privateuse1/backend.cc does for aten::view");
  }
  TURNOUT_CHECK(stack->size() >= arguments.size(), ErrorKind::InvalidArgument,
                name, ": the privateuseone CPU fallback needs the ",
                arguments.size(), " arguments of the schema on the stack, got ",
                stack->size());
  g_fallback_calls.fetch_add(1, std::memory_order_relaxed);

  // 1. Arguments to the CPU.
  const size_t first = stack->size() - arguments.size();
  std::vector<IValue> original(stack->begin() + first, stack->end());
  std::optional<Device> target;
  std::vector<WrittenArgument> writes;
  for (size_t i = 0; i < arguments.size(); ++i) {
    argumentToCpu((*stack)[first + i], arguments[i].isWrite(), &target,
                  &writes);
  }
  TURNOUT_CHECK(target.has_value(), ErrorKind::NotImplemented, name,
                ": reached the privateuseone CPU fallback without a "
                "privateuseone tensor or device argument (is DispatchKey::"
                "PrivateUse1 in the thread-local include set?)");

  // 2. The CPU kernel, straight below the backends: no autograd or other
  // functionality key runs a second time.
  op.redispatchBoxed(turnout::DispatchKeySet(turnout::DispatchKey::CPU), stack);

  // 3. What the kernel wrote goes back to the device arguments.
  for (WrittenArgument& w : writes) {
    turnout::copy_(w.device_tensor, w.cpu_tensor);
  }

  // 4. Results to the device.
  const size_t first_result = stack->size() - results.size();
  for (size_t j = 0; j < results.size(); ++j) {
    IValue& v = (*stack)[first_result + j];
    v = resultToDevice(v, results[j], arguments, original, *target);
  }
}

Device device() { return Device(DeviceType::PrivateUse1); }

Stats stats() {
  return Stats{g_live_allocations.load(std::memory_order_relaxed),
               g_allocations.load(std::memory_order_relaxed),
               g_fallback_calls.load(std::memory_order_relaxed),
               g_add_kernel_calls.load(std::memory_order_relaxed)};
}

}  // namespace privateuse1_example

// ---- Registration
// ------------------------------------------------------------- Kernels for
// operators that namespace aten defines elsewhere: a library may register impls
// for another namespace's operators.
TURNOUT_LIBRARY_IMPL(aten, PrivateUse1, m) {
  using namespace privateuse1_example;  // NOLINT
  m.impl("empty.memory_format", TURNOUT_FN(empty_device));
  m.impl("empty_strided", TURNOUT_FN(empty_strided_device));
  m.impl("copy_", TURNOUT_FN(copy_device));
  m.impl("fill_.Scalar", TURNOUT_FN(fill_device));
  m.impl("view", TURNOUT_FN(view_device));
  m.impl("item", TURNOUT_FN(item_device));
  m.impl("add.Tensor", TURNOUT_FN(add_device));
}

// Every other operator, of every namespace, on this device.
TURNOUT_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(turnout::CppFunction::makeFromBoxedFunction(
      &privateuse1_example::cpuFallback));
}
