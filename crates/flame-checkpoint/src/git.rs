//! Running the `git` program against the shadow, and only the shadow.
//!
//! Every run starts from an environment with no inherited `GIT_*` variable, no system or global
//! configuration, `HOME` and `XDG_CONFIG_HOME` at the shadow (so no user configuration, hook,
//! fsmonitor or `autocrlf` reaches it), literal pathspecs (a path with `*` is a path) and the C
//! locale (so git's output is not translated).

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{CheckpointError, io_error};

/// The author and committer of every snapshot.
const AUTHOR_NAME: &str = "Flame";
const AUTHOR_EMAIL: &str = "flame@localhost";

/// The shadow's index, beside git's own name so that a person running git there does not use it
/// by accident.
const INDEX_FILE: &str = "flame-index";

/// The file every operation that uses the index or changes files locks.
const LOCK_FILE: &str = "flame.lock";

/// The workspace this shadow belongs to, written at creation and checked at every open.
const WORKSPACE_FILE: &str = "flame-workspace";

/// The most bytes of git's error output kept in an error message.
const MAX_STDERR_BYTES: usize = 4096;

/// The shadow's configuration, written whole at creation. `autocrlf` off, modes and symlinks
/// recorded as they are, no automatic gc (collection is Flame's call), no reflogs, no fsmonitor
/// or untracked cache, and no hooks.
const CONFIG: &str = "\
[core]
\trepositoryformatversion = 0
\tbare = false
\tfilemode = true
\tsymlinks = true
\tautocrlf = false
\tignorecase = false
\tprecomposeunicode = false
\tlogallrefupdates = false
\tfsmonitor = false
\tuntrackedcache = false
\tquotepath = false
\thookspath = /dev/null
\tcompression = 1
[gc]
\tauto = 0
[commit]
\tgpgsign = false
";

/// Overrides every in-tree `.gitattributes` (`info/attributes` comes first): no end-of-line
/// conversion, filter, `$Id$` expansion or re-encoding may change what is stored, so a restore
/// gives back the exact bytes. `diff` attributes (a file marked binary) still apply.
const ATTRIBUTES: &str = "* -text -filter -ident -working-tree-encoding !eol\n";

#[derive(Debug, Clone)]
pub(crate) struct Git {
    git_dir: PathBuf,
    work_tree: PathBuf,
    /// Whether `update-index` writes the blobs of one run into a single pack when asked to
    /// (git 2.37 and later); older versions would make a pack per file.
    bulk_checkin: bool,
}

/// The first git version whose `update-index --stdin` gathers big files into one pack.
const BULK_CHECKIN_SINCE: (u32, u32) = (2, 37);

impl Git {
    /// Opens the shadow in `git_dir`, creating it (under its lock) when it is not complete yet:
    /// new, or left half-made by a process that stopped while creating it.
    pub(crate) fn open(git_dir: &Path, workspace: &Path) -> Result<Git, CheckpointError> {
        if !workspace.is_absolute() || !workspace.is_dir() {
            return Err(CheckpointError::BadWorkspace(workspace.to_path_buf()));
        }
        if !git_dir.is_absolute()
            || git_dir.components().any(|part| crate::reserved::is_git_name(part.as_os_str()))
        {
            return Err(CheckpointError::ShadowInGitFolder(git_dir.to_path_buf()));
        }
        std::fs::create_dir_all(git_dir)
            .map_err(io_error(format!("create the checkpoint folder {}", git_dir.display())))?;
        let mut git = Git {
            git_dir: git_dir.to_path_buf(),
            work_tree: workspace.to_path_buf(),
            bulk_checkin: false,
        };
        git.bulk_checkin = version(&git.run(&["version"], None)?) >= Some(BULK_CHECKIN_SINCE);
        // The recorded workspace is what `create` writes last (whole, by a rename), so a shadow
        // that has it is complete. `HEAD` is not a sign of that: another thread or process may
        // be creating the shadow, past `git init` and not yet done.
        let recorded = git_dir.join(WORKSPACE_FILE);
        if !recorded.exists() {
            let _lock = git.lock()?;
            if !recorded.exists() {
                git.create()?;
            }
        }
        let recorded = std::fs::read(&recorded)
            .map_err(io_error(format!("read the workspace recorded in {}", git_dir.display())))?;
        let recorded = PathBuf::from(String::from_utf8_lossy(&recorded).trim_end_matches('\n'));
        if recorded != workspace {
            return Err(CheckpointError::OtherWorkspace {
                shadow: git_dir.to_path_buf(),
                recorded,
                given: workspace.to_path_buf(),
            });
        }
        Ok(git)
    }

    fn create(&self) -> Result<(), CheckpointError> {
        // An empty template: no sample hooks, no description, nothing git does not need.
        self.run(&["init", "--quiet", "--template="], None)?;
        let info = self.git_dir.join("info");
        std::fs::create_dir_all(&info).map_err(io_error("create the shadow's info folder"))?;
        write_whole(&info.join("attributes"), ATTRIBUTES.as_bytes())?;
        write_whole(&self.git_dir.join("config"), CONFIG.as_bytes())?;
        let workspace = self.work_tree.to_string_lossy();
        write_whole(&self.git_dir.join(WORKSPACE_FILE), format!("{workspace}\n").as_bytes())
    }

    pub(crate) fn bulk_checkin(&self) -> bool {
        self.bulk_checkin
    }

    pub(crate) fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The shadow's index file, which every git run is given as `GIT_INDEX_FILE`.
    pub(crate) fn index_file(&self) -> PathBuf {
        self.git_dir.join(INDEX_FILE)
    }

    pub(crate) fn work_tree(&self) -> &Path {
        &self.work_tree
    }

    /// Takes the shadow's exclusive lock until the returned file is dropped. It is an advisory
    /// lock on an open file description, so it also orders threads of one process.
    pub(crate) fn lock(&self) -> Result<File, CheckpointError> {
        let path = self.git_dir.join(LOCK_FILE);
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io_error(format!("open the lock {}", path.display())))?;
        file.lock().map_err(io_error(format!("lock {}", path.display())))?;
        // Every git run that writes the index or the packed refs runs under this lock, so a
        // lock file of git's found now was left by a process that was killed; git would refuse
        // to go on while it is there.
        for stale in [format!("{INDEX_FILE}.lock"), "packed-refs.lock".to_owned()] {
            match std::fs::remove_file(self.git_dir.join(&stale)) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => return Err(io_error(format!("remove the stale {stale}"))(error)),
            }
        }
        Ok(file)
    }

    /// A `git` command with the controlled environment, run in the work tree.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("git");
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("GIT_") {
                command.env_remove(&name);
            }
        }
        command
            .args(args)
            .current_dir(&self.work_tree)
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_INDEX_FILE", self.index_file())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_AUTHOR_NAME", AUTHOR_NAME)
            .env("GIT_AUTHOR_EMAIL", AUTHOR_EMAIL)
            .env("GIT_COMMITTER_NAME", AUTHOR_NAME)
            .env("GIT_COMMITTER_EMAIL", AUTHOR_EMAIL)
            .env("HOME", &self.git_dir)
            .env_remove("XDG_CONFIG_HOME")
            .env("LC_ALL", "C")
            .env_remove("LANGUAGE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// Runs `git args`, feeding `input` on standard input, and returns its standard output.
    pub(crate) fn run(
        &self,
        args: &[&str],
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, CheckpointError> {
        self.run_command(args, self.command(args), input)
    }

    /// Runs an already built command (with extra environment) of `git args`.
    pub(crate) fn run_command(
        &self,
        args: &[&str],
        mut command: Command,
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, CheckpointError> {
        if input.is_some() {
            command.stdin(Stdio::piped());
        }
        let mut child = command.spawn().map_err(|error| spawn_error(args, error))?;
        let output = std::thread::scope(|scope| {
            if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
                // Written from another thread: git may fill its output pipe before it has read
                // all of its input. A write error means git stopped reading; its status says why.
                scope.spawn(move || {
                    let _ = stdin.write_all(input);
                });
            }
            child.wait_with_output()
        })
        .map_err(io_error(format!("wait for {}", describe(args))))?;
        if output.status.success() {
            Ok(output.stdout)
        } else {
            Err(git_error(args, &output.stderr))
        }
    }

    /// Runs `git args` and keeps at most `cap` bytes of its standard output; past it the process
    /// is killed and the second value is `true`.
    pub(crate) fn run_capped(
        &self,
        args: &[&str],
        cap: usize,
    ) -> Result<(Vec<u8>, bool), CheckpointError> {
        let mut command = self.command(args);
        command.stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|error| spawn_error(args, error))?;
        let mut stdout =
            child.stdout.take().ok_or_else(|| CheckpointError::Unexpected("no stdout".into()))?;
        let mut stderr =
            child.stderr.take().ok_or_else(|| CheckpointError::Unexpected("no stderr".into()))?;
        let errors = std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = (&mut stderr).take(MAX_STDERR_BYTES as u64 * 4).read_to_end(&mut text);
            text
        });
        let mut kept = Vec::new();
        (&mut stdout)
            .take(cap as u64 + 1)
            .read_to_end(&mut kept)
            .map_err(io_error(format!("read the output of {}", describe(args))))?;
        let truncated = kept.len() > cap;
        if truncated {
            kept.truncate(cap);
            let _ = child.kill();
        }
        drop(stdout);
        let status = child.wait().map_err(io_error(format!("wait for {}", describe(args))))?;
        let errors = errors.join().unwrap_or_default();
        if !truncated && !status.success() {
            return Err(git_error(args, &errors));
        }
        Ok((kept, truncated))
    }

    /// Whether each of `ids` names a commit in the shadow; the first that does not is an error.
    pub(crate) fn require_commits(&self, ids: &[&crate::CommitId]) -> Result<(), CheckpointError> {
        let mut input = String::new();
        for id in ids {
            input.push_str(id.as_str());
            input.push_str("^{commit}\n");
        }
        let output =
            self.run(&["cat-file", "--batch-check=%(objecttype)"], Some(input.as_bytes()))?;
        let answers = String::from_utf8_lossy(&output);
        for (id, answer) in ids.iter().zip(answers.lines()) {
            if answer != "commit" {
                return Err(CheckpointError::UnknownCommit((*id).clone()));
            }
        }
        Ok(())
    }
}

/// The major and minor version in `git version`'s answer (`git version 2.47.3`).
fn version(output: &[u8]) -> Option<(u32, u32)> {
    let text = String::from_utf8_lossy(output);
    let mut numbers = text.trim().strip_prefix("git version ")?.split('.');
    Some((numbers.next()?.parse().ok()?, numbers.next()?.parse().ok()?))
}

fn describe(args: &[&str]) -> String {
    let mut text = String::from("git");
    for arg in args.iter().take(6) {
        text.push(' ');
        text.push_str(arg);
    }
    text
}

fn spawn_error(args: &[&str], error: std::io::Error) -> CheckpointError {
    if error.kind() == std::io::ErrorKind::NotFound {
        CheckpointError::GitMissing
    } else {
        CheckpointError::Io { context: format!("start {}", describe(args)), source: error }
    }
}

fn git_error(args: &[&str], stderr: &[u8]) -> CheckpointError {
    let mut text =
        String::from_utf8_lossy(&stderr[..stderr.len().min(MAX_STDERR_BYTES)]).into_owned();
    if stderr.len() > MAX_STDERR_BYTES {
        text.push_str(" …");
    }
    CheckpointError::Git { command: describe(args), stderr: text.trim().to_owned() }
}

/// Writes a small file of the shadow whole: a temporary file renamed over it.
pub(crate) fn write_whole(path: &Path, content: &[u8]) -> Result<(), CheckpointError> {
    let temporary = path.with_extension("flame-tmp");
    std::fs::write(&temporary, content)
        .and_then(|()| std::fs::rename(&temporary, path))
        .map_err(io_error(format!("write {}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_git_program_is_a_typed_error() {
        let error = spawn_error(&["version"], std::io::Error::from(std::io::ErrorKind::NotFound));
        assert!(matches!(error, CheckpointError::GitMissing));
        assert!(error.to_string().contains("install git"), "{error}");
        // The same error reaches the caller from a real spawn of a program that does not exist.
        let error =
            Command::new("/nonexistent/flame-test/git").spawn().expect_err("no such program");
        assert!(matches!(spawn_error(&["version"], error), CheckpointError::GitMissing));
    }

    #[test]
    fn versions_are_read_from_git_version() {
        assert_eq!(version(b"git version 2.47.3\n"), Some((2, 47)));
        assert_eq!(version(b"git version 2.39.5.windows.1\n"), Some((2, 39)));
        assert!(version(b"git version 2.36.0\n") < Some(BULK_CHECKIN_SINCE));
        assert_eq!(version(b"something else"), None);
    }
}
