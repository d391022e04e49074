// Keys of a daemon's named tables: the config file's [users.NAME] and
// [limits.NAME] (ninfd), one table per user or function. Each key is a row
// like a setting's (settings_table.h), with one more column: the daemon
// setting whose value it takes when its table leaves it out. A table is
// stored as the keys it gives, so inheritance is decided in one place
// (ResolveTable), at the time of asking: a [limits.NAME] table that only
// says who may call keeps the server's time limits, and a reload of the
// server's limit reaches every table that does not set its own.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "daemon/settings_table.h"
#include "protocol/status.h"

namespace ninf::daemon {

enum class TableKeyKind {
  kInteger,  // a TOML integer
  kBytes,    // an integer, or a string with a K/M/G/T suffix ("512M")
  kString,   // a non-empty string
  kNames,    // an array of strings
};

using TableValue = std::variant<int64_t, std::string, std::vector<std::string>>;
// One table as the file gives it: key -> value, only the keys it sets.
using NamedTable = std::map<std::string, TableValue, std::less<>>;
// Every table of one kind: NAME -> its keys.
using NamedTables = std::map<std::string, NamedTable, std::less<>>;

// One key; S is the daemon's settings struct, T what a table resolves to.
template <class S, class T>
struct TableKeyOf {
  const char *name;
  TableKeyKind kind;
  int64_t min;  // integer kinds
  int64_t max;
  // The row of S's table whose value the key takes when a table leaves it
  // out (nullptr: `fallback`). Its kind must hold the same type.
  const char *inherits;
  const char *fallback;  // the value when nothing is inherited ("": none)
  const char *help;
  std::variant<int64_t T::*, std::string T::*, std::vector<std::string> T::*> field;
  // Checks each string (kString) or entry (kNames); null: any.
  bool (*valid)(std::string_view) = nullptr;
  const char *valid_text = nullptr;  // what `valid` takes: "\"local\" or \"slurm\""
};

namespace table_detail {

// A key as the non-template reader sees it.
struct Key {
  const char *name;
  TableKeyKind kind;
  int64_t min;
  int64_t max;
  bool (*valid)(std::string_view);
  const char *valid_text;
  const char *help;
};

// Reads every [PREFIX.NAME] table of `tables` into *out; `check` (may be
// null) is asked about each whole table (ninfd: a user needs a key_file or
// a cert_subject). Errors (NINF_ERR_INVALID_ARGUMENT, "path:line: ...")
// name the key: "unknown key users.eve.colour (key_file, ...)".
using TableCheck = Status (*)(const std::string &where, const std::string &table,
                              const NamedTable &keys);
Status ReadTables(const std::string &path, std::string_view prefix, std::span<const Key> keys,
                  bool (*valid_name)(std::string_view), TableCheck check, const toml::table &tables,
                  NamedTables *out);

// The --help section of one kind of table.
std::string TablesHelp(std::string_view prefix, std::string_view what, std::span<const Key> keys,
                       std::span<const std::string> defaults);

}  // namespace table_detail

template <class S, class T>
std::vector<table_detail::Key> TableKeysOf(std::span<const TableKeyOf<S, T>> rows) {
  std::vector<table_detail::Key> keys;
  for (const TableKeyOf<S, T> &r : rows)
    keys.push_back({r.name, r.kind, r.min, r.max, r.valid, r.valid_text, r.help});
  return keys;
}

// Reads the [PREFIX.NAME] tables of a config file (the `extra` hook of
// ParseCommandLine calls it with the sub-table).
template <class S, class T>
Status ReadNamedTables(std::span<const TableKeyOf<S, T>> rows, const std::string &path,
                       std::string_view prefix, bool (*valid_name)(std::string_view),
                       table_detail::TableCheck check, const toml::table &tables,
                       NamedTables *out) {
  const std::vector<table_detail::Key> keys = TableKeysOf(rows);
  return table_detail::ReadTables(path, prefix, keys, valid_name, check, tables, out);
}

// The value of S's row named `name` in `settings`, if S has one of the
// type V.
template <class S, class V>
const V *SettingField(std::span<const SettingSpecOf<S>> table, const S &settings,
                      std::string_view name) {
  // A setting is an integer, a string or a flag: a list inherits nothing.
  if constexpr (std::is_same_v<V, int64_t> || std::is_same_v<V, std::string>) {
    for (const SettingSpecOf<S> &spec : table)
      if (name == spec.name)
        if (auto *f = std::get_if<V S::*>(&spec.field)) return &(settings.*(*f));
  }
  return nullptr;
}

// What a table with the keys `given` (null: no table) means: each key the
// table sets, else the server setting the key inherits, else its fallback.
template <class S, class T>
T ResolveTable(std::span<const TableKeyOf<S, T>> rows, std::span<const SettingSpecOf<S>> table,
               const S &settings, const NamedTable *given) {
  T out{};
  for (const TableKeyOf<S, T> &row : rows) {
    const TableValue *value = nullptr;
    if (given)
      if (auto it = given->find(row.name); it != given->end()) value = &it->second;
    std::visit(
        [&](auto field) {
          using V = std::remove_reference_t<decltype(out.*field)>;
          if (value) {
            if (const V *v = std::get_if<V>(value)) out.*field = *v;
          } else if (row.inherits) {
            if (const V *v = SettingField<S, V>(table, settings, row.inherits)) out.*field = *v;
          } else if constexpr (std::is_same_v<V, std::string>) {
            out.*field = row.fallback;
          } else if constexpr (std::is_same_v<V, int64_t>) {
            // "" (no fallback) or a number: never a throw at the time of asking.
            out.*field = std::strtoll(row.fallback, nullptr, 10);
          }
        },
        row.field);
  }
  return out;
}

// The --help section of one kind of table: each key, its type, what it
// takes when left out (the inherited setting or the fallback) and its help.
template <class S, class T>
std::string NamedTablesHelp(std::span<const TableKeyOf<S, T>> rows, std::string_view prefix,
                            std::string_view what) {
  std::vector<std::string> defaults;
  for (const TableKeyOf<S, T> &r : rows)
    defaults.push_back(r.inherits    ? std::string("the server's ") + r.inherits
                       : *r.fallback ? std::string(r.fallback)
                                     : std::string("none"));
  const std::vector<table_detail::Key> keys = TableKeysOf(rows);
  return table_detail::TablesHelp(prefix, what, keys, defaults);
}

}  // namespace ninf::daemon
