#include "idl/writer.h"

namespace ninf::idl {

void Writer::Raw(const std::string &s) {
  for (char c : s) lines_ += c == '\n';
  out_ += s;
}

void Writer::UserCode(const RawText &text, const std::string &prefix, const std::string &suffix,
                      const std::string &self) {
  Line("#line " + std::to_string(text.loc.line) + " " + Quote(text.loc.file));
  Raw(prefix + text.text + suffix);
  if (out_.back() != '\n') Raw("\n");
  // The directive sits on line lines_ + 1 and names the line after it.
  Line("#line " + std::to_string(lines_ + 2) + " " + Quote(self));
}

void Writer::Call(const std::string &indent, const std::string &head,
                  const std::vector<std::string> &args, const std::string &tail) {
  std::string joined;
  for (const std::string &a : args) joined += (joined.empty() ? "" : ", ") + a;
  std::string one = indent + head + "(" + joined + ")" + tail;
  if (one.size() <= kMaxLine || args.size() < 2) {
    Line(one);
    return;
  }
  Line(indent + head + "(");
  for (std::size_t i = 0; i < args.size(); ++i)
    Line(indent + "    " + args[i] + (i + 1 < args.size() ? "," : ")" + tail));
}

void Writer::Packed(const std::string &head, const std::vector<std::string> &items,
                    const std::string &tail, const std::string &continuation,
                    const std::string &line_end) {
  std::string line = head;
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string piece = items[i] + (i + 1 < items.size() ? ", " : tail);
    std::size_t room = kMaxLine - (i + 1 < items.size() ? line_end.size() : 0);
    if (line.size() + piece.size() > room && line.size() > continuation.size()) {
      while (line.back() == ' ') line.pop_back();
      Line(line + line_end);
      line = continuation;
    }
    line += piece;
  }
  Line(items.empty() ? line + tail : line);
}

std::string Writer::Quote(const std::string &s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

std::string CommentSafe(std::string s) {
  for (std::size_t at; (at = s.find("*/")) != std::string::npos;) s.replace(at, 2, "* /");
  return s;
}

void WrapComment(Writer &w, const std::string &text, const std::string &first,
                 const std::string &next) {
  std::string line = first;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t comma = text.find(", ", start);
    std::size_t end = comma == std::string::npos ? text.size() : comma + 2;
    std::string piece = text.substr(start, end - start);
    if (line.size() + piece.size() > kMaxLine && line.size() > next.size()) {
      while (line.back() == ' ') line.pop_back();
      w.Line(line);
      line = next;
    }
    line += piece;
    start = end;
  }
  w.Line(line);
}

}  // namespace ninf::idl
