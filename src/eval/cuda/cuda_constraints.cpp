// The task's static constraints judged over a CUDA build's texts (see cuda_constraints.hpp).
#include "eval/cuda/cuda_constraints.hpp"

#include <algorithm>
#include <regex>

namespace evoteam::eval::cuda {
namespace {

// Where each text the constraint judges comes from ("kernel.cu", "ptx sm_90a", ...) -> the text. Empty when the
// scope has nothing to judge in this build (SASS without cuobjdump, or a scope of the host target).
std::map<std::string, std::string> texts_for(const StaticConstraint& constraint, const CudaBuildTexts& build) {
  std::map<std::string, std::string> texts;
  const auto in_scope = [&](const std::string& arch) {
    return constraint.archs.empty() ||
           std::find(constraint.archs.begin(), constraint.archs.end(), arch) != constraint.archs.end();
  };
  if (constraint.scope == "source") {
    texts = build.sources;
  } else if (constraint.scope == "symbols") {
    std::string joined;
    for (const std::string& symbol : build.undefined) joined += symbol + "\n";
    texts["undefined symbols"] = joined;
  } else if (constraint.scope == "ptx" || constraint.scope == "sass") {
    for (const auto& [arch, text] : constraint.scope == "ptx" ? build.ptx : build.sass)
      if (in_scope(arch)) texts[constraint.scope + " " + arch] = text;
  }
  return texts;
}

std::string with_message(const StaticConstraint& constraint) {
  return constraint.message.empty() ? "" : ": " + constraint.message;
}

// Where a required construct is missing: a source constraint needs it in some file; PTX and SASS constraints in
// every arch's code, since each arch is a separate program. Empty when it is met.
std::optional<std::string> missing_from(const StaticConstraint& constraint,
                                        const std::map<std::string, std::string>& texts, const std::regex& pattern) {
  if (constraint.scope == "source") {
    const bool found = std::any_of(texts.begin(), texts.end(),
                                   [&](const auto& entry) { return std::regex_search(entry.second, pattern); });
    return found ? std::nullopt : std::optional<std::string>("the sources");
  }
  for (const auto& [where, text] : texts)
    if (!std::regex_search(text, pattern)) return where;
  return std::nullopt;
}

}  // namespace

ConstraintVerdict judge_task_constraints(const Task& task, const CudaBuildTexts& build) {
  ConstraintVerdict verdict;
  for (const StaticConstraint& constraint : task.static_constraints) {
    const std::map<std::string, std::string> texts = texts_for(constraint, build);
    if (texts.empty()) {
      // No evidence is not evidence of a violation, nor of adoption: say so and judge nothing.
      if (constraint.scope == "sass" && build.sass.empty())
        verdict.warnings.push_back("static constraint " + constraint.name +
                                   " (sass) not checked: cuobjdump is not installed");
      continue;
    }
    const std::regex pattern(constraint.pattern, std::regex::ECMAScript);
    if (constraint.required) {
      const std::optional<std::string> missing = missing_from(constraint, texts, pattern);
      if (constraint.once_adopted) {
        if (!missing) verdict.adopted.push_back(constraint.name);
        continue;
      }
      if (missing) {
        verdict.violation =
            StaticFinding{"constraint " + constraint.name + " not met in " + *missing + with_message(constraint),
                          {{"constraint", constraint.name}, {"where", *missing}, {"pattern", constraint.pattern}}};
        return verdict;
      }
      continue;
    }
    for (const auto& [where, text] : texts) {
      std::smatch match;
      if (std::regex_search(text, match, pattern)) {
        verdict.violation =
            StaticFinding{"constraint " + constraint.name + " violated in " + where + with_message(constraint),
                          {{"constraint", constraint.name}, {"where", where}, {"match", match.str().substr(0, 200)}}};
        return verdict;
      }
    }
  }
  return verdict;
}

}  // namespace evoteam::eval::cuda
