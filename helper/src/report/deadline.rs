//! One deadline for every request a report (or a recorder's sample) makes.
//!
//! Each request has its own limit ([`crate::report::https::HTTP_TIMEOUT`]), but a report
//! asks the server, PuppetDB's status and metrics, and then one PuppetDB query per load
//! host its facts name: a server or PuppetDB that answers slowly, or a fact that names
//! many hosts, would hold the report (and the recorder, as root, every few seconds) for
//! as many limits as there are requests. So the report makes one [`Deadline`] and every
//! request's limit is cut to what is left of it; once it has passed, nothing more is asked.

use std::time::{Duration, Instant};

/// A moment after which no request of one report is made or waited for.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    end: Instant,
    budget: Duration,
}

impl Deadline {
    /// The deadline `budget` from now.
    pub fn after(budget: Duration) -> Self {
        Deadline {
            end: Instant::now() + budget,
            budget,
        }
    }

    /// How long the requests had together.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// What is left, zero once it has passed.
    pub fn remaining(&self) -> Duration {
        self.end.saturating_duration_since(Instant::now())
    }

    /// The limit of the next request: `cap`, cut to what is left; an error saying so when
    /// nothing is left.
    pub fn request_timeout(&self, cap: Duration) -> Result<RequestTimeout, String> {
        let left = self.remaining();
        if left.is_zero() {
            return Err(format!(
                "not asked: the {} s given to all the requests together have passed",
                self.budget.as_secs_f64()
            ));
        }
        Ok(if left < cap {
            RequestTimeout {
                limit: left,
                cut: true,
            }
        } else {
            RequestTimeout {
                limit: cap,
                cut: false,
            }
        })
    }
}

/// A request's limit, and whether the deadline cut it (for the error, when it runs out).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RequestTimeout {
    pub limit: Duration,
    pub cut: bool,
}

impl RequestTimeout {
    /// Why a request that ran out of time did, for its error.
    pub fn explain(&self, budget: Duration) -> String {
        if self.cut {
            format!(
                "the {:.1} s left of the {} s given to all the requests together ran out",
                self.limit.as_secs_f64(),
                budget.as_secs_f64()
            )
        } else {
            format!(
                "no answer within {} s, the limit of one request",
                self.limit.as_secs_f64()
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_cut_to_what_is_left_and_none_is_made_after() {
        let cap = Duration::from_secs(10);
        let long = Deadline::after(Duration::from_secs(60));
        assert_eq!(
            long.request_timeout(cap).unwrap(),
            RequestTimeout {
                limit: cap,
                cut: false
            }
        );
        let short = Deadline::after(Duration::from_secs(2));
        let t = short.request_timeout(cap).unwrap();
        assert!(t.cut && t.limit <= Duration::from_secs(2), "{t:?}");
        let passed = Deadline::after(Duration::ZERO);
        let e = passed.request_timeout(cap).unwrap_err();
        assert!(e.contains("not asked") && e.contains("0 s"), "{e}");
    }
}
