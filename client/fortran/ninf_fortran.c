/*
 * ninf_fortran.c - the C half of module ninf: what Ninf_call,
 * Ninf_call_async, grpc_call and grpc_call_async of ninf.f90 bind to.
 *
 * Each entry point receives the actual arguments as descriptors (absent
 * ones as NULL), lets fortran_args.c check and convert them while libninf
 * prepares the call (ninf_binding.h), and disposes of the temporaries: at
 * once for a synchronous call, when it has been waited for for an
 * asynchronous one (fortran_pending.c, fortran_waits.c).
 */
#include <ISO_Fortran_binding.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/fortran/fortran_args.h"
#include "client/fortran/fortran_pending.h"
#include "client/fortran/fortran_state.h"
#include "client/fortran/fortran_types.h"
#include "client/grpc.h"
#include "client/ninf_binding.h"

/* Sets up `call` for a call of the function named by the CHARACTER
 * descriptor `name`; returns the name as a C string (free it), or NULL
 * after arranging for the call to be refused. */
static char *start_named(fortran_call *call, const CFI_cdesc_t *name,
                         CFI_cdesc_t *const actual[NINF_FORTRAN_MAX_ARGS]) {
  fortran_call_init(call, actual);
  char *text = fortran_string(name);
  if (!text) fortran_call_refuse(call, "the function name must be a CHARACTER string");
  call->label = text;
  return text;
}

/* The end of a synchronous call: converted arrays are copied back only when
 * the call succeeded. Returns 0, or -1 when a copy-back failed. */
static int finish_sync(fortran_call *call, int succeeded) {
  fortran_call_started(call);
  int rc = 0;
  char err[512];
  if (succeeded && fortran_call_copy_back(call, err, sizeof err) != 0) {
    fortran_set_error(NINF_ERR_ARGUMENT_MISMATCH, err);
    rc = -1;
  }
  fortran_call_release(call);
  return rc;
}

/* After an asynchronous start: a running call that holds temporaries is
 * recorded until it is waited for; anything else is freed now. */
static void keep_async(fortran_call *call, int id) {
  fortran_call_started(call);
  call->label = NULL;
  if (id >= 0 && fortran_call_has_temporaries(call)) {
    fortran_pending_add(id, call);
    return;
  }
  fortran_call_release(call);
  free(call);
}

/* Calls recorded in this thread's transaction block that hold temporaries
 * (converted integer arrays, string copies): they run at the block's end,
 * so their temporaries live until then and are copied back only if the
 * block succeeded. A list of heap records, newest first. */
typedef struct block_call {
  fortran_call call;
  struct block_call *next;
} block_call;
static _Thread_local block_call *block_calls;

/* A recorded call: keeps its temporaries for the block's end. Returns 0,
 * or -1 when there is no memory for the record. */
static int keep_for_block(fortran_call *call) {
  fortran_call_started(call);
  if (!fortran_call_has_temporaries(call)) {
    fortran_call_release(call);
    return 0;
  }
  block_call *kept = malloc(sizeof *kept);
  if (!kept) {
    fortran_call_release(call);
    fortran_set_error(NINF_ERR_NO_MEMORY, "no memory to keep the call for the block's end");
    return -1;
  }
  kept->call = *call; /* after the start nothing points into the record */
  kept->next = block_calls;
  block_calls = kept;
  return 0;
}

NINF_EXPORT int ninf__fortran_call(CFI_cdesc_t *name, FORTRAN_PARAMS) {
  CFI_cdesc_t *actual[NINF_FORTRAN_MAX_ARGS] = FORTRAN_ARGS_ARRAY;
  ninf__fortran_clear_error();
  fortran_call call;
  char *text = start_named(&call, name, actual);
  int rc = Ninf_call_binding(text ? text : "", &call.binding);
  if (rc == 0 && Ninf_transaction_active()) {
    rc = keep_for_block(&call);
  } else if (finish_sync(&call, rc == 0) != 0) {
    rc = -1;
  }
  free(text);
  return rc;
}

/* Two-phase calls (ninf.h). The ticket is a CHARACTER variable: written
 * blank-padded by submit (an error if it is too short), read without its
 * trailing blanks by collect. */
NINF_EXPORT int ninf__fortran_call_submit(CFI_cdesc_t *ticket, CFI_cdesc_t *name, FORTRAN_PARAMS) {
  CFI_cdesc_t *actual[NINF_FORTRAN_MAX_ARGS] = FORTRAN_ARGS_ARRAY;
  ninf__fortran_clear_error();
  if (!ticket || !ticket->base_addr || ticket->type != CFI_type_char || ticket->rank != 0) {
    fortran_set_error(NINF_ERR_INVALID_ARGUMENT, "the ticket must be a CHARACTER variable");
    return -1;
  }
  fortran_call call;
  char *text = start_named(&call, name, actual);
  char buf[NINF_TICKET_SIZE];
  int rc = Ninf_call_submit_binding(buf, sizeof buf, text ? text : "", &call.binding);
  (void)finish_sync(&call, 0); /* nothing came back: no copy-back */
  free(text);
  if (rc != 0) return rc;
  const size_t len = strlen(buf), room = ticket->elem_len;
  if (len > room) {
    fortran_set_error(NINF_ERR_INVALID_ARGUMENT,
                      "the ticket variable is too short: declare it CHARACTER(len=256)");
    return -1;
  }
  memcpy(ticket->base_addr, buf, len);
  memset((char *)ticket->base_addr + len, ' ', room - len);
  return 0;
}

NINF_EXPORT int ninf__fortran_call_collect(CFI_cdesc_t *ticket, CFI_cdesc_t *name, FORTRAN_PARAMS) {
  CFI_cdesc_t *actual[NINF_FORTRAN_MAX_ARGS] = FORTRAN_ARGS_ARRAY;
  ninf__fortran_clear_error();
  char *ticket_text = fortran_string(ticket);
  if (!ticket_text) {
    fortran_set_error(NINF_ERR_INVALID_ARGUMENT, "the ticket must be a CHARACTER string");
    return -1;
  }
  fortran_call call;
  char *text = start_named(&call, name, actual);
  int rc = Ninf_call_collect_binding(ticket_text, text ? text : "", &call.binding);
  if (finish_sync(&call, rc == 0) != 0) rc = -1;
  free(text);
  free(ticket_text);
  return rc;
}

NINF_EXPORT int ninf__fortran_transaction_begin(void) {
  ninf__fortran_clear_error();
  return Ninf_transaction_begin();
}

/* Runs the block, then copies back the converted arrays of its calls (only
 * if it succeeded) and frees their temporaries. */
NINF_EXPORT int ninf__fortran_transaction_end(void) {
  ninf__fortran_clear_error();
  int rc = Ninf_transaction_end();
  const int succeeded = rc == 0;
  char err[512];
  while (block_calls) {
    block_call *kept = block_calls;
    block_calls = kept->next;
    if (succeeded && fortran_call_copy_back(&kept->call, err, sizeof err) != 0) {
      fortran_set_error(NINF_ERR_ARGUMENT_MISMATCH, err);
      rc = -1;
    }
    fortran_call_release(&kept->call);
    free(kept);
  }
  return rc;
}

NINF_EXPORT int ninf__fortran_transaction_discard(CFI_cdesc_t *array) {
  ninf__fortran_clear_error();
  return Ninf_transaction_discard(array ? array->base_addr : NULL);
}

/* The error code of call `index` (1-based, as Fortran counts) of the
 * thread's last block; -1 for no such call. */
NINF_EXPORT int ninf__fortran_transaction_call_error(int index) {
  Ninf_call_info info;
  return Ninf_transaction_call_info(index - 1, &info) == 0 ? info.error : -1;
}

NINF_EXPORT int ninf__fortran_call_async(CFI_cdesc_t *name, FORTRAN_PARAMS) {
  CFI_cdesc_t *actual[NINF_FORTRAN_MAX_ARGS] = FORTRAN_ARGS_ARRAY;
  ninf__fortran_clear_error();
  fortran_call *call = malloc(sizeof *call);
  if (!call) {
    fortran_set_error(NINF_ERR_NO_MEMORY, "no memory for the call's record");
    return -1;
  }
  char *text = start_named(call, name, actual);
  int id = Ninf_call_async_binding(text ? text : "", &call->binding);
  keep_async(call, id);
  free(text);
  return id;
}

NINF_EXPORT int ninf__fortran_grpc_call(grpc_function_handle_t *handle, FORTRAN_PARAMS) {
  CFI_cdesc_t *actual[NINF_FORTRAN_MAX_ARGS] = FORTRAN_ARGS_ARRAY;
  ninf__fortran_clear_error();
  fortran_call call;
  fortran_call_init(&call, actual);
  grpc_error_t e = grpc_call_binding(handle, &call.binding);
  if (finish_sync(&call, e == GRPC_NO_ERROR) != 0) e = GRPC_OTHER_ERROR_CODE;
  return e;
}

/* The session id may be an INTEGER of kind 4 or 8 (-fdefault-integer-8):
 * it is checked like any argument, and a bad one refuses the call. */
static int session_id_ok(fortran_call *call, const CFI_cdesc_t *id) {
  int ok = id && id->rank == 0 && (id->type & CFI_type_mask) == CFI_type_Integer &&
           (id->elem_len == 4 || id->elem_len == 8);
  if (!ok && id) {
    char got[96], message[160];
    fortran_describe_actual(id, got, sizeof got);
    snprintf(message, sizeof message, "session id: expected an INTEGER scalar, got %s", got);
    fortran_call_refuse(call, message);
  }
  return ok;
}

NINF_EXPORT int ninf__fortran_grpc_call_async(grpc_function_handle_t *handle,
                                              CFI_cdesc_t *session_id, FORTRAN_PARAMS) {
  CFI_cdesc_t *actual[NINF_FORTRAN_MAX_ARGS] = FORTRAN_ARGS_ARRAY;
  ninf__fortran_clear_error();
  fortran_call *call = malloc(sizeof *call);
  if (!call) {
    fortran_set_error(NINF_ERR_NO_MEMORY, "no memory for the call's record");
    return GRPC_OTHER_ERROR_CODE;
  }
  fortran_call_init(call, actual);
  int id_ok = session_id_ok(call, session_id);
  grpc_sessionid_t id = GRPC_SESSIONID_VOID;
  grpc_error_t e = grpc_call_async_binding(handle, &id, &call->binding);
  if (id_ok) fortran_put_int(session_id->base_addr, session_id->elem_len, id);
  keep_async(call, e == GRPC_NO_ERROR ? id : -1);
  return e;
}
