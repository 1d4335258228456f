// The provider table (llm/provider_table.hpp).
#include <evoteam/core/log.hpp>
#include <evoteam/llm/provider_table.hpp>

namespace evoteam {

const std::vector<ProviderInfo>& llm_providers() {
  // "auto" (llm.provider) takes the first row whose key is set, in this order; none set: builtin.
  static const std::vector<ProviderInfo> table = {
      {"anthropic",
       ProviderProtocol::anthropic_messages,
       "ANTHROPIC_API_KEY",
       "",
       "ANTHROPIC_BASE_URL",
       "https://api.anthropic.com",
       {"ANTHROPIC_AUTH_TOKEN"},
       true},
      {"openai",
       ProviderProtocol::openai_chat_completions,
       "OPENAI_API_KEY",
       " (a server of your own needs none: name it with --base-url)",
       "OPENAI_BASE_URL",
       "https://api.openai.com/v1",
       {},
       true},
      {"scripted", ProviderProtocol::scripted, "", "", "", "", {}, true},
      {"builtin", ProviderProtocol::none, "", "", "", "", {}, false},
  };
  return table;
}

const ProviderInfo* find_provider(std::string_view name) {
  for (const ProviderInfo& provider : llm_providers())
    if (provider.name == name) return &provider;
  return nullptr;
}

std::vector<std::string> provider_names() {
  std::vector<std::string> names;
  for (const ProviderInfo& provider : llm_providers()) names.emplace_back(provider.name);
  return names;
}

std::vector<std::string> provider_key_variables() {
  std::vector<std::string> names;
  for (const ProviderInfo& provider : llm_providers())
    if (!provider.key_variable.empty()) names.emplace_back(provider.key_variable);
  return names;
}

std::vector<std::string> provider_secret_variables() {
  std::vector<std::string> names;
  for (const ProviderInfo& provider : llm_providers()) {
    if (!provider.key_variable.empty()) names.emplace_back(provider.key_variable);
    for (std::string_view other : provider.other_secret_variables) names.emplace_back(other);
  }
  return names;
}

namespace {

// The providers' credentials are secrets to redaction from the start, before any provider is made: core cannot
// know the providers, so the table registers them. Whatever reads a key links this file, so the registration
// comes with it.
[[maybe_unused]] const bool k_provider_secrets_registered = [] {
  add_secret_variables(provider_secret_variables());
  return true;
}();

}  // namespace

}  // namespace evoteam
