#include "protocol/near_miss.h"

#include <algorithm>

namespace ninf {

std::string NearMiss(std::string_view word, const std::vector<std::string> &names) {
  std::string best;
  std::size_t best_distance = 3;
  for (const std::string &name : names) {
    // Levenshtein distance, one row at a time.
    std::vector<std::size_t> row(name.size() + 1);
    for (std::size_t j = 0; j <= name.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= word.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= name.size(); ++j) {
        const std::size_t up = row[j];
        row[j] =
            std::min({row[j] + 1, row[j - 1] + 1, diagonal + (word[i - 1] == name[j - 1] ? 0 : 1)});
        diagonal = up;
      }
    }
    if (row[name.size()] < best_distance && 2 * row[name.size()] < word.size()) {
      best_distance = row[name.size()];
      best = name;
    }
  }
  return best;
}

}  // namespace ninf
