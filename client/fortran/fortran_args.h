/*
 * fortran_args.h - the actual arguments of one Fortran call, checked against
 * the function's interface and handed to libninf (ninf_binding.h).
 *
 * The module's interfaces declare every argument as `type(*), dimension(..),
 * optional`, so each one arrives here as a C descriptor that carries its
 * type, kind, rank, shape and contiguity. This layer checks each against its
 * IDL parameter, converts what is safe to convert (integer kinds, through a
 * range check and, for arrays, a temporary copy), refuses the rest with a
 * message that names the argument, and copies converted OUT/INOUT arrays
 * back when the call has ended. Internal to libninf_fortran.
 */
#ifndef NINF_FORTRAN_ARGS_H
#define NINF_FORTRAN_ARGS_H

#include <ISO_Fortran_binding.h>
#include <stddef.h>

#include "client/ninf_binding.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The number of optional arguments of Ninf_call and grpc_call in ninf.f90. */
enum { NINF_FORTRAN_MAX_ARGS = 30 };

/* One IDL parameter and the actual argument bound to it. */
typedef struct {
  char name[64]; /* the parameter's name, kept for messages after the call */
  /* The actual argument. Its descriptor lives only as long as the Fortran
   * call statement, so what copy-back needs later is kept here. */
  void *base;          /* its first element */
  size_t elem_len;     /* bytes per element */
  int is_character;    /* CHARACTER: counts are in characters */
  int mode;            /* NINF_MODE_* */
  int type;            /* NINF_TYPE_* */
  int rank;            /* the actual argument's rank (0: a scalar) */
  size_t count;        /* elements of the actual (bytes for CHARACTER); SIZE_MAX: assumed-size */
  size_t transfer;     /* elements the call moves, from verify_shape(); count until then */
  void *temp;          /* converted copy of an integer array of another kind, or NULL */
  size_t temp_size;    /* bytes per element of temp: the IDL type's */
  size_t first_bad;    /* first element of temp that did not fit the IDL type, or SIZE_MAX */
  long long bad_value; /* its value */
  char *text;          /* NUL-terminated copy of a string argument, or NULL */
} fortran_arg;

typedef struct fortran_call {
  CFI_cdesc_t *actual[NINF_FORTRAN_MAX_ARGS]; /* NULL where absent; valid until the call left */
  int nactual;       /* arguments present: index of the last present one + 1 */
  const char *label; /* the function's name for messages, or NULL */
  int started;       /* set by fortran_call_started() */
  char early[256];   /* an error found before the call, reported through collect() */
  fortran_arg *args; /* one per IDL parameter, filled by collect() */
  int nargs;
  ninf_binding_args binding; /* the callbacks, with ctx pointing at this record */
  int id;                    /* session id while in the pending table */
  struct fortran_call *next; /* the pending table's link */
} fortran_call;

/* Records the actual arguments (absent ones are NULL) and wires the binding
 * callbacks to `call`. A gap (an absent argument before a present one) is
 * remembered and refused by collect(). */
void fortran_call_init(fortran_call *call, CFI_cdesc_t *const actual[NINF_FORTRAN_MAX_ARGS]);

/* Makes collect() fail with `message` (errors found by the caller before
 * the call, such as a bad session id argument, travel the same path as
 * argument errors so that Ninf_perror shows them). */
void fortran_call_refuse(fortran_call *call, const char *message);

/* Forgets the descriptors once the call has left: collect() must not run
 * after that. */
void fortran_call_started(fortran_call *call);

/* Whether the call holds temporaries that must outlive its start (and be
 * copied back or freed when it has been waited for). */
int fortran_call_has_temporaries(const fortran_call *call);

/* Copies converted OUT and INOUT arrays back into the actual arguments
 * (the elements the call moved). Returns 0, or -1 with a message in err
 * when a returned integer does not fit the actual argument's kind. */
int fortran_call_copy_back(fortran_call *call, char *err, size_t errlen);

/* Frees the temporaries; `call` itself is the caller's. */
void fortran_call_release(fortran_call *call);

/* A NUL-terminated copy of a CHARACTER descriptor without its trailing
 * blanks (Fortran pads strings with blanks; C names never end in one).
 * NULL for a descriptor that is not a scalar default CHARACTER, or when
 * out of memory. Free with free(). */
char *fortran_string(const CFI_cdesc_t *desc);

#ifdef __cplusplus
}
#endif

#endif /* NINF_FORTRAN_ARGS_H */
