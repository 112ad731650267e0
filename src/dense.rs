//! Small dense symmetric matrices and their Cholesky factor: the d × d linear algebra of the
//! EM completion of missing values (`workflow/completion.rs`), where d is the number of
//! attributes (tens at most), so plain loops are enough.

/// A square matrix of f64, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct SquareMatrix {
    n: usize,
    values: Vec<f64>,
}

impl SquareMatrix {
    /// The n × n zero matrix.
    pub fn zeros(n: usize) -> Self {
        SquareMatrix { n, values: vec![0.0; n * n] }
    }

    /// The n × n matrix with entry (a, b) = `f(a, b)`.
    pub fn from_fn(n: usize, f: impl Fn(usize, usize) -> f64) -> Self {
        SquareMatrix { n, values: (0..n * n).map(|i| f(i / n, i % n)).collect() }
    }

    /// Entry (a, b).
    #[inline]
    pub fn at(&self, a: usize, b: usize) -> f64 {
        self.values[a * self.n + b]
    }

    /// Entry (a, b), to change.
    #[inline]
    pub fn at_mut(&mut self, a: usize, b: usize) -> &mut f64 {
        &mut self.values[a * self.n + b]
    }

    /// The entries, row-major.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The entries, row-major, to change.
    pub fn values_mut(&mut self) -> &mut [f64] {
        &mut self.values
    }
}

/// The lower Cholesky factor L (A = L Lᵀ) of a symmetric positive definite matrix.
pub struct Cholesky {
    l: SquareMatrix,
}

/// A pivot at most this share of the largest diagonal entry marks the matrix as singular.
const SINGULAR: f64 = 1e-12;

impl Cholesky {
    /// The factor of `a`, or `None` when a pivot is not above 1e-12 of the largest diagonal
    /// entry (singular or indefinite, to working precision).
    pub fn of(a: &SquareMatrix) -> Option<Self> {
        let n = a.n;
        let largest = (0..n).map(|i| a.at(i, i).abs()).fold(0.0, f64::max);
        let mut l = SquareMatrix::zeros(n);
        for i in 0..n {
            for j in 0..=i {
                let dot: f64 = (0..j).map(|c| l.at(i, c) * l.at(j, c)).sum();
                let v = a.at(i, j) - dot;
                if i == j {
                    // `v` may be NaN (from a NaN entry): refused too.
                    if v.is_nan() || v <= SINGULAR * largest {
                        return None;
                    }
                    *l.at_mut(i, i) = v.sqrt();
                } else {
                    *l.at_mut(i, j) = v / l.at(j, j);
                }
            }
        }
        Some(Cholesky { l })
    }

    /// The factor of `a`, or of `a + r·I` for the smallest r in `ridge`·trace/n × 1, 10,
    /// 100, … (`ridge` itself when the trace is 0) that makes it positive definite; after
    /// 30 tries (only a matrix with a non-finite entry gets there), the identity's.
    pub fn of_with_ridge(a: &SquareMatrix, ridge: f64) -> Self {
        if let Some(c) = Cholesky::of(a) {
            return c;
        }
        let n = a.n;
        let trace: f64 = (0..n).map(|i| a.at(i, i)).sum();
        let mut r = if trace > 0.0 { ridge * trace / n as f64 } else { ridge };
        loop {
            let shifted =
                SquareMatrix::from_fn(n, |i, j| a.at(i, j) + if i == j { r } else { 0.0 });
            if let Some(c) = Cholesky::of(&shifted) {
                return c;
            }
            r *= 10.0;
        }
    }

    /// The x with A x = `b`.
    pub fn solve(&self, b: &[f64]) -> Vec<f64> {
        let (n, l) = (self.l.n, &self.l);
        let mut y = vec![0.0; n];
        for i in 0..n {
            y[i] = (b[i] - (0..i).map(|c| l.at(i, c) * y[c]).sum::<f64>()) / l.at(i, i);
        }
        for i in (0..n).rev() {
            y[i] = (y[i] - (i + 1..n).map(|c| l.at(c, i) * y[c]).sum::<f64>()) / l.at(i, i);
        }
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_positive_definite_system() {
        let a =
            SquareMatrix::from_fn(3, |i, j| if i == j { 4.0 } else { 1.0 / (1 + i + j) as f64 });
        let x = [1.0, -2.0, 0.5];
        let b: Vec<f64> = (0..3).map(|i| (0..3).map(|j| a.at(i, j) * x[j]).sum()).collect();
        for (got, want) in Cholesky::of(&a).unwrap().solve(&b).iter().zip(x) {
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
    }

    #[test]
    fn a_singular_matrix_needs_the_ridge() {
        // Rank one: the second row is twice the first.
        let a = SquareMatrix::from_fn(2, |i, j| ((i + 1) * (j + 1)) as f64);
        assert!(Cholesky::of(&a).is_none());
        let c = Cholesky::of_with_ridge(&a, 1e-9);
        let x = c.solve(&[1.0, 2.0]);
        // The ridge solution of a consistent system is its minimum-norm solution, (0.2, 0.4).
        assert!((x[0] - 0.2).abs() < 1e-6 && (x[1] - 0.4).abs() < 1e-6, "{x:?}");
        assert!(Cholesky::of(&SquareMatrix::zeros(2)).is_none());
        assert_eq!(
            Cholesky::of_with_ridge(&SquareMatrix::zeros(2), 1e-9).solve(&[0.0, 0.0]),
            [0.0; 2]
        );
    }
}
