//! A run as the report shows it: its summary's word (`summary.rs`), overruled by the kinds
//! of failure its agent's full report shows (`last_report.rs`, kinds in [`super::failure`])
//! when the report is of the same run.

use crate::protocol::answers::RunReportFile;
use crate::protocol::answers::RunStatus;

use super::failure::FailureKind;
use super::last_report::is_same_run;
use super::run_cache::{not_read_yet, ReportReading};
use super::summary::LastRun;

/// A run as the report shows it: its summary's word, overruled by its report's.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub status: RunStatus,
    pub kinds: Vec<FailureKind>,
    /// Why it failed: the report's first errors, or why the report could not say.
    pub failure: Option<String>,
    pub file: RunReportFile,
}

/// The run `run` (its summary) with what `report` (its agent's report file: `None` when
/// there is none, `Err` when it could not be read) says of it. The report counts only when
/// it is of the same run ([`is_same_run`]); one that is not says nothing of this run.
pub fn judge(run: &LastRun, report: Option<Result<ReportReading, String>>) -> Judged {
    let failed = run.status == RunStatus::Failed;
    let mut judged = Judged {
        status: run.status,
        kinds: Vec::new(),
        failure: None,
        file: RunReportFile::Missing,
    };
    let mut kinds = std::collections::BTreeSet::new();
    match report {
        None => {}
        Some(Err(reason)) | Some(Ok(ReportReading::Garbage(reason))) => {
            judged.file = RunReportFile::Unreadable;
            judged.failure = failed.then_some(reason);
        }
        Some(Ok(ReportReading::NotReadYet)) => {
            judged.file = RunReportFile::NotReadYet;
            judged.failure = failed.then(|| format!("why it failed is {}", not_read_yet()));
        }
        Some(Ok(ReportReading::Found(found))) => {
            if is_same_run(found.started, run.last_run, run.total_time) {
                judged.file = RunReportFile::Read;
                if found.kinds.iter().any(|k| k.is_the_servers()) {
                    judged.status = RunStatus::Failed;
                }
                kinds = found.kinds;
                judged.failure = found.errors;
            } else {
                judged.file = RunReportFile::EarlierRun;
            }
        }
    }
    if judged.status == RunStatus::Failed {
        if run.failed_resources.unwrap_or(0) > 0 {
            kinds.insert(FailureKind::Resources);
        }
        if kinds.is_empty() {
            kinds.insert(FailureKind::Other);
        }
        judged.kinds = kinds.into_iter().collect();
    } else {
        judged.failure = None;
    }
    judged
}
