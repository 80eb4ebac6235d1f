//! Building real git repositories and reading back what is on disk.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use flame_checkpoint::Shadow;

/// A workspace and a data directory, both in one temporary folder.
pub struct Setup {
    _folder: tempfile::TempDir,
    pub workspace: PathBuf,
    pub shadow_dir: PathBuf,
}

impl Setup {
    /// An empty workspace whose path has a space in it.
    pub fn new() -> Setup {
        let folder = tempfile::TempDir::new().expect("temporary folder");
        let base = folder.path().canonicalize().expect("canonical");
        let workspace = base.join("my workspace");
        std::fs::create_dir(&workspace).expect("workspace");
        let shadow_dir = base
            .join("data")
            .join("checkpoints")
            .join(flame_checkpoint::shadow_folder_name(&workspace));
        Setup { _folder: folder, workspace, shadow_dir }
    }

    pub fn shadow(&self) -> Shadow {
        Shadow::open(&self.shadow_dir, &self.workspace).expect("open the shadow")
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.workspace.join(relative)
    }

    pub fn write(&self, relative: &str, content: impl AsRef<[u8]>) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("folders");
        std::fs::write(path, content).expect("write");
    }

    pub fn read(&self, relative: &str) -> Vec<u8> {
        std::fs::read(self.path(relative))
            .unwrap_or_else(|error| panic!("read {relative}: {error}"))
    }

    pub fn mode(&self, relative: &str) -> u32 {
        std::fs::symlink_metadata(self.path(relative)).expect("metadata").permissions().mode()
            & 0o777
    }

    pub fn chmod(&self, relative: &str, mode: u32) {
        std::fs::set_permissions(self.path(relative), std::fs::Permissions::from_mode(mode))
            .expect("chmod");
    }

    /// The paths in a snapshot's tree, read with git itself.
    pub fn tree_paths(&self, commit: &flame_checkpoint::CommitId) -> Vec<String> {
        let output = Command::new("git")
            .args(["ls-tree", "-r", "-z", "--name-only", commit.as_str()])
            .env("GIT_DIR", &self.shadow_dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .expect("git ls-tree");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        output
            .stdout
            .split(|byte| *byte == 0)
            .filter(|path| !path.is_empty())
            .map(|path| String::from_utf8(path.to_vec()).expect("UTF-8"))
            .collect()
    }
}

/// Runs git in `folder` the way a person would, with no configuration of the person's.
pub fn git(folder: &Path, args: &[&str]) {
    let mut command = Command::new("git");
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("GIT_") {
            command.env_remove(name);
        }
    }
    let output = command
        .args(args)
        .current_dir(folder)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Ann")
        .env("GIT_AUTHOR_EMAIL", "ann@example.com")
        .env("GIT_COMMITTER_NAME", "Ann")
        .env("GIT_COMMITTER_EMAIL", "ann@example.com")
        .output()
        .expect("run git");
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// Every file under `folder` (recursively, symlinks not followed) with its bytes, permissions
/// and modification time, so that any change to it shows.
pub fn fingerprint(folder: &Path) -> BTreeMap<PathBuf, (Vec<u8>, u32, i64, i64)> {
    let mut found = BTreeMap::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).expect("list") {
            let path = entry.expect("entry").path();
            let metadata = std::fs::symlink_metadata(&path).expect("metadata");
            let relative = path.strip_prefix(folder).expect("inside").to_path_buf();
            if metadata.is_dir() {
                pending.push(path);
                found.insert(relative, (Vec::new(), metadata.mode(), 0, 0));
            } else {
                let content = if metadata.file_type().is_symlink() {
                    std::fs::read_link(&path).expect("link").into_os_string().into_encoded_bytes()
                } else {
                    std::fs::read(&path).expect("read")
                };
                found.insert(
                    relative,
                    (content, metadata.mode(), metadata.mtime(), metadata.mtime_nsec()),
                );
            }
        }
    }
    found
}

/// Deterministic bytes that are not text and do not compress (xorshift64).
pub fn binary(length: usize, seed: u8) -> Vec<u8> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64 ^ u64::from(seed).wrapping_mul(0x0100_0000_01b3);
    (0..length)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}
