//! The system's save and folder dialogs, opened from Rust so that the webview needs no dialog
//! permission.

use std::path::PathBuf;

use flame_api::ApiError;
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_dialog::{DialogExt, FileDialogBuilder};

type AskSave = dyn Fn(&str) -> Result<Option<PathBuf>, ApiError> + Send + Sync;
type AskFolder = dyn Fn(&str) -> Result<Option<PathBuf>, ApiError> + Send + Sync;

/// Asks the person where to save, or which folder. Managed state, built in the setup hook from
/// the app's handle, so that commands reach the dialogs without being generic over the runtime.
pub struct Dialogs {
    save: Box<AskSave>,
    folder: Box<AskFolder>,
}

impl std::fmt::Debug for Dialogs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Dialogs")
    }
}

/// A file dialog over the main window, starting in the home folder.
fn dialog_in_home<R: Runtime>(app: &AppHandle<R>) -> FileDialogBuilder<R> {
    let mut dialog = app.dialog().file();
    if let Some(home) = dirs::home_dir() {
        dialog = dialog.set_directory(home);
    }
    if let Some(window) = app.get_webview_window("main") {
        dialog = dialog.set_parent(&window);
    }
    dialog
}

impl Dialogs {
    pub fn new<R: Runtime>(app: AppHandle<R>) -> Dialogs {
        let folder_app = app.clone();
        Dialogs {
            // Both block the calling thread (a command's, never the main one) until the person
            // answers.
            save: Box::new(move |suggested_name| {
                dialog_in_home(&app)
                    .set_file_name(suggested_name)
                    .blocking_save_file()
                    .map(|chosen| chosen.into_path())
                    .transpose()
                    .map_err(|e| ApiError::internal("read the path chosen in the save dialog", e))
            }),
            folder: Box::new(move |title| {
                dialog_in_home(&folder_app)
                    .set_title(title)
                    .blocking_pick_folder()
                    .map(|chosen| chosen.into_path())
                    .transpose()
                    .map_err(|e| ApiError::internal("read the folder chosen in the dialog", e))
            }),
        }
    }

    /// The path chosen for a file first named `suggested_name` in the home folder; `None` when
    /// the person cancels.
    pub fn save_path(&self, suggested_name: &str) -> Result<Option<PathBuf>, ApiError> {
        (self.save)(suggested_name)
    }

    /// The folder chosen in a dialog titled `title`; `None` when the person cancels.
    pub fn folder(&self, title: &str) -> Result<Option<PathBuf>, ApiError> {
        (self.folder)(title)
    }
}
