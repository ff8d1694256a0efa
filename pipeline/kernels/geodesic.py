"""Great-circle distances between GPS points (degrees of latitude and longitude).

The haversine formula on a sphere of radius R (metres: R is
:data:`mobeval.metrics.trajectory.EARTH_RADIUS`, the convention's, passed in)::

    a = sin^2((phi_2 - phi_1) / 2) + cos(phi_1) cos(phi_2) sin^2((lambda_2 - lambda_1) / 2)
    d = 2 R asin(sqrt(a))

with phi the latitudes and lambda the longitudes in radians (``a`` clipped to 1 against
rounding). The spherical model errs by up to about 0.5 % against the ellipsoid.
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.jit import njit


@njit(cache=True)
def haversine(lat1, lon1, lat2, lon2, radius):
    """The great-circle distance between two points given in degrees, on a sphere of
    ``radius`` (the distance's unit)."""
    phi1, phi2 = np.radians(lat1), np.radians(lat2)
    half_dphi = (phi2 - phi1) / 2.0
    half_dlambda = np.radians(lon2 - lon1) / 2.0
    a = np.sin(half_dphi) ** 2 + np.cos(phi1) * np.cos(phi2) * np.sin(half_dlambda) ** 2
    return 2.0 * radius * np.arcsin(np.sqrt(min(a, 1.0)))
