/*
 * fortran_state.h - what the entry points of libninf_fortran share: the
 * binding's own last error and the end of an asynchronous call. Internal.
 *
 * libninf keeps the last error of every call it runs. The binding has two
 * errors of its own that happen outside any libninf call: a converted
 * integer that does not fit on copy-back, and the first failure among the
 * calls Ninf_wait_all waited for one by one. They are kept here, per
 * thread, until the next call through the module, and Ninf_perror and
 * friends show them instead of libninf's.
 */
#ifndef NINF_FORTRAN_STATE_H
#define NINF_FORTRAN_STATE_H

#include "client/ninf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The 30 optional arguments of the module's call interfaces. */
#define FORTRAN_PARAMS                                                                          \
  CFI_cdesc_t *a1, CFI_cdesc_t *a2, CFI_cdesc_t *a3, CFI_cdesc_t *a4, CFI_cdesc_t *a5,          \
      CFI_cdesc_t *a6, CFI_cdesc_t *a7, CFI_cdesc_t *a8, CFI_cdesc_t *a9, CFI_cdesc_t *a10,     \
      CFI_cdesc_t *a11, CFI_cdesc_t *a12, CFI_cdesc_t *a13, CFI_cdesc_t *a14, CFI_cdesc_t *a15, \
      CFI_cdesc_t *a16, CFI_cdesc_t *a17, CFI_cdesc_t *a18, CFI_cdesc_t *a19, CFI_cdesc_t *a20, \
      CFI_cdesc_t *a21, CFI_cdesc_t *a22, CFI_cdesc_t *a23, CFI_cdesc_t *a24, CFI_cdesc_t *a25, \
      CFI_cdesc_t *a26, CFI_cdesc_t *a27, CFI_cdesc_t *a28, CFI_cdesc_t *a29, CFI_cdesc_t *a30
#define FORTRAN_ARGS_ARRAY                                                                     \
  {                                                                                            \
    a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, \
        a21, a22, a23, a24, a25, a26, a27, a28, a29, a30                                       \
  }

/* Forgets the binding's error: every entry point starts with it. */
NINF_EXPORT void ninf__fortran_clear_error(void);

/* Sets the binding's error (code from NINF_ERROR_MAP). */
void fortran_set_error(int code, const char *detail);

/* Ends the record of asynchronous call `id`, if it has one: copies its
 * converted arrays back when `succeeded`, frees its temporaries. Returns 0,
 * or -1 after setting the binding's error when a copy-back failed. */
int fortran_finish_pending(int id, int succeeded);

#ifdef __cplusplus
}
#endif

#endif /* NINF_FORTRAN_STATE_H */
