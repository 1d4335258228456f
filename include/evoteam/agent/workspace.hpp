#pragma once
// An agent's workspace: its own directory holding copies of the editable files (writable) and of the files it
// may only read (the task README, the reference interface). Every path an agent names is relative to the
// workspace, resolved after following symlinks, and refused when it leaves the workspace. Refusals throw
// WorkspaceError, whose message is meant for the model ("path '../x' leaves the workspace").
#include <cstddef>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <evoteam/core/error.hpp>

namespace evoteam {

class Config;

// A refused or failed workspace operation; the tools turn it into an error result for the model.
class WorkspaceError : public Error {
 public:
  explicit WorkspaceError(const std::string& message) : Error(message) {}
};

struct WorkspaceLimits {
  std::size_t max_write_bytes = 1024 * 1024;  // per write
  std::size_t max_read_bytes = 4 * 1024 * 1024;
  std::size_t max_list_entries = 500;
};
// agent.max_write_bytes, agent.max_read_bytes, agent.max_list_entries.
WorkspaceLimits workspace_limits_from_config(const Config& config);

// A file copied into the workspace: `name` is its path inside the workspace, `source` where it comes from.
struct WorkspaceFile {
  std::string name;
  std::filesystem::path source;
};

class Workspace {
 public:
  // Opens an existing directory as a workspace; `read_only` names files (relative) that may not be written.
  Workspace(const std::filesystem::path& root, std::set<std::string> read_only, WorkspaceLimits limits = {});

  // Creates `root` (it may exist) and copies the files in, overwriting earlier copies; read-only copies are
  // chmod a-w. Throws InvalidInput for a name that is absolute or escapes, IoError when a copy fails.
  static Workspace create(const std::filesystem::path& root, const std::vector<WorkspaceFile>& editable,
                          const std::vector<WorkspaceFile>& read_only, WorkspaceLimits limits = {});

  const std::filesystem::path& root() const { return m_root; }
  const std::set<std::string>& read_only_files() const { return m_read_only; }

  // Resolves a relative path for reading: absolute paths, `..` that leave, and symlinks that point out are
  // refused. "" and "." mean the root.
  std::filesystem::path resolve(const std::string& path) const;

  std::string read(const std::string& path) const;
  // Writes atomically, creating parent folders inside the workspace. Refuses read-only files, oversize
  // content and paths whose resolved target is outside the workspace.
  void write(const std::string& path, const std::string& content) const;
  // Replaces the one occurrence of `old_text` with `new_text`; refuses when it is absent or appears more
  // than once (the message says how often).
  void edit(const std::string& path, const std::string& old_text, const std::string& new_text) const;
  // One line per entry under `path` (recursive, sorted): "dir/", "file (123 bytes)", "file (read-only)".
  std::string list(const std::string& path) const;

  // The workspace's regular files as relative paths (sorted), for the evaluator.
  std::vector<std::string> files() const;

 private:
  bool is_read_only(const std::filesystem::path& resolved) const;

  std::filesystem::path m_root;  // canonical
  std::set<std::string> m_read_only;
  WorkspaceLimits m_limits;
};

}  // namespace evoteam
