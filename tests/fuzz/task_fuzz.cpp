// The task loader and the shape, flop and byte expressions it checks: input is a task.json beside the files of
// kernels/host_matmul.
#include <fstream>

#include <evoteam/task/task.hpp>

#include "fuzz/fuzz_support.hpp"

namespace {

const std::filesystem::path& task_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path path = evoteam::fuzz::scratch_dir() / "task";
    std::filesystem::copy(std::filesystem::path(EVOTEAM_SOURCE_DIR) / "kernels" / "host_matmul", path,
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
    return path;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  evoteam::fuzz::write_text(task_dir() / "task.json", evoteam::fuzz::as_text(data, size));
  evoteam::fuzz::expect_clean_outcome([] {
    evoteam::Task task = evoteam::load_task(task_dir());
    for (const evoteam::Workload& workload : task.workloads) {
      const auto axes = evoteam::workload_axes(task, workload);
      evoteam::violated_constraint(task, axes);
      evoteam::workload_flops(task, axes);
      evoteam::workload_bytes(task, axes);
      for (const evoteam::TensorSpec& tensor : task.inputs) evoteam::tensor_elements(tensor, axes);
    }
    evoteam::param_error(task, evoteam::default_params(task));
  });
  return 0;
}
