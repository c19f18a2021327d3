//! The HTML page of a failing history (`perdure_check::history::render_html`),
//! rendered by headless Chromium: the screenshot must show the drawing, not
//! a blank page.
//!
//! The page is written to a temporary directory and Chromium (Debian's
//! `chromium`) takes a 1200×800 screenshot of it. The PNG is decoded and
//! must hold many colours, a good share of non-white pixels, and the two
//! solid fills only the drawing has (the event table uses paler ones): the
//! shading of the minimal failing prefix and the culprit's bar. Prints the `PERDURE-CHECK` row
//! `html:chromium-render`; where `chromium` is not installed the row is
//! `skip` with the reason, never a pass.
//!
//! Not covered: other browsers, and how the page looks beyond those colours.

use perdure_check::history::{check_history, parse_history, render_html};
use perdure_check::history::{CheckOptions, HtmlPage, ParseOptions, Verdict};
use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

const CHECK: &str = "html:chromium-render";
/// The browser: `chromium`, or the command `PERDURE_CHROMIUM` names.
fn chromium() -> String {
    std::env::var("PERDURE_CHROMIUM").unwrap_or_else(|_| "chromium".into())
}
/// A screenshot takes a few seconds; this only guards a hang.
const TIMEOUT: Duration = Duration::from_secs(180);

/// Two threads, a crash cutting one `enq` off, a recovered `deq`, and a
/// `deq` that finds the queue empty although `enq(5)` completed.
const HISTORY: &str = r#"{"type":"header","object":"queue"}
{"type":"invoke","id":1,"thread":0,"op":"enq","args":[5]}
{"type":"invoke","id":2,"thread":1,"op":"enq","args":[6]}
{"type":"return","id":1,"value":null}
{"type":"invoke","id":3,"thread":0,"op":"deq","args":[]}
{"type":"crash"}
{"type":"recover","id":3,"value":6}
{"type":"invoke","id":4,"thread":0,"op":"deq","args":[]}
{"type":"return","id":4,"value":null}
{"type":"invoke","id":5,"thread":1,"op":"deq","args":[]}
{"type":"return","id":5,"value":5}
"#;

fn row(status: &str, explored: &str, detail: &str, seconds: f64) {
    let seconds = (seconds * 10.0).round() / 10.0;
    println!(
        "{}",
        common::report_row(CHECK, "cargo", status, explored, detail, Some(seconds))
    );
}

/// Why Chromium cannot run here, if it cannot.
fn chromium_unavailable() -> Option<String> {
    let chromium = chromium();
    match Command::new(&chromium)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) if s.success() => None,
        Ok(s) => Some(format!("`{chromium} --version` failed ({s})")),
        Err(e) => Some(format!(
            "chromium not installed ({chromium}: {e}; apt-get install -y chromium)"
        )),
    }
}

/// Runs headless Chromium on `page`, writing `png`; `Err` says why it failed.
fn screenshot(page: &Path, png: &Path, profile: &Path) -> Result<(), String> {
    let mut child = Command::new(chromium())
        .args(["--headless", "--disable-gpu", "--no-sandbox"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=1200,800")
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start chromium: {e}"))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(s)) if s.success() => return Ok(()),
            Ok(Some(s)) => return Err(format!("chromium exited with {s}")),
            Ok(None) if started.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("chromium did not finish in {TIMEOUT:?}"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => return Err(format!("waiting for chromium: {e}")),
        }
    }
}

/// The screenshot's size and RGB pixels.
fn decode(png: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let file = std::fs::File::open(png).expect("screenshot written");
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "{info:?}");
    let channels = info.color_type.samples();
    assert!(channels >= 3, "{info:?}");
    let pixels = buf[..info.buffer_size()]
        .chunks_exact(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    (info.width, info.height, pixels)
}

/// How many pixels are within 3 of `rgb` in every channel.
fn count_near(pixels: &[[u8; 3]], rgb: [u8; 3]) -> usize {
    pixels
        .iter()
        .filter(|p| p.iter().zip(rgb).all(|(&a, b)| a.abs_diff(b) <= 3))
        .count()
}

/// What the screenshot shows, if it shows the drawing; else why not.
fn drawn(pixels: &[[u8; 3]]) -> Result<String, String> {
    let colours: HashSet<[u8; 3]> = pixels.iter().copied().collect();
    let white = count_near(pixels, [255, 255, 255]);
    let inked = pixels.len() - white;
    // The prefix's shading (#fff6c8) and the culprit's fill (#ffc2c2).
    let prefix = count_near(pixels, [0xff, 0xf6, 0xc8]);
    let culprit = count_near(pixels, [0xff, 0xc2, 0xc2]);
    let seen = format!(
        "1 page rendered: {} colours, {:.1}% non-white pixels, {prefix} pixels of prefix shading, {culprit} of culprit fill",
        colours.len(),
        100.0 * inked as f64 / pixels.len() as f64
    );
    if colours.len() <= 16 {
        Err(format!("too few colours: {seen}"))
    } else if inked * 20 <= pixels.len() {
        Err(format!("under 5% non-white: {seen}"))
    } else if prefix <= 2000 {
        Err(format!("no prefix shading: {seen}"))
    } else if culprit <= 200 {
        Err(format!("no culprit bar: {seen}"))
    } else {
        Ok(seen)
    }
}

#[test]
fn chromium_renders_a_failing_history() {
    let started = Instant::now();
    let history = parse_history(HISTORY, &ParseOptions::default()).expect("well-formed");
    let verdict = check_history(&history, &CheckOptions::default()).verdict;
    assert!(
        matches!(&verdict, Verdict::NotDurablyLinearizable(v) if v.prefix_end_line == 9),
        "{verdict:?}"
    );
    let html = render_html(
        &history,
        &verdict,
        &HtmlPage {
            title: "chromium-render.ndjson".into(),
            ..HtmlPage::default()
        },
    );
    if let Some(why) = chromium_unavailable() {
        println!("SKIP {CHECK}: {why}");
        row("skip", "", &why, started.elapsed().as_secs_f64());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("page.html");
    let png = dir.path().join("page.png");
    std::fs::write(&page, html).unwrap();
    if let Err(why) = screenshot(&page, &png, &dir.path().join("profile")) {
        row("fail", "", &why, started.elapsed().as_secs_f64());
        panic!("{why}");
    }
    let (width, height, pixels) = decode(&png);
    assert_eq!((width, height), (1200, 800));
    let explored = match drawn(&pixels) {
        Ok(explored) => explored,
        Err(why) => {
            row("fail", "", &why, started.elapsed().as_secs_f64());
            panic!("{why}");
        }
    };
    println!("{CHECK}: {explored}");
    // The check tells a blank page apart: the same screenshot of an empty
    // page fails it.
    let blank = dir.path().join("blank.html");
    let blank_png = dir.path().join("blank.png");
    std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").unwrap();
    screenshot(&blank, &blank_png, &dir.path().join("profile")).expect("blank screenshot");
    let (_, _, blank_pixels) = decode(&blank_png);
    let blank_verdict = drawn(&blank_pixels);
    assert!(
        blank_verdict.is_err(),
        "a blank page passed: {blank_verdict:?}"
    );
    row(
        "pass",
        &explored,
        "headless chromium screenshot, 1200x800, of a failing queue history (2 threads, a crash, a recover); an empty page fails the same check",
        started.elapsed().as_secs_f64(),
    );
}
