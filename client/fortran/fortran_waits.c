/*
 * fortran_waits.c - the waits of module ninf, which end the records of
 * asynchronous calls with temporaries (copy-back, free), and the binding's
 * own last error (see fortran_state.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/fortran/fortran_pending.h"
#include "client/fortran/fortran_state.h"
#include "client/grpc.h"

static _Thread_local int t_code;
static _Thread_local char t_detail[512];

NINF_EXPORT void ninf__fortran_clear_error(void) {
  t_code = NINF_OK;
  t_detail[0] = '\0';
}

void fortran_set_error(int code, const char *detail) {
  t_code = code;
  snprintf(t_detail, sizeof t_detail, "%s", detail ? detail : "");
}

int fortran_finish_pending(int id, int succeeded) {
  fortran_call *call = fortran_pending_take(id);
  if (!call) return 0;
  int rc = 0;
  char err[512];
  if (succeeded && fortran_call_copy_back(call, err, sizeof err) != 0) {
    fortran_set_error(NINF_ERR_ARGUMENT_MISMATCH, err);
    rc = -1;
  }
  fortran_call_release(call);
  free(call);
  return rc;
}

/* True when a wait failed because another wait (another thread's, or
 * grpc_finalize's) collected the call: the record is that wait's to finish,
 * copy-back included, or grpc_finalize's to free. */
static int collected_elsewhere(int rc) {
  return rc != 0 && Ninf_get_error() == NINF_ERR_INVALID_ID;
}

NINF_EXPORT int ninf__fortran_wait(int id) {
  ninf__fortran_clear_error();
  int rc = Ninf_wait(id);
  if (collected_elsewhere(rc)) return rc;
  if (fortran_finish_pending(id, rc == 0) != 0) rc = -1;
  return rc;
}

NINF_EXPORT int ninf__fortran_wait_any(int *id) {
  ninf__fortran_clear_error();
  int found = -1;
  int rc = Ninf_wait_any(&found);
  if (id) *id = found;
  if (found >= 0 && fortran_finish_pending(found, rc == 0) != 0) rc = -1;
  return rc;
}

/* Calls with temporaries are waited for one by one, so that each is copied
 * back only if it succeeded; Ninf_wait_all then waits for the others. The
 * first failure is kept as the binding's error, as Ninf_wait_all would. */
NINF_EXPORT int ninf__fortran_wait_all(void) {
  ninf__fortran_clear_error();
  int first_code = NINF_OK;
  char first_detail[512] = "";
  int n = 0;
  int *ids = fortran_pending_ids(&n);
  for (int i = 0; i < n; i++) {
    int rc = Ninf_wait(ids[i]);
    if (collected_elsewhere(rc)) continue;
    int code = rc == 0 ? NINF_OK : Ninf_get_error();
    const char *detail = Ninf_get_error_detail();
    if (fortran_finish_pending(ids[i], rc == 0) != 0) code = t_code, detail = t_detail;
    if (code != NINF_OK && code != NINF_ERR_INVALID_ID && first_code == NINF_OK) {
      first_code = code;
      snprintf(first_detail, sizeof first_detail, "%s", detail);
    }
  }
  free(ids);
  int rc = Ninf_wait_all();
  if (first_code != NINF_OK) {
    fortran_set_error(first_code, first_detail);
    rc = -1;
  }
  return rc;
}

NINF_EXPORT int ninf__fortran_grpc_wait(int id) {
  ninf__fortran_clear_error();
  grpc_error_t e = grpc_wait(id);
  if (e == GRPC_INVALID_SESSION_ID) return e; /* as collected_elsewhere() */
  if (fortran_finish_pending(id, e == GRPC_NO_ERROR) != 0) e = GRPC_OTHER_ERROR_CODE;
  return e;
}

NINF_EXPORT int ninf__fortran_grpc_wait_any(int *id) {
  ninf__fortran_clear_error();
  int found = GRPC_SESSIONID_VOID;
  grpc_error_t e = grpc_wait_any(&found);
  if (id) *id = found;
  if (found >= 0 && fortran_finish_pending(found, e == GRPC_NO_ERROR) != 0)
    e = GRPC_OTHER_ERROR_CODE;
  return e;
}

/* As ninf__fortran_wait_all, with GridRPC's codes. */
NINF_EXPORT int ninf__fortran_grpc_wait_all(void) {
  ninf__fortran_clear_error();
  int failed = 0;
  int n = 0;
  int *ids = fortran_pending_ids(&n);
  for (int i = 0; i < n; i++) {
    grpc_error_t e = grpc_wait(ids[i]);
    if (e == GRPC_INVALID_SESSION_ID) continue; /* as collected_elsewhere() */
    if (fortran_finish_pending(ids[i], e == GRPC_NO_ERROR) != 0) e = GRPC_OTHER_ERROR_CODE;
    if (e != GRPC_NO_ERROR && e != GRPC_INVALID_SESSION_ID) failed = 1;
  }
  free(ids);
  grpc_error_t e = grpc_wait_all();
  return failed && e == GRPC_NO_ERROR ? GRPC_SESSION_FAILED : e;
}

/* grpc_finalize cancels and waits for every call: their temporaries go. */
NINF_EXPORT int ninf__fortran_grpc_finalize(void) {
  ninf__fortran_clear_error();
  grpc_error_t e = grpc_finalize();
  if (e != GRPC_NO_ERROR) return e;
  int n = 0;
  int *ids = fortran_pending_ids(&n);
  for (int i = 0; i < n; i++) fortran_finish_pending(ids[i], 0);
  free(ids);
  return e;
}

NINF_EXPORT void ninf__fortran_perror(const char *msg) {
  if (t_code == NINF_OK) {
    Ninf_perror(msg);
    return;
  }
  if (msg && *msg) fprintf(stderr, "%s: ", msg);
  fprintf(stderr, "%s: %s\n", Ninf_error_string(t_code), t_detail);
}

NINF_EXPORT int ninf__fortran_get_error(void) {
  return t_code != NINF_OK ? t_code : Ninf_get_error();
}

NINF_EXPORT const char *ninf__fortran_error_detail(void) {
  return t_code != NINF_OK ? t_detail : Ninf_get_error_detail();
}
