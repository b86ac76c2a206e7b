//! The worktrees the tools' tests run on.

use super::{Sandbox, ToolOutput, call};
use serde_json::Value;
use std::fs;
use std::path::Path;

/// A worktree with code in several languages, a `.gitignore`d file, a `.git` directory,
/// and links pointing in and out; and a directory outside it.
pub(crate) fn fixture() -> (tempfile::TempDir, tempfile::TempDir, Sandbox) {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let r = dir.path();
    fs::write(outside.path().join("secret.txt"), "OUTSIDE_SECRET\n").unwrap();
    fs::create_dir_all(r.join("src/nested")).unwrap();
    fs::create_dir_all(r.join(".git")).unwrap();
    fs::write(r.join(".git/config"), "needle_in_git\n").unwrap();
    fs::write(r.join(".gitignore"), "ignored.log\nbuild/\n").unwrap();
    fs::write(r.join("ignored.log"), "needle_ignored\n").unwrap();
    fs::create_dir_all(r.join("build")).unwrap();
    fs::write(r.join("build/out.rs"), "fn needle_build() {}\n").unwrap();
    fs::write(
        r.join("src/lib.rs"),
        "//! lib\npub struct Parser {\n    n: u32,\n}\n\npub fn parse_args(x: u32) -> u32 {\n    x + 1 // needle_rs\n}\n\nmacro_rules! shout { () => {} }\n",
    )
    .unwrap();
    fs::write(
        r.join("src/nested/tool.py"),
        "import os\n\nclass Parser:\n    def parse_args(self):\n        return parse_args_helper()  # needle_py\n",
    )
    .unwrap();
    fs::write(
        r.join("src/app.ts"),
        "export interface Options {}\nexport const parseArgs = (a: string) => a;\nexport default class App {}\n",
    )
    .unwrap();
    fs::write(
        r.join("main.go"),
        "package main\n\nfunc (s *Server) Serve() error {\n\treturn nil\n}\ntype Server struct{}\n",
    )
    .unwrap();
    fs::write(
        r.join("util.c"),
        "#define MAX_LEN 10\nstatic int count_words(const char *s) {\n  return count_words(s + 1);\n}\nint count_words(const char *s);\n",
    )
    .unwrap();
    fs::write(r.join("blob.bin"), b"abc\0def needle_rs").unwrap();
    let big: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
    fs::write(r.join("big.txt"), big).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), r.join("escape.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path(), r.join("escape_dir")).unwrap();
    std::os::unix::fs::symlink("src/lib.rs", r.join("inner_link.rs")).unwrap();
    std::os::unix::fs::symlink("../../nowhere", r.join("dangling_out")).unwrap();
    let sb = Sandbox::new(r).unwrap();
    (dir, outside, sb)
}

pub(crate) fn run(sb: &Sandbox, name: &str, input: Value) -> ToolOutput {
    call(sb, name, &input)
}

/// A worktree of `n` text files of 256 KiB each: a search over it takes a while.
pub(crate) fn heavy(dir: &Path, n: usize) {
    let line = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod\n";
    let text = line.repeat(256 * 1024 / line.len());
    for i in 0..n {
        fs::write(dir.join(format!("f{i:04}.txt")), &text).unwrap();
    }
}

/// A pattern that matches nothing but makes the matcher work on every byte.
pub(crate) const SLOW_PATTERN: &str = r"(?i)\w{3,}\s+\w{3,}\s+\w{3,}\s+\w*zq";
