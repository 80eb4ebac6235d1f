//! Where Flame keeps its data: `$FLAME_HOME` if set, else the platform's data directory.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::{ApiError, ErrorCode};

/// The name of the database file inside the data directory.
const DATABASE_FILE: &str = "flame.db";
/// The folder for Flame's own diagnostic logs (not the frames' logs).
const DIAGNOSTICS_DIR: &str = "diagnostics";

/// Where the data directory setting came from, so a person can tell why Flame uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum DataDirSource {
    /// The `FLAME_HOME` environment variable (or the command line's `--home`).
    FlameHome,
    /// The platform's data directory, such as `~/.local/share/flame` on Linux.
    Platform,
}

/// Flame's data directory, absolute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    path: PathBuf,
    source: DataDirSource,
}

impl DataDir {
    /// Resolves the data directory from the process environment: `FLAME_HOME`, the platform's
    /// data directory and the current directory (for a relative `FLAME_HOME`).
    pub fn from_env() -> Result<DataDir, ApiError> {
        let current_dir = std::env::current_dir().ok();
        DataDir::resolve(
            std::env::var_os("FLAME_HOME").as_deref(),
            platform_data_dir().as_deref(),
            current_dir.as_deref(),
        )
    }

    /// Resolves the data directory from explicit inputs: `flame_home` wins when it is set and
    /// not empty (relative paths are taken from `current_dir`), else `<platform_data_dir>/flame`.
    pub fn resolve(
        flame_home: Option<&OsStr>,
        platform_data_dir: Option<&Path>,
        current_dir: Option<&Path>,
    ) -> Result<DataDir, ApiError> {
        if let Some(home) = flame_home.filter(|home| !home.is_empty()) {
            let home = Path::new(home);
            let path = match (home.is_absolute(), current_dir) {
                (true, _) => home.to_path_buf(),
                (false, Some(cwd)) => cwd.join(home),
                (false, None) => {
                    return Err(ApiError::new(
                        ErrorCode::DataDirUnusable,
                        format!(
                            "FLAME_HOME is the relative path {} and the current directory is unknown; use an absolute path",
                            home.display()
                        ),
                    ));
                }
            };
            return Ok(DataDir { path, source: DataDirSource::FlameHome });
        }
        match platform_data_dir {
            Some(base) => Ok(DataDir { path: base.join("flame"), source: DataDirSource::Platform }),
            None => Err(ApiError::new(
                ErrorCode::DataDirUnusable,
                "this system reports no data directory for applications; set FLAME_HOME to a folder Flame may use",
            )),
        }
    }

    /// The data directory itself.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the setting came from.
    pub fn source(&self) -> DataDirSource {
        self.source
    }

    /// The SQLite database.
    pub fn database_path(&self) -> PathBuf {
        self.path.join(DATABASE_FILE)
    }

    /// The folder for Flame's rotating diagnostic logs.
    pub fn diagnostics_dir(&self) -> PathBuf {
        self.path.join(DIAGNOSTICS_DIR)
    }

    /// Creates the directory (and its parents) if it does not exist yet.
    pub fn create(&self) -> Result<(), ApiError> {
        let unusable = |why: String| {
            ApiError::new(
                ErrorCode::DataDirUnusable,
                format!(
                    "cannot use {} as Flame's data directory: {why}; set FLAME_HOME to a folder you can write",
                    self.path.display()
                ),
            )
        };
        if self.path.exists() && !self.path.is_dir() {
            return Err(unusable("it is a file, not a folder".to_owned()));
        }
        fs::create_dir_all(&self.path).map_err(|e| unusable(e.to_string()))
    }
}

/// The platform's per-user data directory: `$XDG_DATA_HOME` or `~/.local/share` on Linux,
/// `~/Library/Application Support` on macOS, the roaming AppData folder on Windows.
fn platform_data_dir() -> Option<PathBuf> {
    dirs::data_dir()
}

/// Where Claude Code, Codex and OpenCode keep their sessions for the person running Flame, from
/// the process environment (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `XDG_DATA_HOME`, the home
/// folder); with [`DataDir::from_env`], the one place the facade reads the environment.
pub fn agent_homes_from_env() -> flame_follow::AgentHomes {
    let home = dirs::home_dir().unwrap_or_default();
    flame_follow::AgentHomes::resolve(&home, |name| std::env::var(name).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flame_home_wins_over_the_platform_directory() {
        let dir = DataDir::resolve(
            Some(OsStr::new("/srv/flame")),
            Some(Path::new("/home/ada/.local/share")),
            None,
        )
        .unwrap();
        assert_eq!(dir.path(), Path::new("/srv/flame"));
        assert_eq!(dir.source(), DataDirSource::FlameHome);
    }

    #[test]
    fn an_empty_flame_home_counts_as_unset() {
        let dir =
            DataDir::resolve(Some(OsStr::new("")), Some(Path::new("/home/ada/.local/share")), None)
                .unwrap();
        assert_eq!(dir.path(), Path::new("/home/ada/.local/share/flame"));
        assert_eq!(dir.source(), DataDirSource::Platform);
    }

    #[test]
    fn a_relative_flame_home_is_taken_from_the_current_directory() {
        let dir =
            DataDir::resolve(Some(OsStr::new("data")), None, Some(Path::new("/work/p"))).unwrap();
        assert_eq!(dir.path(), Path::new("/work/p/data"));
    }

    #[test]
    fn a_relative_flame_home_without_a_current_directory_is_refused() {
        let err = DataDir::resolve(Some(OsStr::new("data")), None, None).unwrap_err();
        assert_eq!(err.code, ErrorCode::DataDirUnusable);
        assert!(err.message.contains("FLAME_HOME"), "{}", err.message);
    }

    #[test]
    fn no_setting_and_no_platform_directory_is_a_clear_error() {
        let err = DataDir::resolve(None, None, None).unwrap_err();
        assert_eq!(err.code, ErrorCode::DataDirUnusable);
        assert!(err.message.contains("set FLAME_HOME"), "{}", err.message);
    }

    #[test]
    fn files_live_inside_the_directory() {
        let dir = DataDir::resolve(Some(OsStr::new("/d")), None, None).unwrap();
        assert_eq!(dir.database_path(), Path::new("/d/flame.db"));
        assert_eq!(dir.diagnostics_dir(), Path::new("/d/diagnostics"));
    }
}
