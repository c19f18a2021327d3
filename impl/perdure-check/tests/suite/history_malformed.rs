//! Malformed histories of every kind: each is rejected with the right line
//! number and reason, and none panics.

use perdure_check::history::{
    check_text, parse_history, CheckOptions, MalformedHistory, MalformedReason, ObjectKind,
    ParseOptions, Verdict,
};

const H: &str = r#"{"type":"header","object":"queue"}"#;
const ENQ1: &str = r#"{"type":"invoke","id":1,"thread":0,"op":"enq","args":[5]}"#;
const RET1: &str = r#"{"type":"return","id":1,"value":null}"#;
const CRASH: &str = r#"{"type":"crash"}"#;

fn parse(lines: &[&str]) -> Result<(), MalformedHistory> {
    parse_history(&lines.join("\n"), &ParseOptions::default()).map(|_| ())
}

#[track_caller]
fn malformed(lines: &[&str], line: usize) -> MalformedReason {
    match parse(lines) {
        Ok(()) => panic!("accepted a malformed history:\n{}", lines.join("\n")),
        Err(e) => {
            assert_eq!(e.line, line, "wrong line for: {e}");
            // Every message names the line.
            assert!(e.to_string().starts_with(&format!("line {line}: ")), "{e}");
            e.reason
        }
    }
}

#[test]
fn syntax_errors() {
    assert!(matches!(
        malformed(&[H, "{not json"], 2),
        MalformedReason::InvalidJson(_)
    ));
    assert!(matches!(
        malformed(&[H, "[1,2]"], 2),
        MalformedReason::NotAnObject
    ));
    assert!(matches!(
        malformed(&[H, "42"], 2),
        MalformedReason::NotAnObject
    ));
    assert!(matches!(
        malformed(&[H, r#"{"id":1}"#], 2),
        MalformedReason::MissingField {
            event: "event",
            field: "type"
        }
    ));
    assert!(matches!(
        malformed(&[H, r#"{"type":7}"#], 2),
        MalformedReason::WrongFieldType { field: "type", .. }
    ));
    assert_eq!(
        malformed(&[H, ENQ1, r#"{"type":"snapshot","state":[]}"#], 3),
        MalformedReason::UnknownEventType("snapshot".into())
    );
    // A truncated last line (a crash mid-write of the trace).
    assert!(matches!(
        malformed(&[H, ENQ1, r#"{"type":"ret"#], 3),
        MalformedReason::InvalidJson(_)
    ));
}

#[test]
fn missing_and_mistyped_fields() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"type":"invoke","thread":0,"op":"enq","args":[1]}"#,
            "id",
        ),
        (
            r#"{"type":"invoke","id":1,"op":"enq","args":[1]}"#,
            "thread",
        ),
        (r#"{"type":"invoke","id":1,"thread":0,"args":[1]}"#, "op"),
        (r#"{"type":"invoke","id":1,"thread":0,"op":"enq"}"#, "args"),
    ];
    for (line, field) in cases {
        match malformed(&[H, line], 2) {
            MalformedReason::MissingField {
                event: "invoke",
                field: f,
            } => assert_eq!(f, *field),
            other => panic!("{line}: {other:?}"),
        }
    }
    assert!(matches!(
        malformed(&[H, ENQ1, r#"{"type":"return","id":1}"#], 3),
        MalformedReason::MissingField {
            event: "return",
            field: "value"
        }
    ));
    assert!(matches!(
        malformed(&[H, ENQ1, CRASH, r#"{"type":"recover","value":null}"#], 4),
        MalformedReason::MissingField {
            event: "recover",
            field: "id"
        }
    ));
    assert!(matches!(
        malformed(&[r#"{"type":"header","init":[]}"#], 1),
        MalformedReason::MissingField {
            event: "header",
            field: "object"
        }
    ));
    let typed: &[(&str, &str)] = &[
        (
            r#"{"type":"invoke","id":-1,"thread":0,"op":"enq","args":[1]}"#,
            "id",
        ),
        (
            r#"{"type":"invoke","id":"1","thread":0,"op":"enq","args":[1]}"#,
            "id",
        ),
        (
            r#"{"type":"invoke","id":1.5,"thread":0,"op":"enq","args":[1]}"#,
            "id",
        ),
        (
            r#"{"type":"invoke","id":1,"thread":"t0","op":"enq","args":[1]}"#,
            "thread",
        ),
        (
            r#"{"type":"invoke","id":1,"thread":0,"op":3,"args":[1]}"#,
            "op",
        ),
        (
            r#"{"type":"invoke","id":1,"thread":0,"op":"enq","args":1}"#,
            "args",
        ),
        (r#"{"type":"header","object":["queue"]}"#, "object"),
    ];
    for (line, field) in typed {
        let lines: Vec<&str> = if line.contains("header") {
            vec![line]
        } else {
            vec![H, line]
        };
        match malformed(&lines, lines.len()) {
            MalformedReason::WrongFieldType { field: f, .. } => assert_eq!(f, *field),
            other => panic!("{line}: {other:?}"),
        }
    }
}

#[test]
fn header_rules() {
    assert_eq!(malformed(&[], 1), MalformedReason::Empty);
    assert_eq!(malformed(&["", "   "], 1), MalformedReason::Empty);
    assert_eq!(
        malformed(&[ENQ1, H], 1),
        MalformedReason::MissingHeader { found: "invoke" }
    );
    assert_eq!(
        malformed(&[CRASH], 1),
        MalformedReason::MissingHeader { found: "crash" }
    );
    assert_eq!(
        malformed(&[H, ENQ1, H], 3),
        MalformedReason::DuplicateHeader { first_line: 1 }
    );
    assert_eq!(
        malformed(&[r#"{"type":"header","object":"deque"}"#], 1),
        MalformedReason::UnknownObject("deque".into())
    );
    // Blank lines count for line numbers but are not events.
    assert!(matches!(
        malformed(&["", H, "", "oops"], 4),
        MalformedReason::InvalidJson(_)
    ));
}

#[test]
fn bad_init_for_each_object() {
    let bad: &[(&str, &str)] = &[
        ("counter", r#""zero""#),
        ("counter", "1.5"),
        ("queue", "{}"),
        ("queue", "3"),
        ("stack", "null"),
        ("set", r#"{"a":true}"#),
        ("set", "[1,2,1.0]"),
        ("map", "[1,2]"),
        ("map", "[[1,2,3]]"),
        ("map", r#"[[1,"a"],[1,"b"]]"#),
        ("map", "7"),
    ];
    for (object, init) in bad {
        let header = format!(r#"{{"type":"header","object":"{object}","init":{init}}}"#);
        match malformed(&[&header], 1) {
            MalformedReason::BadInit { object: o, .. } => assert_eq!(o.name(), *object),
            other => panic!("{object} {init}: {other:?}"),
        }
    }
    // Any value is a valid register init, and every collection accepts [].
    for object in ["register", "queue", "stack", "set", "map"] {
        let header = format!(r#"{{"type":"header","object":"{object}","init":[]}}"#);
        assert!(parse(&[&header]).is_ok(), "{object}");
    }
}

#[test]
fn operations_must_belong_to_the_object_with_the_right_arity() {
    assert_eq!(
        malformed(
            &[
                H,
                r#"{"type":"invoke","id":1,"thread":0,"op":"push","args":[5]}"#
            ],
            2
        ),
        MalformedReason::UnknownOperation {
            object: ObjectKind::Queue,
            op: "push".into()
        }
    );
    assert_eq!(
        malformed(
            &[
                H,
                r#"{"type":"invoke","id":1,"thread":0,"op":"enq","args":[]}"#
            ],
            2
        ),
        MalformedReason::WrongArity {
            object: ObjectKind::Queue,
            op: "enq".into(),
            expected: 1,
            found: 0
        }
    );
    assert_eq!(
        malformed(
            &[
                H,
                r#"{"type":"invoke","id":1,"thread":0,"op":"deq","args":[1]}"#
            ],
            2
        ),
        MalformedReason::WrongArity {
            object: ObjectKind::Queue,
            op: "deq".into(),
            expected: 0,
            found: 1
        }
    );
    let map = r#"{"type":"header","object":"map"}"#;
    assert!(matches!(
        malformed(
            &[
                map,
                r#"{"type":"invoke","id":1,"thread":0,"op":"put","args":["k"]}"#
            ],
            2
        ),
        MalformedReason::WrongArity {
            expected: 2,
            found: 1,
            ..
        }
    ));
    assert!(matches!(
        malformed(
            &[
                map,
                r#"{"type":"invoke","id":1,"thread":0,"op":"contains","args":["k"]}"#
            ],
            2
        ),
        MalformedReason::UnknownOperation { .. }
    ));
    let reg = r#"{"type":"header","object":"register"}"#;
    assert!(matches!(
        malformed(
            &[
                reg,
                r#"{"type":"invoke","id":1,"thread":0,"op":"cas","args":[1]}"#
            ],
            2
        ),
        MalformedReason::WrongArity {
            expected: 2,
            found: 1,
            ..
        }
    ));
    let counter = r#"{"type":"header","object":"counter"}"#;
    assert!(matches!(
        malformed(
            &[
                counter,
                r#"{"type":"invoke","id":1,"thread":0,"op":"add","args":["1"]}"#
            ],
            2
        ),
        MalformedReason::BadArgument { .. }
    ));
    assert!(matches!(
        malformed(
            &[
                counter,
                r#"{"type":"invoke","id":1,"thread":0,"op":"add","args":[0.5]}"#
            ],
            2
        ),
        MalformedReason::BadArgument { .. }
    ));
}

#[test]
fn id_and_thread_rules() {
    let enq2_t0 = r#"{"type":"invoke","id":2,"thread":0,"op":"enq","args":[6]}"#;
    let enq1_t1 = r#"{"type":"invoke","id":1,"thread":1,"op":"enq","args":[6]}"#;
    // A thread with two pending operations.
    assert_eq!(
        malformed(&[H, ENQ1, enq2_t0], 3),
        MalformedReason::ThreadBusy {
            thread: 0,
            pending_id: 1,
            pending_line: 2
        }
    );
    // ...fine once the first returned, or after a crash cut it off.
    assert!(parse(&[H, ENQ1, RET1, enq2_t0]).is_ok());
    assert!(parse(&[H, ENQ1, CRASH, enq2_t0]).is_ok());
    // Duplicate ids, even completed ones, even after a crash.
    assert_eq!(
        malformed(&[H, ENQ1, enq1_t1], 3),
        MalformedReason::DuplicateId {
            id: 1,
            first_line: 2
        }
    );
    assert_eq!(
        malformed(&[H, ENQ1, RET1, CRASH, enq1_t1], 5),
        MalformedReason::DuplicateId {
            id: 1,
            first_line: 2
        }
    );
}

#[test]
fn return_and_recover_rules() {
    let ret9 = r#"{"type":"return","id":9,"value":null}"#;
    let rec1 = r#"{"type":"recover","id":1,"value":null}"#;
    let rec9 = r#"{"type":"recover","id":9,"value":null}"#;
    assert_eq!(
        malformed(&[H, ret9], 2),
        MalformedReason::UnknownId {
            event: "return",
            id: 9
        }
    );
    assert_eq!(
        malformed(&[H, ENQ1, CRASH, rec9], 4),
        MalformedReason::UnknownId {
            event: "recover",
            id: 9
        }
    );
    // A return before the invoke is a return for an unknown id.
    assert_eq!(
        malformed(&[H, RET1, ENQ1], 2),
        MalformedReason::UnknownId {
            event: "return",
            id: 1
        }
    );
    assert_eq!(
        malformed(&[H, ENQ1, RET1, RET1], 4),
        MalformedReason::AlreadyCompleted {
            event: "return",
            id: 1,
            completed_line: 3
        }
    );
    assert_eq!(
        malformed(&[H, ENQ1, CRASH, RET1], 4),
        MalformedReason::ReturnAfterCrash {
            id: 1,
            crash_line: 3
        }
    );
    // Recover of an operation no crash cut off: pending, or returned.
    assert_eq!(
        malformed(&[H, ENQ1, rec1], 3),
        MalformedReason::RecoverWithoutCrash {
            id: 1,
            invoke_line: 2
        }
    );
    assert_eq!(
        malformed(&[H, ENQ1, RET1, CRASH, rec1], 5),
        MalformedReason::AlreadyCompleted {
            event: "recover",
            id: 1,
            completed_line: 3
        }
    );
    // Recovered twice.
    assert_eq!(
        malformed(&[H, ENQ1, CRASH, rec1, CRASH, rec1], 6),
        MalformedReason::AlreadyCompleted {
            event: "recover",
            id: 1,
            completed_line: 4
        }
    );
    // An operation invoked after the crash was not cut off by it.
    let enq2 = r#"{"type":"invoke","id":2,"thread":0,"op":"enq","args":[6]}"#;
    let rec2 = r#"{"type":"recover","id":2,"value":null}"#;
    assert_eq!(
        malformed(&[H, CRASH, enq2, rec2], 4),
        MalformedReason::RecoverWithoutCrash {
            id: 2,
            invoke_line: 3
        }
    );
}

#[test]
fn options_relax_what_they_say() {
    let snapshot = r#"{"type":"snapshot","state":[5]}"#;
    let text = [H, ENQ1, snapshot, RET1].join("\n");
    let options = ParseOptions {
        ignored_event_types: vec!["snapshot".into()],
        ..ParseOptions::default()
    };
    assert!(parse_history(&text, &options).is_ok());
    // Unknown object names are accepted with an explicit model.
    let text = [r#"{"type":"header","object":"memento-queue"}"#, ENQ1, RET1].join("\n");
    assert!(matches!(
        parse_history(&text, &ParseOptions::default()),
        Err(MalformedHistory {
            line: 1,
            reason: MalformedReason::UnknownObject(_)
        })
    ));
    let options = ParseOptions {
        object_override: Some(ObjectKind::Queue),
        ..ParseOptions::default()
    };
    let report = check_text(&text, &options, &CheckOptions::default())
        .expect("well-formed with --model queue");
    assert_eq!(report.verdict, Verdict::DurablyLinearizable);
    // The override also decides which operations are valid.
    let options = ParseOptions {
        object_override: Some(ObjectKind::Stack),
        ..ParseOptions::default()
    };
    assert!(matches!(
        check_text(&text, &options, &CheckOptions::default()),
        Err(MalformedHistory {
            line: 2,
            reason: MalformedReason::UnknownOperation { .. }
        })
    ));
}

#[test]
fn extra_fields_and_crlf_are_accepted() {
    let text = format!(
        "{}\r\n{}\r\n{}\r\n",
        r#"{"type":"header","object":"queue","init":[],"seed":7}"#,
        r#"{"type":"invoke","id":1,"thread":0,"op":"enq","args":[5],"time":123}"#,
        r#"{"type":"return","id":1,"value":null,"time":124}"#
    );
    let h = parse_history(&text, &ParseOptions::default()).expect("well-formed");
    assert_eq!(h.operations().len(), 1);
    assert_eq!(h.last_line(), 3);
}

#[test]
fn random_garbage_never_panics() {
    // Mutate a valid history byte by byte; every result is Ok or a line-numbered error.
    let valid = [
        H,
        ENQ1,
        r#"{"type":"invoke","id":2,"thread":1,"op":"deq","args":[]}"#,
        RET1,
        CRASH,
        r#"{"type":"recover","id":2,"value":5}"#,
    ]
    .join("\n");
    let bytes = valid.as_bytes();
    let mut state = 0x1234_5678_u64;
    let mut errors = 0;
    for _ in 0..20_000 {
        let mut b = bytes.to_vec();
        for _ in 0..3 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let at = (state >> 33) as usize % b.len();
            let alphabet: &[u8] = b"{}[]\":,0123456789-.aeilnrstuv \n";
            b[at] = alphabet[(state >> 20) as usize % alphabet.len()];
        }
        let text = String::from_utf8_lossy(&b);
        if let Err(e) = check_text(&text, &ParseOptions::default(), &CheckOptions::default()) {
            assert!(e.line >= 1 && e.line <= text.lines().count().max(1), "{e}");
            errors += 1;
        }
    }
    assert!(errors > 10_000, "{errors}");
}
