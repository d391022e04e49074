#include "daemon/table_settings.h"

#include <optional>

namespace ninf::daemon::table_detail {
namespace {

Status BadKey(const std::string &where, const std::string &what) {
  return Status(NINF_ERR_INVALID_ARGUMENT, where + ": " + what);
}

std::string KeyList(std::span<const Key> keys) {
  std::string out;
  for (const Key &k : keys) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

std::string IntegerRange(const Key &key) {
  if (key.max >= (int64_t{1} << 61)) return " must be an integer >= " + std::to_string(key.min);
  return " must be an integer in [" + std::to_string(key.min) + ", " + std::to_string(key.max) +
         "]";
}

Status ReadInteger(const std::string &where, const std::string &what, const Key &key,
                   const toml::node &node, TableValue *out) {
  if (std::optional<std::string> text = node.value_exact<std::string>();
      text && key.kind == TableKeyKind::kBytes) {
    SettingValue parsed;
    NINF_RETURN_IF_ERROR(ParseSettingValue(SettingKind::kBytes, what.c_str(), key.min, key.max,
                                           *text, where, &parsed));
    *out = std::get<int64_t>(parsed);
    return Status::Ok();
  }
  std::optional<int64_t> v = node.value_exact<int64_t>();
  if (!v || *v < key.min || *v > key.max) return BadKey(where, what + IntegerRange(key));
  *out = *v;
  return Status::Ok();
}

Status ReadString(const std::string &where, const std::string &what, const Key &key,
                  const toml::node &node, TableValue *out) {
  std::optional<std::string> text = node.value_exact<std::string>();
  if (!text || text->empty() || (key.valid && !key.valid(*text)))
    return BadKey(where,
                  what + " must be " + (key.valid_text ? key.valid_text : "a non-empty string"));
  *out = *text;
  return Status::Ok();
}

Status ReadNames(const std::string &where, const std::string &what, const Key &key,
                 const toml::node &node, TableValue *out) {
  const char *names = key.valid_text ? key.valid_text : "names";
  const toml::array *list = node.as_array();
  if (!list) return BadKey(where, what + " must be an array of " + names);
  std::vector<std::string> entries;
  for (const toml::node &item : *list) {
    std::optional<std::string> entry = item.value_exact<std::string>();
    if (!entry || (key.valid && !key.valid(*entry)))
      return BadKey(where, what + " entries are " + names);
    entries.push_back(std::move(*entry));
  }
  *out = std::move(entries);
  return Status::Ok();
}

Status ReadKey(const std::string &where, const std::string &what, const Key &key,
               const toml::node &node, TableValue *out) {
  switch (key.kind) {
    case TableKeyKind::kInteger:
    case TableKeyKind::kBytes:
      return ReadInteger(where, what, key, node, out);
    case TableKeyKind::kString:
      return ReadString(where, what, key, node, out);
    case TableKeyKind::kNames:
      return ReadNames(where, what, key, node, out);
  }
  return BadKey(where, what + ": a key of no known kind");
}

Status ReadOneTable(const std::string &where, const std::string &table, std::span<const Key> keys,
                    const toml::table &t, NamedTable *out) {
  for (auto &&[name, node] : t) {
    const std::string_view key_name = name.str();
    const Key *key = nullptr;
    for (const Key &k : keys)
      if (key_name == k.name) key = &k;
    const std::string what = table + "." + std::string(key_name);
    if (!key) return BadKey(where, "unknown key " + what + " (" + KeyList(keys) + ")");
    NINF_RETURN_IF_ERROR(ReadKey(where, what, *key, node, &(*out)[std::string(key_name)]));
  }
  return Status::Ok();
}

const char *TypeWord(TableKeyKind kind) {
  switch (kind) {
    case TableKeyKind::kInteger:
      return "INT";
    case TableKeyKind::kBytes:
      return "BYTES";
    case TableKeyKind::kString:
      return "TEXT";
    case TableKeyKind::kNames:
      return "LIST";
  }
  return "TEXT";
}

}  // namespace

Status ReadTables(const std::string &path, std::string_view prefix, std::span<const Key> keys,
                  bool (*valid_name)(std::string_view), TableCheck check, const toml::table &tables,
                  NamedTables *out) {
  for (auto &&[name, node] : tables) {
    const std::string where = path + ":" + std::to_string(node.source().begin.line);
    const std::string table = std::string(prefix) + "." + std::string(name.str());
    const toml::table *t = node.as_table();
    if (!t) return BadKey(where, table + " must be a table");
    if (valid_name && !valid_name(name.str()))
      return BadKey(where, table + ": a name is letters, digits, '_', '-', '.'");
    NamedTable keys_given;
    NINF_RETURN_IF_ERROR(ReadOneTable(where, table, keys, *t, &keys_given));
    if (check) NINF_RETURN_IF_ERROR(check(where, table, keys_given));
    (*out)[std::string(name.str())] = std::move(keys_given);
  }
  return Status::Ok();
}

std::string TablesHelp(std::string_view prefix, std::string_view what, std::span<const Key> keys,
                       std::span<const std::string> defaults) {
  std::string out = "[" + std::string(prefix) + ".NAME] tables of the config file, " +
                    std::string(what) + " (reload on SIGHUP):\n";
  for (std::size_t i = 0; i < keys.size(); ++i)
    out += "  " + std::string(prefix) + ".NAME." + keys[i].name + " " + TypeWord(keys[i].kind) +
           "  " + keys[i].help + " [left out: " + defaults[i] + "]\n";
  return out;
}

}  // namespace ninf::daemon::table_detail
