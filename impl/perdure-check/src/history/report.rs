//! What `perdure check-history` prints: the checker's report for people.

use super::check::{check_history, CheckOptions, Verdict};
use super::html::{render_html, HtmlPage};
use super::parse::{parse_history, History, Outcome, ParseOptions};
use std::io::Write;
use std::time::Instant;

/// Checks the history `text` (read from `name`, a file or `<stdin>`) and
/// writes what `perdure check-history` prints to `out`: unless `quiet`, a
/// summary (events, operations, crashes, search effort) and for a
/// violation the minimal failing prefix and the operations involved; then
/// the verdict line. Returns the command's exit status: 0 durably
/// linearizable, 1 not, 2 malformed, 3 undecided.
pub fn check_and_report(
    text: &str,
    name: &str,
    parse: &ParseOptions,
    check: &CheckOptions,
    quiet: bool,
    out: &mut dyn Write,
) -> u8 {
    report(text, name, parse, check, quiet, out, false).0
}

/// [`check_and_report`], and also the page [`render_html`] draws of the
/// history and its verdict (titled `name`); no page for a malformed
/// history.
pub fn check_report_html(
    text: &str,
    name: &str,
    parse: &ParseOptions,
    check: &CheckOptions,
    quiet: bool,
    out: &mut dyn Write,
) -> (u8, Option<String>) {
    report(text, name, parse, check, quiet, out, true)
}

fn report(
    text: &str,
    name: &str,
    parse: &ParseOptions,
    check: &CheckOptions,
    quiet: bool,
    out: &mut dyn Write,
    html: bool,
) -> (u8, Option<String>) {
    let started = Instant::now();
    let history = match parse_history(text, parse) {
        Ok(h) => h,
        Err(e) => {
            let _ = writeln!(out, "malformed: {e}");
            return (2, None);
        }
    };
    let report = check_history(&history, check);
    let seconds = started.elapsed().as_secs_f64();

    if !quiet {
        let _ = writeln!(out, "history: {name}: {}", summary(&history));
        let s = &report.stats;
        let _ = writeln!(
            out,
            "checked: {} partition{}{} (largest {} operations): {} search steps, {} memoized states{}, in {:.3} s",
            s.partitions,
            if s.partitions == 1 { "" } else { "s" },
            if history.object().is_keyed() { " (one per key)" } else { "" },
            s.largest_partition,
            s.search.steps,
            s.search.states,
            if s.prefix_searches > 0 {
                format!(
                    ", {} prefix search{}",
                    s.prefix_searches,
                    if s.prefix_searches == 1 { "" } else { "es" }
                )
            } else {
                String::new()
            },
            seconds
        );
    }
    match &report.verdict {
        Verdict::DurablyLinearizable => {
            let _ = writeln!(out, "durably linearizable");
        }
        Verdict::NotDurablyLinearizable(v) => {
            if !quiet {
                let _ = write!(out, "{}", v.explain(&history));
            }
            let _ = writeln!(out, "{}", v.verdict_line(&history));
        }
        Verdict::Undecided { key, max_states } => {
            let _ = writeln!(
                out,
                "undecided: the search{} reached the limit of {max_states} states (--max-states) before deciding; no violation found",
                match key {
                    Some(k) => format!(" on key {}", super::value::render(k)),
                    None => String::new(),
                }
            );
        }
    }
    let page = html.then(|| {
        let page = HtmlPage {
            title: name.to_string(),
            ..HtmlPage::default()
        };
        render_html(&history, &report.verdict, &page)
    });
    (report.verdict.exit_status(), page)
}

/// `61 events (lines 1-61), a queue, 30 operations (...), 2 crashes`.
fn summary(h: &History) -> String {
    let (mut returned, mut recovered, mut cut_off, mut pending) = (0, 0, 0, 0);
    for op in h.operations() {
        match op.outcome {
            Outcome::Returned { .. } => returned += 1,
            Outcome::Recovered { .. } => recovered += 1,
            Outcome::CutOff { .. } => cut_off += 1,
            Outcome::Pending => pending += 1,
        }
    }
    let crashes = h.crash_lines().len();
    format!(
        "{} events (lines {}-{}), object {}, {} operations ({returned} returned, {recovered} recovered, {cut_off} cut off without recover, {pending} pending at the end), {crashes} crash{}",
        h.event_count(),
        h.header_line(),
        h.last_line(),
        h.object(),
        h.operations().len(),
        if crashes == 1 { "" } else { "es" }
    )
}
