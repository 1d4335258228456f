// Static checks over objdump text and sources, without a compiler.
#include <evoteam/core/config.hpp>
#include <evoteam/eval/eval_settings.hpp>
#include <evoteam/task/task.hpp>

#include <gtest/gtest.h>

#include <set>

#include "eval/host/static_check.hpp"

namespace {

using namespace evoteam::eval;

const char* k_objdump = R"(
kernel.o:     file format elf64-x86-64

Sections:
Idx Name          Size      VMA               LMA               File off  Algn
  0 .text         000000b9  0000000000000000  0000000000000000  00000050  2**4
                  CONTENTS, ALLOC, LOAD, RELOC, READONLY, CODE
  1 .data         00000000  0000000000000000  0000000000000000  00000109  2**0
                  CONTENTS, ALLOC, LOAD, DATA
  2 .bss          00000400  0000000000000000  0000000000000000  00000120  2**5
                  ALLOC
  3 .rodata.cst4  00000004  0000000000000000  0000000000000000  00000120  2**2
                  CONTENTS, ALLOC, LOAD, READONLY, DATA
SYMBOL TABLE:
0000000000000000 l    df *ABS*	0000000000000000 kernel.cpp
0000000000000000 l     O .bss	0000000000000400 _ZL5cache
0000000000000000 g     F .text	00000000000000b9 matmul
0000000000000000  w    F .text._Z3fooi	0000000000000010 _Z3fooi
0000000000000000         *UND*	0000000000000000 memcpy
0000000000000000         *UND*	0000000000000000 fopen

Disassembly of section .text:

0000000000000000 <matmul>:
   0:	push   %r12
   2:	vfmadd231ps %zmm1,%zmm2,%zmm3
   8:	lock xadd %eax,(%rdx)
   c:	syscall
   e:	ret
)";

const evoteam::Task& static_check_matmul_task() {
  static const evoteam::Task task = evoteam::load_task(evoteam::install_root() / "kernels" / "host_matmul");
  return task;
}

StaticPolicy policy() {
  const evoteam::StaticCheckSettings defaults = evoteam::eval_settings(evoteam::Config()).static_checks;
  StaticPolicy result;
  result.allowed_symbols = defaults.allowed_symbols;
  result.forbidden_instructions = defaults.forbidden_instructions;
  return result;
}

TEST(EvalStaticCheck, ParsesSectionsSymbolsAndInstructions) {
  ObjectScan scan = parse_objdump("kernel.o", k_objdump);
  EXPECT_EQ(scan.sections.at(".bss"), 0x400u);
  EXPECT_EQ(scan.sections.at(".data"), 0u);
  EXPECT_EQ(scan.undefined, (std::vector<std::string>{"memcpy", "fopen"}));
  EXPECT_EQ(scan.defined_global, (std::vector<std::string>{"matmul", "_Z3fooi"}));
  EXPECT_EQ(scan.instructions.at("syscall"), 1);
  EXPECT_EQ(scan.instructions.at("xadd"), 1);  // prefixes are skipped
  EXPECT_EQ(scan.instructions.at("vfmadd231ps"), 1);
}

// Captured from g++ 12 -O2 -fPIC -c: state in .lbss and in a section named at will, a pointer table in
// .data.rel.ro, and a GNU indirect function.
const char* k_objdump_flags = R"(
kernel.o:     file format elf64-x86-64

Sections:
Idx Name          Size      VMA               LMA               File off  Algn
  0 .text         000000f8  0000000000000000  0000000000000000  00000040  2**4
                  CONTENTS, ALLOC, LOAD, RELOC, READONLY, CODE
  1 .data.rel.ro.local 00000010  0000000000000000  0000000000000000  00000140  2**4
                  CONTENTS, ALLOC, LOAD, RELOC, DATA
  2 .rodata       00000010  0000000000000000  0000000000000000  00000150  2**4
                  CONTENTS, ALLOC, LOAD, READONLY, DATA
  3 .lbss         00001000  0000000000000000  0000000000000000  00000160  2**5
                  ALLOC
  4 memo_state    00000400  0000000000000000  0000000000000000  00000160  2**5
                  CONTENTS, ALLOC, LOAD, DATA
  5 .comment      00000028  0000000000000000  0000000000000000  00000168  2**0
                  CONTENTS, READONLY
  6 .eh_frame     00000070  0000000000000000  0000000000000000  00000190  2**3
                  CONTENTS, ALLOC, LOAD, RELOC, READONLY, DATA
SYMBOL TABLE:
0000000000000000 l    df *ABS*	0000000000000000 k.cpp
0000000000000000 l     O .lbss	0000000000001000 _ZL9memo_lbss
0000000000000020 g     F .text	0000000000000008 resolve_impl
0000000000000020 g   i   .text	0000000000000008 impl
0000000000000030 g     F .text	00000000000000c8 matmul
)";

TEST(EvalStaticCheck, WritableStateIsFoundByItsFlagsAndIndirectFunctionsAreRefused) {
  ObjectScan scan = parse_objdump("kernel.o", k_objdump_flags);
  EXPECT_EQ(scan.writable_sections, (std::set<std::string>{".data.rel.ro.local", ".lbss", "memo_state"}));
  EXPECT_EQ(scan.indirect_functions, (std::vector<std::string>{"impl"}));
  auto finding = check_object(static_check_matmul_task(), scan, policy());
  ASSERT_TRUE(finding.has_value());
  EXPECT_NE(finding->reason.find("GNU indirect function impl"), std::string::npos) << finding->reason;
  scan.indirect_functions.clear();
  finding = check_object(static_check_matmul_task(), scan, policy());
  ASSERT_TRUE(finding.has_value());
  EXPECT_NE(finding->reason.find("writable global or static data (.lbss"), std::string::npos) << finding->reason;
  scan.sections.erase(".lbss");
  finding = check_object(static_check_matmul_task(), scan, policy());
  ASSERT_TRUE(finding.has_value());
  EXPECT_NE(finding->reason.find("writable global or static data (memo_state"), std::string::npos) << finding->reason;
  // A pointer table is read-only once relocated: with the state gone, the object passes.
  scan.sections.erase("memo_state");
  finding = check_object(static_check_matmul_task(), scan, policy());
  EXPECT_FALSE(finding.has_value()) << finding->reason;
}

TEST(EvalStaticCheck, RejectsSymbolsOutsideTheAllowlistWithTheirCategory) {
  ObjectScan scan = parse_objdump("kernel.o", k_objdump);
  auto finding = check_object(static_check_matmul_task(), scan, policy());
  ASSERT_TRUE(finding.has_value());
  EXPECT_EQ(finding->reason, "forbidden symbol fopen (file I/O)");
  EXPECT_EQ(finding->evidence["symbol"], "fopen");
  scan.undefined = {"memcpy", "sqrtf", "__powidf2", "_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateEEPFvvE"};
  finding = check_object(static_check_matmul_task(), scan, policy());
  ASSERT_TRUE(finding.has_value());
  EXPECT_NE(finding->reason.find("(threads)"), std::string::npos) << finding->reason;
  scan.undefined = {"memcpy", "some_unknown_function"};
  finding = check_object(static_check_matmul_task(), scan, policy());
  ASSERT_TRUE(finding.has_value());
  EXPECT_NE(finding->reason.find("not on the allowlist"), std::string::npos);
}

TEST(EvalStaticCheck, RejectsWritableDataInterpositionAndForbiddenInstructions) {
  ObjectScan scan = parse_objdump("kernel.o", k_objdump);
  scan.undefined = {"memcpy"};
  auto finding = check_object(static_check_matmul_task(), scan, policy());
  ASSERT_TRUE(finding.has_value());
  EXPECT_NE(finding->reason.find("writable global or static data (.bss"), std::string::npos) << finding->reason;
  StaticPolicy lenient = policy();
  lenient.forbid_writable_data = false;
  finding = check_object(static_check_matmul_task(), scan, lenient);
  ASSERT_TRUE(finding.has_value());
  EXPECT_NE(finding->reason.find("forbidden instruction syscall"), std::string::npos) << finding->reason;
  scan.instructions.erase("syscall");
  scan.defined_global.push_back("clock_gettime");
  finding = check_object(static_check_matmul_task(), scan, lenient);
  ASSERT_TRUE(finding.has_value());
  EXPECT_NE(finding->reason.find("interpose"), std::string::npos);
  scan.defined_global.pop_back();
  scan.sections[".init_array"] = 8;
  finding = check_object(static_check_matmul_task(), scan, lenient);
  ASSERT_TRUE(finding.has_value());
  EXPECT_NE(finding->reason.find("static constructors"), std::string::npos);
  scan.sections.erase(".init_array");
  EXPECT_FALSE(check_object(static_check_matmul_task(), scan, lenient).has_value());
}

// On the host target too, a once-adopted constraint never rejects: the check reports whether the objects meet it,
// while a hard require still rejects.
TEST(EvalStaticCheck, OnceAdoptedTaskConstraintsAreReportedNotRejected) {
  evoteam::Task task = static_check_matmul_task();
  evoteam::StaticConstraint fma;
  fma.name = "fma";
  fma.scope = "disassembly";
  fma.pattern = "vfmadd";
  fma.required = true;
  fma.once_adopted = true;
  task.static_constraints = {fma};
  const std::vector<ObjectScan> with_fma = {parse_objdump("kernel.o", k_objdump)};
  std::vector<std::string> adopted;
  EXPECT_FALSE(check_task_constraints(task, {}, with_fma, &adopted).has_value());
  EXPECT_EQ(adopted, std::vector<std::string>{"fma"});
  ObjectScan without = with_fma.front();
  without.disassembly = "   0:\tret\n";
  adopted.clear();
  EXPECT_FALSE(check_task_constraints(task, {}, {without}, &adopted).has_value());
  EXPECT_TRUE(adopted.empty());
  task.static_constraints.front().once_adopted = false;
  const auto finding = check_task_constraints(task, {}, {without}, &adopted);
  ASSERT_TRUE(finding.has_value());
  EXPECT_NE(finding->reason.find("\"fma\" requires"), std::string::npos) << finding->reason;
}

TEST(EvalStaticCheck, RejectsIncludesOfTaskFilesAbsolutePathsAndParents) {
  const auto& task = static_check_matmul_task();
  EXPECT_FALSE(check_sources(task, {{"kernel.cpp", "#include <cstdint>\n#include \"helper.h\"\n"}}).has_value());
  auto finding = check_sources(task, {{"kernel.cpp", "#include <cstdint>\n  #  include \"/etc/passwd\"\n"}});
  ASSERT_TRUE(finding.has_value());
  EXPECT_NE(finding->reason.find("absolute path"), std::string::npos);
  EXPECT_EQ(finding->evidence["line"], 2);
  finding = check_sources(task, {{"kernel.cpp", "#include \"sub/../../x.h\"\n"}});
  ASSERT_TRUE(finding.has_value());
  EXPECT_NE(finding->reason.find("'..'"), std::string::npos);
  finding = check_sources(task, {{"kernel.cpp", "#include \"reference.cpp\"\n"}});
  ASSERT_TRUE(finding.has_value());
  EXPECT_NE(finding->reason.find("task file"), std::string::npos);
  finding = check_sources(task, {{"kernel.cpp", "#define F \"x.h\"\n#include F\n"}});
  ASSERT_TRUE(finding.has_value());
  EXPECT_NE(finding->reason.find("computed #include"), std::string::npos);
}

TEST(EvalStaticCheck, WarnsAboutLiteralsEqualToWorkloadDimensions) {
  auto warnings = source_warnings(static_check_matmul_task(), {{"kernel.cpp", "int a = 512; int b = 7; int c = 640;"}});
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("512"), std::string::npos);
}

TEST(EvalStaticCheck, GlobMatchesStarsAndQuestionMarks) {
  EXPECT_TRUE(glob_match("sqrt*", "sqrtf"));
  EXPECT_TRUE(glob_match("__mul?c3", "__mulsc3"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_FALSE(glob_match("exp*", "fexp"));
  EXPECT_TRUE(glob_match("__*_finite", "__exp_finite"));
  EXPECT_EQ(symbol_category("fopen64@GLIBC_2.2.5"), "file I/O");
  EXPECT_EQ(symbol_category("_Znwm"), "allocation");
  EXPECT_EQ(symbol_category("memcpy"), "");
}

}  // namespace
