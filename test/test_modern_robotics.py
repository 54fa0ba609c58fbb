"""
spart_ros.modern_robotics: the book's 47 functions against the book's own code.

The oracle is ``modern_robotics`` (PyPI, the book's Python library): the same names and argument
names, the book's printed examples (its docstrings), and equal results to 1e-9 relative on random
inputs: rotations, poses, twists, and random chains (revolute, one with a prismatic and a helical
joint) with random link frames, spatial inertias whose CoM is off the link frame, gravity and tip
wrenches; the book's own example arm has a screw axis that is not a unit one.  The IK, FK and
trajectory functions' own checks are in test_inverse_kinematics.py and test_control_paths.py.
"""

import inspect
import sys

from core_helpers import random_rotation
import modern_robotics as MR  # the book's package: a pinned requirement (fails, not skips)
import numpy as np
import pytest
from spart_ros import modern_robotics as mr
from spart_ros.core.errors import InputError

# the book's 3-link example (its dynamics docstrings)
M01 = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.089159], [0, 0, 0, 1]]
M12 = [[0, 0, 1, 0.28], [0, 1, 0, 0.13585], [-1, 0, 0, 0], [0, 0, 0, 1]]
M23 = [[1, 0, 0, 0], [0, 1, 0, -0.1197], [0, 0, 1, 0.395], [0, 0, 0, 1]]
M34 = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.14225], [0, 0, 0, 1]]
BOOK = {
    'Mlist': np.array([M01, M12, M23, M34], dtype=float),
    'Glist': np.array(
        [
            np.diag([0.010267, 0.010267, 0.00666, 3.7, 3.7, 3.7]),
            np.diag([0.22689, 0.22689, 0.0151074, 8.393, 8.393, 8.393]),
            np.diag([0.0494433, 0.0494433, 0.004095, 2.275, 2.275, 2.275]),
        ]
    ),
    # S_1 = [1, 0, 1, 0, 1, 0]: not a unit screw (the book's example as printed)
    'Slist': np.array(
        [[1, 0, 1, 0, 1, 0], [0, 1, 0, -0.089, 0, 0], [0, 1, 0, -0.089, 0, 0.425]]
    ).T,
}
TH, DTH, DDTH = np.array([0.1, 0.1, 0.1]), np.array([0.1, 0.2, 0.3]), np.array([2, 1.5, 1])
GRAVITY, FTIP = np.array([0, 0, -9.8]), np.ones(6)


def close(ours, theirs, rtol=1e-9):
    """Equal to ``rtol`` relative to the result's largest entry (and entry by entry)."""
    theirs = np.asarray(theirs, dtype=float)
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=rtol * max(np.abs(theirs).max(), 1))


def _random_pose(rng, reach=1.0):
    T = np.eye(4)
    T[:3, :3] = random_rotation(rng)
    T[:3, 3] = rng.uniform(-reach, reach, 3)
    return T


def _random_inertia(rng):
    """Return a rigid body's spatial inertia about a frame off its CoM (MR's G)."""
    m = rng.uniform(0.5, 5.0)
    a, b = rng.uniform(0.01, 0.2, 2)
    R = random_rotation(rng)
    Ic = R @ np.diag([a, b, rng.uniform(abs(a - b), a + b)]) @ R.T  # the triangle inequality
    c = rng.uniform(-0.2, 0.2, 3)
    C = mr.VecToso3(c)
    return np.block([[Ic - m * C @ C, m * C], [m * C.T, m * np.eye(3)]])


def _random_chain(rng, kinds):
    """
    (Mlist, Glist, Slist) of a random chain, joint i through frame {i}.

    ``kinds``: one letter per joint, r (revolute), p (prismatic), h (helical, pitch 0.1 m/rad).
    """
    n = len(kinds)
    Mlist = [_random_pose(rng, 0.4) for _ in range(n + 1)]
    Slist, T = np.empty((6, n)), np.eye(4)
    for i, kind in enumerate(kinds):
        T = T @ Mlist[i]
        w = T[:3, :3] @ random_rotation(rng)[:, 0]  # any axis through {i}'s origin
        axis = mr.ScrewToAxis(T[:3, 3], w, 0.1 if kind == 'h' else 0.0)
        Slist[:, i] = np.concatenate([np.zeros(3), w]) if kind == 'p' else axis
    return np.array(Mlist), np.array([_random_inertia(rng) for _ in range(n)]), Slist


def test_every_function_of_the_book_with_its_argument_names():
    names = [
        n
        for n, f in inspect.getmembers(MR.core, inspect.isfunction)
        if f.__module__ == MR.core.__name__
    ]
    assert len(names) == 47
    assert sorted(mr.__all__) == sorted(names)
    for name in names:
        theirs = list(inspect.signature(getattr(MR, name)).parameters)
        assert list(inspect.signature(getattr(mr, name)).parameters) == theirs, name


def test_the_books_printed_examples():
    """The outputs printed in the book library's docstrings (8 digits)."""
    T = [[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 3], [0, 0, 0, 1]]
    so3 = [[0, -3, 2], [3, 0, -1], [-2, 1, 0]]
    se3 = [[0, 0, 0, 0], [0, 0, -1.57079632, 2.35619449], [0, 1.57079632, 0, 2.35619449], [0] * 4]
    near = [[0.675, 0.150, 0.720], [0.370, 0.771, -0.511], [-0.630, 0.619, 0.472]]
    off = [[1.0, 0.0, 0.0], [0.0, 0.1, -0.95], [0.0, 1.0, 0.1]]
    off4 = [[1.0, 0.0, 0.0, 1.2], [0.0, 0.1, -0.95, 1.5], [0.0, 1.0, 0.1, -0.9], [0, 0, 0.1, 0.98]]
    blist = np.array(
        [[0, 0, 1, 0, 0.2, 0.2], [1, 0, 0, 2, 0, 3], [0, 1, 0, 0, 2, 1], [1, 0, 0, 0.2, 0.3, 0.4]]
    ).T
    th4 = [0.2, 1.1, 0.1, 1.2]
    book = [BOOK[k] for k in ('Mlist', 'Glist', 'Slist')]
    cases = [
        (mr.Normalize([1, 2, 3]), [0.26726124, 0.53452248, 0.80178373]),
        (mr.RotInv([[0, 0, 1], [1, 0, 0], [0, 1, 0]]), [[0, 1, 0], [0, 0, 1], [1, 0, 0]]),
        (mr.VecToso3([1, 2, 3]), so3),
        (mr.so3ToVec(so3), [1, 2, 3]),
        (mr.AxisAng3([1, 2, 3])[0], [0.26726124, 0.53452248, 0.80178373]),
        (mr.AxisAng3([1, 2, 3])[1], 3.7416573867739413),
        (
            mr.MatrixExp3(so3),
            [
                [-0.69492056, 0.71352099, 0.08929286],
                [-0.19200697, -0.30378504, 0.93319235],
                [0.69297817, 0.6313497, 0.34810748],
            ],
        ),
        (
            mr.MatrixLog3([[0, 0, 1], [1, 0, 0], [0, 1, 0]]),
            [
                [0, -1.20919958, 1.20919958],
                [1.20919958, 0, -1.20919958],
                [-1.20919958, 1.20919958, 0],
            ],
        ),
        (
            mr.RpToTrans([[1, 0, 0], [0, 0, -1], [0, 1, 0]], [1, 2, 5]),
            [[1, 0, 0, 1], [0, 0, -1, 2], [0, 1, 0, 5], [0, 0, 0, 1]],
        ),
        (mr.TransToRp(T)[1], [0, 0, 3]),
        (mr.TransInv(T), [[1, 0, 0, 0], [0, 0, 1, -3], [0, -1, 0, 0], [0, 0, 0, 1]]),
        (
            mr.VecTose3([1, 2, 3, 4, 5, 6]),
            [[0, -3, 2, 4], [3, 0, -1, 5], [-2, 1, 0, 6], [0, 0, 0, 0]],
        ),
        (mr.se3ToVec(mr.VecTose3([1, 2, 3, 4, 5, 6])), [1, 2, 3, 4, 5, 6]),
        (
            mr.Adjoint(T),
            [
                [1, 0, 0, 0, 0, 0],
                [0, 0, -1, 0, 0, 0],
                [0, 1, 0, 0, 0, 0],
                [0, 0, 3, 1, 0, 0],
                [3, 0, 0, 0, 0, -1],
                [0, 0, 0, 0, 1, 0],
            ],
        ),
        (mr.ScrewToAxis([3, 0, 0], [0, 0, 1], 2), [0, 0, 1, 0, -3, 2]),
        (mr.AxisAng6([1, 0, 0, 1, 2, 3])[0], [1, 0, 0, 1, 2, 3]),
        (mr.MatrixExp6(se3), T),
        (mr.MatrixLog6(T), se3),
        (
            mr.ProjectToSO3(near),
            [
                [0.67901136, 0.14894516, 0.71885945],
                [0.37320708, 0.77319584, -0.51272279],
                [-0.63218672, 0.61642804, 0.46942137],
            ],
        ),
        (mr.DistanceToSO3(off), 0.08835),
        (mr.DistanceToSE3(off4), 0.134931),
        (
            mr.JacobianBody(blist, th4),
            [
                [-0.04528405, 0.99500417, 0, 1],
                [0.74359313, 0.09304865, 0.36235775, 0],
                [-0.66709716, 0.03617541, -0.93203909, 0],
                [2.32586047, 1.66809, 0.56410831, 0.2],
                [-1.44321167, 2.94561275, 1.43306521, 0.3],
                [-2.06639565, 1.82881722, -1.58868628, 0.4],
            ],
        ),
        (
            mr.JacobianSpace(blist, th4),
            [
                [0, 0.98006658, -0.09011564, 0.95749426],
                [0, 0.19866933, 0.4445544, 0.28487557],
                [1, 0, 0.89120736, -0.04528405],
                [0, 1.95218638, -2.21635216, -0.51161537],
                [0.2, 0.43654132, -2.43712573, 2.77535713],
                [0.2, 2.96026613, 3.23573065, 2.22512443],
            ],
        ),
        (mr.ad([1, 2, 3, 4, 5, 6])[3:, :3], [[0, -6, 5], [6, 0, -4], [-5, 4, 0]]),
        (
            mr.InverseDynamics(TH, DTH, DDTH, GRAVITY, FTIP, *book),
            [74.69616155, -33.06766016, -3.23057314],
        ),
        (
            mr.MassMatrix(TH, *book),
            [
                [22.543338, -0.30714675, -0.0071842639],
                [-0.30714675, 1.96850717, 0.432157368],
                [-0.0071842639, 0.432157368, 0.191630858],
            ],
        ),
        (mr.VelQuadraticForces(TH, DTH, *book), [0.26453118, -0.05505157, -0.00689132]),
        (mr.GravityForces(TH, GRAVITY, *book), [28.40331262, -37.64094817, -5.4415892]),
        (mr.EndEffectorForces(TH, FTIP, *book), [1.40954608, 1.85771497, 1.392409]),
        (
            mr.ForwardDynamics(TH, DTH, [0.5, 0.6, 0.7], GRAVITY, FTIP, *book),
            [-0.97392907, 25.58466784, -32.91499212],
        ),
        (mr.EulerStep(TH, DTH, DDTH, 0.1)[0], [0.11, 0.12, 0.13]),
        (mr.EulerStep(TH, DTH, DDTH, 0.1)[1], [0.3, 0.35, 0.4]),
        (
            mr.ComputedTorque(
                TH,
                DTH,
                [0.2] * 3,
                GRAVITY,
                *book,
                [1.0] * 3,
                [2, 1.2, 2],
                [0.1] * 3,
                1.3,
                1.2,
                1.1,
            ),
            [133.00525246, -29.94223324, -3.03276856],
        ),
    ]
    for ours, printed in cases:
        np.testing.assert_allclose(ours, printed, rtol=1e-6, atol=5e-6)
    assert mr.NearZero(-1e-7) and not mr.NearZero(1e-6)
    assert mr.TestIfSO3(off) is False and mr.TestIfSE3(off4) is False
    assert mr.TestIfSO3(np.eye(3)) is True and mr.TestIfSE3(T) is True


def test_rigid_motions_equal_the_book_code():
    rng = np.random.default_rng(39)
    for _ in range(20):
        R, T = random_rotation(rng), _random_pose(rng, 2.0)
        w, V, p = rng.uniform(-2, 2, 3), rng.uniform(-2, 2, 6), rng.uniform(-2, 2, 3)
        near = R + rng.uniform(-0.05, 0.05, (3, 3))
        near4 = np.vstack([np.hstack([near, p[:, None]]), [0.01, -0.02, 0.0, 1.03]])
        for name, args in (
            ('Normalize', (V,)),
            ('RotInv', (R,)),
            ('VecToso3', (w,)),
            ('so3ToVec', (MR.VecToso3(w),)),
            ('MatrixExp3', (MR.VecToso3(w),)),
            ('MatrixLog3', (R,)),
            ('RpToTrans', (R, p)),
            ('TransToRp', (T,)),
            ('TransInv', (T,)),
            ('VecTose3', (V,)),
            ('se3ToVec', (MR.VecTose3(V),)),
            ('Adjoint', (T,)),
            ('ScrewToAxis', (p, MR.Normalize(w), V[0])),
            ('MatrixExp6', (MR.VecTose3(V),)),
            ('MatrixLog6', (T,)),
            ('ProjectToSO3', (near,)),
            ('ProjectToSE3', (near4,)),
            ('DistanceToSO3', (near,)),
            ('DistanceToSE3', (near4,)),
            ('ad', (V,)),
        ):
            ours, theirs = getattr(mr, name)(*args), getattr(MR, name)(*args)
            for a, b in zip(*((x,) if name not in ('TransToRp',) else x for x in (ours, theirs))):
                close(a, b)
        for name, x in (('AxisAng3', w), ('AxisAng6', V)):
            (axis, angle), (axis_mr, angle_mr) = getattr(mr, name)(x), getattr(MR, name)(x)
            close(axis, axis_mr)
            close(angle, angle_mr)
        assert mr.TestIfSO3(near) == MR.TestIfSO3(near) and mr.TestIfSE3(near4) == MR.TestIfSE3(
            near4
        )


def test_the_books_branches_at_zero_and_pi():
    """The book's NearZero (1e-6) and MatrixLog3's choice of the axis at exactly pi."""
    for w in ([4e-7, -3e-7, 1e-7], [2e-6, 0, 0]):  # below 1e-6: the identity
        S = MR.VecToso3(w)
        np.testing.assert_array_equal(mr.MatrixExp3(S), MR.MatrixExp3(S))
        close(mr.MatrixExp6(MR.VecTose3(w + [1, 2, 3])), MR.MatrixExp6(MR.VecTose3(w + [1, 2, 3])))
    close(mr.AxisAng6([1e-7, 0, 0, 0, 3, 4])[1], 5.0)
    rng = np.random.default_rng(3)
    # rotations by pi whose trace is -1 exactly (MR's branch); random axes round it above -1,
    # where MR's code returns a zero log (R - R' = 0) and ours the rotation's
    exact = [np.diag(d) for d in ([1.0, -1, -1], [-1.0, 1, -1], [-1.0, -1, 1])] + [
        np.array([[-0.28, 0.96, 0], [0.96, 0.28, 0], [0, 0, -1]]),
        np.array([[-1, 0, 0], [0, -0.28, -0.96], [0, -0.96, 0.28]]),
        np.array([[0.28, -0.96, 0], [-0.96, -0.28, 0], [0, 0, -1]]),
    ]
    for axis in [MR.Normalize(rng.standard_normal(3)) for _ in range(3)]:
        exact.append(2 * np.outer(axis, axis) - np.eye(3))
    for k, R in enumerate(exact):
        T = MR.RpToTrans(R, rng.uniform(-1, 1, 3))
        branch = (np.trace(R) - 1) / 2 <= -1
        assert branch or k >= 6
        if branch:
            close(mr.MatrixLog3(R), MR.MatrixLog3(R))
            close(mr.MatrixLog6(T), MR.MatrixLog6(T))
        close(np.linalg.norm(mr.so3ToVec(mr.MatrixLog3(R))), np.pi)
        np.testing.assert_allclose(mr.MatrixExp6(mr.MatrixLog6(T)), T, atol=1e-12)
    np.testing.assert_array_equal(mr.MatrixLog3(np.eye(3)), np.zeros((3, 3)))
    np.testing.assert_array_equal(
        mr.MatrixLog6(MR.RpToTrans(np.eye(3), [1, 2, 3]))[:3, 3], [1, 2, 3]
    )
    reflection = np.diag([1.0, 1.0, -1.0])
    assert mr.DistanceToSO3(reflection) == MR.DistanceToSO3(reflection) == 1e9


def test_dynamics_equal_the_book_code_on_random_chains():
    rng = np.random.default_rng(7)
    for kinds in ('r', 'rr', 'rrr', 'rrrrr', 'rphr'):
        Mlist, Glist, Slist = _random_chain(rng, kinds)
        n = len(kinds)
        for _ in range(2):
            th, dth, ddth, tau = (rng.uniform(-2, 2, n) for _ in range(4))
            g, Ftip = rng.uniform(-10, 10, 3), rng.uniform(-3, 3, 6)
            robot = (Mlist, Glist, Slist)
            for name, args in (
                ('InverseDynamics', (th, dth, ddth, g, Ftip, *robot)),
                ('MassMatrix', (th, *robot)),
                ('VelQuadraticForces', (th, dth, *robot)),
                ('GravityForces', (th, g, *robot)),
                ('EndEffectorForces', (th, Ftip, *robot)),
                ('ForwardDynamics', (th, dth, tau, g, Ftip, *robot)),
                ('JacobianSpace', (Slist, th)),
                (
                    'JacobianBody',
                    (MR.Adjoint(MR.TransInv(np.linalg.multi_dot(Mlist))) @ Slist, th),
                ),
                (
                    'ComputedTorque',
                    (th, dth, rng.uniform(-1, 1, n), g, *robot, tau, ddth, dth, 2.0, 0.5, 1.5),
                ),
            ):
                close(getattr(mr, name)(*args), getattr(MR, name)(*args))


def test_trajectories_and_the_simulation_equal_the_book_code(monkeypatch):
    """InverseDynamicsTrajectory, ForwardDynamicsTrajectory, SimulateControl on the book's arm."""
    book = [BOOK[k] for k in ('Mlist', 'Glist', 'Slist')]
    rng = np.random.default_rng(11)
    N = 6
    thetamat = np.array(MR.JointTrajectory(np.zeros(3), [1.0, 1.2, -0.8], 1.0, N, 5))
    dthetamat, ddthetamat = rng.uniform(-1, 1, (N, 3)), rng.uniform(-1, 1, (N, 3))
    tips = rng.uniform(-1, 1, (N, 6))
    for ours, theirs in ((tips, tips), (0, np.zeros((N, 6)))):  # MR's code takes no scalar 0
        close(
            mr.InverseDynamicsTrajectory(thetamat, dthetamat, ddthetamat, GRAVITY, ours, *book),
            MR.InverseDynamicsTrajectory(thetamat, dthetamat, ddthetamat, GRAVITY, theirs, *book),
        )
    taumat = rng.uniform(-5, 5, (N, 3))
    ours = mr.ForwardDynamicsTrajectory(TH, DTH, taumat, GRAVITY, tips, *book, 0.05, 3)
    theirs = MR.ForwardDynamicsTrajectory(TH, DTH, taumat, GRAVITY, tips, *book, 0.05, 3)
    for a, b in zip(ours, theirs):
        close(a, b)
    # the controller on a model with other inertias and gravity (MR's function plots: not here)
    monkeypatch.setitem(sys.modules, 'matplotlib.pyplot', None)
    Mtilde = BOOK['Mlist'].copy()
    Mtilde[:, :3, 3] *= 1.05
    model = (Mtilde, BOOK['Glist'] * 1.2)
    common = (
        TH,
        DTH,
        GRAVITY,
        tips,
        *book,
        thetamat,
        dthetamat,
        ddthetamat,
        [0.5, 0.2, -8.8],
        *model,
    )
    ours = mr.SimulateControl(*common, 20, 10, 18, 0.02, 2)
    theirs = MR.SimulateControl(*common, 20, 10, 18, 0.02, 2)
    for a, b in zip(ours, theirs):
        close(a, b)


def test_bad_inputs_name_the_argument():
    book = [BOOK[k] for k in ('Mlist', 'Glist', 'Slist')]
    bad = [
        (lambda: mr.Normalize([0, 0, 0]), 'V: a zero vector'),
        (lambda: mr.AxisAng3([0, 0, 0]), 'expc3'),
        (lambda: mr.AxisAng6([0, 0, 0, 0, 0, 0]), 'expc6'),
        (lambda: mr.so3ToVec(np.ones((3, 3))), 'so3mat: expected a skew-symmetric'),
        (lambda: mr.se3ToVec(np.eye(4)), 'se3mat'),
        (lambda: mr.MatrixLog3(2 * np.eye(3)), 'R: expected a rotation'),
        (lambda: mr.TransInv(np.ones((4, 4))), 'T: expected a homogeneous'),
        (lambda: mr.ProjectToSO3(np.diag([1.0, 1.0, -1.0])), 'mat: det < 0'),
        (lambda: mr.ScrewToAxis([0, 0, 0], [0, 0, 2], 0), 's: expected a unit vector'),
        (lambda: mr.MassMatrix(TH, book[0][:3], *book[1:]), 'Mlist: expected 4 transforms'),
        (lambda: mr.MassMatrix(TH, book[0], book[1][:2], book[2]), 'Glist: expected 3'),
        (lambda: mr.MassMatrix(TH, book[0], np.ones((3, 6, 6)), book[2]), r'Glist\[0\]'),
        (lambda: mr.MassMatrix(TH[:2], *book), 'thetalist: expected 3'),
        (lambda: mr.InverseDynamics(TH, DTH, DDTH, [0, 0], FTIP, *book), 'g: expected length 3'),
        (
            lambda: mr.InverseDynamicsTrajectory(
                np.zeros((4, 3)), np.zeros((3, 3)), 0, GRAVITY, 0, *book
            ),
            'dthetamat: expected 4 rows',
        ),
        (
            lambda: mr.ForwardDynamicsTrajectory(
                TH, DTH, np.zeros((4, 3)), GRAVITY, 0, *book, 0.1, 0
            ),
            'intRes',
        ),
        (
            lambda: mr.ComputedTorque(TH, DTH, TH, GRAVITY, *book, TH, TH, TH, -1, 0, 0),
            'must be >= 0',
        ),
        (lambda: mr.JacobianSpace(np.zeros((6, 2)), [0, 0]), 'Slist: column 0 is zero'),
    ]
    for call, message in bad:
        with pytest.raises(InputError, match=message):
            call()
