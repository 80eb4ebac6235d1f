//! `run_command`: `bash -c` in the workspace folder, in a process group of its own so the whole
//! group can be killed — on timeout, on Stop, when the command's shell exits (background jobs
//! do not outlive it), and when the run is abandoned. Output (stdout and stderr through one pipe,
//! interleaved as a terminal shows them) streams whole to the caller's log; the reply keeps only
//! a head and a tail. A command runs in the sandbox ([`crate::Sandbox`]) or, where the caller
//! decides so ([`Confinement::None`]), with the person's full rights.

use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::{Environment, Sandbox, SandboxRules, Touched, Workspace, WorkspaceError};

/// How long a command may run when no timeout is asked for.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// The longest timeout a command may ask for.
pub const MAX_COMMAND_TIMEOUT: Duration = Duration::from_secs(600);

/// The start of a command's output kept for the reply.
pub const OUTPUT_HEAD_BYTES: usize = 15 * 1024;

/// The end of a command's output kept for the reply.
pub const OUTPUT_TAIL_BYTES: usize = 15 * 1024;

/// How long the group gets between SIGTERM and SIGKILL.
const TERMINATE_GRACE: Duration = Duration::from_millis(500);

/// The most of a command's whole output written to its log (the file the window offers); past
/// it the output is still read, counted and kept as the reply's tail, but no longer written, and
/// the reply says so. `yes` writes about 430 MB a second: without a cap, a command at the default
/// timeout could fill the data folder with 50 GB.
pub const MAX_COMMAND_LOG_BYTES: u64 = 64 * 1024 * 1024;

/// How long output is still read after the group is killed, for processes that left the group
/// (`setsid`) and keep the pipe open; past it the run ends without them. With
/// [`TERMINATE_GRACE`] and [`POLL_INTERVAL`] it bounds how far past its timeout a run can end:
/// about 1.6 s at most, whatever the command does with its output.
const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// How often a running command checks for Stop and its deadline.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// The first wait for the shell's exit once its output has closed, doubled at each look up to
/// [`POLL_INTERVAL`]: a shell that closed its output has nearly always just exited.
const FIRST_IDLE_POLL: Duration = Duration::from_millis(1);

/// The size of one read from the output pipe; with [`PIPE_CHUNKS_IN_FLIGHT`] it bounds the
/// output held between the reading thread and the caller.
const PIPE_CHUNK_BYTES: usize = 64 * 1024;
const PIPE_CHUNKS_IN_FLIGHT: usize = 4;

/// A command to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRequest {
    /// The script given to `bash -c`.
    pub command: String,
    /// `None` for [`DEFAULT_COMMAND_TIMEOUT`]; at most [`MAX_COMMAND_TIMEOUT`].
    pub timeout: Option<Duration>,
}

/// Where a command runs: the caller's decision, never a default.
#[derive(Debug, Clone, Copy)]
pub enum Confinement<'a> {
    /// With the person's full rights: everything their account can do.
    None,
    /// In `sandbox`, under these rules; a sandbox that cannot start is an error, never a run
    /// without it.
    Sandbox(&'a Sandbox, &'a SandboxRules),
}

/// Stops a running command from another thread (the person's Stop). Cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct CancelHandle(Arc<AtomicBool>);

impl CancelHandle {
    pub fn new() -> CancelHandle {
        CancelHandle::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// How the command's shell ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

/// Why the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The shell exited on its own.
    Exited,
    /// The timeout passed and the group was killed.
    TimedOut,
    /// Stop was asked for and the group was killed.
    Cancelled,
}

/// What a command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutcome {
    pub command: String,
    pub exit: Exit,
    pub ending: Ending,
    pub timeout: Duration,
    /// The first [`OUTPUT_HEAD_BYTES`] of the output.
    pub head: Vec<u8>,
    /// The last [`OUTPUT_TAIL_BYTES`] after the head (empty if the output fit in the head).
    pub tail: Vec<u8>,
    /// Bytes of output in all (head, tail and what was cut between them).
    pub output_bytes: u64,
    /// Bytes of output written to the log: all of it, or [`MAX_COMMAND_LOG_BYTES`].
    pub logged_bytes: u64,
    /// Whether output was still arriving from processes that left the group when the run
    /// stopped reading.
    pub output_abandoned: bool,
    /// Why the log stopped receiving output, if writing to it failed; the command ran on.
    pub log_error: Option<String>,
}

impl CommandOutcome {
    /// Bytes cut between the head and the tail.
    pub fn cut_bytes(&self) -> u64 {
        self.output_bytes - self.head.len() as u64 - self.tail.len() as u64
    }

    /// The text sent to the model: the output's head and tail, then how it ended.
    pub fn render(&self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        let cut = self.cut_bytes();
        if cut > 0 {
            out.push_str(&format!("\n[… {cut} bytes of output cut …]\n"));
        }
        out.push_str(&String::from_utf8_lossy(&self.tail));
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        let ended = match (self.ending, self.exit) {
            (Ending::TimedOut, _) => {
                format!("[timed out after {} s; the command was killed]", self.timeout.as_secs())
            }
            (Ending::Cancelled, _) => "[stopped by the person; the command was killed]".to_owned(),
            (Ending::Exited, Exit::Code(code)) => format!("[exit code {code}]"),
            (Ending::Exited, Exit::Signal(signal)) => format!("[killed by signal {signal}]"),
        };
        out.push_str(&ended);
        if self.output_abandoned {
            out.push_str("\n[processes that left the command's group still held its output; they were not waited for]");
        }
        if self.log_error.is_none() && self.logged_bytes < self.output_bytes {
            out.push_str(&format!(
                "\n[the whole output was {} bytes; only its first {} bytes were kept on disk]",
                self.output_bytes, self.logged_bytes
            ));
        }
        out
    }

    /// A command may read or change any file; what it touched is not known.
    pub fn touched(&self) -> Touched {
        Touched::Unknown
    }
}

/// Keeps the head and the tail of a stream of output, counting the rest.
#[derive(Debug, Default)]
struct HeadTail {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    total: u64,
}

impl HeadTail {
    fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = OUTPUT_HEAD_BYTES - self.head.len();
        if room > 0 {
            let taken = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..taken]);
            bytes = &bytes[taken..];
        }
        if bytes.len() >= OUTPUT_TAIL_BYTES {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - OUTPUT_TAIL_BYTES..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(OUTPUT_TAIL_BYTES);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    /// Bytes held.
    fn held(&self) -> usize {
        self.head.len() + self.tail.len()
    }
}

/// Kills the process group when dropped, so an abandoned run (a panic, an early return) leaves
/// nothing behind.
#[derive(Debug)]
struct GroupGuard {
    group: Pid,
    killed: bool,
}

impl GroupGuard {
    /// SIGTERM to the group, SIGKILL after [`TERMINATE_GRACE`] if any of it is left. The shell
    /// (our child) is reaped meanwhile, so it does not count as left.
    fn kill(&mut self, child: &mut Child) {
        if self.killed {
            return;
        }
        self.killed = true;
        if killpg(self.group, Signal::SIGTERM) == Err(Errno::ESRCH) {
            return;
        }
        let start = Instant::now();
        while start.elapsed() < TERMINATE_GRACE {
            let _ = child.try_wait();
            if killpg(self.group, None) == Err(Errno::ESRCH) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = killpg(self.group, Signal::SIGKILL);
        // The shell leads the group, so this is the same signal again; it is sent on its own
        // too so that waiting for the shell can never hang should the group signal fail.
        let _ = child.kill();
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if !self.killed {
            let _ = killpg(self.group, Signal::SIGKILL);
        }
    }
}

enum Chunk {
    Data(Vec<u8>),
    End,
}

impl Workspace {
    /// Runs `request.command` with `bash -c` in the workspace folder, confined as `confinement`
    /// says, with `environment` scrubbed (see [`crate::is_scrubbed_variable`]), until it exits,
    /// its timeout passes or `cancel` is cancelled; then its process group is killed (in the
    /// sandbox, the group is `bwrap`'s, and the sandbox's processes die with it). The whole
    /// output is written to `log` as it arrives.
    pub fn run_command(
        &self,
        request: &CommandRequest,
        confinement: Confinement<'_>,
        environment: &Environment,
        cancel: &CancelHandle,
        log: &mut dyn Write,
    ) -> Result<CommandOutcome, WorkspaceError> {
        if request.command.trim().is_empty() {
            return Err(WorkspaceError::EmptyCommand);
        }
        let timeout = request.timeout.unwrap_or(DEFAULT_COMMAND_TIMEOUT);
        if timeout > MAX_COMMAND_TIMEOUT {
            return Err(WorkspaceError::TimeoutTooLong {
                asked_secs: timeout.as_secs(),
                limit_secs: MAX_COMMAND_TIMEOUT.as_secs(),
            });
        }
        if timeout < Duration::from_secs(1) {
            return Err(WorkspaceError::TimeoutZero);
        }
        let io = |action: &'static str| move |e| WorkspaceError::io(action, "the command", e);

        let mut command = match confinement {
            Confinement::None => Command::new("bash"),
            Confinement::Sandbox(sandbox, rules) => {
                let mut bwrap = sandbox.command(self.root(), rules).map_err(|unavailable| {
                    WorkspaceError::SandboxUnavailable { reason: unavailable.reason.clone() }
                })?;
                bwrap.arg("bash");
                bwrap
            }
        };
        let (reader, writer) = std::io::pipe().map_err(io("make a pipe for"))?;
        command
            .arg("-c")
            .arg(&request.command)
            .current_dir(self.root())
            .env_clear()
            .envs(environment.scrubbed().map(|(name, value)| (name, value)))
            .stdin(Stdio::null())
            .stdout(writer.try_clone().map_err(io("make a pipe for"))?)
            .stderr(writer)
            .process_group(0);
        let mut child = command.spawn().map_err(io("start"))?;
        // Dropping the command drops our copies of the pipe's writing end, so the reader sees
        // the end of output once the group's processes have closed theirs.
        drop(command);
        let mut guard = GroupGuard { group: Pid::from_raw(child.id() as i32), killed: false };
        let chunks = spawn_reader(reader);

        let deadline = Instant::now() + timeout;
        let mut kept = HeadTail::default();
        let mut logged = 0u64;
        let mut log_error = None;
        let mut ending = None;
        let mut status: Option<ExitStatus> = None;
        let mut drain_until: Option<Instant> = None;
        let mut output_ended = false;
        let mut idle = FIRST_IDLE_POLL;
        let output_abandoned;
        loop {
            // Once the pipe has closed there is nothing to read, but the deadline and Stop still
            // hold: a command may close its output and run on (`exec >/dev/null; sleep 25`).
            // The shell has usually just exited, and is waited for in a millisecond or two; one
            // that runs on is looked at less often, down to every `POLL_INTERVAL`.
            if output_ended {
                std::thread::sleep(idle);
                idle = (idle * 2).min(POLL_INTERVAL);
            } else {
                match chunks.recv_timeout(POLL_INTERVAL) {
                    Ok(Chunk::Data(data)) => {
                        kept.push(&data);
                        let room = MAX_COMMAND_LOG_BYTES - logged;
                        let taken =
                            &data[..data.len().min(usize::try_from(room).unwrap_or(usize::MAX))];
                        if log_error.is_none() && !taken.is_empty() {
                            match log.write_all(taken) {
                                Ok(()) => logged += taken.len() as u64,
                                Err(e) => log_error = Some(e.to_string()),
                            }
                        }
                    }
                    Ok(Chunk::End) | Err(RecvTimeoutError::Disconnected) => output_ended = true,
                    Err(RecvTimeoutError::Timeout) => {}
                }
            }
            if status.is_none() {
                status = child.try_wait().map_err(io("wait for"))?;
            }
            if ending.is_none() {
                if status.is_some() {
                    ending = Some(Ending::Exited);
                } else if cancel.is_cancelled() {
                    ending = Some(Ending::Cancelled);
                } else if Instant::now() >= deadline {
                    ending = Some(Ending::TimedOut);
                }
                if ending.is_some() {
                    // Background jobs of an exited shell go with it, as on Stop and timeout.
                    guard.kill(&mut child);
                    drain_until = Some(Instant::now() + DRAIN_GRACE);
                }
            }
            let drained = drain_until.is_some_and(|until| Instant::now() >= until);
            if (output_ended && ending.is_some()) || drained {
                output_abandoned = !output_ended;
                if status.is_none() {
                    // The group was killed (SIGKILL at the latest), so this wait is short.
                    status = Some(child.wait().map_err(io("wait for"))?);
                }
                break;
            }
        }
        guard.kill(&mut child);
        let _ = log.flush();
        debug_assert!(kept.held() <= OUTPUT_HEAD_BYTES + OUTPUT_TAIL_BYTES);

        let status = status.unwrap_or_else(|| ExitStatus::from_raw(0));
        let exit = match (status.code(), status.signal()) {
            (Some(code), _) => Exit::Code(code),
            (None, Some(signal)) => Exit::Signal(signal),
            (None, None) => Exit::Code(-1),
        };
        Ok(CommandOutcome {
            command: request.command.clone(),
            exit,
            ending: ending.unwrap_or(Ending::Exited),
            timeout,
            head: kept.head,
            tail: kept.tail.into(),
            output_bytes: kept.total,
            logged_bytes: logged,
            output_abandoned,
            log_error,
        })
    }
}

/// Reads the pipe on a thread of its own, so the caller can watch the deadline and Stop while
/// waiting for output. The channel is bounded: a command that writes faster than the log takes
/// is held back by the pipe, not buffered here.
fn spawn_reader(mut reader: std::io::PipeReader) -> Receiver<Chunk> {
    let (sender, receiver) = sync_channel(PIPE_CHUNKS_IN_FLIGHT);
    std::thread::spawn(move || {
        let mut buffer = vec![0u8; PIPE_CHUNK_BYTES];
        loop {
            match reader.read(&mut buffer) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Ok(0) | Err(_) => break,
                Ok(read) => {
                    if sender.send(Chunk::Data(buffer[..read].to_vec())).is_err() {
                        return;
                    }
                }
            }
        }
        let _ = sender.send(Chunk::End);
    });
    receiver
}
