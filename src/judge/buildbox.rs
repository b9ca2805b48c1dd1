//! Confinement of a solution's `cargo build`: cargo and the build scripts
//! it runs are candidate code too.
//!
//! Everything happens between fork and exec, in the process the harness
//! starts (the "keeper"), with system calls only (no allocation: the
//! harness is multi-threaded). The keeper:
//! - unshares a PID namespace (with a user namespace when not root) and
//!   forks cargo as its first process, so that when cargo ends, or dies
//!   with the keeper when the harness is SIGKILLed, the kernel ends every
//!   build script it started, `setsid` or not;
//! - applies a Landlock ruleset built beforehand in the parent: everything
//!   readable, writable only the build's target folder (its `TMPDIR` is
//!   inside it), the registry caches of `CARGO_HOME`, the crate's own
//!   `Cargo.lock` (the file, which must exist) and `/dev/null`; no signals
//!   out of the sandbox (ABI 6);
//! - waits for cargo and ends the way it ended, so the harness sees
//!   cargo's status.
//!
//! Each step degrades on its own: without Landlock the build runs with
//! the user's rights, without namespaces cargo runs in the keeper's place.
//! [`report`] probes what is in force for `harness doctor`.

use std::ffi::CStr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::judge::confine::Protection;

/// What a confined build is given, prepared in the parent.
struct Jail {
    ruleset: Option<OwnedFd>,
    /// When not root: the id maps for a user namespace, written before
    /// the PID namespace can be made.
    maps: Option<(Vec<u8>, Vec<u8>)>,
    /// No sockets (seccomp), once the dependencies are in cargo's cache.
    no_network: Option<seccompiler::BpfProgram>,
}

/// The folders of `CARGO_HOME` a build writes to: the registry's index,
/// downloads and sources, and git checkouts.
const CARGO_HOME_WRITABLE: [&str; 2] = ["registry", "git"];

fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
}

/// The folders (and files) a build of `crate_dir` into `target` may write.
fn writable(target: &Path, crate_dir: &Path) -> Vec<PathBuf> {
    let mut paths = vec![target.to_path_buf(), PathBuf::from("/dev/null")];
    if let Some(home) = cargo_home().filter(|h| h.is_dir()) {
        // Made here when missing (cargo would make them on first use, and
        // a rule needs an existing path); Landlock cannot allow creating
        // files in CARGO_HOME's top folder without allowing bin/ too.
        for dir in CARGO_HOME_WRITABLE {
            let _ = std::fs::create_dir_all(home.join(dir));
            paths.push(home.join(dir));
        }
        // The lock files and the global cache tracker live at the top.
        for file in [".package-cache", ".package-cache-mutate", ".global-cache"] {
            let path = home.join(file);
            let _ = std::fs::OpenOptions::new().append(true).create(true).open(&path);
            paths.push(path);
        }
    }
    paths.push(crate_dir.join("Cargo.lock"));
    paths.retain(|p| p.exists());
    paths
}

/// Builds the Landlock ruleset in the parent; `None` when the kernel has
/// no Landlock (or refused it).
fn ruleset(writable: &[PathBuf]) -> Option<OwnedFd> {
    use landlock::{
        ABI, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr, Scope, path_beneath_rules,
    };
    // The kernel must have Landlock enabled.
    landlock_abi()?;
    let abi = ABI::V6;
    // Only writing is handled: reading is allowed everywhere anyway, and an
    // unhandled right costs no check on each of the thousands of files
    // rustc opens (handling reads too cost about 2 ms of CPU per build).
    let created = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_write(abi))
        .ok()?
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
        .ok()?
        .create()
        .ok()?
        .add_rules(path_beneath_rules(writable, AccessFs::from_write(abi)))
        .ok()?;
    created.into()
}

/// The kernel's Landlock ABI version, if it has Landlock enabled.
pub fn landlock_abi() -> Option<i32> {
    const VERSION: u32 = 1; // LANDLOCK_CREATE_RULESET_VERSION
    // SAFETY: with a null attribute and the VERSION flag the call only
    // returns a number.
    let v = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, VERSION) };
    (v > 0).then_some(v as i32)
}

/// Whether building `crate_dir` may need to download something: a
/// dependency that is not a path, missing from its `Cargo.lock` or from
/// cargo's download cache, or from git. Then the build keeps the network
/// (cargo fetches), and the next one, with everything cached, has none.
pub fn needs_network(crate_dir: &Path) -> bool {
    let read = |name: &str| std::fs::read_to_string(crate_dir.join(name)).ok()?.parse::<toml::Table>().ok();
    let Some(manifest) = read("Cargo.toml") else { return false };
    let lock = read("Cargo.lock").unwrap_or_default();
    let packages: Vec<&toml::Table> =
        lock.get("package").and_then(|p| p.as_array()).into_iter().flatten().filter_map(|p| p.as_table()).collect();
    let cached = |name: &str, version: &str| {
        let Some(home) = cargo_home() else { return false };
        let file = format!("{name}-{version}.crate");
        std::fs::read_dir(home.join("registry/cache"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|d| d.path().join(&file).is_file())
    };
    for p in &packages {
        let field = |k: &str| p.get(k).and_then(|v| v.as_str()).unwrap_or_default();
        match field("source") {
            "" => {}
            source if source.starts_with("registry+") || source.starts_with("sparse+") => {
                if !cached(field("name"), field("version")) {
                    return true;
                }
            }
            _ => return true,
        }
    }
    // Every dependency the manifest names beyond a path must be locked.
    let mut tables: Vec<&toml::Table> = Vec::new();
    let sections = ["dependencies", "build-dependencies", "dev-dependencies"];
    for sec in sections {
        tables.extend(manifest.get(sec).and_then(|t| t.as_table()));
    }
    for target in manifest.get("target").and_then(|t| t.as_table()).into_iter().flat_map(|t| t.values()) {
        for sec in sections {
            tables.extend(target.get(sec).and_then(|t| t.as_table()));
        }
    }
    tables.iter().flat_map(|t| t.iter()).any(|(name, dep)| {
        let local = dep.as_table().is_some_and(|d| d.contains_key("path"));
        let name = dep.get("package").and_then(|n| n.as_str()).unwrap_or(name);
        !local && !packages.iter().any(|p| p.get("name").and_then(|n| n.as_str()) == Some(name))
    })
}

fn prepare(target: &Path, crate_dir: &Path) -> Jail {
    let root = rustix::process::geteuid().is_root();
    let maps = (!root).then(|| {
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        (format!("{uid} {uid} 1\n").into_bytes(), format!("{gid} {gid} 1\n").into_bytes())
    });
    let no_network = (!needs_network(crate_dir)).then(crate::judge::confine::network_filter).and_then(Result::ok);
    Jail { ruleset: ruleset(&writable(target, crate_dir)), maps, no_network }
}

/// Confines the `cargo build` that `cmd` will start, writing into
/// `target`, for the crate at `crate_dir`. Sets `TMPDIR` to a folder in
/// `target`. Call after [`crate::judge::confine::group_of_its_own`], so
/// that cargo and its keeper share the process group the harness kills.
pub fn confine(cmd: &mut Command, target: &Path, crate_dir: &Path) {
    let tmp = target.join("tmp");
    let _ = std::fs::create_dir_all(&tmp);
    // Cargo writes the lock file only when it changes; a missing one is
    // created here (empty: cargo fills it), since the crate folder itself
    // stays read-only.
    let lock = crate_dir.join("Cargo.lock");
    if !lock.exists() {
        let _ = std::fs::write(&lock, b"");
    }
    cmd.env("TMPDIR", &tmp);
    // No compiler wrapper from the environment: one such as sccache writes
    // its cache outside the allowed folders and would fail the build; for
    // one small crate it saves nothing. (Setting them empty would override
    // cargo's config files too, but costs ~50 ms of CPU per build: cargo
    // then stops caching rustc's version info.)
    for var in ["RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "CARGO_BUILD_RUSTC_WRAPPER"] {
        cmd.env_remove(var);
    }
    let jail = prepare(target, crate_dir);
    if jail.no_network.is_some() {
        // Cargo then never tries the network, and says so if it must.
        cmd.env("CARGO_NET_OFFLINE", "true");
    }
    // SAFETY: the closure runs between fork and exec in the child. It makes
    // system calls only (unshare, open/write/close on prepared buffers,
    // prctl, landlock_restrict_self, seccomp, clone, waitpid, _exit) and allocates
    // nothing; the child is single-threaded, which unshare needs.
    unsafe {
        cmd.pre_exec(move || {
            enter(&jail);
            Ok(())
        });
    }
}

/// Writes `bytes` to the file `path` with raw calls.
///
/// SAFETY (for the caller): async-signal-safe; `path` is a C string.
unsafe fn write_file(path: &CStr, bytes: &[u8]) -> bool {
    // SAFETY: a valid C string and buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let ok = libc::write(fd, bytes.as_ptr().cast(), bytes.len()) == bytes.len() as isize;
        libc::close(fd);
        ok
    }
}

/// In the child, before exec. Returns in the process that goes on to exec
/// cargo; the keeper never returns.
fn enter(jail: &Jail) {
    // SAFETY: see `confine`: system calls only, on prepared buffers.
    unsafe {
        // This process runs harness code without exec'ing: any handler the
        // harness process installed is still here, and one (a SIGCHLD
        // handler writing to a pipe the keeper has closed, as wait-timeout's
        // does) would abort the keeper when cargo ends. Back to the defaults.
        for sig in 1..libc::SIGRTMIN() {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
        // Not root: a user namespace first, mapping our own ids, which
        // gives the right to make the PID namespace.
        let mut user = true;
        if let Some((uid, gid)) = &jail.maps {
            user = libc::unshare(libc::CLONE_NEWUSER) == 0;
            let mapped = user
                && write_file(c"/proc/self/setgroups", b"deny")
                && write_file(c"/proc/self/uid_map", uid)
                && write_file(c"/proc/self/gid_map", gid);
            if user && !mapped {
                // Unmapped, cargo could not write its own files.
                libc::_exit(127);
            }
        }
        let namespace = user && libc::unshare(libc::CLONE_NEWPID) == 0;
        if let Some(fd) = &jail.ruleset {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
            libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32);
        }
        // No sockets for cargo, rustc, build scripts and proc macros
        // (`install` only calls prctl and seccomp: no allocation).
        if let Some(program) = &jail.no_network {
            let _ = crate::judge::confine::install(program, 0);
        }
        if !namespace {
            return;
        }
        // A raw clone: glibc's fork would run atfork handlers, which may
        // take locks another thread of the harness held when it forked.
        let pid = libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_ulong, 0usize, 0usize, 0usize, 0usize);
        if pid == 0 {
            // cargo, pid 1 of the namespace: dies with its keeper.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
            return;
        }
        if pid < 0 {
            // No process could be made in the namespace: report it as
            // cargo failing to start.
            libc::_exit(127);
        }
        keep(pid as libc::pid_t)
    }
}

/// The keeper: lets go of every descriptor (the harness reads cargo's
/// pipes to their end, and waits for the exec of cargo), waits for cargo
/// and ends the same way.
fn keep(pid: libc::pid_t) -> ! {
    // SAFETY: system calls only; this process never returns to Rust code
    // that could use the descriptors closed here.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
            for fd in 0..1024 {
                libc::close(fd);
            }
        }
        let mut status = 0;
        loop {
            let r = libc::waitpid(pid, &mut status, 0);
            if r == pid {
                break;
            }
            if r < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(3);
            }
        }
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            libc::signal(sig, libc::SIG_DFL);
            libc::kill(libc::getpid(), sig);
            libc::_exit(128 + sig);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}

/// What confines builds on this machine, found by running a confined
/// shell the way a build runs: `(filesystem, pid_namespace, network)`.
pub fn report() -> (Protection, Protection, Protection) {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("harness-build-probe-{}-{n}", std::process::id()));
    let target = dir.join("target");
    let krate = dir.join("crate");
    if std::fs::create_dir_all(&target).and_then(|_| std::fs::create_dir_all(&krate)).is_err() {
        let off = || Protection::off("cannot create a folder to probe builds in");
        return (off(), off(), off());
    }
    // The shell prints its pid (1 in a namespace of its own) and its
    // seccomp mode (2: filtered), then tries to write into the crate
    // folder, which must fail.
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg("echo $$; grep '^Seccomp:' /proc/self/status; echo x > src.rs 2>/dev/null && echo wrote")
        .current_dir(&krate)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    crate::judge::confine::group_of_its_own(&mut cmd);
    confine(&mut cmd, &target, &krate);
    let out = cmd.output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    let mut lines = out.lines();
    let pid_ns = match lines.next() {
        Some("1") => Protection::on(
            "cargo is pid 1 of its own PID namespace: its build scripts end with it, even if the harness is killed",
        ),
        Some(_) => Protection::off(
            "no PID namespace could be made: build scripts are killed with cargo's process group, \
             but not if the harness itself is killed with SIGKILL",
        ),
        None => Protection::off("the probe did not run"),
    };
    let network = match lines.next().map(|l| l.split_whitespace().last().unwrap_or_default()) {
        Some("2") => Protection::on(
            "seccomp: once a solution's dependencies are in cargo's cache (and locked), its build (cargo, \
             rustc, build scripts, proc macros) cannot open a socket, and cargo runs offline; a build that \
             must download keeps the network",
        ),
        _ => Protection::off("no seccomp filter: a solution's build scripts can use the network"),
    };
    let fs = match (landlock_abi(), lines.next()) {
        (Some(v), None) => Protection::on(format!(
            "Landlock ABI {v}: a solution's build writes only its target folder, the registry caches \
             and its Cargo.lock"
        )),
        (Some(v), Some(_)) => Protection::off(format!("Landlock ABI {v} is there, but the probe wrote outside")),
        (None, _) => Protection::off("no Landlock: a solution's build scripts can write wherever the user can"),
    };
    (fs, pid_ns, network)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_dependency_not_locked_or_not_cached_needs_the_network() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        let manifest = "[package]\nname = \"s\"\nversion = \"0.1.0\"\n[dependencies]\n";
        write("Cargo.toml", &format!("{manifest}c = {{ path = \"../c\" }}\n"));
        assert!(!needs_network(dir.path()), "path dependencies only, no lock yet");
        write("Cargo.toml", &format!("{manifest}c = {{ path = \"../c\" }}\nnot-a-real-crate-x = \"1\"\n"));
        assert!(needs_network(dir.path()), "a registry dependency nobody locked");
        write(
            "Cargo.lock",
            "version = 4\n[[package]]\nname = \"not-a-real-crate-x\"\nversion = \"1.0.0\"\n\
             source = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
        );
        assert!(needs_network(dir.path()), "locked but never downloaded");
        write(
            "Cargo.lock",
            "version = 4\n[[package]]\nname = \"x\"\nversion = \"1.0.0\"\nsource = \"git+https://example.invalid/x\"\n",
        );
        write("Cargo.toml", manifest);
        assert!(needs_network(dir.path()), "a git source");
    }

    #[test]
    fn a_confined_program_ends_with_its_own_status_even_under_an_inherited_sigchld_handler() {
        use wait_timeout::ChildExt;
        // wait-timeout installs a process-wide SIGCHLD handler, as a
        // library in the harness process could; the keeper inherits it.
        let mut child = Command::new("true").spawn().unwrap();
        child.wait_timeout(std::time::Duration::from_secs(10)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (target, krate) = (dir.path().join("target"), dir.path().join("crate"));
        std::fs::create_dir_all(&target).unwrap();
        std::fs::create_dir_all(&krate).unwrap();
        for code in [0, 1, 7] {
            let mut cmd = Command::new("/bin/sh");
            cmd.arg("-c").arg(format!("exit {code}"));
            crate::judge::confine::group_of_its_own(&mut cmd);
            confine(&mut cmd, &target, &krate);
            assert_eq!(cmd.status().unwrap().code(), Some(code));
        }
    }
}
