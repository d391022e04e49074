! two_phase.f90 - a two-phase call from Fortran (docs/transactions.md): one
! run submits NAS EP class S (m = 24) and prints the ticket; a later run,
! another process, collects the result with that ticket and checks it.
!
!     two_phase_f submit             prints: ticket <text>
!     two_phase_f collect <ticket>   prints: collected ... VERIFIED
!
! The server is NINF_SERVER's. Between the two runs the call computes on the
! server with no client connected; the result waits there (result_keep_seconds).
program two_phase
  use ninf
  implicit none
  integer, parameter :: dp = kind(1.0d0), m = 24
  character(len=256) :: mode, ticket
  real(dp) :: sx, sy, q(0:9)
  integer :: ierr

  call get_command_argument(1, mode)
  sx = 0
  sy = 0
  q = 0
  select case (trim(mode))
  case ('submit')
    ierr = Ninf_call_submit(ticket, 'ep', m, sx, sy, q)
    if (ierr /= 0) then
      call Ninf_perror('Ninf_call_submit(ep)')
      stop 1
    end if
    print '(a, a)', 'ticket ', trim(ticket)
  case ('collect')
    call get_command_argument(2, ticket)
    ierr = Ninf_call_collect(trim(ticket), 'ep', m, sx, sy, q)
    if (ierr /= 0) then
      call Ninf_perror('Ninf_call_collect(ep)')
      stop 1
    end if
    ! NAS EP class S: the published sums.
    if (abs(sx + 3.247834652034740e+3_dp) < 1e-8_dp * 3.3e3_dp .and. &
        abs(sy + 6.958407078382297e+3_dp) < 1e-8_dp * 7.0e3_dp) then
      print '(a, es23.15, a, es23.15, a)', 'collected sx=', sx, ' sy=', sy, '  VERIFIED'
    else
      print '(a, es23.15, a, es23.15, a)', 'collected sx=', sx, ' sy=', sy, '  WRONG'
      stop 1
    end if
  case default
    print '(a)', 'usage: two_phase_f submit | two_phase_f collect TICKET'
    stop 2
  end select
end program two_phase
