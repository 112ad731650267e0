//! Independent jobs (docs/architecture.md#the-pipeline): every stratum is grouped on its own, and
//! the pieces are assembled into one partition of the whole file with labels `0..g` (the groups
//! of the first stratum first, each stratum's groups in their order of creation).
//!
//! Threads: with `n_jobs ≠ 1` the jobs run as tasks of the call's one rayon pool, largest
//! first (so a big stratum does not start last and run alone). A job's method may itself
//! split its passes over the pool only when the job holds at least a thread's share of all
//! records (n / threads): the many equal strata of a typical file then run one per thread
//! with sequential kernels (no fine-grained synchronisation, one thread per working set),
//! while a dominant stratum still gets every idle thread. Each job's partition does not
//! depend on the thread count, and the assembly follows stratum order, not completion
//! order, so every `n_jobs` gives the same labels.

use crate::error::Result;
use crate::parallel::Exec;
use crate::partition::Partition;
use rayon::prelude::*;

/// Groups every part (record ids, ascending) with `group` and assembles the partition of
/// all `n` records. `group` receives a part's ids and the [`Exec`] its method may use, and
/// returns the partition of that part (labels in the part's order). Fails with the first
/// error in part order.
pub fn group_parts(
    n: usize,
    parts: &[Vec<u32>],
    exec: Exec,
    group: impl Fn(&[u32], Exec) -> Result<Partition> + Sync,
) -> Result<Partition> {
    let pieces: Vec<Result<Partition>> = if exec.is_parallel() && parts.len() > 1 {
        let inner = |len: usize| if len * exec.threads() >= n { exec } else { Exec::SEQUENTIAL };
        let mut order: Vec<usize> = (0..parts.len()).collect();
        order.sort_by_key(|&p| std::cmp::Reverse(parts[p].len()));
        let done: Vec<(usize, Result<Partition>)> = order
            .into_par_iter()
            .with_max_len(1)
            .map(|p| (p, group(&parts[p], inner(parts[p].len()))))
            .collect();
        let mut pieces: Vec<Option<Result<Partition>>> = parts.iter().map(|_| None).collect();
        for (p, piece) in done {
            pieces[p] = Some(piece);
        }
        pieces.into_iter().map(|p| p.expect("every part is grouped")).collect()
    } else {
        parts.iter().map(|ids| group(ids, exec)).collect()
    };
    let mut labels = vec![0u32; n];
    let mut offset = 0u32;
    for (ids, piece) in parts.iter().zip(pieces) {
        let piece = piece?;
        for (&id, &l) in ids.iter().zip(piece.labels()) {
            labels[id as usize] = offset + l;
        }
        offset += piece.n_groups() as u32;
    }
    Ok(Partition::new_unchecked(labels, offset as usize))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::Parallelism;

    /// Groups a part into consecutive pairs (the last group takes an odd leftover).
    fn pairs(ids: &[u32], _: Exec) -> Result<Partition> {
        let g = (ids.len() / 2).max(1);
        Ok(Partition::new_unchecked((0..ids.len()).map(|i| (i / 2).min(g - 1) as u32).collect(), g))
    }

    #[test]
    fn assembles_global_labels_in_part_order_whatever_the_threads() {
        let parts = vec![vec![1, 4, 5], vec![0, 2, 3, 6]];
        let seq = group_parts(7, &parts, Exec::SEQUENTIAL, pairs).unwrap();
        assert_eq!(seq.labels(), &[1, 0, 1, 2, 0, 0, 2]);
        assert_eq!(seq.n_groups(), 3);
        let par = Parallelism::from_n_jobs(2).unwrap();
        assert_eq!(par.install(|e| group_parts(7, &parts, e, pairs)).unwrap().unwrap(), seq);
    }

    #[test]
    fn only_a_part_with_a_threads_share_of_the_records_gets_the_pool() {
        let parts = vec![vec![0, 1, 2, 3, 4], vec![5, 6], vec![7, 8, 9]];
        let seen = std::sync::Mutex::new(Vec::new());
        let record = |ids: &[u32], exec: Exec| {
            seen.lock().unwrap().push((ids.len(), exec.threads()));
            pairs(ids, exec)
        };
        let par = Parallelism::from_n_jobs(2).unwrap();
        par.install(|e| group_parts(10, &parts, e, record)).unwrap().unwrap();
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        assert_eq!(seen, vec![(2, 1), (3, 1), (5, 2)]);
    }

    #[test]
    fn reports_the_first_error_in_part_order() {
        let parts = vec![vec![0], vec![1, 2], vec![3]];
        let fail = |ids: &[u32], exec| {
            if ids.len() == 1 {
                Err(crate::Error::InvalidLabels(format!("part at {}", ids[0])))
            } else {
                pairs(ids, exec)
            }
        };
        let par = Parallelism::from_n_jobs(2).unwrap();
        let err = par.install(|e| group_parts(4, &parts, e, fail)).unwrap().unwrap_err();
        assert_eq!(err, crate::Error::InvalidLabels("part at 0".into()));
    }
}
