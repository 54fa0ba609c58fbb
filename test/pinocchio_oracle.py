"""
Pinocchio as an independent oracle for spart_ros.core (test helper, not a test).

Builds a Pinocchio model (free-flyer root, or fixed base) straight from a URDF
file's text and maps states and results between Pinocchio's coordinates and
SPART's.  Nothing here calls spart_ros: the only things taken from the SPART
side are the order of the joint variables (a list of joint names) and the
conventions of docs/conventions.md.

Conventions (see "Mapping to other libraries' free-flyer coordinates"):
b = URDF base link frame, c = base ``<inertial>`` frame (SPART's base frame),
at rotation R_bc and offset p_bc inside b.  SPART's base state is
R0 (c -> inertial), r0 (CoM of the base link), u0 = [omega0 in frame c;
r0dot in the inertial frame].  Then

    R_b = R0 R_bc',   p_b = r0 - R_b p_bc,
    omega_b = R_bc omega0,
    v_b = [p_bc]x R_bc omega0 + R_b' r0dot            (b's origin, frame b)

and Pinocchio's free-flyer velocity is v = [v_b; omega_b] (then the joint
rates), so v_pin = T u with

    T = [[ [p_bc]x R_bc, R_b', 0 ],
         [ R_bc,         0,    0 ],
         [ 0,            0,    I ]],
    Tdot u = [ -omega_b x (R_b' r0dot); 0; 0 ]      (d/dt R_b' = -[omega_b]x R_b').

Pinocchio's free-flyer acceleration is d/dt of v's components (body frame), so
a_pin = T udot + Tdot u, and by power equivalence tau_spart = T' tau_pin:
H_spart = T' M T,  C_spart u = T' (M Tdot u + b_pin),  FD: a = aba(T^-T tau).

Pinocchio quirks handled here:
- its URDF loader (urdfdom) refuses revolute/prismatic joints without
  ``<limit>`` (SPART's own URDFs have none): limits are added to the text;
- moving joints without ``<axis>`` get the URDF default (1, 0, 0) explicitly
  and axes are normalized (the URDF spec; spart_ros does the same);
- it orders sibling subtrees by joint NAME, not file order: every joint is
  looked up by name (model.getJointId, idx_q, idx_v, nq);
- continuous joints take (cos, sin) in q;
- fixed-joint links are merged into their parent body: per-link quantities go
  through frames (model.getFrameId(link, BODY), data.oMf, frame velocities);
- its default gravity is -9.81 z: set explicitly on every call here.
"""

import math
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin

# --- URDF text -----------------------------------------------------------------------------


def _floats(text, default):
    return (
        np.array([float(x) for x in text.split()])
        if text and text.split()
        else np.array(default, float)
    )


def _origin_transform(elem):
    """(R, p) of a URDF <origin> element (None = identity); rpy via Pinocchio."""
    if elem is None:
        return np.eye(3), np.zeros(3)
    xyz = _floats(elem.get('xyz'), [0, 0, 0])
    rpy = _floats(elem.get('rpy'), [0, 0, 0])
    return pin.rpy.rpyToMatrix(*rpy), xyz


def prepare_urdf_for_pinocchio(text):
    """
    URDF text Pinocchio accepts.

    ``<limit>`` on every revolute/prismatic joint, an explicit unit ``<axis>`` on every moving
    joint.
    """
    root = ET.fromstring(text.encode('utf-8') if isinstance(text, str) else text)
    for joint in root.findall('joint'):
        jtype = joint.get('type')
        if jtype not in ('revolute', 'continuous', 'prismatic'):
            continue
        axis = joint.find('axis')
        if axis is None:
            axis = ET.SubElement(joint, 'axis')
            axis.set('xyz', '1 0 0')
        a = _floats(axis.get('xyz'), [1, 0, 0])
        a = a / np.linalg.norm(a)
        axis.set('xyz', ' '.join(repr(float(x)) for x in a))
        if jtype in ('revolute', 'prismatic') and joint.find('limit') is None:
            lim = ET.SubElement(joint, 'limit')
            lim.set('lower', '-1000')
            lim.set('upper', '1000')
            lim.set('effort', '1000')
            lim.set('velocity', '1000')
    return ET.tostring(root, encoding='unicode')


def _read(urdf):
    if '<' in urdf:
        return urdf
    with open(urdf, encoding='utf-8') as f:
        return f.read()


def skew(x):
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def symmetric(M):
    """Pinocchio's crba fills the upper triangle only."""
    return np.triu(M) + np.triu(M, 1).T


# --- the oracle ----------------------------------------------------------------------------


class PinocchioOracle:
    """
    Pinocchio model of a URDF, in SPART coordinates.

    ``q_names``: the moving joints in SPART's joint-variable order (spart_ros:
    ``robot.q_names``).  ``floating``: free-flyer root (default) or fixed base.
    Every method takes SPART's state (R0, r0, qm, u0, um, ...) and returns
    SPART-convention results.  Gravity is a vector in the inertial frame
    (None = no gravity).  ``mimic=True``: Pinocchio's mimic joints (its reduced model,
    ``q_names`` = the independent joints); FD then solves M a = tau - rnea(q, v, 0)
    (Pinocchio's aba has no mimic joints).
    """

    def __init__(self, urdf, q_names, floating=True, mimic=False):
        text = _read(urdf)
        xml = ET.fromstring(text.encode('utf-8'))
        children = {j.find('child').get('link') for j in xml.findall('joint')}
        roots = [
            link.get('name') for link in xml.findall('link') if link.get('name') not in children
        ]
        assert len(roots) == 1, roots
        self.base_name = roots[0]
        # each link's <inertial> frame inside its URDF link frame
        self.inertial_frame = {}
        for link in xml.findall('link'):
            inertial = link.find('inertial')
            self.inertial_frame[link.get('name')] = _origin_transform(
                None if inertial is None else inertial.find('origin')
            )
        self.R_bc, self.p_bc = self.inertial_frame[self.base_name]
        self.link_names = [link.get('name') for link in xml.findall('link')]

        pin_text = prepare_urdf_for_pinocchio(text)
        self.floating = floating
        self.mimic = mimic
        if floating:
            self.model = pin.buildModelFromXML(pin_text, pin.JointModelFreeFlyer(), mimic=mimic)
        else:
            self.model = pin.buildModelFromXML(pin_text, mimic=mimic)
        self.data = self.model.createData()
        self.nb = 6 if floating else 0  # base velocity coordinates in v
        self.q_names = list(q_names)
        nq_spart = len(self.q_names)
        assert self.model.nv == self.nb + nq_spart, (self.model.nv, nq_spart)
        # SPART joint variable k  <->  Pinocchio joint (by NAME, never by position)
        self.joint_ids = [self.model.getJointId(name) for name in self.q_names]
        for name, jid in zip(self.q_names, self.joint_ids):
            assert jid < self.model.njoints, f'joint {name!r} not in the Pinocchio model'
            assert self.model.nvs[jid] == 1
        self.idx_v = np.array([self.model.idx_vs[j] for j in self.joint_ids], dtype=int)
        self.idx_q = [self.model.idx_qs[j] for j in self.joint_ids]
        self.nq_of = [self.model.nqs[j] for j in self.joint_ids]
        # permutation: v_pin[nb + ...] in SPART order
        self.perm = np.concatenate([np.arange(self.nb), self.idx_v]).astype(int)
        assert sorted(self.perm.tolist()) == list(range(self.model.nv))

    # -- states ---------------------------------------------------------------------------
    def base_pose(self, R0, r0):
        """(R_b, p_b): the URDF base link frame pose from SPART's (R0, r0)."""
        R_b = R0 @ self.R_bc.T
        return R_b, r0 - R_b @ self.p_bc

    def q(self, R0, r0, qm):
        """Pinocchio configuration (free-flyer: [p_b, quaternion x y z w], then joints)."""
        q = pin.neutral(self.model)
        if self.floating:
            R_b, p_b = self.base_pose(R0, r0)
            q[0:3] = p_b
            q[3:7] = pin.Quaternion(R_b).coeffs()
        for k, (iq, nq) in enumerate(zip(self.idx_q, self.nq_of)):
            if nq == 1:
                q[iq] = qm[k]
            elif nq == 2:  # continuous: (cos, sin)
                q[iq], q[iq + 1] = math.cos(qm[k]), math.sin(qm[k])
            else:
                raise AssertionError(f'joint {self.q_names[k]!r} has nq = {nq}')
        return q

    def T(self, R0):
        """v_pin = T u (rows and columns in Pinocchio's v order and SPART's u order)."""
        nv = self.model.nv
        T = np.zeros((nv, nv))
        if self.floating:
            R_b, _ = self.base_pose(R0, np.zeros(3))
            T[0:3, 0:3] = skew(self.p_bc) @ self.R_bc
            T[0:3, 3:6] = R_b.T
            T[3:6, 0:3] = self.R_bc
        nqs = nv - self.nb
        T[self.idx_v, self.nb + np.arange(nqs)] = 1.0
        return T

    def Tdot_u(self, R0, u):
        """d/dt(T) u, (nv,)."""
        out = np.zeros(self.model.nv)
        if self.floating:
            R_b, _ = self.base_pose(R0, np.zeros(3))
            omega_b = self.R_bc @ u[0:3]
            out[0:3] = -np.cross(omega_b, R_b.T @ u[3:6])
        return out

    def u(self, u0, um):
        return np.concatenate([u0, um]) if self.floating else np.asarray(um, float)

    def _set_gravity(self, R0, r0, gravity):
        g = np.zeros(3) if gravity is None else np.asarray(gravity, float)
        if not self.floating:
            # the fixed base's universe frame is the base link frame b
            R_b, _ = self.base_pose(R0, r0)
            g = R_b.T @ g
        self.model.gravity = pin.Motion(g, np.zeros(3))

    # -- wrenches -------------------------------------------------------------------------
    def fext(self, R0, r0, qm, wrenches):
        """
        Pinocchio external forces (one per joint, joint-local frame) from SPART wrenches.

        ``wrenches`` maps a link name to [torque; force] (inertial frame) applied at that link's
        CoM.
        """
        model, data = self.model, self.data
        q = self.q(R0, r0, qm)
        pin.forwardKinematics(model, data, q)
        pin.updateFramePlacements(model, data)
        fext = [pin.Force.Zero() for _ in range(model.njoints)]
        # Pinocchio's world is the inertial frame with a free flyer, the base link frame b
        # otherwise
        R_w = np.eye(3) if self.floating else self.base_pose(R0, r0)[0].T
        for name, w in (wrenches or {}).items():
            w = np.concatenate([R_w @ w[0:3], R_w @ w[3:6]])
            fid = model.getFrameId(name, pin.BODY)
            jid = model.frames[fid].parentJoint
            com = self.link_com_pose(name)[1]
            oMi = data.oMi[jid]
            n_o = w[0:3] + np.cross(com - oMi.translation, w[3:6])  # torque about the joint origin
            f = pin.Force(oMi.rotation.T @ w[3:6], oMi.rotation.T @ n_o)
            fext[jid] = fext[jid] + f
        return fext

    # -- per-link kinematics (through frames; call after a state-setting method) ------------
    def link_com_pose(self, name):
        """
        (R, r) of a link's CoM (<inertial>) frame in Pinocchio's world frame.

        The inertial frame with a free flyer; the base link frame b with a fixed base.
        """
        oMf = self.data.oMf[self.model.getFrameId(name, pin.BODY)]
        Rc, pc = self.inertial_frame[name]
        return oMf.rotation @ Rc, oMf.translation + oMf.rotation @ pc

    def kinematics(self, R0, r0, qm, u0, um, u0dot, umdot):
        """
        Per link name.

        (R, r_com, twist [omega; v_com], twist rate [omegadot; a_com]), all in the inertial frame,
        as SPART defines RL, rL, tL, tLdot. Free-flyer only.
        """
        assert self.floating, (
            'kinematics(): Pinocchio world = inertial frame only with a free-flyer root'
        )
        model, data = self.model, self.data
        q = self.q(R0, r0, qm)
        u = self.u(u0, um)
        udot = self.u(u0dot, umdot)
        v = self.T(R0) @ u
        a = self.T(R0) @ udot + self.Tdot_u(R0, u)
        pin.forwardKinematics(model, data, q, v, a)
        pin.updateFramePlacements(model, data)
        out = {}
        for name in self.link_names:
            fid = model.getFrameId(name, pin.BODY)
            R, rc = self.link_com_pose(name)
            of = data.oMf[fid].translation
            vel = pin.getFrameVelocity(model, data, fid, pin.LOCAL_WORLD_ALIGNED)
            acc = pin.getFrameClassicalAcceleration(model, data, fid, pin.LOCAL_WORLD_ALIGNED)
            w, vo = vel.angular, vel.linear
            wd, ao = acc.angular, acc.linear
            d = rc - of
            v_com = vo + np.cross(w, d)
            a_com = ao + np.cross(wd, d) + np.cross(w, np.cross(w, d))
            out[name] = (R, rc, np.concatenate([w, v_com]), np.concatenate([wd, a_com]))
        return out

    def point_motion(self, R0, r0, qm, u0, um, u0dot, umdot, link, point):
        """
        Return the twist and the twist rate (inertial frame) of a point fixed on a link.

        Twist [omega; v_p] and twist rate [omegadot; a_p], given at the point's current inertial
        position.  Free-flyer only.
        """
        assert self.floating, 'point_motion(): free-flyer only'
        model, data = self.model, self.data
        u, udot = self.u(u0, um), self.u(u0dot, umdot)
        T = self.T(R0)
        pin.forwardKinematics(
            model, data, self.q(R0, r0, qm), T @ u, T @ udot + self.Tdot_u(R0, u)
        )
        pin.updateFramePlacements(model, data)
        fid = model.getFrameId(link, pin.BODY)
        vel = pin.getFrameVelocity(model, data, fid, pin.LOCAL_WORLD_ALIGNED)
        acc = pin.getFrameClassicalAcceleration(model, data, fid, pin.LOCAL_WORLD_ALIGNED)
        w, wd = vel.angular, acc.angular
        d = np.asarray(point, float) - data.oMf[fid].translation
        v_p = vel.linear + np.cross(w, d)
        a_p = acc.linear + np.cross(wd, d) + np.cross(w, np.cross(w, d))
        return np.concatenate([w, v_p]), np.concatenate([wd, a_p])

    def center_of_mass(self, R0, r0, qm, u0, um, u0dot, umdot):
        """
        System CoM position, velocity, acceleration (inertial frame).

        Free-flyer only.
        """
        assert self.floating, 'center_of_mass(): free-flyer only'
        u, udot = self.u(u0, um), self.u(u0dot, umdot)
        T = self.T(R0)
        pin.centerOfMass(
            self.model, self.data, self.q(R0, r0, qm), T @ u, T @ udot + self.Tdot_u(R0, u)
        )
        return self.data.com[0].copy(), self.data.vcom[0].copy(), self.data.acom[0].copy()

    def jacobian(self, R0, r0, qm, link, point):
        """
        Return SPART's [J0p, Jmp] (6 x (6 + n_q)) of a point (inertial frame) on a link.

        [omega; velocity of the point] = J u. Free-flyer only.
        """
        assert self.floating, (
            'jacobian(): Pinocchio world = inertial frame only with a free-flyer root'
        )
        model, data = self.model, self.data
        q = self.q(R0, r0, qm)
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        fid = model.getFrameId(link, pin.BODY)
        J = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)  # [v_origin; omega]
        d = np.asarray(point, float) - data.oMf[fid].translation
        Jp = np.vstack([J[3:6], J[0:3] - skew(d) @ J[3:6]])
        return Jp @ self.T(R0)

    # -- dynamics in SPART coordinates ----------------------------------------------------
    def mass_matrix(self, R0, r0, qm):
        """H_spart = T' M T."""
        q = self.q(R0, r0, qm)
        M = symmetric(pin.crba(self.model, self.data, q))
        T = self.T(R0)
        return T.T @ M @ T

    def convective(self, R0, r0, qm, u0, um):
        """C_spart u = T' (M Tdot u + b_pin), b_pin = nonLinearEffects without gravity."""
        self._set_gravity(R0, r0, None)
        q = self.q(R0, r0, qm)
        u = self.u(u0, um)
        T = self.T(R0)
        v = T @ u
        M = symmetric(pin.crba(self.model, self.data, q))
        b = pin.nonLinearEffects(self.model, self.data, q, v)
        return T.T @ (M @ self.Tdot_u(R0, u) + b)

    def inverse_dynamics(self, R0, r0, qm, u0, um, u0dot, umdot, gravity=None, wrenches=None):
        """tau_spart = T' rnea(q, T u, T udot + Tdot u, fext)."""
        self._set_gravity(R0, r0, gravity)
        q = self.q(R0, r0, qm)
        u, udot = self.u(u0, um), self.u(u0dot, umdot)
        T = self.T(R0)
        a = T @ udot + self.Tdot_u(R0, u)
        fext = self.fext(R0, r0, qm, wrenches)
        tau = pin.rnea(self.model, self.data, q, T @ u, a, fext)
        return T.T @ tau

    def forward_dynamics(self, R0, r0, qm, u0, um, tau, gravity=None, wrenches=None):
        """``udot`` = T^-1 (aba(q, T u, T^-T tau, fext) - Tdot u)."""
        self._set_gravity(R0, r0, gravity)
        q = self.q(R0, r0, qm)
        u = self.u(u0, um)
        T = self.T(R0)
        tau_pin = np.linalg.solve(T.T, np.asarray(tau, float))
        fext = self.fext(R0, r0, qm, wrenches)
        if self.mimic:
            M = symmetric(pin.crba(self.model, self.data, q))
            bias = pin.rnea(self.model, self.data, q, T @ u, np.zeros(self.model.nv), fext)
            a = np.linalg.solve(M, tau_pin - bias)
        else:
            a = pin.aba(self.model, self.data, q, T @ u, tau_pin, fext)
        return np.linalg.solve(T, a - self.Tdot_u(R0, u))

    # -- derivatives in SPART coordinates ---------------------------------------------------
    # SPART's configuration tangent s = [dtheta (base frame c); dr0 (inertial); dqm] maps to
    # Pinocchio's (q (+) delta, delta = [nu; omega] local to b) by the same T as the velocities:
    # R0 exp([dtheta]x) gives R_b exp([R_bc dtheta]x) and p_b + dr0 + R_b [p_bc]x R_bc dtheta.
    # T depends on R0 through its block R_b' only: dT/dtheta_k = -[R_bc e_k]x R_b' in [0:3, 3:6].
    def _dT(self, R0):
        """Return the three matrices dT/dtheta_k (k = 0, 1, 2), (3, nv, nv)."""
        R_b, _ = self.base_pose(R0, np.zeros(3))
        out = np.zeros((3, self.model.nv, self.model.nv))
        for k in range(3):
            out[k, 0:3, 3:6] = -skew(self.R_bc[:, k]) @ R_b.T
        return out

    def _dc(self, R0, u):
        """Return the derivatives of c = Tdot u: dc/du (nv, N) and dc/dtheta (nv, 3)."""
        nv = self.model.nv
        R_b, _ = self.base_pose(R0, np.zeros(3))
        w_b, rd = self.R_bc @ u[0:3], u[3:6]
        dc_du = np.zeros((nv, nv))
        dc_du[0:3, 0:3] = skew(R_b.T @ rd) @ self.R_bc
        dc_du[0:3, 3:6] = -skew(w_b) @ R_b.T
        dc_dth = np.zeros((nv, 3))
        for k, dT in enumerate(self._dT(R0)):
            dc_dth[0:3, k] = -np.cross(w_b, dT[0:3, 3:6] @ rd)
        return dc_du, dc_dth

    def rnea_derivatives(self, R0, r0, qm, u0, um, u0dot, umdot, gravity=None):
        """
        Return SPART's (dtau_dq, dtau_du, H) from ``computeRNEADerivatives``, exact chain rule.

        tau = T' rnea(q, T u, T udot + Tdot u); columns as SPART's configuration tangent
        (free flyer) or the joint variables (fixed base: (n_q, n_q) blocks).
        """
        self._set_gravity(R0, r0, gravity)
        q = self.q(R0, r0, qm)
        u, udot = self.u(u0, um), self.u(u0dot, umdot)
        T = self.T(R0)
        a = T @ udot + self.Tdot_u(R0, u)
        dq, dv, da = (
            np.array(x) for x in pin.computeRNEADerivatives(self.model, self.data, q, T @ u, a)
        )
        da = symmetric(da)
        if not self.floating:
            return T.T @ dq @ T, T.T @ dv @ T, T.T @ da @ T
        tau = pin.rnea(self.model, self.data, q, T @ u, a)
        dc_du, dc_dth = self._dc(R0, u)
        d_q = dq @ T
        for k, dT in enumerate(self._dT(R0)):
            d_q[:, k] += dv @ (dT @ u) + da @ (dT @ udot + dc_dth[:, k])
        d_s = T.T @ d_q
        for k, dT in enumerate(self._dT(R0)):
            d_s[:, k] += dT.T @ tau
        return d_s, T.T @ (dv @ T + da @ dc_du), T.T @ da @ T

    def aba_derivatives(self, R0, r0, qm, u0, um, tau, gravity=None):
        """
        Return SPART's (dudot_dq, dudot_du, dudot_dtau) from ``computeABADerivatives``.

        udot = T^-1 (aba(q, T u, T^-T tau) - Tdot u), differentiated exactly (chain rule);
        columns as :meth:`rnea_derivatives`.
        """
        self._set_gravity(R0, r0, gravity)
        q = self.q(R0, r0, qm)
        u = self.u(u0, um)
        T = self.T(R0)
        Ti = np.linalg.inv(T)
        tau_pin = Ti.T @ np.asarray(tau, float)
        dq, dv, Minv = (
            np.array(x)
            for x in pin.computeABADerivatives(self.model, self.data, q, T @ u, tau_pin)
        )
        Minv = symmetric(Minv)
        if not self.floating:
            return Ti @ dq @ T, Ti @ dv @ T, Ti @ Minv @ Ti.T
        a = pin.aba(self.model, self.data, q, T @ u, tau_pin)
        dc_du, dc_dth = self._dc(R0, u)
        c = self.Tdot_u(R0, u)
        d_a = dq @ T
        for k, dT in enumerate(self._dT(R0)):
            # v = T u and tau_pin = T^-T tau turn with R0; so does T^-1 outside
            d_a[:, k] += dv @ (dT @ u) - Minv @ (Ti.T @ (dT.T @ tau_pin)) - dc_dth[:, k]
        d_s = Ti @ d_a
        for k, dT in enumerate(self._dT(R0)):
            d_s[:, k] -= Ti @ (dT @ (Ti @ (a - c)))
        return d_s, Ti @ (dv @ T - dc_du), Ti @ Minv @ Ti.T
