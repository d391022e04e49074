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

#ifdef __cplusplus
}
#endif

#endif /* NINF_STUB_H */
