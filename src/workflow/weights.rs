//! Sampling weights (docs/workflow.md#weights): one non-negative, finite weight per record, not
//! all zero. Groups are formed without them (k counts records); they weight each group's
//! released value and the SSE/SST of the evaluation.

use crate::error::{Error, Result};

/// Checks that `weights` has one non-negative, finite value per record (`n`) and that not
/// every weight is zero; the error names the argument `weights` and the first bad record.
pub fn validate_weights(weights: &[f64], n: usize) -> Result<()> {
    let bad = |reason: String| Err(Error::InvalidParameter { name: "weights".into(), reason });
    if weights.len() != n {
        return bad(format!("need one weight per record ({n}), got {}", weights.len()));
    }
    if let Some(i) = weights.iter().position(|w| !w.is_finite()) {
        return bad(format!("weights must be finite, got {} at record {i}", weights[i]));
    }
    if let Some(i) = weights.iter().position(|&w| w < 0.0) {
        return bad(format!("weights must be non-negative, got {} at record {i}", weights[i]));
    }
    if weights.iter().all(|&w| w == 0.0) {
        return bad("every weight is zero; at least one record must have a positive weight".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_good_weights_and_names_each_problem() {
        assert!(validate_weights(&[1.0, 0.0, 2.5], 3).is_ok());
        let reason = |w: &[f64]| match validate_weights(w, 3) {
            Err(Error::InvalidParameter { name, reason }) if name == "weights" => reason,
            other => panic!("{other:?}"),
        };
        assert!(reason(&[1.0, 2.0]).contains("one weight per record (3), got 2"));
        assert!(reason(&[1.0, f64::NAN, 1.0]).contains("finite, got NaN at record 1"));
        assert!(reason(&[1.0, 1.0, f64::INFINITY]).contains("finite, got inf at record 2"));
        assert!(reason(&[-1.0, 1.0, 1.0]).contains("non-negative, got -1 at record 0"));
        assert!(reason(&[0.0, 0.0, 0.0]).contains("every weight is zero"));
    }
}
