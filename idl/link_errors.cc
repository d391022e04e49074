#include "idl/link_errors.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "idl/checks.h"
#include "idl/gen_stub.h"

namespace ninf::idl {
namespace {

// The quotes GNU ld puts around a symbol: ASCII in the C locale, UTF-8
// ones (U+2018, U+2019) in others.
constexpr std::string_view kOpenQuotes[] = {"`", "'", "\u2018"};
constexpr std::string_view kCloseQuotes[] = {"'", "\u2019"};

// The symbol starting at `at` (just after an opening quote) up to the
// closing one; "" when there is none on the line.
std::string_view QuotedSymbol(std::string_view line, std::size_t at) {
  std::size_t end = std::string_view::npos;
  for (std::string_view q : kCloseQuotes) end = std::min(end, line.find(q, at));
  return end == std::string_view::npos ? std::string_view() : line.substr(at, end - at);
}

std::string_view SymbolOn(std::string_view line) {
  constexpr std::string_view kGnu = "undefined reference to ";
  constexpr std::string_view kLld = "undefined symbol: ";
  if (std::size_t at = line.find(kGnu); at != std::string_view::npos) {
    at += kGnu.size();
    // "undefined reference to symbol 'sqrt@@GLIBC_2.2.5'": a library that
    // is needed but not named (ld then adds "DSO missing from command
    // line"); the version is not part of the name.
    constexpr std::string_view kSymbolWord = "symbol ";
    const bool versioned = line.substr(at, kSymbolWord.size()) == kSymbolWord;
    if (versioned) at += kSymbolWord.size();
    for (std::string_view q : kOpenQuotes)
      if (line.substr(at, q.size()) == q) {
        std::string_view s = QuotedSymbol(line, at + q.size());
        return versioned ? s.substr(0, s.find('@')) : s;
      }
    return {};
  }
  if (std::size_t at = line.find(kLld); at != std::string_view::npos) {
    std::string_view rest = line.substr(at + kLld.size());
    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.back())))
      rest.remove_suffix(1);
    return rest;
  }
  return {};
}

template <class F>
void ForEachLine(std::string_view text, F f) {
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    f(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

// The BLAS routines without their precision letter: a Fortran symbol
// [sdcz]NAME_ (or i[sdcz]amax_) is BLAS, any other LAPACK-shaped one
// LAPACK.
constexpr std::array<std::string_view, 41> kBlas = {
    "axpy", "copy", "dot",  "dotc", "dotu", "nrm2", "asum", "scal",  "swap", "rot",  "rotg",
    "rotm", "gemv", "gbmv", "symv", "sbmv", "spmv", "trmv", "tbmv",  "tpmv", "trsv", "tbsv",
    "tpsv", "ger",  "gerc", "geru", "syr",  "syr2", "spr",  "spr2",  "her",  "her2", "hemv",
    "gemm", "symm", "syrk", "trmm", "trsm", "hemm", "herk", "syr2k",
};

bool IsPrecisionLetter(char c) { return c == 's' || c == 'd' || c == 'c' || c == 'z'; }

bool IsBlasName(std::string_view name) {  // lower case, no trailing '_'
  if (name.size() == 6 && name[0] == 'i' && IsPrecisionLetter(name[1]) &&
      (name.substr(2) == "amax" || name.substr(2) == "amin"))
    return true;
  if (name.size() < 2 || !IsPrecisionLetter(name[0])) return false;
  std::string_view rest = name.substr(1);
  // zdotc, dznrm2, csscal...: a second precision letter is allowed too.
  if (std::find(kBlas.begin(), kBlas.end(), rest) != kBlas.end()) return true;
  return rest.size() > 1 && IsPrecisionLetter(rest[0]) &&
         std::find(kBlas.begin(), kBlas.end(), rest.substr(1)) != kBlas.end();
}

// A LAPACK name: a precision letter and 4 or 5 more letters or digits
// (dgesv, dsyev, dgetrf, zheevd).
bool IsLapackName(std::string_view name) {
  if (name.size() < 5 || name.size() > 6 || !IsPrecisionLetter(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c));
  });
}

}  // namespace

std::vector<std::string> UndefinedSymbols(std::string_view output, std::size_t limit) {
  std::vector<std::string> symbols;
  ForEachLine(output, [&](std::string_view line) {
    std::string_view s = SymbolOn(line);
    if (s.empty() || symbols.size() >= limit) return;
    if (std::find(symbols.begin(), symbols.end(), s) == symbols.end()) symbols.emplace_back(s);
  });
  return symbols;
}

std::string SuggestLibrary(std::string_view symbol) {
  if (symbol.starts_with("LAPACKE_")) return "Library \"-llapacke -llapack\"; (LAPACKE)";
  if (symbol.starts_with("cblas_")) return "Library \"-lcblas\"; (CBLAS; or \"-lopenblas\")";
  if (symbol.starts_with("_gfortran_")) return "Library \"-lgfortran\"; (the GNU Fortran runtime)";
  if (symbol.starts_with("MPI_") || symbol.starts_with("mpi_"))
    return "Backend \"MPI\" on the Define (MPI programs are linked by mpicc)";
  constexpr std::string_view kMath[] = {"sqrt", "exp",  "log",   "pow",  "sin",   "cos",
                                        "tan",  "fabs", "floor", "ceil", "atan2", "hypot"};
  for (std::string_view m : kMath)
    if (symbol == m) return "Library \"-lm\"; (the C math library)";
  // A Fortran routine as C sees it: lower case with one trailing '_'.
  if (symbol.size() > 1 && symbol.back() == '_') {
    std::string_view name = symbol.substr(0, symbol.size() - 1);
    if (IsBlasName(name)) return "Library \"-lblas\"; (BLAS; or \"-lopenblas\")";
    if (IsLapackName(name)) return "Library \"-llapack\"; (LAPACK; or \"-lopenblas\")";
  }
  return "";
}

std::string LinkErrorMessage(const Define &d, const std::vector<std::string> &symbols) {
  const bool fortran = d.body == Body::kCalls && IsFortran(d);
  const std::string callee = d.body != Body::kCalls ? ""
                             : fortran              ? FortranSymbol(d.callee)
                                                    : d.callee;
  std::string message = "cannot link " + d.name + ":";
  for (const std::string &s : symbols) {
    message += (&s == &symbols.front() ? " no" : " No") + std::string(" library given defines '") +
               s + "'";
    if (s == callee)
      message += std::string(", the ") + (fortran ? "Fortran" : "C") + " routine its Calls names";
    else
      message += ", which the code it links needs";
    const std::string hint = SuggestLibrary(s);
    message += hint.empty()
                   ? ": add the library that does to the IDL file (Library \"-lNAME\";) or "
                     "its source (Required \"FILE\")."
                   : ": add the library that does to the IDL file, e.g. " + hint + ".";
  }
  return message;
}

bool OnlyUndefinedSymbols(std::string_view output) {
  // What GNU ld, gold, lld and the compiler driver print around the
  // undefined symbols themselves.
  constexpr std::string_view kNoise[] = {"undefined reference to ",
                                         "undefined symbol: ",
                                         ": in function ",
                                         "ld returned ",
                                         ">>> referenced by ",
                                         ">>> did you mean",
                                         "more undefined references to "};
  bool only = true;
  ForEachLine(output, [&](std::string_view line) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    bool noise = false;
    for (std::string_view n : kNoise) noise = noise || line.find(n) != std::string_view::npos;
    only = only && noise;
  });
  return only;
}

}  // namespace ninf::idl
