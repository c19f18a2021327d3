//! What the integration tests share.

use serde_json::json;

/// A row of the verification report: `tools/verify.py` reads every line of
/// the test output that holds `PERDURE-CHECK {json}`, with these fields
/// (`seconds` optional). `status` is `pass`, `fail` or `skip`.
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
