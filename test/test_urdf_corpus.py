"""
Real-world URDFs: what Pinocchio loads, spart_ros loads, and computes the same dynamics.

Corpus: the URDFs that pybullet ships (its ``pybullet_data`` folder, found beside the
installed ``pybullet`` module, never imported: it prints to stdout): every file outside
``random_urdfs`` and a deterministic sample of ``random_urdfs`` (every RANDOM_STRIDE-th of
the sorted list: single-link mesh objects, all alike), plus this project's own files in
``test/data/urdf/loading`` (a UR5 with an encoding declaration and a ``world`` root, its
cosmetic-junk twin, a quadruped on a floating joint from ``world``, a mimic gripper, a xacro
biped, a ManiSat-like planar spacecraft), and the vendor files of ``test/data/urdf/vendor`` (a
UFactory xArm7 and a Unitree Z1 from example-robot-data, with their joints' damping and friction).

For every file Pinocchio's URDF parser loads (``pin.buildModelFromUrdf``), ``robot_from_urdf``
must load it too; then, joints mapped by name (``pinocchio_oracle.PinocchioOracle``), with
gravity, at a random state:

- fixed base (the fast path, floating=False) and floating base (the fast path and the SPART
  chain): H, ID and FD equal Pinocchio's to TOL relative to the largest entry;
- FD is compared where H is positive definite; where it is not (objects with no mass), H
  must be singular for Pinocchio too and spart_ros must raise SingularModelError;
- robots with mimic joints: the fast path in independent coordinates (``fast_dynamics``)
  equals Pinocchio's mimic model (``mimic=True``: its reduced coordinates), and the full
  coordinates equal Pinocchio's model without mimic.

A ``world`` root is dropped by spart_ros (see docs/urdf_loading.md); the oracle gets the same
URDF text without it (Pinocchio's free flyer then sits on the same base link).
"""

import glob
import importlib.util
import os
import warnings
import xml.etree.ElementTree as ET
import zlib

from core_helpers import run_chain, TEST_DIR
import numpy as np
import pinocchio as pin
from pinocchio_oracle import PinocchioOracle
import pytest
from spart_ros.core.errors import SingularModelError, URDFError
from spart_ros.core.fast import FastDynamics
from spart_ros.core.fast.mimic import fast_dynamics
from spart_ros.core.urdf import robot_from_urdf, urdf_text

TOL = 1e-9
RANDOM_STRIDE = 50
GRAVITY = np.array([0.3, -0.2, -9.81])
OWN_DIR = os.path.join(TEST_DIR, 'data', 'urdf', 'loading')
VENDOR_DIR = os.path.join(TEST_DIR, 'data', 'urdf', 'vendor')  # xArm7, Z1 (README.md there)
PYBULLET_DATA = os.path.join(
    os.path.dirname(importlib.util.find_spec('pybullet').origin), 'pybullet_data'
)


def corpus():
    """(label, path) of every corpus file, sorted, deterministic."""
    files = sorted(glob.glob(os.path.join(PYBULLET_DATA, '**', '*.urdf'), recursive=True))
    random_urdfs = [f for f in files if f'{os.sep}random_urdfs{os.sep}' in f]
    picked = [f for f in files if f not in set(random_urdfs)] + random_urdfs[::RANDOM_STRIDE]
    out = [('pybullet_data/' + os.path.relpath(f, PYBULLET_DATA), f) for f in picked]
    out += [
        ('own/' + os.path.basename(f), f) for f in sorted(glob.glob(os.path.join(OWN_DIR, '*')))
    ]
    out += [
        ('vendor/' + os.path.basename(f), f)
        for f in sorted(glob.glob(os.path.join(VENDOR_DIR, '*.urdf')))
    ]
    return out


CORPUS = corpus()


def pinocchio_text(path):
    """
    URDF text for Pinocchio.

    What spart_ros reads (``urdf_text``: xacro expanded where the links or joints hold xacro, as a
    user runs xacro before robot_state_publisher), else the file as it is (so a file spart_ros
    wrongly sends to xacro still counts as loadable).
    """
    try:
        return urdf_text(path).lstrip()
    except URDFError:
        with open(path, 'rb') as f:
            return f.read().lstrip().decode('utf-8')


def pinocchio_loads(path):
    try:
        pin.buildModelFromXML(pinocchio_text(path))
        return True
    except Exception:  # urdfdom refused it (Pinocchio raises ValueError / RuntimeError)
        return False


def without_world(text, robot):
    """Return the URDF text without the root link that spart_ros dropped (and its joint)."""
    if robot.world_link is None:
        return text
    root = ET.fromstring(text.encode('utf-8') if isinstance(text, str) else text)
    for el in list(root):
        if (
            el.tag == 'link'
            and el.get('name') == robot.world_link
            or el.tag == 'joint'
            and el.find('parent').get('link') == robot.world_link
        ):
            root.remove(el)
    return ET.tostring(root, encoding='unicode')


def rel(a, b):
    """``max`` |a - b| / max |b| (an absolute floor of 1e-12 for all-zero references)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape, (a.shape, b.shape)
    return 0.0 if a.size == 0 else float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-12))


def random_state(names, seed):
    rng = np.random.default_rng(seed)
    q = pin.Quaternion(*(lambda v: v / np.linalg.norm(v))(rng.normal(size=4))).toRotationMatrix()
    n = len(names)
    return {
        'R0': q,
        'r0': rng.normal(size=3),
        'qm': rng.uniform(-1, 1, n),
        'u0': rng.normal(size=6),
        'um': rng.normal(size=n),
        'u0dot': rng.normal(size=6),
        'umdot': rng.normal(size=n),
        'tau0': rng.normal(size=6) * 10,
        'taum': rng.normal(size=n),
    }


def singular(H):
    """H is singular up to rounding: its smallest eigenvalue is below 1e-12 of its largest."""
    eig = np.linalg.eigvalsh(H) if H.size else np.ones(1)
    return eig.min() <= 1e-12 * max(eig.max(), 1e-300)


class Record:
    """What one file gave: loaded by whom, the largest errors, what was compared."""

    def __init__(self, label):
        self.label, self.pin, self.ours, self.errors, self.compared, self.singular = (
            label,
            False,
            False,
            {},
            [],
            [],
        )

    def err(self, what, value):
        self.errors[what] = max(self.errors.get(what, 0.0), value)


def compare(rec, robot, text, names, fast, floating, mimic, seed):
    """Compare H, ID, FD of ``fast`` (independent coordinates ``names``) with Pinocchio."""
    oracle = PinocchioOracle(without_world(text, robot), names, floating=floating, mimic=mimic)
    s = random_state(names, seed)
    R0, r0, qm = s['R0'], s['r0'], s['qm']
    u0 = s['u0'] if floating else np.zeros(6)
    u0dot = s['u0dot'] if floating else np.zeros(6)
    tag = ('floating' if floating else 'fixed') + (' mimic' if mimic else '')
    H = fast.mass_matrix(R0, r0, qm)
    H = np.array(H if floating else H[6:, 6:])
    H_pin = oracle.mass_matrix(R0, r0, qm)
    rec.err(f'H {tag}', rel(H, H_pin))
    tau0, taum = fast.inverse_dynamics(
        R0, r0, qm, u0, s['um'], u0dot, s['umdot'], gravity=GRAVITY, floating=floating
    )
    tau = np.concatenate([tau0, taum]) if floating else np.array(taum)
    rec.err(
        f'ID {tag}',
        rel(
            tau,
            oracle.inverse_dynamics(R0, r0, qm, u0, s['um'], u0dot, s['umdot'], gravity=GRAVITY),
        ),
    )
    tau_in = np.concatenate([s['tau0'], s['taum']]) if floating else s['taum']
    if singular(H_pin):
        # no mass behind some coordinate (singular up to rounding): spart_ros must say so
        with pytest.raises(SingularModelError):
            fast.forward_dynamics(
                R0, r0, qm, u0, s['um'], s['tau0'], s['taum'], gravity=GRAVITY, floating=floating
            )
        rec.singular.append(tag)
        return
    u0dot_fd, umdot_fd = fast.forward_dynamics(
        R0, r0, qm, u0, s['um'], s['tau0'], s['taum'], gravity=GRAVITY, floating=floating
    )
    udot = np.concatenate([u0dot_fd, umdot_fd]) if floating else np.array(umdot_fd)
    udot_pin = oracle.forward_dynamics(R0, r0, qm, u0, s['um'], tau_in, gravity=GRAVITY)
    rec.err(f'FD {tag}', rel(udot, udot_pin))
    rec.compared.append(tag)


def compare_spart_chain(rec, robot, text, seed):
    """Compare the SPART-named chain (floating base, full coordinates) against Pinocchio."""
    oracle = PinocchioOracle(without_world(text, robot), robot.q_names, floating=True)
    s = random_state(robot.q_names, seed)
    from types import SimpleNamespace

    state = SimpleNamespace(**s, wF0=np.zeros(6), wFm=np.zeros((6, robot.n_links_joints)))
    H_pin = oracle.mass_matrix(s['R0'], s['r0'], s['qm'])
    if singular(H_pin):
        return
    o = run_chain(robot, state, gravity=GRAVITY)
    rec.err('H spart', rel(o.H, H_pin))
    rec.err(
        'ID spart',
        rel(
            np.concatenate([o.tau0_id, o.taum_id]),
            oracle.inverse_dynamics(
                s['R0'],
                s['r0'],
                s['qm'],
                s['u0'],
                s['um'],
                s['u0dot'],
                s['umdot'],
                gravity=GRAVITY,
            ),
        ),
    )
    udot = np.concatenate([o.u0dot_fd, o.umdot_fd])
    udot_pin = oracle.forward_dynamics(
        s['R0'],
        s['r0'],
        s['qm'],
        s['u0'],
        s['um'],
        np.concatenate([s['tau0'], s['taum']]),
        gravity=GRAVITY,
    )
    rec.err('FD spart', rel(udot, udot_pin))
    rec.compared.append('spart chain')


_RECORDS = {}


def check_file(label, path):
    """Load with Pinocchio and spart_ros, compare; the Record (cached per file)."""
    if label in _RECORDS:
        return _RECORDS[label]
    rec = _RECORDS[label] = Record(label)
    rec.pin = pinocchio_loads(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # massless frames, non-physical inertias, mimic joints
            robot, _ = robot_from_urdf(path)
        rec.ours = True
    except Exception as err:  # noqa: BLE001 - recorded, the test decides
        rec.ours_error = f'{type(err).__name__}: {err}'
        return rec
    if not rec.pin:
        return rec
    text = pinocchio_text(path)
    seed = zlib.crc32(label.encode())
    coords = robot.coordinates
    for floating in (False, True):
        compare(rec, robot, text, robot.q_names, FastDynamics(robot), floating, False, seed)
        if robot.mimic:
            compare(rec, robot, text, coords.names, fast_dynamics(robot), floating, True, seed)
    compare_spart_chain(rec, robot, text, seed)
    return rec


@pytest.mark.parametrize('label,path', CORPUS, ids=[c[0] for c in CORPUS])
def test_what_pinocchio_loads_loads_and_agrees(label, path):
    rec = check_file(label, path)
    if rec.pin:
        assert rec.ours, f'{label}: Pinocchio loads it, spart_ros refuses it: {rec.ours_error}'
        bad = {k: v for k, v in rec.errors.items() if not v <= TOL}
        assert not bad, f'{label}: errors against Pinocchio above {TOL}: {bad}'
    if label.startswith('own/'):
        assert rec.pin and rec.ours, f'{label}: every own corpus file must load in both'


def test_corpus_counts(capsys):
    """Counts and largest errors over the whole corpus (printed with -s)."""
    records = [check_file(label, path) for label, path in CORPUS]
    pin_loaded = [r for r in records if r.pin]
    ours_loaded = [r for r in records if r.ours]
    compared = [r for r in records if r.compared]
    worst = {}
    for r in records:
        for k, v in r.errors.items():
            if v >= worst.get(k, (0.0, ''))[0]:
                worst[k] = (v, r.label)
    with capsys.disabled():
        print(
            f'\n[urdf corpus] {len(records)} files tried '
            f'({sum(l.startswith("pybullet") for l, _ in CORPUS)} from pybullet_data, '
            f'random_urdfs every {RANDOM_STRIDE}th), Pinocchio loaded {len(pin_loaded)}, '
            f'spart_ros loaded {len(ours_loaded)}, compared {len(compared)}; FD compared in '
            f'{sum("fixed" in r.compared for r in records)} (fixed base) and '
            f'{sum("floating" in r.compared for r in records)} (floating base), singular for both '
            '(spart_ros raised SingularModelError) '
            f'in {sum("fixed" in r.singular for r in records)} and '
            f'{sum("floating" in r.singular for r in records)}'
        )
        for k in sorted(worst):
            print(f'[urdf corpus]   max error {k}: {worst[k][0]:.2e} ({worst[k][1]})')
    assert all(r.ours for r in pin_loaded)
    assert len(compared) >= 100 and len(pin_loaded) >= 100
    assert any('mimic' in ' '.join(r.compared) for r in records)
