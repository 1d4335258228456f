#pragma once
// LLM providers: one small interface over the Anthropic Messages API, OpenAI-compatible Chat Completions and a
// scripted replay (tests and demos), plus the price table that turns received usage into cost.
// A provider's failure (network, HTTP status, malformed body, interrupt) is data in LlmResult, never an
// exception; misconfiguration (unknown provider, missing key, unknown model) throws InvalidInput.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam {

class Config;

// --- Conversation ----------------------------------------------------------------------------------------

enum class BlockKind { text, tool_use, tool_result };

// One content block. The canonical JSON form (transcripts, scripted files) follows the Anthropic shape:
// {"type":"text","text"}, {"type":"tool_use","id","name","input"}, {"type":"tool_result","tool_use_id",
// "content","is_error"}.
struct ContentBlock {
  BlockKind kind = BlockKind::text;
  std::string text;      // text; or the tool result's content
  std::string id;        // tool_use: the call id; tool_result: the id it answers
  std::string name;      // tool_use: the tool's name
  nlohmann::json input;  // tool_use: the arguments (an object when they parsed)
  // tool_use: the arguments exactly as received when they were not a JSON object (OpenAI sends a string
  // that local models sometimes get wrong); empty when `input` is valid.
  std::string input_error_text;
  bool is_error = false;  // tool_result

  static ContentBlock make_text(std::string text);
  static ContentBlock make_tool_use(std::string id, std::string name, nlohmann::json input);
  static ContentBlock make_tool_result(std::string tool_use_id, std::string content, bool is_error);
  bool input_valid() const { return input_error_text.empty() && input.is_object(); }
};

enum class Role { user, assistant };

// Tool results travel in user messages (the Anthropic shape); the OpenAI adapter splits them into
// role "tool" messages.
struct Message {
  Role role = Role::user;
  std::vector<ContentBlock> content;
};

struct ToolSpec {
  std::string name;
  std::string description;      // one line the model sees
  nlohmann::json input_schema;  // JSON Schema of the arguments object
};

struct LlmRequest {
  std::string model;
  std::string system;
  std::vector<Message> messages;
  std::vector<ToolSpec> tools;
  int max_tokens = 4096;
  std::optional<double> temperature;  // unset: the server's default
  // Who asks: the agent's role ("optimizer", "debugger", ...) or "supervisor". Never sent to a server; the
  // scripted provider routes replies by it, so parallel members and the supervisor can share one script.
  std::string caller;
};

// Tokens by kind, normalised across providers: `input` excludes cached tokens (Anthropic's convention), so
// the prompt the model saw was input + cache_read + cache_write.
struct Usage {
  std::uint64_t input = 0;
  std::uint64_t output = 0;
  std::uint64_t cache_read = 0;
  std::uint64_t cache_write = 0;

  std::uint64_t total() const { return input + output + cache_read + cache_write; }
  std::uint64_t prompt() const { return input + cache_read + cache_write; }
  Usage& operator+=(const Usage& other);
  bool operator==(const Usage& other) const = default;
};
nlohmann::json to_json(const Usage& usage);
// Missing fields are 0; throws InvalidInput for a non-object or negative counts.
Usage usage_from_json(const nlohmann::json& value);

enum class FinishReason { end_turn, tool_use, max_tokens, stop_sequence, refusal, context_window, other };
std::string to_string(FinishReason reason);

struct LlmResponse {
  std::vector<ContentBlock> content;  // text and tool_use blocks only
  FinishReason finish = FinishReason::other;
  std::string finish_raw;  // the provider's own word ("end_turn", "tool_calls", ...)
  Usage usage;
  // The server sent no usage (some local servers): `usage` is an estimate from the text, about 4 characters a
  // token, which the meter counts and marks as estimated so a token budget still holds.
  bool usage_estimated = false;
  double cost_usd = 0;     // from the usage received and the price table
  double latency_s = 0;    // from the first attempt to the reply, retries included
  std::string model;       // as the server named it
  std::string request_id;  // request-id / x-request-id when sent
  int attempts = 1;
  // Attempts that may have reached the model and been billed though no reply came (timeouts, resets).
  int unknown_cost_attempts = 0;
};

enum class FailureKind {
  network,          // connection refused, reset, DNS; retries exhausted
  timeout,          // connect or total timeout; retries exhausted
  http_status,      // a status that is not retried (400, 401, quota 429) or retries exhausted on 429/5xx
  malformed_reply,  // 200 with a body that is not a valid reply (truncated or malformed JSON, wrong shape)
  interrupted,      // the daemon was interrupted
  script_ended,     // the scripted provider has no reply left
  // The request does not fit the model's context window: an HTTP 400 whose words say so (llama.cpp
  // exceed_context_size_error, vLLM and OpenAI "maximum context length", context_length_exceeded).
  context_overflow,
};
std::string to_string(FailureKind kind);

struct LlmFailure {
  FailureKind kind = FailureKind::network;
  int http_status = 0;
  std::string message;  // one line, with secrets redacted
  int attempts = 0;
  int unknown_cost_attempts = 0;
};
// Whether asking again cannot help: the provider refused the request as sent — authentication (401), permission
// (403), an unknown model or route (404), a bad request (400) or another 4xx it does not retry (a spent quota's
// 429). A rate limit, a timeout, a 5xx or a network fault may pass; so may a script that ran out.
bool is_permanent(const LlmFailure& failure);

// Either a response or a failure.
class LlmResult {
 public:
  LlmResult(LlmResponse response) : m_value(std::move(response)) {}  // NOLINT: implicit by design
  LlmResult(LlmFailure failure) : m_value(std::move(failure)) {}     // NOLINT: implicit by design
  bool ok() const { return std::holds_alternative<LlmResponse>(m_value); }
  const LlmResponse& response() const { return std::get<LlmResponse>(m_value); }
  LlmResponse& response() { return std::get<LlmResponse>(m_value); }
  const LlmFailure& failure() const { return std::get<LlmFailure>(m_value); }

 private:
  std::variant<LlmResponse, LlmFailure> m_value;
};

// Canonical JSON of blocks and messages (see ContentBlock). from_json throws InvalidInput on a bad shape.
nlohmann::json to_json(const ContentBlock& block);
ContentBlock content_block_from_json(const nlohmann::json& value);
nlohmann::json to_json(const std::vector<ContentBlock>& blocks);
std::vector<ContentBlock> content_from_json(const nlohmann::json& value);
std::string to_string(Role role);

// --- Providers -------------------------------------------------------------------------------------------

// Sends one request and returns one reply. Implementations are safe to call from several threads at once, and
// each call goes out on its own connection: parallel team members share one provider and wait on no one but the
// model.
// The prompt a request sends, in tokens, estimated from its text before it is sent (about 4 characters a token,
// as for replies without usage): its system prompt, messages and tool definitions. What a token budget weighs a
// call against (Meter::admit).
std::uint64_t estimate_prompt_tokens(const LlmRequest& request);

class LlmProvider {
 public:
  virtual ~LlmProvider() = default;
  virtual LlmResult complete(const LlmRequest& request) = 0;
  // The request's prompt in tokens, before it is sent: counted where the provider can tell for free (the scripted
  // provider: the input tokens of the reply it would serve), else estimate_prompt_tokens.
  virtual std::uint64_t prompt_tokens(const LlmRequest& request) { return estimate_prompt_tokens(request); }
  virtual std::string name() const = 0;  // "anthropic", "openai", "scripted"
};

// --- Prices and context windows (configs/models.json) ----------------------------------------------------

// One model's entry; prices are USD per token, field names as in LiteLLM's price table.
struct ModelInfo {
  std::string name;
  std::string provider;
  double input_cost_per_token = 0;
  double output_cost_per_token = 0;
  double cache_read_input_token_cost = 0;
  double cache_creation_input_token_cost = 0;
  // Prices that replace the ones above when the prompt (input + cache) exceeds 200k tokens; 0 = same price.
  double input_cost_per_token_above_200k_tokens = 0;
  double output_cost_per_token_above_200k_tokens = 0;
  double cache_read_input_token_cost_above_200k_tokens = 0;
  double cache_creation_input_token_cost_above_200k_tokens = 0;
  std::uint64_t max_input_tokens = 0;  // context window; 0 unknown
  std::uint64_t max_output_tokens = 0;
};

class PriceTable {
 public:
  // Parses a models file (JSON with comments); throws InvalidInput naming the file and field.
  static PriceTable load(const std::filesystem::path& path);
  // install_root()/configs/models.json, or `llm.models_file` when set.
  static PriceTable from_config(const Config& config);

  // Exact name first, then the longest entry that is a prefix of `model` (dated snapshots such as
  // "claude-sonnet-4-5-20250929" match "claude-sonnet-4-5"). nullptr when unknown.
  const ModelInfo* find(const std::string& model) const;
  // The default model for a provider ("anthropic", "openai"); empty when the file names none.
  std::string default_model(const std::string& provider) const;
  // Cost of one reply. An unknown model costs 0 when unpriced models are allowed, else throws InvalidInput.
  double cost(const std::string& model, const Usage& usage) const;

  int version() const { return m_version; }
  void allow_unpriced_models(bool allow) { m_allow_unpriced = allow; }
  bool unpriced_models_allowed() const { return m_allow_unpriced; }

 private:
  int m_version = 0;
  std::filesystem::path m_source;
  std::map<std::string, ModelInfo> m_models;
  std::map<std::string, std::string> m_default_models;
  bool m_allow_unpriced = false;
};

// --- Factory ---------------------------------------------------------------------------------------------

// HTTP behaviour shared by the network providers (llm.* config keys).
struct HttpSettings {
  double connect_timeout_s = 10;
  double request_timeout_s = 600;  // total per attempt
  int max_retries = 4;             // retries after the first attempt
  double backoff_initial_s = 1;    // doubled per retry, capped, times a jitter in [0.75, 1]
  double backoff_max_s = 30;
  double retry_after_max_s = 60;  // a longer retry-after is cut to this
};

// Everything needed to build a provider. Holds the API key: never serialise or log it.
struct ProviderSettings {
  std::string provider;  // "anthropic", "openai", "scripted"
  std::string model;
  std::string base_url;  // anthropic: host without /v1; openai: ends in /v1; never with user information
  // "user:password" the configured URL held (http://user:password@host/v1): a secret like the key, so it is taken
  // out of base_url, sent by the transport as basic authentication and never written or logged.
  std::string base_url_credentials;
  std::string api_key;  // may be empty for a server that needs none
  // The base URL is on a loopback or private address (see is_local_endpoint): a server of one's own, where a
  // model the price table does not know costs 0.
  bool local_endpoint = false;
  std::uint64_t context_window = 0;  // llm.context_window: the model's window when the server does not say; 0 none
  HttpSettings http;
  bool prompt_caching = true;  // anthropic: cache_control on the stable prefix
  std::string anthropic_version = "2023-06-01";
  std::string openai_max_tokens_field = "max_completion_tokens";  // or "max_tokens" for older servers
  // openai: tool_choice sent with the tools ("" sends none: the server's default, "auto"; or "required").
  std::string openai_tool_choice;
  std::filesystem::path scripted_file;
};

// llm.provider with "auto" resolved: anthropic when ANTHROPIC_API_KEY is set in `environment`, else openai when
// OPENAI_API_KEY is set, else "builtin" (the offline team, which is not an LLM provider).
std::string configured_provider(const Config& config, const std::map<std::string, std::string>& environment);

// Reads the llm.* keys and the provider's variables from `environment` (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL,
// OPENAI_API_KEY, OPENAI_BASE_URL) for `provider` (a --provider flag, or configured_provider). The base URL is
// llm.base_url when set (`--base-url`), else the variable, else the provider's own. Throws InvalidInput for an
// unknown provider, or a network provider without its key at the provider's own endpoint (a server named by
// its base URL may need none).
ProviderSettings provider_settings_for(const std::string& provider, const Config& config,
                                       const std::map<std::string, std::string>& environment);
// The same for the configured provider.
ProviderSettings provider_settings_from_config(const Config& config,
                                               const std::map<std::string, std::string>& environment);

// The configuration as a run records it (run.json): llm.base_url without the user information it may hold, which
// only the transport sees. A resumed run finds those credentials again in the provider's base URL variable when
// it names the same server (OPENAI_BASE_URL=http://user:password@host/v1).
Config without_url_credentials(const Config& config);

// Builds the provider. The price table must outlive it. Throws InvalidInput for an unknown provider
// name ("builtin" included), an unreadable scripted file, or a model the price table does not know
// (unless unpriced models are allowed).
std::unique_ptr<LlmProvider> make_provider(const ProviderSettings& settings, const PriceTable& prices);

}  // namespace evoteam
