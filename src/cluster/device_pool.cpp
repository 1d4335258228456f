// The device pool: one evaluator per device, each evaluation on whichever device is free. Timing never overlaps on
// one device (each evaluator takes its device's lock, which other evoteam processes respect too); builds of all of
// them share the host's compile slots.
#include "cluster/device_pool.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>

#include <evoteam/cluster/cluster.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/inventory.hpp>
#include <evoteam/core/text.hpp>

#include "cluster/executors.hpp"

namespace evoteam {

namespace cluster {

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!trim(item).empty()) items.push_back(trim(item));
  return items;
}

const GpuInfo* find_gpu(const std::vector<GpuInfo>& gpus, const std::string& id) {
  for (const GpuInfo& gpu : gpus)
    if (gpu.index == id || gpu.uuid == id) return &gpu;
  return nullptr;
}

}  // namespace

std::vector<GpuInfo> visible_gpus(ProcessRunner& runner) {
  std::vector<GpuInfo> gpus;
  const std::optional<std::filesystem::path> smi = find_program("nvidia-smi");
  if (!smi) return gpus;
  Command command;
  command.argv = {smi->string(), "--query-gpu=index,uuid,name", "--format=csv,noheader"};
  command.timeout = std::chrono::seconds(20);
  const ProcessResult result = runner.run(command);
  if (!result.ok()) return gpus;
  std::istringstream lines(result.out.text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> fields = split_list(line);
    if (fields.size() >= 3) gpus.push_back({fields[0], fields[1], fields[2]});
  }
  return gpus;
}

std::vector<std::string> resolve_devices(const std::string& spec, const Task& task, const std::vector<GpuInfo>& gpus,
                                         const std::optional<std::string>& cuda_visible_devices) {
  const std::vector<std::string> asked = spec == "all" ? std::vector<std::string>{} : split_list(spec);
  if (spec != "all" && asked.empty()) throw InvalidInput("--devices: expected \"all\" or a list such as 0,1");
  if (task.target == Target::host) return asked.empty() ? std::vector<std::string>{""} : asked;
  if (!task.ranks_axis.empty()) return {""};
  std::vector<std::string> offered;
  if (cuda_visible_devices)
    offered = split_list(*cuda_visible_devices);
  else
    for (const GpuInfo& gpu : gpus) offered.push_back(gpu.index);
  if (offered.empty()) return {""};  // no GPU here: the evaluator says so for each evaluation
  for (const std::string& id : asked)
    if (std::find(offered.begin(), offered.end(), id) == offered.end())
      throw InvalidInput("--devices names GPU " + id + ", which this machine does not offer (it offers " +
                         join(offered, ",") + ")");
  const std::vector<std::string> chosen = asked.empty() ? offered : asked;
  std::set<std::string> models;
  for (const std::string& id : chosen)
    if (const GpuInfo* gpu = find_gpu(gpus, id)) models.insert(gpu->name);
  if (models.size() > 1)
    throw InvalidInput("--devices selects GPUs of different models (" +
                       join(std::vector(models.begin(), models.end()), ", ") +
                       "): speedups measured on one are not comparable with another; name GPUs of one model");
  return chosen;
}

namespace {

class DevicePool : public CandidateEvaluator {
 public:
  explicit DevicePool(std::vector<std::unique_ptr<CandidateEvaluator>> lanes)
      : m_lanes(std::move(lanes)), m_busy(m_lanes.size(), false) {}

  Result evaluate(const std::filesystem::path& sources_dir, const ParamAssignment& params, Stage through,
                  std::uint64_t seed_salt) override {
    Lease lease(*this);
    return m_lanes[lease.lane]->evaluate(sources_dir, params, through, seed_salt);
  }
  Profile profile(const std::filesystem::path& sources_dir, const ParamAssignment& params) override {
    Lease lease(*this);
    return m_lanes[lease.lane]->profile(sources_dir, params);
  }
  std::vector<ParamSpec> param_space() const override { return m_lanes.front()->param_space(); }
  std::filesystem::path starting_sources() const override { return m_lanes.front()->starting_sources(); }
  const Task* task() const override { return m_lanes.front()->task(); }
  int parallel_width() const override { return static_cast<int>(m_lanes.size()); }

 private:
  // A free device for one evaluation, waited for when every device is busy.
  struct Lease {
    explicit Lease(DevicePool& owner) : pool(owner) {
      std::unique_lock<std::mutex> lock(pool.m_mutex);
      pool.m_freed.wait(lock,
                        [&] { return std::find(pool.m_busy.begin(), pool.m_busy.end(), false) != pool.m_busy.end(); });
      lane = static_cast<std::size_t>(std::find(pool.m_busy.begin(), pool.m_busy.end(), false) - pool.m_busy.begin());
      pool.m_busy[lane] = true;
    }
    ~Lease() {
      {
        std::lock_guard<std::mutex> lock(pool.m_mutex);
        pool.m_busy[lane] = false;
      }
      pool.m_freed.notify_one();
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    DevicePool& pool;
    std::size_t lane = 0;
  };

  std::vector<std::unique_ptr<CandidateEvaluator>> m_lanes;
  std::mutex m_mutex;
  std::condition_variable m_freed;
  std::vector<bool> m_busy;
};

}  // namespace

}  // namespace cluster

std::vector<std::string> local_devices(const ClusterSettings& settings, const Task& task, ProcessRunner& runner) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return cluster::resolve_devices(
      settings.devices, task,
      task.target == Target::cuda ? cluster::visible_gpus(runner) : std::vector<cluster::GpuInfo>{},
      visible != nullptr ? std::optional<std::string>(visible) : std::nullopt);
}

std::unique_ptr<CandidateEvaluator> make_local_evaluator(const ExecutorSettings& settings,
                                                         const std::filesystem::path& task_dir, ProcessRunner& runner,
                                                         WorkloadSelection workloads) {
  const std::vector<std::string> devices = local_devices(settings.cluster, load_task(task_dir), runner);
  if (devices.size() == 1 && devices.front().empty())
    return make_task_evaluator(settings.eval, task_dir, runner, workloads);
  std::vector<std::unique_ptr<CandidateEvaluator>> lanes;
  for (const std::string& device : devices)
    lanes.push_back(make_task_evaluator(settings.eval, task_dir, runner, workloads, device));
  return std::make_unique<cluster::DevicePool>(std::move(lanes));
}

}  // namespace evoteam
