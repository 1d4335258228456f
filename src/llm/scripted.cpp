// The scripted provider: replays replies from a JSONL file, for tests and offline demos.
// Each non-blank line (lines starting with // are comments) is one of:
//   an Anthropic Messages reply: {"content":[blocks], "stop_reason":"tool_use", "usage":{"input_tokens":..}}
//   {"malformed": "why"}                        a reply whose body could not be understood
//   {"failure": {"kind":"http_status", "http_status":529, "message":"..."}}   a call that brought no reply
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>

#include <sstream>

#include "llm/providers.hpp"

namespace evoteam {

namespace {

FailureKind failure_kind(const std::string& word, const std::string& where) {
  for (FailureKind kind : {FailureKind::network, FailureKind::timeout, FailureKind::http_status,
                           FailureKind::malformed_reply, FailureKind::interrupted, FailureKind::script_ended})
    if (to_string(kind) == word) return kind;
  throw InvalidInput(where + ": unknown failure kind '" + word + "'");
}

class ScriptedProvider : public LlmProvider {
 public:
  ScriptedProvider(const std::filesystem::path& file, std::string model, const PriceTable& prices)
      : m_model(std::move(model)), m_prices(prices) {
    std::istringstream lines(read_file(file));
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      if (line.compare(line.find_first_not_of(" \t"), 2, "//") == 0) continue;
      const std::string where = file.string() + ":" + std::to_string(number);
      nlohmann::json reply = nlohmann::json::parse(line, nullptr, false);
      if (reply.is_discarded() || !reply.is_object()) throw InvalidInput(where + ": not a JSON object");
      if (reply.contains("failure")) failure_kind(reply.at("failure").value("kind", ""), where);
      m_replies.push_back({where, std::move(reply)});
    }
  }

  std::string name() const override { return "scripted"; }

  LlmResult complete(const LlmRequest& request) override {
    if (interrupted()) return LlmFailure{FailureKind::interrupted, 0, "scripted: interrupted", 0, 0};
    if (m_next >= m_replies.size())
      return LlmFailure{FailureKind::script_ended, 0, "scripted: no reply left after " +
                                                          std::to_string(m_replies.size()), 1, 0};
    const auto& [where, reply] = m_replies[m_next++];
    if (reply.contains("malformed"))
      return LlmFailure{FailureKind::malformed_reply, 0, "scripted: malformed reply (" + where + "): " +
                                                             reply.at("malformed").dump(), 1, 0};
    if (reply.contains("failure")) {
      const nlohmann::json& spec = reply.at("failure");
      return LlmFailure{failure_kind(spec.value("kind", ""), where), spec.value("http_status", 0),
                        "scripted: " + spec.value("message", std::string("failure")), 1, 0};
    }
    LlmResult parsed = parse_anthropic_reply(reply.dump());
    if (!parsed.ok()) throw InvalidInput(where + ": " + parsed.failure().message);
    LlmResponse& response = parsed.response();
    const std::string model = request.model.empty() ? m_model : request.model;
    response.model = model;
    response.cost_usd = m_prices.cost(model, response.usage);
    response.request_id = where;
    return parsed;
  }

 private:
  std::string m_model;
  const PriceTable& m_prices;
  std::vector<std::pair<std::string, nlohmann::json>> m_replies;
  std::size_t m_next = 0;
};

}  // namespace

std::unique_ptr<LlmProvider> make_scripted_provider(const std::filesystem::path& file, const std::string& model,
                                                    const PriceTable& prices) {
  if (!std::filesystem::is_regular_file(file)) throw InvalidInput("llm.scripted_file: no such file: " + file.string());
  return std::make_unique<ScriptedProvider>(file, model, prices);
}

}  // namespace evoteam
