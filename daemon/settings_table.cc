#include "daemon/settings_table.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "daemon/log.h"
#include "protocol/near_miss.h"

namespace ninf::daemon {
namespace {

const std::array<const char *, 7> kLevels = {"trace", "debug",    "info", "warn",
                                             "error", "critical", "off"};

Status Invalid(const std::string &source, const std::string &what) {
  return Status(NINF_ERR_INVALID_ARGUMENT, source + ": " + what);
}

std::optional<bool> ParseBool(std::string_view s) {
  if (s == "true" || s == "1" || s == "yes") return true;
  if (s == "false" || s == "0" || s == "no") return false;
  return std::nullopt;
}

std::optional<int64_t> ParseInteger(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// "2.5" -> 2500: a decimal number in thousandths, at most three decimals.
std::optional<int64_t> ParseThousandths(std::string_view s) {
  std::size_t dot = s.find('.');
  std::optional<int64_t> whole = ParseInteger(s.substr(0, dot));
  if (!whole || *whole < 0 || *whole > (int64_t{1} << 40)) return std::nullopt;
  int64_t fraction = 0;
  if (dot != std::string_view::npos) {
    std::string_view digits = s.substr(dot + 1);
    if (digits.empty() || digits.size() > 3) return std::nullopt;
    for (char c : digits)
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    std::string padded(digits);
    padded.resize(3, '0');
    fraction = *ParseInteger(padded);
  }
  return *whole * 1000 + fraction;
}

// "8G", "512MiB", "4096": a byte count with an optional binary suffix.
std::optional<int64_t> ParseBytes(std::string_view s) {
  std::size_t digits = 0;
  while (digits < s.size() &&
         (std::isdigit(static_cast<unsigned char>(s[digits])) || (digits == 0 && s[0] == '-')))
    ++digits;
  std::optional<int64_t> number = ParseInteger(s.substr(0, digits));
  if (!number) return std::nullopt;
  std::string suffix(s.substr(digits));
  for (char &c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.size() == 3 && suffix.substr(1) == "IB") suffix.resize(1);
  int shift = 0;
  if (suffix == "K")
    shift = 10;
  else if (suffix == "M")
    shift = 20;
  else if (suffix == "G")
    shift = 30;
  else if (suffix == "T")
    shift = 40;
  else if (!suffix.empty())
    return std::nullopt;
  if (*number > (INT64_MAX >> shift) || *number < (INT64_MIN >> shift)) return std::nullopt;
  return *number * (int64_t{1} << shift);
}

const char *KindNoun(SettingKind kind) {
  if (kind == SettingKind::kBytes) return "a byte count (e.g. 512M, 8G)";
  if (kind == SettingKind::kDecimal) return "a number (at most three decimals)";
  return "an integer";
}

std::string FormatBound(SettingKind kind, int64_t v) {
  if (kind != SettingKind::kDecimal) return std::to_string(v);
  std::string out = std::to_string(v / 1000);
  if (v % 1000) {
    char frac[8];
    std::snprintf(frac, sizeof frac, ".%03lld", static_cast<long long>(v % 1000));
    out += frac;
    while (out.back() == '0') out.pop_back();
  }
  return out;
}

// Joins a repeated flag's values as a kPathList stores them.
std::string JoinPathList(const std::vector<std::string> &entries) {
  std::string out;
  for (std::size_t i = 0; i < entries.size(); ++i) out += (i ? ":" : "") + entries[i];
  return out;
}

bool Integral(SettingKind kind) {
  return kind == SettingKind::kInteger || kind == SettingKind::kBytes ||
         kind == SettingKind::kDecimal;
}

// Reads the TOML file into raw strings per row; unknown keys are errors so
// that a typo does not silently fall back to a default.
// A value read from a file, and where: "path:line".
struct FileValue {
  std::string raw;
  std::string where;
};

// The file's text, read here rather than by toml::parse_file, whose error
// for a file it cannot open has no cause and no position
// ("path:0:0: File could not be opened for reading"): this one says why
// (strerror), the way every file error of the daemons does.
Status ReadWholeFile(const std::string &path, std::string *out) {
  std::FILE *f = std::fopen(path.c_str(), "rbe");
  if (!f)
    return Invalid(path, std::string("cannot open the settings file: ") + std::strerror(errno));
  out->clear();
  char buf[8192];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    out->append(buf, n);
    // A settings file is a few KiB; a bound keeps a config path pointed at
    // /dev/zero or a huge file from eating memory.
    if (out->size() > (std::size_t{16} << 20)) {
      std::fclose(f);
      return Invalid(path, "the settings file is larger than 16 MiB");
    }
  }
  const int error = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (error)  // a folder: EISDIR
    return Invalid(path, std::string("cannot read the settings file: ") + std::strerror(error));
  return Status::Ok();
}

Status ReadConfigFile(const std::string &path, std::span<const settings_detail::Row> rows,
                      const ExtraTableFn &extra, std::vector<std::optional<FileValue>> *raw) {
  std::string text;
  NINF_RETURN_IF_ERROR(ReadWholeFile(path, &text));
  toml::table table;
  try {
    table = toml::parse(text, path);
  } catch (const toml::parse_error &e) {
    return Invalid(path + ":" + std::to_string(e.source().begin.line) + ":" +
                       std::to_string(e.source().begin.column),
                   std::string(e.description()));
  }
  for (auto &&[key, node] : table) {
    std::string where = path + ":" + std::to_string(node.source().begin.line);
    if (extra && node.is_table()) {
      bool handled = false;
      NINF_RETURN_IF_ERROR(extra(path, key.str(), *node.as_table(), &handled));
      if (handled) continue;
    }
    const std::string_view name = key.str();  // (clang cannot capture a structured binding)
    auto row = std::find_if(rows.begin(), rows.end(),
                            [name](const settings_detail::Row &r) { return name == r.name; });
    if (row == rows.end()) {
      std::vector<std::string> names;
      for (const settings_detail::Row &r : rows) names.emplace_back(r.name);
      const std::string near = NearMiss(name, names);
      return Invalid(where, "unknown setting '" + std::string(name) + "'" +
                                (near.empty() ? "" : " (did you mean '" + near + "'?)"));
    }
    std::size_t index = static_cast<std::size_t>(row - rows.begin());
    if (const toml::array *list = node.as_array(); list && row->kind == SettingKind::kPathList) {
      std::vector<std::string> entries;
      for (const toml::node &item : *list) {
        std::optional<std::string> entry = item.value_exact<std::string>();
        if (!entry)
          return Invalid(where, std::string("'") + row->name + "' must list strings (paths)");
        // ':' is what separates the entries once joined (and in NINF_*).
        if (entry->find(':') != std::string::npos)
          return Invalid(where, std::string("'") + row->name + "' entry '" + *entry +
                                    "' contains ':', which separates the entries of a list");
        entries.push_back(std::move(*entry));
      }
      // An empty array is the default, as an unset key is.
      (*raw)[index] = entries.empty()
                          ? std::nullopt
                          : std::optional<FileValue>(FileValue{JoinPathList(entries), where});
    } else if (auto s = node.value_exact<std::string>(); s && row->kind != SettingKind::kBool)
      (*raw)[index] = FileValue{*s, where};
    else if (auto b = node.value_exact<bool>(); b && row->kind == SettingKind::kBool)
      (*raw)[index] = FileValue{*b ? "true" : "false", where};
    else if (auto i = node.value_exact<int64_t>(); i && Integral(row->kind))
      (*raw)[index] = FileValue{std::to_string(*i), where};
    else if (auto d = node.value_exact<double>(); d && row->kind == SettingKind::kDecimal) {
      char text[64];
      std::snprintf(text, sizeof text, "%.3f", *d);
      (*raw)[index] = FileValue{text, where};
    } else {
      return Invalid(where,
                     std::string("'") + row->name + "' must be " +
                         (row->kind == SettingKind::kDecimal    ? "a number"
                          : Integral(row->kind)                 ? "an integer"
                          : row->kind == SettingKind::kBool     ? "true or false"
                          : row->kind == SettingKind::kPathList ? "a string or an array of strings"
                                                                : "a string"));
    }
  }
  return Status::Ok();
}

const char *TypeName(SettingKind kind) {
  switch (kind) {
    case SettingKind::kInteger:
      return "INT";
    case SettingKind::kBytes:
      return "BYTES";
    case SettingKind::kLogLevel:
      return "LEVEL";
    case SettingKind::kDecimal:
      return "NUMBER";
    case SettingKind::kPathList:
      return "PATH";
    case SettingKind::kString:
    case SettingKind::kBool:
      return "TEXT";
  }
  return "TEXT";
}

}  // namespace

std::vector<std::string> SplitPathList(std::string_view joined) {
  std::vector<std::string> entries;
  if (joined.empty()) return entries;
  for (std::size_t start = 0;;) {
    std::size_t colon = joined.find(':', start);
    entries.emplace_back(joined.substr(start, colon - start));
    if (colon == std::string_view::npos) return entries;
    start = colon + 1;
  }
}

Status ParseSettingValue(SettingKind kind, const char *name, int64_t min, int64_t max,
                         const std::string &raw, const std::string &source, SettingValue *out) {
  const std::string given = std::string(name) + " = '" + raw + "'";
  if (kind == SettingKind::kPathList) {
    const std::vector<std::string> entries = SplitPathList(raw);
    // "A::B" or a trailing ':' is a typo far more often than a wish for
    // the current folder (which "." says plainly).
    if (std::any_of(entries.begin(), entries.end(), [](const std::string &e) { return e.empty(); }))
      return Invalid(source, given + " has an empty entry: separate the paths with one ':'");
    if (static_cast<int64_t>(entries.size()) > max)
      return Invalid(source, given + " lists " + std::to_string(entries.size()) +
                                 " paths, more than the " + std::to_string(max) + " allowed");
    *out = raw;
    return Status::Ok();
  }
  if (kind == SettingKind::kBool) {
    std::optional<bool> value = ParseBool(raw);
    if (!value) return Invalid(source, given + " is not true or false (nor yes/no, 1/0)");
    *out = *value;
    return Status::Ok();
  }
  if (kind == SettingKind::kString || kind == SettingKind::kLogLevel) {
    if (kind == SettingKind::kLogLevel &&
        std::find(kLevels.begin(), kLevels.end(), raw) == kLevels.end())
      return Invalid(source, given +
                                 " is not a log level: give trace, debug, info, warn, error, "
                                 "critical or off");
    *out = raw;
    return Status::Ok();
  }
  std::optional<int64_t> value = kind == SettingKind::kBytes     ? ParseBytes(raw)
                                 : kind == SettingKind::kDecimal ? ParseThousandths(raw)
                                                                 : ParseInteger(raw);
  if (!value)
    return Invalid(source, given + " is not " + KindNoun(kind) + ": give one in [" +
                               FormatBound(kind, min) + ", " + FormatBound(kind, max) + "]");
  if (*value < min || *value > max)
    return Invalid(source, std::string(name) + " = " + raw + " is outside [" +
                               FormatBound(kind, min) + ", " + FormatBound(kind, max) + "]");
  *out = *value;
  return Status::Ok();
}

std::string SettingEnvName(const char *name, std::string_view prefix) {
  std::string out(prefix);
  for (const char *p = name; *p; ++p)
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(*p)));
  return out;
}

std::string SettingFlagName(const char *name) {
  std::string out = std::string("--") + name;
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

std::string ForeignVariableWarning(const ForeignVariable &variable, std::string_view daemon) {
  return std::string(variable.name) + " is " + variable.whose + " variable and is not read by " +
         std::string(daemon) + ", which reads " + variable.ours;
}

namespace {

// "unknown option --prot (did you mean --port?)" for each flag `app` does
// not know; CLI11's own message when none is a flag.
std::string UnknownFlags(const CLI::App &app, int argc, const char *const *argv,
                         const std::string &fallback) {
  std::vector<std::string> known;
  for (const CLI::Option *opt : app.get_options())
    for (const std::string &n : opt->get_lnames()) known.push_back("--" + n);
  std::string out;
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word.rfind("--", 0) != 0 || word.size() == 2) continue;
    word = word.substr(0, word.find('='));
    if (std::find(known.begin(), known.end(), word) != known.end()) continue;
    const std::string near = NearMiss(word, known);
    if (!out.empty()) out += "; ";
    out += "unknown option " + word + (near.empty() ? "" : " (did you mean " + near + "?)");
  }
  return out.empty() ? fallback : out;
}

// Adds to cl->ignored_variables the foreign variables standing for `ours`
// that are set: called only where `ours` and its flag give no value, so
// each of these would have been the value had the daemon read it.
void NoteIgnored(const EnvLookup &env, const std::string &ours, CommandLine *cl) {
  for (const ForeignVariable &v : cl->foreign_variables)
    if (ours == v.ours && env(v.name)) cl->ignored_variables.push_back(v);
}

// The --help lines of the foreign variables, one each, in a form
// scripts/check_settings_docs.py reads:
// "  NINF_KEY_FILE (ninfd's and the client's) -> NINF_META_KEY_FILE".
std::string ForeignVariablesHelp(const CommandLine &cl) {
  std::string out = "Other programs' variables, not read by " + cl.daemon +
                    " (one set while its own is not gets a warning at start):\n";
  for (const ForeignVariable &v : cl.foreign_variables)
    out += std::string("  ") + v.name + " (" + v.whose + ") -> " + v.ours + "\n";
  return out;
}

// Every foreign variable must stand for one of the daemon's own: else it
// would never be noticed, and its warning never given.
Status CheckForeignTable(std::span<const settings_detail::Row> rows, const CommandLine &cl,
                         const std::string &config_env) {
  for (const ForeignVariable &v : cl.foreign_variables) {
    bool known = config_env == v.ours;
    for (const settings_detail::Row &row : rows)
      known = known || SettingEnvName(row.name, cl.env_prefix) == v.ours;
    if (!known)
      return Status(NINF_ERR_INTERNAL,
                    std::string("the table of other programs' variables pairs ") + v.name +
                        " with " + v.ours + ", which " + cl.daemon + " does not read");
  }
  return Status::Ok();
}

}  // namespace

namespace settings_detail {

Status Resolve(CLI::App &app, std::span<const Row> rows, int argc, const char *const *argv,
               const EnvLookup &env, const ExtraTableFn &extra, CommandLine *cl,
               std::vector<std::pair<std::string, std::string>> *values) {
  const std::size_t n = rows.size();
  std::vector<std::string> flag_values(n);
  std::vector<std::vector<std::string>> flag_lists(n);  // kPathList rows
  std::vector<CLI::Option *> flag_options(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Row &row = rows[i];
    std::string help = std::string(row.help) + " [" + SettingEnvName(row.name, cl->env_prefix) +
                       ", default " + (*row.default_value ? row.default_value : "\"\"") +
                       (row.reload == Reload::kLive ? ", reloads on SIGHUP]" : "]");
    if (row.kind == SettingKind::kBool)  // --insecure alone means true
      flag_options[i] = app.add_flag(SettingFlagName(row.name) + "{true}", flag_values[i], help);
    else if (row.kind == SettingKind::kPathList)  // repeated, one value each time
      flag_options[i] = app.add_option(SettingFlagName(row.name), flag_lists[i], help)
                            ->allow_extra_args(false)
                            ->type_name(TypeName(row.kind));
    else
      flag_options[i] = app.add_option(SettingFlagName(row.name), flag_values[i], help)
                            ->type_name(TypeName(row.kind));
  }
  const std::string config_env = cl->env_prefix + "CONFIG";
  NINF_RETURN_IF_ERROR(CheckForeignTable(rows, *cl, config_env));
  cl->ignored_variables.clear();
  // After what the daemon put there (ninf-meta: its named tables).
  if (!cl->foreign_variables.empty()) {
    const std::string before = app.get_footer();
    app.footer(before + (before.empty() ? "" : "\n") + ForeignVariablesHelp(*cl));
  }
  std::string config_help = "TOML settings file [" + config_env;
  config_help += cl->default_config_file.empty()
                     ? "]"
                     : ", default " + cl->default_config_file + " if it exists]";
  app.add_option("--config", cl->config_file, config_help)->type_name("FILE");
  bool version = false;
  app.add_flag("--version", version, "print the version and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &) {
    cl->exit_now = true;
    cl->output = app.help();
    return Status::Ok();
  } catch (const CLI::ExtrasError &e) {
    return Status(NINF_ERR_INVALID_ARGUMENT, UnknownFlags(app, argc, argv, e.what()));
  } catch (const CLI::ParseError &e) {
    return Status(NINF_ERR_INVALID_ARGUMENT, e.what());
  }
  if (version) {
    cl->exit_now = true;
    cl->output = cl->version_text;
    return Status::Ok();
  }
  if (cl->config_file.empty() && env(config_env.c_str())) cl->config_file = env(config_env.c_str());
  if (cl->config_file.empty()) NoteIgnored(env, config_env, cl);
  std::error_code ec;
  if (cl->config_file.empty() && !cl->default_config_file.empty() &&
      std::filesystem::exists(cl->default_config_file, ec))
    cl->config_file = cl->default_config_file;

  std::vector<std::optional<FileValue>> file_values(n);
  if (!cl->config_file.empty())
    NINF_RETURN_IF_ERROR(ReadConfigFile(cl->config_file, rows, extra, &file_values));
  values->clear();
  for (std::size_t i = 0; i < n; ++i) {
    std::string env_name = SettingEnvName(rows[i].name, cl->env_prefix);
    if (flag_options[i]->count() > 0)
      values->emplace_back(
          rows[i].kind == SettingKind::kPathList ? JoinPathList(flag_lists[i]) : flag_values[i],
          SettingFlagName(rows[i].name));
    else if (const char *e = env(env_name.c_str()))
      values->emplace_back(e, env_name);
    else {
      // Here, and only here, another program's variable would have decided.
      NoteIgnored(env, env_name, cl);
      if (file_values[i])
        values->emplace_back(file_values[i]->raw, file_values[i]->where);
      else
        values->emplace_back(rows[i].default_value, "default");
    }
  }
  return Status::Ok();
}

}  // namespace settings_detail
void LogReload(std::string_view daemon, const std::vector<std::string> &applied,
               const std::vector<std::string> &restart) {
  auto joined = [](const std::vector<std::string> &keys) {
    std::string out;
    for (const std::string &k : keys) out += (out.empty() ? "" : ",") + k;
    return out.empty() ? std::string("-") : out;
  };
  spdlog::info("event=settings_reloaded applied={}", Quoted(joined(applied)));
  if (!restart.empty())
    spdlog::warn("event=settings_need_restart keys={} message={}", Quoted(joined(restart)),
                 Quoted("these keys changed but keep their running values until " +
                        std::string(daemon) + " restarts"));
}

ReloadKeys SplitReloadKeys(const std::vector<std::string> &changed,
                           const std::function<bool(std::string_view key)> &applies_live) {
  ReloadKeys keys;
  for (const std::string &key : changed)
    (applies_live(key) ? keys.applied : keys.restart).push_back(key);
  return keys;
}

void FinishReload(std::string_view daemon, const std::string &log_level, const ReloadKeys &keys) {
  // The level was checked when it was read; an unknown name (spdlog's
  // from_str gives `off`) would silence the daemon, so it is not applied.
  if (auto level = spdlog::level::from_str(log_level);
      level != spdlog::level::off || log_level == "off")
    spdlog::set_level(level);
  LogReload(daemon, keys.applied, keys.restart);
}

void LogRereadFailed(const Status &st) {
  spdlog::error("event=reload_failed settings=config error={}", Quoted(st.message()));
}

}  // namespace ninf::daemon
