#include "client/transaction.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>

#include "client/c_boundary.h"
#include "client/connect.h"
#include "client/interfaces.h"
#include "client/metaserver.h"
#include "client/options.h"
#include "client/transaction_graph.h"
#include "client/transaction_plan.h"

namespace ninf::client {
namespace {

// A planned call moves to another server when it becomes ready only if
// that one is predicted to finish it this much (a fraction) earlier.
constexpr double kRecheckMargin = 0.2;
// Calls of one block running at once without a metaserver's slot counts:
// the server queues what its slots cannot take.
constexpr std::size_t kMaxRunning = 16;

using Range = std::pair<uintptr_t, uintptr_t>;

struct Block {
  std::vector<std::unique_ptr<RemoteCall>> calls;
  std::vector<Range> discarded;
};

struct Outcome {
  Status status;
  Ninf_call_info info{};
};

thread_local std::unique_ptr<Block> open_block;
thread_local std::vector<Outcome> last_block;
thread_local bool has_last_block = false;

std::string CallName(int index, const RemoteCall &call) {
  return "call " + std::to_string(index) + " (" + call.function() + ")";
}

// The memory one call reads and writes, from its argument list.
CallUses UsesOf(ArgumentList &list) {
  CallUses uses;
  const wire::FunctionInterface &iface = list.iface();
  for (int i = 0; i < iface.params_size(); ++i) {
    const wire::Param &p = iface.params(i);
    const uint64_t bytes = list.layout().params[static_cast<std::size_t>(i)].bytes;
    if (!IsArray(p) || p.mode() == wire::MODE_WORK || bytes == 0) continue;
    const auto begin = reinterpret_cast<uintptr_t>(list.pointer(i));
    uses.push_back({begin, begin + bytes, SendsArray(p), ReturnsArray(p)});
  }
  return uses;
}

// The block's own copy of every region of the caller's memory that some
// call writes: calls read and write there, and only a block that succeeded
// copies it back. Regions only read stay where they are (the caller must
// not change them before the end either).
class BlockMemory {
 public:
  explicit BlockMemory(const std::vector<CallUses> &calls) {
    std::vector<ArrayUse> all;
    for (const CallUses &c : calls) all.insert(all.end(), c.begin(), c.end());
    for (const ArrayUse &r : MergeRanges(std::move(all))) {
      if (!r.writes) continue;
      const std::size_t size = r.end - r.begin;
      auto copy = std::make_unique_for_overwrite<char[]>(size);
      std::memcpy(copy.get(), reinterpret_cast<const void *>(r.begin), size);
      regions_.push_back({r.begin, r.end, std::move(copy)});
    }
  }

  // Where the block keeps the byte the caller has at `address`.
  void *Translate(void *address) const {
    const auto a = reinterpret_cast<uintptr_t>(address);
    for (const Region &r : regions_)
      if (a >= r.begin && a < r.end) return r.copy.get() + (a - r.begin);
    return address;
  }

  // Writes the block's values back, except inside `discarded`.
  void Commit(std::vector<Range> discarded) const {
    std::sort(discarded.begin(), discarded.end());
    for (const Region &r : regions_) {
      uintptr_t at = r.begin;
      for (auto [b, e] : discarded) {
        if (e <= at || b >= r.end) continue;
        if (b > at) Copy(r, at, b);
        at = std::max(at, e);
      }
      if (at < r.end) Copy(r, at, r.end);
    }
  }

 private:
  struct Region {
    uintptr_t begin, end;
    std::unique_ptr<char[]> copy;
  };
  static void Copy(const Region &r, uintptr_t from, uintptr_t to) {
    std::memcpy(reinterpret_cast<void *>(from), r.copy.get() + (from - r.begin), to - from);
  }
  std::vector<Region> regions_;
};

// Forwarding (docs/transactions.md): an array one call produces and later
// calls read whole stays on the producer's server, and each reader's
// server fetches it from there; it never crosses the client's link. Only
// when every reader of the producer's value reads exactly that array, and
// the caller does not need its final value (discarded, or overwritten
// later in the block).
struct Forward {
  int producer = 0;
  int producer_param = 0;
  int reader = 0;
  int reader_param = 0;
  uint64_t bytes = 0;
};

struct ForwardPlan {
  std::vector<Forward> forwards;
  std::vector<std::vector<int>> keep;           // per call: the parameters it keeps
  std::vector<std::vector<Range>> kept_ranges;  // and their extents in the caller's memory
};

bool Covered(uintptr_t begin, uintptr_t end, const std::vector<Range> &ranges) {
  for (auto [b, e] : ranges)
    if (b <= begin && e >= end) return true;
  return false;
}

ForwardPlan PlanForwards(const std::vector<std::unique_ptr<RemoteCall>> &calls,
                         const BlockGraph &graph, const std::vector<Range> &discarded) {
  const int n = static_cast<int>(calls.size());
  ForwardPlan plan;
  plan.keep.resize(static_cast<std::size_t>(n));
  plan.kept_ranges.resize(static_cast<std::size_t>(n));
  // Each call's array parameters and their extents.
  struct Param {
    int index;
    uintptr_t begin, end;
    bool reads, writes;
  };
  std::vector<std::vector<Param>> params(static_cast<std::size_t>(n));
  for (int c = 0; c < n; ++c) {
    const ArgumentList &list = calls[c]->arguments();
    for (int i = 0; i < list.iface().params_size(); ++i) {
      const wire::Param &p = list.iface().params(i);
      const uint64_t bytes = list.layout().params[static_cast<std::size_t>(i)].bytes;
      if (!IsArray(p) || p.mode() == wire::MODE_WORK || bytes == 0) continue;
      const auto begin = reinterpret_cast<uintptr_t>(list.pointer(i));
      params[c].push_back({i, begin, begin + bytes, SendsArray(p), ReturnsArray(p)});
    }
  }
  for (int i = 0; i < n; ++i) {
    for (const Param &out : params[i]) {
      if (!out.writes) continue;
      std::vector<Forward> candidate;
      bool ok = true, read = false;
      for (const Flow &f : graph.flows) {
        if (f.from != i || f.end <= out.begin || f.begin >= out.end) continue;
        if (f.to == kClient) {  // a final value: only if the caller does not want it
          ok = ok && Covered(f.begin, f.end, discarded);
          continue;
        }
        read = true;
        // The reader must read exactly this array, all of it from call i.
        const Param *in = nullptr;
        for (const Param &q : params[f.to])
          if (q.reads && q.begin == out.begin && q.end == out.end) in = &q;
        uint64_t from_i = 0;
        for (const Flow &g : graph.flows)
          if (g.to == f.to && g.from == i && g.begin >= out.begin && g.end <= out.end)
            from_i += g.bytes();
        if (!in || from_i != out.end - out.begin) {
          ok = false;
          continue;
        }
        bool seen = false;
        for (const Forward &fw : candidate) seen = seen || fw.reader == f.to;
        if (!seen) candidate.push_back({i, out.index, f.to, in->index, out.end - out.begin});
      }
      if (!ok || !read) continue;
      plan.keep[i].push_back(out.index);
      plan.kept_ranges[i].push_back({out.begin, out.end});
      plan.forwards.insert(plan.forwards.end(), candidate.begin(), candidate.end());
    }
  }
  return plan;
}

// The order to start ready calls in, and each call's planned server id
// ("" when unplanned).
struct BlockPlan {
  std::vector<int> order;
  std::vector<std::string> server_id;
  std::size_t max_running = kMaxRunning;
};

// Asks the metaserver for each call's predictions on every server, then
// plans the block with HEFT. Without a metaserver for every call, or
// without answers, the block runs in program order, unplanned.
BlockPlan PlanBlock(const std::vector<std::unique_ptr<RemoteCall>> &calls, const BlockGraph &graph,
                    const ForwardPlan &forwards) {
  const int n = static_cast<int>(calls.size());
  BlockPlan plan;
  plan.order.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) plan.order[i] = i;
  plan.server_id.assign(static_cast<std::size_t>(n), "");
  for (const auto &c : calls)
    if (!c->metaserver()) return plan;
  std::vector<wire::Placement> answers(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    RemoteCall &c = *calls[i];
    wire::PlaceRequest req;
    req.set_function(c.function());
    req.set_work_flops(c.arguments().work_flops());
    req.set_in_bytes(c.arguments().send_bytes());
    req.set_out_bytes(c.arguments().return_bytes());
    req.set_breakdown(true);
    if (!MetaPlace(*c.metaserver(), req, &answers[i]).ok()) return plan;
  }
  // The servers any call may run on, numbered in order of appearance.
  std::map<std::string, int> index;
  std::vector<std::string> ids;
  PlanProblem p;
  p.links.assign(1, std::vector<PlanLink>(1));
  for (const wire::Placement &a : answers)
    for (const wire::PlacementTarget &t : a.targets()) {
      if (index.count(t.server_id())) continue;
      index[t.server_id()] = static_cast<int>(ids.size());
      ids.push_back(t.server_id());
      p.servers.push_back({std::max(1, static_cast<int>(t.slots())), t.queue_seconds()});
      PlanLink link{t.latency_seconds(), std::max(1.0, t.bandwidth())};
      for (auto &row : p.links) row.push_back(link);
      p.links.push_back(std::vector<PlanLink>(p.links[0].size(), link));
    }
  // Arrays in the block's memory go through the client's link, so they
  // count in the calls' own transfers; a forwarded array moves between the
  // two servers (priced by the reader's link, the one figure known) or not
  // at all on one server, and other edges only order.
  for (int i = 0; i < n; ++i) {
    PlanTask task{std::vector<double>(ids.size(), kCannotRun), calls[i]->arguments().send_bytes(),
                  calls[i]->arguments().return_bytes()};
    for (const wire::PlacementTarget &t : answers[i].targets())
      task.compute_seconds[static_cast<std::size_t>(index[t.server_id()])] = t.compute_seconds();
    p.tasks.push_back(std::move(task));
  }
  for (const Dependency &d : graph.dependencies) {
    uint64_t bytes = 0;
    for (const Forward &f : forwards.forwards)
      if (f.producer == d.from && f.reader == d.to) bytes += f.bytes;
    p.edges.push_back({d.from, d.to, bytes});
  }
  Plan heft = PlanHeft(p);
  if (!heft.ok) return plan;
  plan.order = heft.order;
  std::size_t slots = 0;
  for (const PlanServer &s : p.servers) slots += static_cast<std::size_t>(s.slots);
  plan.max_running = std::clamp<std::size_t>(slots, 1, 4 * kMaxRunning);
  for (int i = 0; i < n; ++i) plan.server_id[i] = ids[static_cast<std::size_t>(heft.server[i])];
  return plan;
}

// The kept arrays of a running block: which call reads what from where,
// re-running a producer whose server died with its data, and releasing
// every entry at the end.
class KeptData {
 public:
  KeptData(const std::vector<std::unique_ptr<RemoteCall>> &calls, const std::vector<CallUses> &uses,
           ForwardPlan plan)
      : calls_(calls), uses_(uses), plan_(std::move(plan)) {}

  const ForwardPlan &plan() const { return plan_; }

  // Before call t runs: what it keeps, and the arrays it reads from its
  // producers' servers (a placeholder of the right size before they ran,
  // for the planner's byte counts).
  void Apply(int t) {
    std::lock_guard<std::mutex> lock(mutex_);
    ApplyLocked(t);
  }

  // Runs call t; when an array it reads was lost with its producer's
  // server, re-runs the producers (elsewhere: the dead server refuses) and
  // then t once more, if nothing that started since changed their inputs.
  // `started(k)` says whether call k has started.
  Status Run(int t, const std::function<bool(int)> &started) {
    Apply(t);
    Status st = Execute(t);
    if (st.ok() || !LostKeptData(st)) return st;
    for (const Forward &f : plan_.forwards) {
      if (f.reader != t) continue;
      std::lock_guard<std::mutex> lock(recompute_mutex_);
      if (!Recomputable(f.producer, started))
        return Status(st.code(), "an input it reads from " +
                                     CallName(f.producer, *calls_[f.producer]) +
                                     " was lost, and that call cannot be re-run (a later call "
                                     "changed its arguments): " +
                                     st.message());
      Apply(f.producer);
      if (Status again = Execute(f.producer); !again.ok())
        return Status(again.code(), "re-running " + CallName(f.producer, *calls_[f.producer]) +
                                        " for a lost input: " + again.message());
    }
    Apply(t);
    return Execute(t);
  }

  // Frees every array the block kept: one connection per server, all its
  // RELEASEs on it (best effort: what is not released expires).
  void ReleaseAll() {
    std::map<std::string, std::vector<const wire::DataRef *>> by_server;
    for (const wire::DataRef &ref : all_) by_server[ref.address()].push_back(&ref);
    for (const auto &[address, refs] : by_server) {
      ServerAddress server;
      std::unique_ptr<Channel> ch;
      if (!ParseServerAddress(address, &server).ok() || !ConnectToServer(server, &ch).ok())
        continue;
      for (const wire::DataRef *ref : refs) {
        wire::StoreKey key;
        key.set_id(ref->id());
        key.set_token(ref->token());
        wire::Released released;
        FrameHeader h;
        if (!ch->SendFrame(FRAME_RELEASE, &key).ok() ||
            !ch->RecvReply(FRAME_RELEASED, 0, &released, &h).ok())
          break;
      }
    }
  }

 private:
  static bool LostKeptData(const Status &st) {
    return st.message().find("kept data at ") != std::string::npos;
  }

  Status Execute(int t) {
    Status st = calls_[t]->Execute();
    std::lock_guard<std::mutex> lock(mutex_);
    if (st.ok()) all_.insert(all_.end(), calls_[t]->kept().begin(), calls_[t]->kept().end());
    return st;
  }

  void ApplyLocked(int t) {
    ArgumentList &args = calls_[t]->arguments();
    args.ClearKept();
    for (int p : plan_.keep[t]) args.Keep(p);
    for (const Forward &f : plan_.forwards) {
      if (f.reader != t) continue;
      wire::DataRef ref;
      for (const wire::DataRef &k : calls_[f.producer]->kept())
        if (k.param() == static_cast<uint32_t>(f.producer_param)) ref = k;
      ref.set_param(static_cast<uint32_t>(f.reader_param));
      ref.set_bytes(f.bytes);
      args.ReadKept(ref);
    }
  }

  // Call i can run again if no call that started after it writes what it
  // reads or writes, and what it reads from other servers can be had too.
  bool Recomputable(int i, const std::function<bool(int)> &started) const {
    const int n = static_cast<int>(calls_.size());
    for (int k = i + 1; k < n; ++k) {
      if (!started(k)) continue;
      for (const ArrayUse &w : uses_[k]) {
        if (!w.writes) continue;
        for (const ArrayUse &u : uses_[i])
          if (w.begin < u.end && u.begin < w.end && !KeptParamOf(i, u)) return false;
      }
    }
    return true;
  }

  // Whether use u of call i is one of its kept arrays (never in the block's
  // memory, so later writes there do not touch it).
  bool KeptParamOf(int i, const ArrayUse &u) const {
    if (u.reads) return false;
    for (auto [b, e] : plan_.kept_ranges[i])
      if (b == u.begin && e == u.end) return true;
    return false;
  }

  const std::vector<std::unique_ptr<RemoteCall>> &calls_;
  const std::vector<CallUses> &uses_;
  ForwardPlan plan_;
  std::mutex mutex_;            // all_ and the refs of calls being started
  std::mutex recompute_mutex_;  // one re-run at a time
  std::vector<wire::DataRef> all_;
};

// One run of a block's calls as the graph allows, ready ones in the plan's
// order, each on a thread. After a call fails, nothing new starts; the
// running ones finish. The state the loop and the call threads share is
// members here, so that starting, collecting and cancelling are each a
// function of their own.
class BlockRun {
 public:
  BlockRun(const std::vector<std::unique_ptr<RemoteCall>> &calls, const BlockGraph &graph,
           const BlockPlan &plan, KeptData &kept)
      : calls_(calls),
        plan_(plan),
        kept_(kept),
        n_(static_cast<int>(calls.size())),
        out_(static_cast<std::size_t>(n_)),
        waiting_(static_cast<std::size_t>(n_), 0),
        successors_(static_cast<std::size_t>(n_)),
        started_(static_cast<std::size_t>(n_), false) {
    for (const Dependency &d : graph.dependencies) {
      ++waiting_[d.to];
      successors_[d.from].push_back(d.to);
    }
  }

  // Returns each call's outcome once every started call has ended.
  std::vector<Outcome> Go() {
    for (;;) {
      StartReady();
      if (running_ == 0) break;
      CollectOne();
    }
    for (std::thread &th : threads_) th.join();
    CancelUnstarted();
    return std::move(out_);
  }

 private:
  // Starts the calls whose inputs are ready, in the plan's order, up to the
  // plan's limit; none once a call has failed.
  void StartReady() {
    for (int t : plan_.order) {
      if (failed_ >= 0 || running_ >= plan_.max_running) break;
      if (started_[t] || waiting_[t] > 0) continue;
      {
        std::lock_guard<std::mutex> lock(mutex_);  // re-runs ask what has started
        started_[t] = true;
      }
      ++running_;
      if (!plan_.server_id[t].empty()) calls_[t]->Prefer(plan_.server_id[t], kRecheckMargin);
      try {
        threads_.emplace_back([this, t] { RunCall(t); });
      } catch (const std::system_error &) {
        RunCall(t);  // no thread to be had: this call runs here, the block goes on
      }
    }
  }

  // The body of call t's thread: runs it and queues it as finished.
  void RunCall(int t) {
    Status st;
    try {
      st = kept_.Run(t, [this](int k) {
        std::lock_guard<std::mutex> lock(mutex_);
        return static_cast<bool>(started_[k]);
      });
    } catch (...) {  // a thread must not end in an exception
      st = StatusOfException(std::current_exception());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    out_[t].status = std::move(st);
    finished_.push_back(t);
    cv_.notify_one();
  }

  // Waits for one call to finish; a failure is named after its call and
  // stops new starts, a success releases the calls waiting on it.
  void CollectOne() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return !finished_.empty(); });
    const int t = finished_.front();
    finished_.pop_front();
    --running_;
    out_[t].info = calls_[t]->info();
    if (!out_[t].status.ok()) {
      if (failed_ < 0) failed_ = t;
      out_[t].status =
          Status(out_[t].status.code(), CallName(t, *calls_[t]) + ": " + out_[t].status.message());
      return;
    }
    for (int s : successors_[t]) --waiting_[s];
  }

  // The calls never started (only after a failure): cancelled, naming it.
  void CancelUnstarted() {
    for (int t = 0; t < n_; ++t) {
      if (started_[t]) continue;
      out_[t].status =
          Status(NINF_ERR_CANCELLED, "not run: " + CallName(failed_, *calls_[failed_]) + " failed");
      out_[t].info.error = NINF_ERR_CANCELLED;
    }
  }

  const std::vector<std::unique_ptr<RemoteCall>> &calls_;
  const BlockPlan &plan_;
  KeptData &kept_;
  const int n_;
  std::vector<Outcome> out_;
  std::vector<int> waiting_;  // per call, its unfinished predecessors
  std::vector<std::vector<int>> successors_;
  std::vector<bool> started_;  // written under mutex_: re-runs read it from call threads
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<int> finished_;  // calls ended, not yet collected; under mutex_
  std::vector<std::thread> threads_;
  std::size_t running_ = 0;
  int failed_ = -1;  // the first call that failed, or -1
};

// Runs the calls as the graph allows (see BlockRun). Returns each call's
// outcome.
std::vector<Outcome> RunBlock(const std::vector<std::unique_ptr<RemoteCall>> &calls,
                              const BlockGraph &graph, const BlockPlan &plan, KeptData &kept) {
  BlockRun run(calls, graph, plan, kept);
  return run.Go();
}

}  // namespace

Status BeginTransaction() {
  if (open_block)
    return Status(NINF_ERR_INVALID_ARGUMENT, "a transaction block is already open in this thread");
  open_block = std::make_unique<Block>();
  last_block.clear();
  has_last_block = false;
  return Status::Ok();
}

bool InTransaction() { return open_block != nullptr; }

Status AsyncInTransaction() {
  return Status(NINF_ERR_INVALID_ARGUMENT,
                "Ninf_call_async inside a transaction block: use Ninf_call, which the block runs "
                "concurrently");
}

Status RecordCall(std::unique_ptr<RemoteCall> call) {
  if (!open_block) return Status(NINF_ERR_INVALID_ARGUMENT, "no transaction block is open");
  call->arguments().OwnStrings();
  call->Detach();
  open_block->calls.push_back(std::move(call));
  return Status::Ok();
}

Status DiscardInTransaction(const void *array) {
  if (!open_block) return Status(NINF_ERR_INVALID_ARGUMENT, "no transaction block is open");
  const auto at = reinterpret_cast<uintptr_t>(array);
  uintptr_t end = 0;
  for (const auto &c : open_block->calls)
    for (const ArrayUse &u : UsesOf(c->arguments()))
      if (u.begin == at) end = std::max(end, u.end);
  if (!array || end == 0)
    return Status(NINF_ERR_INVALID_ARGUMENT,
                  "Ninf_transaction_discard: no recorded array of this block starts there");
  open_block->discarded.push_back({at, end});
  return Status::Ok();
}

Status EndTransaction() {
  if (!open_block) return Status(NINF_ERR_INVALID_ARGUMENT, "no transaction block is open");
  std::unique_ptr<Block> block = std::move(open_block);
  std::vector<CallUses> uses;
  for (const auto &c : block->calls) uses.push_back(UsesOf(c->arguments()));
  const BlockGraph graph = BuildBlockGraph(uses);
  // In the caller's addresses, before the calls are pointed at the block's memory.
  // Over TLS, kept data is forwarded only when every call's server says
  // its executables fetch over TLS (its tls_ca: `fetch_tls`); a TLS ninfd
  // refuses a plaintext fetch (docs/protocol.md), so otherwise the arrays
  // come back through the client's own TLS connections.
  const ClientOptions o = Options();
  const bool fetch_tls = std::all_of(block->calls.begin(), block->calls.end(), [](const auto &c) {
    return c->arguments().iface().fetch_tls();
  });
  KeptData kept(block->calls, uses,
                o.forward && (o.tls_ca.empty() || fetch_tls)
                    ? PlanForwards(block->calls, graph, block->discarded)
                    : ForwardPlan{{},
                                  std::vector<std::vector<int>>(block->calls.size()),
                                  std::vector<std::vector<Range>>(block->calls.size())});
  BlockMemory memory(uses);
  for (const auto &c : block->calls) {
    ArgumentList &args = c->arguments();
    for (int i = 0; i < args.iface().params_size(); ++i)
      if (IsArray(args.iface().params(i)) && args.pointer(i))
        args.set_pointer(i, memory.Translate(args.pointer(i)));
  }
  for (int t = 0; t < static_cast<int>(block->calls.size()); ++t) kept.Apply(t);
  const BlockPlan plan = PlanBlock(block->calls, graph, kept.plan());
  last_block = RunBlock(block->calls, graph, plan, kept);
  kept.ReleaseAll();
  has_last_block = true;
  for (const Outcome &o : last_block)
    if (!o.status.ok() && o.status.code() != NINF_ERR_CANCELLED) return o.status;
  for (const Outcome &o : last_block)
    if (!o.status.ok()) return o.status;
  memory.Commit(std::move(block->discarded));
  return Status::Ok();
}

int LastBlockCalls() { return has_last_block ? static_cast<int>(last_block.size()) : -1; }

Status LastBlockCall(int index, Ninf_call_info *info, std::string *detail) {
  if (!has_last_block || index < 0 || index >= static_cast<int>(last_block.size()))
    return Status(NINF_ERR_INVALID_ID,
                  "no call " + std::to_string(index) + " in this thread's last transaction block");
  const Outcome &o = last_block[static_cast<std::size_t>(index)];
  if (info) {
    *info = o.info;
    info->error = o.status.code();
  }
  if (detail) *detail = o.status.message();
  return Status::Ok();
}

}  // namespace ninf::client
