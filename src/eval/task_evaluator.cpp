// Adapter from the CandidateEvaluator seam to the evaluator on a task directory.
#include <atomic>

#include <unistd.h>

#include <evoteam/core/process.hpp>
#include <evoteam/eval/candidate_evaluator.hpp>
#include <evoteam/eval/eval_writeup.hpp>
#include <evoteam/eval/evaluator.hpp>

namespace evoteam {

namespace {

class TaskEvaluator : public CandidateEvaluator {
 public:
  TaskEvaluator(const EvalSettings& settings, const std::filesystem::path& task_dir, ProcessRunner& runner,
                WorkloadSelection workloads)
      : m_task(load_task(task_dir)),
        m_evaluator(settings, runner, default_cache_dir(settings)),
        m_reuse_results(settings.reuse_results) {
    select_workloads(m_task, workloads);
    // The starting candidate holds exactly the editable kernel files, as every later candidate does.
    static std::atomic<int> counter{0};
    m_start_dir = std::filesystem::temp_directory_path() /
                  ("evoteam-start-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(m_start_dir);
    for (const std::string& file : m_task.kernel_files) {
      std::filesystem::create_directories((m_start_dir / file).parent_path());
      std::filesystem::copy_file(m_task.dir / file, m_start_dir / file,
                                 std::filesystem::copy_options::overwrite_existing);
    }
  }
  ~TaskEvaluator() override {
    std::error_code ignored;
    std::filesystem::remove_all(m_start_dir, ignored);
  }

  Result evaluate(const std::filesystem::path& sources_dir, const ParamAssignment& params, Stage through,
                  std::uint64_t seed_salt) override {
    EvalOptions options = EvalOptions::through(through);
    // Re-verification must not be served from the result cache: it exists to run fresh seeds; nor may any
    // evaluation of a run that asked to measure afresh (eval.reuse_results false).
    if (seed_salt != 0 || !m_reuse_results) options.result_cache = CachePolicy::refresh;
    EvalResult result = m_evaluator.evaluate(m_task, Candidate{sources_dir, params}, options);
    Result out;
    static_cast<Measurement&>(out) = measurement_of(result);
    out.summary = describe_for_agent(result);
    out.eval_json = result.to_json();  // eval.json: the whole result the measurement was taken from
    out.build_log = result.build_log;
    return out;
  }

  Profile profile(const std::filesystem::path& sources_dir, const ParamAssignment& params) override {
    EvalResult result =
        m_evaluator.evaluate(m_task, Candidate{sources_dir, params}, EvalOptions::through(Stage::profile));
    Profile profile;
    profile.metrics = result.profile;
    if (result.profile.is_object()) {
      profile.bound = result.profile.value("bound", std::string("unknown"));
      profile.summary = result.profile.value("summary", std::string());
    }
    if (profile.bound.empty()) profile.bound = "unknown";
    if (profile.summary.empty()) profile.summary = to_string(result.verdict) + " " + result.reason;
    profile.device_s = measurement_of(result).device_s;
    return profile;
  }

  std::vector<ParamSpec> param_space() const override { return m_task.params; }

  std::filesystem::path starting_sources() const override { return m_start_dir; }
  const Task* task() const override { return &m_task; }

 private:
  Task m_task;
  Evaluator m_evaluator;
  bool m_reuse_results;
  std::filesystem::path m_start_dir;
};

}  // namespace

std::unique_ptr<CandidateEvaluator> make_task_evaluator(const EvalSettings& settings,
                                                        const std::filesystem::path& task_dir, ProcessRunner& runner,
                                                        WorkloadSelection workloads, const std::string& device) {
  EvalSettings on_device = settings;
  on_device.device = device;
  return std::make_unique<TaskEvaluator>(on_device, task_dir, runner, workloads);
}

}  // namespace evoteam
