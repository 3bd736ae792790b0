"""An independent construction of the kit's flexible length model (``stats.length_covariates``) for the checks:
the natural cubic spline space of each variable built from the truncated power basis and the null space of the
linearity constraints (scipy), not Harrell's closed form the kit uses. The two bases span the same space, so
every partial correlation given them is equal."""
import numpy as np
from scipy.linalg import null_space


def natural_spline_terms(x: np.ndarray) -> np.ndarray:
    """The non-linear part of the natural cubic spline space of ``x`` with knots at its 5/35/65/95th percentiles:
    combinations sum_j theta_j (x - k_j)^3_+ that are linear beyond the last knot (sum theta = sum theta k = 0)."""
    k = np.unique(np.quantile(x, [0.05, 0.35, 0.65, 0.95]))
    if len(k) < 3:
        return np.zeros((len(x), 0))
    tp = np.maximum(x[:, None] - k[None, :], 0.0) ** 3
    return tp @ null_space(np.vstack([np.ones(len(k)), k]))


def flexible_design(hyp_len, ref_len) -> np.ndarray:
    """[h, spline(h), r, spline(r), spline(h - r), h r] with h, r the log(1 + length)s (no intercept column)."""
    h, r = np.log1p(np.asarray(hyp_len, dtype=float)), np.log1p(np.asarray(ref_len, dtype=float))
    return np.column_stack([h, natural_spline_terms(h), r, natural_spline_terms(r), natural_spline_terms(h - r),
                            h * r])
