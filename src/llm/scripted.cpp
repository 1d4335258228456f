// The scripted provider: replays replies from a JSONL file, for tests and offline demos.
// Each non-blank line (lines starting with // are comments) is one of:
//   an Anthropic Messages reply: {"content":[blocks], "stop_reason":"tool_use", "usage":{"input_tokens":..}}
//   {"malformed": "why"}                        a reply whose body could not be understood
//   {"failure": {"kind":"http_status", "http_status":529, "message":"..."}}   a call that brought no reply
// Any line may carry "for": "<caller>" (a role such as "optimizer" or "debugger", or "supervisor"): a request
// is answered with the first unused line whose "for" names its caller (LlmRequest::caller), else with the first
// unused line without "for". Parallel members and the supervisor draw from one script in an order no thread
// schedule decides; a script without "for" replays strictly in order, as before. Any line may carry
// "latency_s": <seconds>, the time the model takes to answer it (slept outside the lock, so callers wait at once,
// as on a real server; an interrupt cuts it short), for measuring how evaluations and model calls overlap.
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <sstream>
#include <thread>

#include "llm/providers.hpp"

namespace evoteam {

namespace {

FailureKind failure_kind(const std::string& word, const std::string& where) {
  for (FailureKind kind :
       {FailureKind::network, FailureKind::timeout, FailureKind::http_status, FailureKind::malformed_reply,
        FailureKind::interrupted, FailureKind::script_ended, FailureKind::context_overflow})
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
      std::string caller;
      if (reply.contains("for")) {
        if (!reply.at("for").is_string() || reply.at("for").get<std::string>().empty())
          throw InvalidInput(where + ": \"for\" must name a caller (a role or \"supervisor\")");
        caller = reply.at("for").get<std::string>();
        reply.erase("for");
      }
      double latency_s = 0;
      if (reply.contains("latency_s")) {
        if (!reply.at("latency_s").is_number() || reply.at("latency_s").get<double>() < 0)
          throw InvalidInput(where + ": \"latency_s\" must be a number of seconds, at least 0");
        latency_s = reply.at("latency_s").get<double>();
        reply.erase("latency_s");
      }
      m_replies.push_back({where, caller, latency_s, std::move(reply), false});
    }
  }

  std::string name() const override { return "scripted"; }

  // What its "server" counts: the prompt tokens of the reply the call would get (a failure serves none).
  std::uint64_t prompt_tokens(const LlmRequest& request) override {
    std::lock_guard<std::mutex> lock(m_mutex);
    const Reply* next = next_reply_locked(request.caller);
    if (next == nullptr || !next->reply.contains("usage") || !next->reply.at("usage").is_object()) return 0;
    const nlohmann::json& usage = next->reply.at("usage");
    std::uint64_t tokens = 0;
    for (const char* field : {"input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"})
      if (usage.contains(field) && usage.at(field).is_number_unsigned()) tokens += usage.at(field).get<std::uint64_t>();
    return tokens;
  }

  LlmResult complete(const LlmRequest& request) override {
    if (interrupted()) return LlmFailure{FailureKind::interrupted, 0, "scripted: interrupted", 0, 0};
    const Reply* next = take_reply_for(request.caller);
    if (next == nullptr)
      return LlmFailure{FailureKind::script_ended, 0,
                        "scripted: no reply left" + (request.caller.empty() ? "" : " for " + request.caller) +
                            " after " + std::to_string(m_replies.size()),
                        1, 0};
    wait_for_the_model(next->latency_s);
    const std::string& where = next->where;
    const nlohmann::json& reply = next->reply;
    if (reply.contains("malformed"))
      return LlmFailure{FailureKind::malformed_reply, 0,
                        "scripted: malformed reply (" + where + "): " + reply.at("malformed").dump(), 1, 0};
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
  struct Reply {
    std::string where;   // file:line, for messages and the reply's request id
    std::string caller;  // the line's "for"; empty when any caller may take it
    double latency_s = 0;
    nlohmann::json reply;
    bool used = false;
  };

  // The first unused line addressed to `caller`, else the first unused line addressed to nobody; marks it used.
  // Replies never move once loaded, so the pointer stays valid after the lock is released.
  const Reply* take_reply_for(const std::string& caller) {
    std::lock_guard<std::mutex> lock(m_mutex);
    Reply* next = next_reply_locked(caller);
    return next == nullptr ? nullptr : mark_used(*next);
  }

  // The line a call from `caller` would get now, or nullptr; m_mutex held.
  Reply* next_reply_locked(const std::string& caller) {
    Reply* unaddressed = nullptr;
    for (Reply& candidate : m_replies) {
      if (candidate.used) continue;
      if (!caller.empty() && candidate.caller == caller) return &candidate;
      if (candidate.caller.empty() && unaddressed == nullptr) unaddressed = &candidate;
    }
    return unaddressed;
  }

  static void wait_for_the_model(double seconds) {
    const auto until =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    while (std::chrono::steady_clock::now() < until && !interrupted())
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds(20), until - std::chrono::steady_clock::now()));
  }

  static const Reply* mark_used(Reply& reply) {
    reply.used = true;
    return &reply;
  }

  std::string m_model;
  const PriceTable& m_prices;
  std::vector<Reply> m_replies;
  std::mutex m_mutex;  // members may call from their own threads
};

}  // namespace

std::unique_ptr<LlmProvider> make_scripted_provider(const std::filesystem::path& file, const std::string& model,
                                                    const PriceTable& prices) {
  if (!std::filesystem::is_regular_file(file)) throw InvalidInput("llm.scripted_file: no such file: " + file.string());
  return std::make_unique<ScriptedProvider>(file, model, prices);
}

}  // namespace evoteam
