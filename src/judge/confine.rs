//! Confinement of a worker, which it sets up itself, first thing after
//! `exec` and before it loads candidate code: a session of its own and a
//! parent-death signal ([`detach`]), then a PID namespace whose first
//! process it is, Landlock, the terminal and stdin out of reach. The parent
//! only names itself in the environment ([`name_parent`]): with nothing to
//! run between fork and exec, the standard library starts the worker with
//! `posix_spawn` (the kernel's vfork path) instead of a `fork` that copies
//! the harness's page tables, 0.2 ms instead of 5 ms a worker (`cargo bench
//! --bench save_to_verdict`).
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
#[serde(default)]
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
    /// seccomp: no sockets (TCP, UDP, unix) and no io_uring.
    pub network: Protection,
    /// seccomp: a case cannot start processes or programs; the
    /// namespace's `pid_max` caps what the library's initialisers start.
    pub processes: Protection,
    /// The scratch folder is a small tmpfs in a mount namespace.
    pub disk: Protection,
}

impl Protections {
    /// Each protection with its name as `--json` spells it.
    pub fn list(&self) -> [(&'static str, &Protection); 11] {
        [
            ("process_per_case", &self.process_per_case),
            ("pid_namespace", &self.pid_namespace),
            ("user_namespace", &self.user_namespace),
            ("parent_death_signal", &self.parent_death_signal),
            ("filesystem", &self.filesystem),
            ("signals", &self.signals),
            ("no_terminal", &self.no_terminal),
            ("resource_limits", &self.resource_limits),
            ("network", &self.network),
            ("processes", &self.processes),
            ("disk", &self.disk),
        ]
    }
}

/// How a worker ends when [`detach`] finds that the harness that started
/// it is gone (nobody reads it; a test does).
pub const ORPHANED: i32 = 4;

/// The variable that names the worker's parent, for [`detach`].
const PARENT_VAR: &str = "HARNESS_WORKER_PARENT";

/// Parent side: tells the worker `cmd` will start which process started
/// it, so that [`detach`] can tell whether it has outlived it.
pub fn name_parent(cmd: &mut Command) {
    cmd.env(PARENT_VAR, rustix::process::getpid().as_raw_nonzero().to_string());
}

/// Worker side, the first thing a worker does: leads a session of its own
/// (so it has no controlling terminal, and its process group, which is what
/// it and everything candidate code starts belong to, can be killed whole)
/// and arms `PR_SET_PDEATHSIG = SIGKILL`, so it dies when the thread that
/// started it does, even if the harness is killed with SIGKILL. `Err` when
/// the parent it was started by is already gone (it may have died before
/// the signal was armed): the worker must end at once. Only harness code
/// has run before this.
pub fn detach() -> Result<(), &'static str> {
    rustix::process::setsid().map_err(|_| "cannot lead a session of its own")?;
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
        .map_err(|_| "cannot arm the parent-death signal")?;
    let named = std::env::var(PARENT_VAR).ok().and_then(|p| p.parse::<i32>().ok());
    // SAFETY: removing a variable while no other thread runs (the worker
    // is single-threaded here); candidate code does not need to see it.
    unsafe { std::env::remove_var(PARENT_VAR) };
    match named {
        Some(parent) if rustix::process::getppid().map(|p| p.as_raw_nonzero().get()) != Some(parent) => {
            Err("the harness that started it is gone")
        }
        _ => Ok(()),
    }
}

/// Parent side, for cargo: a process group of its own (so a deadline, a
/// new save or quitting can kill cargo with every build script it runs)
/// and `PR_SET_PDEATHSIG = SIGKILL`.
pub fn group_of_its_own(cmd: &mut Command) {
    let parent = rustix::process::getpid();
    cmd.process_group(0);
    // SAFETY: the closure runs between fork and exec in the child; it only
    // makes system calls (prctl, getppid), which are async-signal-safe,
    // and allocates nothing.
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
/// started (`setsid` does not escape a namespace). The same `unshare`
/// makes a mount namespace, in which the scratch folder (the cwd) becomes
/// a small tmpfs ([`SCRATCH_BYTES`]) that is gone with the namespace. Must
/// run while the worker is single-threaded, before anything else.
pub fn enter_pid_namespace(p: &mut Protections) -> Role {
    let root = rustix::process::geteuid().is_root();
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    let pid = if root { libc::CLONE_NEWPID } else { libc::CLONE_NEWUSER | libc::CLONE_NEWPID };
    // SAFETY: the worker is single-threaded here (CLONE_NEWUSER requires
    // it); unshare only changes the namespaces of this process (the PID
    // namespace: of its future children). Without a mount namespace (a
    // kernel or container that refuses it) the PID namespace is still
    // worth having.
    let mount_ns = unsafe { libc::unshare(pid | libc::CLONE_NEWNS) } == 0;
    if !mount_ns && unsafe { libc::unshare(pid) } != 0 {
        let e = std::io::Error::last_os_error();
        let what = if root { "CLONE_NEWPID" } else { "CLONE_NEWUSER | CLONE_NEWPID" };
        p.pid_namespace = Protection::off(format!("unshare({what}) failed: {e}"));
        p.user_namespace = Protection::off(if root { "not needed: running as root".into() } else { format!("{e}") });
        p.disk = Protection::off(format!(
            "no mount namespace ({e}): candidate code can fill the disk through the scratch folder"
        ));
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
    p.disk = if mount_ns {
        match scratch_tmpfs() {
            Ok(()) => Protection::on(format!(
                "the scratch folder is a {} MiB tmpfs ({SCRATCH_FILES} files) in the worker's own mount \
                 namespace: a write past it fails (ENOSPC) and the case is `refused`; emptied after a case \
                 that wrote to it, gone with the worker",
                SCRATCH_BYTES >> 20
            )),
            Err(e) => Protection::off(format!("a mount namespace, but the scratch tmpfs failed: {e}")),
        }
    } else {
        Protection::off("unshare(CLONE_NEWNS) failed: the scratch folder is on the real disk, unbounded")
    };
    // The outer process holds this pipe's write end for as long as it
    // lives, so the namespace's first process can tell whether it died
    // before the death signal below was armed (its `getppid` is 0 inside
    // the namespace, so it cannot ask that).
    let alive = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).ok();
    // SAFETY: single-threaded, so the child may run any code after fork.
    match unsafe { libc::fork() } {
        0 => {
            // The namespace dies with this process; this process dies with
            // the outer one, and the outer one with the harness.
            let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
            if let Some((read, write)) = alive {
                drop(write);
                if outer_is_gone(&read) {
                    // SAFETY: _exit ends this process at once, as a child
                    // of fork should.
                    unsafe { libc::_exit(ORPHANED) };
                }
            }
            p.pid_namespace =
                Protection::on("the worker is pid 1 of its own PID namespace: every process it starts dies with it");
            p.processes = Protection::off(match cap_tasks() {
                Ok(()) => format!("pid_max {PID_MAX}: at most {} tasks in the worker's namespace", PID_MAX - 1),
                Err(e) => format!("no per-namespace pid_max (Linux 6.14+): {e}"),
            });
            Role::Init
        }
        -1 => {
            let e = std::io::Error::last_os_error();
            p.pid_namespace = Protection::off(format!("fork into the namespace failed: {e}"));
            Role::Alone
        }
        pid => {
            // Held, never written, until this process ends.
            if let Some((_, write)) = alive {
                std::mem::forget(write);
            }
            Role::Outer(pid)
        }
    }
}

/// Whether the write end of the pipe `read` belongs to is closed: with
/// every writer gone, a read end polls readable (end of file) at once.
fn outer_is_gone(read: &rustix::fd::OwnedFd) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut fds = [PollFd::new(read, PollFlags::IN)];
    let now = Timespec { tv_sec: 0, tv_nsec: 0 };
    poll(&mut fds, Some(&now)).is_ok_and(|n| n > 0)
}

/// Size of the scratch tmpfs: what candidate code may write, in all.
pub const SCRATCH_BYTES: u64 = 16 << 20;
/// Files (inodes) the scratch tmpfs holds.
pub const SCRATCH_FILES: u64 = 1024;
/// The PID namespace's `pid_max`: pids run from 1 to 300, so at most 300
/// tasks (threads included) are alive in it at once. 301 is the least
/// the kernel accepts.
const PID_MAX: u32 = 301;

/// In a fresh mount namespace: stops mounts propagating back to the host
/// and mounts a small tmpfs over the cwd, then enters it.
fn scratch_tmpfs() -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let cwd = std::env::current_dir()?;
    let mut path = cwd.as_os_str().as_bytes().to_vec();
    path.push(0);
    let options = format!("size={SCRATCH_BYTES},nr_inodes={SCRATCH_FILES},mode=0700\0");
    // SAFETY: C strings that outlive the calls; mount(2) only reads them.
    unsafe {
        let flags = libc::MS_REC | libc::MS_PRIVATE;
        if libc::mount(std::ptr::null(), c"/".as_ptr(), std::ptr::null(), flags, std::ptr::null()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        if libc::mount(
            c"harness-scratch".as_ptr(),
            path.as_ptr().cast(),
            c"tmpfs".as_ptr(),
            flags,
            options.as_ptr().cast(),
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    // The cwd is still the folder under the mount: step onto the tmpfs.
    std::env::set_current_dir(&cwd)
}

/// In the namespace's first process: caps the pids of the namespace.
fn cap_tasks() -> std::io::Result<()> {
    std::fs::write("/proc/sys/kernel/pid_max", PID_MAX.to_string())
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

/// An act the sandbox refuses a case, as counted for its verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    /// fork, vfork, or a clone that is not a thread.
    Process,
    /// execve, execveat.
    Program,
    /// socket(2), of any family.
    Socket,
    /// io_uring_setup (its operations would bypass seccomp).
    IoUring,
    /// The scratch tmpfs was full after the case.
    Disk,
}

impl Act {
    pub const ALL: [Act; 5] = [Act::Process, Act::Program, Act::Socket, Act::IoUring, Act::Disk];

    /// What candidate code tried, as a verdict's message says it.
    pub fn what(self) -> String {
        match self {
            Act::Process => "start a process (fork/clone; candidate code may start none)".into(),
            Act::Program => "run a program (execve)".into(),
            Act::Socket => "open a socket (candidate code has no network and no unix sockets)".into(),
            Act::IoUring => "use io_uring".into(),
            Act::Disk => format!("write more than the scratch folder's {} MiB", SCRATCH_BYTES >> 20),
        }
    }
}

/// How often a case tried each [`Act`] (index: its place in `Act::ALL`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refusals(pub [u32; 5]);

impl Refusals {
    pub const BYTES: usize = 20;

    pub fn any(&self) -> bool {
        self.0.iter().any(|&n| n > 0)
    }

    pub fn count(&self, act: Act) -> u32 {
        self.0[act as usize]
    }

    pub fn encode(&self) -> [u8; Self::BYTES] {
        let mut b = [0u8; Self::BYTES];
        for (i, n) in self.0.iter().enumerate() {
            b[i * 4..i * 4 + 4].copy_from_slice(&n.to_le_bytes());
        }
        b
    }

    pub fn decode(b: &[u8]) -> Option<Refusals> {
        if b.len() != Self::BYTES {
            return None;
        }
        let mut r = Refusals::default();
        for (i, n) in r.0.iter_mut().enumerate() {
            *n = u32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().ok()?);
        }
        Some(r)
    }

    /// "it tried to open a socket (2 times)", every act tried.
    pub fn text(&self) -> String {
        let parts: Vec<String> = Act::ALL
            .iter()
            .filter(|a| self.count(**a) > 0)
            .map(|a| match (a, self.count(*a)) {
                (Act::Disk, _) => a.what(),
                (_, 1) => format!("{} (once)", a.what()),
                (_, n) => format!("{} ({n} times)", a.what()),
            })
            .collect();
        format!("the sandbox refused it: it tried to {}", parts.join("; and to "))
    }
}

/// After this many refused calls the worker ends the case at once: a
/// flood that ignores the errors stops in milliseconds instead of at the
/// time limit.
pub const REFUSALS_BEFORE_END: u32 = 10_000;

fn target_arch() -> Result<seccompiler::TargetArch, String> {
    seccompiler::TargetArch::try_from(std::env::consts::ARCH).map_err(|e| format!("seccomp filters: {e}"))
}

/// Socket and io_uring calls (the only ways to the network or to a unix
/// socket outside, io_uring's operations being out of seccomp's sight).
fn network_rules() -> Vec<(i64, Vec<seccompiler::SeccompRule>)> {
    vec![(libc::SYS_socket, vec![]), (libc::SYS_io_uring_setup, vec![])]
}

/// Starting processes and programs; threads (clone with CLONE_THREAD)
/// are allowed. clone3, whose flags seccomp cannot read, is refused apart
/// (see [`Supervisor`]).
fn process_rules() -> Result<Vec<(i64, Vec<seccompiler::SeccompRule>)>, String> {
    use seccompiler::{SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompRule};
    let not_thread =
        SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(libc::CLONE_THREAD as u64), 0)
            .and_then(|c| SeccompRule::new(vec![c]))
            .map_err(|e| e.to_string())?;
    #[allow(unused_mut)]
    let mut rules = vec![(libc::SYS_clone, vec![not_thread]), (libc::SYS_execve, vec![]), (libc::SYS_execveat, vec![])];
    #[cfg(target_arch = "x86_64")]
    rules.extend([(libc::SYS_fork, vec![]), (libc::SYS_vfork, vec![])]);
    Ok(rules)
}

fn compile(
    rules: Vec<(i64, Vec<seccompiler::SeccompRule>)>,
    action: seccompiler::SeccompAction,
) -> Result<seccompiler::BpfProgram, String> {
    let filter = seccompiler::SeccompFilter::new(
        rules.into_iter().collect(),
        seccompiler::SeccompAction::Allow,
        action,
        target_arch()?,
    )
    .map_err(|e| e.to_string())?;
    filter.try_into().map_err(|e: seccompiler::BackendError| e.to_string())
}

/// Installs `program` on the calling thread (and the threads and
/// processes it starts) with `flags`, plus `SECCOMP_FILTER_FLAG_SPEC_ALLOW`:
/// without it a kernel that mitigates Speculative Store Bypass "via prctl
/// and seccomp" would slow every filtered process down, and there is no
/// secret in a worker to protect that way. Returns what seccomp(2) returns
/// (a listener with `SECCOMP_FILTER_FLAG_NEW_LISTENER`). Makes system
/// calls only (safe between fork and exec).
pub fn install(program: &seccompiler::BpfProgram, flags: libc::c_ulong) -> std::io::Result<i64> {
    const SPEC_ALLOW: libc::c_ulong = 1 << 2; // SECCOMP_FILTER_FLAG_SPEC_ALLOW
    let prog = libc::sock_fprog { len: program.len() as u16, filter: program.as_ptr() as *mut libc::sock_filter };
    // SAFETY: `prog` points at a valid BPF program (seccompiler's
    // instructions have the kernel's layout), which the kernel copies.
    let call = |flags: libc::c_ulong| unsafe {
        libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, flags, &prog as *const libc::sock_fprog)
    };
    // SAFETY: no_new_privs only forbids gaining privileges by exec.
    unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    let mut r = call(flags | SPEC_ALLOW);
    // SAFETY: reading errno right after the call.
    if r < 0 && unsafe { *libc::__errno_location() } == libc::EINVAL {
        // A kernel before 4.17 has no SPEC_ALLOW.
        r = call(flags);
    }
    if r < 0 { Err(std::io::Error::last_os_error()) } else { Ok(r) }
}

/// clone3 fails with ENOSYS, so that glibc falls back to clone, whose
/// flags a filter can read (threads stay allowed).
fn clone3_filter() -> Result<seccompiler::BpfProgram, String> {
    compile(vec![(libc::SYS_clone3, vec![])], seccompiler::SeccompAction::Errno(libc::ENOSYS as u32))
}

/// The worker's side of the filter that refuses a case's processes,
/// programs and sockets: the refused call waits until the worker answers
/// it (seccomp's user notification), and the worker answers EPERM, so
/// candidate code reads "Operation not permitted", and counts it for the
/// case's verdict. A signal-based refusal (SIGSYS) would not do: glibc's
/// `posix_spawn`, behind `Command::spawn`, blocks every signal around its
/// clone, and a blocked SIGSYS kills the process instead.
///
/// The filter is installed in the worker after the library is loaded, so
/// the worker itself must start each case's process with clone3 (which
/// this filter lets through); the case's process then refuses clone3 on
/// its own (ENOSYS) and closes its copy of the listener before candidate
/// code runs: a thread of the case must not answer its own refused call.
pub struct Supervisor {
    listener: std::os::fd::OwnedFd,
    clone3: seccompiler::BpfProgram,
}

/// A marker the notifying action is compiled with and then replaced:
/// seccompiler has no user-notification action.
const NOTIFY_MARK: u32 = 0x4a1;

/// Polled with the case's pipe: readable when a refused call waits.
impl std::os::fd::AsFd for Supervisor {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.listener.as_fd()
    }
}

impl Supervisor {
    /// Installs the filter in this process (the worker); every process it
    /// forks afterwards inherits it.
    pub fn install() -> Result<Supervisor, String> {
        use std::os::fd::FromRawFd;
        let mut rules = process_rules()?;
        rules.extend(network_rules());
        let mut program = compile(rules, seccompiler::SeccompAction::Trace(NOTIFY_MARK))?;
        const BPF_RET_K: u16 = 0x06;
        for insn in program.iter_mut() {
            if insn.code == BPF_RET_K && insn.k == libc::SECCOMP_RET_TRACE | NOTIFY_MARK {
                insn.k = libc::SECCOMP_RET_USER_NOTIF;
            }
        }
        let clone3 = clone3_filter()?;
        let fd = install(&program, libc::SECCOMP_FILTER_FLAG_NEW_LISTENER)
            .map_err(|e| format!("seccomp user notification: {e}"))?;
        // SAFETY: the kernel just returned this descriptor, owned by no one.
        let listener = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) };
        let _ = rustix::io::fcntl_setfd(&listener, rustix::io::FdFlags::CLOEXEC);
        Ok(Supervisor { listener, clone3 })
    }

    /// Runs `f` (loading the library: its initialisers) while a thread
    /// answers what it is refused, uncounted; the thread has ended when
    /// this returns, so the worker is single-threaded again and may fork.
    pub fn during<T>(&self, f: impl FnOnce() -> T) -> T {
        use rustix::event::{PollFd, PollFlags, poll};
        let Ok((stop_read, stop_write)) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC) else {
            return f();
        };
        std::thread::scope(|scope| {
            let answering = std::thread::Builder::new().name("refuser".into()).spawn_scoped(scope, || {
                let mut uncounted = Refusals::default();
                loop {
                    let mut fds = [PollFd::new(&self.listener, PollFlags::IN), PollFd::new(&stop_read, PollFlags::IN)];
                    if poll(&mut fds, None).is_err() {
                        continue;
                    }
                    if !fds[1].revents().is_empty() {
                        return;
                    }
                    self.answer(&mut uncounted);
                }
            });
            let out = f();
            drop(stop_write);
            if let Ok(handle) = answering {
                let _ = handle.join();
            }
            out
        })
    }

    /// Forks the process of one case with clone3 (the filter lets the
    /// worker's own clone3 through). Returns 0 in the child, which has
    /// closed the listener and refuses clone3 from then on.
    pub fn fork_case(&self) -> std::io::Result<i32> {
        use std::os::fd::AsRawFd;
        // struct clone_args, version 0: flags, pidfd, child_tid,
        // parent_tid, exit_signal, stack, stack_size, tls.
        let args: [u64; 8] = [0, 0, 0, 0, libc::SIGCHLD as u64, 0, 0, 0];
        // SAFETY: the worker never starts a thread, so the child of this
        // clone (a plain fork: no shared memory, no atfork handlers) may run
        // any code; `args` is a valid clone_args of its size.
        let pid = unsafe { libc::syscall(libc::SYS_clone3, args.as_ptr(), std::mem::size_of_val(&args)) };
        match pid {
            -1 => Err(std::io::Error::last_os_error()),
            0 => {
                // SAFETY: closes this process's copy of the listener; the
                // `OwnedFd` belongs to the worker's memory image and is
                // never dropped here (the case ends in `_exit`).
                unsafe { libc::close(self.listener.as_raw_fd()) };
                if install(&self.clone3, 0).is_err() {
                    // A case that could clone3 could start processes.
                    exit_now(3);
                }
                Ok(0)
            }
            pid => Ok(pid as i32),
        }
    }

    /// Answers every refused call waiting (EPERM), counting each in
    /// `refused`; returns how many were answered.
    pub fn answer(&self, refused: &mut Refusals) -> u32 {
        use rustix::event::{PollFd, PollFlags, poll};
        use std::os::fd::AsRawFd;
        let mut answered = 0;
        loop {
            let mut fds = [PollFd::new(&self.listener, PollFlags::IN)];
            let zero = rustix::event::Timespec { tv_sec: 0, tv_nsec: 0 };
            if poll(&mut fds, Some(&zero)).unwrap_or(0) == 0 {
                return answered;
            }
            // SAFETY: zeroed as the kernel requires, then filled by it.
            let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
            // SAFETY: a seccomp listener and a notification buffer.
            if unsafe { libc::ioctl(self.listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_RECV, &mut notif) } != 0 {
                // The caller died meanwhile (ENOENT), or was interrupted.
                return answered;
            }
            let act = act_of(notif.data.nr as i64);
            refused.0[act as usize] = refused.0[act as usize].saturating_add(1);
            answered += 1;
            let mut resp = libc::seccomp_notif_resp { id: notif.id, val: 0, error: -libc::EPERM, flags: 0 };
            // SAFETY: as above; a caller gone meanwhile gives ENOENT, ignored.
            unsafe { libc::ioctl(self.listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SEND, &mut resp) };
        }
    }
}

/// Which act a refused system call number is.
fn act_of(nr: i64) -> Act {
    match nr {
        libc::SYS_execve | libc::SYS_execveat => Act::Program,
        libc::SYS_socket => Act::Socket,
        libc::SYS_io_uring_setup => Act::IoUring,
        _ => Act::Process,
    }
}

/// The filter a solution's build runs under once its dependencies are
/// fetched: socket(2) and io_uring fail with EPERM.
pub fn network_filter() -> Result<seccompiler::BpfProgram, String> {
    compile(network_rules(), seccompiler::SeccompAction::Errno(libc::EPERM as u32))
}

/// For the trusted reference, run in the worker itself: no sockets and
/// no io_uring (EPERM); records `network`.
pub fn refuse_network(p: &mut Protections) {
    let applied = compile(network_rules(), seccompiler::SeccompAction::Errno(libc::EPERM as u32))
        .and_then(|prog| install(&prog, 0).map(drop).map_err(|e| e.to_string()));
    p.network = match applied {
        Ok(()) => Protection::on("seccomp: socket(2) and io_uring fail with EPERM"),
        Err(e) => Protection::off(format!("no seccomp filter ({e}): the reference can use the network")),
    };
}

/// Records `network` and `processes` for a worker that judges a process
/// per case: `how` is the outcome of installing its [`Supervisor`]; the
/// cap on what the library's initialisers start is the namespace's
/// `pid_max`, set by [`enter_pid_namespace`].
pub fn record_confinement(p: &mut Protections, how: Result<(), String>) {
    let cap = match std::mem::take(&mut p.processes.detail) {
        d if d.is_empty() => "no PID namespace".to_string(),
        d => d,
    };
    match how {
        Ok(()) => {
            p.network = Protection::on(
                "seccomp: socket(2) and io_uring fail with EPERM in the worker (the library's initialisers too), \
                 every case and every scale check: no TCP, UDP or unix socket; a case that tries is `refused`",
            );
            p.processes = Protection::on(format!(
                "seccomp: candidate code cannot fork, clone a process or execve (threads are allowed), in a \
                 case nor in the library's initialisers; each try fails with EPERM and a case that tries is \
                 `refused`; besides, {cap}"
            ));
        }
        Err(e) => {
            // The fallback: each case's process refuses them uncounted.
            let fallback = refuse_quietly_program().map(drop);
            p.network = match &fallback {
                Ok(()) => Protection::on(format!(
                    "seccomp: socket(2) and io_uring fail with EPERM in each case (not counted: {e})"
                )),
                Err(f) => Protection::off(format!("no seccomp filter ({f}): candidate code can use the network")),
            };
            p.processes = match fallback {
                Ok(()) => Protection::on(format!(
                    "seccomp: a case's fork, clone and execve fail with EPERM (not counted: {e}); {cap}"
                )),
                Err(f) => Protection::off(format!("no seccomp filter ({f}); {cap}")),
            };
        }
    }
}

/// Refuses processes, programs, sockets and io_uring with EPERM, nothing
/// counted: for the measuring worker, which runs candidate code itself
/// (the scale check's verdict is how that code ended), and for a case's
/// process where no [`Supervisor`] could be installed.
pub fn refuse_quietly() -> Result<(), String> {
    install(&clone3_filter()?, 0).map_err(|e| e.to_string())?;
    install(&refuse_quietly_program()?, 0).map(drop).map_err(|e| e.to_string())
}

fn refuse_quietly_program() -> Result<seccompiler::BpfProgram, String> {
    let mut rules = process_rules()?;
    rules.extend(network_rules());
    compile(rules, seccompiler::SeccompAction::Errno(libc::EPERM as u32))
}

/// The scratch folder's use, to tell after a case whether it wrote (and
/// whether it filled the tmpfs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScratchUse {
    free_blocks: u64,
    free_files: u64,
}

impl ScratchUse {
    pub fn now() -> Option<ScratchUse> {
        let s = rustix::fs::statvfs(".").ok()?;
        Some(ScratchUse { free_blocks: s.f_bavail, free_files: s.f_favail })
    }

    /// Whether the tmpfs is full: no block or no inode left.
    pub fn full(&self) -> bool {
        self.free_blocks == 0 || self.free_files == 0
    }
}

/// In the worker, after a case: empties the scratch folder if the case
/// wrote to it (so the next case starts from a clean one); returns whether
/// it was full.
pub fn settle_scratch(fresh: Option<ScratchUse>) -> bool {
    let (Some(fresh), Some(now)) = (fresh, ScratchUse::now()) else { return false };
    if now == fresh {
        return false;
    }
    for entry in std::fs::read_dir(".").into_iter().flatten().flatten() {
        let path = entry.path();
        let _ = if entry.file_type().is_ok_and(|t| t.is_dir()) {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
    }
    now.full()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outer_is_gone_once_every_write_end_is_closed() {
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
        assert!(!outer_is_gone(&read), "a writer still holds the pipe");
        drop(write);
        assert!(outer_is_gone(&read), "no writer is left");
    }
}
