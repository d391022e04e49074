#include "client/arguments.h"

#include <cstdint>
#include <optional>

namespace ninf::client {
ninf_argkind ArgKindOf(const wire::Param &p) {
  if (IsArray(p)) return NINF_ARGKIND_POINTER;
  const ninf_type_info *info = ninf_type_info_of(p.type());
  return info ? info->vararg : NINF_ARGKIND_POINTER;  // ValidateInterface refused unknown types
}

std::vector<ninf_argvalue> CollectVarargs(const wire::FunctionInterface &iface, va_list *ap) {
  const int n = iface.params_size();
  std::vector<ninf_argkind> kinds(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) kinds[i] = ArgKindOf(iface.params(i));
  std::vector<ninf_argvalue> values(static_cast<std::size_t>(n));
  ninf__collect_args(kinds.data(), n, ap, values.data());
  return values;
}

namespace {

// " The call is dgeev(IN char jobvl, ...)": what the caller should compare
// its argument list with.
std::string CallIs(const wire::FunctionInterface &iface) {
  return " The call is " + Signature(iface) + ".";
}

std::string ArgumentAt(const wire::FunctionInterface &iface, int i) {
  return "argument " + std::to_string(i + 1) + " of " + iface.name() + " ('" +
         iface.params(i).name() + "')";
}

// An integer IN scalar that its C type cannot hold is what C varargs make
// of a mistake: a string "N" where a char 'N' goes arrives as a pointer's
// low bits. chars and shorts are accepted signed or unsigned, as C code
// passes either.
Status CheckIntegerFits(const wire::FunctionInterface &iface, int i, long long value) {
  const ninf_type_info *info = ninf_type_info_of(iface.params(i).type());
  if (!info || info->cls != NINF_CLASS_INTEGER || info->element_size >= 8) return Status::Ok();
  const int bits = 8 * static_cast<int>(info->element_size);
  const long long lo = -(1LL << (bits - 1)), hi = (1LL << bits) - 1;
  if (value >= lo && value <= hi) return Status::Ok();
  const std::string cause = info->element_size == 1
                                ? "was a string (\"N\") passed where a character ('N') goes?"
                                : "was an argument of another type passed here, or one left out "
                                  "before it?";
  return Status(NINF_ERR_ARGUMENT_MISMATCH, ArgumentAt(iface, i) + " = " + std::to_string(value) +
                                                " does not fit a " + info->name + ": " + cause +
                                                CallIs(iface));
}

// No string or array lives in the first page of the address space (Linux
// never maps page zero), so a pointer below this is not one: it is what C
// varargs make of a character ('V', promoted to int) or a small integer
// passed where the IDL says `IN string`, or of an integer passed where a
// double goes (1 for 1.0: the double is read from another register, and
// the integer lands on the next pointer). Reading through it would crash
// the caller in strlen or in copying the array.
constexpr std::uintptr_t kLowestUserAddress = 4096;
// Above every user-space address of 64-bit Linux (57-bit addresses
// included): a negative integer passed where a string goes.
constexpr std::uint64_t kHighestUserAddress = (std::uint64_t{1} << 56) - 1;

// A negative char ('\xe9' in Latin-1) promoted to int, as it arrives in a
// 64-bit register: 0xffffff80 ... 0xffffffff. Nothing maps the last 128
// bytes below 4 GiB for a string in practice.
bool IsNegativeChar(std::uint64_t bits) {
  return sizeof(void *) == 8 && bits >= 0xffffff80u && bits <= 0xffffffffu;
}

// Whether a pointer argument's bits can be an address at all.
bool MayBeAddress(std::uintptr_t bits) {
  return bits >= kLowestUserAddress && static_cast<std::uint64_t>(bits) <= kHighestUserAddress &&
         !IsNegativeChar(bits);
}

// The integer C varargs made of a negative value passed where a pointer
// goes: as an int (upper half zero) or sign-extended, which compilers
// choose. nullopt for bits that are not negative that way.
std::optional<std::int64_t> AsNegative(std::uintptr_t bits) {
  if (IsNegativeChar(bits)) return static_cast<std::int32_t>(bits);
  if (static_cast<std::uint64_t>(bits) > kHighestUserAddress)
    return static_cast<std::int64_t>(bits);
  return std::nullopt;
}

// An IN string argument as C varargs delivered it: NULL, small integers and
// negative values are refused, naming the argument and what to pass instead.
Status CheckStringPointer(const wire::FunctionInterface &iface, int i, const char *s) {
  const auto bits = reinterpret_cast<std::uintptr_t>(s);
  if (MayBeAddress(bits)) return Status::Ok();
  if (!s)
    return Status(NINF_ERR_INVALID_ARGUMENT, ArgumentAt(iface, i) +
                                                 " is a NULL string: pass a string, such as "
                                                 "\"N\"." +
                                                 CallIs(iface));
  std::string fix = "pass a string in double quotes (\"N\"), not a character or an integer";
  std::string seen = std::to_string(bits);
  if (const std::optional<std::int64_t> v = AsNegative(bits)) {
    seen = std::to_string(*v) + (*v >= -128 ? " (a negative integer, or a character outside ASCII)"
                                            : " (a negative integer)");
  } else if (bits >= 0x21 && bits < 0x7f) {
    const std::string c(1, static_cast<char>(bits));
    seen += " (the character '" + c + "')";
    fix = "pass the string \"" + c + "\" (double quotes), not the character '" + c +
          "' (single quotes)";
  }
  return Status(NINF_ERR_ARGUMENT_MISMATCH,
                ArgumentAt(iface, i) + " is an IN string, but the value passed is " + seen +
                    ", not a pointer to text: " + fix + "." + CallIs(iface));
}

// An array argument as C varargs delivered it: NULL is the caller's (a WORK
// array may be NULL; another is refused later only if it has elements),
// but a value no array can have is refused, naming the argument and the
// likely mistake before it.
Status CheckArrayPointer(const wire::FunctionInterface &iface, int i, const void *p) {
  const auto bits = reinterpret_cast<std::uintptr_t>(p);
  if (!p || MayBeAddress(bits)) return Status::Ok();
  const std::optional<std::int64_t> negative = AsNegative(bits);
  const std::string seen = negative ? std::to_string(*negative) : std::to_string(bits);
  return Status(NINF_ERR_ARGUMENT_MISMATCH,
                ArgumentAt(iface, i) + " is an array, but the value passed is " + seen +
                    ", not a pointer to one: was an argument before it of another type (an "
                    "integer such as 1 where a double goes: write 1.0, C varargs do not convert "
                    "it), or one left out?" +
                    CallIs(iface));
}

// LAPACK's workspace query (lwork = -1) as the interface shows it: array
// `i`'s dimension `d` reads an IN integer scalar set to -1, and the array is
// a workspace (a WORK array, or one named like LAPACK's work, iwork,
// rwork). Returns that scalar's index, or -1. The second condition keeps
// an n = -1 left by a forgotten argument from being called a query.
int QueryScalar(const wire::FunctionInterface &iface, int i, const wire::Expr &d,
                std::span<const int64_t> ints) {
  const wire::Param &p = iface.params(i);
  if (p.mode() != wire::MODE_WORK && p.name().find("work") == std::string::npos) return -1;
  for (const wire::ExprNode &node : d.nodes()) {
    if (node.op() != wire::ExprNode::PARAM) continue;
    const int64_t k = node.value();
    if (k >= 0 && k < iface.params_size() && static_cast<std::size_t>(k) < ints.size() &&
        ints[static_cast<std::size_t>(k)] == -1)
      return static_cast<int>(k);
  }
  return -1;
}

// A workspace query asks the routine to write the optimal size into
// work[0] and return at once. Remotely that cannot work: a WORK array never
// comes back (and its size, -1, is no size), so say so and what to pass.
Status WorkspaceQuery(const wire::FunctionInterface &iface, int i, int query) {
  const wire::Param &p = iface.params(i);
  const bool work = p.mode() == wire::MODE_WORK;
  std::string msg = ArgumentAt(iface, i) + " would have -1 elements: argument " +
                    std::to_string(query + 1) + " ('" + iface.params(query).name() +
                    "') = -1 asks for a workspace query, which cannot work remotely (" +
                    (work ? "the routine would write the size it wants into '" + p.name() +
                                "', which never comes back"
                          : "an array of -1 elements can be neither sent nor returned") +
                    "). Pass the workspace size itself as '" + iface.params(query).name() +
                    "': at least the minimum the routine documents, more for speed";
  if (work)
    msg += "; the server allocates '" + p.name() +
           "', so pass NULL for it from C, any array from Fortran, None from Python";
  return Status(NINF_ERR_ARGUMENT_MISMATCH, msg + "." + CallIs(iface));
}

// A negative extent is almost always an argument left out before the array
// (C varargs then read the next one in its place) or one of the wrong type,
// unless it is a workspace query (an IN scalar of -1 in the expression).
Status CheckExtents(const wire::FunctionInterface &iface, std::span<const int64_t> ints) {
  for (int i = 0; i < iface.params_size(); ++i) {
    for (const wire::Expr &d : iface.params(i).dims()) {
      int64_t extent = 0;
      if (!EvalExpr(iface, d, ints, &extent).ok() || extent >= 0) continue;
      if (const int query = QueryScalar(iface, i, d, ints); extent == -1 && query >= 0)
        return WorkspaceQuery(iface, i, query);
      return Status(NINF_ERR_ARGUMENT_MISMATCH,
                    ArgumentAt(iface, i) + " would have " + std::to_string(extent) +
                        " elements in a dimension: is an argument left out, or of the wrong "
                        "type, before it?" +
                        CallIs(iface));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ArgumentList::Build(InterfacePtr iface, std::vector<ninf_argvalue> values) {
  iface_ = std::move(iface);
  values_ = std::move(values);
  const int n = iface_->params_size();
  if (values_.size() != static_cast<std::size_t>(n))
    return Status(NINF_ERR_ARGUMENT_MISMATCH, iface_->name() + " takes " + std::to_string(n) +
                                                  " arguments, got " +
                                                  std::to_string(values_.size()));
  args_.Clear();
  ints_.assign(static_cast<std::size_t>(n), 0);
  std::vector<int64_t> &ints = ints_;
  for (int i = 0; i < n; ++i) {
    const wire::Param &p = iface_->params(i);
    if (!IsInScalar(p)) continue;
    NINF_RETURN_IF_ERROR(CheckIntegerFits(*iface_, i, values_[i].i));
    if (ArgKindOf(p) == NINF_ARGKIND_STRING)
      NINF_RETURN_IF_ERROR(CheckStringPointer(*iface_, i, values_[i].s));
    NINF_RETURN_IF_ERROR(EncodeScalar(p, values_[i], args_.add_scalars(), &ints[i]));
  }
  // The dimensions are evaluated once per call; only a refused layout is
  // looked at again, to name the argument and the likely mistake.
  if (Status st = ComputeLayout(*iface_, ints, 0, &layout_); !st.ok()) {
    if (st.code() == NINF_ERR_ARGUMENT_MISMATCH) NINF_RETURN_IF_ERROR(CheckExtents(*iface_, ints));
    return st;
  }
  work_flops_ = 0;
  if (int64_t order = 0; iface_->calc_order().nodes_size() > 0 &&
                         EvalExpr(*iface_, iface_->calc_order(), ints, &order).ok())
    work_flops_ = static_cast<double>(order);
  for (int i = 0; i < n; ++i) {
    const wire::Param &p = iface_->params(i);
    if (IsArray(p)) NINF_RETURN_IF_ERROR(CheckArrayPointer(*iface_, i, values_[i].p));
    if (IsArray(p) && p.mode() != wire::MODE_WORK && layout_.params[i].bytes > 0 && !values_[i].p)
      return Status(NINF_ERR_INVALID_ARGUMENT,
                    "argument '" + p.name() + "' of " + iface_->name() + " is a NULL pointer");
  }
  return Status::Ok();
}

std::vector<unsigned long long> ArgumentList::Extents(int i) const {
  std::vector<unsigned long long> out;
  for (const wire::Expr &d : iface_->params(i).dims()) {
    int64_t extent = 0;  // Build evaluated every one already: no error is left
    if (!EvalExpr(*iface_, d, ints_, &extent).ok() || extent < 0) extent = 0;
    out.push_back(static_cast<unsigned long long>(extent));
  }
  return out;
}

void ArgumentList::OwnStrings() {
  for (ninf_argvalue &v : values_) {
    if (!v.s) continue;
    strings_.push_back(std::make_unique<std::string>(v.s));
    v.s = strings_.back()->c_str();
  }
}

std::vector<iovec> ArgumentList::Arrays(bool sending) const {
  std::vector<iovec> out;
  for (int i = 0; i < iface_->params_size(); ++i) {
    const wire::Param &p = iface_->params(i);
    if (sending ? SendsArray(p) && !read_kept(i) : ReturnsArray(p) && !kept(i))
      out.push_back({values_[i].p, layout_.params[i].bytes});
  }
  return out;
}

void ArgumentList::ReadKept(const wire::DataRef &ref) { *args_.add_refs() = ref; }

void ArgumentList::Keep(int param) { args_.add_keep(static_cast<uint32_t>(param)); }

void ArgumentList::ClearKept() {
  args_.clear_refs();
  args_.clear_keep();
}

bool ArgumentList::kept(int param) const {
  for (uint32_t k : args_.keep())
    if (k == static_cast<uint32_t>(param)) return true;
  return false;
}

bool ArgumentList::read_kept(int param) const {
  for (const wire::DataRef &r : args_.refs())
    if (r.param() == static_cast<uint32_t>(param)) return true;
  return false;
}

uint64_t ArgumentList::send_bytes() const {
  uint64_t bytes = layout_.send_bytes;
  for (const wire::DataRef &r : args_.refs()) bytes -= layout_.params[r.param()].bytes;
  return bytes;
}

uint64_t ArgumentList::return_bytes() const {
  uint64_t bytes = layout_.return_bytes;
  for (uint32_t k : args_.keep()) bytes -= layout_.params[k].bytes;
  return bytes;
}

}  // namespace ninf::client
