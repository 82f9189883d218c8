//! Gunther's Universal Scalability Law fitted to a ramp's steps: throughput against
//! clones,
//!
//! ```text
//! X(N) = λN / (1 + σ(N − 1) + κN(N − 1))
//! ```
//!
//! where λ is the throughput of one clone alone, σ the share of the work that queues for
//! something shared (contention) and κ the cost of keeping shared state coherent
//! (crosstalk), which makes throughput fall past `N* = √((1 − σ)/κ)`. The fit places
//! the peak between and beyond the measured levels; it is shown beside the points with
//! its residuals, never instead of them.
//!
//! Least squares: for a given σ and κ the best λ has a closed form, so a grid over σ and
//! κ finds the basin and Levenberg–Marquardt on all three parameters (σ and κ kept at 0
//! or above) finishes. No dependency: three parameters and a handful of points.

use crate::protocol::ramp::{UslFit, UslPoint};

/// The fewest levels a fit is made from: three parameters need three points.
pub const MIN_LEVELS: usize = 3;

/// The law's throughput at `n` clones.
pub fn throughput(lambda: f64, sigma: f64, kappa: f64, n: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// The fit to `points` (clones, runs a minute); `None` with fewer than [`MIN_LEVELS`]
/// distinct levels, without throughput, or when nothing finite comes of it.
pub fn fit(points: &[(usize, f64)]) -> Option<UslFit> {
    let data: Vec<(f64, f64)> = points
        .iter()
        .filter(|(n, x)| *n > 0 && x.is_finite() && *x >= 0.0)
        .map(|(n, x)| (*n as f64, *x))
        .collect();
    let mut levels: Vec<usize> = points.iter().map(|p| p.0).filter(|n| *n > 0).collect();
    levels.sort_unstable();
    levels.dedup();
    if levels.len() < MIN_LEVELS || data.iter().all(|(_, x)| *x == 0.0) {
        return None;
    }
    let (sigma, kappa) = grid(&data);
    let lambda = best_lambda(&data, sigma, kappa);
    let (lambda, sigma, kappa) = refine(&data, [lambda, sigma, kappa]);
    if ![lambda, sigma, kappa].iter().all(|v| v.is_finite()) {
        return None;
    }
    let peak_clones = (kappa > 0.0 && sigma < 1.0).then(|| ((1.0 - sigma) / kappa).sqrt());
    let fitted: Vec<UslPoint> = points
        .iter()
        .filter(|(n, x)| *n > 0 && x.is_finite())
        .map(|(n, x)| {
            let f = throughput(lambda, sigma, kappa, *n as f64);
            UslPoint {
                clones: *n,
                runs_per_minute: *x,
                fitted: f,
                residual: x - f,
            }
        })
        .collect();
    let rms_residual =
        (fitted.iter().map(|p| p.residual * p.residual).sum::<f64>() / fitted.len() as f64).sqrt();
    Some(UslFit {
        lambda,
        sigma,
        kappa,
        peak_clones,
        peak_runs_per_minute: peak_clones.map(|n| throughput(lambda, sigma, kappa, n)),
        points: fitted,
        rms_residual,
    })
}

/// N over the law's denominator: the throughput at λ = 1.
fn shape(sigma: f64, kappa: f64, n: f64) -> f64 {
    throughput(1.0, sigma, kappa, n)
}

/// The λ that fits best for a given σ and κ: X is linear in λ.
fn best_lambda(data: &[(f64, f64)], sigma: f64, kappa: f64) -> f64 {
    let (xg, gg) = data.iter().fold((0.0, 0.0), |(xg, gg), (n, x)| {
        let g = shape(sigma, kappa, *n);
        (xg + x * g, gg + g * g)
    });
    if gg > 0.0 {
        (xg / gg).max(0.0)
    } else {
        0.0
    }
}

fn cost(data: &[(f64, f64)], p: [f64; 3]) -> f64 {
    data.iter()
        .map(|(n, x)| {
            let r = x - throughput(p[0], p[1], p[2], *n);
            r * r
        })
        .sum()
}

/// The σ and κ of the grid with the least squares (λ at its best for each): σ from 0 to
/// 1 by 0.02, κ 0 and 10⁻⁸ to 1 at ten points a decade.
fn grid(data: &[(f64, f64)]) -> (f64, f64) {
    let sigmas = (0..=50).map(|i| f64::from(i) / 50.0);
    let kappas: Vec<f64> = std::iter::once(0.0)
        .chain((0..=80).map(|i| 10f64.powf(-8.0 + f64::from(i) / 10.0)))
        .collect();
    let mut best = (f64::INFINITY, 0.0, 0.0);
    for sigma in sigmas {
        for &kappa in &kappas {
            let lambda = best_lambda(data, sigma, kappa);
            let c = cost(data, [lambda, sigma, kappa]);
            if c < best.0 {
                best = (c, sigma, kappa);
            }
        }
    }
    (best.1, best.2)
}

/// Levenberg–Marquardt from `start`, σ and κ held at 0 or above.
fn refine(data: &[(f64, f64)], start: [f64; 3]) -> (f64, f64, f64) {
    let mut p = start;
    let mut c = cost(data, p);
    let mut damping = 1e-3;
    for _ in 0..500 {
        // The normal equations JᵀJ δ = Jᵀr of the residuals r = X − f.
        let mut jtj = [[0.0f64; 3]; 3];
        let mut jtr = [0.0f64; 3];
        for (n, x) in data {
            let d = 1.0 + p[1] * (n - 1.0) + p[2] * n * (n - 1.0);
            let f = p[0] * n / d;
            let j = [
                n / d,
                -p[0] * n * (n - 1.0) / (d * d),
                -p[0] * n * n * (n - 1.0) / (d * d),
            ];
            for a in 0..3 {
                jtr[a] += j[a] * (x - f);
                for b in 0..3 {
                    jtj[a][b] += j[a] * j[b];
                }
            }
        }
        let mut improved = false;
        while damping < 1e12 {
            let mut m = jtj;
            for (a, row) in m.iter_mut().enumerate() {
                row[a] += damping * jtj[a][a].max(1e-300);
            }
            let Some(step) = solve3(m, jtr) else {
                damping *= 10.0;
                continue;
            };
            let next = [
                (p[0] + step[0]).max(0.0),
                (p[1] + step[1]).max(0.0),
                (p[2] + step[2]).max(0.0),
            ];
            let nc = cost(data, next);
            if nc.is_finite() && nc <= c {
                let converged = c - nc <= 1e-15 * c.max(1e-300)
                    || next
                        .iter()
                        .zip(p)
                        .all(|(a, b)| (a - b).abs() <= 1e-14 * b.abs().max(1e-12));
                p = next;
                c = nc;
                damping = (damping / 10.0).max(1e-12);
                improved = !converged;
                break;
            }
            damping *= 10.0;
        }
        if !improved {
            break;
        }
    }
    (p[0], p[1], p[2])
}

/// `m x = v` for a 3×3 `m` by Gaussian elimination with partial pivoting; `None` when
/// `m` is singular.
fn solve3(mut m: [[f64; 3]; 3], mut v: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let pivot = (col..3).max_by(|a, b| m[*a][col].abs().total_cmp(&m[*b][col].abs()))?;
        if m[pivot][col].abs() < 1e-300 {
            return None;
        }
        m.swap(col, pivot);
        v.swap(col, pivot);
        for row in col + 1..3 {
            let factor = m[row][col] / m[col][col];
            let pivot_row = m[col];
            for (k, cell) in m[row].iter_mut().enumerate().skip(col) {
                *cell -= factor * pivot_row[k];
            }
            v[row] -= factor * v[col];
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        let tail: f64 = (row + 1..3).map(|k| m[row][k] * x[k]).sum();
        x[row] = (v[row] - tail) / m[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synthetic(lambda: f64, sigma: f64, kappa: f64, levels: &[usize]) -> Vec<(usize, f64)> {
        levels
            .iter()
            .map(|n| (*n, throughput(lambda, sigma, kappa, *n as f64)))
            .collect()
    }

    fn close(a: f64, b: f64, relative: f64) -> bool {
        (a - b).abs() <= relative * b.abs().max(1e-12)
    }

    #[test]
    fn the_fit_finds_the_parameters_that_made_the_points() {
        for (lambda, sigma, kappa, levels) in [
            (0.5, 0.05, 0.0002, vec![10, 20, 30, 40, 60, 80, 100]),
            (2.0, 0.2, 0.01, vec![1, 2, 4, 8, 16, 32]),
            (0.25, 0.0, 0.001, vec![5, 10, 15, 20, 25]),
            (1.0, 0.3, 0.0, vec![1, 3, 9, 27]),
        ] {
            let f = fit(&synthetic(lambda, sigma, kappa, &levels)).unwrap();
            assert!(close(f.lambda, lambda, 1e-6), "λ {} for {lambda}", f.lambda);
            assert!((f.sigma - sigma).abs() < 1e-6, "σ {} for {sigma}", f.sigma);
            assert!((f.kappa - kappa).abs() < 1e-8, "κ {} for {kappa}", f.kappa);
            assert!(f.rms_residual < 1e-6, "{}", f.rms_residual);
            assert_eq!(f.points.len(), levels.len());
        }
    }

    #[test]
    fn the_peak_is_where_crosstalk_overtakes_the_gain() {
        let f = fit(&synthetic(
            0.5,
            0.05,
            0.0002,
            &[10, 20, 30, 40, 60, 80, 100],
        ))
        .unwrap();
        // √(0.95 / 0.0002) = 68.9
        let peak = f.peak_clones.unwrap();
        assert!(close(peak, (0.95f64 / 0.0002).sqrt(), 1e-5), "{peak}");
        let at_peak = f.peak_runs_per_minute.unwrap();
        for n in [60.0, 65.0, 75.0, 80.0] {
            assert!(at_peak >= throughput(f.lambda, f.sigma, f.kappa, n));
        }
        // No crosstalk, no peak.
        let flat = fit(&synthetic(1.0, 0.3, 0.0, &[1, 3, 9, 27])).unwrap();
        assert_eq!(flat.peak_clones, None);
    }

    #[test]
    fn residuals_are_the_measured_less_the_fitted() {
        let mut points = synthetic(0.5, 0.02, 0.0005, &[10, 20, 30, 40, 50]);
        points[2].1 += 0.3;
        let f = fit(&points).unwrap();
        for p in &f.points {
            assert!((p.runs_per_minute - p.fitted - p.residual).abs() < 1e-12);
        }
        assert!(f.rms_residual > 0.0);
        // The fit is no worse than the parameters that made the other points.
        let truth = cost(
            &points
                .iter()
                .map(|(n, x)| (*n as f64, *x))
                .collect::<Vec<_>>(),
            [0.5, 0.02, 0.0005],
        );
        assert!(f.rms_residual.powi(2) * 5.0 <= truth + 1e-12);
    }

    #[test]
    fn too_few_levels_make_no_fit() {
        assert_eq!(fit(&[(10, 5.0), (20, 10.0)]), None);
        assert_eq!(fit(&[(10, 5.0), (10, 5.1), (20, 10.0)]), None);
        assert_eq!(fit(&[(10, 0.0), (20, 0.0), (30, 0.0)]), None);
        assert!(fit(&[(10, 5.0), (20, 10.0), (30, 14.0)]).is_some());
    }
}
