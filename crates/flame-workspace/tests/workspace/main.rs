//! The workspace tools on real temporary folders (and real `git init` repositories where `.git`
//! matters): confinement, reading, listing, search, atomic changes and commands.

mod change;
mod command;
mod confine;
mod instructions;
mod list;
mod read;
mod sandbox;
mod search;

use std::path::Path;

use flame_workspace::Workspace;
use tempfile::TempDir;

/// A fresh workspace in a temporary folder. The folder is made inside another temporary folder,
/// so tests can put files "outside the workspace" next to it without touching anything else.
#[derive(Debug)]
struct Fixture {
    outer: TempDir,
    workspace: Workspace,
}

impl Fixture {
    fn new() -> Fixture {
        let outer = TempDir::new().expect("temporary folder");
        std::fs::create_dir(outer.path().join("ws")).expect("workspace folder");
        let workspace = Workspace::open(outer.path().join("ws")).expect("open the workspace");
        Fixture { outer, workspace }
    }

    fn root(&self) -> &Path {
        self.workspace.root()
    }

    /// A folder beside the workspace, outside it.
    fn outside(&self) -> std::path::PathBuf {
        let path = self.outer.path().join("outside");
        std::fs::create_dir_all(&path).expect("outside folder");
        std::fs::canonicalize(path).expect("canonical")
    }

    /// Writes a file under the workspace root, making its folders.
    fn put(&self, relative: &str, content: impl AsRef<[u8]>) {
        let path = self.root().join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("folders");
        std::fs::write(path, content).expect("write");
    }

    fn get(&self, relative: &str) -> String {
        std::fs::read_to_string(self.root().join(relative)).expect("read")
    }

    /// Runs `git init` in the workspace, so `.git` is a real repository.
    fn git_init(&self) {
        let status = std::process::Command::new("git")
            .args(["init", "--quiet"])
            .current_dir(self.root())
            .status()
            .expect("git runs");
        assert!(status.success());
    }
}
