//! The system's save dialog, opened from Rust so that the webview needs no dialog permission.

use std::path::PathBuf;

use flame_api::ApiError;
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_dialog::DialogExt;

type Ask = dyn Fn(&str) -> Result<Option<PathBuf>, ApiError> + Send + Sync;

/// Asks the person where to save. Managed state, built in the setup hook from the app's handle,
/// so that commands reach the dialog without being generic over the runtime.
pub struct SaveDialog {
    ask: Box<Ask>,
}

impl std::fmt::Debug for SaveDialog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SaveDialog")
    }
}

impl SaveDialog {
    pub fn new<R: Runtime>(app: AppHandle<R>) -> SaveDialog {
        SaveDialog {
            ask: Box::new(move |suggested_name| {
                let mut dialog = app.dialog().file().set_file_name(suggested_name);
                if let Some(home) = dirs::home_dir() {
                    dialog = dialog.set_directory(home);
                }
                if let Some(window) = app.get_webview_window("main") {
                    dialog = dialog.set_parent(&window);
                }
                // Blocks this thread (a command's, never the main one) until the person answers.
                dialog
                    .blocking_save_file()
                    .map(|chosen| chosen.into_path())
                    .transpose()
                    .map_err(|e| ApiError::internal("read the path chosen in the save dialog", e))
            }),
        }
    }

    /// The path chosen for a file first named `suggested_name` in the home folder; `None` when
    /// the person cancels.
    pub fn ask(&self, suggested_name: &str) -> Result<Option<PathBuf>, ApiError> {
        (self.ask)(suggested_name)
    }
}
