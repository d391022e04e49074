#include "idl/lexer.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ninf::idl {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Decodes one escape sequence starting after the backslash at s[*i].
char DecodeEscape(std::string_view s, std::size_t *i) {
  char c = s[(*i)++];
  switch (c) {
    case 'n':
      return '\n';
    case 't':
      return '\t';
    case 'r':
      return '\r';
    case 'a':
      return '\a';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'v':
      return '\v';
    case 'x': {
      int v = 0;
      while (*i < s.size() && std::isxdigit(static_cast<unsigned char>(s[*i]))) {
        char h = static_cast<char>(std::tolower(static_cast<unsigned char>(s[(*i)++])));
        // Like C compilers, keep the low byte of an out-of-range "\x123": the
        // value must not grow past int with each further digit.
        v = ((v << 4) | (IsDigit(h) ? h - '0' : h - 'a' + 10)) & 0xff;
      }
      return static_cast<char>(v);
    }
    default:
      if (c >= '0' && c <= '7') {
        int v = c - '0';
        for (int k = 0; k < 2 && *i < s.size() && s[*i] >= '0' && s[*i] <= '7'; ++k)
          v = v * 8 + (s[(*i)++] - '0');
        return static_cast<char>(v);
      }
      return c;  // \\ \" \' \? and unknown escapes stand for themselves
  }
}

}  // namespace

bool ParseInteger(const std::string &spelling, int64_t *out) {
  std::string digits = spelling;
  while (!digits.empty() && std::strchr("uUlL", digits.back())) digits.pop_back();
  if (digits.empty() || !IsDigit(digits[0])) return false;
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(digits.c_str(), &end, 0);
  if (errno == ERANGE || *end != '\0' || v > static_cast<unsigned long long>(INT64_MAX))
    return false;
  *out = static_cast<int64_t>(v);
  return true;
}

Lexer::Lexer(std::string_view text, std::string file, Diagnostics *diag, SourceLines *originals)
    : text_(text), file_(std::move(file)), diag_(diag), originals_(originals) {}

char Lexer::Peek(std::size_t ahead) const {
  return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
}

int Lexer::Column(std::size_t offset) {
  int col = static_cast<int>(offset - line_start_);
  if (!originals_) return col;
  if (colmap_line_start_ != line_start_) {
    colmap_line_start_ = line_start_;
    colmap_.clear();
    std::size_t end = text_.find('\n', line_start_);
    if (end == std::string_view::npos) end = text_.size();
    if (const std::string *orig = originals_->Line(file_, line_))
      colmap_ = AlignColumns(text_.substr(line_start_, end - line_start_), *orig);
  }
  if (static_cast<std::size_t>(col) < colmap_.size()) return colmap_[static_cast<std::size_t>(col)];
  return col;
}

Location Lexer::Loc(std::size_t offset) {
  return Location{file_, line_, Column(offset) + 1, offset};
}

void Lexer::NewLine() {
  ++pos_;
  ++line_;
  line_start_ = pos_;
  bol_ = true;
}

void Lexer::SkipLineComment() {
  while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
}

void Lexer::SkipBlockComment() {
  Location start = Loc(pos_);
  pos_ += 2;
  while (pos_ < text_.size()) {
    if (text_[pos_] == '*' && Peek(1) == '/') {
      pos_ += 2;
      return;
    }
    if (text_[pos_] == '\n')
      NewLine();
    else
      ++pos_;
  }
  diag_->Error(start, "unterminated comment");
}

void Lexer::SkipQuoted(char quote) {
  ++pos_;
  while (pos_ < text_.size() && text_[pos_] != '\n') {
    char c = text_[pos_++];
    if (c == '\\' && pos_ < text_.size() && text_[pos_] != '\n')
      ++pos_;
    else if (c == quote)
      return;
  }
}

// Handles a line starting with '#'. cpp's line markers (`# N "file" flags`
// and `#line N "file"`) set the position of the next line; #pragma and
// #ident are left for the C compiler. Any other directive outside a C block
// means the input did not go through cpp.
void Lexer::Directive(bool in_block) {
  Location at = Loc(pos_);
  std::size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  std::string_view line = text_.substr(pos_ + 1, end - pos_ - 1);
  std::size_t i = 0;
  auto blanks = [&] {
    while (i < line.size() && IsBlank(line[i])) ++i;
  };
  blanks();
  std::size_t word_start = i;
  while (i < line.size() && IsIdentChar(line[i])) ++i;
  std::string word(line.substr(word_start, i - word_start));
  if (word == "line") {
    blanks();
    word_start = i;
    while (i < line.size() && IsIdentChar(line[i])) ++i;
    word = std::string(line.substr(word_start, i - word_start));
  }
  bool marker = !word.empty() && std::all_of(word.begin(), word.end(), IsDigit);
  std::string name = file_;
  if (marker) {
    blanks();
    if (i < line.size() && line[i] == '"') {
      name.clear();
      for (++i; i < line.size() && line[i] != '"';) {
        if (line[i] == '\\' && i + 1 < line.size()) {
          ++i;
          name += DecodeEscape(line, &i);
        } else {
          name += line[i++];
        }
      }
    }
  } else if (!in_block && !word.empty() && word != "pragma" && word != "ident") {
    diag_->Error(at, "unexpected preprocessor directive '#" + word +
                         "' (the input must go through cpp first)");
  }
  pos_ = end;
  if (!marker || pos_ >= text_.size()) return;
  NewLine();
  line_ = static_cast<int>(std::strtol(word.c_str(), nullptr, 10));
  file_ = name;
  // cpp's pseudo-files ("<built-in>", "<command-line>") are not inputs.
  bool pseudo = name.empty() || name.front() == '<';
  if (!pseudo && std::find(files_.begin(), files_.end(), name) == files_.end())
    files_.push_back(name);
}

void Lexer::SkipSpace() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '\n') {
      NewLine();
    } else if (IsBlank(c)) {
      ++pos_;
    } else if (c == '/' && Peek(1) == '/') {
      SkipLineComment();
    } else if (c == '/' && Peek(1) == '*') {
      SkipBlockComment();
    } else if (c == '#' && bol_) {
      Directive(false);
    } else {
      return;
    }
  }
}

Token Lexer::ReadString(Location loc) {
  Token t{TokenKind::kString, "", loc};
  ++pos_;
  while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') {
    if (text_[pos_] == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] != '\n') {
      ++pos_;
      t.text += DecodeEscape(text_, &pos_);
    } else {
      t.text += text_[pos_++];
    }
  }
  if (pos_ < text_.size() && text_[pos_] == '"')
    ++pos_;
  else
    diag_->Error(loc, "missing terminating '\"' character");
  return t;
}

Token Lexer::ReadPunct(Location loc) {
  static const char *const kTwo[] = {"<=", ">=", "==", "!=", "&&", "||",
                                     "->", "++", "--", "<<", ">>", "::"};
  for (const char *two : kTwo) {
    if (text_.compare(pos_, 2, two) == 0) {
      pos_ += 2;
      return Token{TokenKind::kPunct, two, loc};
    }
  }
  char c = text_[pos_++];
  bool punct = std::strchr("()[]{},;*+-/%^!<>?:=&|~.#", c) != nullptr;
  return Token{punct ? TokenKind::kPunct : TokenKind::kOther, std::string(1, c), loc};
}

bool ParseCharLiteral(const std::string &spelling, int64_t *out) {
  if (spelling.size() < 3 || spelling.front() != '\'' || spelling.back() != '\'') return false;
  const std::string_view body(spelling.data() + 1, spelling.size() - 2);
  std::size_t i = 0;
  char c = body[i++];
  if (c == '\\') {
    if (i >= body.size()) return false;
    c = DecodeEscape(body, &i);
  }
  if (i != body.size()) return false;  // 'ab': a multi-character constant
  *out = static_cast<signed char>(c);
  return true;
}

Token Lexer::Next() {
  // The end of input is reported where the last token ended, as "expected
  // ';'" is about that token, not about the empty line after it.
  Location previous_end = Loc(pos_);
  SkipSpace();
  if (pos_ >= text_.size()) return Token{TokenKind::kEnd, "", previous_end};
  Location loc = Loc(pos_);
  bol_ = false;
  std::size_t start = pos_;
  char c = text_[pos_];
  if (IsIdentStart(c)) {
    while (pos_ < text_.size() && IsIdentChar(text_[pos_])) ++pos_;
    return Token{TokenKind::kIdent, std::string(text_.substr(start, pos_ - start)), loc};
  }
  if (IsDigit(c) || (c == '.' && IsDigit(Peek(1)))) {
    // A preprocessing number: digits, letters, '.', and signs after an exponent.
    while (pos_ < text_.size()) {
      char d = text_[pos_];
      if (IsIdentChar(d) || d == '.') {
        ++pos_;
      } else if ((d == '+' || d == '-') && std::strchr("eEpP", text_[pos_ - 1])) {
        ++pos_;
      } else {
        break;
      }
    }
    return Token{TokenKind::kNumber, std::string(text_.substr(start, pos_ - start)), loc};
  }
  if (c == '"') return ReadString(loc);
  if (c == '\'') {
    SkipQuoted('\'');
    return Token{TokenKind::kChar, std::string(text_.substr(start, pos_ - start)), loc};
  }
  return ReadPunct(loc);
}

bool Lexer::CaptureBlock(const Location &open, RawText *out) {
  out->loc = Loc(pos_);
  std::size_t start = pos_;
  int depth = 1;
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '\n') {
      NewLine();
      continue;
    }
    if (c == '#' && bol_) {
      Directive(true);
      continue;
    }
    if (IsBlank(c)) {
      ++pos_;
      continue;
    }
    bol_ = false;
    if (c == '/' && Peek(1) == '/') {
      SkipLineComment();
    } else if (c == '/' && Peek(1) == '*') {
      SkipBlockComment();
    } else if (c == '"' || c == '\'') {
      SkipQuoted(c);
    } else if (c == '{') {
      ++depth;
      ++pos_;
    } else if (c == '}' && --depth == 0) {
      out->text = std::string(text_.substr(start, pos_ - start));
      ++pos_;
      return true;
    } else {
      ++pos_;
    }
  }
  diag_->Error(open, "no '}' matches this '{'");
  return false;
}

}  // namespace ninf::idl
