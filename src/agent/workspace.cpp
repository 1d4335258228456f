// The workspace sandbox: every path is checked after resolving symlinks, and writes stay inside.
#include <evoteam/agent/workspace.hpp>
#include <evoteam/core/fs.hpp>

#include <algorithm>
#include <system_error>

namespace evoteam {

namespace fs = std::filesystem;

namespace {

bool inside(const fs::path& path, const fs::path& root) {
  const fs::path relative = path.lexically_relative(root);
  return !relative.empty() && *relative.begin() != "..";
}

// Checks a name before anything is resolved: relative, and no component that climbs.
void check_relative(const std::string& path) {
  const fs::path given(path);
  if (given.is_absolute() || (!path.empty() && path[0] == '~'))
    throw WorkspaceError("path '" + path + "' is absolute; use a path relative to the workspace");
  for (const fs::path& part : given)
    if (part == "..") throw WorkspaceError("path '" + path + "' uses '..' and leaves the workspace");
}

std::size_t count_occurrences(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (std::size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + needle.size()))
    ++count;
  return count;
}

}  // namespace

Workspace::Workspace(const fs::path& root, std::set<std::string> read_only, WorkspaceLimits limits)
    : m_read_only(std::move(read_only)), m_limits(limits) {
  std::error_code error;
  m_root = fs::canonical(root, error);
  if (error || !fs::is_directory(m_root))
    throw IoError("workspace " + root.string() + ": not a directory" + (error ? " (" + error.message() + ")" : ""));
}

Workspace Workspace::create(const fs::path& root, const std::vector<WorkspaceFile>& editable,
                            const std::vector<WorkspaceFile>& read_only, WorkspaceLimits limits) {
  evoteam::create_directories(root);
  std::set<std::string> read_only_names;
  auto copy_in = [&](const WorkspaceFile& file, bool writable) {
    try {
      check_relative(file.name);
    } catch (const WorkspaceError& error) {
      throw InvalidInput(std::string("workspace file: ") + error.what());
    }
    const fs::path target = root / fs::path(file.name).lexically_normal();
    evoteam::create_directories(target.parent_path());
    std::error_code error;
    if (fs::exists(target, error)) fs::permissions(target, fs::perms::owner_write, fs::perm_options::add, error);
    fs::copy_file(file.source, target, fs::copy_options::overwrite_existing, error);
    if (error)
      throw IoError("workspace: cannot copy " + file.source.string() + " to " + target.string() + ": " +
                    error.message());
    if (!writable)
      fs::permissions(target, fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                      fs::perm_options::remove, error);
  };
  for (const WorkspaceFile& file : editable) copy_in(file, true);
  for (const WorkspaceFile& file : read_only) {
    copy_in(file, false);
    read_only_names.insert(fs::path(file.name).lexically_normal().generic_string());
  }
  return Workspace(root, read_only_names, limits);
}

fs::path Workspace::resolve(const std::string& path) const {
  if (path.empty() || path == ".") return m_root;
  check_relative(path);
  const fs::path joined = (m_root / path).lexically_normal();
  std::error_code error;
  // Symlinks anywhere on the way (the last component included) are followed before the check.
  fs::path resolved = fs::weakly_canonical(joined, error);
  if (error) throw WorkspaceError("path '" + path + "' cannot be resolved: " + error.message());
  if (resolved != m_root && !inside(resolved, m_root))
    throw WorkspaceError("path '" + path + "' resolves outside the workspace (through a symlink)");
  // A dangling symlink would otherwise let a write follow it out later.
  if (fs::is_symlink(fs::symlink_status(joined, error)) && !fs::exists(joined, error))
    throw WorkspaceError("path '" + path + "' is a dangling symlink");
  return resolved;
}

bool Workspace::is_read_only(const fs::path& resolved) const {
  return m_read_only.count(resolved.lexically_relative(m_root).generic_string()) != 0;
}

std::string Workspace::read(const std::string& path) const {
  const fs::path resolved = resolve(path);
  std::error_code error;
  if (fs::is_directory(resolved, error)) throw WorkspaceError("'" + path + "' is a folder; use list_files");
  if (!fs::is_regular_file(resolved, error)) throw WorkspaceError("no file '" + path + "' in the workspace");
  const std::uintmax_t size = fs::file_size(resolved, error);
  if (!error && size > m_limits.max_read_bytes)
    throw WorkspaceError("'" + path + "' has " + std::to_string(size) + " bytes, more than the " +
                         std::to_string(m_limits.max_read_bytes) + " a read may return");
  try {
    return read_file(resolved);
  } catch (const IoError& failure) {
    throw WorkspaceError(std::string("cannot read '") + path + "': " + failure.what());
  }
}

void Workspace::write(const std::string& path, const std::string& content) const {
  if (content.size() > m_limits.max_write_bytes)
    throw WorkspaceError("content of " + std::to_string(content.size()) + " bytes for '" + path +
                         "' exceeds the limit of " + std::to_string(m_limits.max_write_bytes) + " bytes");
  const fs::path resolved = resolve(path);
  if (resolved == m_root) throw WorkspaceError("path '" + path + "' names the workspace itself, not a file");
  if (is_read_only(resolved)) throw WorkspaceError("'" + path + "' is read-only");
  std::error_code error;
  if (fs::is_directory(resolved, error)) throw WorkspaceError("'" + path + "' is a folder");
  try {
    evoteam::create_directories(resolved.parent_path());
    write_file_atomic(resolved, content);
  } catch (const IoError& failure) {
    throw WorkspaceError(std::string("cannot write '") + path + "': " + failure.what());
  }
}

void Workspace::edit(const std::string& path, const std::string& old_text, const std::string& new_text) const {
  if (old_text.empty()) throw WorkspaceError("'old' is empty; give the exact text to replace");
  std::string text = read(path);
  const std::size_t found = count_occurrences(text, old_text);
  if (found == 0) throw WorkspaceError("'old' was not found in '" + path + "' (it must match exactly, whitespace too)");
  if (found > 1)
    throw WorkspaceError("'old' appears " + std::to_string(found) + " times in '" + path +
                         "'; include more surrounding text so it appears once");
  text.replace(text.find(old_text), old_text.size(), new_text);
  write(path, text);
}

std::string Workspace::list(const std::string& path) const {
  const fs::path resolved = resolve(path);
  std::error_code error;
  auto describe = [&](const fs::path& entry) {
    const std::string name = entry.lexically_relative(m_root).generic_string();
    const fs::file_status status = fs::symlink_status(entry, error);
    if (fs::is_symlink(status)) return name + " (symlink)";
    if (fs::is_directory(status)) return name + "/";
    std::string line = name + " (" + std::to_string(fs::file_size(entry, error)) + " bytes";
    return line + (is_read_only(entry) ? ", read-only)" : ")");
  };
  if (!fs::exists(resolved, error)) throw WorkspaceError("no file or folder '" + path + "' in the workspace");
  if (!fs::is_directory(resolved, error)) return describe(resolved) + "\n";
  std::vector<std::string> lines;
  for (fs::recursive_directory_iterator it(resolved, error), end; !error && it != end; it.increment(error))
    lines.push_back(describe(it->path()));
  std::sort(lines.begin(), lines.end());
  std::string text;
  const std::size_t shown = std::min(lines.size(), m_limits.max_list_entries);
  for (std::size_t i = 0; i < shown; ++i) text += lines[i] + "\n";
  if (shown < lines.size()) text += "[... " + std::to_string(lines.size() - shown) + " more entries]\n";
  if (lines.empty()) text = "(empty)\n";
  return text;
}

std::vector<std::string> Workspace::files() const {
  std::vector<std::string> result;
  std::error_code error;
  for (fs::recursive_directory_iterator it(m_root, error), end; !error && it != end; it.increment(error))
    if (fs::is_regular_file(it->symlink_status()))
      result.push_back(it->path().lexically_relative(m_root).generic_string());
  std::sort(result.begin(), result.end());
  return result;
}

}  // namespace evoteam
