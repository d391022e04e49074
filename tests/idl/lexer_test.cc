// Lexer: token kinds and positions, cpp line markers, comments, strings,
// verbatim C blocks and the column correction for cpp's collapsed blanks.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "tests/idl/idl_test_util.h"

using namespace ninf::idl;
using ninf::idl::testing::Lex;

namespace {

std::string Pos(const Token &t) {
  return t.loc.file + ":" + std::to_string(t.loc.line) + ":" + std::to_string(t.loc.col);
}

}  // namespace

TEST_CASE("lexer_token_kinds_and_positions", "[idl][lexer]") {
  std::vector<Token> t = Lex("Module m;\n  Define f(IN int a[2*n]) \"d\" 0x10 'c' @ <= &&");
  REQUIRE(t.size() == 21);
  CHECK(t[0].kind == TokenKind::kIdent);
  CHECK(t[0].text == "Module");
  CHECK(Pos(t[0]) == "t.idl:1:1");
  CHECK(t[1].text == "m");
  CHECK(Pos(t[1]) == "t.idl:1:8");
  CHECK(t[2].Is(";"));
  CHECK(t[3].IsWord("Define"));
  CHECK(Pos(t[3]) == "t.idl:2:3");
  CHECK(t[5].Is("("));
  CHECK(Pos(t[5]) == "t.idl:2:11");
  CHECK(t[9].Is("["));
  CHECK(t[10].kind == TokenKind::kNumber);
  CHECK(t[10].text == "2");
  CHECK(t[11].Is("*"));
  CHECK(t[15].kind == TokenKind::kString);
  CHECK(t[15].text == "d");
  CHECK(Pos(t[15]) == "t.idl:2:27");
  CHECK(t[16].kind == TokenKind::kNumber);
  CHECK(t[16].text == "0x10");
  CHECK(t[17].kind == TokenKind::kChar);
  CHECK(t[17].text == "'c'");
  CHECK(t[18].kind == TokenKind::kOther);
  CHECK(t[18].text == "@");
  CHECK(t[19].Is("<="));
  CHECK(t[20].Is("&&"));
}

TEST_CASE("lexer_follows_cpp_line_markers", "[idl][lexer]") {
  std::vector<Token> t = Lex(
      "# 0 \"a.idl\"\n# 1 \"a.idl\"\nfoo\n# 10 \"inc/b.h\" 1 3\n\n  bar\n#line 3 \"c.idl\"\nbaz\n"
      "#pragma once\nqux");
  REQUIRE(t.size() == 4);
  CHECK(Pos(t[0]) == "a.idl:1:1");
  CHECK(Pos(t[1]) == "inc/b.h:11:3");
  CHECK(Pos(t[2]) == "c.idl:3:1");
  CHECK(Pos(t[3]) == "c.idl:5:1");
}

TEST_CASE("lexer_skips_comments_and_keeps_counting_lines", "[idl][lexer]") {
  std::vector<Token> t = Lex("/* one\n two */ a // three\nb /**/ c");
  REQUIRE(t.size() == 3);
  CHECK(Pos(t[0]) == "t.idl:2:9");
  CHECK(Pos(t[1]) == "t.idl:3:1");
  CHECK(Pos(t[2]) == "t.idl:3:8");
}

TEST_CASE("lexer_decodes_string_escapes", "[idl][lexer]") {
  std::vector<Token> t = Lex(R"("a\tb\x41\101\"\\" "it's")");
  REQUIRE(t.size() == 2);
  CHECK(t[0].text == "a\tbAA\"\\");
  CHECK(t[1].text == "it's");
}

TEST_CASE("lexer_keeps_the_low_byte_of_an_overlong_hex_escape", "[idl][lexer]") {
  // Found by fuzz/idl_fuzz: the value overflowed int digit after digit.
  std::vector<Token> t = Lex(R"("\x123456789A")");
  REQUIRE(t.size() == 1);
  CHECK(t[0].text == "\x9a");
}

TEST_CASE("lexer_reports_unterminated_constructs", "[idl][lexer]") {
  std::string errors;
  Lex("a \"open\nb", &errors);
  CHECK(errors == "t.idl:1:3: error: missing terminating '\"' character\n");
  Lex("a\n  /* never closed", &errors);
  CHECK(errors == "t.idl:2:3: error: unterminated comment\n");
  Lex("#define X 1\nX", &errors);
  CHECK(errors ==
        "t.idl:1:1: error: unexpected preprocessor directive '#define' (the input must go through "
        "cpp first)\n");
}

TEST_CASE("lexer_captures_c_blocks_verbatim", "[idl][lexer]") {
  Diagnostics diag;
  std::string text =
      "Globals { if (x) { s = \"}\"; c = '}'; /* } */ // }\n"
      "#pragma omp parallel { \n"
      "} }\nafter";
  Lexer lexer(text, "t.idl", &diag);
  CHECK(lexer.Next().IsWord("Globals"));
  Token open = lexer.Next();
  REQUIRE(open.Is("{"));
  RawText block;
  REQUIRE(lexer.CaptureBlock(open.loc, &block));
  CHECK(block.text == " if (x) { s = \"}\"; c = '}'; /* } */ // }\n#pragma omp parallel { \n} ");
  CHECK(block.loc.line == 1);
  CHECK(block.loc.col == 10);
  Token after = lexer.Next();
  CHECK(after.text == "after");
  CHECK(Pos(after) == "t.idl:4:1");
  CHECK(diag.ok());
}

TEST_CASE("lexer_block_follows_line_markers_inside", "[idl][lexer]") {
  Diagnostics diag;
  std::string text = "{\n# 40 \"x.idl\"\n int a;\n}\nnext";
  Lexer lexer(text, "t.idl", &diag);
  Token open = lexer.Next();
  RawText block;
  REQUIRE(lexer.CaptureBlock(open.loc, &block));
  CHECK(block.text == "\n# 40 \"x.idl\"\n int a;\n");
  CHECK(Pos(lexer.Next()) == "x.idl:42:1");
}

TEST_CASE("lexer_reports_unclosed_block_at_its_brace", "[idl][lexer]") {
  Diagnostics diag;
  Lexer lexer("x\n  { int a; { }", "t.idl", &diag);
  lexer.Next();
  Token open = lexer.Next();
  RawText block;
  CHECK_FALSE(lexer.CaptureBlock(open.loc, &block));
  CHECK(diag.Format() == "t.idl:2:3: error: no '}' matches this '{'\n");
}

TEST_CASE("lexer_parses_integer_literals", "[idl][lexer]") {
  int64_t v = 0;
  CHECK((ParseInteger("42", &v) && v == 42));
  CHECK((ParseInteger("0x1F", &v) && v == 31));
  CHECK((ParseInteger("010", &v) && v == 8));
  CHECK((ParseInteger("7UL", &v) && v == 7));
  CHECK((ParseInteger("9223372036854775807", &v) && v == INT64_MAX));
  CHECK_FALSE(ParseInteger("9223372036854775808", &v));
  CHECK_FALSE(ParseInteger("1.5", &v));
  CHECK_FALSE(ParseInteger("08", &v));
  CHECK_FALSE(ParseInteger("12abc", &v));
}

TEST_CASE("lexer_aligns_cpp_columns_with_the_original", "[idl][lexer]") {
  // cpp turns runs of blanks and comments into one blank.
  std::string pre = "Define f(IN int n, \"a  b\")";
  std::string orig = "Define   f(IN /* c */ int\tn, \"a  b\") // x";
  std::vector<int> map = AlignColumns(pre, orig);
  REQUIRE(map.size() == pre.size() + 1);
  CHECK(map[7] == 9);                                                     // f
  CHECK(map[pre.find("int")] == 22);                                      // int
  CHECK(map[pre.find(" n,") + 1] == 26);                                  // n
  CHECK(map[pre.find('"') + 4] == static_cast<int>(orig.find('"')) + 4);  // inside the literal
  CHECK(AlignColumns("Define N", "Define n").empty());                    // a macro was expanded
  CHECK(AlignColumns("    x", "/* a */ x").size() == 6);
}

TEST_CASE("lexer_reports_original_columns_when_the_source_is_readable", "[idl][lexer]") {
  char path[] = "/tmp/ninf-idl-lexer-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  std::ofstream(path) << "Module m;\nDefine    f(IN   int n)\n";
  std::string pre = std::string("# 1 \"") + path + "\"\nModule m;\nDefine f(IN int n)\n";
  Diagnostics diag;
  SourceLines originals;
  Lexer lexer(pre, "x", &diag, &originals);
  std::vector<Token> t;
  for (Token tok = lexer.Next(); tok.kind != TokenKind::kEnd; tok = lexer.Next()) t.push_back(tok);
  std::remove(path);
  REQUIRE(t.size() == 10);
  CHECK(t[4].text == "f");
  CHECK(t[4].loc.col == 11);
  CHECK(t[8].text == "n");
  CHECK(t[8].loc.col == 22);
}

TEST_CASE("lexer_lists_the_files_cpp_read", "[idl][lexer]") {
  Diagnostics diag;
  Lexer lexer(
      "# 0 \"a.idl\"\n# 0 \"<built-in>\"\n# 1 \"a.idl\"\n# 1 \"inc/b.h\" 1\nx\n# 2 \"a.idl\" "
      "2\ny\n",
      "a.idl", &diag);
  while (lexer.Next().kind != TokenKind::kEnd) {
  }
  CHECK(lexer.files() == std::vector<std::string>{"a.idl", "inc/b.h"});
}
