// JSON POST over libcurl with retries, backoff and cancellation.
#include "llm/http.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <mutex>
#include <random>
#include <thread>

#include <curl/curl.h>
#include <spdlog/spdlog.h>

#include <evoteam/core/clock.hpp>
#include <evoteam/core/log.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/core/text.hpp>

namespace evoteam::http {

namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* headers = static_cast<std::map<std::string, std::string>*>(user);
  std::string line(data, size * count);
  // A new status line (after a 100 Continue or a redirect) starts a new header set.
  if (line.rfind("HTTP/", 0) == 0) {
    headers->clear();
  } else if (std::size_t colon = line.find(':'); colon != std::string::npos) {
    (*headers)[lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
  }
  return size * count;
}

int on_progress(void*, curl_off_t, curl_off_t, curl_off_t, curl_off_t) { return interrupted() ? 1 : 0; }

struct Attempt {
  CURLcode code = CURLE_OK;
  std::string error;
  Response response;
};

// Which limit a timed-out exchange ran into, so the error names the setting to raise: no connection within the
// connect timeout, or no whole reply within the request timeout (a slow first token looks like this).
std::string timeout_limit_text(bool connected, const HttpSettings& settings) {
  if (!connected)
    return "no connection within llm.connect_timeout_s = " + fmt::format("{:g}", settings.connect_timeout_s) + " s";
  return "no whole reply within llm.request_timeout_s = " + fmt::format("{:g}", settings.request_timeout_s) + " s";
}

// "%40" as "@": a URL's user information is percent-encoded; a "%" without two hex digits stays as it is.
std::string percent_decoded(const std::string& text) {
  std::string decoded;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      decoded += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      decoded += text[i];
    }
  }
  return decoded;
}

// One exchange: a POST of the request's body, or a GET when `get` is set.
Attempt perform(const Request& request, const HttpSettings& settings, bool get = false) {
  Attempt attempt;
  CURL* curl = curl_easy_init();
  if (curl == nullptr) {
    attempt.code = CURLE_FAILED_INIT;
    attempt.error = "curl_easy_init failed";
    return attempt;
  }
  curl_slist* headers = nullptr;
  for (const std::string& header : request.headers) headers = curl_slist_append(headers, header.c_str());
  // Without this curl waits for "100 Continue" on larger bodies, which some servers never send.
  headers = curl_slist_append(headers, "Expect:");
  char error_buffer[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  // The user and password the URL held, decoded as in a URL; the URL that is logged holds none.
  const std::size_t colon = request.credentials.find(':');
  const std::string user = percent_decoded(request.credentials.substr(0, colon));
  const std::string password =
      colon == std::string::npos ? std::string() : percent_decoded(request.credentials.substr(colon + 1));
  if (!request.credentials.empty()) {
    curl_easy_setopt(curl, CURLOPT_USERNAME, user.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, password.c_str());
  }
  if (get) {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &attempt.response.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &attempt.response.headers);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(settings.connect_timeout_s * 1000));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(settings.request_timeout_s * 1000));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPIDLE, 60L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPINTVL, 60L);
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
  attempt.code = curl_easy_perform(curl);
  if (attempt.code == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &attempt.response.status);
  } else {
    attempt.error = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(attempt.code);
    if (attempt.code == CURLE_OPERATION_TIMEDOUT) {
      curl_off_t connect_us = 0;
      curl_easy_getinfo(curl, CURLINFO_CONNECT_TIME_T, &connect_us);
      attempt.error += " (" + timeout_limit_text(connect_us > 0, settings) + ")";
    }
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return attempt;
}

bool transient(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR: return true;
    default: return false;
  }
}

// Failures after the request left us: the server may have run (and billed) it.
bool maybe_processed(CURLcode code) {
  return code == CURLE_OPERATION_TIMEDOUT || code == CURLE_RECV_ERROR || code == CURLE_GOT_NOTHING ||
         code == CURLE_PARTIAL_FILE || code == CURLE_HTTP2_STREAM;
}

double jitter() {
  static thread_local std::mt19937 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.75, 1.0)(engine);
}

// Sleeps in short slices so an interrupt is noticed quickly; false if interrupted.
bool sleep_unless_interrupted(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                          std::chrono::duration<double>(seconds));
  while (std::chrono::steady_clock::now() < end) {
    if (interrupted()) return false;
    const std::chrono::steady_clock::duration left = end - std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(std::chrono::milliseconds(50), left));
  }
  return !interrupted();
}

}  // namespace

bool retryable_status(long status, const std::string& body) {
  if (status == 429) {
    // A spent quota or spend cap does not recover by waiting.
    return body.find("insufficient_quota") == std::string::npos &&
           body.find("enforced_spend_limit_reached") == std::string::npos;
  }
  return status == 408 || status == 409 || status >= 500;
}

std::optional<double> retry_after_seconds(const std::map<std::string, std::string>& headers) {
  if (auto ms = headers.find("retry-after-ms"); ms != headers.end()) {
    char* end = nullptr;
    double value = std::strtod(ms->second.c_str(), &end);
    if (end != ms->second.c_str() && std::isfinite(value)) return value / 1000.0;
  }
  auto found = headers.find("retry-after");
  if (found == headers.end()) return std::nullopt;
  const std::string& text = found->second;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() && *end == '\0' && std::isfinite(value)) return value;
  std::tm date{};
  if (strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S", &date) != nullptr)
    return std::difftime(timegm(&date), std::time(nullptr));
  return std::nullopt;
}

double backoff_delay(int retry, const HttpSettings& settings, double jitter_factor) {
  double delay = settings.backoff_initial_s * std::pow(2.0, retry);
  return std::min(delay, settings.backoff_max_s) * jitter_factor;
}

Outcome get(const Request& request, const HttpSettings& settings) {
  global_init();
  Outcome outcome;
  const auto started = std::chrono::steady_clock::now();
  Attempt attempt = perform(request, settings, /*get=*/true);
  outcome.attempts = 1;
  outcome.latency_s = seconds_since(started);
  if (attempt.code != CURLE_OK) {
    outcome.failure = attempt.code == CURLE_ABORTED_BY_CALLBACK  ? Failure::interrupted
                      : attempt.code == CURLE_OPERATION_TIMEDOUT ? Failure::timeout
                                                                 : Failure::network;
    outcome.error = redact(attempt.error);
    return outcome;
  }
  outcome.response = std::move(attempt.response);
  if (outcome.response.status < 200 || outcome.response.status >= 300) outcome.failure = Failure::http_status;
  return outcome;
}

Outcome post(const Request& request, const HttpSettings& settings, const std::string& what) {
  global_init();
  Outcome outcome;
  const auto started = std::chrono::steady_clock::now();
  auto finish = [&](Failure failure) {
    outcome.failure = failure;
    outcome.latency_s = seconds_since(started);
    return outcome;
  };
  for (int retry = 0;; ++retry) {
    if (interrupted()) return finish(Failure::interrupted);
    Attempt attempt = perform(request, settings);
    ++outcome.attempts;
    bool should_retry = false;
    std::optional<double> server_delay;
    Failure failure = Failure::none;
    if (attempt.code == CURLE_ABORTED_BY_CALLBACK || (attempt.code != CURLE_OK && interrupted())) {
      if (attempt.code == CURLE_ABORTED_BY_CALLBACK) ++outcome.unknown_cost_attempts;
      outcome.error = "interrupted";
      return finish(Failure::interrupted);
    }
    if (attempt.code != CURLE_OK) {
      failure = attempt.code == CURLE_OPERATION_TIMEDOUT ? Failure::timeout : Failure::network;
      outcome.error = redact(attempt.error);
      if (maybe_processed(attempt.code)) ++outcome.unknown_cost_attempts;
      should_retry = transient(attempt.code);
      spdlog::debug("{}: POST {} failed: {}", what, request.url, outcome.error);
    } else {
      outcome.response = std::move(attempt.response);
      const long status = outcome.response.status;
      spdlog::debug("{}: POST {} -> HTTP {} (attempt {})", what, request.url, status, outcome.attempts);
      if (status >= 200 && status < 300) return finish(Failure::none);
      failure = Failure::http_status;
      should_retry = retryable_status(status, outcome.response.body);
      if (auto flag = outcome.response.headers.find("x-should-retry"); flag != outcome.response.headers.end())
        should_retry = lower(flag->second) == "true";
      server_delay = retry_after_seconds(outcome.response.headers);
    }
    if (!should_retry || retry >= settings.max_retries) return finish(failure);
    double delay = backoff_delay(retry, settings, jitter());
    if (server_delay && *server_delay > 0) delay = std::min(*server_delay, settings.retry_after_max_s);
    spdlog::warn("{}: {}; retry {}/{} in {:.2f} s", what,
                 failure == Failure::http_status ? "HTTP " + std::to_string(outcome.response.status) : outcome.error,
                 retry + 1, settings.max_retries, delay);
    if (!sleep_unless_interrupted(delay)) return finish(Failure::interrupted);
  }
}

}  // namespace evoteam::http
