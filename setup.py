"""Build script of the ament_python package spart_ros (the repository root)."""

from glob import glob
import os

from setuptools import find_packages, setup

PACKAGE = 'spart_ros'
HERE = os.path.dirname(os.path.abspath(__file__))


def _version():
    # Read __version__ without importing the package.
    scope = {}
    with open(os.path.join(HERE, PACKAGE, '__init__.py'), encoding='utf-8') as f:
        exec(compile(f.read(), '__init__.py', 'exec'), scope)  # noqa: S102
    return scope['__version__']


def _files(pattern):
    return sorted(p for p in glob(pattern) if os.path.isfile(p))


setup(
    name=PACKAGE,
    version=_version(),
    # Only the spart_ros Python package: never the tests, the interface
    # package beside it, nor colcon's/venv's folders at the repository root.
    packages=find_packages(
        include=[PACKAGE, PACKAGE + '.*'],
        exclude=[
            'test',
            'test.*',
            'build',
            'build.*',
            'install',
            'install.*',
            'log',
            'log.*',
            '.venv',
            '.venv.*',
            'spart_interfaces',
            'spart_interfaces.*',
        ],
    ),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + PACKAGE]),
        ('share/' + PACKAGE, ['package.xml']),
        ('share/' + PACKAGE + '/launch', _files('launch/*.py')),
        ('share/' + PACKAGE + '/config', _files('config/*.yaml') + _files('config/*.json')),
        ('share/' + PACKAGE + '/urdf', _files('urdf/*')),
    ],
    # the compiled kernels, built ahead of time next to their sources (scripts/setup.sh, or
    # spart_ros.native.compiled on first use): installed with the package, so that nodes load
    # them instead of compiling
    package_data={
        PACKAGE + '.native': ['_call.c', '_kernels_*.so', '_kernels_*.pyd', '_kernels_*.json']
    },
    install_requires=['setuptools'],
    zip_safe=False,
    maintainer='spart_ros maintainers',
    maintainer_email='spart-ros@example.com',
    description='SPART spacecraft-robotics dynamics for ROS 2.',
    license='Apache-2.0',
    # colcon runs pytest for packages whose 'test' extra names pytest.
    extras_require={'test': ['pytest']},
    entry_points={
        'console_scripts': [
            'heartbeat_node = spart_ros.nodes.heartbeat_node:main',
            'dynamics_node = spart_ros.nodes.dynamics_node:main',
            'sim_node = spart_ros.nodes.sim_node:main',
            'controller_node = spart_ros.nodes.controller_node:main',
        ],
    },
)
