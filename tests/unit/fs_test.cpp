#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using evoteam::testing::TempDir;

void write_plain(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Fs, AtomicWriteReplacesContentAndLeavesNoTempFile) {
  TempDir dir;
  const fs::path file = dir / "state.json";
  evoteam::write_file_atomic(file, "old");
  evoteam::write_file_atomic(file, "new content");
  EXPECT_EQ(evoteam::read_file(file), "new content");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"state.json"});
}

TEST(Fs, AtomicWriteFailureKeepsOldContentAndRemovesTempFile) {
  TempDir dir;
  const fs::path file = dir / "run.json";
  evoteam::write_file_atomic(file, "committed");

  // A file-size limit makes write(2) fail with EFBIG as a full disk would, without needing privileges.
  // It is set in a child so the test process keeps its own limits.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit {
      4096, 4096
    };
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(10);
    try {
      evoteam::write_file_atomic(file, std::string(64 * 1024, 'x'));
      ::_exit(11);  // the write should not have succeeded
    } catch (const evoteam::IoError& e) {
      const std::string message = e.what();
      ::_exit(message.find(file.string()) != std::string::npos && e.code() == evoteam::ExitCode::io ? 0 : 12);
    } catch (...) {
      ::_exit(13);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: setrlimit failed, 11: no error, 12: bad message, 13: wrong type";
  EXPECT_EQ(evoteam::read_file(file), "committed");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"run.json"});
}

TEST(Fs, AtomicWriteUnderARegularFileThrowsIoErrorNamingThePath) {
  TempDir dir;
  write_plain(dir / "plain", "not a directory");
  const fs::path target = dir / "plain" / "out.json";
  try {
    evoteam::write_file_atomic(target, "x");
    FAIL() << "expected IoError";
  } catch (const evoteam::IoError& e) {
    EXPECT_NE(std::string(e.what()).find(target.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Not a directory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(evoteam::read_file(dir / "plain"), "not a directory");
}

TEST(Fs, WriteJsonAtomicPrettyPrintsAndReplacesInvalidUtf8) {
  TempDir dir;
  const fs::path file = dir / "x.json";
  evoteam::write_json_atomic(file, {{"text", std::string("bad \xff byte")}});
  const nlohmann::json back = evoteam::read_json_file(file);
  EXPECT_TRUE(back["text"].is_string());
  EXPECT_EQ(evoteam::read_file(file).back(), '\n');
}

TEST(Fs, ReadFileOfMissingFileThrowsIoError) {
  TempDir dir;
  EXPECT_THROW(evoteam::read_file(dir / "missing"), evoteam::IoError);
}

TEST(Fs, ReadJsonFileReportsTruncationWithFileAndByte) {
  TempDir dir;
  const fs::path file = dir / "cut.json";
  write_plain(file, "{\"a\": 1, \"b\": [1, 2");
  try {
    evoteam::read_json_file(file);
    FAIL() << "expected InvalidInput";
  } catch (const evoteam::InvalidInput& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(file.string()), std::string::npos) << message;
    EXPECT_NE(message.find("not valid JSON (truncated?) at byte"), std::string::npos) << message;
  }
}

TEST(Fs, ReadJsonFileAllowsCommentsAndRejectsMissingFile) {
  TempDir dir;
  const fs::path file = dir / "c.json";
  write_plain(file, "// a config\n{\"a\": /* inline */ 1}\n");
  EXPECT_EQ(evoteam::read_json_file(file)["a"], 1);
  EXPECT_THROW(evoteam::read_json_file(dir / "none.json"), evoteam::InvalidInput);
}

TEST(Fs, CreateDirectoriesOverAFileThrowsIoError) {
  TempDir dir;
  write_plain(dir / "f", "x");
  EXPECT_NO_THROW(evoteam::create_directories(dir / "a" / "b" / "c"));
  EXPECT_NO_THROW(evoteam::create_directories(dir / "a" / "b"));
  EXPECT_THROW(evoteam::create_directories(dir / "f"), evoteam::IoError);
  EXPECT_THROW(evoteam::create_directories(dir / "f" / "sub"), evoteam::IoError);
}

TEST(Fs, CopyTreeCopiesFilesAndFoldersButNotSymlinks) {
  TempDir dir;
  const fs::path from = dir / "from";
  fs::create_directories(from / "sub" / "deeper");
  write_plain(from / "top.txt", "top");
  write_plain(from / "sub" / "deeper" / "leaf.cu", "leaf");
  fs::create_symlink("/etc/passwd", from / "escape");
  const fs::path to = dir / "to";
  evoteam::copy_tree(from, to);
  EXPECT_EQ(evoteam::read_file(to / "top.txt"), "top");
  EXPECT_EQ(evoteam::read_file(to / "sub" / "deeper" / "leaf.cu"), "leaf");
  EXPECT_FALSE(fs::exists(fs::symlink_status(to / "escape")));
  EXPECT_THROW(evoteam::copy_tree(dir / "missing", dir / "x"), evoteam::IoError);
}

TEST(Fs, FsyncDirectoryOfMissingDirectoryThrowsIoError) {
  TempDir dir;
  EXPECT_NO_THROW(evoteam::fsync_directory(dir.path()));
  EXPECT_THROW(evoteam::fsync_directory(dir / "missing"), evoteam::IoError);
}

TEST(Fs, Sha256MatchesKnownVectors) {
  EXPECT_EQ(evoteam::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(evoteam::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(evoteam::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(evoteam::sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Fs, Sha256HandlesPaddingBoundaries) {
  // Lengths around the 56- and 64-byte marks exercise the one- and two-block padding paths.
  const std::vector<std::pair<std::size_t, std::string>> vectors = {
      {55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072"},
      {56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e"},
      {63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2"},
      {64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c"},
      {65, "9537c5fdf120482f7d58d25e9ed583f52c02b4e304ea814db1633ad565aed7e9"},
      {119, "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c"},
      {120, "13f05a0b594787f5ecd315edc96141bd3243203d1b7d4f0836f37308b276ba98"},
  };
  for (const auto& [length, expected] : vectors) {
    EXPECT_EQ(evoteam::sha256_hex(std::string(length, 'x')), expected) << "length " << length;
  }
}

TEST(WriteAll, WritesEveryByteThroughAPipeAndReportsAFailureAsItsErrno) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string bytes(40000, 'x');  // more than one pipe buffer: the reader drains while the writer writes
  std::string received;
  std::thread reader([&] {
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0) received.append(buffer, static_cast<std::size_t>(n));
  });
  EXPECT_EQ(evoteam::write_all(fds[1], bytes), 0);
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  EXPECT_EQ(received, bytes);
  EXPECT_EQ(evoteam::write_all(-1, "x"), EBADF);
  EXPECT_EQ(evoteam::errno_text(ENOENT), "No such file or directory");
}

// A number no double holds is invalid input naming the file and the line, not an internal error.
TEST(ReadJsonFile, ANumberOutOfRangeIsInvalidInputNamingFileAndLine) {
  TempDir dir;
  evoteam::write_file_atomic(dir / "task.json", "{\n  \"tolerances\": {\n    \"rtol\": 1e999\n  }\n}\n");
  try {
    evoteam::read_json_file(dir / "task.json");
    FAIL() << "parsed 1e999";
  } catch (const evoteam::InvalidInput& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find((dir / "task.json").string()), std::string::npos) << message;
    EXPECT_NE(message.find("at line 3"), std::string::npos) << message;
    EXPECT_NE(message.find("1e999"), std::string::npos) << message;
  }
}

}  // namespace
