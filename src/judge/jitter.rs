//! Preemption at random points inside a concurrent case's calls.
//!
//! A race shows only when a thread is stopped between two steps that must
//! be one, and another thread runs in the gap. Start offsets and yields
//! place the threads' calls against each other, but a call of a few
//! hundred nanoseconds is rarely stopped in its middle: "the length read
//! outside the lock" was caught in 1–3 runs of 10 checks. So while a
//! thread runs its script, a timer of its own signals it every
//! [`PERIOD`], and the handler spins a random 0–[`MAX_STALL`] before the
//! thread goes on, wherever it was: inside the candidate's critical
//! section or between two of its lock acquisitions. The other threads run
//! meanwhile.
//!
//! It changes no result a correct solution returns: a signal handler that
//! only spins is invisible to the code it interrupts (the handler keeps
//! `errno`, and `SA_RESTART` restarts an interrupted system call; a
//! condition variable may wake spuriously anyway). One thing needs care: an
//! interrupted `nanosleep` reports the time left including the thread's
//! timer slack (50 µs by default), and a sleep restarted every 50 µs would
//! then never end; so a jittered thread's slack is 1 ns while its timer
//! lives. A timer that cannot be made leaves the thread as it was.
//!
//! It has `unsafe`: the signal handler, the timer's system calls.

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::Duration;

/// How often a running thread is stopped.
///
/// Not much faster: a signal costs several microseconds here (a timer
/// interrupt is a VM exit), and the handler spins on top of it. With a
/// fifth of this period (10 µs) on one thread of each run and the same
/// stops, that thread did nothing but take signals: every case ended in
/// `timeout`, the reference's included (measured 2026-12-03, two burner
/// threads). Half this period with stops of up to 20 µs cut a check's
/// runs from about 2,000 to 67.
pub const PERIOD: Duration = Duration::from_micros(50);

/// The longest a stop lasts.
pub const MAX_STALL: Duration = Duration::from_micros(5);

thread_local! {
    /// The handler's random state (xorshift), seeded by [`Jitter::new`].
    static STATE: Cell<u64> = const { Cell::new(0x2545_f491_4f6c_dd1d) };
}

#[cfg(test)]
thread_local! {
    /// Stops on this thread so far, for the tests.
    static STOPS: Cell<u64> = const { Cell::new(0) };
}

/// The signal the timers send: a real-time one nothing else here uses.
fn signal() -> libc::c_int {
    libc::SIGRTMIN() + 3
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is writable; clock_gettime is async-signal-safe.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The handler: spins for a random time, touching nothing but the clock
/// and its own thread-local state.
extern "C" fn on_tick(_: libc::c_int) {
    // SAFETY: errno is this thread's; it is put back as it was.
    let errno = unsafe { *libc::__errno_location() };
    let x = STATE.with(|s| {
        let mut x = s.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set(x);
        x
    });
    #[cfg(test)]
    STOPS.with(|c| c.set(c.get() + 1));
    let stall = x % MAX_STALL.as_nanos() as u64;
    let start = now_ns();
    while now_ns().wrapping_sub(start) < stall {
        std::hint::spin_loop();
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

/// Installs the handler, once per process; `false` when it could not be.
fn install() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        // SAFETY: a zeroed sigaction is valid; the handler is an
        // `extern "C" fn(c_int)`, as `sa_sigaction` without SA_SIGINFO
        // expects.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_tick as *const () as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(signal(), &sa, std::ptr::null_mut()) == 0
        }
    })
}

/// A timer that signals the thread that made it; disarmed until
/// [`Jitter::arm`], deleted on drop (a timer outlives its thread).
pub struct Jitter {
    timer: libc::timer_t,
    /// The thread's timer slack before, put back on drop.
    slack: libc::c_int,
}

impl Jitter {
    /// A timer for the calling thread, its stops drawn from `seed`; `None`
    /// when the system would not make one.
    pub fn new(seed: u64) -> Option<Jitter> {
        if !install() {
            return None;
        }
        STATE.with(|s| s.set(seed | 1));
        // SAFETY: a zeroed sigevent is valid; the fields set say "this
        // signal, to this thread".
        let mut ev: libc::sigevent = unsafe { std::mem::zeroed() };
        ev.sigev_notify = libc::SIGEV_THREAD_ID;
        ev.sigev_signo = signal();
        // SAFETY: gettid has no preconditions.
        ev.sigev_notify_thread_id = unsafe { libc::gettid() };
        let mut timer: libc::timer_t = std::ptr::null_mut();
        // SAFETY: `ev` and `timer` are valid for the call.
        let made = unsafe { libc::timer_create(libc::CLOCK_MONOTONIC, &mut ev, &mut timer) } == 0;
        if !made {
            return None;
        }
        // SAFETY: prctl on the calling thread's own timer slack.
        let slack = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK) };
        // SAFETY: as above.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        Some(Jitter { timer, slack })
    }

    fn set(&self, period: Duration) {
        let ts = libc::timespec { tv_sec: 0, tv_nsec: period.as_nanos() as libc::c_long };
        let spec = libc::itimerspec { it_interval: ts, it_value: ts };
        // SAFETY: the timer is this value's own and live.
        unsafe { libc::timer_settime(self.timer, 0, &spec, std::ptr::null_mut()) };
    }

    /// Starts the stops.
    pub fn arm(&self) {
        self.set(PERIOD);
    }

    /// Ends them (a signal already sent may still arrive).
    pub fn disarm(&self) {
        self.set(Duration::ZERO);
    }
}

impl Drop for Jitter {
    fn drop(&mut self) {
        // SAFETY: the timer is live and deleted once.
        unsafe { libc::timer_delete(self.timer) };
        if self.slack > 0 {
            // SAFETY: prctl on this thread's own timer slack (a Jitter is
            // not `Send`: it is dropped on the thread that made it).
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, self.slack as libc::c_ulong) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// This thread's CPU time.
    fn cpu() -> Duration {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is writable.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    }

    /// A thread with an armed timer is stopped, hundreds of times in 20 ms
    /// of its own CPU time, and one without is not: the handler counts its
    /// stops. (Counting the gaps a loop sees in its clock told them apart
    /// too, but not on a busy machine: other processes' preemption made
    /// 229 such gaps without the timer, 399 with it, once in CI.) And a
    /// sleep and a lock wait, interrupted over and over, still do what
    /// they say.
    #[test]
    fn an_armed_thread_is_stopped_now_and_then_and_its_waits_still_hold() {
        let stops = |armed: bool| {
            let jitter = Jitter::new(7).expect("a timer");
            if armed {
                jitter.arm();
            }
            let before = STOPS.with(Cell::get);
            let (cpu_end, wall_end) = (cpu() + Duration::from_millis(20), Instant::now() + Duration::from_secs(10));
            while cpu() < cpu_end && Instant::now() < wall_end {
                std::hint::spin_loop();
            }
            let stops = STOPS.with(Cell::get) - before;
            // A sleep is neither cut short nor, restarted after every
            // stop, made endless (the timer slack).
            let t = Instant::now();
            std::thread::sleep(Duration::from_millis(5));
            let slept = t.elapsed();
            assert!(slept >= Duration::from_millis(5) && slept < Duration::from_secs(5), "slept {slept:?}");
            jitter.disarm();
            stops
        };
        // Without first: a stop already sent when the timer is disarmed may
        // still arrive.
        let without = stops(false);
        let with = stops(true);
        assert!(with > 100 && without == 0, "stops with the timer {with}, without {without}");

        let lock = std::sync::Arc::new(std::sync::Mutex::new(0u64));
        let workers: Vec<_> = (0..2)
            .map(|i| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    let jitter = Jitter::new(i + 1).expect("a timer");
                    jitter.arm();
                    for _ in 0..20_000 {
                        let mut n = lock.lock().unwrap();
                        let seen = *n;
                        std::hint::spin_loop();
                        *n = seen + 1;
                    }
                    jitter.disarm();
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        assert_eq!(*lock.lock().unwrap(), 40_000, "no increment under the lock is lost");
    }
}
