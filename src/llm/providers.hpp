#pragma once
// The concrete providers and their wire formats. The body builders and reply parsers are separate functions
// so tests can check the protocol without a server.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include <evoteam/core/json_fields.hpp>  // text_or: a reply's string field; servers are untrusted input
#include <evoteam/llm/llm.hpp>

#include "llm/http.hpp"

namespace evoteam {

// The price table a network provider charges its replies by, one rule for every protocol: on a local endpoint (a
// server of one's own) a copy on which a model the table does not know costs 0, as the run's start said; elsewhere
// the table itself, which refuses an unpriced model before the first call (make_provider).
class ReplyPrices {
 public:
  ReplyPrices(const PriceTable& prices, bool local_endpoint)
      : m_local(local_endpoint ? std::optional<PriceTable>(prices) : std::nullopt),
        m_prices(m_local ? *m_local : prices) {
    if (m_local) m_local->allow_unpriced_models(true);
  }
  ReplyPrices(const ReplyPrices&) = delete;  // m_prices may point into m_local
  ReplyPrices& operator=(const ReplyPrices&) = delete;
  const PriceTable& table() const { return m_prices; }

 private:
  std::optional<PriceTable> m_local;
  const PriceTable& m_prices;
};

std::unique_ptr<LlmProvider> make_anthropic_provider(const ProviderSettings& settings, const PriceTable& prices);
std::unique_ptr<LlmProvider> make_openai_provider(const ProviderSettings& settings, const PriceTable& prices);
std::unique_ptr<LlmProvider> make_scripted_provider(const std::filesystem::path& file, const std::string& model,
                                                    const PriceTable& prices);

// Anthropic Messages: request body (cache_control on the system prompt and the last message when caching)
// and reply parsing. A reply that is not a valid message is a malformed_reply failure; cost is left 0.
nlohmann::json anthropic_request_body(const LlmRequest& request, bool prompt_caching);
LlmResult parse_anthropic_reply(const std::string& body);

// OpenAI Chat Completions: request body and reply parsing (arguments that are not a JSON object are kept
// as text in the tool_use block, for the loop to answer with an error).
nlohmann::json openai_request_body(const LlmRequest& request, const std::string& max_tokens_field);
LlmResult parse_openai_reply(const std::string& body);

// A malformed_reply failure of `provider` ("anthropic: malformed reply: <why>"); its cost is left 0.
inline LlmFailure malformed_reply(const char* provider, const std::string& why) {
  LlmFailure failure;
  failure.kind = FailureKind::malformed_reply;
  failure.message = std::string(provider) + ": malformed reply: " + why;
  return failure;
}

// A usage field's token count; 0 when it is absent, negative or not an integer.
inline std::uint64_t token_count(const nlohmann::json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object.at(key).is_number_integer() ||
      object.at(key).get<std::int64_t>() < 0)
    return 0;
  return object.at(key).get<std::uint64_t>();
}

// The failure for an HTTP outcome that brought no usable reply, with the error body's message.
LlmFailure failure_from(const http::Outcome& outcome, const std::string& provider);

// Sets cost, latency, attempts and request id on a parsed reply, or turns a parse failure into one that
// carries the attempts.
LlmResult complete_reply(LlmResult parsed, const http::Outcome& outcome, const std::string& model,
                         const PriceTable& prices, const std::string& request_id_header);

}  // namespace evoteam
