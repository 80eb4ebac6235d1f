//! A stdio server's process: started in a process group of its own (an `npx` server is `npm`,
//! a shell and `node`), from the environment it is given and nothing else, with its standard
//! error drained into a short tail (its standard output is read by `transport.rs`). The group is
//! killed when the process is stopped, and when it is dropped, so no server outlives the set that
//! started it.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::limits::MAX_STDERR_TAIL_BYTES;

/// What a stdio server is started with.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub program: String,
    pub args: Vec<String>,
    /// Every variable it gets (the environment it starts from, then its own).
    pub environment: Vec<(OsString, OsString)>,
    pub cwd: Option<String>,
}

/// A running stdio server.
#[derive(Debug)]
pub(crate) struct ServerProcess {
    child: Child,
    group: Option<Pid>,
    stderr: Arc<StderrTail>,
}

impl ServerProcess {
    /// Starts `launch`; returns the process and its standard output and input.
    pub fn spawn(launch: &Launch) -> io::Result<(ServerProcess, ChildStdout, ChildStdin)> {
        let mut command = Command::new(&launch.program);
        command
            .args(&launch.args)
            .env_clear()
            .envs(launch.environment.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(cwd) = &launch.cwd {
            command.current_dir(cwd);
        }
        let mut child = command.spawn()?;
        let group = child.id().and_then(|id| i32::try_from(id).ok()).map(Pid::from_raw);
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(io::Error::other("the server's standard input or output was not opened"));
        };
        let stderr = Arc::new(StderrTail::default());
        if let Some(mut pipe) = child.stderr.take() {
            let tail = Arc::clone(&stderr);
            // Drained to the end, so a server that writes much to its standard error never
            // blocks on a full pipe; only the end is kept.
            tokio::spawn(async move {
                let mut buffer = [0u8; 4096];
                while let Ok(n) = pipe.read(&mut buffer).await {
                    if n == 0 {
                        break;
                    }
                    tail.push(&buffer[..n]);
                }
                tail.closed.send_replace(true);
            });
        }
        Ok((ServerProcess { child, group, stderr }, stdout, stdin))
    }

    /// The end of what it wrote to its standard error, as text.
    pub fn stderr_tail(&self) -> String {
        self.stderr.text()
    }

    /// Waits up to `within` for its standard error to be read to the end (a process that
    /// exited has closed it, unless a child of its still holds it).
    pub async fn stderr_closed_within(&self, within: Duration) {
        let mut closed = self.stderr.closed.subscribe();
        let _ = tokio::time::timeout(within, closed.wait_for(|closed| *closed)).await;
    }

    /// How it ended, waiting up to `within` for it to end.
    pub async fn exit_within(&mut self, within: Duration) -> Option<ExitStatus> {
        tokio::time::timeout(within, self.child.wait()).await.ok().and_then(Result::ok)
    }

    /// Its process group, to kill from code that cannot wait.
    pub fn group(&self) -> Option<Pid> {
        self.group
    }

    /// Kills its whole process group at once.
    pub fn kill_now(&self) {
        if let Some(group) = self.group {
            let _ = killpg(group, Signal::SIGKILL);
        }
    }

    /// Asks it to exit (`SIGTERM` to its group), waits up to `grace`, then kills the group.
    pub async fn stop(mut self, grace: Duration) {
        if let Some(group) = self.group
            && killpg(group, Signal::SIGTERM) != Err(Errno::ESRCH)
        {
            let _ = tokio::time::timeout(grace, self.child.wait()).await;
        }
        self.kill_now();
        let _ = self.child.wait().await;
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill_now();
    }
}

/// The end of a server's standard error, and whether it was read to its end.
#[derive(Debug)]
struct StderrTail {
    tail: Mutex<VecDeque<u8>>,
    /// Whether its beginning was let go.
    cut: std::sync::atomic::AtomicBool,
    closed: tokio::sync::watch::Sender<bool>,
}

impl Default for StderrTail {
    fn default() -> StderrTail {
        StderrTail {
            tail: Mutex::default(),
            cut: std::sync::atomic::AtomicBool::new(false),
            closed: tokio::sync::watch::Sender::new(false),
        }
    }
}

impl StderrTail {
    fn push(&self, bytes: &[u8]) {
        let mut tail = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        tail.extend(bytes);
        let over = tail.len().saturating_sub(MAX_STDERR_TAIL_BYTES);
        if over > 0 {
            tail.drain(..over);
            self.cut.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    fn text(&self) -> String {
        let tail = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        let bytes: Vec<u8> = tail.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        if self.cut.load(std::sync::atomic::Ordering::Relaxed) && !text.is_empty() {
            format!("…{text}")
        } else {
            text.to_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stderr_tail_keeps_the_end() {
        let tail = StderrTail::default();
        tail.push(&vec![b'a'; MAX_STDERR_TAIL_BYTES]);
        tail.push(b"the end");
        let text = tail.text();
        assert!(text.ends_with("the end"), "{text}");
        assert!(text.starts_with('…'), "it says its beginning was let go");
        assert_eq!(text.len(), MAX_STDERR_TAIL_BYTES + "…".len());
    }
}
