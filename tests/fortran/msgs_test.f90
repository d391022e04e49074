! msgs_test.f90 - the messages a Fortran program gets for two mistakes of
! LAPACK habit, against tests/client/msgs's wsquery (a dsyev-shaped routine:
! IN string jobz, IN int n, INOUT double a[n], WORK double work[lwork],
! IN int lwork, OUT int *info). The mode is the first argument:
!   query    a workspace query (lwork = -1) is refused with the reason and
!            what to pass; then a real lwork works with any array for work
!   refused  NINF_SERVER names a server that is not there: prints the
!            message (fortran_test.cc checks it) and exits 0 if the call
!            failed with NINF_ERR_CONNECT
! Prints "ok" lines and exits 1 on the first failure.
program msgs_test
  use ninf
  use solve_check, only: dp
  implicit none
  integer, parameter :: n = 3
  real(dp) :: a(n), work(1)
  integer :: info, ierr, code
  character(len=16) :: mode

  call get_command_argument(1, mode)
  a = [1.0_dp, 2.0_dp, 3.0_dp]
  info = 7
  work = 0
  select case (trim(mode))
  case ('query')
    ierr = Ninf_call('wsquery', 'V', n, a, work, -1, info)
    call Ninf_perror('workspace query')
    ! The error functions are called on their own lines: in a logical
    ! expression the compiler may skip them.
    code = Ninf_get_error()
    call check(ierr == -1 .and. code == NINF_ERR_ARGUMENT_MISMATCH, &
               'a workspace query is refused')
    call check(index(Ninf_error_detail(), "argument 4 of wsquery ('work') would have -1 elements: " // &
                     "argument 5 ('lwork') = -1 asks for a workspace query, which cannot work remotely") > 0, &
               'with its reason')
    call check(info == 7 .and. abs(a(3) - 3.0_dp) <= 0, 'nothing was sent or returned')
    ! A one-element work array for a workspace of n: WORK arrays live on
    ! the server, whatever the caller passes.
    ierr = Ninf_call('wsquery', 'V', n, a, work, n, info)
    call check(ierr == 0 .and. info == 0 .and. abs(a(3) - 6.0_dp) <= 0, 'a real lwork, any work array')
  case ('refused')
    ierr = Ninf_call('wsquery', 'V', n, a, work, n, info)
    call Ninf_perror('refused')
    code = Ninf_get_error()
    call check(ierr == -1 .and. code == NINF_ERR_CONNECT, 'no server: NINF_ERR_CONNECT')
  case default
    print '(2a)', 'unknown mode: ', trim(mode)
    stop 1
  end select

contains

  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(*), intent(in) :: what
    if (condition) then
      print '(2a)', 'ok: ', what
      return
    end if
    print '(4a)', 'FAILED: ', what, ': ', Ninf_error_detail()
    stop 1
  end subroutine check

end program msgs_test
