//! The Tauri commands. Each one converts, calls `flame-api`, and returns its result; the error
//! type is always `ApiError`, which reaches the UI as `{code, message}`.

use flame_api::{ApiError, AppInfo};
use tauri::State;

use crate::Startup;

/// Flame's version, data directory and database; the startup error if Flame could not open.
#[tauri::command]
#[specta::specta]
pub fn app_info(startup: State<'_, Startup>) -> Result<AppInfo, ApiError> {
    startup.flame()?.info()
}
