//! Where saved API keys are kept. The system keyring (the Secret Service on Linux, the Keychain
//! on macOS, the Credential Manager on Windows) when one answers; else Flame's settings file,
//! which only its owner may read and which is replaced whole (see [`crate::private_file`]).
//! Which of the two is in use is decided at run time by [`KeyStore::detect`], and the settings
//! the window is shown say where each key is ([`KeyLocation`]).

use std::path::Path;

use flame_api::ApiError;
use flame_models::ProviderKind;
use serde::Serialize;

/// The keyring service Flame's keys are saved under.
const KEYRING_SERVICE: &str = "flame";

/// Where saved keys are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyStore {
    /// The system keyring, one entry per provider and settings file.
    Keyring,
    /// The settings file itself.
    SettingsFile,
}

/// Where a provider's key is, as the settings window says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum KeyLocation {
    /// The system keyring.
    Keyring,
    /// A file only its owner may read.
    File { path: String },
    /// An environment variable, which is used before a saved key.
    Environment { variable: String },
}

impl KeyStore {
    /// The system keyring if it answers, else the settings file at `settings_path`. Reading a
    /// key that may not exist is the test: a keyring that can say "no such key" can keep one.
    pub fn detect(settings_path: &Path) -> KeyStore {
        let answer =
            keyring_entry(settings_path, ProviderKind::Anthropic).and_then(|e| e.get_password());
        match answer {
            Ok(_) | Err(keyring::Error::NoEntry | keyring::Error::Ambiguous(_)) => {
                KeyStore::Keyring
            }
            Err(err) => {
                // Asked at every read of the settings, so not worth more than a debug line.
                tracing::debug!(
                    "no system keyring answers ({err}); keys are kept in {}",
                    settings_path.display()
                );
                KeyStore::SettingsFile
            }
        }
    }

    /// Where this store keeps keys for the settings at `settings_path`.
    pub fn location(self, settings_path: &Path) -> KeyLocation {
        match self {
            KeyStore::Keyring => KeyLocation::Keyring,
            KeyStore::SettingsFile => {
                KeyLocation::File { path: settings_path.display().to_string() }
            }
        }
    }

    /// `kind`'s key from the keyring; `None` from the settings-file store, whose keys are read
    /// with the file.
    pub(crate) fn read(
        self,
        settings_path: &Path,
        kind: ProviderKind,
    ) -> Result<Option<String>, ApiError> {
        if self == KeyStore::SettingsFile {
            return Ok(None);
        }
        match keyring_entry(settings_path, kind).and_then(|e| e.get_password()) {
            Ok(key) => Ok(Some(key)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(err) => Err(ApiError::internal(
                &format!("read the {} key from the system keyring", kind.name()),
                err,
            )),
        }
    }

    /// Saves `kind`'s key in the keyring, or removes it there when `key` is `None`; nothing for
    /// the settings-file store, whose keys are written with the file.
    pub(crate) fn write(
        self,
        settings_path: &Path,
        kind: ProviderKind,
        key: Option<&str>,
    ) -> Result<(), ApiError> {
        if self == KeyStore::SettingsFile {
            return Ok(());
        }
        let entry = keyring_entry(settings_path, kind).map_err(|e| {
            ApiError::internal(&format!("open the {} key in the system keyring", kind.name()), e)
        })?;
        let done = match key {
            Some(key) => entry.set_password(key),
            None => match entry.delete_credential() {
                Err(keyring::Error::NoEntry) => Ok(()),
                other => other,
            },
        };
        done.map_err(|e| {
            ApiError::internal(&format!("save the {} key in the system keyring", kind.name()), e)
        })
    }
}

/// The keyring entry of `kind`'s key for the settings at `settings_path`. The path is part of
/// the entry's name, so two settings files (a test's, a second profile's) never share or
/// overwrite each other's keys.
fn keyring_entry(settings_path: &Path, kind: ProviderKind) -> keyring::Result<keyring::Entry> {
    let user = format!("{} key for {}", provider_id(kind), settings_path.display());
    keyring::Entry::new(KEYRING_SERVICE, &user)
}

fn provider_id(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "anthropic",
        ProviderKind::Openai => "openai",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_file_store_names_its_file() {
        let path = Path::new("/home/someone/.config/flame/settings.json");
        assert_eq!(
            KeyStore::SettingsFile.location(path),
            KeyLocation::File { path: path.display().to_string() }
        );
        assert_eq!(KeyStore::Keyring.location(path), KeyLocation::Keyring);
    }

    /// Runs against a real Secret Service when the session has one (run the tests under
    /// `dbus-run-session` with `gnome-keyring-daemon --unlock --components=secrets` to get one);
    /// without one it says it was skipped.
    #[test]
    #[allow(clippy::print_stderr, reason = "a skipped run says so in the test output")]
    fn keys_are_saved_read_and_removed_in_the_system_keyring() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        if KeyStore::detect(&path) != KeyStore::Keyring {
            eprintln!("skipped: no Secret Service (no system keyring answers in this session)");
            return;
        }
        let store = KeyStore::Keyring;
        let kind = ProviderKind::Openai;
        assert_eq!(store.read(&path, kind).unwrap(), None);
        store.write(&path, kind, Some("sk-keyring-SENTINEL-77aa")).unwrap();
        assert_eq!(store.read(&path, kind).unwrap().as_deref(), Some("sk-keyring-SENTINEL-77aa"));
        let other = dir.path().join("other").join("settings.json");
        assert_eq!(store.read(&other, kind).unwrap(), None, "each settings file has its own keys");
        store.write(&path, kind, None).unwrap();
        assert_eq!(store.read(&path, kind).unwrap(), None);
        store.write(&path, kind, None).unwrap();
    }
}
