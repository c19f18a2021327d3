//! What `perdure litmus FILE|DIR...` does: runs litmus files and renders
//! the reachable outcomes and the verdict on each expectation.

use super::engine::{outcome_text, run_with, Limits, Report, Status};
use super::syntax::{parse_file, ParseError, ParseErrorKind, Polarity, Test};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The result of checking one file.
#[derive(Debug)]
pub struct FileResult {
    /// The file.
    pub path: PathBuf,
    /// The test and its report, or why the file was rejected.
    pub outcome: Result<(Test, Report), ParseError>,
}

/// Totals over a set of files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Files that parsed.
    pub tests: usize,
    /// Expectations met.
    pub met: usize,
    /// Expectations not met or undecided.
    pub unmet: usize,
    /// Files that did not parse (or could not be read).
    pub failed_files: usize,
    /// Distinct machine states over all tests.
    pub states: u64,
    /// Persisted images over all crash points of all tests.
    pub persisted_states: u128,
}

impl Summary {
    /// Whether everything passed (and something was checked).
    pub fn passed(&self) -> bool {
        self.unmet == 0 && self.failed_files == 0 && self.tests > 0
    }

    /// `litmus: 40 tests, 97 expectations met, 0 unmet, 0 files failed to parse`.
    pub fn line(&self) -> String {
        format!(
            "litmus: {} tests, {} expectations met, {} unmet, {} files failed to parse ({} states, {} persisted states explored)",
            self.tests, self.met, self.unmet, self.failed_files, self.states, self.persisted_states
        )
    }
}

/// Adds up the results.
pub fn summarize(results: &[FileResult]) -> Summary {
    let mut s = Summary::default();
    for r in results {
        match &r.outcome {
            Ok((_, report)) => {
                s.tests += 1;
                s.states += report.stats.states;
                s.persisted_states = s
                    .persisted_states
                    .saturating_add(report.stats.persisted_states);
                for v in &report.verdicts {
                    if v.status == Status::Met {
                        s.met += 1;
                    } else {
                        s.unmet += 1;
                    }
                }
            }
            Err(_) => s.failed_files += 1,
        }
    }
    s
}

/// The files `paths` designate: each file itself, each directory's
/// `*.litmus` files (not recursive), sorted. A path that does not exist, or
/// a directory without litmus files, becomes an error entry.
pub fn collect_files(paths: &[PathBuf]) -> Vec<Result<PathBuf, ParseError>> {
    let io_err = |p: &Path, msg: String| ParseError {
        file: p.display().to_string(),
        line: 0,
        kind: ParseErrorKind::Io(msg),
    };
    let mut out = vec![];
    for p in paths {
        if p.is_dir() {
            let entries = match std::fs::read_dir(p) {
                Ok(rd) => rd,
                Err(e) => {
                    out.push(Err(io_err(p, e.to_string())));
                    continue;
                }
            };
            let mut files: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.is_file() && f.extension().is_some_and(|x| x == "litmus"))
                .collect();
            files.sort();
            if files.is_empty() {
                out.push(Err(io_err(p, "no *.litmus files in this directory".into())));
            }
            out.extend(files.into_iter().map(Ok));
        } else if p.exists() {
            out.push(Ok(p.clone()));
        } else {
            out.push(Err(io_err(p, "no such file or directory".into())));
        }
    }
    out
}

/// Parses and runs every litmus file `paths` designate.
pub fn check_paths(paths: &[PathBuf], limits: Limits) -> Vec<FileResult> {
    collect_files(paths)
        .into_iter()
        .map(|f| match f {
            Ok(path) => {
                let outcome = parse_file(&path).map(|t| {
                    let r = run_with(&t, limits);
                    (t, r)
                });
                FileResult { path, outcome }
            }
            Err(e) => FileResult {
                path: PathBuf::from(&e.file),
                outcome: Err(e),
            },
        })
        .collect()
}

/// How much [`render`] prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// Only unmet verdicts.
    pub quiet: bool,
    /// Witnesses for every verdict that has one.
    pub witnesses: bool,
}

/// The text `perdure litmus` prints for one test.
pub fn render(test: &Test, report: &Report, opts: RenderOptions) -> String {
    let mut s = String::new();
    let st = &report.stats;
    if !opts.quiet || !report.all_met() {
        let _ = writeln!(s, "{}  ({})", test.name, test.file);
    }
    if !opts.quiet {
        let _ = writeln!(
            s,
            "  explored {} states, {} crash points, {} persisted states, {} transitions{}",
            st.states,
            st.crash_points,
            st.persisted_states,
            st.transitions,
            if st.complete {
                ""
            } else {
                " (INCOMPLETE: state limit reached)"
            },
        );
        let names: Vec<String> = report.keys.iter().map(|&k| test.key_name(k)).collect();
        let _ = writeln!(
            s,
            "  reachable outcomes over {} ({}):",
            names.join(" "),
            report.outcomes.len()
        );
        for o in &report.outcomes {
            let _ = writeln!(s, "    {}", outcome_text(test, &report.keys, o));
        }
    }
    for v in &report.verdicts {
        let e = &test.expectations[v.expectation];
        if opts.quiet && v.status == Status::Met {
            continue;
        }
        let mark = match v.status {
            Status::Met => "met      ",
            Status::NotMet => "NOT MET  ",
            Status::Undecided => "UNDECIDED",
        };
        let pol = match e.polarity {
            Polarity::Allow => "allow ",
            Polarity::Forbid => "forbid",
        };
        let _ = writeln!(
            s,
            "  {mark} {pol} {}   (line {})",
            test.outcome_text(&e.outcome),
            e.line
        );
        let show = opts.witnesses || (e.polarity == Polarity::Forbid && v.status != Status::Met);
        if let (true, Some(w)) = (show, &v.witness) {
            let _ = writeln!(
                s,
                "            {}:",
                if e.polarity == Polarity::Forbid {
                    "counterexample"
                } else {
                    "witness"
                }
            );
            for step in &w.steps {
                let _ = writeln!(s, "              {step}");
            }
            let _ = writeln!(s, "              {}", w.crash);
        }
    }
    s
}
