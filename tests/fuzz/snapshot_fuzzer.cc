// Fuzz target: the registry snapshot reader (RegistrySnapshot::fromJson, what
// `inspect diff` reads) and the diff. Text that is not a snapshot must be
// refused with an InvalidArgument error that says something; a snapshot
// that loads must write JSON that loads back and writes the same (the first
// write may replace bytes that are not UTF-8 by U+FFFD, after which the
// text is stable), and differ from its reloaded self in nothing.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dispatcher/core/error.h"
#include "dispatcher/debug/registry_snapshot.h"
#include "tests/fuzz/fuzz_support.h"

namespace turnout {
namespace fuzz {
namespace {

void checkSnapshot(std::string_view text) {
  std::optional<RegistrySnapshot> first;
  try {
    first = RegistrySnapshot::fromJson(text, "fuzz.json");
  } catch (const Error& e) {
    checkRejection(e, text, "fromJson");
    return;
  }
  const std::string json = first->toJson();
  std::optional<RegistrySnapshot> second;
  try {
    second = RegistrySnapshot::fromJson(json, "written.json");
  } catch (const Error& e) {
    FUZZ_CHECK(false, "the written snapshot does not load: ", e.message(),
               "\n", json);
  }
  const std::string again = second->toJson();
  FUZZ_CHECK(again == json, "toJson -> fromJson -> toJson differs:\n", json,
             "\nthen\n", again);
  const std::optional<RegistrySnapshot> third =
      RegistrySnapshot::fromJson(again, "again.json");
  const RegistryDiff same = diffSnapshots(*second, *third);
  FUZZ_CHECK(same.empty(), "a snapshot differs from itself reloaded:\n",
             same.toString());
  // Everything against nothing and back: every record becomes a change.
  const RegistrySnapshot empty;
  for (const RegistryDiff& d :
       {diffSnapshots(empty, *second), diffSnapshots(*second, empty),
        diffSnapshots(*first, *second)}) {
    (void)d.toString();
    (void)d.toJson();
  }
  (void)second->find("aten::add.Tensor");
}

}  // namespace
}  // namespace fuzz
}  // namespace turnout

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return turnout::fuzz::runTextInput(data, size, /*skip_deep=*/false,
                                     turnout::fuzz::checkSnapshot);
}
