//! A history and its verdict as one self-contained HTML page, in the manner
//! of Porcupine's visualisation of linearizability failures.
//!
//! The time axis is the history's event order (its line numbers, one column
//! per event line). Each thread gets a lane; each operation is a bar from
//! its `invoke` to its `return`, labelled `op(args) -> value`. An operation a
//! crash cut off is drawn open-ended up to that crash (to the end of the
//! history if it is still pending); if it was `recover`ed, a dashed tail runs
//! from the crash to a diamond at the `recover` line. Every `crash` is a red
//! line across all lanes. For a violation, the minimal failing prefix is
//! shaded, the events beyond it are dimmed, the operations involved are
//! outlined, the culprit (the operation completing on the prefix's last
//! line) is drawn in red, and a dashed line marks that last line: no durable
//! linearization exists up to it. The verdict and the checker's explanation
//! head the page; a table of the events follows the drawing.
//!
//! The page is inline CSS and inline SVG: no script, no external resource.
//! Hovering a bar shows its details (an SVG `<title>`). Every text taken from
//! the history or the caller is escaped.
//!
//! Callers add what they know beyond the history with [`HtmlPage`]: the crash
//! explorer marks its crash point and lists what the crash image kept and
//! lost.

use super::check::Verdict;
use super::parse::{History, Operation, Outcome};
use super::value::render;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What a page shows besides the history and its verdict.
#[derive(Clone, Debug, Default)]
pub struct HtmlPage {
    /// The page's title (e.g. the history file's name).
    pub title: String,
    /// A crash to mark as *the* crash point (the explorer's): its line in the
    /// history and a label.
    pub crash_point: Option<(usize, String)>,
    /// Sections after the verdict: a heading and lines of text each.
    pub sections: Vec<(String, Vec<String>)>,
}

/// Writing a page failed.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the HTML page {}: {source}", path.display())]
pub struct PageWriteError {
    /// Where the page was to be written.
    pub path: PathBuf,
    /// Why it could not be.
    #[source]
    pub source: std::io::Error,
}

/// Writes `html` to `path` (the file is created or replaced; its directory
/// must exist).
pub fn write_page(path: &Path, html: &str) -> Result<(), PageWriteError> {
    std::fs::write(path, html).map_err(|source| PageWriteError {
        path: path.to_owned(),
        source,
    })
}

/// Rows of the event table beyond which the table is cut (the drawing keeps
/// every event).
const MAX_TABLE_ROWS: usize = 5000;
const LEFT: f64 = 96.0;
const TOP: f64 = 46.0;
const LANE_H: f64 = 38.0;
const BAR_H: f64 = 20.0;
/// Approximate width of one character of the bar labels (11px sans-serif).
const CHAR_W: f64 = 6.2;

/// Escapes `s` for HTML text and attribute values.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The event lines of `history`, in order: the time axis.
fn event_lines(history: &History) -> Vec<usize> {
    let mut lines = vec![history.header_line()];
    for op in history.operations() {
        lines.push(op.invoke_line);
        lines.extend(op.outcome.completion_line());
    }
    lines.extend(history.crash_lines());
    lines.sort_unstable();
    lines.dedup();
    lines
}

/// Where each event line is drawn.
struct Axis {
    columns: Vec<usize>,
    step: f64,
}

impl Axis {
    fn new(history: &History) -> Axis {
        let columns = event_lines(history);
        let step = (1400.0 / columns.len() as f64).clamp(6.0, 64.0);
        Axis { columns, step }
    }

    /// The x of a line's column (its centre); lines between events fall on
    /// the next event's column.
    fn x(&self, line: usize) -> f64 {
        let col = self.columns.partition_point(|&l| l < line);
        LEFT + self.step * (col as f64 + 0.5)
    }

    /// The right edge of the drawing's time axis.
    fn end(&self) -> f64 {
        LEFT + self.step * self.columns.len() as f64
    }
}

/// The violation's facts the drawing needs: the prefix's last line, the
/// culprit, the operations involved.
struct Failure {
    prefix_end: usize,
    culprit: usize,
    involved: Vec<usize>,
}

/// Renders `history` and the check's `verdict` as one self-contained HTML
/// page (see the module docs).
pub fn render_html(history: &History, verdict: &Verdict, page: &HtmlPage) -> String {
    let failure = match verdict {
        Verdict::NotDurablyLinearizable(v) => Some(Failure {
            prefix_end: v.prefix_end_line,
            culprit: v.culprit,
            involved: v.involved.clone(),
        }),
        _ => None,
    };
    let mut out = String::new();
    let title = if page.title.is_empty() {
        "history".to_string()
    } else {
        page.title.clone()
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{} — perdure check-history</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    out.push_str(&verdict_block(history, verdict));
    for (heading, lines) in &page.sections {
        let _ = write!(
            out,
            "<section class=\"extra\"><h2>{}</h2><ul>",
            escape(heading)
        );
        for line in lines {
            let _ = write!(out, "<li>{}</li>", escape(line));
        }
        out.push_str("</ul></section>\n");
    }
    out.push_str(LEGEND);
    out.push_str(&drawing(history, failure.as_ref(), page));
    out.push_str(&event_table(history, failure.as_ref()));
    out.push_str("</body>\n</html>\n");
    out
}

/// The verdict line and, for a violation, the checker's explanation.
fn verdict_block(history: &History, verdict: &Verdict) -> String {
    let crashes = history.crash_lines().len();
    let summary = format!(
        "object {}, {} operations, {} crash{}, lines {}-{}",
        history.object(),
        history.operations().len(),
        crashes,
        if crashes == 1 { "" } else { "es" },
        history.header_line(),
        history.last_line()
    );
    let (class, line, explain) = match verdict {
        Verdict::DurablyLinearizable => ("pass", "durably linearizable".to_string(), None),
        Verdict::NotDurablyLinearizable(v) => {
            ("fail", v.verdict_line(history), Some(v.explain(history)))
        }
        Verdict::Undecided { max_states, .. } => (
            "undecided",
            format!("undecided: the search reached the limit of {max_states} states before deciding; no violation found"),
            None,
        ),
    };
    let mut out = format!(
        "<p class=\"summary\">{}</p>\n<p class=\"verdict {class}\" data-verdict=\"{class}\">{}</p>\n",
        escape(&summary),
        escape(&line)
    );
    if let Some(text) = explain {
        let _ = writeln!(out, "<pre class=\"explain\">{}</pre>", escape(&text));
    }
    out
}

/// The SVG: lanes, bars, crash lines, the prefix.
fn drawing(history: &History, failure: Option<&Failure>, page: &HtmlPage) -> String {
    let axis = Axis::new(history);
    let threads: BTreeMap<u64, usize> = {
        let mut t: Vec<u64> = history.operations().iter().map(|op| op.thread).collect();
        t.sort_unstable();
        t.dedup();
        t.into_iter().enumerate().map(|(i, t)| (t, i)).collect()
    };
    let lanes = threads.len().max(1);
    let width = axis.end() + 40.0;
    let bottom = TOP + LANE_H * lanes as f64;
    let height = bottom + 34.0;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<div class=\"scroll\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" role=\"img\">"
    );
    let _ = writeln!(
        svg,
        "<rect class=\"page\" x=\"0\" y=\"0\" width=\"{width:.0}\" height=\"{height:.0}\"/>"
    );

    // The minimal failing prefix, and what lies beyond it.
    if let Some(f) = failure {
        let x_end = axis.x(f.prefix_end) + axis.step / 2.0;
        let _ = writeln!(
            svg,
            "<rect class=\"prefix\" data-prefix-end=\"{}\" x=\"{LEFT:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"><title>minimal failing prefix: lines {}-{}</title></rect>",
            f.prefix_end,
            TOP - 4.0,
            x_end - LEFT,
            bottom - TOP + 8.0,
            history.header_line(),
            f.prefix_end
        );
        if x_end < axis.end() {
            let _ = writeln!(
                svg,
                "<rect class=\"beyond\" x=\"{x_end:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
                TOP - 4.0,
                axis.end() - x_end,
                bottom - TOP + 8.0
            );
        }
    }

    // Lanes.
    for (thread, &lane) in &threads {
        let y = TOP + LANE_H * lane as f64;
        let _ = writeln!(
            svg,
            "<g class=\"lane\" data-thread=\"{thread}\"><line class=\"lane-rule\" x1=\"{LEFT:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/><text class=\"lane-label\" x=\"8\" y=\"{:.1}\">thread {thread}</text></g>",
            y + LANE_H,
            axis.end(),
            y + LANE_H,
            y + LANE_H / 2.0 + 4.0
        );
    }

    // The time axis: line numbers.
    let every = (26.0 / axis.step).ceil().max(1.0) as usize;
    for (i, &line) in axis.columns.iter().enumerate() {
        if i % every == 0 {
            let _ = writeln!(
                svg,
                "<text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\">{line}</text>",
                axis.x(line),
                TOP - 12.0
            );
        }
    }
    let _ = writeln!(
        svg,
        "<text class=\"axis-label\" x=\"8\" y=\"{:.1}\">line</text>",
        TOP - 12.0
    );

    // Operations.
    for (i, op) in history.operations().iter().enumerate() {
        let lane = threads.get(&op.thread).copied().unwrap_or(0);
        svg.push_str(&bar(op, i, lane, &axis, history, failure));
    }

    // Crashes, over the bars.
    for &line in history.crash_lines() {
        let x = axis.x(line);
        let point = page.crash_point.as_ref().filter(|(l, _)| *l == line);
        let class = if point.is_some() {
            "crash crash-point"
        } else {
            "crash"
        };
        let label = match point {
            Some((_, label)) => format!("{label} (line {line})"),
            None => format!("crash (line {line})"),
        };
        let _ = writeln!(
            svg,
            "<g class=\"{class}\" data-line=\"{line}\" data-x=\"{x:.1}\"><line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text><title>{}</title></g>",
            TOP - 6.0,
            bottom + 6.0,
            x + 3.0,
            bottom + 20.0,
            escape(&label),
            escape(&label)
        );
    }

    // Where linearization becomes impossible.
    if let Some(f) = failure {
        let x = axis.x(f.prefix_end);
        let text = format!("no durable linearization up to line {}", f.prefix_end);
        // Label on the side with room.
        let (tx, anchor) = if x > width / 2.0 {
            (x - 4.0, "end")
        } else {
            (x + 4.0, "start")
        };
        let _ = writeln!(
            svg,
            "<g class=\"fail-line\" data-line=\"{}\" data-x=\"{x:.1}\"><line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/><text x=\"{tx:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{}</text><title>{}</title></g>",
            f.prefix_end,
            TOP - 30.0,
            bottom + 4.0,
            TOP - 30.0,
            escape(&text),
            escape(&text)
        );
    }
    svg.push_str("</svg></div>\n");
    svg
}

/// One operation's bar (and its recovery tail).
fn bar(
    op: &Operation,
    index: usize,
    lane: usize,
    axis: &Axis,
    history: &History,
    failure: Option<&Failure>,
) -> String {
    let y = TOP + LANE_H * lane as f64 + (LANE_H - BAR_H) / 2.0;
    // A bar covers its invoke and return events' columns; an open one ends
    // exactly at its crash.
    let pad = axis.step * 0.4;
    let x1 = axis.x(op.invoke_line) - pad;
    let (x2, kind, open) = match &op.outcome {
        Outcome::Returned { line, .. } => (axis.x(*line) + pad, "returned", false),
        Outcome::Recovered { crash_line, .. } => (axis.x(*crash_line), "recovered", true),
        Outcome::CutOff { crash_line } => (axis.x(*crash_line), "cut-off", true),
        Outcome::Pending => (axis.end(), "pending", true),
    };
    let x2 = x2.max(x1 + 4.0);
    let mut classes = vec!["op", kind];
    let mut role = "";
    if let Some(f) = failure {
        if op.invoke_line > f.prefix_end {
            classes.push("beyond-prefix");
        } else if index == f.culprit {
            classes.push("culprit");
            role = " (the culprit: with this result, nothing linearizes)";
        } else if f.involved.contains(&index) {
            classes.push("involved");
            role = " (involved)";
        }
    }
    let label = match &op.outcome {
        Outcome::Returned { .. } => op.describe(),
        Outcome::Recovered { .. } => format!("{} (cut off)", op.call),
        Outcome::CutOff { .. } => format!("{} -> cut off", op.call),
        Outcome::Pending => format!("{} -> pending", op.call),
    };
    let tip = format!(
        "id {}, thread {}: {}; {}{}",
        op.id,
        op.thread,
        op.describe(),
        lines_of(op, history),
        role
    );
    let mut s = format!(
        "<g class=\"{}\" data-id=\"{}\" data-thread=\"{}\" data-x1=\"{x1:.1}\" data-x2=\"{x2:.1}\"><title>{}</title>",
        classes.join(" "),
        op.id,
        op.thread,
        escape(&tip)
    );
    if open {
        // Open on the right: the operation never returned.
        let _ = write!(
            s,
            "<rect class=\"fill\" x=\"{x1:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{BAR_H:.1}\"/><path class=\"edge\" d=\"M{x2:.1},{y:.1} H{x1:.1} V{:.1} H{x2:.1}\"/>",
            x2 - x1,
            y + BAR_H
        );
    } else {
        let _ = write!(
            s,
            "<rect class=\"fill edge\" x=\"{x1:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{BAR_H:.1}\" rx=\"3\"/>",
            x2 - x1
        );
    }
    let room = ((x2 - x1 - 6.0) / CHAR_W).floor();
    if room >= 3.0 {
        let _ = write!(
            s,
            "<text class=\"label\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            x1 + 3.0,
            y + BAR_H / 2.0 + 4.0,
            escape(&shorten(&label, room as usize))
        );
    }
    if let Outcome::Recovered { line, value, .. } = &op.outcome {
        let xr = axis.x(*line);
        let ym = y + BAR_H + 3.0;
        let _ = write!(
            s,
            "<path class=\"recover-tail\" d=\"M{x2:.1},{ym:.1} H{xr:.1}\"/><path class=\"recover\" data-line=\"{line}\" d=\"M{xr:.1},{:.1} l5,5 l-5,5 l-5,-5 z\"><title>{}</title></path>",
            ym - 5.0,
            escape(&format!(
                "recover id {} -> {} (line {line})",
                op.id,
                render(value)
            ))
        );
    }
    s.push_str("</g>\n");
    s
}

/// `invoked line 2, returned line 3`, and the like.
fn lines_of(op: &Operation, history: &History) -> String {
    let invoked = format!("invoked line {}", op.invoke_line);
    match &op.outcome {
        Outcome::Returned { line, .. } => format!("{invoked}, returned line {line}"),
        Outcome::Recovered {
            line, crash_line, ..
        } => format!("{invoked}, cut off by the crash at line {crash_line}, recovered line {line}"),
        Outcome::CutOff { crash_line } => {
            format!("{invoked}, cut off by the crash at line {crash_line}, never recovered")
        }
        Outcome::Pending => format!(
            "{invoked}, pending at the end of the history (line {})",
            history.last_line()
        ),
    }
}

/// `s` cut to `max` characters, with an ellipsis when cut.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// The events, one row per line, the prefix marked.
fn event_table(history: &History, failure: Option<&Failure>) -> String {
    let mut rows: Vec<(usize, String, &str)> = vec![(
        history.header_line(),
        format!("header: object {}", history.object()),
        "header",
    )];
    let culprit_line = failure.and_then(|f| {
        history.operations()[f.culprit]
            .outcome
            .completion_line()
            .filter(|&l| l == f.prefix_end)
    });
    for op in history.operations() {
        rows.push((
            op.invoke_line,
            format!("invoke id {} thread {}: {}", op.id, op.thread, op.call),
            "invoke",
        ));
        match &op.outcome {
            Outcome::Returned { line, value } => rows.push((
                *line,
                format!(
                    "return id {} (thread {}): {}",
                    op.id,
                    op.thread,
                    render(value)
                ),
                "return",
            )),
            Outcome::Recovered {
                line,
                value,
                crash_line,
            } => rows.push((
                *line,
                format!(
                    "recover id {} (thread {}, {}, cut off at line {crash_line}): {}",
                    op.id,
                    op.thread,
                    op.call,
                    render(value)
                ),
                "recover",
            )),
            Outcome::CutOff { .. } | Outcome::Pending => {}
        }
    }
    for &line in history.crash_lines() {
        let cut: Vec<String> = history
            .operations()
            .iter()
            .filter(|op| match op.outcome {
                Outcome::CutOff { crash_line } | Outcome::Recovered { crash_line, .. } => {
                    crash_line == line
                }
                _ => false,
            })
            .map(|op| op.id.to_string())
            .collect();
        let what = if cut.is_empty() {
            "crash: no operation pending".to_string()
        } else {
            format!("crash: cuts off id {}", cut.join(", "))
        };
        rows.push((line, what, "crash"));
    }
    rows.sort_by_key(|r| r.0);
    let mut out = String::from(
        "<h2>Events</h2>\n<table class=\"events\"><tr><th>line</th><th>event</th></tr>\n",
    );
    for (line, text, kind) in rows.iter().take(MAX_TABLE_ROWS) {
        let mut class = kind.to_string();
        if let Some(f) = failure {
            class.push_str(if *line <= f.prefix_end {
                " in-prefix"
            } else {
                " beyond-prefix"
            });
        }
        if Some(*line) == culprit_line {
            class.push_str(" culprit");
        }
        let _ = writeln!(
            out,
            "<tr class=\"{class}\" data-line=\"{line}\"><td>{line}</td><td>{}</td></tr>",
            escape(text)
        );
    }
    out.push_str("</table>\n");
    if rows.len() > MAX_TABLE_ROWS {
        let _ = writeln!(
            out,
            "<p class=\"note\">The table lists the first {MAX_TABLE_ROWS} of {} events; the drawing shows them all.</p>",
            rows.len()
        );
    }
    out
}

const LEGEND: &str = "<p class=\"legend\"><span class=\"k returned\">returned</span> <span class=\"k cut-off\">cut off (open-ended to its crash)</span> <span class=\"k recovered\">recovered (&#9670; at the recover line)</span> <span class=\"k involved\">involved</span> <span class=\"k culprit\">culprit</span> <span class=\"k prefix\">minimal failing prefix</span> <span class=\"k crash\">crash</span></p>\n";

const STYLE: &str = "
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:18px;margin:0 0 6px}
h2{font-size:15px;margin:14px 0 4px}
.verdict{font-weight:600;padding:6px 10px;border-radius:4px}
.verdict.pass{background:#e3f6e3;color:#145214}
.verdict.fail{background:#fde2e2;color:#8a1010}
.verdict.undecided{background:#fff3d6;color:#6b4a00}
pre.explain{background:#f6f6f6;padding:8px;overflow-x:auto;font-size:12px}
.extra ul{margin:0;padding-left:20px;font-family:monospace;font-size:12px}
.scroll{overflow-x:auto;border:1px solid #ddd;margin:8px 0}
svg{display:block;font:11px sans-serif}
svg .page{fill:#fff}
svg .prefix{fill:#fff6c8}
svg .beyond{fill:#f0f0f0}
svg .lane-rule{stroke:#ddd}
svg .lane-label{font-weight:600;fill:#444}
svg .tick,svg .axis-label{fill:#777;text-anchor:middle}
svg .axis-label{text-anchor:start}
svg .op .fill{fill:#cfe3ff}
svg .op .edge{stroke:#3a6ea5;stroke-width:1.2;fill:none}
svg .op rect.fill.edge{fill:#cfe3ff}
svg .op.cut-off .fill,svg .op.pending .fill{fill:#e8e8e8}
svg .op.cut-off .edge,svg .op.pending .edge{stroke:#777;stroke-dasharray:4 2}
svg .op.recovered .fill{fill:#d9f0d9}
svg .op.recovered .edge{stroke:#2a7a2a}
svg .op.involved .edge{stroke:#d67b00;stroke-width:2.4}
svg .op.culprit .fill,svg .op.culprit rect.fill.edge{fill:#ffc2c2}
svg .op.culprit .edge{stroke:#c00000;stroke-width:3}
svg .op.beyond-prefix{opacity:.35}
svg .label{fill:#111}
svg .recover-tail{stroke:#2a7a2a;stroke-dasharray:3 3;fill:none}
svg .recover{fill:#2a9a2a;stroke:#145214}
svg .crash line{stroke:#d00000;stroke-width:2}
svg .crash text{fill:#d00000}
svg .crash-point line{stroke-width:4}
svg .crash-point text{font-weight:700}
svg .fail-line line{stroke:#8a1010;stroke-width:2;stroke-dasharray:6 3}
svg .fail-line text{fill:#8a1010;font-weight:700}
.legend .k{display:inline-block;padding:1px 6px;margin-right:4px;border:1px solid #999;font-size:12px}
.legend .returned{background:#cfe3ff;border-color:#3a6ea5}
.legend .cut-off{background:#e8e8e8;border-style:dashed}
.legend .recovered{background:#d9f0d9;border-color:#2a7a2a}
.legend .involved{border:2px solid #d67b00}
.legend .culprit{background:#ffc2c2;border:2px solid #c00000}
.legend .prefix{background:#fff6c8}
.legend .crash{border-color:#d00000;color:#d00000}
table.events{border-collapse:collapse;font:12px monospace}
table.events td,table.events th{padding:1px 8px;text-align:left;border-bottom:1px solid #eee}
tr.in-prefix{background:#fffbe3}
tr.beyond-prefix{color:#999}
tr.crash td{color:#d00000;font-weight:700}
tr.culprit td{background:#ffe0e0;font-weight:700}
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{check_history, parse_history, CheckOptions, ParseOptions};

    fn page(text: &str, extra: &HtmlPage) -> (History, Verdict, String) {
        let h = parse_history(text, &ParseOptions::default()).expect("well-formed");
        let v = check_history(&h, &CheckOptions::default()).verdict;
        let html = render_html(&h, &v, extra);
        (h, v, html)
    }

    /// The value of attribute `attr` of the first element whose opening tag
    /// contains `marker`.
    fn attr(html: &str, marker: &str, attr: &str) -> String {
        let at = html
            .find(marker)
            .unwrap_or_else(|| panic!("{marker} in page"));
        let tag_start = html[..at + 1].rfind('<').expect("tag");
        let tag = &html[tag_start..tag_start + html[tag_start..].find('>').expect("tag end")];
        let key = format!(" {attr}=\"");
        let v = &tag[tag.find(&key).unwrap_or_else(|| panic!("{attr} in {tag}")) + key.len()..];
        v[..v.find('"').expect("quote")].to_string()
    }

    const LOST: &str = concat!(
        "{\"type\":\"header\",\"object\":\"queue\"}\n",
        "{\"type\":\"invoke\",\"id\":1,\"thread\":0,\"op\":\"enq\",\"args\":[5]}\n",
        "{\"type\":\"invoke\",\"id\":2,\"thread\":1,\"op\":\"enq\",\"args\":[6]}\n",
        "{\"type\":\"return\",\"id\":1,\"value\":null}\n",
        "{\"type\":\"crash\"}\n",
        "{\"type\":\"invoke\",\"id\":3,\"thread\":0,\"op\":\"deq\",\"args\":[]}\n",
        "{\"type\":\"return\",\"id\":3,\"value\":null}\n",
        "{\"type\":\"invoke\",\"id\":4,\"thread\":2,\"op\":\"deq\",\"args\":[]}\n",
        "{\"type\":\"return\",\"id\":4,\"value\":5}\n",
    );

    #[test]
    fn one_lane_per_thread_one_bar_per_operation() {
        let (_, _, html) = page(LOST, &HtmlPage::default());
        for t in 0..3 {
            assert_eq!(
                html.matches(&format!("class=\"lane\" data-thread=\"{t}\""))
                    .count(),
                1,
                "lane {t}"
            );
        }
        assert!(!html.contains("data-thread=\"3\""));
        assert_eq!(html.matches("<g class=\"op ").count(), 4);
        // A returned bar runs from its invoke column to its return column.
        let x1: f64 = attr(&html, "data-id=\"1\"", "data-x1").parse().unwrap();
        let x2: f64 = attr(&html, "data-id=\"1\"", "data-x2").parse().unwrap();
        assert!(x2 > x1, "{x1} {x2}");
        assert!(
            html.contains(">enq(5) -&gt; null</text>"),
            "label escaped and shown"
        );
    }

    #[test]
    fn crash_lines_cross_all_lanes_and_cut_off_bars_end_there() {
        let (_, _, html) = page(LOST, &HtmlPage::default());
        assert_eq!(html.matches("<g class=\"crash\"").count(), 1);
        let crash_x = attr(&html, "class=\"crash\" data-line=\"5\"", "data-x");
        // Operation 2 was cut off: an open bar ending at the crash.
        assert!(html.contains("<g class=\"op cut-off"), "{html}");
        assert_eq!(attr(&html, "data-id=\"2\"", "data-x2"), crash_x);
        // The crash line spans every lane: from above the first lane to
        // below the last one.
        let at = html.find("class=\"crash\" data-line=\"5\"").unwrap();
        let line = &html[at..];
        let line = &line[line.find("<line").unwrap()..];
        let y1: f64 = attr(line, "<line", "y1").parse().unwrap();
        let y2: f64 = attr(line, "<line", "y2").parse().unwrap();
        assert!(y1 < TOP && y2 > TOP + 3.0 * LANE_H, "{y1} {y2}");
    }

    #[test]
    fn the_minimal_failing_prefix_and_culprit_are_highlighted() {
        let (h, v, html) = page(LOST, &HtmlPage::default());
        let Verdict::NotDurablyLinearizable(vi) = &v else {
            panic!("{v:?}")
        };
        assert_eq!(vi.prefix_end_line, 7);
        assert!(html.contains("data-verdict=\"fail\""));
        assert!(html.contains(&escape(&vi.verdict_line(&h))));
        assert!(html.contains("data-prefix-end=\"7\""));
        assert!(html.contains("class=\"fail-line\" data-line=\"7\""));
        // deq -> null at line 7 is the culprit; enq(5) is involved; the deq
        // invoked after the prefix is dimmed.
        assert!(
            html.contains("<g class=\"op returned culprit\" data-id=\"3\""),
            "{html}"
        );
        assert!(html.contains("<g class=\"op returned involved\" data-id=\"1\""));
        assert!(html.contains("<g class=\"op returned beyond-prefix\" data-id=\"4\""));
        assert!(html.contains("<tr class=\"return in-prefix culprit\" data-line=\"7\">"));
        assert!(html.contains("<tr class=\"invoke beyond-prefix\" data-line=\"8\">"));
        // The prefix shading ends at the culprit's column.
        let fail_x: f64 = attr(&html, "class=\"fail-line\"", "data-x")
            .parse()
            .unwrap();
        let width: f64 = attr(&html, "data-prefix-end=\"7\"", "width")
            .parse()
            .unwrap();
        assert!((LEFT + width - fail_x) > 0.0 && (LEFT + width - fail_x) < 40.0);
    }

    #[test]
    fn a_passing_history_has_no_prefix_and_marks_recovers() {
        let text = concat!(
            "{\"type\":\"header\",\"object\":\"queue\",\"init\":[]}\n",
            "{\"type\":\"invoke\",\"id\":1,\"thread\":0,\"op\":\"enq\",\"args\":[5]}\n",
            "{\"type\":\"invoke\",\"id\":2,\"thread\":1,\"op\":\"deq\",\"args\":[]}\n",
            "{\"type\":\"return\",\"id\":1,\"value\":null}\n",
            "{\"type\":\"crash\"}\n",
            "{\"type\":\"recover\",\"id\":2,\"value\":5}\n",
            "{\"type\":\"invoke\",\"id\":3,\"thread\":0,\"op\":\"deq\",\"args\":[]}\n",
        );
        let extra = HtmlPage {
            title: "pass.ndjson".into(),
            crash_point: Some((5, "crash point: after persistence event 9".into())),
            sections: vec![("Crash point".into(), vec!["schedule 0".into()])],
        };
        let (_, v, html) = page(text, &extra);
        assert_eq!(v, Verdict::DurablyLinearizable);
        assert!(html.contains("data-verdict=\"pass\""));
        assert!(!html.contains("data-prefix-end"));
        assert!(!html.contains("class=\"fail-line\""));
        assert!(html.contains("<g class=\"op recovered\" data-id=\"2\""));
        assert!(html.contains("class=\"recover\" data-line=\"6\""));
        assert!(html.contains("<g class=\"op pending\" data-id=\"3\""));
        assert!(html.contains("<g class=\"crash crash-point\" data-line=\"5\""));
        assert!(html.contains("crash point: after persistence event 9 (line 5)"));
        assert!(html.contains("<h2>Crash point</h2><ul><li>schedule 0</li>"));
    }

    #[test]
    fn text_from_the_history_and_caller_is_escaped() {
        let evil = "</title></svg><script>alert(1)</script><img src=x onerror=\"x\">'&";
        let text = format!(
            "{{\"type\":\"header\",\"object\":\"map\"}}\n{{\"type\":\"invoke\",\"id\":1,\"thread\":0,\"op\":\"put\",\"args\":[{k},{k}]}}\n{{\"type\":\"return\",\"id\":1,\"value\":{k}}}\n",
            k = serde_json::Value::from(evil)
        );
        let extra = HtmlPage {
            title: evil.into(),
            crash_point: None,
            sections: vec![(evil.into(), vec![evil.into()])],
        };
        let (_, v, html) = page(&text, &extra);
        assert!(matches!(v, Verdict::NotDurablyLinearizable(_)));
        assert!(!html.to_lowercase().contains("<script"), "{html}");
        assert!(!html.contains("<img"));
        assert!(!html.contains("onerror=\"x\""));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("&#39;&amp;"));
        // Only the page's own tags: one svg, one title element.
        assert_eq!(html.matches("</svg>").count(), 1);
        assert_eq!(html.matches("</title>\n<style>").count(), 1);
        assert_eq!(
            escape("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
    }
}
