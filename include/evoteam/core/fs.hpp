#pragma once
// File helpers with the crash-safety rules of the experiment directory: whole-file writes are atomic
// (temp file in the same directory, fsync, rename, fsync the directory). Failures throw IoError naming the path.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam {

// On failure the old content of `path` (if any) is left in place and the temp file is removed.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);
// Pretty-printed (indent 2) with a final newline; invalid UTF-8 in strings is replaced, not fatal.
void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& value);

// Reads a whole file; throws IoError when it cannot be read.
std::string read_file(const std::filesystem::path& path);
// Parses a JSON file (comments allowed); throws InvalidInput naming the file and the parser's byte offset
// (with "(truncated?)" when the text stops early), InvalidInput when the file does not exist.
nlohmann::json read_json_file(const std::filesystem::path& path);

// fsync a directory so a rename or a new entry in it survives a crash (a no-op where the file system
// cannot fsync directories).
void fsync_directory(const std::filesystem::path& dir);

// Creates the directory and parents (existing ones are fine); throws IoError with the path and reason.
// Call it qualified, evoteam::create_directories(...): argument lookup also finds std::filesystem's.
void create_directories(const std::filesystem::path& dir);

// Copies a directory tree (regular files and folders only; symlinks and special files are skipped),
// overwriting files that exist in `to`. Throws IoError naming the path that failed.
void copy_tree(const std::filesystem::path& from, const std::filesystem::path& to);

// Every regular file under `dir`, recursively, in sorted path order (empty when `dir` does not exist).
std::vector<std::filesystem::path> files_under(const std::filesystem::path& dir);

// Writes all of `bytes` to `fd`, retrying short writes and EINTR; returns 0, or the errno of the failure (the
// caller names the file in its error).
int write_all(int fd, std::string_view bytes);

// Hex SHA-256 of bytes (build cache keys, input hashes).
std::string sha256_hex(std::string_view bytes);

}  // namespace evoteam
