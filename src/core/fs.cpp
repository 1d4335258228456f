#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace evoteam {

namespace {

[[noreturn]] void throw_io(const std::string& what, const std::filesystem::path& path, int err) {
  throw IoError("cannot " + what + " " + path.string() + ": " + errno_text(err));
}

std::filesystem::path parent_or_dot(const std::filesystem::path& path) {
  std::filesystem::path parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

// A name unique within this process and across processes (pid), hidden so `ls` does not show it.
std::filesystem::path temp_path_for(const std::filesystem::path& path) {
  static std::atomic<unsigned> counter{0};
  const std::string name = "." + path.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
                           std::to_string(counter.fetch_add(1));
  return parent_or_dot(path) / name;
}

}  // namespace

void write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path temp = temp_path_for(path);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw_io("write", path, errno);

  // Any failure before the rename removes the temp file and leaves the old content of `path` untouched.
  auto fail = [&](int err, const char* what) {
    if (fd >= 0) ::close(fd);
    ::unlink(temp.c_str());
    throw IoError("cannot write " + path.string() + " (" + what + "): " + errno_text(err));
  };
  if (const int err = write_all(fd, content); err != 0) fail(err, "write");
  if (::fsync(fd) != 0) fail(errno, "fsync");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    throw IoError("cannot write " + path.string() + " (close): " + errno_text(err));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    throw IoError("cannot write " + path.string() + " (rename): " + errno_text(err));
  }
  // The rename is only durable once the directory entry is on disk.
  fsync_directory(parent_or_dot(path));
}

void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& value) {
  // Replace invalid UTF-8 (text from agents or compilers) instead of failing the write.
  std::string text = value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  text += '\n';
  write_file_atomic(path, text);
}

std::string read_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_io("read", path, errno);
  std::string content;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    content.reserve(static_cast<std::size_t>(st.st_size));
  }
  char buffer[65536];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw_io("read", path, err);
    }
    if (n == 0) break;
    content.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return content;
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InvalidInput(path.string() + ": no such file");
  const std::string text = read_file(path);
  try {
    return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    // An error at the very end means the file stops early, the usual shape of an interrupted write.
    const bool at_end = e.byte >= text.size();
    std::string reason = e.what();
    if (const auto pos = reason.find(": "); pos != std::string::npos) reason = reason.substr(pos + 2);
    throw InvalidInput(path.string() + " is not valid JSON" + (at_end ? " (truncated?)" : "") + " at byte " +
                       std::to_string(e.byte) + ": " + reason);
  } catch (const nlohmann::json::exception& e) {
    // A number no double holds (1e999) stops the parser without a position: name the line of its text.
    std::string reason = e.what();
    if (const auto pos = reason.find("] "); pos != std::string::npos) reason = reason.substr(pos + 2);
    std::string where;
    const auto open_quote = reason.find('\''), close_quote = reason.rfind('\'');
    if (open_quote != std::string::npos && close_quote > open_quote) {
      const auto at = text.find(reason.substr(open_quote + 1, close_quote - open_quote - 1));
      if (at != std::string::npos)
        where = " at line " +
                std::to_string(1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    }
    throw InvalidInput(path.string() + " is not valid JSON" + where + ": " + reason);
  }
}

void fsync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_io("open directory", dir, errno);
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    // Some file systems cannot fsync a directory; that is not a lost write.
    if (err == EINVAL || err == EROFS) return;
    throw_io("fsync directory", dir, err);
  }
  ::close(fd);
}

void create_directories(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError("cannot create directory " + dir.string() + ": " + ec.message());
  if (!std::filesystem::is_directory(dir, ec)) {
    throw IoError("cannot create directory " + dir.string() + ": a file of that name exists");
  }
}

void copy_tree(const std::filesystem::path& from, const std::filesystem::path& to) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(from, ec)) throw IoError("cannot copy " + from.string() + ": not a directory");
  evoteam::create_directories(to);
  fs::recursive_directory_iterator it(from, fs::directory_options::none, ec);
  if (ec) throw IoError("cannot read directory " + from.string() + ": " + ec.message());
  for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) throw IoError("cannot read directory " + from.string() + ": " + ec.message());
    const fs::path target = to / it->path().lexically_relative(from);
    const fs::file_status status = it->symlink_status(ec);
    if (fs::is_directory(status)) {
      evoteam::create_directories(target);
    } else if (fs::is_regular_file(status)) {
      fs::copy_file(it->path(), target, fs::copy_options::overwrite_existing, ec);
      if (ec) throw IoError("cannot copy " + it->path().string() + " to " + target.string() + ": " + ec.message());
    }
    // Symlinks, sockets and devices are left out on purpose: a frozen copy must not point outside itself.
  }
  if (ec) throw IoError("cannot read directory " + from.string() + ": " + ec.message());
}

int write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

std::vector<std::filesystem::path> files_under(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (std::filesystem::recursive_directory_iterator it(dir, error), end; !error && it != end; it.increment(error))
    if (it->is_regular_file()) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace evoteam
