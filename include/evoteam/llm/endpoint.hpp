#pragma once
// What an OpenAI-compatible server says about itself, asked before a run exists (`optimize`) or on request
// (`doctor`): the models it serves, the context window it gives them, whether it takes tool calls. Servers of
// one's own (llama.cpp, vLLM, Ollama, LM Studio, a LiteLLM proxy) are named by a base URL; one on a loopback or
// private address is a local endpoint, where a model the price table does not know costs 0.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <evoteam/llm/llm.hpp>

namespace evoteam {

// Whether the URL's host is a loopback or private address: localhost, 127/8, 10/8, 172.16/12, 192.168/16,
// 169.254/16, ::1, fc00::/7, fe80::/10. Host names other than localhost are not resolved: they are not local.
bool is_local_endpoint(const std::string& base_url);

// The base URL without user information (user:password@), which may hold a secret: what records and messages show.
std::string displayed_url(const std::string& base_url);
// The user information of a URL ("user:password" of http://user:password@host/v1); empty when it has none.
std::string url_credentials(const std::string& base_url);

// GET <base_url>/models.
struct ServedModels {
  std::string url;        // what was asked
  bool answered = false;  // a 2xx reply with a model list
  std::string problem;    // when not: the transport error, or the HTTP status and what the server said
  std::vector<std::string> models;
  // vLLM's max_model_len of each model that has one: its context window.
  std::vector<std::pair<std::string, std::uint64_t>> max_model_len;

  bool serves(const std::string& model) const;
  std::string models_text() const;  // "a, b, c" or "none"
};
ServedModels list_served_models(const ProviderSettings& settings);

// The context window the server gives `model`: vLLM's max_model_len from the model list, else llama.cpp's
// GET <host>/props default_generation_settings.n_ctx (the context of one slot); nullopt when it says neither.
std::optional<std::uint64_t> served_context_window(const ProviderSettings& settings, const ServedModels& models,
                                                   const std::string& model);

// One tiny chat request that offers a tool: whether the server accepts `tools` (llama.cpp without --jinja, and
// some Ollama models, refuse them), and whether the reply called it.
struct ToolsProbe {
  bool accepted = false;
  bool called = false;
  std::string detail;  // what the server said when it refused
};
ToolsProbe probe_tool_calls(const ProviderSettings& settings);

// `optimize`'s check before the run exists: an endpoint that does not answer, or does not serve the model, is
// refused (InvalidInput) naming the URL and what it said.
void check_endpoint_serves_model(const ProviderSettings& settings);

// `optimize`'s check of a provider's key and model before the run exists, with the provider's free model lookup
// (GET <base>/v1/models/<model> for Anthropic, <base>/models/<model> for OpenAI): a key the provider refuses (401)
// or a model it does not know (404) is refused (InvalidInput) naming the provider, the key's variable and what the
// server said. Any other failure (a busy server, no network) is only a warning: the run's calls retry as usual.
void check_provider_accepts(const ProviderSettings& settings);

// The window the run's agents get for `model` on this endpoint, with where it came from: the server, else
// llm.context_window (configured, 0 = none), else the price table (`table_window`, 0 = none), else, on a local
// endpoint, a conservative default the log states.
struct ContextWindow {
  std::uint64_t tokens = 0;  // 0: unknown (no clearing of old tool results)
  std::string source;        // "server", "llm.context_window", "price table", "default"
};
constexpr std::uint64_t k_default_local_context_window = 4096;
ContextWindow resolve_context_window(const ProviderSettings& settings, std::uint64_t configured,
                                     std::uint64_t table_window);

}  // namespace evoteam
