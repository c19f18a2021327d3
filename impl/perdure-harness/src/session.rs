//! What the scenario modules of every construction share: the run's
//! volatile state out of the explorer's [`Session`], and the names they
//! build at run time.

use perdure_check::explore::Session;

/// The volatile state of type `T` that `session` holds (built by the
/// scenario's `open`).
pub(crate) fn state<T: 'static>(session: &Session) -> Result<&T, String> {
    session
        .downcast_ref::<T>()
        .ok_or_else(|| "session of the wrong type".to_string())
}

/// `s` as the `&'static str` a scenario's name and description are: the
/// scenarios built at run time are a few dozen per process, never freed.
pub(crate) fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}
