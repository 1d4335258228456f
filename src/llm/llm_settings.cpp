// The "llm" section of the configuration: the provider's settings and the price table. The only reader of llm.*
// keys; the provider's key comes from the environment, never from a file, and its base URL from llm.base_url or
// the environment.
#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/llm/endpoint.hpp>
#include <evoteam/llm/llm.hpp>

namespace evoteam {

namespace {

std::string env_value(const std::map<std::string, std::string>& environment, const std::string& name) {
  auto found = environment.find(name);
  return found == environment.end() ? std::string() : found->second;
}

// The provider's endpoint and key; a network provider without its key is refused here, before any run exists.
// A server named by its base URL (llm.base_url or OPENAI_BASE_URL) may need no key; OpenAI's own always does.
void add_endpoint(ProviderSettings& settings, const std::string& configured_base_url,
                  const std::map<std::string, std::string>& environment) {
  if (settings.provider == "anthropic") {
    settings.api_key = env_value(environment, "ANTHROPIC_API_KEY");
    settings.base_url =
        configured_base_url.empty() ? env_value(environment, "ANTHROPIC_BASE_URL") : configured_base_url;
    if (settings.base_url.empty()) settings.base_url = "https://api.anthropic.com";
    if (settings.api_key.empty()) throw InvalidInput("llm.provider anthropic: ANTHROPIC_API_KEY is not set");
  } else if (settings.provider == "openai") {
    settings.api_key = env_value(environment, "OPENAI_API_KEY");
    settings.base_url = configured_base_url.empty() ? env_value(environment, "OPENAI_BASE_URL") : configured_base_url;
    const bool own_endpoint = settings.base_url.empty();
    if (own_endpoint) settings.base_url = "https://api.openai.com/v1";
    if (settings.api_key.empty() && own_endpoint)
      throw InvalidInput(
          "llm.provider openai: OPENAI_API_KEY is not set (a server of your own needs none: name it with --base-url)");
  } else if (settings.provider == "scripted") {
    if (settings.scripted_file.empty()) throw InvalidInput("llm.provider scripted: llm.scripted_file names no file");
  } else if (settings.provider != "builtin") {
    throw InvalidInput("llm.provider: unknown provider '" + settings.provider +
                       "' (expected auto, anthropic, openai, scripted or builtin)");
  }
  while (!settings.base_url.empty() && settings.base_url.back() == '/') settings.base_url.pop_back();
  settings.local_endpoint = !settings.base_url.empty() && is_local_endpoint(settings.base_url);
}

}  // namespace

std::string configured_provider(const Config& config, const std::map<std::string, std::string>& environment) {
  const std::string provider = config.get<std::string>("llm.provider");
  if (provider != "auto") return provider;
  if (!env_value(environment, "ANTHROPIC_API_KEY").empty()) return "anthropic";
  if (!env_value(environment, "OPENAI_API_KEY").empty()) return "openai";
  return "builtin";
}

ProviderSettings provider_settings_for(const std::string& provider, const Config& config,
                                       const std::map<std::string, std::string>& environment) {
  ProviderSettings settings;
  settings.provider = provider;
  settings.model = config.get<std::string>("llm.model");
  settings.context_window = config.get<std::uint64_t>("llm.context_window");
  settings.http.connect_timeout_s = config.get<double>("llm.connect_timeout_s");
  settings.http.request_timeout_s = config.get<double>("llm.request_timeout_s");
  settings.http.max_retries = config.get<int>("llm.max_retries");
  settings.http.backoff_initial_s = config.get<double>("llm.backoff_initial_s");
  settings.http.backoff_max_s = config.get<double>("llm.backoff_max_s");
  settings.http.retry_after_max_s = config.get<double>("llm.retry_after_max_s");
  settings.prompt_caching = config.get<bool>("llm.prompt_caching");
  settings.openai_max_tokens_field = config.get<std::string>("llm.openai_max_tokens_field");
  settings.openai_tool_choice = config.get<std::string>("llm.openai_tool_choice");
  settings.scripted_file = config.get<std::string>("llm.scripted_file");
  add_endpoint(settings, config.get<std::string>("llm.base_url"), environment);
  return settings;
}

ProviderSettings provider_settings_from_config(const Config& config,
                                               const std::map<std::string, std::string>& environment) {
  return provider_settings_for(configured_provider(config, environment), config, environment);
}

PriceTable PriceTable::from_config(const Config& config) {
  const std::string file = config.get<std::string>("llm.models_file");
  PriceTable table = load(file.empty() ? install_root() / "configs" / "models.json" : std::filesystem::path(file));
  table.allow_unpriced_models(config.get<bool>("llm.allow_unpriced_models"));
  return table;
}

}  // namespace evoteam
