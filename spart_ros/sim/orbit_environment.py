"""
The orbit's loads on every body of a plant, at every integration stage (pure numpy, no ROS).

A plant given a :class:`~spart_ros.core.orbit.CircularOrbit` integrates in the orbit's frame N
(non-rotating, centred on the freely falling reference point: :mod:`spart_ros.core.orbit`) and
adds, at each stage of its integrator, the tidal force at each body's CoM and the
gravity-gradient torque about it (:meth:`~spart_ros.core.orbit.CircularOrbit.loads`), so that the
gravity-gradient torque on the whole robot, and the relative orbital motion of its CoM, emerge:

- :class:`MujocoOrbit`: MuJoCo's passive-force callback (``mjcb_passive``, called by every
  ``mj_forward`` and by each stage of MuJoCo's RK4 at the stage's time) adds the loads to
  ``qfrc_passive`` (``mj_applyFT`` at each body's CoM ``xipos``).  MuJoCo has one such callback
  per process, called for every model (even while one compiles): the plant sets it only around
  its own ``mj_step`` / ``mj_forward`` (:meth:`MujocoOrbit.run`) and puts back the one it found,
  which it also calls;
- :class:`RigidBodyOrbit`: the external wrenches ``wF0``, ``wFm`` of the core's forward dynamics
  (SPART's: [torque; force] at each CoM, inertial = N axes), from the link CoM poses at the
  stage's state.

Nothing here runs when a plant has no orbit: its steps are those of a plant without this module.
"""

import numpy as np

__all__ = ['MujocoOrbit', 'RigidBodyOrbit']


class MujocoOrbit:
    """
    The orbit's loads on a MuJoCo model's bodies (see the module docstring).

    ``orbit``: :class:`~spart_ros.core.orbit.CircularOrbit`; ``mujoco``: the module; ``model``,
    ``data``: MuJoCo's.  Every
    body but the world with a mass or an inertia gets them; ``data.time`` is the stage's time
    (the plant keeps it equal to its own).
    """

    def __init__(self, orbit, mujoco, model, data):
        self.orbit = orbit
        self._mj = mujoco
        self.data = data
        heavy = [
            b
            for b in range(1, model.nbody)
            if model.body_mass[b] > 0.0 or np.any(model.body_inertia[b] > 0.0)
        ]
        self.bodies = np.array(heavy, dtype=np.intp)
        self.mass = model.body_mass[self.bodies].copy()
        self.inertia = model.body_inertia[self.bodies].copy()  # principal, in ximat's frame
        self._previous = None

    def run(self, function, *args):
        """Return ``function(*args)`` (``mj_step``, ``mj_forward``) with the orbit's loads on."""
        mj = self._mj
        self._previous = mj.get_mjcb_passive()
        mj.set_mjcb_passive(self._callback)
        try:
            return function(*args)
        finally:
            mj.set_mjcb_passive(self._previous)

    def _callback(self, m, d):
        if d is self.data:
            self.apply(m, d)
        if self._previous is not None:
            self._previous(m, d)

    def loads(self, d=None):
        """Return (forces (k, 3), torques (k, 3)) on ``bodies`` at ``d``'s state and time, N."""
        d = self.data if d is None else d
        b = self.bodies
        return self.orbit.loads(
            d.time, self.mass, d.xipos[b], d.ximat[b].reshape(-1, 3, 3), self.inertia
        )

    def apply(self, m, d):
        """Add the loads to ``d.qfrc_passive`` of model ``m`` (the callback's job)."""
        forces, torques = self.loads(d)
        apply_ft, target = self._mj.mj_applyFT, d.qfrc_passive
        for k, b in enumerate(self.bodies):
            apply_ft(m, d, forces[k], torques[k], d.xipos[b], int(b), target)


class RigidBodyOrbit:
    """
    The orbit's loads on a robot's links as the core's forward dynamics takes them.

    ``orbit``: :class:`~spart_ros.core.orbit.CircularOrbit`; ``robot``: the
    :class:`~spart_ros.core.model.Robot`.  :meth:`wrenches` returns (wF0 (6,), wFm (6, n)).
    """

    def __init__(self, orbit, robot):
        self.orbit = orbit
        bodies = [robot.base_link] + list(robot.links)
        self.mass = np.array([float(b.mass) for b in bodies])
        self.inertia = np.array([np.asarray(b.inertia, dtype=float) for b in bodies])
        n = len(bodies) - 1
        self._R = np.empty((n + 1, 3, 3))
        self._wF0, self._wFm = np.zeros(6), np.zeros((6, n))

    def loads(self, fast, t, R0, r0, q, u0, u):
        """
        Return (forces (n + 1, 3), torques (n + 1, 3)) at the CoMs, N; base first.

        At time ``t`` and state (R0, r0, ``q``, u0, ``u``), kinematics by ``fast`` (FastDynamics).
        """
        rL = fast.twists(R0, r0, q, u0, u)[0]
        for i in range(len(self._R)):
            self._R[i] = fast.link_pose(i)[0]
        return self.orbit.loads(t, self.mass, rL.T, self._R, self.inertia)

    def wrenches(self, fast, t, R0, r0, q, u0, u):
        """
        Return SPART's (wF0 (6,), wFm (6, n)): [torque; force] at each CoM, N axes.

        At time ``t`` and state (R0, r0, ``q``, u0, ``u``), kinematics by ``fast`` (FastDynamics).
        """
        forces, torques = self.loads(fast, t, R0, r0, q, u0, u)
        self._wF0[0:3], self._wF0[3:6] = torques[0], forces[0]
        self._wFm[0:3], self._wFm[3:6] = torques[1:].T, forces[1:].T
        return self._wF0, self._wFm
