// Secrets never reach a log: key values from the environment, bearer tokens and key headers are redacted.
#include <evoteam/core/log.hpp>

#include <algorithm>
#include <cstdlib>

#include <gtest/gtest.h>

#include <evoteam/core/fs.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

TEST(Log, RedactsKeysTokensAndHeaders) {
  ::setenv("ANTHROPIC_API_KEY", "test-key-value-123456789", 1);
  std::string text =
      redact("key=test-key-value-123456789 Authorization: Bearer abc.def-ghi x-api-key: zzz999 sk-proj-ABCDEFGH1234");
  ::unsetenv("ANTHROPIC_API_KEY");
  EXPECT_EQ(text.find("test-key-value-123456789"), std::string::npos) << text;
  EXPECT_EQ(text.find("abc.def-ghi"), std::string::npos) << text;
  EXPECT_EQ(text.find("zzz999"), std::string::npos) << text;
  EXPECT_EQ(text.find("sk-proj-ABCDEFGH1234"), std::string::npos) << text;
  EXPECT_NE(text.find("[REDACTED]"), std::string::npos) << text;
}

TEST(Log, LogFileHoldsMessagesWithoutSecrets) {
  testing::TempDir dir;
  setup_console_logging(Verbosity::quiet);
  ::setenv("OPENAI_API_KEY", "another-secret-0987654321", 1);
  add_log_file(dir / "evoteam.log");
  spdlog::info("calling the provider with another-secret-0987654321");
  spdlog::default_logger()->flush();
  remove_log_file();
  ::unsetenv("OPENAI_API_KEY");
  std::string text = read_file(dir / "evoteam.log");
  EXPECT_NE(text.find("calling the provider"), std::string::npos) << text;
  EXPECT_EQ(text.find("another-secret-0987654321"), std::string::npos) << text;
}

TEST(Log, RedactsTheValueOfAVariableRegisteredAsASecretOnly) {
  ::setenv("EVOTEAM_TEST_LOG_CREDENTIAL", "registered-secret-2718281828", 1);
  EXPECT_EQ(redact("value registered-secret-2718281828"), "value registered-secret-2718281828");
  add_secret_variables({"EVOTEAM_TEST_LOG_CREDENTIAL", "EVOTEAM_TEST_LOG_CREDENTIAL"});
  const std::string text = redact("value registered-secret-2718281828");
  ::unsetenv("EVOTEAM_TEST_LOG_CREDENTIAL");
  EXPECT_EQ(text, "value [REDACTED]");
  const std::vector<std::string> names = secret_variables();
  EXPECT_EQ(std::count(names.begin(), names.end(), "EVOTEAM_TEST_LOG_CREDENTIAL"), 1);
}

}  // namespace
}  // namespace evoteam
