! solve_check.f90 - helpers shared by the Fortran test programs: a random
! linear system and the check of a solution (HPL's scaled residual).
module solve_check
  implicit none
  private
  public :: dp, random_system, residual_ok, verify_ep_class_s

  integer, parameter :: dp = kind(1.0d0)

contains

  ! A random n x n system a x = b; a0, b0 keep the originals.
  subroutine random_system(n, a, b, a0, b0)
    integer, intent(in) :: n
    real(dp), allocatable, intent(out) :: a(:, :), b(:, :), a0(:, :), b0(:, :)
    allocate (a(n, n), b(n, 1))
    call random_number(a)
    call random_number(b)
    a = a - 0.5_dp
    b = b - 0.5_dp
    a0 = a
    b0 = b
  end subroutine random_system

  ! Whether x solves a0 x = b0 to the accuracy of a backward-stable solver.
  logical function residual_ok(a0, b0, x)
    real(dp), intent(in) :: a0(:, :), b0(:, :), x(:, :)
    real(dp) :: r
    r = maxval(abs(matmul(a0, x) - b0)) / &
        (maxval(sum(abs(a0), dim=2)) * maxval(abs(x)) * size(a0, 1) * epsilon(1.0_dp))
    residual_ok = r < 16.0_dp
  end function residual_ok

  ! The NAS EP sums of class S (m = 24).
  logical function verify_ep_class_s(sx, sy)
    real(dp), intent(in) :: sx, sy
    verify_ep_class_s = abs(sx / (-3.247834652034740e+3_dp) - 1) <= 1.0e-8_dp .and. &
                        abs(sy / (-6.958407078382297e+3_dp) - 1) <= 1.0e-8_dp
  end function verify_ep_class_s

end module solve_check
