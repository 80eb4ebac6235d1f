//! File-system notifications of the folders that hold followed sessions (inotify on Linux,
//! through the `notify` crate). The watcher's thread sends what changed into the caller's
//! channel, so a follower waits on that channel and does nothing between changes: following many
//! idle sessions costs no processor time.

use std::path::PathBuf;
use std::sync::mpsc::Sender;

use notify::{EventKind, RecursiveMode, Watcher as _};

/// What a follower's channel carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchSignal {
    /// These paths were written, created, removed or renamed.
    Changed(Vec<PathBuf>),
    /// The followed sessions changed (one was followed or left): read them again from the store.
    Refresh,
    /// The follower should end.
    Stop,
    /// The notifications failed (the system's limit on watches was reached, say).
    Failed(String),
}

/// Watches folders, not recursively, and sends their changes to a channel.
#[derive(Debug)]
pub struct Watcher {
    inner: notify::RecommendedWatcher,
    watched: Vec<PathBuf>,
}

impl Watcher {
    /// A watcher that sends to `signals`; nothing is watched yet.
    pub fn new(signals: Sender<WatchSignal>) -> Result<Watcher, String> {
        let inner = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let signal = match event {
                // Reads (Flame's own among them) change nothing: reacting to them would read again.
                Ok(event) if matches!(event.kind, EventKind::Access(_)) => return,
                Ok(event) => WatchSignal::Changed(event.paths),
                Err(err) => WatchSignal::Failed(err.to_string()),
            };
            // The follower is gone when its channel is; there is no one left to tell.
            let _ = signals.send(signal);
        })
        .map_err(|err| format!("cannot watch files for changes: {err}"))?;
        Ok(Watcher { inner, watched: Vec::new() })
    }

    /// Watches exactly `folders` (those that exist; a folder that appears later is watched
    /// once a change in the folder above it is read and this is called again). Returns the
    /// folders it began to watch, and what could not be watched.
    pub fn watch_only(&mut self, folders: &[PathBuf]) -> (Vec<PathBuf>, Vec<String>) {
        let mut problems = Vec::new();
        let mut added = Vec::new();
        let keep: Vec<PathBuf> = folders.iter().filter(|f| f.is_dir()).cloned().collect();
        for gone in self.watched.iter().filter(|w| !keep.contains(w)) {
            // A folder that was deleted is no longer watched anyway.
            let _ = self.inner.unwatch(gone);
        }
        self.watched.retain(|w| keep.contains(w));
        for folder in keep {
            if self.watched.contains(&folder) {
                continue;
            }
            match self.inner.watch(&folder, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.watched.push(folder.clone());
                    added.push(folder);
                }
                Err(err) => problems.push(format!("cannot watch {}: {err}", folder.display())),
            }
        }
        (added, problems)
    }

    /// The folders watched now.
    pub fn watched(&self) -> &[PathBuf] {
        &self.watched
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_write_in_a_watched_folder_is_sent_and_a_read_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "one\n").unwrap();
        let (tx, rx) = mpsc::channel();
        let mut watcher = Watcher::new(tx).unwrap();
        assert_eq!(
            watcher.watch_only(&[dir.path().to_owned()]),
            (vec![dir.path().to_owned()], vec![])
        );
        std::fs::read(&path).unwrap();
        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"two\n").unwrap();
        let signal = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(
            matches!(&signal, WatchSignal::Changed(paths) if paths.contains(&path)),
            "{signal:?}"
        );
    }
}
