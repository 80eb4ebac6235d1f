//! The database's quick check, run beside the window's opening, and the window told if it finds
//! the file damaged.
//!
//! The window opens Flame with the check left aside (`Flame::open_checking_aside`): on a
//! 100k-frame store it reads every page for 2.3 s, longer than the rest of the opening. A thread
//! of the lowest priority runs it here, so it takes only what the window leaves idle; every write
//! waits for it meanwhile, and none is made to a damaged file. When the check finds damage the
//! window is told with a [`DatabaseDamaged`] event and shows what it shows for a database found
//! damaged at start, and `app_info` answers with the same error from then on.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager, Runtime};
use tauri_specta::Event;

use crate::{Startup, in_background, yield_to_the_window};

/// The database's quick check found the file damaged; nothing is written to it.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct DatabaseDamaged {
    /// What the check found, as opening a damaged database reports it.
    pub error: flame_api::ApiError,
}

/// Starts the check on a thread of its own, when Flame opened.
pub fn spawn<R: Runtime>(app: &AppHandle<R>) {
    let startup = app.state::<Startup>();
    let Ok(flame) = startup.flame() else { return };
    let flame = Arc::clone(flame);
    let app = app.clone();
    in_background("flame-damage-check", move || {
        yield_to_the_window();
        if let Err(error) = flame.check_damage() {
            tracing::error!("{}; nothing will be written to it", error.message);
            if let Err(err) = (DatabaseDamaged { error }).emit(&app) {
                tracing::warn!("could not tell the window the database is damaged: {err}");
            }
        }
    });
}
