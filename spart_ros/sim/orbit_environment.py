"""
The orbit's loads on every body of a plant, at every integration stage: an effector (no ROS).

A plant given a :class:`~spart_ros.core.orbit.CircularOrbit` integrates in the orbit's frame N
(non-rotating, centred on the freely falling reference point: :mod:`spart_ros.core.orbit`) and
adds, at each stage of its integrator, the tidal force at each body's CoM and the
gravity-gradient torque about it (:meth:`~spart_ros.core.orbit.CircularOrbit.loads`), so that the
gravity-gradient torque on the whole robot, and the relative orbital motion of its CoM, emerge.
:class:`OrbitLoads` is that unit for both plants (a staged :class:`~.effectors.Effector`), its
per-stage work compiled (:func:`spart_ros.native.plant_kernels.orbit_loads_mujoco`, and the RK4
plant's compiled step, which evaluates the same formulas on every link):

- on the MuJoCo plant, at each stage MuJoCo's passive-force callback (``mjcb_passive``, called by
  every ``mj_forward`` and by each stage of MuJoCo's RK4 at the stage's time) writes the loads into
  ``xfrc_applied`` (the user's wrenches there plus the orbit's, at each body's CoM ``xipos``; the
  user's are put back after the step), which MuJoCo adds to the stage's forces right after;
- on the RK4 plant they are SPART's external wrenches ``wF0``, ``wFm`` ([torque; force] at each
  CoM, inertial = N axes) at each stage, from the link CoM poses at the stage's state.

Both give the numpy formulas of :meth:`~spart_ros.core.orbit.CircularOrbit.loads` to rounding
(:meth:`OrbitLoads.loads` computes them so, for checks).  Nothing here runs when a plant has no
orbit: its steps are those of a plant without this module.
"""

import numpy as np

from .effectors import Effector
from ..native.plant_layout import LINEAR, NONLINEAR, ORBIT_COLS

__all__ = ['OrbitLoads', 'orbit_row']


def orbit_row(orbit):
    """Return the compiled kernels' row (ORBIT_COLS,) of a CircularOrbit (None: no orbit)."""
    row = np.zeros(ORBIT_COLS)
    if orbit is not None:
        model = NONLINEAR if orbit.model == 'nonlinear' else LINEAR
        row[:] = (1.0, orbit.mean_motion, orbit.mu, orbit.radius, model)
    return row


class OrbitLoads(Effector):
    """
    The orbit's tidal force and gravity-gradient torque on every body (see the module docstring).

    ``orbit``: :class:`~spart_ros.core.orbit.CircularOrbit`.  A plant binds it once: the MuJoCo
    plant with :meth:`attach_mujoco` (every body but the world with a mass or an inertia gets the
    loads; ``data.time`` is the stage's time: the plant keeps it equal to its own), the RK4 plant
    with :meth:`attach_rk4` (the base and every link).
    """

    staged = True

    def __init__(self, orbit):
        self.orbit = orbit
        self.row = orbit_row(orbit)

    # -- the MuJoCo plant ------------------------------------------------------------------
    def attach_mujoco(self, model, data):
        """Take the bodies of a MuJoCo ``model`` and the arrays of its ``data``."""
        from ..native import compiled

        heavy = [
            b
            for b in range(1, model.nbody)
            if model.body_mass[b] > 0.0 or np.any(model.body_inertia[b] > 0.0)
        ]
        self.bodies = np.array(heavy, dtype=np.int64)
        self.mass = model.body_mass[self.bodies].copy()
        self.inertia = model.body_inertia[self.bodies].copy()  # principal, in ximat's frame
        self.data = data
        # MuJoCo's arrays are views of its data: taken once (an attribute read makes a new view)
        self._xipos, self._ximat, self._xfrc = data.xipos, data.ximat, data.xfrc_applied
        self._kernel = compiled.orbit_loads_mujoco

    def mujoco_stage(self, data, base=None):
        """
        Set ``xfrc_applied`` = ``base`` + the loads on ``bodies`` at this stage (``data``'s time).

        ``base`` (nbody, 6): the wrenches to add them to (the user's; default ``xfrc_applied``).
        """
        self._kernel(
            self.row,
            data.time,
            self.bodies,
            self.mass,
            self.inertia,
            self._xipos,
            self._ximat,
            self._xfrc if base is None else base,
            self._xfrc,
        )

    def loads(self, d=None):
        """Return (forces (k, 3), torques (k, 3)) on ``bodies`` at ``d``'s state and time, N."""
        d = self.data if d is None else d
        b = self.bodies
        return self.orbit.loads(
            d.time, self.mass, d.xipos[b], d.ximat[b].reshape(-1, 3, 3), self.inertia
        )

    # -- the RK4 plant ---------------------------------------------------------------------
    def attach_rk4(self, robot):
        """Take the base and links of ``robot`` (a :class:`~spart_ros.core.model.Robot`)."""
        bodies = [robot.base_link] + list(robot.links)
        self._rk4_mass = np.array([float(b.mass) for b in bodies])
        self._rk4_inertia = np.array([np.asarray(b.inertia, dtype=float) for b in bodies])
        self._R = np.empty((len(bodies), 3, 3))

    def rk4_kernel_orbit(self):
        return self.row

    def link_loads(self, fast, t, R0, r0, q, u0, u):
        """
        Return (forces (n + 1, 3), torques (n + 1, 3)) at the CoMs, N; base first (numpy).

        At time ``t`` and state (R0, r0, ``q``, u0, ``u``), kinematics by ``fast`` (FastDynamics).
        """
        rL = fast.twists(R0, r0, q, u0, u)[0]
        for i in range(len(self._R)):
            self._R[i] = fast.link_pose(i)[0]
        return self.orbit.loads(t, self._rk4_mass, rL.T, self._R, self._rk4_inertia)

    def rk4_stage(self, fast, t, R0, r0, q, u0, u, wF0, wFm):
        forces, torques = self.link_loads(fast, t, R0, r0, q, u0, u)
        wF0[0:3] += torques[0]
        wF0[3:6] += forces[0]
        wFm[0:3] += torques[1:].T
        wFm[3:6] += forces[1:].T
