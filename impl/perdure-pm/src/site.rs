//! Crash sites: which call in the code caused a persistence event, and the
//! ledger of the sites the checks reached and crashed right after.
//!
//! A *site* is the source location of a call of a persistence primitive:
//! [`Pool::pwb`](crate::Pool::pwb), [`Pool::pfence`](crate::Pool::pfence),
//! [`Pool::psync`](crate::Pool::psync), a store, CAS, swap, fetch-add or
//! non-temporal store of a [`PmWord`](crate::PmWord), a 16-byte CAS of a
//! [`PmDword`](crate::PmDword). Those methods are `#[track_caller]`, and so
//! are the constructions' thin wrappers of them (Memento's `Handle::store`,
//! for one), so the location is the algorithm's line, not the wrapper's.
//!
//! The methods hand the location to the backend ([`Backend::note_site`](crate::Backend::note_site));
//! every backend but [`Sim`](crate::Sim) ignores it. `Sim` takes it at the
//! start of the access (before any scheduling point, so another
//! thread's note cannot replace it), attributes to it the persistence event
//! the access causes — at once, or when a buffered store or `sfence` leaves
//! the thread's store buffer — and a [`CrashPoint`](crate::sim::CrashPoint)
//! captured after that event carries it.
//!
//! The ledger: with the environment variable `PERDURE_SITES_OUT` naming a
//! directory, each process appends to `DIR/sites-<pid>.tsv` one line per
//! site the first time it is *reached* (`reached<TAB>file:line:col`: an
//! access was made from it) and the first time it is *crashed after*
//! (`crashed<TAB>file:line:col`: an image of a crash point captured right
//! after its event was built, [`CrashPoint::materialize`](crate::sim::CrashPoint::materialize),
//! which every crash checker calls before it recovers the image).
//! `tools/verify.py` merges the files into the per-crate coverage of the
//! report's footer. Without the variable the ledger costs one check of a
//! cached flag per access.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::io::Write;
use std::panic::Location;
use std::sync::{Mutex, OnceLock};

/// A call site of a persistence primitive.
pub type Site = &'static Location<'static>;

thread_local! {
    /// The site the calling thread's next backend access was made from.
    static NOTED: Cell<Option<Site>> = const { Cell::new(None) };
    /// Sites this thread already wrote to the ledger (kind, file, line,
    /// column), so that the ledger's lock is taken once per new site.
    static SEEN: RefCell<HashSet<(bool, &'static str, u32, u32)>> = RefCell::new(HashSet::new());
}

/// Notes `site` as the origin of the calling thread's next access.
#[inline]
pub(crate) fn note(site: Site) {
    NOTED.with(|n| n.set(Some(site)));
}

/// Takes the site noted for the access starting now (none if the access
/// was not made through a `#[track_caller]` primitive), and records it as
/// reached.
#[inline]
pub(crate) fn take() -> Option<Site> {
    let site = NOTED.with(|n| n.take());
    reached(site);
    site
}

/// `file:line:col`, as the ledger and the report write a site.
pub fn key(site: Site) -> String {
    format!("{}:{}:{}", site.file(), site.line(), site.column())
}

/// The ledger file, if `PERDURE_SITES_OUT` names a directory.
fn ledger() -> Option<&'static Mutex<std::fs::File>> {
    static LEDGER: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();
    LEDGER
        .get_or_init(|| {
            let dir = std::env::var_os("PERDURE_SITES_OUT")?;
            let path = std::path::Path::new(&dir).join(format!("sites-{}.tsv", std::process::id()));
            // A ledger that cannot be written is reported once and then off:
            // coverage is a report, never a reason for a check to fail here
            // (the report notices the missing sites instead).
            match std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
            {
                Ok(f) => Some(Mutex::new(f)),
                Err(e) => {
                    eprintln!(
                        "perdure: cannot write the crash-site ledger {}: {e}",
                        path.display()
                    );
                    None
                }
            }
        })
        .as_ref()
}

fn record(crashed: bool, site: Option<Site>) {
    let (Some(site), Some(file)) = (site, ledger()) else {
        return;
    };
    let new = SEEN.with(|s| {
        s.borrow_mut()
            .insert((crashed, site.file(), site.line(), site.column()))
    });
    if new {
        let kind = if crashed { "crashed" } else { "reached" };
        let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
        // One short line per write, appended: whole lines even with
        // several processes on one directory (each has its own file).
        let _ = writeln!(f, "{kind}\t{}", key(site));
    }
}

/// An access was made from `site`.
#[inline]
fn reached(site: Option<Site>) {
    record(false, site);
}

/// An image of a crash point right after `site`'s event was built.
#[inline]
pub(crate) fn crashed(site: Option<Site>) {
    record(true, site);
}
