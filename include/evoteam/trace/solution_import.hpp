// `evoteam import-solution`: a published FlashInfer-Trace Solution (its CUDA sources and its torch-bound entry
// point) written as a candidate of the task that follows its definition, with its provenance, and the published
// solutions' evaluations read back for reports.
#ifndef EVOTEAM_TRACE_SOLUTION_IMPORT_HPP
#define EVOTEAM_TRACE_SOLUTION_IMPORT_HPP

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <evoteam/core/error.hpp>
#include <evoteam/eval/evaluator.hpp>
#include <evoteam/task/task.hpp>

namespace evoteam {

// A Solution the task cannot take, naming the field that stopped it ("spec.language", "definition", ...).
class SolutionRefused : public InvalidInput {
 public:
  SolutionRefused(std::string field, const std::string& why)
      : InvalidInput("solution field " + field + ": " + why), m_field(std::move(field)) {}
  const std::string& field() const { return m_field; }

 private:
  std::string m_field;
};

// Where the Solution was published: read from provenance.json beside the Solution file (its entry for the
// file's name), else empty.
struct SolutionSource {
  std::string repository;
  std::string commit;
  std::string path;
  std::string licence;
};

struct ImportSolutionOptions {
  // The published Definition: when given, the Solution's definition must be it and every tensor the task shares
  // with it must have the definition's dtype; its input order is the entry point's argument order.
  std::optional<std::filesystem::path> definition;
};

struct ImportedSolution {
  std::string name;
  std::string definition;
  std::string author;
  std::string entry_point;
  SolutionSource source;
  std::filesystem::path candidate_dir;
  std::vector<std::string> files;  // written into candidate_dir
};

// Writes the candidate (the task's kernel file: evoteam's torch stand-in, the Solution's sources verbatim with
// their local and torch includes commented out, and the glue from the task's entry point to the Solution's) and
// published.json. Throws SolutionRefused for a Solution the task cannot take, InvalidInput for unreadable files.
ImportedSolution import_solution(const std::filesystem::path& solution_file, const Task& task,
                                 const std::filesystem::path& out_dir, const ImportSolutionOptions& options = {});

// One imported published Solution and, when it was evaluated, what eval.json beside its published.json says.
struct PublishedResult {
  std::filesystem::path candidate_dir;
  std::string task;
  std::string definition;
  std::string solution;
  std::string author;
  SolutionSource source;
  // eval.json beside published.json (`evoteam eval TASK --candidate DIR --json`): verdict, stages, per-workload
  // times and the vendor fraction when timed; nullopt when the candidate was not evaluated.
  std::optional<EvalResult> eval;
};

// The published results under `dir`: dir itself when it holds published.json, else every directory below it
// (any depth) that does, sorted by path. Throws InvalidInput when a published.json or eval.json is unreadable.
std::vector<PublishedResult> read_published_results(const std::filesystem::path& dir);

}  // namespace evoteam

#endif
