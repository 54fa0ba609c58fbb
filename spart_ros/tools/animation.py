"""
An animated GIF of a recorded motion that anyone can watch without a ROS tool (no ROS needed).

:func:`motion_gif` draws each frame with MuJoCo's offscreen renderer when a GL backend works
(EGL; the robot as MuJoCo's equivalent-inertia boxes joined by capsules from link frame to link
frame: the URDFs' meshes are not needed), else with matplotlib as a 3D stick figure (joint origins
joined parent to child, the base marked).  Frames: the base link pose in the world and the joint
positions by name, and optionally the thrusters firing then, drawn as cyan exhaust plumes (the
base's actuators, :mod:`spart_ros.core.actuators`), and a free body (a capture's target) as its
equivalent-inertia box with its grapple fixture's axes (:func:`target_drawing`).
"""

import os
import warnings

import numpy as np

__all__ = ['motion_gif', 'target_drawing', 'BACKENDS']

BACKENDS = ('mujoco', 'matplotlib')
#: colour of a firing thruster's exhaust (nothing else is drawn in it)
PLUME_RGBA = (0.0, 0.9, 1.0, 1.0)


def _frame_positions(robot, frames):
    """
    Return [(link name -> (4, 4) pose of its URDF frame in the world)] of each frame.

    The poses come from core.link_frames.
    """
    from ..core.link_frames import link_poses

    index = {name: k for k, name in enumerate(robot.q_names)}
    q = np.zeros(robot.n_q)
    out = []
    for frame in frames:
        T_b, joints = frame[0], frame[1]
        for name, value in joints.items():
            if name in index:
                q[index[name]] = value
        for follower, m in robot.mimic.items():
            if follower not in joints:
                q[index[follower]] = m.multiplier * q[index[m.leader]] + m.offset
        out.append(link_poses(robot, q, T_b))
    return out


def target_drawing(target, T_l):
    """
    Return what :func:`motion_gif` draws of a target at the pose ``T_l`` (4, 4) of its link frame.

    ``target``: a :class:`~spart_ros.core.target.Target`; returns {'box': (4, 4) the box's pose
    (its CoM, principal axes), 'half': (3,) its half sizes (the box of the same mass and inertia),
    'fixture': (4, 4) the fixture frame}, world.
    """
    moments, axes = np.linalg.eigh(np.asarray(target.inertia, dtype=float))
    if np.linalg.det(axes) < 0:
        axes[:, 2] = -axes[:, 2]
    total = moments.sum()
    half = np.sqrt(np.maximum(1.5 * (total - 2.0 * moments) / target.mass, 1e-6))
    T_l = np.asarray(T_l, dtype=float)
    box = np.eye(4)
    box[:3, :3], box[:3, 3] = T_l[:3, :3] @ axes, T_l[:3, :3] @ target.com + T_l[:3, 3]
    return {'box': box, 'half': half, 'fixture': T_l @ np.asarray(target.fixture, dtype=float)}


def _target(frame):
    """Return the target drawing of ``frame`` (its 4th element), or None."""
    return frame[3] if len(frame) > 3 else None


def _view(poses, frames=()):
    """(centre (3,), extent) of every link origin (and target) over the motion."""
    pts = [T[:3, 3] for frame in poses for T in frame.values()]
    pts += [t['box'][:3, 3] for t in map(_target, frames) if t is not None]
    pts = np.array(pts)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    return (lo + hi) / 2, max(float(np.max(hi - lo)), 0.2)


def _add_links(mujoco, scene, robot, frame, radius):
    """Capsules from each link's URDF frame origin to its children's (MuJoCo user geoms)."""
    names = [robot.base_link.name] + [link.name for link in robot.links]
    for joint in robot.joints:
        if scene.ngeom >= scene.maxgeom:
            return
        a, b = frame[names[joint.parent_link]][:3, 3], frame[names[joint.child_link]][:3, 3]
        if np.linalg.norm(b - a) < 1e-6:
            continue
        geom = scene.geoms[scene.ngeom]
        mujoco.mjv_initGeom(
            geom,
            mujoco.mjtGeom.mjGEOM_CAPSULE,
            np.zeros(3),
            np.zeros(3),
            np.zeros(9),
            np.array([0.85, 0.85, 0.9, 1.0], dtype=np.float32),
        )
        mujoco.mjv_connector(geom, mujoco.mjtGeom.mjGEOM_CAPSULE, radius, a, b)
        scene.ngeom += 1


def _plumes(frame, length):
    """Return [(start (3,), end (3,))]: the world exhausts of the thrusters firing in ``frame``."""
    if len(frame) < 3 or not frame[2]:
        return []
    T_b = np.asarray(frame[0], dtype=float)
    out = []
    for position, direction in frame[2]:
        a = T_b[:3, :3] @ np.asarray(position, dtype=float) + T_b[:3, 3]
        d = T_b[:3, :3] @ np.asarray(direction, dtype=float)
        out.append((a, a - length * d / max(np.linalg.norm(d), 1e-12)))
    return out


def _add_plumes(mujoco, scene, segments, width):
    for a, b in segments:
        if scene.ngeom >= scene.maxgeom:
            return
        geom = scene.geoms[scene.ngeom]
        mujoco.mjv_initGeom(
            geom,
            mujoco.mjtGeom.mjGEOM_ARROW,
            np.zeros(3),
            np.zeros(3),
            np.zeros(9),
            np.array(PLUME_RGBA, dtype=np.float32),
        )
        mujoco.mjv_connector(geom, mujoco.mjtGeom.mjGEOM_ARROW, width, a, b)
        scene.ngeom += 1


#: colours of the target's box and of its fixture's x, y, z axes
TARGET_RGBA = (0.3, 0.75, 0.35, 0.35)
AXES_RGBA = ((1.0, 0.2, 0.2, 1.0), (0.2, 1.0, 0.2, 1.0), (0.2, 0.4, 1.0, 1.0))


def _add_target(mujoco, scene, target, width):
    """Add a box of the target's equivalent inertia and its fixture's axes (MuJoCo user geoms)."""
    if target is None or scene.ngeom + 4 > scene.maxgeom:
        return
    geom = scene.geoms[scene.ngeom]
    box = target['box']
    mujoco.mjv_initGeom(
        geom,
        mujoco.mjtGeom.mjGEOM_BOX,
        np.asarray(target['half'], dtype=float),
        box[:3, 3].copy(),
        np.ascontiguousarray(box[:3, :3]).reshape(9),
        np.array(TARGET_RGBA, dtype=np.float32),
    )
    scene.ngeom += 1
    F = target['fixture']
    length = 0.6 * float(np.min(target['half']))
    for k, rgba in enumerate(AXES_RGBA):
        geom = scene.geoms[scene.ngeom]
        mujoco.mjv_initGeom(
            geom,
            mujoco.mjtGeom.mjGEOM_ARROW,
            np.zeros(3),
            np.zeros(3),
            np.zeros(9),
            np.array(rgba, dtype=np.float32),
        )
        mujoco.mjv_connector(
            geom, mujoco.mjtGeom.mjGEOM_ARROW, width, F[:3, 3], F[:3, 3] + length * F[:3, k]
        )
        scene.ngeom += 1


def _mujoco_frames(urdf, floating, frames, poses, size):
    """RGB images (h, w, 3) rendered offscreen by MuJoCo; raises if no GL backend works."""
    # MuJoCo picks its GL backend when first imported; the variable is not left to the processes
    # this one starts later (the demo's nodes)
    set_here = 'MUJOCO_GL' not in os.environ
    if set_here:
        os.environ['MUJOCO_GL'] = 'egl'
    try:
        import mujoco
    finally:
        if set_here:
            del os.environ['MUJOCO_GL']
    from ..core.urdf import robot_from_urdf
    from ..sim.urdf_import import mujoco_model_from_urdf

    model = mujoco_model_from_urdf(urdf, floating).model
    robot = robot_from_urdf(urdf)[0]
    data = mujoco.MjData(model)
    width, height = size
    model.vis.global_.offwidth, model.vis.global_.offheight = max(width, 640), max(height, 480)
    model.vis.headlight.ambient[:], model.vis.headlight.diffuse[:] = 0.45, 0.7
    model.vis.rgba.inertia[:] = [0.95, 0.55, 0.15, 0.9]
    renderer = mujoco.Renderer(model, height, width)
    try:
        option = mujoco.MjvOption()
        option.flags[mujoco.mjtVisFlag.mjVIS_INERTIA] = True
        option.flags[mujoco.mjtVisFlag.mjVIS_JOINT] = True
        camera = mujoco.MjvCamera()
        centre, extent = _view(poses, frames)
        camera.lookat[:], camera.distance, camera.azimuth, camera.elevation = (
            centre,
            2.2 * extent,
            135.0,
            -25.0,
        )
        joints = {}
        first = 1 if floating else 0
        for j in range(first, model.njnt):
            joints[model.joint(j).name] = model.jnt_qposadr[j]
        images = []
        quat = np.empty(4)
        for frame, pose in zip(frames, poses):
            T_b, positions = frame[0], frame[1]
            mujoco.mju_mat2Quat(quat, np.ascontiguousarray(T_b[:3, :3]).reshape(9))
            if floating:
                data.qpos[0:3], data.qpos[3:7] = T_b[:3, 3], quat
            else:
                model.body_pos[1], model.body_quat[1] = T_b[:3, 3], quat
            for name, value in positions.items():
                if name in joints:
                    data.qpos[joints[name]] = value
            mujoco.mj_kinematics(model, data)
            renderer.update_scene(data, camera, option)
            _add_links(mujoco, renderer.scene, robot, pose, 0.012 * extent)
            _add_plumes(mujoco, renderer.scene, _plumes(frame, 0.25 * extent), 0.02 * extent)
            _add_target(mujoco, renderer.scene, _target(frame), 0.01 * extent)
            images.append(renderer.render().copy())
        return images
    finally:
        renderer.close()


def _matplotlib_frames(robot, poses, size, title, frames=None):
    """RGB images of a 3D stick figure (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    parent = {
        link.name: (
            robot.base_link.name if j.parent_link == 0 else robot.links[j.parent_link - 1].name
        )
        for j, link in zip(robot.joints, robot.links)
    }
    centre, extent = _view(poses, frames or ())
    half = 0.6 * extent
    width, height = size
    fig = plt.figure(figsize=(width / 80, height / 80), dpi=80)
    ax = fig.add_subplot(projection='3d')
    images = []
    try:
        for k, frame in enumerate(poses):
            ax.cla()
            for child, par in parent.items():
                a, b = frame[par][:3, 3], frame[child][:3, 3]
                ax.plot(
                    [a[0], b[0]],
                    [a[1], b[1]],
                    [a[2], b[2]],
                    '-o',
                    color='tab:blue',
                    markersize=3,
                    linewidth=2,
                )
            base = frame[robot.base_link.name]
            for axis, color in zip(
                range(3), ('tab:red', 'tab:green', 'tab:blue')
            ):  # base link axes
                tip = base[:3, 3] + 0.3 * half * base[:3, axis]
                ax.plot(
                    [base[0, 3], tip[0]],
                    [base[1, 3], tip[1]],
                    [base[2, 3], tip[2]],
                    color=color,
                    linewidth=1,
                )
            ax.scatter(*base[:3, 3], s=60, color='black', marker='s')
            for a, b in _plumes(frames[k], 0.4 * half) if frames is not None else []:
                ax.plot(*zip(a, b), color=PLUME_RGBA[:3], linewidth=3)
            target = _target(frames[k]) if frames is not None else None
            if target is not None:
                _draw_target(ax, target)
            for i, c in enumerate(centre):
                getattr(ax, 'set_' + 'xyz'[i] + 'lim')(c - half, c + half)
            ax.set_title(f'{title}  frame {k + 1}/{len(poses)}', fontsize=8)
            ax.tick_params(labelsize=6)
            fig.canvas.draw()
            images.append(np.asarray(fig.canvas.buffer_rgba())[:, :, :3].copy())
    finally:
        plt.close(fig)
    return images


def _draw_target(ax, target):
    """Draw the target's box edges and its fixture's axes (matplotlib)."""
    box, h = target['box'], np.asarray(target['half'], dtype=float)
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * h
    world = corners @ box[:3, :3].T + box[:3, 3]
    for i in range(8):
        for j in range(i + 1, 8):
            if np.count_nonzero(corners[i] != corners[j]) == 1:  # an edge
                ax.plot(*zip(world[i], world[j]), color=TARGET_RGBA[:3], linewidth=1)
    F = target['fixture']
    length = 0.6 * float(h.min())
    for k, rgba in enumerate(AXES_RGBA):
        ax.plot(*zip(F[:3, 3], F[:3, 3] + length * F[:3, k]), color=rgba[:3], linewidth=2)


def _paletted(images):
    """
    Return the RGB ``images`` (h, w, 3) as paletted PIL images sharing one 256-colour palette.

    The palette is chosen (median cut) from every frame's pixels at once, each frame mapped to it
    without dithering, instead of PIL choosing a palette per frame and optimising it (several
    times the encoding work).  The frames differ from per-frame palettes by under one grey level
    on average (a few pixels per frame by more, in rare colours): not visible.
    """
    from PIL import Image

    palette = Image.fromarray(np.concatenate(list(images), axis=0)).quantize(
        colors=256, method=Image.Quantize.MEDIANCUT
    )
    return [
        Image.fromarray(img).quantize(palette=palette, dither=Image.Dither.NONE) for img in images
    ]


def motion_gif(path, urdf, frames, floating, fps=20.0, size=(320, 240), backend='auto', title=''):
    """
    Write an animated GIF of ``frames`` of the robot of ``urdf`` to ``path``.

    ``frames``: [((4, 4) base link pose in the world, {joint name: position}[, plumes[, target]])],
    plumes: the thrusters firing, [(position (3,), direction (3,))] in the base link frame (the
    exhaust is drawn opposite to the direction of the thrust); target: a free body's drawing
    (:func:`target_drawing`) or None; ``urdf``: path or text. Returns the backend
    used ('mujoco' or 'matplotlib'). ``backend='auto'`` tries MuJoCo's offscreen renderer first.
    """
    from ..core.urdf import robot_from_urdf

    if backend not in ('auto',) + BACKENDS:
        raise ValueError(f'backend must be auto or one of {BACKENDS}, got {backend!r}')
    if not frames:
        raise ValueError('no frames to draw')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # the model's warnings are the nodes' business
        robot, _ = robot_from_urdf(urdf)
    poses = _frame_positions(robot, frames)
    images, used = None, None
    if backend in ('auto', 'mujoco'):
        try:
            images, used = _mujoco_frames(urdf, floating, frames, poses, size), 'mujoco'
        except Exception:  # noqa: BLE001 - no GL backend (or no MuJoCo): the stick figure
            if backend == 'mujoco':
                raise
    if images is None:
        images, used = (
            _matplotlib_frames(robot, poses, size, title or robot.name, frames),
            'matplotlib',
        )
    pictures = _paletted(images)
    pictures[0].save(
        path,
        save_all=True,
        append_images=pictures[1:],
        duration=int(round(1000.0 / fps)),
        loop=0,
        optimize=False,  # one palette already: nothing for PIL to optimise per frame
    )
    return used
