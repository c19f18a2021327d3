//! Every kind of litmus parse error, with its line number.

use perdure_check::litmus::{parse, parse_file, Instr, ParseErrorKind as K, Polarity};

/// Parses `src` and returns (line, kind) of the error.
fn err(src: &str) -> (usize, K) {
    match parse(src, "t.litmus") {
        Ok(_) => panic!("parsed:\n{src}"),
        Err(e) => {
            assert_eq!(e.file, "t.litmus");
            // The message is `file:line: reason`.
            assert!(e.to_string().starts_with(&format!("t.litmus:{}: ", e.line)));
            (e.line, e.kind)
        }
    }
}

const OK_TAIL: &str = "end\nallow x=0\n";

#[test]
fn a_good_file_parses_with_every_instruction() {
    let src = "# comment\nname All  # trailing comment\nline x y\nline y z\ninit x=5 w=-2\n\
               thread 0\n  store x 1\n  load r1 x\n  clflush x\n  clflushopt y\n  clwb z\n  sfence\n  mfence\n\
               cas r2 x 0 1\n  cas w 0 1\n  xchg r3 x 4\n  faa r4 x -1\n  ntstore q 9\n\
               thread 1\n\nend\n\nallow x=1 r1=1 0:r2=1\nforbid q=3\n";
    let t = parse(src, "a.litmus").unwrap();
    assert_eq!(t.name, "All");
    assert_eq!(t.locations, ["x", "y", "z", "w", "q"]);
    // `line x y` and `line y z` merge into one line.
    assert_eq!(t.line_of[0], t.line_of[2]);
    assert_ne!(t.line_of[0], t.line_of[3]);
    assert_eq!(t.init, [5, 0, 0, -2, 0]);
    assert_eq!(t.threads.len(), 2);
    assert_eq!(t.threads[0].instrs.len(), 12);
    assert_eq!(t.threads[0].source_lines[0], 7);
    assert!(matches!(
        t.threads[0].instrs[8],
        Instr::Cas { reg: None, .. }
    ));
    assert!(matches!(
        t.threads[0].instrs[10],
        Instr::Faa { val: -1, .. }
    ));
    assert!(t.threads[1].instrs.is_empty());
    assert_eq!(t.expectations.len(), 2);
    assert_eq!(t.expectations[0].line, 23);
    assert_eq!(t.expectations[1].polarity, Polarity::Forbid);
    assert_eq!(t.outcome_text(&t.expectations[0].outcome), "x=1 r1=1 r2=1");
}

#[test]
fn unknown_instruction_and_directive() {
    assert_eq!(
        err("name a\nthread 0\n  store x 1\n  stor x 1\nend\nallow x=0\n"),
        (4, K::UnknownInstruction("stor".into()))
    );
    assert_eq!(
        err("name a\nnmae b\nthread 0\nend\nallow x=0\n"),
        (2, K::UnknownDirective("nmae".into()))
    );
    assert_eq!(
        err(&format!(
            "name a\nthread 0\n store x 1\n{OK_TAIL}permit x=0\n"
        )),
        (6, K::UnknownDirective("permit".into()))
    );
}

#[test]
fn bad_integers_names_and_operands() {
    assert_eq!(
        err("name a\nthread 0\n store x one\nend\nallow x=0\n"),
        (3, K::BadInteger("one".into()))
    );
    assert_eq!(
        err("name a\nthread 0\n store x 99999999999999999999\nend\nallow x=0\n"),
        (3, K::BadInteger("99999999999999999999".into()))
    );
    assert_eq!(
        err("name a\nthread 0\n store x 1\nend\nallow x=1.5\n"),
        (5, K::BadInteger("1.5".into()))
    );
    assert_eq!(
        err("name a\ninit x=zero\nthread 0\nend\nallow x=0\n"),
        (2, K::BadInteger("zero".into()))
    );
    assert_eq!(
        err("name a\nthread 0\n store 1x 1\nend\nallow x=0\n"),
        (3, K::BadName("1x".into()))
    );
    // Three operands: `cas LOC OLD NEW`, so `x` is read as OLD.
    assert_eq!(
        err("name a\nthread 0\n cas r x 0\nend\nallow r=0\n"),
        (3, K::BadInteger("x".into()))
    );
    // Four: `cas REG LOC OLD NEW`.
    assert_eq!(
        err("name a\nthread 0\n cas r x 0 y\nend\nallow x=0\n"),
        (3, K::BadInteger("y".into()))
    );
    for (src, kw, usage) in [
        ("store x", "store", "store LOC VAL"),
        ("load r1", "load", "load REG LOC"),
        ("clflush", "clflush", "clflush LOC"),
        ("clflushopt x y", "clflushopt", "clflushopt LOC"),
        ("clwb", "clwb", "clwb LOC"),
        ("sfence x", "sfence", "sfence"),
        ("mfence 1", "mfence", "mfence"),
        ("cas x 1", "cas", "cas [REG] LOC OLD NEW"),
        ("xchg r x", "xchg", "xchg REG LOC VAL"),
        ("faa r x 1 2", "faa", "faa REG LOC VAL"),
        ("ntstore x", "ntstore", "ntstore LOC VAL"),
    ] {
        assert_eq!(
            err(&format!("name a\nthread 0\n\n  {src}\nend\nallow x=0\n")),
            (
                4,
                K::WrongOperands {
                    keyword: kw.into(),
                    usage
                }
            ),
            "{src}"
        );
    }
}

#[test]
fn threads_and_end() {
    assert_eq!(
        err("name a\nthread 0\n store x 1\nthread 0\nend\nallow x=0\n"),
        (4, K::DuplicateThread(0))
    );
    assert_eq!(
        err("name a\nthread -1\nend\nallow x=0\n"),
        (2, K::BadThreadNumber("-1".into()))
    );
    assert_eq!(err("name a\nthread 0\n store x 1\n"), (3, K::MissingEnd));
    assert_eq!(
        err("name a\nthread 0\n store x 1\n\n# no end\n"),
        (5, K::MissingEnd)
    );
    assert_eq!(err("name a\nend\nallow x=0\n"), (2, K::NoThreads));
    assert_eq!(err("name a\n"), (1, K::NoThreads));
    assert_eq!(
        err(&format!("name a\nthread 0\n store x 1\n{OK_TAIL}end\n")),
        (6, K::DuplicateEnd)
    );
    assert_eq!(
        err(&format!(
            "name a\nthread 0\n store x 1\n{OK_TAIL}store x 2\n"
        )),
        (6, K::AfterEnd("store".into()))
    );
    assert_eq!(
        err(&format!(
            "name a\nthread 0\n store x 1\n{OK_TAIL}thread 1\n"
        )),
        (6, K::AfterEnd("thread".into()))
    );
    assert_eq!(
        err("name a\n store x 1\nthread 0\nend\nallow x=0\n"),
        (2, K::InstructionOutsideThread("store".into()))
    );
}

#[test]
fn header_directives() {
    assert_eq!(
        err("thread 0\n store x 1\nend\nallow x=0\n"),
        (1, K::MissingName)
    );
    assert_eq!(
        err("name a\nname b\nthread 0\nend\nallow x=0\n"),
        (2, K::DuplicateName)
    );
    assert_eq!(
        err("name a\nthread 0\n store x 1\nline x y\nend\nallow x=0\n"),
        (4, K::HeaderAfterThread("line".into()))
    );
    assert_eq!(
        err("name a\nthread 0\n store x 1\ninit x=1\nend\nallow x=0\n"),
        (4, K::HeaderAfterThread("init".into()))
    );
    assert_eq!(
        err("name a\ninit x=1 x=2\nthread 0\nend\nallow x=0\n"),
        (2, K::DuplicateInit("x".into()))
    );
    assert_eq!(
        err("name a\ninit x\nthread 0\nend\nallow x=0\n"),
        (2, K::BadItem("x".into()))
    );
    assert_eq!(
        err("name a\nline x\nthread 0\nend\nallow x=0\n"),
        (
            2,
            K::WrongOperands {
                keyword: "line".into(),
                usage: "line LOC LOC..."
            }
        )
    );
}

#[test]
fn outcomes() {
    let prog = "name a\nthread 0\n store x 1\n load r1 x\nthread 1\n load r1 y\n load r2 y\nend\n";
    assert_eq!(
        err(&format!("{prog}allow z=1\n")),
        (9, K::UnknownName("z".into()))
    );
    assert_eq!(
        err(&format!("{prog}allow x=1\nforbid r3=1\n")),
        (10, K::UnknownName("r3".into()))
    );
    assert_eq!(
        err(&format!("{prog}allow r1=1\n")),
        (
            9,
            K::AmbiguousRegister {
                name: "r1".into(),
                threads: vec![0, 1]
            }
        )
    );
    // Qualified names resolve the ambiguity; an unqualified unique one is fine.
    assert!(parse(&format!("{prog}allow 0:r1=1 1:r1=0 r2=0\n"), "t").is_ok());
    assert_eq!(
        err(&format!("{prog}allow 2:r1=1\n")),
        (9, K::UnknownRegister("2:r1".into()))
    );
    assert_eq!(
        err(&format!("{prog}allow 0:r2=1\n")),
        (9, K::UnknownRegister("0:r2".into()))
    );
    assert_eq!(
        err(&format!("{prog}allow x=1 x=1\n")),
        (9, K::DuplicateOutcomeKey("x".into()))
    );
    assert_eq!(err(&format!("{prog}allow\n")), (9, K::EmptyOutcome));
    assert_eq!(
        err(&format!("{prog}allow x 1\n")),
        (9, K::BadItem("x".into()))
    );
    assert_eq!(err(prog), (8, K::NoExpectations));
    assert_eq!(
        err("name a\nthread 0\n store x 1\nallow x=1\nend\n"),
        (4, K::OutcomeBeforeEnd)
    );
}

#[test]
fn a_name_is_a_location_or_a_register_not_both() {
    assert_eq!(
        err("name a\nthread 0\n store x 1\n load x y\nend\nallow y=0\n"),
        (4, K::NameClash("x".into()))
    );
    assert_eq!(
        err("name a\nthread 0\n load r y\n store r 1\nend\nallow y=0\n"),
        (4, K::NameClash("r".into()))
    );
}

#[test]
fn unreadable_files_are_errors_at_line_zero() {
    let e = parse_file(std::path::Path::new("/nonexistent/x.litmus")).unwrap_err();
    assert_eq!(e.line, 0);
    assert!(matches!(e.kind, K::Io(_)));
    assert!(e
        .to_string()
        .starts_with("/nonexistent/x.litmus:0: cannot read"));
}
