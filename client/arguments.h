// Marshalling: the argument list of one call, from an interface and the
// caller's values (collected from C varargs, or handed over by a language
// binding) to the ARGS message and the iovecs of the arrays. Sending and
// receiving them is the wire exchange's (exchange.h).
//
// Builds on protocol/ (layout.h array sizes, scalar_codec.h, ninf.proto's
// Args) and call_args.h (reading C varargs); no I/O.
#pragma once

#include <stdarg.h>
#include <sys/uio.h>

#include <memory>
#include <string>
#include <vector>

#include "client/call_args.h"
#include "ninf.pb.h"
#include "protocol/layout.h"
#include "protocol/scalar_codec.h"
#include "protocol/status.h"

namespace ninf::client {

using InterfacePtr = std::shared_ptr<const wire::FunctionInterface>;

// How a parameter's value is read from C varargs (NINF_ARGKIND_*).
ninf_argkind ArgKindOf(const wire::Param &p);

// Reads one value per parameter from *ap, as ArgKindOf says.
std::vector<ninf_argvalue> CollectVarargs(const wire::FunctionInterface &iface, va_list *ap);

class ArgumentList {
 public:
  // Encodes the IN scalars and computes every array's size. Errors:
  // overflowing dimensions, NULL arrays, NULL strings.
  Status Build(InterfacePtr iface, std::vector<ninf_argvalue> values);

  const wire::FunctionInterface &iface() const { return *iface_; }
  const wire::Args &args() const { return args_; }
  const CallLayout &layout() const { return layout_; }
  // IN and INOUT arrays, straight from the caller's memory.
  std::vector<iovec> SendArrays() const { return Arrays(true); }
  // OUT and INOUT arrays: the results land straight in them.
  std::vector<iovec> ReturnArrays() const { return Arrays(false); }
  // The extent of each dimension of array parameter i, outermost first,
  // as this call's IN scalars make them (after a successful Build).
  std::vector<unsigned long long> Extents(int i) const;
  // The caller's memory of parameter i (arrays).
  void *pointer(int i) const { return values_[static_cast<std::size_t>(i)].p; }
  // Points array parameter i elsewhere: a transaction block runs its calls
  // on its own copy of the arrays they write (transaction.h).
  void set_pointer(int i, void *p) { values_[static_cast<std::size_t>(i)].p = p; }
  // Copies the IN strings into the list, so that it outlives the caller's
  // (a recorded call runs after Ninf_call has returned).
  void OwnStrings();
  // Kept data (docs/transactions.md). A block's call may read an IN/INOUT
  // array from a server's store instead of sending it (the ARGS frame
  // carries the reference, the payload not the array), and may leave an
  // OUT/INOUT array in its server's store instead of receiving it (the
  // RESULT names the entry).
  void ReadKept(const wire::DataRef &ref);
  void Keep(int param);
  void ClearKept();
  bool kept(int param) const;
  bool uses_kept_data() const { return args_.refs_size() > 0 || args_.keep_size() > 0; }
  // The arrays' bytes that travel on the client's connection.
  uint64_t send_bytes() const;
  uint64_t return_bytes() const;

  // The IDL's CalcOrder on this call's IN scalars (0 when it gives none):
  // what a metaserver divides by a server's speed.
  double work_flops() const { return work_flops_; }

 private:
  std::vector<iovec> Arrays(bool sending) const;
  bool read_kept(int param) const;

  InterfacePtr iface_;
  std::vector<ninf_argvalue> values_;
  std::vector<int64_t> ints_;  // the IN integer scalars, by parameter: what dimensions read
  std::vector<std::unique_ptr<std::string>> strings_;  // OwnStrings' copies
  wire::Args args_;
  CallLayout layout_;
  double work_flops_ = 0;
};

// Builds `list` from a language binding: it fills in the values from the
// interface, then confirms every array is large enough (ninf_binding.h).
Status BuildFromBinding(InterfacePtr iface, const ninf_binding_args *binding, ArgumentList *list);

}  // namespace ninf::client
