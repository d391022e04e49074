! ep.f90 - the NAS EP kernel on a Ninf server, called from Fortran, with
! the NAS verification of its sums.
!
!   NINF_SERVER=host:port ./ep_f [m [routine]]
!
! m defaults to 24 (class S); routine to 'ep', and 'ep_mpi' runs the same
! call as an MPI job on the server (docs/mpi.md).
!
! The IDL says ep(IN long m, OUT double *sx, OUT double *sy, OUT double
! q[10]): a default INTEGER m is converted to long by the module, and the
! scalars sx and sy receive the OUT pointer parameters. Exits with status 1
! when the call fails or the sums of a standard class do not verify.
program ep
  use ninf
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  integer :: m, ierr, verdict
  real(dp) :: sx, sy, q(0:9), seconds
  character(len=64) :: routine

  m = class_size()
  routine = 'ep'
  if (command_argument_count() >= 2) call get_command_argument(2, routine)
  seconds = wall_time()
  ierr = Ninf_call(trim(routine), m, sx, sy, q)
  seconds = wall_time() - seconds
  if (ierr /= 0) then
    call Ninf_perror(trim(routine))
    stop 1
  end if

  verdict = ep_verify(m, sx, sy)
  print '(a, i0, a, f8.3, a, es23.15, a, es23.15, a, f10.0, 2x, a)', 'ep m=', m, '  ', seconds, &
      ' s  sx=', sx, ' sy=', sy, ' gaussian pairs=', sum(q), verdict_text(verdict)
  if (verdict == 0) stop 1

contains

  ! 1 when sx and sy match the NAS reference of class S, W or A within
  ! 1e-8, 0 when they do not, -1 for an m without a reference.
  integer function ep_verify(m, sx, sy)
    integer, intent(in) :: m
    real(dp), intent(in) :: sx, sy
    real(dp) :: ref_x, ref_y
    select case (m)
    case (24)
      ref_x = -3.247834652034740e+3_dp
      ref_y = -6.958407078382297e+3_dp
    case (25)
      ref_x = -2.863319731645753e+3_dp
      ref_y = -6.320053679109499e+3_dp
    case (28)
      ref_x = -4.295875165629892e+3_dp
      ref_y = -1.580732573678431e+4_dp
    case default
      ep_verify = -1
      return
    end select
    ep_verify = merge(1, 0, abs((sx - ref_x) / ref_x) <= 1.0e-8_dp .and. &
                         abs((sy - ref_y) / ref_y) <= 1.0e-8_dp)
  end function ep_verify

  function verdict_text(verdict) result(text)
    integer, intent(in) :: verdict
    character(len=:), allocatable :: text
    select case (verdict)
    case (1)
      text = 'VERIFIED'
    case (0)
      text = 'FAILED'
    case default
      text = '(no reference for this m)'
    end select
  end function verdict_text

  integer function class_size()
    character(len=32) :: arg
    integer :: status
    class_size = 24
    if (command_argument_count() < 1) return
    call get_command_argument(1, arg)
    read (arg, *, iostat=status) class_size
    if (status /= 0 .or. class_size < 0 .or. class_size > 40) then
      print '(a)', 'usage: ep_f [m (0..40, default 24) [routine (ep)]]'
      stop 2
    end if
  end function class_size

  real(dp) function wall_time()
    integer(kind=8) :: count, rate
    call system_clock(count, rate)
    wall_time = real(count, dp) / real(rate, dp)
  end function wall_time

end program ep
