#include <evoteam/eval/sandbox.hpp>

#include <algorithm>
#include <cstdlib>

#include <evoteam/core/inventory.hpp>

namespace evoteam::eval {
namespace {

std::string bwrap_path() {
  std::optional<std::filesystem::path> found = find_program("bwrap");
  return found ? found->string() : "bwrap";
}

bool is_within(const std::filesystem::path& inner, const std::filesystem::path& outer) {
  auto it = inner.begin();
  for (const auto& part : outer) {
    if (part.empty()) continue;
    if (it == inner.end() || *it != part) return false;
    ++it;
  }
  return true;
}

}  // namespace

std::vector<std::string> sandbox_argv(SandboxMode mode, const std::vector<std::string>& argv, const SandboxSpec& spec) {
  if (mode != SandboxMode::bwrap) return argv;
  std::vector<std::string> wrapped = {bwrap_path(), "--ro-bind", "/",     "/",       "--dev",
                                      "/dev",       "--proc",    "/proc", "--tmpfs", "/tmp"};
  // Hide the home directory (keys, caches, other runs) unless it is the root itself; a coding-agent CLI, which can
  // read any file it likes and send it to its model, sees no user's home at all (its own home is a private one,
  // bound writable below). What it must read there comes back read-only through `readable`.
  std::vector<std::filesystem::path> homes;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') homes.emplace_back(home);
  if (spec.agent_cli) homes.insert(homes.end(), {"/root", "/home"});
  for (const std::filesystem::path& home : homes) {
    const std::filesystem::path home_path = home.lexically_normal();
    if (home_path == "/" || !std::filesystem::is_directory(home_path)) continue;
    bool holds_everything = false;
    for (const auto& path : spec.writable) holds_everything |= is_within(home_path, path);
    if (!holds_everything) wrapped.insert(wrapped.end(), {"--tmpfs", home_path.string()});
  }
  for (const auto& path : spec.readable) wrapped.insert(wrapped.end(), {"--ro-bind", path.string(), path.string()});
  for (const auto& path : spec.writable) wrapped.insert(wrapped.end(), {"--bind", path.string(), path.string()});
  for (const auto& path : spec.devices) wrapped.insert(wrapped.end(), {"--dev-bind-try", path.string(), path.string()});
  if (!spec.shared_memory.empty()) wrapped.insert(wrapped.end(), {"--bind", spec.shared_memory.string(), "/dev/shm"});
  if (spec.agent_cli)
    wrapped.insert(wrapped.end(),
                   {"--unshare-ipc", "--unshare-uts", "--unshare-pid", "--new-session", "--die-with-parent"});
  else if (spec.rank_group)
    wrapped.insert(wrapped.end(), {"--unshare-uts", "--new-session", "--die-with-parent"});
  else
    wrapped.insert(wrapped.end(), {"--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-pid", "--new-session",
                                   "--die-with-parent"});
  if (!spec.writable.empty()) wrapped.insert(wrapped.end(), {"--chdir", spec.writable.front().string()});
  wrapped.push_back("--");
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

std::vector<std::filesystem::path> gpu_device_nodes() {
  std::vector<std::filesystem::path> nodes;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/dev", error))
    if (entry.path().filename().string().rfind("nvidia", 0) == 0) nodes.push_back(entry.path());
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

bool probe_bwrap(ProcessRunner& runner, std::string* why) {
  Command command;
  command.argv = {bwrap_path(),
                  "--ro-bind",
                  "/",
                  "/",
                  "--dev",
                  "/dev",
                  "--proc",
                  "/proc",
                  "--tmpfs",
                  "/tmp",
                  "--unshare-net",
                  "--unshare-ipc",
                  "--unshare-uts",
                  "--unshare-pid",
                  "--new-session",
                  "--die-with-parent",
                  "--",
                  "/bin/sh",
                  "-c",
                  "exit 0"};
  command.timeout = std::chrono::milliseconds(20'000);
  ProcessResult result = runner.run(command);
  if (result.ok()) return true;
  *why = result.describe() + (result.err.text.empty() ? "" : ": " + result.err.text);
  return false;
}

}  // namespace evoteam::eval
