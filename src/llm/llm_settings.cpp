// The "llm" section of the configuration: the provider's settings and the price table. The only reader of llm.*
// keys; the provider's key comes from the environment, never from a file, and its base URL from llm.base_url or
// the environment.
#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/log.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/llm/endpoint.hpp>
#include <evoteam/llm/llm.hpp>
#include <evoteam/llm/provider_table.hpp>

namespace evoteam {

namespace {

std::string env_value(const std::map<std::string, std::string>& environment, const std::string& name) {
  auto found = environment.find(name);
  return found == environment.end() ? std::string() : found->second;
}

// "anthropic, openai, scripted or builtin".
std::string provider_list() {
  const std::vector<std::string> names = provider_names();
  if (names.size() < 2) return join(names, ", ");
  return join(std::vector<std::string>(names.begin(), names.end() - 1), ", ") + " or " + names.back();
}

// The provider's endpoint and key from the variables its row names (llm.base_url first); a network provider
// without its key is refused here, before any run exists. An OpenAI-compatible server named by its base URL may
// need no key; the provider's own endpoint always does.
void add_endpoint(ProviderSettings& settings, const std::string& configured_base_url,
                  const std::map<std::string, std::string>& environment) {
  const ProviderInfo* provider = find_provider(settings.provider);
  if (provider == nullptr)
    throw InvalidInput("llm.provider: unknown provider '" + settings.provider + "' (expected auto, " + provider_list() +
                       ")");
  if (!provider->key_variable.empty()) settings.api_key = env_value(environment, std::string(provider->key_variable));
  settings.base_url = configured_base_url;
  if (settings.base_url.empty() && !provider->base_url_variable.empty())
    settings.base_url = env_value(environment, std::string(provider->base_url_variable));
  const bool own_endpoint = settings.base_url.empty();
  if (own_endpoint) settings.base_url = provider->default_base_url;
  const bool key_optional = !own_endpoint && provider->protocol == ProviderProtocol::openai_chat_completions;
  if (!provider->key_variable.empty() && settings.api_key.empty() && !key_optional)
    throw InvalidInput("llm.provider " + settings.provider + ": " + std::string(provider->key_variable) +
                       " is not set" + std::string(provider->missing_key_hint));
  if (provider->protocol == ProviderProtocol::scripted && settings.scripted_file.empty())
    throw InvalidInput("llm.provider scripted: llm.scripted_file names no file");
  // Credentials in the URL are a secret: out of the URL everything else sees, to the transport only. A run resumed
  // from its record (which holds none) finds them in the provider's variable when it names the same server.
  settings.base_url_credentials = url_credentials(settings.base_url);
  settings.base_url = displayed_url(settings.base_url);
  while (!settings.base_url.empty() && settings.base_url.back() == '/') settings.base_url.pop_back();
  if (settings.base_url_credentials.empty() && !provider->base_url_variable.empty()) {
    std::string variable = env_value(environment, std::string(provider->base_url_variable));
    const std::string credentials = url_credentials(variable);
    variable = displayed_url(variable);
    while (!variable.empty() && variable.back() == '/') variable.pop_back();
    if (variable == settings.base_url) settings.base_url_credentials = credentials;
  }
  if (const std::size_t colon = settings.base_url_credentials.find(':'); colon != std::string::npos)
    add_secret_values({settings.base_url_credentials, settings.base_url_credentials.substr(colon + 1)});
  settings.local_endpoint = !settings.base_url.empty() && is_local_endpoint(settings.base_url);
}

}  // namespace

std::string configured_provider(const Config& config, const std::map<std::string, std::string>& environment) {
  const std::string provider = config.get<std::string>("llm.provider");
  if (provider != "auto") return provider;
  for (const ProviderInfo& known : llm_providers())
    if (!known.key_variable.empty() && !env_value(environment, std::string(known.key_variable)).empty())
      return std::string(known.name);
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

Config without_url_credentials(const Config& config) {
  const std::string url = config.get<std::string>("llm.base_url");
  if (url_credentials(url).empty()) return config;
  Config recorded = config;
  recorded.overlay({{"llm", {{"base_url", displayed_url(url)}}}}, "llm.base_url without its user information");
  return recorded;
}

PriceTable PriceTable::from_config(const Config& config) {
  const std::string file = config.get<std::string>("llm.models_file");
  PriceTable table = load(file.empty() ? install_root() / "configs" / "models.json" : std::filesystem::path(file));
  table.allow_unpriced_models(config.get<bool>("llm.allow_unpriced_models"));
  return table;
}

}  // namespace evoteam
