//! How far a property test's generator reaches: the share of its values that fall on
//! each side of what the test claims (accepted and refused, read back or not), drawn
//! over a fixed number of cases from a deterministic runner, so that a generator which
//! drifts to one side fails a test instead of passing every case without reaching the
//! assertion. `tests/hostile_readers.rs` includes this file too.

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;

/// Values drawn per check: enough that a share is stable to a few percent.
pub const CASES: usize = 500;

/// The percentage of [`CASES`] values of `strategy` for which `side` holds.
pub fn percent_where<S: Strategy>(strategy: &S, side: impl Fn(&S::Value) -> bool) -> usize {
    let mut runner = TestRunner::deterministic();
    let hits = (0..CASES)
        .filter(|_| {
            let tree = strategy
                .new_tree(&mut runner)
                .expect("the strategy gives a value");
            side(&tree.current())
        })
        .count();
    hits * 100 / CASES
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
    let share = percent_where(strategy, branch);
    eprintln!("{what}: {share}% of {CASES} cases");
    assert!(
        share >= least,
        "{what}: reached in {share}% of {CASES} cases, at least {least}% needed"
    );
}
