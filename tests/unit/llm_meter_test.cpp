// Prices, the budget meter, the retry policy pieces and provider settings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <thread>

#include <evoteam/core/config.hpp>
#include <evoteam/core/config_rules.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/log.hpp>
#include <evoteam/history/journal_records.hpp>
#include <evoteam/llm/llm.hpp>
#include <evoteam/llm/meter.hpp>
#include <evoteam/llm/provider_table.hpp>
#include <evoteam/store/store.hpp>

#include "llm/http.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

PriceTable shipped_prices() {
  return PriceTable::load(std::filesystem::path(EVOTEAM_SOURCE_DIR) / "configs/models.json");
}

TEST(LlmPricing, ShippedTableLoadsWithVersionAndDefaults) {
  PriceTable prices = shipped_prices();
  EXPECT_GE(prices.version(), 1);
  EXPECT_FALSE(prices.default_model("anthropic").empty());
  EXPECT_FALSE(prices.default_model("openai").empty());
  EXPECT_NE(prices.find(prices.default_model("anthropic")), nullptr);
  EXPECT_NE(prices.find(prices.default_model("openai")), nullptr);
}

TEST(LlmPricing, DatedSnapshotMatchesLongestPrefix) {
  PriceTable prices = shipped_prices();
  const ModelInfo* info = prices.find("claude-sonnet-4-5-20250929");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->name, "claude-sonnet-4-5");
  EXPECT_EQ(prices.find("no-such-model"), nullptr);
  EXPECT_EQ(prices.find("gpt-5-2025-08-07")->name, "gpt-5");
  EXPECT_EQ(prices.find("claude-sonnet-4-5@20250929")->name, "claude-sonnet-4-5");
}

// Another model is not priced as the one whose name it starts with: gpt-5.5 was charged as gpt-5, and a model a
// table does not know must be said, not guessed.
TEST(LlmPricing, ANameThatOnlyStartsWithAPricedOneIsAnotherModel) {
  PriceTable prices = shipped_prices();
  EXPECT_EQ(prices.find("gpt-5.5"), nullptr);
  EXPECT_EQ(prices.find("gpt-5-codex-max"), nullptr);
  EXPECT_EQ(prices.find("claude-sonnet-4-5-mystery"), nullptr);
}

TEST(LlmPricing, CostCountsEveryTokenKindAndTheLongContextTier) {
  testing::TempDir dir;
  write_file_atomic(dir / "models.json", R"({"version": 3, "models": {"m": {
      "input_cost_per_token": 1, "output_cost_per_token": 10, "cache_read_input_token_cost": 0.1,
      "cache_creation_input_token_cost": 2, "input_cost_per_token_above_200k_tokens": 5}}})");
  PriceTable prices = PriceTable::load(dir / "models.json");
  EXPECT_EQ(prices.version(), 3);
  EXPECT_DOUBLE_EQ(prices.cost("m", Usage{100, 10, 1000, 5}), 100 + 100 + 100 + 10);
  // Above 200k prompt tokens the input price tiers up; prices without a tier stay.
  EXPECT_DOUBLE_EQ(prices.cost("m", Usage{200'001, 0, 0, 0}), 5.0 * 200'001);
}

TEST(LlmPricing, UnknownModelIsAnErrorUnlessAllowed) {
  PriceTable prices = shipped_prices();
  EXPECT_THROW(prices.cost("my-local-model", Usage{1, 1, 0, 0}), InvalidInput);
  prices.allow_unpriced_models(true);
  EXPECT_EQ(prices.cost("my-local-model", Usage{1, 1, 0, 0}), 0.0);
}

TEST(LlmPricing, BadFieldIsNamed) {
  testing::TempDir dir;
  write_file_atomic(dir / "models.json", R"({"version": 1, "models": {"m": {"input_cost_per_tokens": 1}}})");
  try {
    PriceTable::load(dir / "models.json");
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("models.m.input_cost_per_tokens"), std::string::npos) << error.what();
  }
}

TEST(LlmMeter, LimitsAreCheckedInOrder) {
  Meter meter(MeterLimits{100, 1.0, 0});
  EXPECT_EQ(meter.check(), LimitHit::none);
  meter.charge(Usage{10, 10, 0, 0}, 2.0);
  EXPECT_EQ(meter.check(), LimitHit::cost);
  meter.charge(Usage{50, 50, 0, 0}, 0.0);
  EXPECT_EQ(meter.check(), LimitHit::tokens);
  meter.set_limits(MeterLimits{0, 0, 0.000001});
  EXPECT_EQ(meter.check(), LimitHit::wall_time);
  meter.set_limits(MeterLimits{});
  EXPECT_EQ(meter.check(), LimitHit::none);
}

// admit weighs a prompt against what the token budget has left: it fits up to the last token, and a refusal names
// both figures and spends the budget (check), which a restore from the journal forgets.
TEST(LlmMeter, APromptIsAdmittedOnlyWhileItFitsInWhatTheTokenBudgetHasLeft) {
  Meter meter(MeterLimits{1000, 0, 0});
  Meter unlimited;
  EXPECT_FALSE(unlimited.admit(1'000'000'000).has_value());
  meter.charge(Usage{600, 100, 0, 0}, 0);
  EXPECT_FALSE(meter.admit(300).has_value());  // 300 of 300 left
  EXPECT_EQ(meter.check(), LimitHit::none);
  const std::optional<std::string> refused = meter.admit(301);
  ASSERT_TRUE(refused.has_value());
  EXPECT_NE(refused->find("301"), std::string::npos) << *refused;
  EXPECT_NE(refused->find("300 of 1000"), std::string::npos) << *refused;
  EXPECT_EQ(meter.totals().refused_calls, 1u);
  EXPECT_EQ(meter.check(), LimitHit::tokens);
  MeterTotals journaled;
  journaled.tokens = Usage{700, 0, 0, 0};
  meter.restore(journaled);
  EXPECT_EQ(meter.check(), LimitHit::none);
}

TEST(LlmMeter, JournaledTotalsRestoreOnResume) {
  testing::TempDir dir;
  {
    Journal journal(dir / "journal.jsonl");
    Meter meter;
    meter.set_journal_sink([&](const MeterTotals& totals) { append_entry(journal, BudgetTickEntry{totals}); });
    meter.charge(Usage{100, 20, 300, 40}, 0.25);
    meter.charge(Usage{1, 2, 3, 4}, 0.5, 1);
    meter.charge_unknown(2);
  }
  JournalReplay replay = replay_journal(dir / "journal.jsonl");
  Meter resumed;
  resumed.restore(last_budget_tick(replay.records).value());
  MeterTotals totals = resumed.totals();
  EXPECT_EQ(totals.tokens, (Usage{101, 22, 303, 44}));
  EXPECT_DOUBLE_EQ(totals.cost_usd, 0.75);
  EXPECT_EQ(totals.calls, 2u);
  EXPECT_EQ(totals.unknown_cost_attempts, 3u);
  EXPECT_GE(totals.wall_s, 0.0);
}

TEST(LlmMeter, LastJournaledTickHoldsTheTotalsWhenAgentsChargeAtOnce) {
  testing::TempDir dir;
  Journal journal(dir / "journal.jsonl");
  Meter meter;
  meter.set_journal_sink([&](const MeterTotals& totals) { append_entry(journal, BudgetTickEntry{totals}); });
  std::vector<std::thread> agents;
  for (int agent = 0; agent < 4; ++agent)
    agents.emplace_back([&] {
      for (int call = 0; call < 10; ++call) meter.charge(Usage{1, 2, 3, 4}, 0.5);
    });
  for (std::thread& agent : agents) agent.join();
  Meter restored;
  restored.restore(last_budget_tick(replay_journal(dir / "journal.jsonl").records).value());
  EXPECT_EQ(restored.totals().calls, 40u);
  EXPECT_EQ(restored.totals().tokens, (Usage{40, 80, 120, 160}));
  EXPECT_DOUBLE_EQ(restored.totals().cost_usd, 20.0);
}

TEST(LlmMeter, RestoreWithoutBudgetRecordsKeepsZero) {
  EXPECT_FALSE(last_budget_tick({nlohmann::json{{"type", "cycle_start"}, {"team", nlohmann::json::object()}}}));
  EXPECT_THROW(last_budget_tick({nlohmann::json{{"type", "budget_tick"}, {"tokens", "x"}}}), InvalidInput);
}

TEST(LlmRetryPolicy, RetriesTransientStatusesOnly) {
  for (long status : {408L, 409L, 429L, 500L, 502L, 503L, 529L})
    EXPECT_TRUE(http::retryable_status(status, "")) << status;
  for (long status : {400L, 401L, 403L, 404L, 413L, 422L}) EXPECT_FALSE(http::retryable_status(status, "")) << status;
  EXPECT_FALSE(http::retryable_status(429, R"({"error":{"code":"insufficient_quota"}})"));
  EXPECT_FALSE(http::retryable_status(429, R"({"error":{"details":{"error_code":"enforced_spend_limit_reached"}}})"));
}

TEST(LlmRetryPolicy, RetryAfterHeaderForms) {
  EXPECT_EQ(http::retry_after_seconds({{"retry-after", "3"}}), 3.0);
  EXPECT_EQ(http::retry_after_seconds({{"retry-after-ms", "250"}, {"retry-after", "3"}}), 0.25);
  EXPECT_FALSE(http::retry_after_seconds({}).has_value());
  std::optional<double> past = http::retry_after_seconds({{"retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"}});
  ASSERT_TRUE(past.has_value());
  EXPECT_LT(*past, 0.0);
}

TEST(LlmRetryPolicy, BackoffDoublesUpToTheCap) {
  HttpSettings settings;
  settings.backoff_initial_s = 1;
  settings.backoff_max_s = 5;
  EXPECT_DOUBLE_EQ(http::backoff_delay(0, settings, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(http::backoff_delay(2, settings, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(http::backoff_delay(5, settings, 0.75), 3.75);
}

TEST(LlmSettings, KeysAndEndpointsComeFromTheEnvironment) {
  Config config;
  ProviderSettings anthropic =
      provider_settings_from_config(config, {{"ANTHROPIC_API_KEY", "k1"}, {"OPENAI_API_KEY", "k2"}});
  EXPECT_EQ(anthropic.provider, "anthropic");
  EXPECT_EQ(anthropic.api_key, "k1");
  EXPECT_EQ(anthropic.base_url, "https://api.anthropic.com");
  ProviderSettings openai = provider_settings_from_config(
      config, {{"OPENAI_API_KEY", "k2"}, {"OPENAI_BASE_URL", "http://localhost:8000/v1/"}});
  EXPECT_EQ(openai.provider, "openai");
  EXPECT_EQ(openai.base_url, "http://localhost:8000/v1");
  EXPECT_EQ(provider_settings_from_config(config, {}).provider, "builtin");
  config.overlay({{"llm", {{"provider", "anthropic"}}}}, "test");
  EXPECT_THROW(provider_settings_from_config(config, {}), InvalidInput);
  // A provider outside the closed set is refused by the layer that names it.
  EXPECT_THROW(config.overlay({{"llm", {{"provider", "gemini"}}}}, "test"), InvalidInput);
}

TEST(LlmSettings, FactoryRefusesUnpricedModelsAndBuiltin) {
  PriceTable prices = shipped_prices();
  ProviderSettings settings;
  settings.provider = "openai";
  settings.api_key = "k";
  settings.base_url = "http://127.0.0.1:9/v1";
  settings.model = "my-local-model";
  EXPECT_THROW(make_provider(settings, prices), InvalidInput);
  prices.allow_unpriced_models(true);
  EXPECT_EQ(make_provider(settings, prices)->name(), "openai");
  settings.provider = "builtin";
  EXPECT_THROW(make_provider(settings, prices), InvalidInput);
}

// The provider table is the one list: the configuration's choices, each keyed provider's settings and the
// secrets redaction hides all come from its rows.
TEST(LlmProviderTable, TheConfigurationOffersAutoAndEveryProvider) {
  const ConfigRule* rule = find_config_rule("llm.provider");
  ASSERT_NE(rule, nullptr);
  std::vector<std::string> expected = {"auto"};
  for (const std::string& name : provider_names()) expected.push_back(name);
  EXPECT_EQ(std::set<std::string>(rule->choices.begin(), rule->choices.end()),
            std::set<std::string>(expected.begin(), expected.end()));
}

TEST(LlmProviderTable, EachKeyedProviderReadsTheVariablesItsRowNames) {
  for (const ProviderInfo& provider : llm_providers()) {
    if (provider.key_variable.empty()) continue;
    const std::string name(provider.name);
    Config config;
    try {
      provider_settings_for(name, config, {});
      FAIL() << name << " started without its key";
    } catch (const InvalidInput& error) {
      EXPECT_NE(std::string(error.what()).find(provider.key_variable), std::string::npos) << error.what();
    }
    const ProviderSettings settings =
        provider_settings_for(name, config,
                              {{std::string(provider.key_variable), "key-of-" + name},
                               {std::string(provider.base_url_variable), "http://localhost:9/" + name + "/"}});
    EXPECT_EQ(settings.api_key, "key-of-" + name);
    EXPECT_EQ(settings.base_url, "http://localhost:9/" + name);
    EXPECT_EQ(provider_settings_for(name, config, {{std::string(provider.key_variable), "k"}}).base_url,
              provider.default_base_url);
  }
}

TEST(LlmProviderTable, EveryProviderCredentialIsRedactedFromLogs) {
  const std::vector<std::string> registered = secret_variables();
  const std::vector<std::string> credentials = provider_secret_variables();
  ASSERT_FALSE(credentials.empty());
  for (const std::string& variable : credentials) {
    EXPECT_NE(std::find(registered.begin(), registered.end(), variable), registered.end()) << variable;
    ::setenv(variable.c_str(), "credential-value-31415926", 1);
    const std::string text = redact("sent credential-value-31415926");
    ::unsetenv(variable.c_str());
    EXPECT_EQ(text, "sent [REDACTED]") << variable;
  }
}

}  // namespace
}  // namespace evoteam
