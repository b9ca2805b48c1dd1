//! Opening a solution's library and finding its entry points, for both
//! workers that load one: `worker` (judging cases) and `measure` (scale
//! checks). The library is opened with `RTLD_NOW | RTLD_LOCAL`, its ABI
//! version and schema hash are checked before any other symbol is called.
//!
//! Calls into a foreign library, so it has `unsafe`.

use std::ffi::c_void;
use std::path::Path;

use harness_contract::measure::HeapStats;
use harness_contract::{ABI_VERSION, Handshake, RawBuf};

pub type HandshakeFn = unsafe extern "C" fn() -> Handshake;
pub type SchemaFn = unsafe extern "C" fn(*mut RawBuf);
pub type OpenFn = unsafe extern "C" fn() -> *mut c_void;
pub type CallFn = unsafe extern "C" fn(*mut c_void, *const u8, usize, *mut RawBuf);
pub type CloseFn = unsafe extern "C" fn(*mut c_void);
pub type FreeFn = unsafe extern "C" fn(RawBuf);
pub type HeapFn = unsafe extern "C" fn() -> HeapStats;

/// The library's entry points.
pub struct Entry {
    pub open: OpenFn,
    pub call: CallFn,
    pub close: CloseFn,
    pub free: FreeFn,
    /// The heap counters `export!` installs.
    pub heap: HeapFn,
    /// A concurrent gate's calls on the shared instance (`None` in a
    /// library built before the contract had it).
    pub call_shared: Option<CallFn>,
}

/// A loaded library; the entry points are valid while it lives.
pub struct Loaded {
    pub entry: Entry,
    _lib: libloading::os::unix::Library,
}

/// Why a library cannot be used.
pub enum LoadFailure {
    /// It could not be opened or lacks an entry point: says which.
    Error(String),
    /// It was built for another contract: its handshake, and the schema it
    /// describes itself with when the ABI version matches (else empty).
    Mismatch(Handshake, String),
}

/// Opens the library at `path` and checks that it was built for this
/// contract and for the schema whose hash is `schema_hash`.
pub fn load(path: &Path, schema_hash: u64) -> Result<Loaded, LoadFailure> {
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};

    // SAFETY: loading runs the library's initialisers; that is candidate
    // code, and running it in a confined, disposable process is the point.
    let lib = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }
        .map_err(|e| LoadFailure::Error(format!("cannot load {}: {e}", path.display())))?;
    macro_rules! symbol {
        ($name:literal, $ty:ty) => {
            // SAFETY: the symbol's type is fixed by `harness_contract::export!`,
            // and the ABI version is checked before any other symbol is called.
            match unsafe { lib.get::<$ty>($name) } {
                Ok(s) => *s,
                Err(_) => {
                    let name = String::from_utf8_lossy(&$name[..$name.len() - 1]).into_owned();
                    return Err(LoadFailure::Error(format!(
                        "the library exports no `{name}`: end the solution's lib.rs with \
                         `harness_contract::export!(<problem>, <YourType>);`"
                    )));
                }
            }
        };
    }
    let handshake = symbol!(b"harness_handshake\0", HandshakeFn);
    let schema = symbol!(b"harness_schema\0", SchemaFn);
    let free = symbol!(b"harness_free\0", FreeFn);
    // SAFETY: `harness_handshake` takes nothing and returns a repr(C) struct.
    let hs = unsafe { handshake() };
    if hs.abi_version != ABI_VERSION || hs.schema_hash != schema_hash {
        let text = if hs.abi_version == ABI_VERSION {
            let mut buf = RawBuf::empty();
            // SAFETY: same ABI version, so `harness_schema` has this signature.
            unsafe { schema(&mut buf) };
            // SAFETY: the library filled `buf` and has not freed it.
            let text = String::from_utf8_lossy(unsafe { buf.as_slice() }).into_owned();
            // SAFETY: `buf` came from this library and is freed once.
            unsafe { free(buf) };
            text
        } else {
            String::new()
        };
        return Err(LoadFailure::Mismatch(hs, text));
    }
    let entry = Entry {
        open: symbol!(b"harness_open\0", OpenFn),
        call: symbol!(b"harness_call\0", CallFn),
        close: symbol!(b"harness_close\0", CloseFn),
        free,
        heap: symbol!(b"harness_heap\0", HeapFn),
        // SAFETY: as for the symbols above; optional, so no error if absent.
        call_shared: unsafe { lib.get::<CallFn>(b"harness_call_shared\0") }.ok().map(|s| *s),
    };
    Ok(Loaded { entry, _lib: lib })
}
