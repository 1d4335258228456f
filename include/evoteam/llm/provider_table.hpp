#pragma once
// The providers llm.provider and --provider name, one row each: how evoteam talks to it, the environment variables
// its key and endpoint come from (never a file), and where its prices are. Settings, the factory, log redaction and
// doctor read this table; a new provider is a row here, its protocol (if new) and its models in configs/models.json.
#include <string>
#include <string_view>
#include <vector>

namespace evoteam {

enum class ProviderProtocol {
  none,                     // builtin: the offline team, not an LLM provider
  anthropic_messages,       // Anthropic Messages API
  openai_chat_completions,  // OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp, Ollama, ...)
  scripted,                 // replies read from llm.scripted_file (tests, demos)
};

struct ProviderInfo {
  std::string_view name;
  ProviderProtocol protocol;
  std::string_view key_variable;       // its API key; "" when it needs none
  std::string_view missing_key_hint;   // added to the refusal when the key is not set
  std::string_view base_url_variable;  // moves its endpoint; "" when it has none
  std::string_view default_base_url;
  // Other variables that hold its credentials (redacted from logs like the key, never read).
  std::vector<std::string_view> other_secret_variables;
  // Its default model (llm.model empty) and its models' prices are listed under its name in configs/models.json
  // (llm.models_file): "defaults" and each model's "provider".
  bool priced;
};

const std::vector<ProviderInfo>& llm_providers();
// nullptr for a name that is no provider.
const ProviderInfo* find_provider(std::string_view name);
// Their names in table order ("anthropic, openai, scripted or builtin" in messages).
std::vector<std::string> provider_names();
// The providers' key variables, in table order (doctor says whether each is set).
std::vector<std::string> provider_key_variables();
// Every variable that holds a provider's credentials: what log redaction hides (core/log.hpp's secret variables,
// which this table feeds as the library loads).
std::vector<std::string> provider_secret_variables();

}  // namespace evoteam
