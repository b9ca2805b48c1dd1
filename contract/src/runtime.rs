//! What runs inside the candidate's library: the session behind the
//! exported functions, panic capture, and buffer ownership.
//!
//! A `cdylib` carries its own copy of std, so the harness's panic hook never
//! sees a panic in candidate code, and a panic escaping an `extern "C"`
//! function aborts. Every call therefore runs inside `catch_unwind` here, and
//! a hook installed by this copy of std records the message and location.

use std::cell::RefCell;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use crate::wire::{self, Outcome, Writer};
use crate::{ABI_VERSION, Schema, Value, Wire};

/// Returned by `harness_handshake`: checked before anything else runs.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handshake {
    pub abi_version: u32,
    pub schema_hash: u64,
}

/// A byte buffer allocated by the library; give it back to `harness_free`.
#[repr(C)]
#[derive(Debug)]
pub struct RawBuf {
    pub ptr: *mut u8,
    pub len: usize,
    pub cap: usize,
}

impl RawBuf {
    pub fn from_vec(v: Vec<u8>) -> Self {
        let mut v = std::mem::ManuallyDrop::new(v);
        RawBuf { ptr: v.as_mut_ptr(), len: v.len(), cap: v.capacity() }
    }

    pub fn empty() -> Self {
        RawBuf { ptr: std::ptr::null_mut(), len: 0, cap: 0 }
    }

    /// # Safety
    /// `self` must describe bytes that are still allocated.
    pub unsafe fn as_slice(&self) -> &[u8] {
        if self.ptr.is_null() { &[] } else { unsafe { std::slice::from_raw_parts(self.ptr, self.len) } }
    }
}

/// The panic payload of an operation whose default trait body was not
/// overridden yet.
#[derive(Debug)]
pub struct NotImplemented(pub &'static str);

/// Body of every trait method a candidate has not written yet.
#[track_caller]
pub fn not_implemented(op: &'static str) -> ! {
    std::panic::panic_any(NotImplemented(op))
}

/// What [`crate::todo!`] expands to: not written yet, in whichever
/// operation is running.
#[track_caller]
pub fn todo() -> ! {
    std::panic::panic_any(NotImplemented(""))
}

/// Implemented by a problem's reference solution only: says whether the
/// statement pins down the result of `op` in the current state. When it
/// does not (a read at a version compaction may have dropped, say), the
/// judge accepts any value a solution returns there.
pub trait Oracle {
    fn is_specified(&self, op: &str, args: &[Value]) -> bool;
}

/// Why a request could not be dispatched.
#[derive(Debug)]
pub enum CallError {
    UnknownOp(String),
    NoInstance,
    BadArgument(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::UnknownOp(op) => write!(f, "the contract has no operation `{op}`"),
            CallError::NoInstance => f.write_str("no instance: the first operation must be `new`"),
            CallError::BadArgument(why) => f.write_str(why),
        }
    }
}

/// Typed access to a request's arguments, for [`crate::contract!`].
pub struct Args {
    items: std::vec::IntoIter<Value>,
}

impl Args {
    pub fn new(items: Vec<Value>) -> Self {
        Args { items: items.into_iter() }
    }

    pub fn next<T: Wire>(&mut self, name: &str) -> Result<T, CallError> {
        let v = self.items.next().ok_or_else(|| CallError::BadArgument(format!("missing argument `{name}`")))?;
        T::from_value(v).map_err(|e| CallError::BadArgument(format!("argument `{name}`: {e}")))
    }

    pub fn finish(mut self) -> Result<(), CallError> {
        match self.items.next() {
            None => Ok(()),
            Some(_) => Err(CallError::BadArgument("too many arguments".into())),
        }
    }
}

thread_local! {
    static LAST_PANIC: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
    static PANICS_IN_CALL: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Starts a line on stderr (`<mark><location>: <message>`) that names the
/// first panic of a call when a second one follows before the call returns:
/// if that second panic aborts the process, this line is all that is left
/// of the first, and the harness reads it back.
pub const FIRST_PANIC_MARK: &str = "harness: first panic of this call: ";

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Record, do not print: the harness shows the message itself, and
        // the default hook's stderr output would only duplicate it.
        std::panic::set_hook(Box::new(|info| {
            let payload = info.payload();
            let message = if let Some(s) = payload.downcast_ref::<&str>() {
                s.to_string()
            } else if let Some(s) = payload.downcast_ref::<String>() {
                s.clone()
            } else if let Some(NotImplemented(op)) = payload.downcast_ref::<NotImplemented>() {
                format!("`{op}` is not implemented")
            } else {
                "a panic with a non-string payload".to_string()
            };
            let location =
                info.location().map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column())).unwrap_or_default();
            LAST_PANIC.with(|p| {
                let mut last = p.borrow_mut();
                // A second panic in the same call: if it aborts (a panic in
                // `Drop` while unwinding does), stderr is all that is left,
                // so both are said there, the first with its mark.
                if let Some((first, at)) = last.as_ref() {
                    use std::io::Write;
                    let mut err = std::io::stderr().lock();
                    if PANICS_IN_CALL.get() == 1 {
                        let _ = writeln!(err, "{FIRST_PANIC_MARK}{at}: {}", first.replace('\n', " "));
                    }
                    let _ = writeln!(err, "harness: then a panic at {location}: {}", message.replace('\n', " "));
                }
                PANICS_IN_CALL.set(PANICS_IN_CALL.get() + 1);
                *last = Some((message, location));
            });
        }));
    });
}

struct Session<T> {
    instance: Option<T>,
}

pub fn handshake(schema: &Schema) -> Handshake {
    Handshake { abi_version: ABI_VERSION, schema_hash: schema.hash() }
}

/// # Safety
/// `out` must point to writable memory for one `RawBuf`.
pub unsafe fn write_schema(out: *mut RawBuf, schema: &Schema) {
    let text = schema.canonical_text().into_bytes();
    unsafe { out.write(RawBuf::from_vec(text)) };
}

pub fn open<T>() -> *mut c_void {
    install_panic_hook();
    Box::into_raw(Box::new(Session::<T> { instance: None })) as *mut c_void
}

/// A problem's dispatcher, generated by [`crate::contract!`].
pub type DispatchFn<T> = fn(&mut Option<T>, &str, Vec<Value>) -> Result<Value, CallError>;
/// A problem's dispatcher for its shared trait (`&self`), generated by
/// [`crate::contract!`].
pub type SharedDispatchFn<T> = fn(&Option<T>, &str, Vec<Value>) -> Result<Value, CallError>;
/// A problem's shared operations and, when the type implements the shared
/// trait, their dispatcher (see [`crate::export!`]).
pub struct Shared<T: 'static> {
    pub dispatch: Option<SharedDispatchFn<T>>,
    pub ops: &'static [&'static str],
}
/// [`Oracle::is_specified`] of a reference solution.
pub type OracleFn<T> = fn(&T, &str, &[Value]) -> bool;

/// Decodes one request, runs it, encodes the outcome into `out`.
///
/// # Safety
/// As for the exported `harness_call`.
pub unsafe fn call<T>(
    session: *mut c_void,
    req: *const u8,
    len: usize,
    out: *mut RawBuf,
    dispatch: DispatchFn<T>,
    oracle: Option<OracleFn<T>>,
    shared: Shared<T>,
) {
    let Shared { dispatch: shared, ops: shared_ops } = shared;
    let session = unsafe { &mut *(session as *mut Session<T>) };
    let request = unsafe { std::slice::from_raw_parts(req, len) };
    let outcome = match wire::decode_request(request) {
        Err(e) => Outcome::Rejected(format!("malformed request: {e}")),
        // A shared operation called alone (a sequential case of a
        // concurrent gate, or the reference replaying an order) goes to
        // the shared trait, with no other call in flight.
        Ok((op, args)) if shared_ops.contains(&op.as_str()) => match shared {
            Some(shared) => guarded(&op, || {
                let specified = match (oracle, session.instance.as_ref()) {
                    (Some(is_specified), Some(instance)) => is_specified(instance, &op, &args),
                    _ => true,
                };
                shared(&session.instance, &op, args).map(|v| if specified { v } else { Value::Any })
            }),
            None => Outcome::NotImplemented { op },
        },
        Ok((op, args)) => run(session, &op, args, dispatch, oracle),
    };
    let mut w = Writer::default();
    wire::encode_outcome(&mut w, &outcome);
    unsafe { out.write(RawBuf::from_vec(w.buf)) };
}

/// Decodes one request of a concurrent gate and runs it on the session's
/// instance through a shared reference: several threads call this at
/// once, which `SharedDispatchFn` allows only for a `Send + Sync` type.
///
/// # Safety
/// As for [`call`]; `new` must have run (through [`call`]) before the
/// first overlapping call, and no [`call`] may overlap these.
pub unsafe fn call_shared<T>(
    session: *mut c_void,
    req: *const u8,
    len: usize,
    out: *mut RawBuf,
    shared: Option<SharedDispatchFn<T>>,
) {
    let session = unsafe { &*(session as *const Session<T>) };
    let request = unsafe { std::slice::from_raw_parts(req, len) };
    let outcome = match (wire::decode_request(request), shared) {
        (Err(e), _) => Outcome::Rejected(format!("malformed request: {e}")),
        // The type does not implement the shared trait (yet).
        (Ok((op, _)), None) => Outcome::NotImplemented { op },
        (Ok((op, args)), Some(shared)) => guarded(&op, || shared(&session.instance, &op, args)),
    };
    let mut w = Writer::default();
    wire::encode_outcome(&mut w, &outcome);
    unsafe { out.write(RawBuf::from_vec(w.buf)) };
}

fn run<T>(
    session: &mut Session<T>,
    op: &str,
    args: Vec<Value>,
    dispatch: DispatchFn<T>,
    oracle: Option<OracleFn<T>>,
) -> Outcome {
    guarded(op, || {
        let specified = match (oracle, session.instance.as_ref()) {
            (Some(is_specified), Some(instance)) => is_specified(instance, op, &args),
            _ => true,
        };
        dispatch(&mut session.instance, op, args).map(|v| if specified { v } else { Value::Any })
    })
}

/// Runs one operation under `catch_unwind` and says how it went; the
/// panic records are thread-local, so overlapping calls keep their own.
fn guarded(op: &str, f: impl FnOnce() -> Result<Value, CallError>) -> Outcome {
    LAST_PANIC.with(|p| p.borrow_mut().take());
    PANICS_IN_CALL.set(0);
    let result = catch_unwind(AssertUnwindSafe(f));
    match result {
        Ok(Ok(value)) => Outcome::Returned(value),
        Ok(Err(e)) => Outcome::Rejected(e.to_string()),
        Err(payload) => {
            if payload.downcast_ref::<NotImplemented>().is_some() {
                return Outcome::NotImplemented { op: op.to_string() };
            }
            // Only the marker says "not written yet": a panic whose message
            // merely reads "not implemented" (std's `todo!()` included) is
            // a panic like any other.
            let (message, location) = LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_else(|| ("unknown panic".to_string(), String::new()));
            Outcome::Panicked { message, location }
        }
    }
}

/// # Safety
/// `session` comes from [`open`] with the same `T` and is not used again.
pub unsafe fn close<T>(session: *mut c_void) {
    if !session.is_null() {
        // Dropping candidate state may panic too; never let it unwind out.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(session as *mut Session<T>) })));
    }
}

/// # Safety
/// `buf` came from this library's [`RawBuf::from_vec`] and is freed once.
pub unsafe fn free(buf: RawBuf) {
    if !buf.ptr.is_null() {
        drop(unsafe { Vec::from_raw_parts(buf.ptr, buf.len, buf.cap) });
    }
}
