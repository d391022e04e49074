// The table of asynchronous calls (client/sessions.h), without a server:
// the codes of waited-for calls are kept, but only the newest kKeptCodes,
// so that a program making millions of calls does not grow it forever.
#include "client/sessions.h"

#include <catch2/catch.hpp>

using ninf::Status;
using ninf::client::Sessions;

namespace {

int StartOk() {
  return Sessions::Instance().Start([] { return Status::Ok(); }, nullptr);
}

}  // namespace

TEST_CASE("sessions_waited_codes_are_kept_and_bounded") {
  Sessions &s = Sessions::Instance();
  const int first = StartOk();
  REQUIRE(s.Wait(first).ok());
  bool done = false;
  REQUIRE(s.Probe(first, &done).ok());  // remembered after its wait
  CHECK(done);
  CHECK(s.Wait(first).code() == NINF_ERR_INVALID_ID);  // "collected by another wait"

  int last = first;
  for (std::size_t i = 0; i < Sessions::kKeptCodes; ++i) {
    last = StartOk();
    REQUIRE(s.Wait(last).ok());
  }
  // kKeptCodes newer calls later, the first one's code is gone...
  CHECK(s.Probe(first, &done).code() == NINF_ERR_INVALID_ID);
  // ...and the newest ones are still known.
  done = false;
  REQUIRE(s.Probe(last, &done).ok());
  CHECK(done);
  CHECK(s.Outstanding().empty());
}
