// The workspace sandbox: every kind of escape is refused with a message for the model.
#include <gtest/gtest.h>

#include <functional>

#include <evoteam/agent/workspace.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;

class AgentWorkspace : public ::testing::Test {
 protected:
  AgentWorkspace() {
    fs::create_directories(m_dir / "task");
    write_file_atomic(m_dir / "task/kernel.cpp", "int tile = 8;\nint tile_k = 8;\n");
    write_file_atomic(m_dir / "task/reference.cpp", "// the truth\n");
    write_file_atomic(m_dir / "task/README.md", "# Task\n");
    write_file_atomic(m_dir / "secret.txt", "outside");
    m_workspace = std::make_unique<Workspace>(
        Workspace::create(m_dir / "ws", {{"kernel.cpp", m_dir / "task/kernel.cpp"}},
                          {{"reference.cpp", m_dir / "task/reference.cpp"}, {"README.md", m_dir / "task/README.md"}},
                          WorkspaceLimits{64, 1024, 100}));
  }

  std::string refusal(const std::function<void()>& action) {
    try {
      action();
    } catch (const WorkspaceError& error) {
      return error.what();
    }
    return "";
  }

  testing::TempDir m_dir;
  std::unique_ptr<Workspace> m_workspace;
};

TEST_F(AgentWorkspace, CopiesEditableAndReadOnlyFiles) {
  EXPECT_EQ(m_workspace->read("kernel.cpp"), "int tile = 8;\nint tile_k = 8;\n");
  EXPECT_EQ(m_workspace->read("README.md"), "# Task\n");
  EXPECT_EQ(m_workspace->files(), (std::vector<std::string>{"README.md", "kernel.cpp", "reference.cpp"}));
  EXPECT_NE(m_workspace->list(".").find("reference.cpp (13 bytes, read-only)"), std::string::npos);
}

TEST_F(AgentWorkspace, DotDotEscapeIsRefused) {
  EXPECT_NE(refusal([&] { m_workspace->read("../secret.txt"); }).find("leaves the workspace"), std::string::npos);
  EXPECT_NE(refusal([&] { m_workspace->write("sub/../../x.txt", "x"); }).find("'..'"), std::string::npos);
  EXPECT_FALSE(fs::exists(m_dir / "x.txt"));
}

TEST_F(AgentWorkspace, AbsolutePathIsRefused) {
  EXPECT_NE(refusal([&] { m_workspace->read("/etc/passwd"); }).find("absolute"), std::string::npos);
  EXPECT_NE(refusal([&] { m_workspace->write((m_dir / "secret.txt").string(), "x"); }).find("absolute"),
            std::string::npos);
  EXPECT_EQ(read_file(m_dir / "secret.txt"), "outside");
}

TEST_F(AgentWorkspace, SymlinkPointingOutIsRefused) {
  fs::create_symlink(m_dir / "secret.txt", m_workspace->root() / "link.txt");
  fs::create_directory_symlink(m_dir.path(), m_workspace->root() / "linkdir");
  EXPECT_NE(refusal([&] { m_workspace->read("link.txt"); }).find("outside the workspace"), std::string::npos);
  EXPECT_NE(refusal([&] { m_workspace->write("link.txt", "pwned"); }).find("outside"), std::string::npos);
  EXPECT_NE(refusal([&] { m_workspace->write("linkdir/new.txt", "pwned"); }).find("outside"), std::string::npos);
  EXPECT_EQ(read_file(m_dir / "secret.txt"), "outside");
  EXPECT_FALSE(fs::exists(m_dir / "new.txt"));
}

TEST_F(AgentWorkspace, DanglingSymlinkIsRefused) {
  fs::create_symlink(m_dir / "nowhere.txt", m_workspace->root() / "dangling.txt");
  EXPECT_NE(refusal([&] { m_workspace->write("dangling.txt", "x"); }), "");
  EXPECT_FALSE(fs::exists(m_dir / "nowhere.txt"));
}

TEST_F(AgentWorkspace, SymlinkInsideToAReadOnlyFileIsStillReadOnly) {
  fs::create_symlink(m_workspace->root() / "reference.cpp", m_workspace->root() / "alias.cpp");
  EXPECT_NE(refusal([&] { m_workspace->write("alias.cpp", "cheat"); }).find("read-only"), std::string::npos);
}

TEST_F(AgentWorkspace, ReadOnlyFilesCannotBeWrittenOrEdited) {
  EXPECT_NE(refusal([&] { m_workspace->write("reference.cpp", "int cheat;"); }).find("read-only"), std::string::npos);
  EXPECT_NE(refusal([&] { m_workspace->edit("README.md", "Task", "Nothing"); }).find("read-only"), std::string::npos);
  EXPECT_EQ(m_workspace->read("reference.cpp"), "// the truth\n");
}

TEST_F(AgentWorkspace, OversizeWriteIsRefused) {
  EXPECT_NE(refusal([&] { m_workspace->write("big.txt", std::string(65, 'x')); }).find("exceeds the limit of 64"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(m_workspace->root() / "big.txt"));
  m_workspace->write("ok.txt", std::string(64, 'x'));
}

TEST_F(AgentWorkspace, WriteCreatesFoldersInside) {
  m_workspace->write("notes/plan.md", "tile it");
  EXPECT_EQ(read_file(m_workspace->root() / "notes/plan.md"), "tile it");
}

TEST_F(AgentWorkspace, EditReplacesExactlyOneOccurrence) {
  m_workspace->edit("kernel.cpp", "int tile = 8;", "int tile = 16;");
  EXPECT_EQ(m_workspace->read("kernel.cpp"), "int tile = 16;\nint tile_k = 8;\n");
}

TEST_F(AgentWorkspace, EditFailsClearlyWhenAbsentOrAmbiguous) {
  EXPECT_NE(refusal([&] { m_workspace->edit("kernel.cpp", "int tile = 32;", "x"); }).find("not found"),
            std::string::npos);
  EXPECT_NE(refusal([&] { m_workspace->edit("kernel.cpp", "= 8;", "= 4;"); }).find("appears 2 times"),
            std::string::npos);
  EXPECT_NE(refusal([&] { m_workspace->edit("kernel.cpp", "", "x"); }).find("empty"), std::string::npos);
  EXPECT_EQ(m_workspace->read("kernel.cpp"), "int tile = 8;\nint tile_k = 8;\n");
}

TEST_F(AgentWorkspace, MissingFilesAndFoldersAreToolErrors) {
  EXPECT_NE(refusal([&] { m_workspace->read("nope.cpp"); }).find("no file"), std::string::npos);
  EXPECT_NE(refusal([&] { m_workspace->read("."); }).find("folder"), std::string::npos);
  EXPECT_NE(refusal([&] { m_workspace->list("nope"); }).find("no file or folder"), std::string::npos);
}

TEST_F(AgentWorkspace, CreateRefusesNamesThatEscape) {
  EXPECT_THROW(Workspace::create(m_dir / "ws2", {{"../evil.cpp", m_dir / "task/kernel.cpp"}}, {}), InvalidInput);
}

}  // namespace
}  // namespace evoteam
