"""
A plant as a hub and effectors: the units both plants apply besides the robot's dynamics.

Basilisk's shape (pure Python, no ROS).  The **hub** is a plant's multibody dynamics and its
integrator: MuJoCo's (:class:`~spart_ros.sim.plant.MujocoPlant`) or the core's articulated-body
algorithm integrated by RK4 (:class:`~spart_ros.sim.rigid_body.RigidBodyPlant`).  An **effector**
is one unit with one interface, :class:`Effector`, that both hubs call:

- before every physics step, :meth:`Effector.decide` decides what it applies over the step
  (a reaction wheel's clamped torque, a thruster valve's state), from the time and the hub's
  velocities (on MuJoCo, an effector bound to MuJoCo actuators writes their controls then);
- what it applies then is either **held** over the step (MuJoCo's actuators; on the RK4 hub,
  :meth:`Effector.rk4_held` adds it to the step's joint efforts and to a base wrench fixed in the
  base), or **staged**: loads that depend on the state within the step, applied at every
  integration stage (:attr:`Effector.staged`: the MuJoCo hub calls :meth:`Effector.mujoco_stage`
  from MuJoCo's passive-force callback at each stage, into ``xfrc_applied``; the RK4 hub's compiled
  step evaluates those it knows itself, :meth:`Effector.rk4_kernel_orbit`, and calls
  :meth:`Effector.rk4_stage` otherwise).

The effectors here: :class:`~spart_ros.sim.actuation.BaseActuation` (the base's reaction wheel
motors and thrusters: held), :class:`~spart_ros.sim.orbit_environment.OrbitLoads` (the orbit's
tidal force and gravity-gradient torque on every body: staged, compiled), a capture's target
(:mod:`.target_body`: MuJoCo's free body and weld; the RK4 plant's state beside the robot's,
advanced with its steps, then a payload).  The joints' damping and
friction are not an effector: they change the step itself (:mod:`.joint_dissipation`, the same
compiled step in both hubs).  A new unit (a grasped target's constraint, solar pressure) is one
more :class:`Effector` and one line in each hub's list (``plant.effectors``).
"""

__all__ = ['Effector']


class Effector:
    """
    One unit a plant applies (see the module docstring); the defaults do nothing.

    ``staged``: its loads depend on the state within a step (applied at every integration stage).
    """

    staged = False

    def reset(self):
        """Forget the held commands and what is applied (the plant was reset; counters go on)."""

    def decide(self, t, velocities):
        """
        Decide what is applied over the physics step from time ``t`` [s].

        ``velocities``: the hub's velocity vector at ``t`` (MuJoCo's ``qvel``; the RK4 plant's
        joint velocities), where the effector's index (set when it was bound) finds its joints.
        """

    # -- the MuJoCo hub ----------------------------------------------------------------------
    def mujoco_stage(self, data, base=None):
        """
        Set ``data.xfrc_applied`` to ``base`` plus this stage's loads (world, at each body's CoM).

        Called from MuJoCo's passive-force callback at each stage (the stage's state and time are
        ``data``'s); ``base`` (nbody, 6): the user's wrenches for the first staged effector, None
        (``xfrc_applied`` itself) for the next ones; the hub puts the user's back after the step.
        """

    # -- the RK4 hub -------------------------------------------------------------------------
    def rk4_held(self, taum, wrench):
        """
        Add what is held over the step to the step's inputs (in place).

        ``taum`` (n_joints,): joint efforts; ``wrench`` (6,): a base wrench fixed in the base CoM
        frame [torque; force] (what thrusters fixed in the base exert).
        """

    def rk4_kernel_orbit(self):
        """
        Return this staged effector as the compiled RK4 step's orbit row, or None.

        The row (:mod:`spart_ros.native.plant_layout`) when the compiled step evaluates this
        effector's loads itself; None: the hub calls :meth:`rk4_stage` at each stage instead.
        """
        return None

    def rk4_stage(self, fast, t, R0, r0, q, u0, u, wF0, wFm):
        """
        Add this stage's loads to SPART's external wrenches ``wF0`` (6,), ``wFm`` (6, n), in place.

        [torque; force] at each CoM, inertial axes, at time ``t`` and state (R0, r0, ``q``, u0,
        ``u``); ``fast``: the hub's FastDynamics (its kinematics at that state).
        """
