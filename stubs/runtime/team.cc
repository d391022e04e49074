#include "stubs/runtime/team.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "protocol/scalar_codec.h"
#include "stubs/runtime/buffer.h"
#include "stubs/runtime/call_server.h"

namespace ninf::stub {
namespace {

bool RootOnly(const wire::FunctionInterface &iface) { return iface.distribute() == "root"; }

[[noreturn]] void Die(const wire::FunctionInterface &iface, const ninf_stub_team *team,
                      const std::string &what) {
  std::fprintf(stderr, "ninf executable %s (rank %d): %s\n", iface.name().c_str(), team->rank,
               what.c_str());
  std::_Exit(1);
}

}  // namespace

uint32_t ThreadsPerRank(uint32_t threads, const ninf_stub_team *team) {
  if (!team || team->size <= 1) return threads;
  const uint32_t each = threads / static_cast<uint32_t>(team->size);
  return each > 0 ? each : 1;
}

Status ShareCall(const ninf_stub_team *team, const wire::FunctionInterface &iface,
                 const wire::Args &scalars, uint32_t threads_per_rank, bool new_client,
                 const std::vector<void *> &argv, const CallLayout &layout) {
  std::string bytes = scalars.SerializeAsString();
  TeamMessage msg{.kind = kTeamCall,
                  .threads = threads_per_rank,
                  .args_bytes = bytes.size(),
                  .new_client = new_client ? 1u : 0u};
  auto share = [&](void *buf, std::size_t n) {
    return team->share(team->context, buf, n, 0) == 0
               ? Status::Ok()
               : Status(NINF_ERR_INTERNAL, "cannot pass the call on to the other ranks");
  };
  NINF_RETURN_IF_ERROR(share(&msg, sizeof msg));
  NINF_RETURN_IF_ERROR(share(bytes.data(), bytes.size()));
  if (RootOnly(iface)) return Status::Ok();
  for (int i = 0; i < iface.params_size(); ++i) {
    const wire::Param &p = iface.params(i);
    if (IsArray(p) && SendsArray(p) && layout.params[i].bytes > 0)
      NINF_RETURN_IF_ERROR(share(argv[i], layout.params[i].bytes));
  }
  return Status::Ok();
}

void ShareExit(const ninf_stub_team *team, int exit_status) {
  if (!Shares(team)) return;
  TeamMessage msg{.kind = kTeamExit, .exit_status = exit_status};
  (void)team->share(team->context, &msg, sizeof msg, 0);
}

int ServeTeam(const wire::FunctionInterface &iface, ninf_stub_invoke_fn invoke,
              const ninf_stub_team *team) {
  const int nparams = iface.params_size();
  std::vector<Buffer> buffers(static_cast<std::size_t>(nparams));
  auto share = [&](void *buf, std::size_t n, bool idle) {
    if (team->share(team->context, buf, n, idle ? 1 : 0) != 0)
      Die(iface, team, "lost the team (rank 0 gone?)");
  };
  for (;;) {
    TeamMessage msg;
    share(&msg, sizeof msg, true);  // the wait between calls: may be long
    if (msg.kind == kTeamExit) return msg.exit_status;
    if (msg.kind != kTeamCall || msg.args_bytes > (64u << 20))
      Die(iface, team, "unexpected message from rank 0");
    std::string bytes(msg.args_bytes, '\0');
    share(bytes.data(), bytes.size(), false);
    wire::Args args;
    if (!args.ParseFromString(bytes)) Die(iface, team, "corrupt call from rank 0");
    std::vector<ScalarSlot> slots;
    std::vector<int64_t> values;
    Status st = DecodeInScalars(iface, args, &slots, &values);
    CallLayout layout;
    if (st.ok()) st = ComputeLayout(iface, values, 0, &layout);
    if (!st.ok()) Die(iface, team, st.ToString());
    if (msg.new_client)
      for (Buffer &b : buffers) b.Disown();
    std::vector<void *> argv(static_cast<std::size_t>(nparams), nullptr);
    for (int i = 0; i < nparams; ++i) {
      const wire::Param &p = iface.params(i);
      if (!IsArray(p)) {
        argv[i] = slots[i].Pointer();
        continue;
      }
      if (RootOnly(iface)) continue;  // null: the routine distributes rank 0's arrays
      const uint64_t n = layout.params[i].bytes;
      if (!buffers[i].Reserve(n))
        Die(iface, team, "cannot allocate " + std::to_string(n) + " bytes for '" + p.name() + "'");
      argv[i] = buffers[i].data();
      if (SendsArray(p)) {
        if (n > 0) share(buffers[i].data(), n, false);
        buffers[i].Overwritten(n);
      } else {
        buffers[i].ClearUpTo(n);
      }
    }
    CallServer::ApplyThreadBudget(msg.threads);
    invoke(argv.data());
  }
}

}  // namespace ninf::stub
