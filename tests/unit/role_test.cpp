#include <evoteam/team/role.hpp>

#include <algorithm>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include <evoteam/core/error.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

using testing::TempDir;

const std::filesystem::path k_shipped_roles = std::filesystem::path(EVOTEAM_SOURCE_DIR) / "roles";

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string invalid_input_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const InvalidInput& error) {
    return error.what();
  }
  return "";
}

std::string role_text(const std::string& name, const std::string& tools, const std::string& body) {
  return "---\nname: " + name + "\ndescription: A test role.\ntools: " + tools + "\nmodel:\n---\n" + body;
}

// A value for every known placeholder, each distinct so a test can see where it landed.
std::map<std::string, std::string> all_values() {
  std::map<std::string, std::string> values;
  for (const std::string& name : known_placeholders()) values[name] = "<" + name + " value>";
  return values;
}

TEST(Role, EveryShippedRoleLoadsAndRendersWithAllPlaceholders) {
  const auto roles = load_roles(k_shipped_roles);
  for (const char* expected :
       {"optimizer", "debugger", "profiling-scientist", "knowledge-integrator", "disciplinarian", "supervisor"}) {
    EXPECT_TRUE(roles.count(expected)) << "missing shipped role " << expected;
  }
  for (const auto& [name, role] : roles) {
    SCOPED_TRACE(role.source.string());
    EXPECT_EQ(role.name, name);
    EXPECT_FALSE(role.description.empty());
    const std::string text = render(role, all_values());
    EXPECT_EQ(text.find("{{"), std::string::npos) << "unrendered braces left in " << name;
    const auto lines = std::count(role.body.begin(), role.body.end(), '\n');
    EXPECT_GE(lines, 40) << "prompt too short to be a working prompt";
    EXPECT_LE(lines, 120);
    // Team roles end their turn by submitting and see the directives and the current best.
    if (name != "supervisor") {
      EXPECT_NE(std::find(role.tools.begin(), role.tools.end(), "submit"), role.tools.end());
      EXPECT_NE(text.find("<directives value>"), std::string::npos);
      EXPECT_NE(text.find("<best_summary value>"), std::string::npos);
      EXPECT_NE(text.find("<knowledge_digest value>"), std::string::npos);
    }
  }
}

TEST(Role, SupervisorPromptAsksForTheTeamSchema) {
  const RoleDefinition supervisor = load_role(k_shipped_roles / "supervisor.md");
  const auto used = placeholders_in(supervisor.body);
  for (const char* name : {"signals", "history", "available_roles", "team_schema"}) {
    EXPECT_NE(std::find(used.begin(), used.end(), name), used.end()) << name;
  }
  EXPECT_TRUE(supervisor.tools.empty());
}

TEST(Role, FrontMatterFieldsAreParsed) {
  TempDir dir;
  write(dir / "r.md",
        "---\n# a comment\nname: scout\ndescription: \"Looks around.\"\ntools: [read_file, profile , submit]\n"
        "model: some-model\n---\n\nHello {{ task_name }}.\n\n");
  const RoleDefinition role = load_role(dir / "r.md");
  EXPECT_EQ(role.name, "scout");
  EXPECT_EQ(role.description, "Looks around.");
  EXPECT_EQ(role.tools, (std::vector<std::string>{"read_file", "profile", "submit"}));
  EXPECT_EQ(role.model, "some-model");
  EXPECT_EQ(role.body, "Hello {{ task_name }}.\n");
  EXPECT_EQ(role.source, dir / "r.md");
  EXPECT_EQ(render(role, {{"task_name", "gemm"}}), "Hello gemm.\n");
}

TEST(Role, CrlfFilesParseLikeLfFiles) {
  TempDir dir;
  write(dir / "r.md", "---\r\nname: scout\r\ndescription: d\r\ntools: submit\r\n---\r\nBody {{cycle}}\r\n");
  const RoleDefinition role = load_role(dir / "r.md");
  EXPECT_EQ(role.tools, std::vector<std::string>{"submit"});
  EXPECT_EQ(render(role, {{"cycle", "3"}}), "Body 3\n");
}

TEST(Role, UnknownPlaceholderIsAnErrorNamingFileAndPlaceholder) {
  TempDir dir;
  write(dir / "bad.md", role_text("bad", "submit", "Task {{task_name}} on {{gpu_model}}.\n"));
  const std::string message = invalid_input_of([&] { load_role(dir / "bad.md"); });
  EXPECT_NE(message.find("bad.md"), std::string::npos) << message;
  EXPECT_NE(message.find("gpu_model"), std::string::npos) << message;

  // A role built in code is checked when rendered.
  RoleDefinition role{"inline", "d", {}, "", "Hi {{task-name}}\n", dir / "inline.md"};
  const std::string at_render = invalid_input_of([&] { render(role, all_values()); });
  EXPECT_NE(at_render.find("inline.md"), std::string::npos) << at_render;
  EXPECT_NE(at_render.find("task-name"), std::string::npos) << at_render;
}

TEST(Role, MissingValueIsAnError) {
  TempDir dir;
  write(dir / "r.md", role_text("r", "submit", "A {{task_name}} B {{cycle}}\n"));
  const RoleDefinition role = load_role(dir / "r.md");
  const std::string message = invalid_input_of([&] { render(role, {{"task_name", "t"}}); });
  EXPECT_NE(message.find("r.md"), std::string::npos) << message;
  EXPECT_NE(message.find("cycle"), std::string::npos) << message;
  // An explicit empty value is fine.
  EXPECT_EQ(render(role, {{"task_name", "t"}, {"cycle", ""}}), "A t B \n");
}

TEST(Role, ValuesAreNotRescanned) {
  TempDir dir;
  write(dir / "r.md", role_text("r", "", "{{task_readme}} and {{task_name}}\n"));
  const RoleDefinition role = load_role(dir / "r.md");
  EXPECT_EQ(render(role, {{"task_readme", "uses {{task_name}} and {{unknown}}"}, {"task_name", "x"}}),
            "uses {{task_name}} and {{unknown}} and x\n");
}

TEST(Role, BracesThatAreNotPlaceholdersStayLiteral) {
  EXPECT_EQ(placeholders_in("float a[2][2] = {{1, 2}, {3, 4}}; {{ cycle }} {{cycle}} {{0}} {{"),
            std::vector<std::string>{"cycle"});
}

TEST(Role, UnknownValueKeyIsACallerBug) {
  TempDir dir;
  write(dir / "r.md", role_text("r", "", "{{cycle}}\n"));
  const RoleDefinition role = load_role(dir / "r.md");
  EXPECT_THROW(render(role, {{"cycle", "1"}, {"cylce", "1"}}), Error);
}

TEST(Role, UnknownToolIsAnErrorNamingTheFile) {
  TempDir dir;
  write(dir / "shell.md", role_text("shell", "read_file, run_shell", "Body\n"));
  const std::string message = invalid_input_of([&] { load_role(dir / "shell.md"); });
  EXPECT_NE(message.find("shell.md"), std::string::npos) << message;
  EXPECT_NE(message.find("run_shell"), std::string::npos) << message;
}

TEST(Role, RepeatedToolIsAnError) {
  TempDir dir;
  write(dir / "r.md", role_text("r", "submit, submit", "Body\n"));
  EXPECT_NE(invalid_input_of([&] { load_role(dir / "r.md"); }).find("twice"), std::string::npos);
}

TEST(Role, DuplicateNamesAreErrors) {
  TempDir dir;
  write(dir / "a.md", role_text("twin", "submit", "A\n"));
  write(dir / "b.md", role_text("twin", "submit", "B\n"));
  const std::string message = invalid_input_of([&] { load_roles(dir.path()); });
  EXPECT_NE(message.find("twin"), std::string::npos) << message;
  EXPECT_NE(message.find("a.md"), std::string::npos) << message;
  EXPECT_NE(message.find("b.md"), std::string::npos) << message;
}

TEST(Role, MissingFrontMatterIsAnError) {
  TempDir dir;
  write(dir / "plain.md", "name: plain\nJust a prompt.\n");
  const std::string message = invalid_input_of([&] { load_role(dir / "plain.md"); });
  EXPECT_NE(message.find("plain.md"), std::string::npos) << message;
  EXPECT_NE(message.find("missing front matter"), std::string::npos) << message;
}

TEST(Role, UnterminatedFrontMatterIsAnError) {
  TempDir dir;
  write(dir / "open.md", "---\nname: open\ndescription: d\nThe prompt.\n");
  const std::string message = invalid_input_of([&] { load_role(dir / "open.md"); });
  EXPECT_NE(message.find("open.md"), std::string::npos) << message;
  EXPECT_NE(message.find("unterminated"), std::string::npos) << message;
}

TEST(Role, MalformedFrontMatterIsAnError) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"---\ndescription: d\n---\nBody\n", "no 'name'"},
      {"---\nname: n\n---\nBody\n", "no 'description'"},
      {"---\nname: Bad Name\ndescription: d\n---\nBody\n", "invalid role name"},
      {"---\nname: n\ndescription: d\ncolor: blue\n---\nBody\n", "unknown front-matter key 'color'"},
      {"---\nname: n\nname: m\ndescription: d\n---\nBody\n", "given twice"},
      {"---\nname: n\ndescription: d\njust words\n---\nBody\n", "expected 'key: value'"},
      {"---\nname: n\ndescription: d\n---\n\n  \n", "body is empty"},
  };
  for (const auto& [text, expected] : cases) {
    write(dir / "case.md", text);
    const std::string message = invalid_input_of([&] { load_role(dir / "case.md"); });
    EXPECT_NE(message.find(expected), std::string::npos) << "for:\n" << text << "got: " << message;
    EXPECT_NE(message.find("case.md"), std::string::npos) << message;
  }
}

TEST(Role, UserAddedRoleInAnotherDirectoryLoads) {
  TempDir dir;
  for (const auto& entry : std::filesystem::directory_iterator(k_shipped_roles))
    std::filesystem::copy_file(entry.path(), dir / entry.path().filename().string());
  write(dir / "tile-tuner.md",
        role_text("tile-tuner", "read_file, edit_file, compile, run_tests, benchmark, submit",
                  "Tune the tiles of {{task_name}} for {{target}}.\nDirectives:\n{{directives}}\n"));
  write(dir / ".draft.md", "not a role");
  const auto roles = load_roles(dir.path());
  EXPECT_EQ(roles.size(), 7u);
  ASSERT_TRUE(roles.count("tile-tuner"));
  const std::string text = render(roles.at("tile-tuner"), all_values());
  EXPECT_EQ(text, "Tune the tiles of <task_name value> for <target value>.\nDirectives:\n<directives value>\n");
}

TEST(Role, MissingOrEmptyDirectoryIsAnError) {
  TempDir dir;
  EXPECT_NE(invalid_input_of([&] { load_roles(dir / "nope"); }).find("nope"), std::string::npos);
  write(dir / "README.md", "# only a readme\n");
  EXPECT_NE(invalid_input_of([&] { load_roles(dir.path()); }).find("no role files"), std::string::npos);
  EXPECT_NE(invalid_input_of([&] { load_role(dir / "absent.md"); }).find("absent.md"), std::string::npos);
}

TEST(Role, DefaultDirectoryIsUnderTheInstallRoot) { EXPECT_EQ(default_roles_dir().filename(), "roles"); }

TEST(Role, KnownSetsAreTheContract) { EXPECT_EQ(known_placeholders().size(), 17u); }

}  // namespace
}  // namespace evoteam
