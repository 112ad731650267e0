//! `"auto"`'s early stop: a partition's (weighted) SSE only grows as its classes take more
//! records or merge, so a candidate whose classes so far already cost more than the best
//! complete candidate cannot be chosen and is dropped where it stands. The classes a
//! candidate forms are also what its progress counts.

use super::space::Space;
use crate::progress::Share;

/// Relative margin on the limit: the SSE charged here and the SSE `"auto"` compares are
/// summed in different orders, so a candidate is dropped only when clearly worse (never one
/// that would tie).
const MARGIN: f64 = 1e-9;

/// The SSE spent so far by a candidate and the most it may spend; the records of the classes
/// it charges are counted on the run's progress when one is attached ([`Budget::counting`]).
#[derive(Debug, Clone, Copy)]
pub struct Budget<'a> {
    limit: f64,
    spent: f64,
    progress: Option<&'a Share<'a>>,
}

/// Budgets are equal when they spent the same and may spend the same (where progress is
/// counted is no part of the value).
impl PartialEq for Budget<'_> {
    fn eq(&self, other: &Self) -> bool {
        (self.limit, self.spent) == (other.limit, other.spent)
    }
}

impl<'a> Budget<'a> {
    /// No limit (a single method, or the first candidate).
    pub fn unlimited() -> Self {
        Budget { limit: f64::INFINITY, spent: 0.0, progress: None }
    }

    /// Up to the SSE `best` of the best complete candidate (and the rounding margin).
    pub fn below(best: f64) -> Self {
        Budget { limit: best * (1.0 + MARGIN) + f64::MIN_POSITIVE, spent: 0.0, progress: None }
    }

    /// The same budget, counting the records of every class charged on `progress`.
    pub fn counting(self, progress: &'a Share<'a>) -> Self {
        Budget { progress: Some(progress), ..self }
    }

    /// Starts over from a partition of SSE `sse` (a candidate's classes as built); false if
    /// that is already over the limit.
    pub fn restart(&mut self, sse: f64) -> bool {
        self.spent = sse;
        self.spent <= self.limit
    }

    /// Adds `amount` (the SSE a merge adds); false once over the limit.
    pub fn charge(&mut self, amount: f64) -> bool {
        self.spent += amount;
        self.spent <= self.limit
    }

    /// Adds the SSE of a new class `members` of `space`, each record counting with its
    /// `mass`, around their weighted mean; false once over the limit.
    pub fn charge_class<S: Space>(&mut self, space: &S, members: &[usize], mass: &[f64]) -> bool {
        if let Some(p) = self.progress {
            p.add(members.len());
        }
        let (sums, total) = space.weighted(members.iter().copied(), mass);
        if total <= 0.0 {
            return self.spent <= self.limit;
        }
        let mean = space.mean(&sums, total);
        self.charge(members.iter().map(|&i| mass[i] * space.dist2(i, &mean)).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcloseness::space::Dense;

    #[test]
    fn a_class_charges_its_weighted_sse_and_the_limit_keeps_ties() {
        // Points 0 and 2 (mass 1 and 3): weighted mean 1.5, SSE 1·1.5² + 3·0.5² = 3.
        let rows = Dense::new(&[0.0, 2.0], 1);
        let mut b = Budget::below(3.0);
        assert!(b.charge_class(&rows, &[0, 1], &[1.0, 3.0]), "a tie is kept");
        assert!(!b.charge(1e-6));
        let mut free = Budget::unlimited();
        assert!(free.charge_class(&rows, &[0, 1], &[0.0, 0.0]) && free.restart(1e300));
        assert!(!Budget::below(2.0).restart(3.0));
    }

    #[test]
    fn the_records_of_every_class_charged_are_counted_once_per_candidate() {
        let rows = Dense::new(&[0.0, 2.0, 4.0, 6.0], 1);
        let progress = crate::progress::Progress::new();
        let share = Share::new(&progress, 2); // two candidates over the same 4 records
        for _ in 0..2 {
            let mut b = Budget::unlimited().counting(&share);
            assert!(b.charge_class(&rows, &[0, 1, 2], &[1.0; 4]));
            assert!(b.charge_class(&rows, &[3], &[1.0; 4]));
        }
        assert_eq!(progress.get(), 4);
        assert!(Budget::unlimited().counting(&share) == Budget::unlimited());
    }
}
