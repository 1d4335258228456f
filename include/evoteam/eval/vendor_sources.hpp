#pragma once
// Where a vendor library's sources are, for the tasks measured against it (task.json's vendor_baseline): today
// FlashInfer's headers and its bundled CCCL. The evaluator builds from them; `doctor` reports them.
#include <filesystem>
#include <optional>
#include <string>

namespace evoteam {

// The pinned release the scripts fetch (scripts/setup.sh) and the task READMEs describe.
inline constexpr const char* k_flashinfer_package = "flashinfer-python";

// FlashInfer's sources: a directory holding include/flashinfer and cccl/ (the flashinfer-python wheel's
// flashinfer/data), or a flashinfer package directory that holds data/.
struct VendorSources {
  std::filesystem::path root;
  std::string version;  // from root/VERSION, "unknown" without it
};
// eval.cuda.flashinfer when set (`configured`), else $EVOTEAM_FLASHINFER, else build/tools/flashinfer under the
// install root (where scripts/setup.sh unpacks the wheel). nullopt with `why` when none of them holds the headers.
std::optional<VendorSources> find_flashinfer(const std::string& configured, std::string* why);

}  // namespace evoteam
