"""Kernel PDE solvers: Kronecker algebra, the interpolant, solvers against known solutions."""

import numpy as np
import pytest

from icml25.kernel_pde import (
    PDE,
    KroneckerInterpolant,
    allen_cahn,
    eikonal,
    gaussian_kernel_1d,
    kron_matvec,
    nonlinear_elliptic,
    solve_daks,
    solve_fd,
    solve_sks,
    uniform_grid,
)


def test_kron_matvec_equals_the_dense_kronecker_product():
    rng = np.random.default_rng(0)
    A, B, V = rng.normal(size=(4, 4)), rng.normal(size=(3, 3)), rng.normal(size=(4, 3))
    np.testing.assert_allclose(kron_matvec(A, B, V).reshape(-1), np.kron(A, B) @ V.reshape(-1))


def test_kronecker_solve_equals_the_dense_solve():
    g1, g2 = np.linspace(0, 1, 6), np.linspace(0, 1, 5)
    interp = KroneckerInterpolant((g1, g2), (0.3, 0.4), nugget=1e-8)
    V = np.random.default_rng(1).normal(size=(6, 5))
    K = np.kron(gaussian_kernel_1d(g1, g1, 0.3) + 1e-8 * np.eye(6),
                gaussian_kernel_1d(g2, g2, 0.4) + 1e-8 * np.eye(5))
    np.testing.assert_allclose(interp.weights(V).reshape(-1), np.linalg.solve(K, V.reshape(-1)),
                               rtol=1e-6, atol=1e-8)


def test_kernel_derivatives_match_finite_differences():
    s, t, h = np.array([0.3, 0.55]), np.array([0.1, 0.4, 0.9]), 1e-5
    for ds, dt in [(1, 0), (0, 1), (2, 0), (1, 1), (2, 2)]:
        if ds:
            num = (gaussian_kernel_1d(s + h, t, 0.2, ds - 1, dt)
                   - gaussian_kernel_1d(s - h, t, 0.2, ds - 1, dt)) / (2 * h)
        else:
            num = (gaussian_kernel_1d(s, t + h, 0.2, ds, dt - 1)
                   - gaussian_kernel_1d(s, t - h, 0.2, ds, dt - 1)) / (2 * h)
        np.testing.assert_allclose(gaussian_kernel_1d(s, t, 0.2, ds, dt), num, rtol=1e-5, atol=1e-6)


def test_interpolant_reproduces_data_and_differentiates_smooth_functions():
    g = uniform_grid(33)
    interp = KroneckerInterpolant((g, g), 0.1, nugget=1e-12)
    X, Y = np.meshgrid(g, g, indexing="ij")
    U = np.sin(2 * X) * np.cos(3 * Y)
    np.testing.assert_allclose(interp.evaluate(U, (g, g)), U, atol=1e-6)
    D2x = interp.differentiation_matrix(0, 2)
    inner = slice(4, -4)  # away from the boundary, where interpolation is most accurate
    np.testing.assert_allclose((D2x @ U)[inner, inner], (-4 * U)[inner, inner], atol=1e-3)
    test = np.linspace(0.2, 0.8, 7)
    TX, TY = np.meshgrid(test, test, indexing="ij")
    np.testing.assert_allclose(interp.evaluate(U, (test, test), derivative=(0, 1)),
                               -3 * np.sin(2 * TX) * np.sin(3 * TY), atol=1e-4)


def poisson():
    exact = lambda x, y: np.sin(np.pi * x) * np.sinh(np.pi * y) / np.sinh(np.pi)  # harmonic
    return PDE("Laplace", exact, lambda d, x, y: -(d["uxx"] + d["uyy"]),
               lambda d, x, y: {"uxx": -1.0, "uyy": -1.0}, lambda z, x, y: 0 * z["u"],
               lambda z, x, y: {}, False)


@pytest.mark.parametrize("solver, tolerance", [(solve_sks, 2e-4), (solve_daks, 2e-4), (solve_fd, 1e-3)])
def test_a_linear_pde_is_solved_to_tolerance(solver, tolerance):
    assert solver(poisson(), 32).error < tolerance


@pytest.mark.parametrize("pde", [nonlinear_elliptic(), allen_cahn(2.0), eikonal(0.1)],
                         ids=lambda p: p.name)
def test_nonlinear_benchmarks_converge_and_solvers_agree(pde):
    sks, daks, fd = solve_sks(pde, 24), solve_daks(pde, 16), solve_fd(pde, 24)
    assert sks.residual_norm < 1e-8 and sks.error < 5e-3
    assert daks.error < 5e-2 and fd.error < 5e-2
    assert solve_sks(pde, 32).error < sks.error  # refinement helps


def test_fd_is_second_order():
    errors = [solve_fd(nonlinear_elliptic(), n).error for n in (33, 65)]
    assert np.log2(errors[0] / errors[1]) == pytest.approx(2.0, abs=0.25)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: uniform_grid(2), "at least 3 points"),
        (lambda: uniform_grid(5.5), "at least 3 points"),
        (lambda: gaussian_kernel_1d([0.0], [1.0], 0.0), "length scale ell must be a positive"),
        (lambda: KroneckerInterpolant((np.linspace(0, 1, 5),) * 2, -1.0), "positive"),
        (lambda: KroneckerInterpolant((np.array([0, 1, 0.5]),) * 2, 0.1), "increasing"),
        (lambda: KroneckerInterpolant((np.linspace(0, 1, 5),) * 2, 0.1, nugget=-1), "nugget"),
        (lambda: solve_sks(nonlinear_elliptic(), 8, ell="wide"), "positive number"),
    ],
)
def test_bad_grids_and_kernel_parameters_raise_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
