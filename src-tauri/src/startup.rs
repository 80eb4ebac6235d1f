//! The outcome of opening Flame when the app starts, shared by every command.

use flame_api::{ApiError, DataDir, Flame};

/// Either an open [`Flame`] or the reason it could not be opened.
#[derive(Debug)]
pub struct Startup(Result<Flame, ApiError>);

impl Startup {
    /// Opens Flame on `data_dir`, keeping any failure (of resolving or of opening) for the UI.
    pub fn open(data_dir: Result<DataDir, ApiError>) -> Startup {
        Startup(data_dir.and_then(Flame::open))
    }

    /// The open Flame, or the startup error for a command to return.
    pub fn flame(&self) -> Result<&Flame, ApiError> {
        self.0.as_ref().map_err(Clone::clone)
    }
}
