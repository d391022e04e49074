#include "loadtest/workload.h"

#include <cmath>
#include <random>
#include <vector>

namespace ninf::loadtest {
namespace {

// The outcome of the Ninf_call that returned `rc`, with where its time went
// (the error is read first: Ninf_get_call_info sets the thread's last error).
CallResult Finish(int rc) {
  CallResult r;
  if (rc != 0) {
    r.code = Ninf_get_error();
    // A server that does not answer is not a call that failed there: the
    // load test backs off and names the server (run.cc).
    r.outcome = r.code == NINF_ERR_CONNECT ? "unreachable" : "error";
    r.detail = std::string(Ninf_error_string(Ninf_get_error())) + ": " + Ninf_get_error_detail();
  } else {
    r.ok = true;
    r.outcome = "ok";
  }
  if (Ninf_get_call_info(&r.info) != 0) r.info = Ninf_call_info{};  // it never got that far
  return r;
}

// dgesv (A's LU factors and x come back) or, `only_x`, the standard
// library's linpack (only x comes back: the Ninf paper's Linpack traffic).
class Linpack : public Workload {
 public:
  Linpack(int n, bool only_x) : n_(n), only_x_(only_x) {}

  CallResult Call(const std::string &prefix, uint64_t seed) override {
    const std::size_t nn = static_cast<std::size_t>(n_) * n_;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    a0_.resize(nn);
    b0_.resize(n_);
    for (double &x : a0_) x = u(rng);
    for (double &x : b0_) x = u(rng);
    a_ = a0_;
    b_ = b0_;
    ipiv_.assign(n_, 0);
    int info = -1;
    const std::string name = prefix + (only_x_ ? "linpack" : "dgesv");
    // linpack's ipiv is WORK: the executable's scratch, never sent (NULL).
    const int rc =
        only_x_ ? Ninf_call(name.c_str(), n_, a_.data(), b_.data(), nullptr, &info)
                : Ninf_call(name.c_str(), n_, 1, a_.data(), n_, ipiv_.data(), b_.data(), n_, &info);
    CallResult r = Finish(rc);
    if (!r.ok) return r;
    const double residual = Residual();
    if (info != 0 || !(residual < 16.0)) {
      r.ok = false;
      r.outcome = "wrong";
      r.detail = "info " + std::to_string(info) + ", scaled residual " + std::to_string(residual);
    }
    return r;
  }

  double Flops() const override {
    const double n = n_;
    return 2.0 * n * n * n / 3.0 + 2.0 * n * n;
  }

 private:
  // ||A x - b||_inf / (||A||_inf ||x||_inf n eps), column-major A.
  double Residual() const {
    double r = 0, anorm = 0, xnorm = 0;
    std::vector<double> ax(n_, 0.0), row(n_, 0.0);
    for (int j = 0; j < n_; ++j) {
      const double *col = &a0_[static_cast<std::size_t>(j) * n_];
      for (int i = 0; i < n_; ++i) {
        ax[i] += col[i] * b_[j];
        row[i] += std::fabs(col[i]);
      }
    }
    for (int i = 0; i < n_; ++i) {
      r = std::max(r, std::fabs(ax[i] - b0_[i]));
      anorm = std::max(anorm, row[i]);
      xnorm = std::max(xnorm, std::fabs(b_[i]));
    }
    return r / (anorm * xnorm * n_ * 2.220446049250313e-16);
  }

  int n_;
  bool only_x_;
  std::vector<double> a0_, b0_, a_, b_;
  std::vector<int> ipiv_;
};

struct EpReference {
  int m;
  double sx, sy;
};
constexpr EpReference kEpReference[] = {
    {24, -3.247834652034740e+3, -6.958407078382297e+3},
    {25, -2.863319731645753e+3, -6.320053679109499e+3},
    {28, -4.295875165629892e+3, -1.580732573678431e+4},
};

class Ep : public Workload {
 public:
  explicit Ep(int m) : m_(m) {}

  CallResult Call(const std::string &prefix, uint64_t) override {
    double sx = 0, sy = 0, q[10] = {};
    const std::string name = prefix + "ep";
    const int rc = Ninf_call(name.c_str(), static_cast<long>(m_), &sx, &sy, q);
    CallResult r = Finish(rc);
    if (!r.ok) return r;
    std::string wrong = Check(sx, sy, q);
    if (!wrong.empty()) {
      r.ok = false;
      r.outcome = "wrong";
      r.detail = wrong;
    }
    return r;
  }

  // NAS counts 2^(m+1) random numbers; the seed paper counts Mops the same way.
  double Flops() const override { return std::ldexp(1.0, m_ + 1); }

 private:
  std::string Check(double sx, double sy, const double q[10]) const {
    for (const EpReference &ref : kEpReference) {
      if (ref.m != m_) continue;
      if (std::fabs((sx - ref.sx) / ref.sx) > 1e-8 || std::fabs((sy - ref.sy) / ref.sy) > 1e-8)
        return "sx/sy differ from the NAS reference";
      return {};
    }
    double pairs = 0;
    for (int i = 0; i < 10; ++i) pairs += q[i];
    const double expected = std::ldexp(1.0, m_) * M_PI / 4;
    if (std::fabs(pairs - expected) > 0.01 * expected + 100)
      return "the counts sum to " + std::to_string(pairs) + ", not about " +
             std::to_string(expected);
    return {};
  }

  int m_;
};

}  // namespace

bool ParseWorkload(const std::string &text, WorkloadKind *out) {
  if (text == "linpack")
    *out = WorkloadKind::kLinpack;
  else if (text == "linpack-x")
    *out = WorkloadKind::kLinpackX;
  else if (text == "ep")
    *out = WorkloadKind::kEp;
  else
    return false;
  return true;
}

const char *WorkloadName(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kLinpack:
      return "linpack";
    case WorkloadKind::kLinpackX:
      return "linpack-x";
    case WorkloadKind::kEp:
      return "ep";
  }
  return "?";
}

std::unique_ptr<Workload> MakeWorkload(WorkloadKind kind, int size) {
  switch (kind) {
    case WorkloadKind::kLinpack:
      return std::make_unique<Linpack>(size, false);
    case WorkloadKind::kLinpackX:
      return std::make_unique<Linpack>(size, true);
    case WorkloadKind::kEp:
      return std::make_unique<Ep>(size);
  }
  return nullptr;
}

}  // namespace ninf::loadtest
