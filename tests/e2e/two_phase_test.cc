// Two-phase calls (docs/transactions.md) against a real ninfd: a process
// submits and exits, another collects with the ticket; a ticket is
// collected once; an expired ticket says so; only the submitter's key
// collects; bad tickets are refused with a clear error.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "client/ninf.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/server/daemon_fixture.h"

using ninf::test::TempDir;

namespace {

constexpr long kN = 40;

std::vector<double> Matrix(unsigned seed) {
  std::vector<double> m(kN * kN);
  for (long i = 0; i < kN * kN; ++i) m[i] = static_cast<double>((i * 7 + seed * 13) % 17) - 8.0;
  return m;
}

// Submits C = A * B and returns the ticket ("" and the error on failure).
std::string Submit(const std::string &name) {
  std::vector<double> a = Matrix(1), b = Matrix(2), c(kN * kN, 0.0);
  Ninf_ticket ticket;
  if (Ninf_call_submit(&ticket, name.c_str(), kN, a.data(), b.data(), c.data()) != 0)
    return "error " + std::to_string(Ninf_get_error());
  for (double x : c)
    if (x != 0.0) return "error: the submitting process's C was written";
  return ticket.text;
}

// Collects the product: "0" when it is right, else the error code.
std::string Collect(const std::string &text) {
  std::vector<double> a = Matrix(1), b = Matrix(2), c(kN * kN, 0.0);
  Ninf_ticket ticket;
  std::snprintf(ticket.text, sizeof ticket.text, "%s", text.c_str());
  if (Ninf_call_collect(&ticket, "dmmul", kN, a.data(), b.data(), c.data()) != 0)
    return std::to_string(Ninf_get_error());
  for (long i = 0; i < kN; ++i)
    for (long j = 0; j < kN; ++j) {
      double s = 0;
      for (long k = 0; k < kN; ++k) s += a[i * kN + k] * b[k * kN + j];
      if (s != c[i * kN + j]) return "wrong";
    }
  return "0";
}

std::string WriteKeyFile(const TempDir &dir, const std::string &name, const std::string &text) {
  std::string path = dir.Join(name);
  std::ofstream(path, std::ios::trunc) << text << "\n";
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  return path;
}

}  // namespace

TEST_CASE("two_phase_only_the_submitters_key_collects", "[e2e][two_phase]") {
  // First in the file: its children read NINF_KEY_FILE, which libninf
  // reads once per process (before any call of this test process).
  TempDir dir;
  // Two users (docs/security.md#users): two keys of one key_file are one
  // user, "default", and reach the same results.
  const std::string mine = WriteKeyFile(dir, "mine", "key-of-the-submitter-0123456789");
  const std::string other = WriteKeyFile(dir, "other", "key-of-somebody-else-0123456789");
  E2EDaemon d(UsersConfig(dir, {{"submitter", "key-of-the-submitter-0123456789", ""},
                                {"somebody", "key-of-somebody-else-0123456789", ""}}));
  const std::string ticket = RunInChild(mine, [&] { return Submit(d.Name("dmmul")); });
  REQUIRE(ticket.rfind("ninf1:", 0) == 0);
  CHECK(RunInChild(other, [&] { return Collect(ticket); }) == std::to_string(NINF_ERR_AUTH));
  CHECK(RunInChild(mine, [&] { return Collect(ticket); }) == "0");
}

TEST_CASE("two_phase_submit_exit_collect_from_a_new_process", "[e2e][two_phase]") {
  E2EDaemon d;
  const std::string ticket = RunInChild("", [&] { return Submit(d.Name("dmmul")); });
  REQUIRE(ticket.rfind("ninf1:", 0) == 0);
  // The submitter is gone; the result waits in the server's store.
  CHECK(d.WaitForStat("function.dmmul.calls", 1) == 1);
  CHECK(d.Stat("store_entries") == 1);
  CHECK(RunInChild("", [&] { return Collect(ticket); }) == "0");
  CHECK(d.Stat("store_entries") == 0);
  CHECK(d.Stat("store_released") == 1);
  // Collected once: the ticket is spent.
  CHECK(Collect(ticket) == std::to_string(NINF_ERR_INVALID_ID));
  CHECK(d.ZombieChildren() == 0);
}

TEST_CASE("two_phase_collect_waits_for_a_running_call", "[e2e][two_phase]") {
  E2EDaemon d;
  // Collected at once, in the same process: the call may still run.
  const std::string ticket = Submit(d.Name("dmmul"));
  REQUIRE(ticket.rfind("ninf1:", 0) == 0);
  CHECK(Collect(ticket) == "0");
}

TEST_CASE("two_phase_expired_ticket_is_a_clear_error", "[e2e][two_phase]") {
  E2EDaemon d({"--result-keep-seconds", "1"});
  const std::string ticket = Submit(d.Name("dmmul"));
  REQUIRE(ticket.rfind("ninf1:", 0) == 0);
  CHECK(d.WaitForStat("store_expired", 1) == 1);  // the watchdog freed it
  CHECK(Collect(ticket) == std::to_string(NINF_ERR_EXPIRED));
  CHECK(std::string(Ninf_get_error_detail()).find("expired") != std::string::npos);
}

TEST_CASE("two_phase_bad_tickets_are_refused", "[e2e][two_phase]") {
  E2EDaemon d;
  std::vector<double> a = Matrix(1), b = Matrix(2), c(kN * kN, 0.0);
  Ninf_ticket t;
  std::snprintf(t.text, sizeof t.text, "%s", "not a ticket");
  CHECK(Ninf_call_collect(&t, "dmmul", kN, a.data(), b.data(), c.data()) == -1);
  CHECK(Ninf_get_error() == NINF_ERR_INVALID_ARGUMENT);
  const std::string ticket = Submit(d.Name("dmmul"));
  REQUIRE(ticket.rfind("ninf1:", 0) == 0);
  std::snprintf(t.text, sizeof t.text, "%s", ticket.c_str());
  CHECK(Ninf_call_collect(&t, "daxpy", kN, 1.0, a.data(), c.data()) == -1);  // another function
  CHECK(Ninf_get_error() == NINF_ERR_INVALID_ARGUMENT);
  CHECK(std::string(Ninf_get_error_detail()).find("'dmmul'") != std::string::npos);
  // A forged token for the right id: unknown, and nothing is given away.
  std::string forged = ticket;
  const std::size_t at = forged.find(':', 6) + 1;
  forged[at] = forged[at] == '0' ? '1' : '0';
  CHECK(Collect(forged) == std::to_string(NINF_ERR_INVALID_ID));
  CHECK(Collect(ticket) == "0");
  // Inside a transaction block, submission is refused.
  REQUIRE(Ninf_transaction_begin() == 0);
  CHECK(Ninf_call_submit(&t, d.Name("dmmul").c_str(), kN, a.data(), b.data(), c.data()) == -1);
  CHECK(Ninf_get_error() == NINF_ERR_NOT_SUPPORTED);
  REQUIRE(Ninf_transaction_end() == 0);
}
