#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/process.hpp>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using evoteam::Command;
using evoteam::ProcessResult;
using evoteam::system_runner;
using evoteam::testing::TempDir;
using namespace std::chrono_literals;

Command shell(const std::string& script) {
  Command command;
  command.argv = {"/bin/sh", "-c", script};
  command.env = evoteam::scrubbed_env();
  return command;
}

ProcessResult run_shell(const std::string& script) { return system_runner().run(shell(script)); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Waits (generously: the machine may be loaded) until `path` exists.
bool wait_for_file(const fs::path& path, std::chrono::seconds limit = 20s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (fs::exists(path) && fs::file_size(path) > 0) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// True when `pid` is gone or a zombie (dead, waiting for its new parent to reap it).
bool process_is_dead(pid_t pid, std::chrono::seconds limit = 5s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
    const std::size_t close = stat.rfind(')');
    if (close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z') return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : m_name(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(m_name); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* m_name;
};

TEST(Process, NoSuchCommand) {
  Command command;
  command.argv = {"evoteam-no-such-command-here", "--flag"};
  const ProcessResult by_name = system_runner().run(command);
  EXPECT_FALSE(by_name.spawned);
  EXPECT_TRUE(contains(by_name.spawn_error, "evoteam-no-such-command-here")) << by_name.spawn_error;
  EXPECT_FALSE(by_name.ok());
  EXPECT_TRUE(by_name.describe().starts_with("could not start: ")) << by_name.describe();

  command.argv = {"/nonexistent/evoteam/tool"};
  const ProcessResult by_path = system_runner().run(command);
  EXPECT_FALSE(by_path.spawned);
  EXPECT_TRUE(contains(by_path.spawn_error, "/nonexistent/evoteam/tool")) << by_path.spawn_error;
  EXPECT_TRUE(contains(by_path.spawn_error, "No such file")) << by_path.spawn_error;
}

TEST(Process, NotExecutableIsNotStarted) {
  TempDir dir;
  const fs::path script = dir / "script.sh";
  std::ofstream(script) << "#!/bin/sh\necho hi\n";
  ::chmod(script.c_str(), 0644);
  Command command;
  command.argv = {script.string()};
  const ProcessResult result = system_runner().run(command);
  EXPECT_FALSE(result.spawned);
  EXPECT_TRUE(contains(result.spawn_error, "Permission denied")) << result.spawn_error;
}

TEST(Process, CommandExiting127IsStillSpawned) {
  const ProcessResult result = run_shell("exit 127");
  EXPECT_TRUE(result.spawned);
  EXPECT_TRUE(result.spawn_error.empty());
  EXPECT_EQ(result.exit_code, 127);
}

TEST(Process, NonZeroExit) {
  const ProcessResult result = run_shell("echo failing >&2; exit 3");
  ASSERT_TRUE(result.spawned) << result.spawn_error;
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.signal, 0);
  EXPECT_FALSE(result.timed_out);
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.describe(), "exit 3");
  EXPECT_EQ(result.err.text, "failing\n");

  const ProcessResult success = run_shell("exit 0");
  EXPECT_TRUE(success.ok());
  EXPECT_EQ(success.describe(), "exit 0");
}

TEST(Process, KilledBySignal) {
  const ProcessResult result = run_shell("kill -SEGV $$");
  ASSERT_TRUE(result.spawned) << result.spawn_error;
  EXPECT_EQ(result.signal, SIGSEGV);
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.describe(), "killed by SIGSEGV");
  EXPECT_EQ(evoteam::signal_name(SIGKILL), "SIGKILL");
}

TEST(Process, CapturesStdoutAndStderrSeparately) {
  const ProcessResult result = run_shell("echo to-out; echo to-err >&2; echo more-out");
  ASSERT_TRUE(result.ok()) << result.describe();
  EXPECT_EQ(result.out.text, "to-out\nmore-out\n");
  EXPECT_EQ(result.err.text, "to-err\n");
  EXPECT_EQ(result.out.total_bytes, 16u);
  EXPECT_EQ(result.out.elided_bytes, 0u);
  EXPECT_GT(result.wall_s, 0.0);
}

TEST(Process, StdinIsDevNull) {
  Command command;
  command.argv = {"cat"};
  command.timeout = 20s;
  const ProcessResult result = system_runner().run(command);
  ASSERT_TRUE(result.spawned) << result.spawn_error;
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out.text, "");
}

TEST(Process, TimeoutKillsGrandchildrenToo) {
  TempDir dir;
  const fs::path pid_file = dir / "grandchild.pid";
  // The grandchild ignores SIGTERM, so only the SIGKILL sent to the group after the leader dies removes it.
  Command command = shell("(trap '' TERM; exec sleep 1000) & echo $! > '" + pid_file.string() + "'; wait");
  command.timeout = 1000ms;
  command.kill_grace = 5000ms;
  const ProcessResult result = system_runner().run(command);
  ASSERT_TRUE(result.spawned) << result.spawn_error;
  EXPECT_TRUE(result.timed_out);
  EXPECT_FALSE(result.ok());
  EXPECT_LT(result.wall_s, 5.0) << "the runner waited on the grandchild's open pipes";
  EXPECT_TRUE(contains(result.describe(), "timed out after")) << result.describe();
  const pid_t grandchild = static_cast<pid_t>(std::stol(read_text(pid_file)));
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(process_is_dead(grandchild)) << "grandchild " << grandchild << " survived";
}

TEST(Process, ExitedChildLeavesNoGroupBehind) {
  TempDir dir;
  const fs::path pid_file = dir / "background.pid";
  const ProcessResult result = run_shell("sleep 1000 & echo $! > '" + pid_file.string() + "'; echo done");
  ASSERT_TRUE(result.ok()) << result.describe();
  EXPECT_EQ(result.out.text, "done\n");
  EXPECT_LT(result.wall_s, 10.0);
  const pid_t background = static_cast<pid_t>(std::stol(read_text(pid_file)));
  EXPECT_TRUE(process_is_dead(background)) << "background job " << background << " survived";
}

TEST(Process, TimeoutKeepsPartialOutput) {
  Command command = shell("echo partial; echo diagnostics >&2; exec sleep 1000");
  command.timeout = 500ms;
  const ProcessResult result = system_runner().run(command);
  ASSERT_TRUE(result.spawned) << result.spawn_error;
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.signal, SIGTERM);
  EXPECT_EQ(result.out.text, "partial\n");
  EXPECT_EQ(result.err.text, "diagnostics\n");
}

TEST(Process, TimeoutEscalatesToKill) {
  Command command = shell("trap '' TERM; echo stubborn; exec sleep 1000");
  command.timeout = 300ms;
  command.kill_grace = 300ms;
  const ProcessResult result = system_runner().run(command);
  ASSERT_TRUE(result.spawned) << result.spawn_error;
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.signal, SIGKILL);
  EXPECT_EQ(result.out.text, "stubborn\n");
  EXPECT_LT(result.wall_s, 10.0);
}

TEST(Process, OutputIsCappedHeadAndTail) {
  Command command = shell("printf HEAD; head -c 100000 /dev/zero | tr '\\0' x; printf TAIL");
  command.output_cap = 1000;
  const ProcessResult result = system_runner().run(command);
  ASSERT_TRUE(result.ok()) << result.describe() << result.err.text;
  EXPECT_EQ(result.out.total_bytes, 100008u);
  EXPECT_EQ(result.out.elided_bytes, 100008u - 1000u);
  EXPECT_TRUE(result.out.text.starts_with("HEAD")) << result.out.text.substr(0, 20);
  EXPECT_TRUE(result.out.text.ends_with("TAIL"));
  EXPECT_TRUE(contains(result.out.text, "\n[... 99008 bytes elided ...]\n"));
  EXPECT_LT(result.out.text.size(), 1100u);
}

TEST(Process, OutputCapKeepsUtf8CharactersWhole) {
  // 3000 two-byte characters; a cap of 101 cuts the head after 50 bytes and the tail inside a character.
  Command command = shell("i=0; while [ $i -lt 3000 ]; do printf '\\303\\251'; i=$((i+1)); done");
  command.output_cap = 101;
  const ProcessResult result = system_runner().run(command);
  ASSERT_TRUE(result.ok()) << result.describe();
  EXPECT_EQ(result.out.total_bytes, 6000u);
  const std::string marker = "\n[... 5900 bytes elided ...]\n";
  ASSERT_TRUE(contains(result.out.text, marker)) << result.out.text;
  const std::string head = result.out.text.substr(0, result.out.text.find(marker));
  const std::string tail = result.out.text.substr(result.out.text.find(marker) + marker.size());
  EXPECT_EQ(head.size(), 50u);
  EXPECT_EQ(tail.size(), 50u);
  EXPECT_EQ(static_cast<unsigned char>(tail.front()), 0xC3u);
  EXPECT_EQ(result.out.elided_bytes, 5900u);
}

TEST(Process, EnvironmentIsScrubbed) {
  const ScopedEnv key("FAKE_API_KEY", "sk-do-not-leak");
  const ScopedEnv jwt("SLURM_JWT", "jwt-do-not-leak");
  const ScopedEnv unlisted("EVOTEAM_UNLISTED_VARIABLE", "unlisted");
  const ScopedEnv locale("LC_EVOTEAM_TEST", "kept");
  const ScopedEnv slurm("SLURM_EVOTEAM_TEST", "kept-too");
  Command command;
  command.argv = {"env"};
  command.env = evoteam::scrubbed_env({{"EVOTEAM_EXTRA", "1"}});
  const ProcessResult result = system_runner().run(command);
  ASSERT_TRUE(result.ok()) << result.describe();
  EXPECT_FALSE(contains(result.out.text, "FAKE_API_KEY"));
  EXPECT_FALSE(contains(result.out.text, "do-not-leak"));
  EXPECT_FALSE(contains(result.out.text, "EVOTEAM_UNLISTED_VARIABLE"));
  EXPECT_TRUE(contains(result.out.text, "LC_EVOTEAM_TEST=kept\n"));
  EXPECT_TRUE(contains(result.out.text, "SLURM_EVOTEAM_TEST=kept-too\n"));
  EXPECT_TRUE(contains(result.out.text, "EVOTEAM_EXTRA=1\n"));
  EXPECT_TRUE(contains(result.out.text, "PATH="));

  // An empty environment in the Command means the scrubbed one, never the daemon's own.
  command.env.clear();
  const ProcessResult defaulted = system_runner().run(command);
  ASSERT_TRUE(defaulted.ok()) << defaulted.describe();
  EXPECT_FALSE(contains(defaulted.out.text, "do-not-leak"));
  EXPECT_TRUE(contains(defaulted.out.text, "LC_EVOTEAM_TEST=kept\n"));
}

TEST(Process, WorkingDirectory) {
  TempDir dir;
  Command command = shell("pwd");
  command.cwd = dir.path();
  const ProcessResult result = system_runner().run(command);
  ASSERT_TRUE(result.ok()) << result.describe();
  EXPECT_EQ(result.out.text, fs::canonical(dir.path()).string() + "\n");

  command.cwd = dir / "missing";
  const ProcessResult missing = system_runner().run(command);
  EXPECT_FALSE(missing.spawned);
  EXPECT_TRUE(contains(missing.spawn_error, "missing")) << missing.spawn_error;
}

TEST(Process, ResultFdCarriesRecord) {
  Command command = shell("echo log line; echo '{\"verdict\":\"PASS\"}' >&3");
  command.result_fd = 3;
  const ProcessResult result = system_runner().run(command);
  ASSERT_TRUE(result.ok()) << result.describe() << result.err.text;
  EXPECT_EQ(result.result.text, "{\"verdict\":\"PASS\"}\n");
  EXPECT_EQ(result.result.elided_bytes, 0u);
  EXPECT_EQ(result.out.text, "log line\n");

  // Without a result pipe, fd 3 is not open in the child.
  const ProcessResult closed = run_shell("echo x >&3");
  EXPECT_NE(closed.exit_code, 0);
  EXPECT_TRUE(closed.result.text.empty());

  command.result_fd = 1;
  EXPECT_THROW(system_runner().run(command), evoteam::Error);
}

TEST(Process, DaemonDescriptorsDoNotLeak) {
  const int leaked = ::open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(leaked, 0);
  const ProcessResult result =
      run_shell("if [ -e /proc/self/fd/" + std::to_string(leaked) + " ]; then echo leaked; else echo clean; fi");
  ::close(leaked);
  ASSERT_TRUE(result.ok()) << result.describe();
  EXPECT_EQ(result.out.text, "clean\n");
}

TEST(Process, NoCoreDumps) {
  Command command = shell("ulimit -c; ulimit -n");
  command.max_open_files = 64;
  const ProcessResult result = system_runner().run(command);
  ASSERT_TRUE(result.ok()) << result.describe() << result.err.text;
  EXPECT_EQ(result.out.text, "0\n64\n");
}

TEST(Process, AddressSpaceIsLimitedWhenAsked) {
  Command command = shell("ulimit -v");
  command.max_address_space = 512ull * 1024 * 1024;
  const ProcessResult limited = system_runner().run(command);
  ASSERT_TRUE(limited.ok()) << limited.describe();
  EXPECT_EQ(limited.out.text, "524288\n");  // KiB
}

TEST(Process, ChildLeadsItsOwnGroupWithDefaultSignals) {
  // A daemon commonly ignores SIGPIPE; its children must not inherit that.
  struct sigaction ignore {};
  struct sigaction previous {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);
  const ProcessResult result =
      run_shell("echo $$ $(cut -d' ' -f5 /proc/$$/stat); grep -E '^(SigIgn|SigBlk)' /proc/self/status");
  ::sigaction(SIGPIPE, &previous, nullptr);
  ASSERT_TRUE(result.ok()) << result.describe() << result.err.text;
  std::istringstream lines(result.out.text);
  std::string pid;
  std::string pgid;
  lines >> pid >> pgid;
  EXPECT_EQ(pid, pgid) << "the child is not the leader of its own group";
  EXPECT_TRUE(contains(result.out.text, "SigIgn:\t0000000000000000")) << result.out.text;
  EXPECT_TRUE(contains(result.out.text, "SigBlk:\t0000000000000000")) << result.out.text;
}

TEST(Process, ChildDiesWithTheDaemon) {
  TempDir dir;
  const fs::path pid_file = dir / "child.pid";
  const pid_t daemon = ::fork();
  ASSERT_GE(daemon, 0);
  if (daemon == 0) {
    system_runner().run(shell("echo $$ > '" + pid_file.string() + "'; exec sleep 1000"));
    ::_exit(0);
  }
  const bool started = wait_for_file(pid_file);
  ::kill(daemon, SIGKILL);
  ::waitpid(daemon, nullptr, 0);
  ASSERT_TRUE(started) << "child never started";
  const pid_t child = static_cast<pid_t>(std::stol(read_text(pid_file)));
  EXPECT_TRUE(process_is_dead(child)) << "child " << child << " outlived the daemon";
}

// Installs forwarding for one test and removes it afterwards, so Ctrl-C still stops the test binary.
class ForwardingScope {
 public:
  ForwardingScope() { evoteam::install_interrupt_forwarding(); }
  ~ForwardingScope() {
    evoteam::uninstall_interrupt_forwarding();
    evoteam::reset_interrupted_for_tests();
  }
  ForwardingScope(const ForwardingScope&) = delete;
  ForwardingScope& operator=(const ForwardingScope&) = delete;
};

TEST(Process, InterruptIsForwarded) {
  const ForwardingScope forwarding;
  TempDir dir;
  const fs::path ready = dir / "ready";
  Command command =
      shell("trap 'echo got-int; exit 7' INT; echo up > '" + ready.string() + "'; while :; do sleep 0.05; done");
  command.timeout = 60s;
  ProcessResult result;
  std::thread runner([&] { result = system_runner().run(command); });
  ASSERT_TRUE(wait_for_file(ready)) << "child never started";
  ::kill(::getpid(), SIGINT);
  runner.join();
  EXPECT_TRUE(result.interrupted);
  EXPECT_FALSE(result.timed_out);
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.exit_code, 7) << result.describe();
  EXPECT_EQ(result.out.text, "got-int\n");
  EXPECT_TRUE(evoteam::interrupted());
  EXPECT_EQ(evoteam::interrupt_signal(), SIGINT);
  EXPECT_TRUE(result.describe().starts_with("interrupted")) << result.describe();

  // Work started after the interrupt (shutdown) still runs.
  const ProcessResult after = run_shell("echo after");
  EXPECT_TRUE(after.ok()) << after.describe();
  EXPECT_FALSE(after.interrupted);
}

TEST(Process, InterruptEscalatesToKill) {
  const ForwardingScope forwarding;
  TempDir dir;
  const fs::path ready = dir / "ready";
  Command command = shell("trap '' TERM; echo up > '" + ready.string() + "'; exec sleep 1000");
  command.timeout = 60s;
  command.kill_grace = 300ms;
  ProcessResult result;
  std::thread runner([&] { result = system_runner().run(command); });
  ASSERT_TRUE(wait_for_file(ready)) << "child never started";
  ::kill(::getpid(), SIGTERM);
  runner.join();
  EXPECT_TRUE(result.interrupted);
  EXPECT_EQ(result.signal, SIGKILL) << result.describe();
  EXPECT_LT(result.wall_s, 30.0);
  EXPECT_EQ(evoteam::interrupt_signal(), SIGTERM);
}

TEST(Process, ManyAtOnce) {
  constexpr int k_threads = 8;
  constexpr int k_runs_per_thread = 2;
  std::vector<ProcessResult> results(k_threads * k_runs_per_thread);
  std::vector<std::thread> threads;
  for (int t = 0; t < k_threads; ++t) {
    threads.emplace_back([t, &results] {
      for (int r = 0; r < k_runs_per_thread; ++r) {
        const int id = t * k_runs_per_thread + r;
        const std::string n = std::to_string(id);
        results[id] = run_shell("echo out-" + n + "; echo err-" + n + " >&2; exit " + std::to_string(id % 5));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int id = 0; id < k_threads * k_runs_per_thread; ++id) {
    const ProcessResult& result = results[id];
    const std::string n = std::to_string(id);
    ASSERT_TRUE(result.spawned) << id << ": " << result.spawn_error;
    EXPECT_EQ(result.exit_code, id % 5) << id;
    EXPECT_EQ(result.out.text, "out-" + n + "\n") << id;
    EXPECT_EQ(result.err.text, "err-" + n + "\n") << id;
  }
}

TEST(Process, MalformedCommandThrows) { EXPECT_THROW(system_runner().run(Command{}), evoteam::Error); }

TEST(Process, SettingsComeFromTheProcessSection) {
  evoteam::Config config;
  config.overlay({{"process", {{"kill_grace_s", 0.25}, {"output_cap_bytes", 100}, {"max_open_files", 77}}}}, "test");
  const evoteam::ProcessSettings settings = evoteam::process_settings(config);
  EXPECT_EQ(settings.kill_grace, 250ms);
  EXPECT_EQ(settings.output_cap, 100u);
  EXPECT_EQ(settings.max_open_files, 77u);
  EXPECT_THROW(config.overlay({{"process", {{"output_cap_bytes", -1}}}}, "test"), evoteam::InvalidInput);
}

// The configured section reaches every child that does not set its own values (it used to reach none).
TEST(Process, TheRunnerGivesUnsetFieldsTheSettingsInUse) {
  const evoteam::ProcessSettings before = evoteam::process_settings_in_use();
  evoteam::ProcessSettings settings = before;
  settings.output_cap = 100;
  evoteam::use_process_settings(settings);
  const ProcessResult capped = system_runner().run(shell("head -c 1000 /dev/zero | tr '\\0' x"));
  Command own_cap = shell("head -c 1000 /dev/zero | tr '\\0' x");
  own_cap.output_cap = 4096;
  const ProcessResult uncapped = system_runner().run(own_cap);
  evoteam::use_process_settings(before);
  EXPECT_EQ(capped.out.total_bytes, 1000u);
  EXPECT_EQ(capped.out.elided_bytes, 900u) << capped.out.text;
  EXPECT_EQ(uncapped.out.elided_bytes, 0u);
  EXPECT_EQ(uncapped.out.text, std::string(1000, 'x'));
}

TEST(Process, DescribeNamesTheOutcome) {
  ProcessResult result;
  result.spawn_error = "command not found: 'nvcc'";
  EXPECT_EQ(result.describe(), "could not start: command not found: 'nvcc'");
  result.spawned = true;
  result.exit_code = 0;
  EXPECT_EQ(result.describe(), "exit 0");
  result.timed_out = true;
  result.wall_s = 2.04;
  result.signal = SIGTERM;
  EXPECT_EQ(result.describe(), "timed out after 2.0 s (killed by SIGTERM)");
  result.interrupted = true;
  EXPECT_EQ(result.describe(), "interrupted (killed by SIGTERM)");
}

}  // namespace
