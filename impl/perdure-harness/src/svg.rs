//! A small dependency-free SVG writer for the benchmark plots: a line chart
//! (x = threads, y = throughput, one line per series; a logarithmic y axis
//! for latency percentiles), a line chart with a linear x axis (time series), a grouped bar chart and a forest plot
//! (estimates with confidence intervals, one row each). Plain SVG 1.1 text,
//! readable by any browser.

use std::fmt::Write as _;

const W: f64 = 720.0;
const H: f64 = 440.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 180.0;
const TOP: f64 = 48.0;
const BOTTOM: f64 = 56.0;
const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

/// A named series of points.
pub struct Series {
    /// The legend entry.
    pub name: String,
    /// (x, y) points, in x order.
    pub points: Vec<(f64, f64)>,
}

/// The opening `<svg>` tag of a plot `W` wide and `height` high, and its white background.
fn open_svg(out: &mut String, height: f64, font_size: u32) {
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" viewBox="0 0 {W} {height}" font-family="sans-serif" font-size="{font_size}">"#
    );
    let _ = writeln!(out, r#"<rect width="{W}" height="{height}" fill="white"/>"#);
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A "nice" tick step for a range of `span` split in about `n` parts.
fn nice_step(span: f64, n: f64) -> f64 {
    if span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / n;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

fn fmt_tick(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e6 {
        return format!("{v:.0}");
    }
    // As few decimals as show the tick exactly (0.025 needs three).
    let d = (1..=4)
        .find(|&d| {
            let m = 10f64.powi(d) * v;
            (m - m.round()).abs() < 1e-6 * m.abs().max(1.0)
        })
        .unwrap_or(4) as usize;
    format!("{v:.d$}")
}

struct Frame {
    y_max: f64,
    plot_w: f64,
    plot_h: f64,
    /// A logarithmic y axis from 10^lo to 10^`y_max` (`y_max` then an exponent).
    log_lo: Option<f64>,
}

impl Frame {
    fn y(&self, v: f64) -> f64 {
        let share = match self.log_lo {
            Some(lo) => (v.max(f64::MIN_POSITIVE).log10().max(lo) - lo) / (self.y_max - lo),
            None => v / self.y_max,
        };
        TOP + self.plot_h * (1.0 - share)
    }

    /// A label `text` under the x axis at `x`.
    fn x_label(&self, out: &mut String, x: f64, text: &str) {
        let _ = writeln!(
            out,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{text}</text>"#,
            TOP + self.plot_h + 18.0,
        );
    }

    /// The points of `s` as a polyline's `points`, x placed by `x_at`.
    fn points(&self, s: &Series, x_at: impl Fn(f64) -> f64) -> String {
        let pts: Vec<String> = s
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", x_at(x), self.y(y)))
            .collect();
        pts.join(" ")
    }

    /// The legend of `names` and the end of the document.
    fn close(&self, mut out: String, names: &[&str]) -> String {
        legend(&mut out, names, self);
        out.push_str("</svg>\n");
        out
    }
}

/// The largest coordinate `pick` takes from a point of `series` (0 if
/// none is larger).
fn top(series: &[Series], pick: impl Fn(&(f64, f64)) -> f64) -> f64 {
    series
        .iter()
        .flat_map(|s| s.points.iter().map(&pick))
        .fold(0.0, f64::max)
}

/// Header, title, axes labels and the horizontal grid with y ticks.
fn open(out: &mut String, title: &str, x_label: &str, y_label: &str, y_top: f64) -> Frame {
    let step = nice_step(y_top.max(1e-9), 5.0);
    let y_max = (y_top / step).ceil().max(1.0) * step;
    let f = Frame {
        y_max,
        plot_w: W - LEFT - RIGHT,
        plot_h: H - TOP - BOTTOM,
        log_lo: None,
    };
    let ticks: Vec<f64> = (0..)
        .map(|i| i as f64 * step)
        .take_while(|&v| v <= y_max + step / 2.0)
        .collect();
    frame(out, &f, title, x_label, y_label, &ticks);
    f
}

/// As [`open`], with a logarithmic y axis over the decades that hold
/// `[y_min, y_top]` (both positive), a grid line at each power of ten.
fn open_log(
    out: &mut String,
    title: &str,
    (x_label, y_label): (&str, &str),
    y_min: f64,
    y_top: f64,
) -> Frame {
    let lo = y_min.max(1e-9).log10().floor();
    let hi = y_top.max(y_min * 10.0).log10().ceil().max(lo + 1.0);
    let f = Frame {
        y_max: hi,
        plot_w: W - LEFT - RIGHT,
        plot_h: H - TOP - BOTTOM,
        log_lo: Some(lo),
    };
    let ticks: Vec<f64> = (lo as i32..=hi as i32).map(|e| 10f64.powi(e)).collect();
    frame(out, &f, title, x_label, y_label, &ticks);
    f
}

/// The document's start, title, y grid at `ticks`, axes and axis labels.
fn frame(out: &mut String, f: &Frame, title: &str, x_label: &str, y_label: &str, ticks: &[f64]) {
    open_svg(out, H, 12);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
        LEFT + f.plot_w / 2.0,
        esc(title)
    );
    for &v in ticks {
        let y = f.y(v);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + f.plot_w,
            LEFT - 6.0,
            y + 4.0,
            fmt_tick(v)
        );
    }
    let _ = writeln!(
        out,
        r#"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{:.1}" stroke="black"/><line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="black"/>"#,
        TOP + f.plot_h,
        TOP + f.plot_h,
        LEFT + f.plot_w,
        TOP + f.plot_h
    );
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        LEFT + f.plot_w / 2.0,
        H - 14.0,
        esc(x_label)
    );
    let _ = writeln!(
        out,
        r#"<text transform="translate(18 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        TOP + f.plot_h / 2.0,
        esc(y_label)
    );
}

fn legend(out: &mut String, names: &[&str], f: &Frame) {
    for (i, name) in names.iter().enumerate() {
        let x = LEFT + f.plot_w + 16.0;
        let y = TOP + 10.0 + 20.0 * i as f64;
        let c = PALETTE[i % PALETTE.len()];
        let _ = writeln!(
            out,
            r#"<rect x="{x:.1}" y="{:.1}" width="14" height="10" fill="{c}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            y - 9.0,
            x + 20.0,
            y,
            esc(name)
        );
    }
}

/// A line chart of `series` over the x values they share (plotted at equal
/// spacing, labelled with their values: thread counts).
pub fn line_chart(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let mut out = String::new();
    let f = open(&mut out, title, x_label, y_label, top(series, |p| p.1));
    category_lines(out, &f, series)
}

/// As [`line_chart`], with a logarithmic y axis (for latency percentiles,
/// whose tail is orders of magnitude above the median); values must be
/// positive (smaller ones are drawn at the axis' bottom).
pub fn line_chart_log(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let y_min = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|&y| y > 0.0)
        .fold(f64::INFINITY, f64::min);
    let y_min = if y_min.is_finite() { y_min } else { 1.0 };
    let mut out = String::new();
    let f = open_log(
        &mut out,
        title,
        (x_label, y_label),
        y_min,
        top(series, |p| p.1),
    );
    category_lines(out, &f, series)
}

/// The lines of `series` in frame `f`, the x values they share at equal
/// spacing, and the legend.
fn category_lines(mut out: String, f: &Frame, series: &[Series]) -> String {
    let mut xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let slot = f.plot_w / xs.len().max(1) as f64;
    let x_at = |x: f64| {
        let i = xs.iter().position(|v| *v == x).unwrap_or(0);
        LEFT + slot * (i as f64 + 0.5)
    };
    for &x in &xs {
        f.x_label(&mut out, x_at(x), &fmt_tick(x));
    }
    for (i, s) in series.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        let _ = writeln!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"/>"#,
            f.points(s, x_at)
        );
        for &(x, y) in &s.points {
            let _ = writeln!(
                out,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{c}"><title>{}: {:.3}</title></circle>"#,
                x_at(x),
                f.y(y),
                esc(&s.name),
                y
            );
        }
    }
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    f.close(out, &names)
}

/// A line chart with a linear x axis (ticks at "nice" values, points placed
/// by value): for time series such as throughput after a crash, where
/// [`line_chart`]'s one-slot-per-x layout would label every point.
pub fn line_chart_xy(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let x_top = top(series, |p| p.0);
    let mut out = String::new();
    let f = open(&mut out, title, x_label, y_label, top(series, |p| p.1));
    let x_step = nice_step(x_top.max(1e-9), 8.0);
    let x_max = (x_top / x_step).ceil().max(1.0) * x_step;
    let x_at = |x: f64| LEFT + f.plot_w * (x / x_max);
    let mut v = 0.0;
    while v <= x_max + x_step / 2.0 {
        f.x_label(&mut out, x_at(v), &fmt_tick(v));
        v += x_step;
    }
    for (i, s) in series.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        let _ = writeln!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="1.5"><title>{}</title></polyline>"#,
            f.points(s, x_at),
            esc(&s.name)
        );
    }
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    f.close(out, &names)
}

/// A grouped bar chart: one group per entry of `groups`, one bar per
/// series in each group (`series[k].1[g]` is series k's value in group g).
pub fn bar_chart(
    title: &str,
    y_label: &str,
    groups: &[String],
    series: &[(String, Vec<f64>)],
) -> String {
    let y_top = series
        .iter()
        .flat_map(|s| s.1.iter().copied())
        .fold(0.0, f64::max);
    let mut out = String::new();
    let f = open(&mut out, title, "", y_label, y_top);
    let slot = f.plot_w / groups.len().max(1) as f64;
    let bar = slot * 0.8 / series.len().max(1) as f64;
    for (g, name) in groups.iter().enumerate() {
        let x0 = LEFT + slot * g as f64 + slot * 0.1;
        for (k, (sname, vals)) in series.iter().enumerate() {
            let v = vals.get(g).copied().unwrap_or(0.0);
            let y = f.y(v);
            let _ = writeln!(
                out,
                r#"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{} {}: {:.3}</title></rect>"#,
                x0 + bar * k as f64,
                bar * 0.95,
                TOP + f.plot_h - y,
                PALETTE[k % PALETTE.len()],
                esc(name),
                esc(sname),
                v
            );
        }
        f.x_label(&mut out, LEFT + slot * (g as f64 + 0.5), &esc(name));
    }
    let names: Vec<&str> = series.iter().map(|s| s.0.as_str()).collect();
    f.close(out, &names)
}

/// One row of a [`forest_plot`]: an estimate and its interval.
pub struct ForestRow {
    /// The row's label, left of the axis.
    pub label: String,
    /// Which legend entry (and colour) the row belongs to.
    pub series: usize,
    /// The estimate (a dot).
    pub estimate: f64,
    /// The interval's ends (a whisker); NaN when there is none.
    pub lo: f64,
    /// See `lo`.
    pub hi: f64,
}

/// A forest plot: one row per entry of `rows`, the estimate as a dot and
/// its interval as a horizontal whisker on a shared linear x axis, with
/// vertical reference lines at `refs` (value, label; the first solid, the
/// others dashed). `series` names the legend entries rows refer to.
pub fn forest_plot(
    title: &str,
    x_label: &str,
    rows: &[ForestRow],
    series: &[&str],
    refs: &[(f64, &str)],
) -> String {
    const ROW: f64 = 18.0;
    const LABEL_W: f64 = 230.0;
    let plot_h = ROW * rows.len().max(1) as f64;
    let height = TOP + plot_h + BOTTOM;
    let finite = |v: f64| v.is_finite().then_some(v);
    let vals = rows
        .iter()
        .flat_map(|r| [r.estimate, r.lo, r.hi])
        .chain(refs.iter().map(|r| r.0))
        .filter_map(finite);
    let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    let (lo, hi) = if lo < hi { (lo, hi) } else { (0.0, 2.0) };
    let step = nice_step(hi - lo, 6.0);
    let (x_min, x_max) = ((lo / step).floor() * step, (hi / step).ceil() * step);
    let left = LABEL_W;
    let plot_w = W - left - RIGHT;
    let x_at = |v: f64| left + plot_w * (v - x_min) / (x_max - x_min);
    let mut out = String::new();
    open_svg(&mut out, height, 11);
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="24" text-anchor="middle" font-size="14" font-weight="bold">{}</text>"#,
        W / 2.0,
        esc(title)
    );
    let axis_y = TOP + plot_h;
    let mut v = x_min;
    while v <= x_max + step / 2.0 {
        let x = x_at(v);
        let _ = writeln!(
            out,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{axis_y:.1}" stroke="#eee"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            axis_y + 16.0,
            fmt_tick((v / step).round() * step)
        );
        v += step;
    }
    for (i, &(v, name)) in refs.iter().enumerate() {
        let x = x_at(v);
        // The first label centred on its line, the others beside theirs
        // (away from the first), so that close values stay readable.
        let (dash, anchor, tx) = match i {
            0 => ("", "middle", x),
            _ if v < refs[0].0 => (r#" stroke-dasharray="5,4""#, "end", x - 3.0),
            _ => (r#" stroke-dasharray="5,4""#, "start", x + 3.0),
        };
        let _ = writeln!(
            out,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{axis_y:.1}" stroke="#555"{dash}/><text x="{tx:.1}" y="{:.1}" text-anchor="{anchor}" fill="#555">{}</text>"##,
            TOP - 6.0,
            esc(name)
        );
    }
    let _ = writeln!(
        out,
        r#"<line x1="{left}" y1="{axis_y:.1}" x2="{:.1}" y2="{axis_y:.1}" stroke="black"/>"#,
        left + plot_w
    );
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        left + plot_w / 2.0,
        height - 14.0,
        esc(x_label)
    );
    for (i, r) in rows.iter().enumerate() {
        let y = TOP + ROW * (i as f64 + 0.5);
        let c = PALETTE[r.series % PALETTE.len()];
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            left - 8.0,
            y + 4.0,
            esc(&r.label)
        );
        if r.lo.is_finite() && r.hi.is_finite() {
            let _ = writeln!(
                out,
                r#"<line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{c}" stroke-width="2"/>"#,
                x_at(r.lo),
                x_at(r.hi)
            );
        }
        if r.estimate.is_finite() {
            let _ = writeln!(
                out,
                r#"<circle cx="{:.1}" cy="{y:.1}" r="3.5" fill="{c}"><title>{}: {:.4} [{:.4}, {:.4}]</title></circle>"#,
                x_at(r.estimate),
                esc(&r.label),
                r.estimate,
                r.lo,
                r.hi
            );
        }
    }
    let f = Frame {
        y_max: 1.0,
        plot_w: W - LEFT - RIGHT,
        plot_h,
        log_lo: None,
    };
    f.close(out, series)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The circles' y coordinates in a chart, in document order.
    fn circle_ys(doc: &str) -> Vec<f64> {
        doc.split("<circle ")
            .skip(1)
            .map(|c| {
                let at = c.find("cy=\"").expect("cy") + 4;
                c[at..at + c[at..].find('"').expect("quote")]
                    .parse()
                    .expect("a number")
            })
            .collect()
    }

    #[test]
    fn a_log_axis_spaces_decades_evenly() {
        let s = [Series {
            name: "x".into(),
            points: vec![(1.0, 10.0), (2.0, 100.0), (3.0, 1000.0)],
        }];
        let y = circle_ys(&line_chart_log("t", "x", "y", &s));
        assert_eq!(y.len(), 3);
        assert!(y[0] > y[1] && y[1] > y[2], "{y:?}");
        assert!(((y[0] - y[1]) - (y[1] - y[2])).abs() < 0.2, "{y:?}");
        // On the linear axis the first two points are 10x closer.
        let y = circle_ys(&line_chart("t", "x", "y", &s));
        assert!((y[0] - y[1]) * 5.0 < y[1] - y[2], "{y:?}");
    }
}
