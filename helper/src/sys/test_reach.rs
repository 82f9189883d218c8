//! How far a property test's generator reaches: the share of its values that fall on
//! each side of what the test claims (accepted and refused, read back or not), drawn
//! over a fixed number of cases from a deterministic runner, so that a generator which
//! drifts to one side fails a test instead of passing every case without reaching the
//! assertion. `tests/hostile_readers.rs` includes this file too.

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;

/// Values drawn per check: enough that a share is stable to a few percent.
pub const CASES: usize = 500;

/// A side of a claim: whether it holds for a value.
pub type Side<'a, T> = &'a dyn Fn(&T) -> bool;

/// The percentage of [`CASES`] values of `strategy` for which `side` holds.
pub fn percent_where<S: Strategy>(strategy: &S, side: impl Fn(&S::Value) -> bool) -> usize {
    percents_where(strategy, &[&side])[0]
}

/// The percentage of [`CASES`] values of `strategy` for which each of `sides` holds,
/// over one draw: a strategy that is slow to draw from is drawn from once.
pub fn percents_where<S: Strategy>(strategy: &S, sides: &[Side<S::Value>]) -> Vec<usize> {
    let mut runner = TestRunner::deterministic();
    let mut hits = vec![0; sides.len()];
    for _ in 0..CASES {
        let tree = strategy
            .new_tree(&mut runner)
            .expect("the strategy gives a value");
        let value = tree.current();
        for (hit, side) in hits.iter_mut().zip(sides) {
            *hit += usize::from(side(&value));
        }
    }
    hits.into_iter().map(|hit| hit * 100 / CASES).collect()
}

/// Asserts that `side` holds for at least `least` percent of the values of `strategy`
/// and fails for at least `least` percent: the test sees both sides of its claim.
pub fn assert_both_sides<S: Strategy>(
    what: &str,
    strategy: &S,
    side: impl Fn(&S::Value) -> bool,
    least: usize,
) {
    let share = percent_where(strategy, side);
    eprintln!("{what}: {share}% of {CASES} cases");
    assert!(
        (least..=100 - least).contains(&share),
        "{what}: {share}% of {CASES} cases on one side, {}% on the other; each side needs at least {least}%",
        100 - share
    );
}

/// Asserts that `branch` holds for at least `least` percent of the values of `strategy`.
pub fn assert_reaches<S: Strategy>(
    what: &str,
    strategy: &S,
    branch: impl Fn(&S::Value) -> bool,
    least: usize,
) {
    assert_each_reaches(strategy, &[(what, &branch)], least);
}

/// Asserts that each of `branches` (named) holds for at least `least` percent of the
/// values of `strategy`, drawn once for all of them.
pub fn assert_each_reaches<S: Strategy>(
    strategy: &S,
    branches: &[(&str, Side<S::Value>)],
    least: usize,
) {
    let sides: Vec<Side<S::Value>> = branches.iter().map(|(_, side)| *side).collect();
    let shares = percents_where(strategy, &sides);
    for ((what, _), share) in branches.iter().zip(&shares) {
        eprintln!("{what}: {share}% of {CASES} cases");
    }
    for ((what, _), share) in branches.iter().zip(shares) {
        assert!(
            share >= least,
            "{what}: reached in {share}% of {CASES} cases, at least {least}% needed"
        );
    }
}
