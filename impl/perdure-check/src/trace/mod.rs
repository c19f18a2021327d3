//! Traces into TLC: turning an ndjson trace (`traces/SCHEMA.md`) into a
//! TLA+ module, and producing protocol-level traces of the implementation.
//!
//! * [`to_tla_module`] — any trace → a TLA+ module defining `Trace`, a
//!   sequence of records, one per line (`perdure trace-to-tla`). JSON maps
//!   to TLA+ as: integer → integer, string → string, boolean →
//!   `TRUE`/`FALSE`, array → sequence `<< >>`, object → record `[k |-> v]`,
//!   `null` → the string `"null"` (TLA+ has no null; the module defines
//!   `Null == "null"`). Non-integer numbers and object keys that are not
//!   TLA+ identifiers are errors with the line number.
//! * [`TraceOptions`] — the options every trace producer takes (the
//!   construction, `--seed --runs --threads --ops --crash --tamper`).
//! * [`log`] — traces of the tutorial commit-marker log as run by the Rust
//!   code on the `Sim` backend, at the level of the protocol steps of
//!   `specs/tutorial/CommitLog.tla`, with an optional crash whose persisted
//!   state (the image the simulator chose) is recorded in the trace.
//!
//! `tools/trace-check.sh` puts the two together with a trace-validation spec
//! (`traces/tutorial/CommitLogTrace.tla`) and TLC: the trace is accepted
//! exactly when TLC can replay all of it as steps of the protocol.

pub mod log;
mod options;

pub use options::{Named, TraceOptions};

use serde_json::Value;

/// Errors converting a trace.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    /// A line is not valid JSON.
    #[error("line {line}: not JSON: {reason}")]
    NotJson {
        /// 1-based line number.
        line: usize,
        /// The parser's message.
        reason: String,
    },
    /// A value TLA+ cannot represent.
    #[error("line {line}: {reason}")]
    Unrepresentable {
        /// 1-based line number.
        line: usize,
        /// What cannot be represented.
        reason: String,
    },
    /// The module name is not a TLA+ identifier.
    #[error(
        "{0:?} is not a valid TLA+ module name (letters, digits, underscores; not only digits)"
    )]
    BadModuleName(String),
    /// The trace has no events.
    #[error("the trace is empty")]
    Empty,
}

/// Whether `s` can be a TLA+ identifier (record field or module name).
pub fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.chars().all(|c| c.is_ascii_digit())
        && !matches!(
            s,
            "TRUE"
                | "FALSE"
                | "IF"
                | "THEN"
                | "ELSE"
                | "LET"
                | "IN"
                | "CASE"
                | "OTHER"
                | "CHOOSE"
                | "EXCEPT"
                | "DOMAIN"
                | "SUBSET"
                | "UNION"
                | "ENABLED"
                | "UNCHANGED"
                | "MODULE"
                | "EXTENDS"
                | "VARIABLE"
                | "VARIABLES"
                | "CONSTANT"
                | "CONSTANTS"
                | "INSTANCE"
                | "WITH"
                | "LOCAL"
                | "ASSUME"
                | "THEOREM"
                | "LAMBDA"
                | "ELSEIF"
        )
}

fn tla_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One JSON value as a TLA+ expression.
pub fn json_to_tla(v: &Value) -> Result<String, String> {
    Ok(match v {
        Value::Null => "\"null\"".to_owned(),
        Value::Bool(b) => if *b { "TRUE" } else { "FALSE" }.to_owned(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => {
                if i < 0 {
                    format!("({i})")
                } else {
                    i.to_string()
                }
            }
            (None, Some(u)) => u.to_string(),
            _ => {
                return Err(format!(
                    "{n} is not an integer (TLA+ has no floating point)"
                ))
            }
        },
        Value::String(s) => tla_string(s),
        Value::Array(a) => {
            let items: Result<Vec<_>, _> = a.iter().map(json_to_tla).collect();
            format!("<<{}>>", items?.join(", "))
        }
        Value::Object(o) => {
            if o.is_empty() {
                // The empty function; TLA+ has no empty record literal.
                return Ok("[x \\in {} |-> 0]".to_owned());
            }
            let mut fields = Vec::with_capacity(o.len());
            for (k, v) in o {
                if !is_identifier(k) {
                    return Err(format!("object key {k:?} is not a TLA+ identifier"));
                }
                fields.push(format!("{k} |-> {}", json_to_tla(v)?));
            }
            format!("[{}]", fields.join(", "))
        }
    })
}

/// Converts an ndjson trace to a TLA+ module named `module` defining
/// `Trace` (a sequence of records, one per non-blank line) and `Null`.
pub fn to_tla_module(ndjson: &str, module: &str) -> Result<String, TraceError> {
    if !is_identifier(module) {
        return Err(TraceError::BadModuleName(module.to_owned()));
    }
    let mut items = Vec::new();
    for (i, line) in ndjson.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| TraceError::NotJson {
            line: i + 1,
            reason: e.to_string(),
        })?;
        let t = json_to_tla(&v).map_err(|reason| TraceError::Unrepresentable {
            line: i + 1,
            reason,
        })?;
        items.push(t);
    }
    if items.is_empty() {
        return Err(TraceError::Empty);
    }
    let bar = "-".repeat(20);
    Ok(format!(
        "{bar} MODULE {module} {bar}\n\\* Generated by `perdure trace-to-tla`: {n} events. Do not edit.\nNull == \"null\"\nTrace == <<\n  {body}\n>>\n{end}\n",
        n = items.len(),
        body = items.join(",\n  "),
        end = "=".repeat(40 + module.len() + 9)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_map_to_tla() {
        let v: Value =
            serde_json::from_str(r#"{"a":[1,-2,"x\"y"],"b":null,"c":true,"d":{}}"#).unwrap();
        assert_eq!(
            json_to_tla(&v).unwrap(),
            r#"[a |-> <<1, (-2), "x\"y">>, b |-> "null", c |-> TRUE, d |-> [x \in {} |-> 0]]"#
        );
        assert!(json_to_tla(&serde_json::json!(1.5)).is_err());
        assert!(json_to_tla(&serde_json::json!({"not an id": 1})).is_err());
    }

    #[test]
    fn modules_and_errors_with_line_numbers() {
        let m = to_tla_module(
            "{\"type\":\"crash\"}\n\n{\"type\":\"step\",\"n\":2}\n",
            "T1",
        )
        .unwrap();
        assert!(
            m.contains("MODULE T1") && m.contains("[type |-> \"crash\"]") && m.contains("n |-> 2")
        );
        assert!(m.trim_end().ends_with('='));
        assert_eq!(
            to_tla_module("{}\n{oops\n", "T"),
            Err(TraceError::NotJson {
                line: 2,
                reason: serde_json::from_str::<Value>("{oops")
                    .unwrap_err()
                    .to_string()
            })
        );
        assert!(matches!(
            to_tla_module("{\"x\":0.5}", "T"),
            Err(TraceError::Unrepresentable { line: 1, .. })
        ));
        assert!(matches!(to_tla_module("", "T"), Err(TraceError::Empty)));
        assert!(matches!(
            to_tla_module("{}", "1x-"),
            Err(TraceError::BadModuleName(_))
        ));
        assert!(matches!(
            to_tla_module("{}", "EXTENDS"),
            Err(TraceError::BadModuleName(_))
        ));
    }
}
