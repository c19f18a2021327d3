//! What the integration tests share.

use serde_json::json;

/// A row of the verification report: `tools/verify.py` reads every line of
/// the test output that holds `PERDURE-CHECK {json}`, with these fields
/// (`seconds` optional). `status` is `pass`, `fail` or `skip`.
#[allow(dead_code)] // not every test binary prints rows
pub fn report_row(
    name: &str,
    kind: &str,
    status: &str,
    explored: &str,
    detail: &str,
    seconds: Option<f64>,
) -> String {
    let mut row = json!({
        "name": name,
        "kind": kind,
        "status": status,
        "explored": explored,
        "detail": detail,
    });
    if let Some(seconds) = seconds {
        row["seconds"] = json!(seconds);
    }
    format!("PERDURE-CHECK {row}")
}

/// The first violation `r` reports, which must be a durable-linearizability
/// one (not a failed recovery); `what` says what was expected to be caught.
#[allow(dead_code)] // only the explorer's tests use it
pub fn first_dl_violation<'r>(
    r: &'r perdure_check::explore::ExploreReport,
    what: &str,
) -> &'r perdure_check::explore::Violation {
    let v = r.violations.first().expect(what);
    assert!(
        v.reason.starts_with("not durably linearizable"),
        "{}",
        v.reason
    );
    v
}
