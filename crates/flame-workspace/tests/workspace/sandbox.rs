//! Commands in the sandbox on real folders and real git repositories: the cases the workspace's
//! confinement is audited for (writes through links out, writes into the person's `.git`, keys
//! read through `/proc`) all fail inside, nothing is written outside the workspace, no connection
//! reaches a listener on this computer, and Flame's data and the keyring are not there to read.
//! Each case runs the same script without the sandbox too, which does what the sandbox stops, so
//! the test can fail. The sandbox needs `bwrap` (Debian's `bubblewrap`, which `make setup`
//! installs) and a kernel with user namespaces.

use std::ffi::OsString;
use std::net::TcpListener;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use flame_workspace::{
    CancelHandle, CommandOutcome, CommandRequest, Confinement, Ending, Environment, Exit, Sandbox,
    SandboxRules, Workspace, WorkspaceError,
};
use tempfile::TempDir;

/// A workspace with folders beside it: `outer` lies in the build's own temporary folder (not
/// under `/tmp`, which the sandbox replaces with its own), `tmp` under `/tmp`.
struct Fixture {
    outer: TempDir,
    tmp: TempDir,
    workspace: Workspace,
}

impl Fixture {
    fn new() -> Fixture {
        let outer = tempfile::Builder::new()
            .prefix("sandbox-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .expect("a folder beside the build");
        std::fs::create_dir(outer.path().join("ws")).expect("the workspace");
        let workspace = Workspace::open(outer.path().join("ws")).expect("open");
        let tmp = TempDir::new().expect("a folder in /tmp");
        Fixture { outer, tmp, workspace }
    }

    fn root(&self) -> &Path {
        self.workspace.root()
    }

    /// A folder beside the workspace, made on first use.
    fn beside(&self, name: &str) -> PathBuf {
        let path = self.outer.path().join(name);
        std::fs::create_dir_all(&path).expect("a folder beside");
        std::fs::canonicalize(path).expect("canonical")
    }

    fn run(&self, script: &str, confinement: Confinement<'_>) -> CommandOutcome {
        self.run_in(script, confinement, &Environment::inherited())
    }

    fn run_in(
        &self,
        script: &str,
        confinement: Confinement<'_>,
        environment: &Environment,
    ) -> CommandOutcome {
        let request = CommandRequest { command: script.into(), timeout: None };
        self.workspace
            .run_command(&request, confinement, environment, &CancelHandle::new(), &mut Vec::new())
            .expect("the command runs")
    }
}

/// The sandbox of this machine, which must start.
fn sandbox_of(environment: &Environment) -> Sandbox {
    let sandbox = Sandbox::from_environment(environment);
    if let Err(unavailable) = sandbox.check() {
        panic!(
            "the sandbox must start where the tests run (make setup installs bubblewrap): {unavailable}"
        );
    }
    sandbox
}

fn output(outcome: &CommandOutcome) -> String {
    String::from_utf8_lossy(&[outcome.head.as_slice(), &outcome.tail].concat()).into_owned()
}

/// Every file under `folder` with its content, sorted, for comparing before and after.
fn contents(folder: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let mut stack = vec![folder.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).expect("a folder") {
            let path = entry.expect("an entry").path();
            let meta = std::fs::symlink_metadata(&path).expect("metadata");
            if meta.is_dir() {
                stack.push(path.clone());
                found.push((path, Vec::new()));
            } else if meta.is_file() {
                let content = std::fs::read(&path).expect("read");
                found.push((path, content));
            } else {
                found.push((path, b"(link)".to_vec()));
            }
        }
    }
    found.sort();
    found
}

/// The names in `folder`.
fn names(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .expect("a folder")
        .map(|entry| entry.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn nothing_is_written_outside_the_workspace_by_any_route() {
    let f = Fixture::new();
    let sandbox = sandbox_of(&Environment::inherited());
    let rules = SandboxRules::default();
    let beside = f.beside("outside");
    let tmp = std::fs::canonicalize(f.tmp.path()).expect("canonical");
    symlink(&beside, f.root().join("out")).expect("a link to a folder outside");
    symlink(beside.join("planted.txt"), f.root().join("dangling")).expect("a dangling link");
    symlink(&tmp, f.root().join("tmp-out")).expect("a link into /tmp");
    let script = format!(
        "echo in > inside.txt; mkdir -p made/deep && echo in > made/deep/file.txt
         echo x > {beside}/absolute.txt; echo x > ../outside/relative.txt
         echo x > out/through-link.txt; echo x > dangling; echo x > tmp-out/through-link.txt
         echo x > {tmp}/absolute.txt; cp inside.txt {beside}/copied.txt; mv inside.txt {beside}/ 2>/dev/null
         touch ../beside-the-workspace.txt; ln -s /etc ../link-made-outside
         echo finished",
        beside = beside.display(),
        tmp = tmp.display(),
    );

    let outcome = f.run(&script, Confinement::Sandbox(&sandbox, &rules));
    assert!(output(&outcome).contains("finished"), "{}", output(&outcome));
    // Beside the workspace is read-only in the sandbox, unless the build is under /tmp (a clone
    // there): the sandbox's /tmp is a private one, where the writes land and are dropped.
    let private_tmp = f.outer.path().starts_with("/tmp");
    assert!(
        private_tmp || output(&outcome).contains("Read-only file system"),
        "{}",
        output(&outcome)
    );
    assert_eq!(names(&beside), Vec::<String>::new(), "written beside the workspace");
    assert_eq!(names(&tmp), Vec::<String>::new(), "written in a folder under /tmp");
    assert_eq!(names(f.outer.path()), ["outside", "ws"], "written next to the workspace");
    // Inside, the command worked as it would anywhere.
    assert_eq!(std::fs::read_to_string(f.root().join("inside.txt")).expect("inside"), "in\n");
    assert!(f.root().join("made/deep/file.txt").is_file());

    // The same script without the sandbox writes outside through each route.
    let outcome = f.run(&script, Confinement::None);
    assert!(output(&outcome).contains("finished"));
    assert_eq!(
        names(&beside),
        [
            "absolute.txt",
            "copied.txt",
            "inside.txt",
            "planted.txt",
            "relative.txt",
            "through-link.txt"
        ]
    );
    assert_eq!(names(&tmp), ["absolute.txt", "through-link.txt"]);
}

#[test]
fn the_persons_git_repository_is_not_written_from_inside() {
    let f = Fixture::new();
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=Ada", "-c", "user.email=ada@example.com"])
            .args(args)
            .current_dir(f.root())
            .stdout(std::process::Stdio::null())
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "--quiet"]);
    std::fs::write(f.root().join("a.txt"), "one\n").expect("a file");
    git(&["add", "a.txt"]);
    git(&["commit", "--quiet", "-m", "first"]);
    symlink(".git", f.root().join("g")).expect("a link to .git");
    let before = contents(&f.root().join(".git"));
    let script = "echo two >> a.txt
        echo '[core] evil = 1' >> .git/config; touch .git/hooks/pre-commit; echo x > g/hooks/post-checkout
        git -c user.name=M -c user.email=m@example.com commit -qam second; git branch other; git tag v1
        rm -rf .git/refs; mv .git .git-moved; git config user.name Mallory
        echo finished";
    let sandbox = sandbox_of(&Environment::inherited());
    let rules = SandboxRules::default();
    let outcome = f.run(script, Confinement::Sandbox(&sandbox, &rules));
    assert!(output(&outcome).contains("finished"), "{}", output(&outcome));
    assert_eq!(contents(&f.root().join(".git")), before, "the repository changed");
    // The work tree is the workspace's: the change to a.txt stands.
    assert_eq!(std::fs::read_to_string(f.root().join("a.txt")).expect("a.txt"), "one\ntwo\n");

    // Without the sandbox, the same script rewrites the repository.
    f.run(script, Confinement::None);
    assert!(f.root().join(".git-moved/hooks/pre-commit").exists());
}

#[test]
fn keys_in_other_processes_environments_are_not_read_through_proc() {
    let f = Fixture::new();
    let sentinel = format!("sk-sandbox-sentinel-{}", std::process::id());
    // A process outside the sandbox with a key in its environment, as Flame's own could be.
    let mut holder = std::process::Command::new("sleep")
        .arg("60")
        .env("SERVICE_API_KEY", &sentinel)
        .spawn()
        .expect("a process holding a key");
    let script = format!(
        "cat /proc/{pid}/environ; cat /proc/$PPID/environ; cat /proc/1/environ
         grep -al {sentinel} /proc/[0-9]*/environ; echo finished",
        pid = holder.id()
    );
    let sandbox = sandbox_of(&Environment::inherited());
    let rules = SandboxRules::default();
    let inside = f.run(&script, Confinement::Sandbox(&sandbox, &rules));
    let outside = f.run(&script, Confinement::None);
    let _ = holder.kill();
    let _ = holder.wait();
    assert!(output(&inside).contains("finished"), "{}", output(&inside));
    assert!(!output(&inside).contains(&sentinel), "the key was read: {}", output(&inside));
    assert!(output(&outside).contains(&sentinel), "{}", output(&outside));
}

#[test]
fn no_connection_reaches_a_listener_on_this_computer_unless_the_network_is_allowed() {
    let f = Fixture::new();
    let listener = TcpListener::bind("127.0.0.1:0").expect("a listener");
    listener.set_nonblocking(true).expect("non-blocking");
    let port = listener.local_addr().expect("its address").port();
    let script =
        format!("(echo hello > /dev/tcp/127.0.0.1/{port}) 2>&1 && echo connected || echo refused");
    let accepted = || {
        let mut count = 0;
        while listener.accept().is_ok() {
            count += 1;
        }
        count
    };
    let sandbox = sandbox_of(&Environment::inherited());
    let closed = SandboxRules::default();
    let outcome = f.run(&script, Confinement::Sandbox(&sandbox, &closed));
    assert!(output(&outcome).contains("refused"), "{}", output(&outcome));
    assert_eq!(accepted(), 0, "a connection came from the sandbox");

    let open = SandboxRules { network: true, ..SandboxRules::default() };
    let outcome = f.run(&script, Confinement::Sandbox(&sandbox, &open));
    assert!(output(&outcome).contains("connected"), "{}", output(&outcome));
    assert_eq!(accepted(), 1);
}

#[test]
fn flames_data_and_the_keyring_are_not_there_to_read_or_write() {
    let f = Fixture::new();
    let data = f.beside("flame-data");
    std::fs::write(data.join("flame.db"), "FLAME-DATA-SENTINEL").expect("the database");
    let settings = f.beside("config/flame");
    std::fs::write(settings.join("settings.json"), "SETTINGS-SENTINEL").expect("the settings");
    let share = f.beside("share");
    std::fs::create_dir(share.join("keyrings")).expect("keyrings");
    std::fs::write(share.join("keyrings/login.keyring"), "KEYRING-SENTINEL").expect("a keyring");
    let run = f.beside("run");
    std::fs::write(run.join("bus"), "BUS-SENTINEL").expect("the bus, as a file");
    let mut variables: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    variables.push(("XDG_DATA_HOME".into(), share.clone().into()));
    variables.push(("XDG_RUNTIME_DIR".into(), run.clone().into()));
    let environment = Environment::from_variables(variables);
    let sandbox = sandbox_of(&environment);
    let rules = SandboxRules { hidden: vec![data.clone(), settings.clone()], network: false };
    let script = format!(
        "ls -A {data} {settings} {share}/keyrings {run}; cat {data}/flame.db {settings}/settings.json
         grep -r SENTINEL {data} {settings} {share} {run}; echo x > {data}/planted; echo finished",
        data = data.display(),
        settings = settings.display(),
        share = share.display(),
        run = run.display(),
    );
    let inside = f.run_in(&script, Confinement::Sandbox(&sandbox, &rules), &environment);
    let text = output(&inside);
    assert!(text.contains("finished"), "{text}");
    assert!(!text.contains("SENTINEL"), "Flame's data or the keyring was read: {text}");
    assert_eq!(names(&data), ["flame.db"], "written into the data folder");

    let outside = f.run_in(&script, Confinement::None, &environment);
    for sentinel in ["FLAME-DATA", "SETTINGS", "KEYRING", "BUS"] {
        assert!(output(&outside).contains(&format!("{sentinel}-SENTINEL")), "{sentinel}");
    }
}

/// The processes alive (not zombies) whose command line holds `marker`.
fn alive_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc") {
        let Ok(entry) = entry else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let zombie = stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z'));
        if !zombie && String::from_utf8_lossy(&cmdline).contains(marker) {
            found.push(String::from_utf8_lossy(&cmdline).replace('\0', " "));
        }
    }
    found
}

#[test]
fn the_sandboxs_processes_die_with_the_command_on_timeout_and_on_exit() {
    let f = Fixture::new();
    let sandbox = sandbox_of(&Environment::inherited());
    let rules = SandboxRules::default();
    let marker = format!("300.{}", std::process::id());
    let request = CommandRequest {
        command: format!("sleep {marker} & sleep {marker}; echo never"),
        timeout: Some(Duration::from_secs(1)),
    };
    let outcome = f
        .workspace
        .run_command(
            &request,
            Confinement::Sandbox(&sandbox, &rules),
            &Environment::inherited(),
            &CancelHandle::new(),
            &mut Vec::new(),
        )
        .expect("run");
    assert_eq!(outcome.ending, Ending::TimedOut, "{}", outcome.render());
    assert!(!output(&outcome).contains("never"));
    // The kernel kills a namespace's processes once its first one is gone; give it a moment.
    let mut left = alive_with(&marker);
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        left = alive_with(&marker);
    }
    assert_eq!(left, Vec::<String>::new(), "processes outlived the timeout");

    let background = format!("301.{}", std::process::id());
    let outcome =
        f.run(&format!("sleep {background} & exit 3"), Confinement::Sandbox(&sandbox, &rules));
    assert_eq!((outcome.ending, outcome.exit), (Ending::Exited, Exit::Code(3)));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        alive_with(&background),
        Vec::<String>::new(),
        "a background job outlived its shell"
    );
}

#[test]
fn inside_the_environment_is_scrubbed_and_tmp_is_the_commands_own() {
    let f = Fixture::new();
    let mut variables: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    variables.push(("ANTHROPIC_API_KEY".into(), "sk-ant-inside".into()));
    variables.push(("KEEP_ME".into(), "kept".into()));
    let environment = Environment::from_variables(variables);
    let sandbox = sandbox_of(&environment);
    let rules = SandboxRules::default();
    let name = format!("flame-sandbox-{}", std::process::id());
    let script = format!("env; echo private > /tmp/{name} && cat /tmp/{name}");
    let outcome = f.run_in(&script, Confinement::Sandbox(&sandbox, &rules), &environment);
    let text = output(&outcome);
    assert!(!text.contains("sk-ant-inside"), "{text}");
    assert!(text.contains("KEEP_ME=kept") && text.contains("private"), "{text}");
    assert!(!Path::new("/tmp").join(&name).exists(), "the sandbox's /tmp is this computer's");
}

#[test]
fn a_sandbox_that_cannot_start_runs_nothing_and_says_why() {
    let f = Fixture::new();
    let empty = f.beside("no-bwrap");
    let missing = Environment::from_variables([(OsString::from("PATH"), empty.clone().into())]);
    // A bwrap that fails, as one does on a kernel without user namespaces.
    let failing = f.beside("failing-bwrap");
    symlink("/bin/false", failing.join("bwrap")).expect("a failing bwrap");
    let broken = Environment::from_variables([(
        OsString::from("PATH"),
        OsString::from(format!("{}:/usr/bin:/bin", failing.display())),
    )]);
    let rules = SandboxRules::default();
    for (environment, says) in [(missing, "bubblewrap"), (broken, "cannot start")] {
        let sandbox = Sandbox::from_environment(&environment);
        let unavailable = sandbox.check().expect_err("no sandbox").clone();
        assert!(unavailable.reason.contains(says), "{unavailable}");
        let request = CommandRequest { command: "touch ran".into(), timeout: None };
        let error = f
            .workspace
            .run_command(
                &request,
                Confinement::Sandbox(&sandbox, &rules),
                &environment,
                &CancelHandle::new(),
                &mut Vec::new(),
            )
            .expect_err("refused");
        assert!(matches!(error, WorkspaceError::SandboxUnavailable { .. }), "{error:?}");
        assert!(!f.root().join("ran").exists(), "the command ran without its sandbox");
    }
}
