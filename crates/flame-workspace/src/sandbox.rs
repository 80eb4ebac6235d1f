//! The sandbox commands run in: bubblewrap (`bwrap`, Debian's `bubblewrap` package), as Claude
//! Code's sandbox runtime and Codex's Linux sandbox use it.
//!
//! Inside, the whole file system is mounted read-only but the workspace folder, which is writable
//! except its `.git` (the person's repository is never written: a command that must commit asks to
//! leave the sandbox). `/tmp` is a fresh, empty, private folder that goes with the command, and
//! `/proc` shows only the sandbox's own processes, so no command reads another process's
//! environment there. Flame's own folders (the data directory, the settings' folder: the caller's
//! [`SandboxRules::hidden`]) and the person's keyring (`~/.local/share/keyrings` and KWallet's
//! folder, the session's runtime folder with the D-Bus socket, any other D-Bus socket the
//! environment names) are covered by empty read-only folders. There is no network unless the rules
//! allow it (a network namespace of its own, with only a loopback nobody else listens on); the
//! capabilities a root account would keep are dropped; the command runs in a session of its own,
//! so it cannot push keystrokes into the terminal Flame was started from; and every process of the
//! sandbox dies with the `bwrap` that leads it, which is what the command's process group holds.
//!
//! What is hidden comes from the [`Environment`] passed in (`HOME`, `XDG_DATA_HOME`,
//! `XDG_RUNTIME_DIR`, `DBUS_SESSION_BUS_ADDRESS`, `PATH` to find `bwrap`) and from the caller;
//! nothing is read from the process. Whether the sandbox starts here (a kernel without user
//! namespaces, or no `bwrap`) is found out once, by [`Sandbox::check`], which starts an empty
//! sandbox and keeps the answer. The rules are kept to what these tests show on real folders:
//! `tests/workspace/sandbox.rs`.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::Environment;

/// The program that makes the sandbox, looked for on the environment's `PATH`.
pub const SANDBOX_PROGRAM: &str = "bwrap";

/// How long the check that an empty sandbox starts may take before it counts as failed.
pub const SANDBOX_CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// The most of `bwrap`'s own complaint kept to say why the sandbox cannot start.
pub const MAX_SANDBOX_COMPLAINT_BYTES: usize = 2 * 1024;

/// What a command's sandbox hides besides the keyring, and whether it has the network: the
/// caller's part of the rules, decided per command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxRules {
    /// Folders (or files) the command must not see: Flame's own data and settings. One that does
    /// not exist is left alone.
    pub hidden: Vec<PathBuf>,
    /// Whether the command may reach the network.
    pub network: bool,
}

/// Why commands cannot run in the sandbox on this computer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct SandboxUnavailable {
    pub reason: String,
}

impl SandboxUnavailable {
    fn new(reason: impl Into<String>) -> SandboxUnavailable {
        SandboxUnavailable { reason: reason.into() }
    }
}

/// The sandbox of this computer: where `bwrap` is, what of the person's session it hides, and
/// (once checked) whether it starts. Made from an [`Environment`], without starting anything.
#[derive(Debug)]
pub struct Sandbox {
    program: Result<PathBuf, SandboxUnavailable>,
    /// The keyring's folders and the session bus, from the environment.
    hidden: Vec<PathBuf>,
    /// The environment's `PATH`, which the check's shell is looked for on as a command's is.
    path: Option<OsString>,
    /// Whether the environment names a temporary folder (`TMPDIR`), which inside is `/tmp`.
    temp_dir_named: bool,
    checked: OnceLock<Result<(), SandboxUnavailable>>,
}

impl Sandbox {
    /// The sandbox commands starting from `environment` run in: `bwrap` found on its `PATH`, and
    /// the keyring and session bus its variables name. Nothing is started until [`Sandbox::check`].
    pub fn from_environment(environment: &Environment) -> Sandbox {
        let absolute =
            |name: &str| environment.get(name).map(PathBuf::from).filter(|path| path.is_absolute());
        let program = if cfg!(target_os = "linux") {
            find_program(environment.get("PATH").as_deref().unwrap_or_default()).ok_or_else(|| {
                SandboxUnavailable::new(
                    "bwrap (Debian's bubblewrap package) is not installed, so commands cannot run in a sandbox",
                )
            })
        } else {
            Err(SandboxUnavailable::new("the sandbox needs Linux"))
        };
        let data_home = absolute("XDG_DATA_HOME")
            .or_else(|| absolute("HOME").map(|home| home.join(".local/share")));
        let mut hidden: Vec<PathBuf> = data_home
            .map(|data| vec![data.join("keyrings"), data.join("kwalletd")])
            .unwrap_or_default();
        hidden.extend(absolute("XDG_RUNTIME_DIR"));
        if let Some(address) = environment.get("DBUS_SESSION_BUS_ADDRESS") {
            hidden.extend(bus_socket_paths(&address));
        }
        Sandbox {
            program,
            hidden,
            path: environment.get("PATH").map(OsString::from),
            temp_dir_named: environment.get("TMPDIR").is_some(),
            checked: OnceLock::new(),
        }
    }

    /// Whether the sandbox starts here: the first call starts an empty one (at most
    /// [`SANDBOX_CHECK_TIMEOUT`]) and the answer is kept.
    pub fn check(&self) -> Result<(), &SandboxUnavailable> {
        self.checked.get_or_init(|| self.start_empty()).as_ref().map(|_| ())
    }

    /// The paths of the person's session the sandbox hides, whatever the caller adds.
    pub fn hidden_by_default(&self) -> &[PathBuf] {
        &self.hidden
    }

    /// `bwrap` and its arguments up to the command, for a command in the workspace `root` under
    /// `rules`: the caller appends `bash -c <script>`. Reads the file system to see which of the
    /// hidden paths exist and whether `root` holds a `.git`.
    pub(crate) fn command(
        &self,
        root: &Path,
        rules: &SandboxRules,
    ) -> Result<Command, &SandboxUnavailable> {
        self.check()?;
        let program = self.program.as_ref()?;
        let mut command = Command::new(program);
        command.args(self.arguments(root, rules));
        Ok(command)
    }

    /// The arguments of a sandbox for `root` under `rules`, ending with `--`.
    fn arguments(&self, root: &Path, rules: &SandboxRules) -> Vec<OsString> {
        let mut args = Arguments::default();
        args.push_base(rules.network);
        // Each hidden path as it really is: a link is followed to what it names, and one that
        // does not exist is not there to hide.
        let hidden: Vec<(PathBuf, bool)> = self
            .hidden
            .iter()
            .chain(&rules.hidden)
            .filter_map(|path| {
                let real = std::fs::canonicalize(path).ok()?;
                let is_dir = std::fs::metadata(&real).ok()?.is_dir();
                Some((real, is_dir))
            })
            .collect();
        // Hidden paths inside the workspace are covered after it is mounted, the rest before (a
        // folder that holds the workspace is emptied, and the workspace mounted into it again).
        let (inside, outside): (Vec<_>, Vec<_>) =
            hidden.iter().partition(|(path, _)| path.starts_with(root) && path != root);
        for (path, is_dir) in &outside {
            args.hide(path, *is_dir);
        }
        args.pair("--bind", root, root);
        let git = root.join(".git");
        if std::fs::symlink_metadata(&git).is_ok() {
            args.pair("--ro-bind", &git, &git);
        }
        for (path, is_dir) in &inside {
            args.hide(path, *is_dir);
        }
        for (path, _) in hidden.iter().filter(|(_, is_dir)| *is_dir) {
            args.one("--remount-ro", path);
        }
        if self.temp_dir_named {
            args.flag("--setenv");
            args.flag("TMPDIR");
            args.flag("/tmp");
        }
        args.one("--chdir", root);
        args.flag("--");
        args.0
    }

    /// Starts an empty sandbox running `bash -c true`: whether this kernel lets `bwrap` make its
    /// namespaces, and how it complains when it does not.
    fn start_empty(&self) -> Result<(), SandboxUnavailable> {
        let program = self.program.clone()?;
        let mut args = Arguments::default();
        args.push_base(false);
        args.flag("--");
        let mut command = Command::new(&program);
        command
            .args(args.0)
            .args(["bash", "-c", "true"])
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(path) = &self.path {
            command.env("PATH", path);
        }
        let mut child = command.spawn().map_err(|err| {
            SandboxUnavailable::new(format!("{} cannot be started: {err}", program.display()))
        })?;
        let deadline = Instant::now() + SANDBOX_CHECK_TIMEOUT;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Ok(None) | Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(SandboxUnavailable::new(format!(
                        "an empty sandbox did not start within {} s",
                        SANDBOX_CHECK_TIMEOUT.as_secs()
                    )));
                }
            }
        };
        if status.success() {
            return Ok(());
        }
        let mut complaint = Vec::new();
        if let Some(stderr) = child.stderr.take() {
            let _ = stderr.take(MAX_SANDBOX_COMPLAINT_BYTES as u64).read_to_end(&mut complaint);
        }
        let complaint = String::from_utf8_lossy(&complaint);
        let complaint = complaint.trim();
        Err(SandboxUnavailable::new(format!(
            "the sandbox cannot start here ({}{}); this kernel may not allow user namespaces",
            if complaint.is_empty() { "bwrap failed" } else { complaint },
            status.code().map(|code| format!(", exit code {code}")).unwrap_or_default(),
        )))
    }
}

/// `bwrap`'s arguments, built in order.
#[derive(Default)]
struct Arguments(Vec<OsString>);

impl Arguments {
    fn flag(&mut self, flag: &str) {
        self.0.push(flag.into());
    }

    fn one(&mut self, flag: &str, path: &Path) {
        self.flag(flag);
        self.0.push(path.into());
    }

    fn pair(&mut self, flag: &str, source: &Path, destination: &Path) {
        self.one(flag, source);
        self.0.push(destination.into());
    }

    /// The namespaces and the read-only file system every sandbox starts from.
    fn push_base(&mut self, network: bool) {
        for flag in ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"] {
            self.flag(flag);
        }
        if network {
            self.flag("--share-net");
        }
        self.pair("--ro-bind", Path::new("/"), Path::new("/"));
        self.one("--dev", Path::new("/dev"));
        self.one("--proc", Path::new("/proc"));
        self.one("--tmpfs", Path::new("/tmp"));
    }

    /// Covers `path`: a folder with an empty one (made read-only once everything is mounted), a
    /// file or socket with an empty device.
    fn hide(&mut self, path: &Path, is_dir: bool) {
        if is_dir {
            self.one("--tmpfs", path);
        } else {
            self.pair("--ro-bind", Path::new("/dev/null"), path);
        }
    }
}

/// The first executable `bwrap` on `path`, a `PATH` value.
fn find_program(path: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(OsStr::new(path))
        .filter(|folder| folder.is_absolute())
        .map(|folder| folder.join(SANDBOX_PROGRAM))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

/// The socket files a D-Bus address names (`unix:path=…`, possibly among others separated by
/// `;`, with `%`-escaped bytes); abstract sockets have no file and are out of reach without the
/// network anyway, since they belong to the network namespace.
fn bus_socket_paths(address: &str) -> Vec<PathBuf> {
    address
        .split(';')
        .filter_map(|one| one.strip_prefix("unix:"))
        .flat_map(|pairs| pairs.split(','))
        .filter_map(|pair| pair.strip_prefix("path="))
        .map(|escaped| PathBuf::from(OsStr::from_bytes(&unescape(escaped))))
        .filter(|path| path.is_absolute())
        .collect()
}

/// A D-Bus address value with its `%XX` escapes decoded (a bad escape is kept as written).
fn unescape(value: &str) -> Vec<u8> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|pair| std::str::from_utf8(pair).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn environment(pairs: &[(&str, &str)]) -> Environment {
        Environment::from_variables(pairs.iter().map(|(k, v)| (OsString::from(k), v.into())))
    }

    #[test]
    fn the_keyring_and_the_session_bus_are_found_from_the_environment() {
        let sandbox = Sandbox::from_environment(&environment(&[
            ("HOME", "/home/ada"),
            ("XDG_RUNTIME_DIR", "/run/user/1000"),
            (
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:path=/run/bus%20two,guid=1;unix:abstract=/tmp/dbus-x;tcp:host=h",
            ),
        ]));
        let hidden: Vec<&str> =
            sandbox.hidden_by_default().iter().map(|p| p.to_str().expect("utf-8")).collect();
        assert_eq!(
            hidden,
            [
                "/home/ada/.local/share/keyrings",
                "/home/ada/.local/share/kwalletd",
                "/run/user/1000",
                "/run/bus two",
            ]
        );
        let data_home = Sandbox::from_environment(&environment(&[
            ("HOME", "/home/ada"),
            ("XDG_DATA_HOME", "/data"),
            ("XDG_RUNTIME_DIR", "relative/is/ignored"),
        ]));
        assert_eq!(
            data_home.hidden_by_default(),
            [PathBuf::from("/data/keyrings"), PathBuf::from("/data/kwalletd")]
        );
    }

    #[test]
    fn without_bwrap_on_the_path_the_sandbox_says_it_is_not_installed() {
        let empty = tempfile::tempdir().expect("a folder");
        let path = empty.path().to_str().expect("utf-8").to_owned();
        let sandbox = Sandbox::from_environment(&environment(&[("PATH", &path)]));
        let unavailable = sandbox.check().expect_err("no bwrap");
        assert!(unavailable.reason.contains("bubblewrap"), "{unavailable}");
        // A relative folder on the PATH is not searched: it would depend on the current folder.
        assert_eq!(find_program("bin:."), None);
    }

    #[test]
    fn the_arguments_hide_flame_and_the_keyring_and_keep_git_read_only() {
        let outer = tempfile::tempdir().expect("a folder");
        let real = |p: &Path| std::fs::canonicalize(p).expect("canonical");
        let root = outer.path().join("ws");
        std::fs::create_dir_all(root.join(".git")).expect(".git");
        std::fs::create_dir_all(root.join("cache/keyrings")).expect("a keyring inside");
        let data = outer.path().join("data");
        std::fs::create_dir(&data).expect("data");
        let socket = outer.path().join("bus");
        std::fs::write(&socket, "").expect("a file standing for the socket");
        let (root, data, socket) = (real(&root), real(&data), real(&socket));
        let bus = format!("unix:path={}", socket.display());
        let sandbox = Sandbox::from_environment(&environment(&[
            ("XDG_DATA_HOME", root.join("cache").to_str().expect("utf-8")),
            ("DBUS_SESSION_BUS_ADDRESS", &bus),
            ("TMPDIR", "/var/tmp/someone"),
        ]));
        let rules = SandboxRules {
            hidden: vec![data.clone(), outer.path().join("missing")],
            network: false,
        };
        let args: Vec<String> = sandbox
            .arguments(&root, &rules)
            .iter()
            .map(|a| a.to_str().expect("utf-8").to_owned())
            .collect();
        let at = |wanted: &[String]| {
            args.windows(wanted.len())
                .position(|w| w == wanted)
                .unwrap_or_else(|| panic!("{wanted:?} not in {args:?}"))
        };
        let s = |p: &Path| p.to_str().expect("utf-8").to_owned();
        let s2 = |a: &str, p: &Path| vec![a.to_owned(), s(p)];
        assert_eq!(
            &args[..5],
            ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        );
        assert!(!args.contains(&"--share-net".to_owned()));
        let workspace = at(&[s2("--bind", &root), vec![s(&root)]].concat());
        let git = root.join(".git");
        assert!(at(&[s2("--ro-bind", &git), vec![s(&git)]].concat()) > workspace);
        assert!(at(&s2("--tmpfs", &data)) < workspace);
        assert!(at(&s2("--tmpfs", &root.join("cache/keyrings"))) > workspace);
        at(&[vec!["--ro-bind".to_owned(), "/dev/null".to_owned()], vec![s(&socket)]].concat());
        assert!(at(&s2("--remount-ro", &data)) > workspace);
        at(&["--setenv".to_owned(), "TMPDIR".to_owned(), "/tmp".to_owned()]);
        assert!(!args.iter().any(|a| a.contains("missing")), "{args:?}");
        assert_eq!(args.last().map(String::as_str), Some("--"));
        let networked = sandbox.arguments(&root, &SandboxRules { network: true, ..rules });
        assert!(networked.contains(&OsString::from("--share-net")));
    }
}
