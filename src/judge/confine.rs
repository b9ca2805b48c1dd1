//! Confinement of a worker, set up from both sides of `exec`: what the
//! parent arranges just before the worker starts (a session of its own, a
//! parent-death signal), and what the worker does to itself before it
//! loads candidate code (a PID namespace whose first process it is,
//! Landlock, the terminal and stdin out of reach).
//!
//! Every step is tried and its outcome recorded in [`Protections`]: a
//! kernel without a feature gives a weaker sandbox, never a refusal to
//! judge. The worker reports what is in force in its first frame, which
//! `harness doctor` and `harness check --json` show.
//!
//! It has `unsafe` (as `worker`, `library`, `measure` and `buildbox` do):
//! `fork`, `unshare`, `kill(-1)` and `pre_exec`, each with its reason.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::Command;

use serde::{Deserialize, Serialize};

/// One protection: whether it is in force, and what it does or why not.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Protection {
    pub active: bool,
    pub detail: String,
}

impl Protection {
    pub fn on(detail: impl Into<String>) -> Protection {
        Protection { active: true, detail: detail.into() }
    }
    pub fn off(detail: impl Into<String>) -> Protection {
        Protection { active: false, detail: detail.into() }
    }
}

/// What a worker found in force, as it reports it (and `--json` names it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Protections {
    /// Each case runs in a process forked for it from the loaded worker.
    pub process_per_case: Protection,
    /// The worker is pid 1 of its own PID namespace.
    pub pid_namespace: Protection,
    /// A user namespace, needed for the PID namespace when not root.
    pub user_namespace: Protection,
    /// The worker dies with the harness (`PR_SET_PDEATHSIG`).
    pub parent_death_signal: Protection,
    /// Landlock: the file system is read-only but for the scratch folder.
    pub filesystem: Protection,
    /// Landlock ABI 6: no signals to processes outside the sandbox.
    pub signals: Protection,
    /// No controlling terminal: `/dev/tty` cannot be opened.
    pub no_terminal: Protection,
    /// Address space, CPU time and core dumps limited (`setrlimit`).
    pub resource_limits: Protection,
}

impl Protections {
    /// Each protection with its name as `--json` spells it.
    pub fn list(&self) -> [(&'static str, &Protection); 8] {
        [
            ("process_per_case", &self.process_per_case),
            ("pid_namespace", &self.pid_namespace),
            ("user_namespace", &self.user_namespace),
            ("parent_death_signal", &self.parent_death_signal),
            ("filesystem", &self.filesystem),
            ("signals", &self.signals),
            ("no_terminal", &self.no_terminal),
            ("resource_limits", &self.resource_limits),
        ]
    }
}

/// Parent side: makes the worker `cmd` will start the leader of a session
/// of its own (so it has no controlling terminal and its process group can
/// be killed whole) and gives it `PR_SET_PDEATHSIG = SIGKILL`, so it dies
/// when the thread that started it does, even if the harness is killed
/// with SIGKILL.
pub fn before_exec(cmd: &mut Command) {
    let parent = rustix::process::getpid();
    // SAFETY: the closure runs between fork and exec in the child; it only
    // makes system calls (setsid, prctl, getppid), which are
    // async-signal-safe, and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::setsid()?;
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            // The parent may have died before the death signal was armed.
            if rustix::process::getppid() != Some(parent) {
                return Err(std::io::Error::other("the harness is gone"));
            }
            Ok(())
        });
    }
}

/// Parent side, for cargo: a process group of its own (so a deadline, a
/// new save or quitting can kill cargo with every build script it runs)
/// and `PR_SET_PDEATHSIG = SIGKILL`.
pub fn group_of_its_own(cmd: &mut Command) {
    let parent = rustix::process::getpid();
    cmd.process_group(0);
    // SAFETY: as in `before_exec`: system calls only, no allocation.
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            if rustix::process::getppid() != Some(parent) {
                return Err(std::io::Error::other("the harness is gone"));
            }
            Ok(())
        });
    }
}

/// Which process of the worker's pair this is.
pub enum Role {
    /// pid 1 of a fresh PID namespace: judges the cases.
    Init,
    /// The process the harness started, waiting for the namespace's first
    /// process (`pid`) and passing on how it ended.
    Outer(i32),
    /// No namespace: this one process judges the cases.
    Alone,
}

/// Moves the worker into a PID namespace of its own and forks its first
/// process, which judges the cases; when that process exits, the kernel
/// kills every process left in the namespace, whatever candidate code
/// started (`setsid` does not escape a namespace). Must run while the
/// worker is single-threaded, before anything else.
pub fn enter_pid_namespace(p: &mut Protections) -> Role {
    let root = rustix::process::geteuid().is_root();
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    let flags = if root { libc::CLONE_NEWPID } else { libc::CLONE_NEWUSER | libc::CLONE_NEWPID };
    // SAFETY: the worker is single-threaded here (CLONE_NEWUSER requires
    // it); unshare only changes the namespaces this process's future
    // children are created in (and its user namespace).
    if unsafe { libc::unshare(flags) } != 0 {
        let e = std::io::Error::last_os_error();
        let what = if root { "CLONE_NEWPID" } else { "CLONE_NEWUSER | CLONE_NEWPID" };
        p.pid_namespace = Protection::off(format!("unshare({what}) failed: {e}"));
        p.user_namespace = Protection::off(if root { "not needed: running as root".into() } else { format!("{e}") });
        return Role::Alone;
    }
    if root {
        p.user_namespace = Protection::off("not needed: running as root");
    } else {
        // Map our own ids, so files keep their owner.
        let map = |file: &str, text: String| std::fs::write(format!("/proc/self/{file}"), text);
        let mapped = map("setgroups", "deny".into())
            .and_then(|_| map("uid_map", format!("{uid} {uid} 1\n")))
            .and_then(|_| map("gid_map", format!("{gid} {gid} 1\n")));
        p.user_namespace = match mapped {
            Ok(()) => Protection::on("an unprivileged user namespace, ids mapped to themselves"),
            Err(e) => Protection::off(format!("created, but the id maps could not be written: {e}")),
        };
    }
    // SAFETY: single-threaded, so the child may run any code after fork.
    match unsafe { libc::fork() } {
        0 => {
            // The namespace dies with this process; this process dies with
            // the outer one, and the outer one with the harness.
            let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
            p.pid_namespace =
                Protection::on("the worker is pid 1 of its own PID namespace: every process it starts dies with it");
            Role::Init
        }
        -1 => {
            let e = std::io::Error::last_os_error();
            p.pid_namespace = Protection::off(format!("fork into the namespace failed: {e}"));
            Role::Alone
        }
        pid => Role::Outer(pid),
    }
}

/// The outer process: waits for the namespace's first process and ends
/// the same way, so the harness sees how the worker ended.
pub fn relay(pid: i32) -> i32 {
    let pid = rustix::process::Pid::from_raw(pid).expect("a forked pid is positive");
    loop {
        match rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty()) {
            Ok(Some((_, status))) => {
                if let Some(code) = status.exit_status() {
                    return code;
                }
                if let Some(sig) = status.terminating_signal() {
                    // SAFETY: restoring the default action and raising the
                    // signal in this single-threaded process ends it the way
                    // the inner one ended.
                    unsafe {
                        libc::signal(sig, libc::SIG_DFL);
                        libc::raise(sig);
                    }
                    return 128 + sig;
                }
            }
            Ok(None) => continue,
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return 3,
        }
    }
}

/// For a worker that runs candidate code itself rather than in a process
/// per case (the measuring worker): the code must not run as pid 1, which
/// ignores the signals it would die of (its own SIGABRT, SIGXCPU). So pid 1
/// only keeps the namespace alive, and this process forks the one that does
/// the work as pid 2 of the namespace, waits for it and ends the way it
/// ended, killing pid 1 and with it whatever the work left behind.
/// Returns `None` in the process that does the work (also when no
/// namespace could be made), or the exit code of the one that waited.
pub fn enter_pid_namespace_as_task(p: &mut Protections) -> Option<i32> {
    let init = match enter_pid_namespace(p) {
        Role::Alone => return None,
        Role::Init => loop {
            // Killed with the namespace's outer process (PR_SET_PDEATHSIG).
            // SAFETY: pause has no preconditions.
            unsafe { libc::pause() };
        },
        Role::Outer(init) => init,
    };
    let stop_init = || {
        // SAFETY: `init` is this process's own child; killing and reaping it
        // ends the namespace and every process in it.
        unsafe {
            libc::kill(init, libc::SIGKILL);
            libc::waitpid(init, std::ptr::null_mut(), 0);
        }
    };
    match fork_case() {
        Ok(0) => {
            let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
            p.pid_namespace =
                Protection::on("the worker runs in its own PID namespace: every process it starts dies with it");
            None
        }
        Ok(task) => {
            let code = wait_for(task, stop_init);
            Some(code)
        }
        Err(e) => {
            stop_init();
            p.pid_namespace = Protection::off(format!("fork into the namespace failed: {e}"));
            None
        }
    }
}

/// Waits for the child `pid`, runs `then`, and ends the way the child
/// ended (or returns its exit code).
fn wait_for(pid: i32, then: impl FnOnce()) -> i32 {
    let pid = rustix::process::Pid::from_raw(pid).expect("a forked pid is positive");
    let status = loop {
        match rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty()) {
            Ok(Some((_, status))) => break Some(status),
            Ok(None) | Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break None,
        }
    };
    then();
    let Some(status) = status else { return 3 };
    if let Some(sig) = status.terminating_signal() {
        // No core dump of this process, which did nothing wrong.
        let none = rustix::process::Rlimit { current: Some(0), maximum: Some(0) };
        let _ = rustix::process::setrlimit(rustix::process::Resource::Core, none);
        // SAFETY: restoring the default action and raising the signal in
        // this single-threaded process ends it the way the child ended.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
        return 128 + sig;
    }
    status.exit_status().unwrap_or(3)
}

/// In the namespace's first process: kills every other process in the
/// namespace (what a case left behind) and reaps them. Does nothing
/// elsewhere: `kill(-1)` outside a namespace of our own would reach every
/// process of the user.
pub fn kill_the_rest(role: &Role) {
    if !matches!(role, Role::Init) || rustix::process::getpid().as_raw_nonzero().get() != 1 {
        return;
    }
    // SAFETY: we are pid 1 of a PID namespace we created: kill(-1) reaches
    // only the processes of this namespace, never this one.
    unsafe { libc::kill(-1, libc::SIGKILL) };
    // Every other process is dying: wait until none is left.
    while let Ok(Some(_)) | Err(rustix::io::Errno::INTR) =
        rustix::process::waitpid(None, rustix::process::WaitOptions::empty())
    {}
}

/// Forks the process that runs one case. Returns 0 in the child.
pub fn fork_case() -> std::io::Result<i32> {
    // SAFETY: the worker never starts a thread (candidate code runs only in
    // these children, on a thread the child starts), so the child of this
    // fork may run any code.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()),
        pid => Ok(pid),
    }
}

/// Ends a case's process at once, without running exit handlers that
/// belong to the worker.
pub fn exit_now(code: i32) -> ! {
    let _ = std::io::stderr().flush();
    // SAFETY: `_exit` takes any status and never returns.
    unsafe { libc::_exit(code) }
}

/// Checks that no controlling terminal can be opened (the parent made the
/// worker a session leader without one).
pub fn check_terminal(p: &mut Protections) {
    p.no_terminal = match std::fs::File::open("/dev/tty") {
        Err(_) => Protection::on("no controlling terminal (a session of its own): /dev/tty cannot be opened"),
        Ok(_) => Protection::off("/dev/tty can be opened: the worker still has a controlling terminal"),
    };
}

/// Landlock: everything readable and executable, nothing writable except
/// `scratch` (the worker's cwd) and `/dev/null`; with ABI 6, no signals to
/// processes outside the sandbox and no abstract sockets outside it.
pub fn restrict(p: &mut Protections, scratch: &std::path::Path) {
    use landlock::{
        ABI, Access, AccessFs, CompatLevel, Compatible, LandlockStatus, Ruleset, RulesetAttr, RulesetCreatedAttr,
        RulesetStatus, Scope, path_beneath_rules,
    };
    let abi = ABI::V6;
    let ruleset = || -> Result<landlock::RestrictionStatus, landlock::RulesetError> {
        Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(abi))?
            .scope(Scope::Signal | Scope::AbstractUnixSocket)?
            .create()?
            .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))?
            .add_rules(path_beneath_rules([scratch, std::path::Path::new("/dev/null")], AccessFs::from_all(abi)))?
            .restrict_self()
    };
    match ruleset() {
        Err(e) => {
            p.filesystem = Protection::off(format!("Landlock failed: {e}"));
            p.signals = Protection::off("needs Landlock");
        }
        Ok(status) => {
            let kernel = match status.landlock {
                LandlockStatus::Available { effective_abi, kernel_abi } => {
                    Some(kernel_abi.unwrap_or(effective_abi as i32))
                }
                _ => None,
            };
            let why_not = match status.landlock {
                LandlockStatus::NotEnabled => {
                    "Landlock is built into the kernel but not enabled (boot with lsm=…,landlock)"
                }
                LandlockStatus::NotImplemented => {
                    "the kernel has no Landlock (Linux 5.13 or later, CONFIG_SECURITY_LANDLOCK)"
                }
                _ => "Landlock is not enforced",
            };
            let enforced = status.ruleset != RulesetStatus::NotEnforced;
            p.filesystem = match (status.ruleset, kernel) {
                (RulesetStatus::NotEnforced, _) | (_, None) => Protection::off(why_not),
                (RulesetStatus::FullyEnforced, Some(v)) => Protection::on(format!(
                    "Landlock ABI {v}: everything read-only except a fresh scratch folder (the worker's cwd)"
                )),
                (_, Some(v)) => Protection::on(format!(
                    "Landlock ABI {v}, partly: writes outside the scratch folder are refused, some finer rights are not"
                )),
            };
            p.signals = match kernel {
                Some(v) if v >= 6 && enforced => {
                    Protection::on(format!("Landlock ABI {v}: no signals to processes outside the sandbox"))
                }
                Some(v) => Protection::off(format!("Landlock ABI {v} cannot scope signals (ABI 6 can)")),
                None => Protection::off(why_not),
            };
        }
    }
}
