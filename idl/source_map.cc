#include "idl/source_map.h"

#include <fstream>

namespace ninf::idl {
namespace {

// Skips blanks and comments of an original line from column j.
// False when a block comment does not end on this line.
bool SkipGap(std::string_view s, std::size_t *j) {
  while (*j < s.size()) {
    if (IsBlank(s[*j])) {
      ++*j;
    } else if (s.compare(*j, 2, "/*") == 0) {
      std::size_t end = s.find("*/", *j + 2);
      if (end == std::string_view::npos) return false;
      *j = end + 2;
    } else if (s.compare(*j, 2, "//") == 0) {
      *j = s.size();
    } else {
      break;
    }
  }
  return true;
}

bool StartsGap(std::string_view s, std::size_t j) {
  return j < s.size() &&
         (IsBlank(s[j]) || s.compare(j, 2, "/*") == 0 || s.compare(j, 2, "//") == 0);
}

}  // namespace

std::vector<int> AlignColumns(std::string_view pre, std::string_view orig) {
  std::vector<int> map(pre.size() + 1);
  std::size_t i = 0, j = 0;
  while (i < pre.size()) {
    char c = pre[i];
    if (IsBlank(c)) {
      // One blank of cpp stands for a run of blanks and comments, or was
      // inserted by cpp where the original had none.
      map[i++] = static_cast<int>(j);
      if (StartsGap(orig, j) && !SkipGap(orig, &j)) return {};
      continue;
    }
    if (StartsGap(orig, j)) {
      if (!SkipGap(orig, &j)) return {};
      continue;
    }
    if (j >= orig.size() || orig[j] != c) return {};
    map[i++] = static_cast<int>(j++);
    if (c == '"' || c == '\'') {
      // Literals pass through cpp unchanged, blanks included.
      while (i < pre.size() && j < orig.size() && pre[i] == orig[j]) {
        char d = pre[i];
        map[i++] = static_cast<int>(j++);
        if (d == '\\' && i < pre.size() && j < orig.size() && pre[i] == orig[j]) {
          map[i++] = static_cast<int>(j++);
        } else if (d == c) {
          break;
        }
      }
    }
  }
  map[pre.size()] = static_cast<int>(j);
  return map;
}

const std::string *SourceLines::Line(const std::string &file, int line) {
  auto it = files_.find(file);
  if (it == files_.end()) {
    std::optional<std::vector<std::string>> lines;
    std::ifstream in(file, std::ios::binary);
    if (in) {
      lines.emplace();
      std::string l;
      while (std::getline(in, l)) lines->push_back(l);
    }
    it = files_.emplace(file, std::move(lines)).first;
  }
  if (!it->second || line < 1 || line > static_cast<int>(it->second->size())) return nullptr;
  return &(*it->second)[static_cast<std::size_t>(line - 1)];
}

}  // namespace ninf::idl
