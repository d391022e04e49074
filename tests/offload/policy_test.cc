// libninf_offload's decision (offload/policy.h) on its own: the
// environment's parsing, each rule of the decision, the model's updates
// and BLAS dgemm's argument checks. No server, no LAPACK.
#include "offload/policy.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>

using namespace ninf::offload;

namespace {

// ParseConfig reads through a plain function pointer: the table it reads
// is this file's.
std::map<std::string, std::string> env;

const char *FromTable(const char *name) {
  auto it = env.find(name);
  return it == env.end() ? nullptr : it->second.c_str();
}

Config Parse(std::map<std::string, std::string> vars) {
  env = std::move(vars);
  return ParseConfig(FromTable);
}

bool Contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("offload_config_defaults", "[offload]") {
  Config c = Parse({});
  CHECK(c.enabled);
  CHECK_FALSE(c.min_flops.has_value());
  CHECK(c.log.empty());
  CHECK(c.retry_seconds == 10);
  CHECK(c.warnings.empty());
}

TEST_CASE("offload_config_reads_every_variable", "[offload]") {
  Config c = Parse({{"NINF_OFFLOAD", "0"},
                    {"NINF_OFFLOAD_MIN_FLOPS", "2.5e8"},
                    {"NINF_OFFLOAD_LOG", "/tmp/x.log"},
                    {"NINF_OFFLOAD_RETRY_SECONDS", "0"}});
  CHECK_FALSE(c.enabled);
  REQUIRE(c.min_flops.has_value());
  CHECK(*c.min_flops == 2.5e8);
  CHECK(c.log == "/tmp/x.log");
  CHECK(c.retry_seconds == 0);
  CHECK(c.warnings.empty());
  CHECK(Parse({{"NINF_OFFLOAD_LOG", "1"}}).log == "-");   // stderr
  CHECK(Parse({{"NINF_OFFLOAD_LOG", "0"}}).log.empty());  // off
  CHECK(Parse({{"NINF_OFFLOAD", "1"}}).enabled);
  CHECK(*Parse({{"NINF_OFFLOAD_MIN_FLOPS", "0"}}).min_flops == 0);
  // The first fallback is reported unless told not to.
  CHECK(Parse({}).warn_fallback);
  CHECK_FALSE(Parse({{"NINF_OFFLOAD_WARN", "0"}}).warn_fallback);
  CHECK(Parse({{"NINF_OFFLOAD_WARN", "1"}}).warn_fallback);
}

TEST_CASE("offload_config_bad_values_warn_and_keep_defaults", "[offload]") {
  Config c = Parse({{"NINF_OFFLOAD", "yes"},
                    {"NINF_OFFLOAD_MIN_FLOPS", "-5"},
                    {"NINF_OFFLOAD_RETRY_SECONDS", "10s"},
                    {"NINF_OFFLOAD_WARN", "no"}});
  CHECK(c.enabled);
  CHECK(c.warn_fallback);
  CHECK(Contains(c.warnings, "NINF_OFFLOAD_WARN='no'"));
  CHECK_FALSE(c.min_flops.has_value());
  CHECK(c.retry_seconds == 10);
  CHECK(Contains(c.warnings, "NINF_OFFLOAD='yes'"));
  CHECK(Contains(c.warnings, "NINF_OFFLOAD_MIN_FLOPS='-5'"));
  CHECK(Contains(c.warnings, "NINF_OFFLOAD_RETRY_SECONDS='10s'"));
  for (const char *bad : {"abc", "1e9x", "nan", "inf", " "})
    CHECK_FALSE(Parse({{"NINF_OFFLOAD_MIN_FLOPS", bad}}).min_flops.has_value());
}

TEST_CASE("offload_decides_local_before_estimating", "[offload]") {
  Config on;
  Model model;
  CHECK_FALSE(DecideBeforeEstimate(on, model, {}, 100).has_value());

  Config off;
  off.enabled = false;
  auto d = DecideBeforeEstimate(off, model, {}, 100);
  REQUIRE(d);
  CHECK(d->where == Where::kLocal);
  CHECK(d->why == "NINF_OFFLOAD=0");

  d = DecideBeforeEstimate(on, model, {true, false}, 100);
  REQUIRE(d);
  CHECK(d->where == Where::kLocal);
  CHECK(Contains(d->why, "workspace query"));

  d = DecideBeforeEstimate(on, model, {false, true}, 100);
  REQUIRE(d);
  CHECK(d->where == Where::kLocal);
  CHECK(Contains(d->why, "transaction block"));

  model.unreachable_until = 105;
  d = DecideBeforeEstimate(on, model, {}, 100);
  REQUIRE(d);
  CHECK(Contains(d->why, "server unreachable, next try in 5 s"));
  CHECK_FALSE(DecideBeforeEstimate(on, model, {}, 105).has_value());  // time to try again
}

// A call whose flops the entry point knows is kept under the floor without
// an estimate (which would need a connection); unknown flops wait for it.
TEST_CASE("offload_floor_before_estimating", "[offload]") {
  Config c;
  Model model;
  const CallFacts tiny{false, false, DgesvFlops(8, 1)};
  auto d = DecideBeforeEstimate(c, model, tiny, 0);
  REQUIRE(d);
  CHECK(d->where == Where::kLocal);
  CHECK(Contains(d->why, "(the default floor)"));
  const CallFacts large{false, false, DgesvFlops(2000, 1)};
  CHECK_FALSE(DecideBeforeEstimate(c, model, large, 0).has_value());
  CHECK_FALSE(DecideBeforeEstimate(c, model, CallFacts{}, 0).has_value());
  // NINF_OFFLOAD_MIN_FLOPS replaces the floor, both ways.
  c.min_flops = 0;
  CHECK_FALSE(DecideBeforeEstimate(c, model, tiny, 0).has_value());
  c.min_flops = 1e15;
  d = DecideBeforeEstimate(c, model, large, 0);
  REQUIRE(d);
  CHECK(Contains(d->why, "< NINF_OFFLOAD_MIN_FLOPS 1e+15"));
}

// The IDL's integer arithmetic (estimate_test.cc compares with the server).
TEST_CASE("offload_routine_flops", "[offload]") {
  CHECK(DgesvFlops(100, 2) == 2 * 100 * 100 * 100 / 3 + 2 * 100 * 100 * 2);
  CHECK(DgetrfFlops(10, 10) == 2 * 1000 - 20 * 100 + 2000 / 3);
  CHECK(DgetrfFlops(6, 4) == DgetrfFlops(4, 6));  // k = min(m, n)
  CHECK(DgetrsFlops(10, 3) == 600);
  CHECK(DposvFlops(10, 1) == 333 + 200);
  CHECK(DsyevFlops(10) == 1333);
  CHECK(DgemmFlops(2, 3, 4) == 48);
}

TEST_CASE("offload_min_flops_decides_alone", "[offload]") {
  Config c;
  c.min_flops = 1e6;
  Model slow_link;
  slow_link.link_bytes_per_second = 1;  // would forbid everything
  CHECK(DecideWithEstimate(c, slow_link, {1e6, 1e9}, 0).where == Where::kRemote);
  Decision d = DecideWithEstimate(c, slow_link, {999999, 8}, 0);
  CHECK(d.where == Where::kLocal);
  CHECK(d.why == "flops 1e+06 < NINF_OFFLOAD_MIN_FLOPS 1e+06");
  c.min_flops = 0;
  CHECK(DecideWithEstimate(c, slow_link, {0, 0}, 0).where == Where::kRemote);
}

TEST_CASE("offload_default_floor_and_model", "[offload]") {
  Config c;
  Model m;
  // Under the floor: local, whatever the model.
  Decision d = DecideWithEstimate(c, m, {kDefaultMinFlops / 2, 8}, 0);
  CHECK(d.where == Where::kLocal);
  CHECK(Contains(d.why, "the default floor"));
  // Above it with no link measured: remote, to measure it.
  d = DecideWithEstimate(c, m, {1e9, 8e6}, 0);
  CHECK(d.where == Where::kRemote);
  CHECK(Contains(d.why, "link not measured yet"));
  // A fast link and a fast server: remote.
  m.link_bytes_per_second = 1e9;
  m.remote_flops_per_second = 4e10;
  m.local_flops_per_second = 1e10;
  m.overhead_seconds = 0.01;
  CHECK(DecideWithEstimate(c, m, {1e10, 1.6e7}, 0).where == Where::kRemote);
  // The byte threshold: moving the bytes takes longer than computing here.
  m.link_bytes_per_second = 1e6;
  d = DecideWithEstimate(c, m, {1e10, 1.6e7}, 0);
  CHECK(d.where == Where::kLocal);
  CHECK(Contains(d.why, "estimated remote"));
  // A server no faster than this machine never wins.
  m.link_bytes_per_second = 1e12;
  m.remote_flops_per_second = 1e10;
  CHECK(DecideWithEstimate(c, m, {1e10, 8}, 0).where == Where::kLocal);
}

TEST_CASE("offload_stale_model_is_measured_again", "[offload]") {
  Config c;
  Model m;
  m.link_bytes_per_second = 1e8;
  m.remote_flops_per_second = 1e10;
  m.local_flops_per_second = 1e10;
  m.measured_at = 1000;
  // Predicted 1.5x slower remotely (1 s of computing + 0.5 s of moving).
  const Estimate est{1e10, 5e7};
  CHECK(DecideWithEstimate(c, m, est, 1000 + kReprobeSeconds - 1).where == Where::kLocal);
  Decision d = DecideWithEstimate(c, m, est, 1000 + kReprobeSeconds);
  CHECK(d.where == Where::kRemote);
  CHECK(Contains(d.why, "measuring again"));
  // Predicted 3x slower: never sent, however old the model.
  CHECK(DecideWithEstimate(c, m, {1e10, 2e8}, 1e9).where == Where::kLocal);
  // A remote call dates the model.
  CHECK(NoteRemote(m, {1e6, 0.01, 1e9, 0.1, 0.2}, 5000).measured_at == 5000);
}

TEST_CASE("offload_model_updates", "[offload]") {
  Model m;
  m = NoteRemote(m, {1e6, 0.01, 2e9, 0.1, 0.2}, 0);
  CHECK(m.link_bytes_per_second == Approx(1e8));
  CHECK(m.remote_flops_per_second == Approx(2e10));
  CHECK(m.overhead_seconds == Approx(0.09));
  // Smoothed: a sample moves the value by 0.3 of the difference.
  m = NoteRemote(m, {1e6, 0.1, 2e9, 0.1, 0.2}, 0);
  CHECK(m.link_bytes_per_second == Approx(0.7 * 1e8 + 0.3 * 1e7));
  // Too small to say anything: ignored (but the overhead is noted).
  Model before = m;
  m = NoteRemote(m, {1000, 0.0001, 1000, 0.0000001, 0.0002}, 0);
  CHECK(m.link_bytes_per_second == before.link_bytes_per_second);
  CHECK(m.remote_flops_per_second == before.remote_flops_per_second);
  // Clocks of two machines: a negative overhead counts as none.
  m = NoteRemote(Model{}, {1e6, 0.5, 1e9, 0.5, 0.1}, 0);
  CHECK(m.overhead_seconds == 0);

  m = NoteLocal(Model{}, 1e9, 0.1);
  CHECK(m.local_flops_per_second == Approx(1e10));
  CHECK(NoteLocal(Model{}, 1e3, 1e-6).local_flops_per_second == 0);

  Config c;
  c.retry_seconds = 7;
  m = NoteUnreachable(Model{}, c, 50);
  CHECK(m.unreachable_until == 57);
  // A successful remote call clears it.
  CHECK(NoteRemote(m, {}, 0).unreachable_until == 0);
}

TEST_CASE("offload_what_a_failure_holds_off", "[offload]") {
  // No server: every routine, or each would pay its own connect timeout.
  CHECK(HoldOf(NINF_ERR_CONNECT) == Hold::kServer);
  CHECK(HoldOf(NINF_ERR_TIMEOUT) == Hold::kServer);
  CHECK(HoldOf(NINF_ERR_COMMUNICATION) == Hold::kServer);
  CHECK(HoldOf(NINF_ERR_AUTH) == Hold::kServer);
  // A server that does not serve this routine: this routine.
  CHECK(HoldOf(NINF_ERR_FUNCTION_NOT_FOUND) == Hold::kRoutine);
  CHECK(HoldOf(NINF_ERR_DENIED) == Hold::kRoutine);
  CHECK(HoldOf(NINF_ERR_LIMIT) == Hold::kRoutine);  // a call of the same size would exceed it again
  // This call's arguments only: nothing.
  CHECK(HoldOf(NINF_ERR_INVALID_ARGUMENT) == Hold::kNone);  // a negative n
  CHECK(HoldOf(NINF_ERR_ARGUMENT_MISMATCH) == Hold::kNone);
  CHECK(HoldOf(NINF_ERR_OVERFLOW) == Hold::kNone);
  CHECK(HoldOf(NINF_ERR_TOO_LARGE) == Hold::kNone);
}

TEST_CASE("offload_failures_back_off", "[offload]") {
  Config c;
  c.retry_seconds = 10;
  Model m;
  const double expected[] = {10, 20, 40, 80, 160, 320, 320, 320};
  for (double wait : expected) {
    m = NoteUnreachable(m, c, 1000);
    CHECK(m.unreachable_until == 1000 + wait);
  }
  // A success starts again from retry_seconds.
  m = NoteRemote(m, {}, 2000);
  CHECK(m.failures == 0);
  CHECK(NoteUnreachable(m, c, 3000).unreachable_until == 3010);
  // NINF_OFFLOAD_RETRY_SECONDS=0: try every call.
  c.retry_seconds = 0;
  CHECK(NoteUnreachable(m, c, 3000).unreachable_until == 3000);
}

TEST_CASE("offload_dgemm_argument_checks", "[offload]") {
  CHECK(DgemmLegal('N', 'N', 3, 4, 5, 3, 5, 3));
  CHECK(DgemmLegal('t', 'c', 3, 4, 5, 5, 4, 3));
  CHECK(DgemmLegal('N', 'N', 0, 0, 0, 1, 1, 1));
  CHECK_FALSE(DgemmLegal('X', 'N', 3, 4, 5, 3, 5, 3));
  CHECK_FALSE(DgemmLegal('N', '\0', 3, 4, 5, 3, 5, 3));
  CHECK_FALSE(DgemmLegal('N', 'N', -1, 4, 5, 3, 5, 3));
  CHECK_FALSE(DgemmLegal('N', 'N', 3, 4, 5, 2, 5, 3));  // lda < m
  CHECK_FALSE(DgemmLegal('T', 'N', 3, 4, 5, 3, 5, 3));  // lda < k when transposed
  CHECK_FALSE(DgemmLegal('N', 'N', 3, 4, 5, 3, 4, 3));  // ldb < k
  CHECK_FALSE(DgemmLegal('N', 'N', 3, 4, 5, 3, 5, 2));  // ldc < m
  CHECK_FALSE(DgemmLegal('N', 'N', 0, 0, 0, 0, 1, 1));  // lda < 1
}
