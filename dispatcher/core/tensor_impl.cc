#include "dispatcher/core/tensor_impl.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>

#include "absl/strings/str_join.h"
#include "dispatcher/core/compute_dispatch_key.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/size_arithmetic.h"

namespace turnout {

UndefinedTensorImpl UndefinedTensorImpl::instance_;
std::atomic<PyObjectSlot::Releaser> PyObjectSlot::releaser_{nullptr};

namespace {
// Relaxed: a function pointer set once, when the bindings load, before any
// python_custom tensor exists.
std::atomic<PythonMetadataHook> g_metadata_hook{nullptr};

bool askPython(const TensorImpl& self, PythonMetadata what, DimVector* out) {
  PythonMetadataHook hook = g_metadata_hook.load(std::memory_order_relaxed);
  return hook != nullptr && hook(self, what, out);
}
}  // namespace

void setPythonMetadataHook(PythonMetadataHook hook) {
  g_metadata_hook.store(hook, std::memory_order_relaxed);
}

// The sizes and strides a python_custom tensor's handler answered, kept so
// that the IntArrayRef the readers return lives as long as the tensor (torch
// 1.13 keeps them on the Python object). Readers on several threads may
// share a tensor: the mutex guards the vectors (a cold path; plain tensors
// never get here). std::mutex, not absl::Mutex: the sanitizers see it (the
// Debian Abseil is not built for ThreadSanitizer).
struct TensorImpl::CustomCache {
  std::mutex mu;
  DimVector sizes;
  DimVector strides;
  bool has_sizes = false;
  bool has_strides = false;
};

void TensorImpl::freeCustomCache() {
  delete custom_cache_;
  custom_cache_ = nullptr;
}

IntArrayRef TensorImpl::keepAnswer(bool strides, const DimVector& answer) const {
  // Acquire: pairs with the release of the thread that made the cache.
  CustomCache* cache = __atomic_load_n(&custom_cache_, __ATOMIC_ACQUIRE);
  if (cache == nullptr) {
    // The first answer: one cache per tensor, whichever thread makes it.
    auto* made = new CustomCache;
    CustomCache* expected = nullptr;
    if (__atomic_compare_exchange_n(&custom_cache_, &expected, made,
                                    /*weak=*/false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
      cache = made;
    } else {
      delete made;
      cache = expected;
    }
  }
  std::lock_guard<std::mutex> lock(cache->mu);
  DimVector& kept = strides ? cache->strides : cache->sizes;
  bool& has = strides ? cache->has_strides : cache->has_sizes;
  if (has && kept == answer) return kept;
  TURNOUT_CHECK(!has || kept.size() == answer.size(),
                ErrorKind::InvalidArgument, strides ? "strides()" : "sizes()",
                ": the tensor's Python handler answered ", shapeString(kept),
                " and now ", shapeString(answer),
                "; the number of dimensions of a tensor whose subclass "
                "answers its ", strides ? "strides" : "sizes",
                " (dispatch_sizes_strides_policy) cannot change, C++ code may "
                "still hold the first answer");
  // Same length: in place, so an earlier IntArrayRef stays valid.
  if (has) {
    std::copy(answer.begin(), answer.end(), kept.begin());
  } else {
    kept = answer;
    has = true;
  }
  return kept;
}

IntArrayRef TensorImpl::customSizes() const {
  DimVector answer;
  if (!askPython(*this, PythonMetadata::kSizes, &answer)) return sizes_;
  for (int64_t s : answer) {
    TURNOUT_CHECK(s >= 0, ErrorKind::InvalidArgument,
                  "sizes(): the tensor's Python handler answered ",
                  shapeString(answer), "; answer sizes >= 0, or None to keep "
                  "the tensor's own");
  }
  return keepAnswer(/*strides=*/false, answer);
}

IntArrayRef TensorImpl::customStrides() const {
  DimVector answer;
  if (!askPython(*this, PythonMetadata::kStrides, &answer)) return strides_;
  return keepAnswer(/*strides=*/true, answer);
}

namespace {

// The one value the metadata hook answered for `what` (dim, numel,
// is_contiguous, storage_offset); a count below 0 is refused, with the
// handler named, rather than wrapped or sized from later.
int64_t singleAnswer(const DimVector& answer, const char* what) {
  TURNOUT_INTERNAL_ASSERT(answer.size() == 1, "the metadata hook answered ",
                          answer.size(), " values for ", what, "()");
  TURNOUT_CHECK(answer[0] >= 0, ErrorKind::InvalidArgument, what,
                "(): the tensor's Python handler answered ", answer[0],
                "; answer a value >= 0, or None to keep the tensor's own");
  return answer[0];
}

}  // namespace

int64_t TensorImpl::customDim() const {
  DimVector answer;
  if (!askPython(*this, PythonMetadata::kDim, &answer)) {
    return static_cast<int64_t>(sizes_.size());
  }
  return singleAnswer(answer, "dim");
}

int64_t TensorImpl::customNumel() const {
  DimVector answer;
  if (!askPython(*this, PythonMetadata::kNumel, &answer)) return numel_;
  return singleAnswer(answer, "numel");
}

bool TensorImpl::customIsContiguous() const {
  DimVector answer;
  if (!askPython(*this, PythonMetadata::kIsContiguous, &answer)) {
    return is_contiguous_;
  }
  return singleAnswer(answer, "is_contiguous") != 0;
}

int64_t TensorImpl::customStorageOffset() const {
  DimVector answer;
  if (!askPython(*this, PythonMetadata::kStorageOffset, &answer)) {
    return storage_offset_;
  }
  return singleAnswer(answer, "storage_offset");
}

std::string shapeString(IntArrayRef values) {
  return "[" + absl::StrJoin(values, ", ") + "]";
}

namespace {

int64_t wrapDim(int64_t d, int64_t dims, const char* caller) {
  TURNOUT_CHECK(d >= -dims && d < dims, ErrorKind::Index, caller,
                "(): dimension ", d, " is out of range for a tensor of ", dims,
                " dimensions (expected a dimension in [", -dims, ", ", dims - 1,
                "])");
  return d < 0 ? d + dims : d;
}

// contiguousNumel's errors, out of line: the message building would give
// every new tensor's path a large frame.
[[noreturn]] __attribute__((noinline, cold)) void throwBadSizes(
    IntArrayRef sizes) {
  for (int64_t s : sizes) {
    TURNOUT_CHECK(s >= 0, ErrorKind::InvalidArgument,
                  "set_sizes_contiguous(): sizes must be non-negative, got ",
                  shapeString(sizes));
  }
  checkedNumel(sizes, "set_sizes_contiguous");  // throws: the count overflows
  __builtin_unreachable();
}

// The element count of `sizes` for set_sizes_contiguous; throws for a
// negative size or a count that overflows int64.
int64_t contiguousNumel(IntArrayRef sizes) {
  bool negative = false;
  for (int64_t s : sizes) negative |= s < 0;
  int64_t numel = 0;
  if (__builtin_expect(negative || !tryNumel(sizes, &numel), 0)) {
    throwBadSizes(sizes);
  }
  return numel;
}

}  // namespace

DispatchKeySet TensorImpl::computeKeySet(ScalarType dtype, Layout layout,
                                         Device device) {
  DispatchKeySet backend(computeDispatchKey(dtype, layout, device));
  // As c10: the autograd key follows the backend bit of the backend key;
  // keys without one (MkldnnCPU, SparseCsrCPU) get AutogradOther.
  return backend |
         getAutogradRelatedKeySetFromBackend(backend.highestBackendKey());
}

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, Device device,
                       Layout layout)
    : TensorImpl(std::move(storage), dtype, device, layout,
                 computeKeySet(dtype, layout, device)) {}

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, Device device,
                       Layout layout, DispatchKeySet key_set)
    : key_set_(key_set),
      storage_(std::move(storage)),
      itemsize_(elementSize(dtype)),
      dtype_(dtype),
      device_(device),
      layout_(layout),
      version_counter_(make_intrusive<VersionCounter>()) {
  checkLayoutAndStorageDevice();
  sizes_.assign({0});
  if (layout_ == Layout::Strided) strides_.assign({1});
  refreshNumelAndContiguity();
}

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, Device device,
                       Layout layout, DispatchKeySet key_set, IntArrayRef sizes,
                       intrusive_ptr<VersionCounter> version_counter)
    : key_set_(key_set),
      storage_(std::move(storage)),
      sizes_(sizes.begin(), sizes.end()),
      strides_(layout == Layout::Strided ? sizes.size() : 0),
      itemsize_(elementSize(dtype)),
      dtype_(dtype),
      device_(device),
      layout_(layout),
      is_contiguous_(layout == Layout::Strided),
      version_counter_(version_counter.defined()
                           ? std::move(version_counter)
                           : make_intrusive<VersionCounter>()) {
  // The path of every new kernel result: plain loops over the arguments'
  // array and strides_'s (one InlinedVector data() test, not one per
  // element), the errors out of line.
  const int64_t* s = sizes.data();
  const size_t n = sizes.size();
  bool negative = false;
  for (size_t i = 0; i < n; ++i) negative |= s[i] < 0;
  int64_t numel = 0;
  if (__builtin_expect(negative || !tryNumel(sizes, &numel), 0)) {
    throwBadSizes(sizes);
  }
  numel_ = numel;
  checkLayoutAndStorageDevice();
  if (layout_ != Layout::Strided) return;
  int64_t* strides = strides_.data();
  int64_t stride = 1;
  for (size_t i = n; i-- > 0;) {
    strides[i] = stride;
    // Saturates only when an inner size is 0 (numel fits int64).
    stride = saturatingMul(stride, s[i] == 0 ? 1 : s[i]);
  }
  // Contiguous from offset 0: the elements end at numel * itemsize bytes.
  int64_t nbytes = 0;
  if (storage_.defined() &&
      (__builtin_mul_overflow(numel_, static_cast<int64_t>(itemsize_),
                              &nbytes) ||
       static_cast<uint64_t>(nbytes) > storage_.nbytes())) {
    checkFitsInStorage("set_sizes_contiguous");
  }
}

void TensorImpl::fillContiguousStrides() {
  int64_t stride = 1;
  for (size_t i = sizes_.size(); i-- > 0;) {
    strides_[i] = stride;
    // Saturates only when an inner size is 0 (numel fits int64).
    stride = saturatingMul(stride, sizes_[i] == 0 ? 1 : sizes_[i]);
  }
}

void TensorImpl::checkLayoutAndStorageDevice() const {
  if (__builtin_expect(
          isValidLayout(static_cast<int64_t>(layout_)) &&
              (!storage_.defined() || storage_.device_type() == device_.type()),
          1)) {
    return;
  }
  throwBadLayoutOrStorageDevice();
}

void TensorImpl::throwBadLayoutOrStorageDevice() const {
  TURNOUT_CHECK(isValidLayout(static_cast<int64_t>(layout_)),
                ErrorKind::InvalidArgument, "TensorImpl(): invalid layout ",
                static_cast<int>(layout_));
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument,
                "TensorImpl(): the storage is on ", storage_.device(),
                " but the tensor's device is ", device_,
                "; pass a storage from getAllocator(DeviceType::",
                toString(device_.type()), ")");
  __builtin_unreachable();
}

TensorImpl::TensorImpl(UndefinedTag)
    : dtype_(ScalarType::Undefined),
      device_(DeviceType::CPU),
      layout_(Layout::Strided) {}

void TensorImpl::set_autograd_meta(std::unique_ptr<AutogradMetaInterface> meta) {
  checkMutable("set_autograd_meta()");
  autograd_meta_ = std::move(meta);
}

void TensorImpl::shallow_copy_from(const TensorImpl& src) {
  checkMutable("shallow_copy_from()");
  if (&src == this) return;
  // The copies that may allocate first; the rest cannot throw.
  DimVector sizes = src.sizes_;
  DimVector strides = src.strides_;
  Storage storage = src.storage_;
  const DispatchKeySet python_keys =
      DispatchKeySet(DispatchKey::Python).add(DispatchKey::PythonTLSSnapshot);
  key_set_ = (src.key_set_ - python_keys) | (key_set_ & python_keys);
  storage_ = std::move(storage);
  sizes_ = std::move(sizes);
  strides_ = std::move(strides);
  storage_offset_ = src.storage_offset_;
  numel_ = src.numel_;
  itemsize_ = src.itemsize_;
  dtype_ = src.dtype_;
  device_ = src.device_;
  layout_ = src.layout_;
  is_contiguous_ = src.is_contiguous_;
  is_wrapped_number_ = src.is_wrapped_number_;
}

void TensorImpl::set_version_counter(intrusive_ptr<VersionCounter> counter) {
  checkMutable("set_version_counter()");
  TURNOUT_CHECK(counter.defined(), ErrorKind::InvalidArgument,
                "set_version_counter(): the counter is null");
  version_counter_ = std::move(counter);
}

IntArrayRef TensorImpl::strides() const {
  checkStrided("strides");
  if (__builtin_expect(python_custom_ & kCustomStrides, 0)) {
    return customStrides();
  }
  return strides_;
}

// A python_custom tensor's size(d) and stride(d) ask as torch 1.13's: dim()
// to wrap d, then the whole sizes (strides); the answer's length is checked,
// as a handler may answer a dim() that disagrees with its sizes.
int64_t TensorImpl::customSizeOrStride(bool strides, int64_t d) const {
  const char* what = strides ? "stride" : "size";
  const int64_t dims = dim();
  const int64_t i = wrapDim(d, dims, what);
  IntArrayRef all = strides ? this->strides() : sizes();
  TURNOUT_CHECK(i < static_cast<int64_t>(all.size()), ErrorKind::Index, what,
                "(", d, "): the tensor's Python handler answered ", what, "s ",
                shapeString(all), " for a tensor of ", dims,
                " dimensions; answer as many ", what, "s as dim()");
  return all[i];
}

int64_t TensorImpl::size(int64_t d) const {
  if (__builtin_expect(python_custom_ & kCustomSizes, 0)) {
    return customSizeOrStride(/*strides=*/false, d);
  }
  return sizes_[wrapDim(d, dim_default(), "size")];
}

int64_t TensorImpl::stride(int64_t d) const {
  if (__builtin_expect(python_custom_ & (kCustomSizes | kCustomStrides), 0)) {
    return customSizeOrStride(/*strides=*/true, d);
  }
  checkStrided("strides");
  return strides_[wrapDim(d, dim_default(), "stride")];
}

void TensorImpl::throwNotStrided(const char* caller) const {
  TURNOUT_CHECK(false, ErrorKind::NotImplemented, caller,
                "(): a tensor with layout ", toString(layout_),
                " has no strides");
  __builtin_unreachable();
}

void* TensorImpl::data() const {
  if (__builtin_expect(!storage_.defined(), 0)) return dataWithoutStorage();
  char* base = static_cast<char*>(storage_.mutable_data());
  if (base == nullptr) return nullptr;
  return base + storage_offset_ * static_cast<int64_t>(itemsize_);
}

void* TensorImpl::dataWithoutStorage() const {
  // A tensor without storage (a wrapper subclass, whose data its Python
  // object holds) reaching a kernel that reads its elements: torch 1.13
  // reads through a null pointer there.
  TURNOUT_CHECK(numel_ == 0, ErrorKind::InvalidArgument,
                "data_ptr(): a kernel read the elements of a ",
                toString(layout_), " tensor of sizes ", shapeString(sizes_),
                " that has no storage (a wrapper subclass made by "
                "_make_wrapper_subclass keeps its data in Python, not in the "
                "tensor). A wrapper that reaches a kernel got below the "
                "Python key: unwrap it to the tensors it holds in "
                "__turnout_dispatch__ before calling the operator");
  return nullptr;
}

void TensorImpl::checkMutable(const char* caller) const {
  TURNOUT_CHECK(this != UndefinedTensorImpl::singleton(),
                ErrorKind::InvalidArgument, caller,
                "(): called on an undefined Tensor");
}

void TensorImpl::set_wrapped_number(bool value) {
  checkMutable("set_wrapped_number");
  TURNOUT_CHECK(!value || dim() == 0, ErrorKind::InvalidArgument,
                "set_wrapped_number(true): a wrapped number is a 0-dim "
                "tensor, this one has sizes ", shapeString(sizes_));
  is_wrapped_number_ = value;
}

void TensorImpl::set_sizes_contiguous(IntArrayRef sizes) {
  checkMutable("set_sizes_contiguous");
  // Before any change: a bad shape is refused.
  const int64_t numel = contiguousNumel(sizes);
  DimVector old_sizes = sizes_;
  DimVector old_strides = strides_;
  sizes_.assign(sizes.begin(), sizes.end());
  if (layout_ == Layout::Strided) {
    strides_.resize(sizes_.size());
    fillContiguousStrides();
  }
  numel_ = numel;
  is_contiguous_ = computeContiguous();
  try {
    checkFitsInStorage("set_sizes_contiguous");
  } catch (...) {
    // Leave the tensor as it was.
    sizes_ = std::move(old_sizes);
    strides_ = std::move(old_strides);
    refreshNumelAndContiguity();
    throw;
  }
}

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides) {
  checkMutable("set_sizes_and_strides");
  checkStrided("set_sizes_and_strides");
  TURNOUT_CHECK(sizes.size() == strides.size(), ErrorKind::InvalidArgument,
                "set_sizes_and_strides(): ", sizes.size(), " sizes ",
                shapeString(sizes), " but ", strides.size(), " strides ",
                shapeString(strides));
  for (size_t i = 0; i < sizes.size(); ++i) {
    TURNOUT_CHECK(sizes[i] >= 0 && strides[i] >= 0, ErrorKind::InvalidArgument,
                  "set_sizes_and_strides(): sizes and strides must be "
                  "non-negative, got sizes ",
                  shapeString(sizes), " and strides ", shapeString(strides));
  }
  const int64_t numel = checkedNumel(sizes, "set_sizes_and_strides");
  DimVector old_sizes = sizes_;
  DimVector old_strides = strides_;
  sizes_.assign(sizes.begin(), sizes.end());
  strides_.assign(strides.begin(), strides.end());
  numel_ = numel;
  is_contiguous_ = computeContiguous();
  try {
    checkFitsInStorage("set_sizes_and_strides");
  } catch (...) {
    sizes_ = std::move(old_sizes);
    strides_ = std::move(old_strides);
    refreshNumelAndContiguity();
    throw;
  }
}

void TensorImpl::set_storage_offset(int64_t storage_offset) {
  checkMutable("set_storage_offset");
  TURNOUT_CHECK(storage_offset >= 0, ErrorKind::InvalidArgument,
                "set_storage_offset(): the offset must be non-negative, got ",
                storage_offset);
  const int64_t old = storage_offset_;
  storage_offset_ = storage_offset;
  try {
    checkFitsInStorage("set_storage_offset");
  } catch (...) {
    storage_offset_ = old;
    throw;
  }
}

void TensorImpl::refreshNumelAndContiguity() {
  numel_ = computeNumel();
  is_contiguous_ = computeContiguous();
}

int64_t TensorImpl::computeNumel() const {
  // The mutators refuse sizes whose product overflows: this never fails.
  int64_t numel = 0;
  const bool fits = tryNumel(sizes_, &numel);
  TURNOUT_INTERNAL_ASSERT(fits, "numel of sizes ", shapeString(sizes_),
                          " overflows int64");
  return numel;
}

bool TensorImpl::computeContiguous() const {
  if (layout_ != Layout::Strided) return false;
  // As c10: an empty tensor is contiguous; otherwise, from the innermost
  // dimension out, each stride must be the product of the sizes inside it,
  // except that a dimension of size 1 may have any stride.
  if (numel_ == 0) return true;
  int64_t expected = 1;
  for (size_t i = sizes_.size(); i-- > 0;) {
    if (sizes_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= sizes_[i];
  }
  return true;
}

bool TensorImpl::storageBytesNeeded(uint64_t* bytes) const {
  *bytes = 0;
  if (layout_ != Layout::Strided || numel_ == 0) return true;
  int64_t needed = 0;
  if (!tryStorageBytes(sizes_, strides_, storage_offset_, itemsize_, &needed)) {
    return false;
  }
  *bytes = static_cast<uint64_t>(needed);
  return true;
}

void TensorImpl::checkFitsInStorage(const char* caller) const {
  if (!storage_.defined()) return;
  uint64_t needed = 0;
  TURNOUT_CHECK(storageBytesNeeded(&needed), ErrorKind::InvalidArgument, caller,
                "(): sizes ", shapeString(sizes_), ", strides ",
                shapeString(strides_), " and offset ", storage_offset_,
                " reach past int64 bytes of storage (", itemsize_,
                "-byte elements)");
  TURNOUT_CHECK(needed <= storage_.nbytes(), ErrorKind::InvalidArgument, caller,
                "(): sizes ", shapeString(sizes_), ", strides ",
                shapeString(strides_), " and offset ", storage_offset_,
                " need ", needed, " bytes of storage but it has ",
                storage_.nbytes());
}

void TensorImpl::checkInvariants() const {
  if (this == UndefinedTensorImpl::singleton()) {
    TURNOUT_INTERNAL_ASSERT(key_set_.empty() && !storage_.defined());
    return;
  }
  for (int64_t s : sizes_) {
    TURNOUT_INTERNAL_ASSERT(s >= 0, "negative size in ", shapeString(sizes_));
  }
  TURNOUT_INTERNAL_ASSERT(computeNumel() == numel_, "numel ", numel_,
                          " for sizes ", shapeString(sizes_));
  TURNOUT_INTERNAL_ASSERT(storage_offset_ >= 0);
  TURNOUT_INTERNAL_ASSERT(itemsize_ == elementSize(dtype_));
  if (layout_ == Layout::Strided) {
    TURNOUT_INTERNAL_ASSERT(sizes_.size() == strides_.size(), "sizes ",
                            shapeString(sizes_), " strides ",
                            shapeString(strides_));
  } else {
    TURNOUT_INTERNAL_ASSERT(strides_.empty() && !is_contiguous_);
  }
  TURNOUT_INTERNAL_ASSERT(
      !storage_.defined() || storage_.device_type() == device_.type(),
      "storage on ", storage_.device(), ", tensor on ", device_);
  TURNOUT_INTERNAL_ASSERT(is_contiguous_ == computeContiguous(),
                          "stale is_contiguous for sizes ", shapeString(sizes_),
                          " strides ", shapeString(strides_));
  uint64_t needed = 0;
  TURNOUT_INTERNAL_ASSERT(
      !storage_.defined() ||
          (storageBytesNeeded(&needed) && needed <= storage_.nbytes()),
      "sizes ", shapeString(sizes_), ", strides ", shapeString(strides_),
      " and offset ", storage_offset_, " overrun a storage of ",
      storage_.nbytes(), " bytes");
}

}  // namespace turnout
