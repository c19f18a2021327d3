//! JSON values as the checker compares them, and their interning.
//!
//! Two values are equal when their canonical forms are equal: objects compare
//! regardless of key order, and numbers compare by numeric value (`1`, `1.0`
//! and `1e0` are the same value; `-0.0` is `0`). Every value of a history is
//! interned once into a dense [`ValueId`], so the sequential models and the
//! search compare and hash small integers instead of JSON trees.

use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;

/// A dense id of an interned JSON value.
pub(crate) type ValueId = u32;

/// The id of `null` in every [`Interner`].
pub(crate) const NULL: ValueId = 0;
/// The id of `false` in every [`Interner`].
pub(crate) const FALSE: ValueId = 1;
/// The id of `true` in every [`Interner`].
pub(crate) const TRUE: ValueId = 2;

/// The integer a JSON number denotes, if it is integral (`3`, `3.0`,
/// `-2e3`) and within ±2^100.
pub(crate) fn json_integer(v: &Value) -> Option<i128> {
    let Value::Number(n) = v else { return None };
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    let f = n.as_f64()?;
    // 2^100 is far inside i128 and far beyond any exactly representable
    // integer, so the cast below is exact.
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1.2676506002282294e30 {
        Some(f as i128)
    } else {
        None
    }
}

/// The canonical text of `v`: compact JSON with object keys sorted and
/// integral numbers written as integers.
pub(crate) fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match json_integer(v) {
            Some(i) => {
                let _ = write!(out, "{i}");
            }
            None => {
                let _ = write!(out, "{}", n.as_f64().unwrap_or(f64::NAN));
            }
        },
        Value::String(s) => out.push_str(&Value::String(s.clone()).to_string()),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
    }
}

/// `v` as compact JSON, for messages; long values are shortened with `...`.
pub(crate) fn render(v: &Value) -> String {
    const LIMIT: usize = 120;
    let s = v.to_string();
    if s.len() <= LIMIT {
        return s;
    }
    let mut cut = LIMIT;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...", &s[..cut])
}

/// Interns JSON values by canonical form: equal values get equal ids.
pub(crate) struct Interner {
    ids: HashMap<String, ValueId>,
}

impl Interner {
    /// An interner holding `null`, `false` and `true` as [`NULL`], [`FALSE`]
    /// and [`TRUE`].
    pub(crate) fn new() -> Interner {
        let mut ids = HashMap::new();
        ids.insert("null".to_string(), NULL);
        ids.insert("false".to_string(), FALSE);
        ids.insert("true".to_string(), TRUE);
        Interner { ids }
    }

    /// The id of `v`, allocating one if it is new.
    pub(crate) fn intern(&mut self, v: &Value) -> ValueId {
        let next = self.ids.len() as ValueId;
        *self.ids.entry(canonical_json(v)).or_insert(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value_and_objects_ignore_key_order() {
        let mut i = Interner::new();
        assert_eq!(i.intern(&json!(1)), i.intern(&json!(1.0)));
        assert_eq!(
            i.intern(&json!(-2000)),
            i.intern(&serde_json::from_str::<Value>("-2e3").unwrap())
        );
        assert_eq!(i.intern(&json!(0)), i.intern(&json!(-0.0)));
        assert_ne!(i.intern(&json!(1)), i.intern(&json!(1.5)));
        assert_ne!(i.intern(&json!(1)), i.intern(&json!("1")));
        assert_eq!(
            i.intern(&serde_json::from_str::<Value>(r#"{"a":1,"b":[2,3]}"#).unwrap()),
            i.intern(&serde_json::from_str::<Value>(r#"{"b":[2,3.0],"a":1}"#).unwrap())
        );
        assert_eq!(i.intern(&Value::Null), NULL);
        assert_eq!(i.intern(&json!(false)), FALSE);
        assert_eq!(i.intern(&json!(true)), TRUE);
        assert_ne!(i.intern(&json!([])), i.intern(&json!({})));
    }

    #[test]
    fn integers_accept_integral_floats_only() {
        assert_eq!(json_integer(&json!(3)), Some(3));
        assert_eq!(json_integer(&json!(u64::MAX)), Some(i128::from(u64::MAX)));
        assert_eq!(json_integer(&json!(-4.0)), Some(-4));
        assert_eq!(json_integer(&json!(4.5)), None);
        assert_eq!(json_integer(&json!("4")), None);
        assert_eq!(json_integer(&json!(1e40)), None);
    }

    #[test]
    fn render_shortens_long_values() {
        let long = Value::String("x".repeat(500));
        assert!(render(&long).len() < 130);
        assert!(render(&long).ends_with("..."));
        assert_eq!(render(&json!([1, "a"])), r#"[1,"a"]"#);
    }
}
