"""
spart_ros.campaign without simulations: distributions, dispersions, the campaign file's checks.

The statistics are checked against the distributions' exact moments (scipy's truncnorm for the
truncated normal: an implementation independent of the inverse-CDF sampler) over 10,000 draws,
within 5 standard errors (a false alarm once in about 3.5 million runs of a check); every inertia
drawn is checked with the definition (positive principal moments, triangle inequality).
"""

import numpy as np
import pytest

from spart_ros.campaign import dispersions, inertia, load_campaign
from spart_ros.campaign.distributions import distribution, stream
from spart_ros.campaign.link_properties import link_inertials, LinkInertial, with_link_inertials
from spart_ros.campaign.parameters import parameters, run_inputs
from spart_ros.core.errors import InputError, ModelWarning

N = 10_000


def _check_moments(samples, dist, shape):
    """Sample mean and variance within 5 standard errors of the exact ones, per element."""
    mean, var = dist.moments(shape)
    n = samples.shape[0]
    assert np.all(np.abs(samples.mean(axis=0) - mean) < 5 * np.sqrt(var / n))
    # the variance's standard error from the sample's fourth central moment
    m4 = ((samples - samples.mean(axis=0)) ** 4).mean(axis=0)
    assert np.all(np.abs(samples.var(axis=0, ddof=1) - var) < 5 * np.sqrt((m4 - var**2) / n))


@pytest.mark.parametrize(
    'spec',
    [
        {'distribution': 'uniform', 'low': [-1.0, 2.0, 0.0], 'high': [1.0, 5.0, 1e-3]},
        {'distribution': 'normal', 'mean': [0.0, 10.0, -3.0], 'std': [1.0, 0.01, 2.0]},
        {
            'distribution': 'truncated_normal',
            'std': 1.0,
            'low': [-1.0, 0.0, 2.0],
            'high': [1.0, 3.0, 6.0],
        },  # two-sided, one-sided from the mean, far in the upper tail
        {
            'distribution': 'truncated_normal',
            'mean': 0.0,
            'std': 0.005,
            'low': -0.03,
            'high': -0.012,
        },  # far in the lower tail
    ],
)
def test_samples_follow_their_distribution(spec):
    dist = distribution('test', spec)
    samples = dist.sample(stream(1, 0, 'x'), (N, 3))
    _check_moments(samples, dist, (3,))
    if 'low' in spec:
        assert np.all(samples >= np.asarray(spec['low'])) and np.all(samples <= spec['high'])


def test_draws_depend_on_seed_index_and_name_only():
    a = stream(7, 3, 'links.Link_1.mass').random(5)
    assert np.array_equal(a, stream(7, 3, 'links.Link_1.mass').random(5))
    for other in (
        stream(8, 3, 'links.Link_1.mass'),
        stream(7, 4, 'links.Link_1.mass'),
        stream(7, 3, 'links.Link_2.mass'),
    ):
        assert not np.allclose(a, other.random(5))


@pytest.fixture(scope='module')
def orbit_params():
    """Return the orbital demo's scenario and dispersible parameters (wheels, thrusters, orbit)."""
    from spart_ros.campaign.scenario import resolve_scenario

    scenario = resolve_scenario({'demo': 'SC_3DoF_orbit', 'plant': 'rk4'})
    return scenario, parameters(scenario)


def test_a_dispersion_added_leaves_the_others_draws(orbit_params):
    _, params = orbit_params
    one = {'links.Spacecraft.mass': {'distribution': 'normal', 'std': 1.0}}
    two = {**one, 'thrusters.*.direction': {'distribution': 'normal', 'std': 0.01}}
    a = dispersions.draw(dispersions.dispersions(one, params), 4, 11)[1]
    b = dispersions.draw(dispersions.dispersions(two, params), 4, 11)[1]
    assert a['links.Spacecraft.mass'] == b['links.Spacecraft.mass']
    assert len(b) == 1 + 2 * 12  # an angle and an azimuth per thruster


def _valid(J):
    m = np.linalg.eigvalsh(J)
    return np.allclose(J, J.T, rtol=0, atol=1e-15) and m[0] > 0 and m[2] <= m[0] + m[1] + 1e-12


def test_every_inertia_drawn_is_valid_and_small_dispersions_keep_their_statistics():
    rng = np.random.default_rng(0)
    R = inertia.rotation_matrix([0.3, -0.2, 0.5])
    rod = R @ np.diag([1.0, 1.0, 1.98]) @ R.T  # close to the triangle inequality's edge
    wide = distribution('wide', {'distribution': 'normal', 'std': 0.3}, default_mean=1.0)
    for _ in range(N):
        assert _valid(
            inertia.disperse_inertia(rod, lambda r: wide.sample(r, (3,)), 0.2, rng, 'scale', 'rod')
        )
    # 2 %: nothing redrawn, so the principal moments' factors are the normal's (axes kept)
    box = np.diag([2.0, 3.0, 4.0])
    small = distribution('small', {'distribution': 'normal', 'std': 0.02}, default_mean=1.0)
    factors = np.array(
        [
            np.diag(
                inertia.disperse_inertia(
                    box, lambda r: small.sample(r, (3,)), 0.0, rng, 'scale', 'box'
                )
            )
            / np.diag(box)
            for _ in range(N)
        ]
    )
    _check_moments(factors, small, (3,))


def test_an_inertia_dispersion_too_wide_is_refused_by_name():
    flat = np.diag([1.0, 1.0, 2.0])  # a flat disk: on the edge already
    huge = distribution('huge', {'distribution': 'uniform', 'low': 5.0, 'high': 6.0})
    with pytest.raises(InputError, match=r'links\.disk\.inertia: 1000 draws gave no valid'):
        inertia.disperse_inertia(
            flat,
            lambda r: np.array([huge.sample(r), 1.0, 1.0]),
            0.0,
            np.random.default_rng(1),
            'scale',
            'links.disk.inertia',
        )


def test_misalignment_turns_a_direction_by_the_angle_drawn():
    d = np.array([1.0, 2.0, -2.0]) / 3.0
    azimuths = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    turned = np.array([inertia.misalign(d, 0.01, a) for a in azimuths])
    assert np.allclose(np.linalg.norm(turned, axis=1), 1.0, atol=1e-15)
    assert np.allclose(np.arccos(np.clip(turned @ d, -1, 1)), 0.01, atol=1e-9)
    assert np.allclose(turned.mean(axis=0) / np.cos(0.01), d, atol=1e-12)  # a cone about d


URDF = """<robot name="two">
  <link name="base"><inertial><origin xyz="0.1 0 0" rpy="0.3 -0.2 0.7"/><mass value="3"/>
    <inertia ixx="0.4" ixy="0.01" ixz="0" iyy="0.5" iyz="-0.02" izz="0.6"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0 0 0.2" rpy="0 0.5 0"/><mass value="1"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial></link>
  <link name="tip"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <joint name="j2" type="fixed"><parent link="arm"/><child link="tip"/></joint>
</robot>"""


def test_link_inertials_written_back_are_the_same_bodies():
    """The inertial frames' rpy turned into the link frame: the same mass distribution."""
    from spart_ros.core.urdf import robot_from_urdf

    read = link_inertials(URDF)
    assert sorted(read) == ['arm', 'base']  # tip has no <inertial>
    again = with_link_inertials(URDF, read)
    assert '0.3 -0.2 0.7' not in again
    with pytest.warns(ModelWarning, match='no <inertial>'):  # the tip: a massless frame
        a, b = robot_from_urdf(URDF)[0], robot_from_urdf(again)[0]
    for la, lb in zip([a.base_link] + a.links, [b.base_link] + b.links):
        Ra, Rb = la.T[:3, :3], lb.T[:3, :3]
        assert la.mass == lb.mass
        assert np.allclose(la.T[:3, 3], lb.T[:3, 3], rtol=0, atol=1e-15)
        assert np.allclose(Ra @ la.inertia @ Ra.T, Rb @ lb.inertia @ Rb.T, rtol=0, atol=1e-15)
    changed = with_link_inertials(URDF, {'arm': LinkInertial(2.0, np.zeros(3), np.eye(3))})
    assert link_inertials(changed)['arm'].mass == 2.0
    assert np.array_equal(link_inertials(changed)['base'].inertia, read['base'].inertia)


def test_run_inputs_carry_each_kind_of_dispersion(orbit_params):
    from spart_ros.core.attitude import quaternion_from_ros

    scenario, params = orbit_params
    d = params['thrusters.px_1.direction'].nominal
    turned = inertia.misalign(d, 0.02, 1.0)
    values = {
        'thrusters.px_1.direction': turned,
        'wheels.rw_x.friction': np.array(2e-4),
        'orbit.altitude': np.array(400e3),
        'initial.base_attitude': np.array([0.0, 0.0, 0.1]),
        'initial.joint_positions': np.array([0.1, 0.2, 0.3]),
        'settings.base_gains': np.array([0.1, 0.5, 0.6, 1.6]),
        'links.Spacecraft.mass': np.array(101.0),
    }
    inputs = run_inputs(scenario, values)
    act = inputs.actuators
    assert np.allclose(act.thrusters[0].direction, turned, atol=1e-15)
    assert np.array_equal(act.thrusters[1].direction, [1.0, 0.0, 0.0])
    assert act.wheels[0].friction == 2e-4 and inputs.actuators_dispersed
    assert inputs.model_dispersed  # a wheel's property: the controller keeps the nominal wheels
    assert abs(inputs.orbit.radius - (6378137.0 + 400e3)) < 1e-6
    R = quaternion_from_ros(*inputs.initial.base_orientation)
    assert np.allclose(R, inertia.rotation_matrix([0, 0, 0.1]), atol=1e-15)
    assert inputs.initial.joint_positions == {'Joint_1': 0.1, 'Joint_2': 0.2, 'Joint_3': 0.3}
    assert inputs.initial.base_linear_velocity == (0.01, 0.02, 0.0)  # the demo's, kept
    assert inputs.settings['base_gains'] == (0.1, 0.5, 0.6, 1.6)
    assert link_inertials(inputs.urdf)['Spacecraft'].mass == 101.0


def _campaign(**changes):
    spec = {'scenario': {'demo': 'SC_3DoF', 'plant': 'rk4', 'duration': 0.1}, 'runs': 2}
    spec.update(changes)
    return load_campaign(spec)


@pytest.mark.parametrize(
    'changes, message',
    [
        ({'run': 3}, r"unknown keys \['run'\]"),
        (
            {'dispersions': {'links.Lnk_1.mass': {'distribution': 'normal', 'std': 1}}},
            r'no parameter of this scenario is called so; some that are: \[.*links\.Link_1\.\*',
        ),
        (
            {'dispersions': {'links.Link_1.mass': {'distribution': 'gauss', 'std': 1}}},
            r'distribution must be one of',
        ),
        ({'dispersions': {'links.Link_1.mass': {'distribution': 'normal'}}}, r"needs 'std'"),
        (
            {'dispersions': {'links.Link_1.mass': {'distribution': 'normal', 'std': -1}}},
            r'std must be >= 0',
        ),
        (
            {'dispersions': {'links.Link_1.com': {'distribution': 'normal', 'std': [1, 2]}}},
            r'expected a number or 3 numbers',
        ),
        (
            {
                'dispersions': {
                    'links.Link_1.mass': {'distribution': 'normal', 'std': 1, 'apply': 'set'}
                }
            },
            r'apply: set needs the mean',
        ),
        (
            {
                'dispersions': {
                    'initial.base_attitude': {'distribution': 'normal', 'std': 1, 'apply': 'scale'}
                }
            },
            r'apply: add',
        ),
        (
            {
                'dispersions': {
                    'links.*.mass': {'distribution': 'normal', 'std': 1},
                    'links.Link_1.mass': {'distribution': 'normal', 'std': 2},
                }
            },
            r'links\.Link_1\.mass is dispersed twice',
        ),
        (
            {
                'dispersions': {
                    'links.Link_1.mass': {
                        'distribution': 'truncated_normal',
                        'std': 1,
                        'low': 50,
                        'high': 60,
                    }
                }
            },
            r'too far in the tail',
        ),
        ({'success': ['tracking < 1']}, r"unknown metric 'tracking'"),
        ({'success': ['tracking_rms = 1']}, r'expected "<metric> <op> <number>"'),
        ({'noise': {'joint_positions': {'Joint_9': 1e-3}}}, r"no joints \['Joint_9'\]"),
        ({'retain': {'series': ['q', 'torque']}}, r"unknown series \['torque'\]"),
        ({'runs': 0}, r'runs: expected an integer >= 1'),
        ({'scenario': {'demo': 'SC_3DoF', 'orbit': {'altitude': -5}}}, r'orbit altitude'),
        ({'scenario': {'demo': 'SC_3DoF', 'target': {'mass': 10}}}, r'target: inertia is missing'),
        ({'scenario': {'demo': 'SC_3DoF', 'settings': {'kp': -1.0}}}, r'kp: every value'),
    ],
)
def test_campaign_file_mistakes_are_named(changes, message):
    with pytest.raises(InputError, match=message):
        _campaign(**changes)


def test_the_digest_follows_what_decides_the_rows():
    a = _campaign()
    assert a.digest == _campaign(runs=50, retain={'every': 2}).digest
    assert a.with_runs(9).digest == a.digest and a.with_runs(9).runs == 9
    assert a.digest != _campaign(seed=1).digest
    assert a.digest != _campaign(noise={'joint_positions': 1e-4}).digest
    assert a.success == ()  # SC_3DoF's bound is on tracking after 1 s: not in 0.1 s


def test_the_success_interval_is_clopper_pearson():
    from scipy.stats import binomtest

    from spart_ros.campaign.summary import success_interval

    for k, n in ((0, 10), (3, 10), (10, 10), (95, 100), (9990, 10000)):
        exact = binomtest(k, n).proportion_ci(0.95, method='exact')
        assert np.allclose(success_interval(k, n), (exact.low, exact.high), rtol=1e-9, atol=0)


def test_the_documented_example_campaign_is_the_example_file():
    """docs/campaigns.md shows examples/station_keeping_campaign.yaml, which loads."""
    import os
    import re

    import yaml

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, 'examples', 'station_keeping_campaign.yaml')
    with open(os.path.join(root, 'docs', 'campaigns.md'), encoding='utf-8') as f:
        shown = re.search(r'```yaml\n(.*?)```', f.read(), re.S).group(1)
    with open(path, encoding='utf-8') as f:
        assert yaml.safe_load(shown) == yaml.safe_load(f)
    campaign = load_campaign(path)
    assert campaign.runs == 200 and len(campaign.dispersions) == 2 + 12
    assert [str(p) for p in campaign.success] == [
        'station_keeping_max < 0.06',
        'station_keeping_settled < 0.03',
        'attitude_change_max < 0.5',
    ]


def test_numeric_settings_are_dispersible_whatever_their_type():
    from spart_ros.campaign.scenario import resolve_scenario

    params = parameters(resolve_scenario({'demo': 'SC_3DoF', 'settings': {'kp': 400}}))
    assert params['settings.kp'].nominal == 400.0  # an integer in a YAML file
    assert params['settings.base_gains'].labels == ('0', '1', '2', '3')
    assert 'settings.base_rows' not in params and 'settings.mode' not in params
