/*
 * fortran_pending.h - asynchronous calls that hold temporaries (converted
 * integer arrays, string copies) until they have been waited for; then the
 * converted OUT/INOUT arrays are copied back and the temporaries freed.
 * Calls without temporaries are not recorded. Thread-safe. Internal to
 * libninf_fortran.
 */
#ifndef NINF_FORTRAN_PENDING_H
#define NINF_FORTRAN_PENDING_H

#include "client/fortran/fortran_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Records `call` (heap-allocated; the table owns it from now on) under
 * session id `id`. The record is its own list node, so this cannot fail. */
void fortran_pending_add(int id, fortran_call *call);

/* Removes and returns the record of `id`, or NULL if there is none. The
 * caller finishes it (fortran_call_copy_back, fortran_call_release) and
 * frees it. */
fortran_call *fortran_pending_take(int id);

/* The ids recorded now, in a malloc'ed array of *count entries (NULL when
 * empty or out of memory). */
int *fortran_pending_ids(int *count);

#ifdef __cplusplus
}
#endif

#endif /* NINF_FORTRAN_PENDING_H */
