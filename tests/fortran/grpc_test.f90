! grpc_test.f90 - the GridRPC API from Fortran against a real ninfd (its
! address in NINF_SERVER): initialize, handles (default and host:port),
! grpc_call, grpc_call_async with probe, wait, wait_any, wait_all, cancel,
! the error calls, finalize. Prints "ok" lines; exits 1 on the first
! failure.
program grpc_test
  use ninf
  use solve_check
  implicit none
  integer, parameter :: n = 100
  type(grpc_function_handle) :: solver, ep_handle, spare
  real(dp), allocatable, asynchronous :: a(:, :), b(:, :)
  real(dp), allocatable :: a0(:, :), b0(:, :)
  real(dp), asynchronous :: sx, sy, q(10)
  integer, asynchronous :: ipiv(n), info
  integer(8), asynchronous :: ipiv8(n), info8
  integer :: id, done_id, ierr, status
  integer(8) :: id8
  character(len=128) :: server

  call get_environment_variable('NINF_SERVER', server, status=status)
  call check(status == 0, 'NINF_SERVER is set')

  call check(grpc_function_handle_default(spare, 'dgesv') == GRPC_NOT_INITIALIZED, &
             'a handle before grpc_initialize is refused')
  call check(grpc_initialize() == GRPC_NO_ERROR, 'grpc_initialize()')
  call check(grpc_initialize('') == GRPC_ALREADY_INITIALIZED, 'a second grpc_initialize is refused')
  call check(grpc_function_handle_default(solver, 'dgesv') == GRPC_NO_ERROR, &
             'grpc_function_handle_default')
  call check(grpc_function_handle_init(ep_handle, trim(server), 'ep') == GRPC_NO_ERROR, &
             'grpc_function_handle_init with host:port')
  call check(grpc_function_handle_default(spare, 'no_such_function') == GRPC_FUNCTION_NOT_FOUND, &
             'an unknown function is GRPC_FUNCTION_NOT_FOUND')

  ! Synchronous call: the arguments of the local dgesv.
  call random_system(n, a, b, a0, b0)
  ierr = grpc_call(solver, n, 1, a, n, ipiv, b, n, info)
  call check(ierr == GRPC_NO_ERROR .and. info == 0, 'grpc_call dgesv')
  call check(residual_ok(a0, b0, b), 'grpc_call solution')

  ! Asynchronous: probe until done, then wait.
  ierr = grpc_call_async(ep_handle, id, 24, sx, sy, q)
  call check(ierr == GRPC_NO_ERROR .and. id >= 0, 'grpc_call_async ep')
  do while (grpc_probe(id) == GRPC_NOT_COMPLETED)
    call sleep_a_little()
  end do
  call check(grpc_probe(id) == GRPC_NO_ERROR, 'grpc_probe says the call ended')
  call check(grpc_wait(id) == GRPC_NO_ERROR, 'grpc_wait')
  call check(grpc_get_error(id) == GRPC_NO_ERROR, 'grpc_get_error of a finished call')
  call check(verify_ep_class_s(sx, sy), 'asynchronous ep verified')

  ! An INTEGER(8) session id, INTEGER(8) arrays copied back, grpc_wait_any.
  a = a0
  b = b0
  ierr = grpc_call_async(solver, id8, n, 1, a, n, ipiv8, b, n, info8)
  call check(ierr == GRPC_NO_ERROR .and. id8 >= 0, 'grpc_call_async with an INTEGER(8) id')
  ierr = grpc_wait_any(done_id)  ! a statement of its own: .and. may evaluate either side first
  call check(ierr == GRPC_NO_ERROR .and. done_id == id8, 'grpc_wait_any')
  call check(info8 == 0 .and. all(ipiv8 == ipiv), 'INTEGER(8) ipiv and info copied back')

  ! Two calls on two handles, collected by grpc_wait_all.
  a = a0
  b = b0
  call check(grpc_call_async(ep_handle, id, 20, sx, sy, q) == GRPC_NO_ERROR, 'async ep')
  call check(grpc_call_async(solver, id8, n, 1, a, n, ipiv8, b, n, info8) == GRPC_NO_ERROR, &
             'async dgesv')
  call check(grpc_wait_all() == GRPC_NO_ERROR, 'grpc_wait_all')
  call check(info8 == 0 .and. all(ipiv8 == ipiv) .and. residual_ok(a0, b0, b), &
             'grpc_wait_all copied the results back')

  ! Cancel a call of minutes.
  call check(grpc_call_async(ep_handle, id, 32, sx, sy, q) == GRPC_NO_ERROR, 'long ep started')
  call check(grpc_cancel(id) == GRPC_NO_ERROR, 'grpc_cancel')
  call check(grpc_wait(id) /= GRPC_NO_ERROR, 'a cancelled call fails')
  call check(grpc_get_error(id) == GRPC_SESSION_CANCELLED, 'grpc_get_error: GRPC_SESSION_CANCELLED')

  ! Errors: a refused argument, an unknown session, the error strings.
  ierr = grpc_call(solver, n, 1, ipiv, n, ipiv, b, n, info)
  call check(ierr == GRPC_OTHER_ERROR_CODE, 'a wrong-type argument is refused')
  call check(index(Ninf_error_detail(), "argument 3 'a': expected a contiguous rank-2 REAL(8)") > 0, &
             'the detail names the argument')
  call check(grpc_wait(12345) == GRPC_INVALID_SESSION_ID, 'an unknown session id')
  call check(grpc_error_string(GRPC_INVALID_SESSION_ID) == 'invalid session id', 'grpc_error_string')
  call check(grpc_error_string(GRPC_NO_ERROR) == 'no error', 'grpc_error_string(GRPC_NO_ERROR)')

  call check(grpc_function_handle_destruct(solver) == GRPC_NO_ERROR, 'destruct dgesv handle')
  call check(grpc_function_handle_destruct(ep_handle) == GRPC_NO_ERROR, 'destruct ep handle')
  call check(grpc_function_handle_destruct(ep_handle) == GRPC_INVALID_FUNCTION_HANDLE, &
             'a destructed handle is invalid')
  call check(grpc_finalize() == GRPC_NO_ERROR, 'grpc_finalize')
  ! (The main program's arrays are not freed at exit: LeakSanitizer would
  ! report them.)
  deallocate (a, b, a0, b0)

contains

  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(*), intent(in) :: what
    if (condition) then
      print '(2a)', 'ok: ', what
      return
    end if
    print '(2a)', 'FAILED: ', what
    call Ninf_perror(what)
    stop 1
  end subroutine check

  subroutine sleep_a_little()
    integer(8) :: start, now, rate
    call system_clock(start, rate)
    do
      call system_clock(now)
      if (now - start >= rate / 100) exit
    end do
  end subroutine sleep_a_little

end program grpc_test
