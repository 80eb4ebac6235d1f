use std::ffi::OsString;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flame_workspace::{
    CancelHandle, CommandOutcome, CommandRequest, Confinement, Ending, Environment, Exit,
    MAX_COMMAND_LOG_BYTES, MAX_COMMAND_TIMEOUT, OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES, Touched,
    WorkspaceError, is_scrubbed_variable,
};

use crate::Fixture;

fn request(command: &str, timeout_secs: Option<u64>) -> CommandRequest {
    CommandRequest { command: command.into(), timeout: timeout_secs.map(Duration::from_secs) }
}

fn run(f: &Fixture, command: &str, timeout_secs: Option<u64>) -> (CommandOutcome, Vec<u8>) {
    let mut log = Vec::new();
    let outcome = f
        .workspace
        .run_command(
            &request(command, timeout_secs),
            Confinement::None,
            &Environment::inherited(),
            &CancelHandle::new(),
            &mut log,
        )
        .expect("run");
    (outcome, log)
}

/// The processes still alive (not zombies) in the process group `group`, read from /proc.
fn live_members(group: i32) -> Vec<i32> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc") {
        let Ok(entry) = entry else { continue };
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // The fields after the command name, which is in parentheses and may hold spaces.
        let Some(rest) = stat.rsplit_once(") ").map(|(_, rest)| rest) else { continue };
        let fields: Vec<&str> = rest.split(' ').collect();
        let (state, pgrp) = (fields[0], fields[2].parse::<i32>().unwrap_or(0));
        if pgrp == group && state != "Z" {
            members.push(pid);
        }
    }
    members
}

/// The group id a command printed first (`echo $$`: the shell leads its own group).
fn printed_group(outcome: &CommandOutcome) -> i32 {
    let text = String::from_utf8_lossy(&outcome.head);
    text.lines().next().expect("a first line").trim().parse().expect("a pid")
}

#[test]
fn a_command_runs_in_the_workspace_and_its_exit_code_and_output_come_back() {
    let f = Fixture::new();
    let (outcome, log) = run(&f, "pwd; echo to-stderr >&2; exit 3", None);
    assert_eq!(outcome.exit, Exit::Code(3));
    assert_eq!(outcome.ending, Ending::Exited);
    let text = String::from_utf8_lossy(&outcome.head).into_owned();
    assert_eq!(text, format!("{}\nto-stderr\n", f.root().display()));
    assert_eq!(log, outcome.head);
    assert!(outcome.render().ends_with("[exit code 3]"), "{}", outcome.render());
    assert_eq!(outcome.touched(), Touched::Unknown);
    let (killed, _) = run(&f, "kill -9 $$", None);
    assert_eq!(killed.exit, Exit::Signal(9));
}

#[test]
fn provider_keys_and_flame_variables_are_absent_from_the_environment() {
    let f = Fixture::new();
    let pairs = [
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("ANTHROPIC_API_KEY", "sk-ant-secret".into()),
        ("OPENAI_API_KEY", "sk-secret".into()),
        ("ANTHROPIC_BASE_URL", "http://proxy".into()),
        ("OPENAI_BASE_URL", "http://proxy".into()),
        ("FLAME_DATA_DIR", "/data".into()),
        ("flame_lower", "x".into()),
        ("GEMINI_API_KEY", "g".into()),
        ("SERVICE_AUTH_TOKEN", "t".into()),
        ("KEEP_ME", "kept".into()),
    ];
    let environment = Environment::from_variables(
        pairs.iter().map(|(name, value)| (OsString::from(name), OsString::from(value))),
    );
    let mut log = Vec::new();
    let outcome = f
        .workspace
        .run_command(
            &request("env", None),
            Confinement::None,
            &environment,
            &CancelHandle::new(),
            &mut log,
        )
        .expect("run");
    let text = String::from_utf8_lossy(&outcome.head).into_owned();
    for (name, value) in &pairs[1..9] {
        assert!(!text.contains(&format!("{name}=")), "{name} reached the command:\n{text}");
        assert!(!text.contains(value.as_str()) || value.len() < 3, "{value} reached the command");
    }
    assert!(text.contains("KEEP_ME=kept"), "{text}");
    assert!(text.contains("PATH="), "{text}");
    assert!(is_scrubbed_variable("MISTRAL_APIKEY".as_ref()));
    assert!(!is_scrubbed_variable("HOME".as_ref()));
}

#[test]
fn past_its_timeout_the_command_and_its_group_are_killed() {
    let f = Fixture::new();
    let (outcome, _) = run(&f, "echo $$; sleep 300 & sleep 300; echo never", Some(1));
    assert_eq!(outcome.ending, Ending::TimedOut);
    assert!(!String::from_utf8_lossy(&outcome.head).contains("never"));
    assert!(outcome.render().contains("[timed out after 1 s; the command was killed]"));
    assert_eq!(live_members(printed_group(&outcome)), Vec::<i32>::new());
}

#[test]
fn the_timeout_holds_after_a_command_closes_its_output() {
    let f = Fixture::new();
    // The shell's own `$$` is printed before the output goes away, so the group can be checked.
    let (outcome, _) = run(&f, "echo $$; exec >/dev/null 2>&1; sleep 300", Some(1));
    assert_eq!(outcome.ending, Ending::TimedOut, "{}", outcome.render());
    assert!(!outcome.output_abandoned);
    assert_eq!(live_members(printed_group(&outcome)), Vec::<i32>::new());
}

#[test]
fn stop_holds_after_a_command_closes_its_output() {
    let f = Fixture::new();
    let cancel = CancelHandle::new();
    let stopper = cancel.clone();
    // Stop is pressed from another thread once the shell has closed its output.
    let marker = f.root().join("closed");
    let pressed = std::thread::spawn(move || {
        while !marker.exists() {
            std::thread::sleep(Duration::from_millis(10));
        }
        stopper.cancel();
    });
    let outcome = f
        .workspace
        .run_command(
            &request("echo $$; exec >/dev/null 2>&1; touch closed; sleep 300", Some(600)),
            Confinement::None,
            &Environment::inherited(),
            &cancel,
            &mut Vec::new(),
        )
        .expect("run");
    pressed.join().expect("the stopping thread");
    assert_eq!(outcome.ending, Ending::Cancelled, "{}", outcome.render());
    assert_eq!(live_members(printed_group(&outcome)), Vec::<i32>::new());
}

#[test]
fn stop_kills_the_whole_group() {
    let f = Fixture::new();
    let cancel = CancelHandle::new();
    // The log sees the first line as it is written; Stop is pressed once it has.
    struct StopOnOutput(CancelHandle, Vec<u8>);
    impl Write for StopOnOutput {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            self.1.extend_from_slice(data);
            if self.1.contains(&b'\n') {
                self.0.cancel();
            }
            Ok(data.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut log = StopOnOutput(cancel.clone(), Vec::new());
    let outcome = f
        .workspace
        .run_command(
            &request("echo $$; (sleep 300; echo x) & sleep 300 & wait", None),
            Confinement::None,
            &Environment::inherited(),
            &cancel,
            &mut log,
        )
        .expect("run");
    assert_eq!(outcome.ending, Ending::Cancelled);
    assert!(outcome.render().contains("stopped by the person"));
    assert_eq!(live_members(printed_group(&outcome)), Vec::<i32>::new());
}

#[test]
fn background_jobs_do_not_outlive_their_shell() {
    let f = Fixture::new();
    let (outcome, _) = run(&f, "echo $$; sleep 300 &", Some(60));
    assert_eq!(outcome.ending, Ending::Exited);
    assert_eq!(outcome.exit, Exit::Code(0));
    assert_eq!(live_members(printed_group(&outcome)), Vec::<i32>::new());
}

#[test]
fn an_abandoned_run_kills_its_group() {
    let f = Fixture::new();
    // A log that panics on its first write, after noting what it was given.
    struct Panicking(Arc<Mutex<Vec<u8>>>);
    impl Write for Panicking {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lock").extend_from_slice(data);
            panic!("the log failed");
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut log = Panicking(seen.clone());
    let workspace = f.workspace.clone();
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        workspace.run_command(
            &request("echo $$; sleep 300", None),
            Confinement::None,
            &Environment::inherited(),
            &CancelHandle::new(),
            &mut log,
        )
    }));
    assert!(unwound.is_err());
    let seen = String::from_utf8(seen.lock().expect("lock").clone()).expect("utf-8");
    let group: i32 = seen.lines().next().expect("a line").parse().expect("a pid");
    // SIGKILL is asynchronous; the group is gone once the kernel has delivered it.
    let mut members = live_members(group);
    for _ in 0..200 {
        if members.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
        members = live_members(group);
    }
    assert_eq!(members, Vec::<i32>::new());
}

#[test]
fn a_command_writing_100_mb_keeps_a_head_and_a_tail_and_streams_what_the_log_keeps() {
    let f = Fixture::new();
    #[derive(Default)]
    struct Counting {
        bytes: u64,
        last: Vec<u8>,
    }
    impl Write for Counting {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            self.bytes += data.len() as u64;
            self.last = data[data.len().saturating_sub(16)..].to_vec();
            Ok(data.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut log = Counting::default();
    let outcome = f
        .workspace
        .run_command(
            &request("head -c 100000000 /dev/zero | tr '\\0' x; echo; echo the-end", None),
            Confinement::None,
            &Environment::inherited(),
            &CancelHandle::new(),
            &mut log,
        )
        .expect("run");
    let total = 100_000_000 + 1 + 8;
    // The log takes what it may keep; the rest is still read and counted.
    assert_eq!(log.bytes, MAX_COMMAND_LOG_BYTES);
    assert_eq!(outcome.output_bytes, total);
    assert_eq!(outcome.head.len(), OUTPUT_HEAD_BYTES);
    assert_eq!(outcome.tail.len(), OUTPUT_TAIL_BYTES);
    assert_eq!(outcome.cut_bytes(), total - (OUTPUT_HEAD_BYTES + OUTPUT_TAIL_BYTES) as u64);
    assert!(outcome.tail.ends_with(b"x\nthe-end\n"));
    let rendered = outcome.render();
    assert!(rendered.len() < OUTPUT_HEAD_BYTES + OUTPUT_TAIL_BYTES + 200);
    assert!(rendered.contains(&format!("[… {} bytes of output cut …]", outcome.cut_bytes())));
}

#[test]
fn past_the_log_cap_output_is_counted_but_no_longer_written() {
    let f = Fixture::new();
    let path = f.outside().join("whole-output.log");
    let mut file = std::fs::File::create(&path).expect("the log file");
    let over = MAX_COMMAND_LOG_BYTES + 3 * 1024 * 1024;
    let outcome = f
        .workspace
        .run_command(
            &request(&format!("head -c {over} /dev/zero; echo the-end"), None),
            Confinement::None,
            &Environment::inherited(),
            &CancelHandle::new(),
            &mut file,
        )
        .expect("run");
    drop(file);
    assert_eq!(outcome.output_bytes, over + 8);
    assert_eq!(outcome.logged_bytes, MAX_COMMAND_LOG_BYTES);
    assert_eq!(std::fs::metadata(&path).expect("the log").len(), MAX_COMMAND_LOG_BYTES);
    assert!(outcome.tail.ends_with(b"the-end\n"), "the tail is still kept past the cap");
    let rendered = outcome.render();
    assert!(
        rendered.ends_with(&format!(
            "[the whole output was {} bytes; only its first {MAX_COMMAND_LOG_BYTES} bytes were kept on disk]",
            over + 8
        )),
        "{}",
        &rendered[rendered.len() - 300..]
    );
    // Within the cap, the log holds everything and the reply says nothing of it.
    let (small, log) = run(&f, "echo small", None);
    assert_eq!((small.logged_bytes, log.len()), (6, 6));
    assert!(!small.render().contains("kept on disk"));
}

#[test]
fn a_failing_log_does_not_stop_the_command() {
    let f = Fixture::new();
    struct Failing;
    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let outcome = f
        .workspace
        .run_command(
            &request("echo a; echo b", None),
            Confinement::None,
            &Environment::inherited(),
            &CancelHandle::new(),
            &mut Failing,
        )
        .expect("run");
    assert_eq!(outcome.exit, Exit::Code(0));
    assert_eq!(outcome.head, b"a\nb\n");
    assert_eq!(outcome.log_error.as_deref(), Some("disk full"));
}

#[test]
fn bad_timeouts_and_empty_commands_are_refused() {
    let f = Fixture::new();
    let mut log = Vec::new();
    let run = |request: CommandRequest, log: &mut Vec<u8>| {
        f.workspace.run_command(
            &request,
            Confinement::None,
            &Environment::inherited(),
            &CancelHandle::new(),
            log,
        )
    };
    let too_long = CommandRequest {
        command: "true".into(),
        timeout: Some(MAX_COMMAND_TIMEOUT + Duration::from_secs(1)),
    };
    let error = run(too_long, &mut log).expect_err("too long");
    assert!(
        matches!(error, WorkspaceError::TimeoutTooLong { asked_secs: 601, limit_secs: 600 }),
        "{error:?}"
    );
    let zero = CommandRequest { command: "true".into(), timeout: Some(Duration::ZERO) };
    assert!(matches!(run(zero, &mut log), Err(WorkspaceError::TimeoutZero)));
    assert!(matches!(run(request("  ", None), &mut log), Err(WorkspaceError::EmptyCommand)));
}

#[test]
fn the_shell_leads_a_process_group_of_its_own() {
    let f = Fixture::new();
    // Field 5 of /proc/PID/stat is the process group (bash's name has no spaces).
    let (outcome, _) =
        run(&f, "echo $$; cut -d' ' -f5 /proc/$$/stat; ps -o pgid= $PPID || true", None);
    let text = String::from_utf8_lossy(&outcome.head).into_owned();
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    assert_eq!(lines[0], lines[1], "{text}");
    assert_ne!(lines[0], std::process::id().to_string());
}
