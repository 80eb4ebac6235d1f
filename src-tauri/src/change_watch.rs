//! Follows changes to the data directory, whoever makes them (this window, the agent, or the
//! `flame` command line in another process), and tells the UI with a [`TreeChanged`] event.
//!
//! The store numbers every event with an increasing `seq` across processes, so polling
//! `events_since` is enough to notice any change without watching files.
//!
//! A thread polls `Flame::events_since` every 200 ms and emits `TreeChanged {seq}` whenever there
//! are new events.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager, Runtime};
use tauri_specta::Event;

use crate::Startup;

/// How often the data directory is asked for new events: well inside the half second within
/// which the flame graph must show a change, and cheap (one indexed query) when nothing changed.
const POLL_EVERY: Duration = Duration::from_millis(200);
/// The most events read per poll; only the newest seq matters, the rest are read next time.
const PAGE: u32 = 1000;

/// Something changed in the data directory: the UI reloads what it shows if its copy is older
/// than `seq`.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct TreeChanged {
    /// The newest event seen.
    pub seq: i64,
}

/// Starts the polling thread. It ends with the process; a failed poll is logged and retried.
pub fn spawn<R: Runtime>(app: AppHandle<R>) {
    let spawned = std::thread::Builder::new().name("flame-change-watch".into()).spawn(move || {
        let Some(mut seen) = starting_seq(&app) else { return };
        loop {
            std::thread::sleep(POLL_EVERY);
            let Ok(flame) = app.state::<Startup>().inner().flame() else { return };
            match flame.events_since(seen, PAGE) {
                Ok(events) => {
                    let Some(newest) = events.last().map(|e| e.seq) else { continue };
                    seen = newest;
                    if let Err(err) = (TreeChanged { seq: newest }).emit(&app) {
                        tracing::warn!("could not tell the window about a change: {err}");
                    }
                }
                Err(err) => tracing::warn!("could not read new events: {}", err.message),
            }
        }
    });
    if let Err(err) = spawned {
        tracing::error!("could not start following changes: {err}");
    }
}

/// The seq to follow from: the newest event when the watch starts. `None` when Flame did not
/// open, since then nothing can change.
fn starting_seq<R: Runtime>(app: &AppHandle<R>) -> Option<i64> {
    let flame = app.state::<Startup>().inner().flame().ok()?;
    match flame.latest_seq() {
        Ok(seq) => Some(seq),
        Err(err) => {
            tracing::warn!("could not read the newest event: {}", err.message);
            Some(0)
        }
    }
}
