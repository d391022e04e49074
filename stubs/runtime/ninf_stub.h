/*
 * ninf_stub.h - the runtime every Ninf executable links.
 *
 * ninf-gen turns each IDL `Define` into a small C file whose main() hands the
 * runtime two things: the function's interface (a serialized
 * ninf.wire.FunctionInterface) and an invoke function that calls the real
 * routine. The runtime does everything else: it takes the client connection
 * from ninfd, evaluates dimensions from the IN scalars, receives arrays
 * straight into 64-byte-aligned buffers, calls invoke, and sends OUT/INOUT
 * arrays back. Generated code never marshals anything by hand.
 *
 * The argument vector passed to invoke has one entry per IDL parameter, in
 * IDL order:
 *   - IN scalar of type char/short/int/long/float/double/scomplex/dcomplex:
 *     a pointer to the value, of that C type (int *, double *, ...; scomplex
 *     is float _Complex, dcomplex is double _Complex);
 *   - IN string: the NUL-terminated string itself (char *);
 *   - array or pointer parameter (any mode): the buffer (double *, int *, ...).
 * Every pointer is valid only during the invoke call.
 */
#ifndef NINF_STUB_H
#define NINF_STUB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define NINF_STUB_EXPORT __attribute__((visibility("default")))
#else
#define NINF_STUB_EXPORT
#endif

typedef void (*ninf_stub_invoke_fn)(void **args);

/*
 * The whole main() of an executable. `iface` holds `iface_len` bytes of a
 * serialized ninf.wire.FunctionInterface.
 *
 * Started by ninfd, it serves the call(s) handed to it on fd 3 and returns
 * the process exit status. Started by hand it understands:
 *   --interface   print the interface in protobuf text format and exit 0;
 *   --noop        exit 0 at once (measures the bare start-up cost);
 * and otherwise explains that it is started by ninfd.
 */
NINF_STUB_EXPORT int ninf_stub_main(int argc, char **argv, const unsigned char *iface,
                                    size_t iface_len, ninf_stub_invoke_fn invoke);

/*
 * The ranks of a parallel executable (Backend "MPI"), as the runtime sees
 * them; ninf_stub_mpi.c fills it in from MPI (ninf_stub_mpi.h), so that the
 * runtime itself links no MPI library.
 *
 * Rank 0 is the one ninfd and the client talk to: it receives the call and
 * passes it on with `share`; every other rank waits in `share` for the next
 * call, runs the routine with the same IN scalars (and, unless the interface
 * says distribute "root", copies of the IN and INOUT arrays), and goes back
 * to waiting. Results go back from rank 0 only.
 */
typedef struct ninf_stub_team {
  int rank;
  int size;
  void *context;
  /*
   * Copies `bytes` from rank 0's `buf` into every other rank's `buf`. Every
   * rank calls it with the same sizes in the same order. `idle`: the caller
   * may wait long here (between calls), so it should sleep rather than spin.
   * Returns 0, or nonzero on failure.
   */
  int (*share)(void *context, void *buf, size_t bytes, int idle);
} ninf_stub_team;

/*
 * ninf_stub_main for a team: every rank calls it. Returns the process exit
 * status (the same on every rank: rank 0's).
 */
NINF_STUB_EXPORT int ninf_stub_team_main(int argc, char **argv, const unsigned char *iface,
                                         size_t iface_len, ninf_stub_invoke_fn invoke,
                                         const ninf_stub_team *team);

#ifdef __cplusplus
}
#endif

#endif /* NINF_STUB_H */
