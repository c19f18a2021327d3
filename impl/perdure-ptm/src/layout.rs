//! The persistent layout of every construction of the crate: a header
//! line, `cur_comb` on its own line, and the replicas — `2N` for CX (seed
//! §4: "the persistent memory layout is composed of a persistent header
//! where the variable curComb is located"), `N + 1` for Redo-PTM and its
//! variants (§5: the layout Redo-PTM shares with CX-PTM).
//!
//! | pool offset (from the data offset `D`) | content |
//! | --- | --- |
//! | `D` | header ([`perdure_pm::meta`]): magic, version, `N`, replica length `L`, replicas' offset, pool size, flavour word; checksum |
//! | `D + 64` | `cur_comb`: a [`SeqTidIdx`](crate::sti) — `seq` the ticket of the designated replica's head, `tid` the thread whose CAS installed it, `idx` the replica |
//! | `D + 4096 + r·L`, `r = 0..R` | replica `r`: the transactional region ([`crate::replica`]) |
//!
//! Everything else is volatile. The flavour word is 0 for CX-PTM and the
//! Redo family; CX-PUC records its object's size and alignment there, so a
//! pool is not opened as an object of another type.

use crate::error::PtmError;
use crate::replica::{self, ALLOC_BASE, MIN_REPLICA};
use crate::sti;
use crate::sync::atomic::Ordering;
use perdure_pm::{meta, Backend, Pool};

/// The format version this build writes and reads.
pub const VERSION: u64 = 1;
/// `cur_comb`'s offset from the data offset `D`.
pub const CUR_COMB: u64 = 64;
/// The first replica's offset from `D`.
pub const REPLICAS: u64 = 4096;
const GRANULE: u64 = 4096;

/// The checked geometry of a pool's replicas.
#[derive(Clone, Debug)]
pub(crate) struct Geometry {
    pub header: u64,
    pub threads: usize,
    pub replica_len: u64,
    replicas: usize,
}

impl Geometry {
    /// `R`: `2N` (CX) or `N + 1` (Redo).
    pub fn replicas(&self) -> usize {
        self.replicas
    }
    pub fn replicas_base(&self) -> u64 {
        self.header + REPLICAS
    }
    pub fn replica(&self, r: usize) -> u64 {
        self.replicas_base() + r as u64 * self.replica_len
    }
    pub fn cur_comb(&self) -> u64 {
        self.header + CUR_COMB
    }
}

/// Which construction a header belongs to.
pub(crate) struct Kind {
    pub name: &'static str,
    pub magic: u64,
    /// The replica count for `N` threads.
    pub replicas: fn(usize) -> usize,
}

/// What opening a pool needs of a construction's configuration (CX's and
/// Redo's [`Config`](crate::cx::Config)s).
pub(crate) trait PoolConfig: Clone {
    /// `N`, the thread count: persistent, so `open` takes it from the pool.
    fn threads_mut(&mut self) -> &mut usize;
    /// Checks every field against its range ([`PtmError::Config`] if not).
    fn validate(&self) -> Result<(), PtmError>;
}

/// Checks a configuration's thread count (8-bit thread ids; `replicas`
/// says how many replicas they make, for the message).
pub(crate) fn validate_threads(threads: usize, replicas: &str) -> Result<(), PtmError> {
    if threads == 0 || threads > sti::MAX_THREADS - 1 {
        return Err(PtmError::Config(format!(
            "threads is {threads}, must be in 1..={} (8-bit thread ids; the replicas are {replicas})",
            sti::MAX_THREADS - 1
        )));
    }
    Ok(())
}

/// Checks each `(name, value, lo, hi)` of a configuration: `lo..=hi`.
pub(crate) fn validate_ranges(ranges: &[(&str, usize, usize, usize)]) -> Result<(), PtmError> {
    for &(name, v, lo, hi) in ranges {
        if v < lo || v > hi {
            return Err(PtmError::Config(format!(
                "{name} is {v}, must be in {lo}..={hi}"
            )));
        }
    }
    Ok(())
}

/// Null recovery's opening, for every construction (seed §4 and §5: the
/// replica `cur_comb` designates is the state): the header and `cur_comb`
/// validated ([`open`]), and `config` with the pool's thread count,
/// validated. Returns the geometry, `cur_comb` and that configuration.
pub(crate) fn open_with_config<B: Backend, C: PoolConfig>(
    pool: &Pool<B>,
    kind: &Kind,
    flavour_word: u64,
    config: &C,
) -> Result<(Geometry, u64, C), PtmError> {
    let (g, cur) = open(pool, kind, flavour_word)?;
    let mut config = config.clone();
    *config.threads_mut() = g.threads;
    config.validate()?;
    Ok((g, cur, config))
}

/// Formats `pool` for a construction with no object of its own (flavour
/// word 0, empty replica 0): CX-PTM and the Redo family.
pub(crate) fn create_empty<B: Backend, C: PoolConfig>(
    pool: &Pool<B>,
    kind: &Kind,
    threads: usize,
    config: &C,
) -> Result<(), PtmError> {
    config.validate()?;
    create(pool, kind, threads, 0, |_, _, _| Ok(()))?;
    Ok(())
}

/// Opens the construction of `kind` in `pool` with `open`, or formats one
/// with `create` if the pool holds none.
pub(crate) fn open_or_create<B: Backend, P>(
    pool: Pool<B>,
    kind: &Kind,
    open: impl FnOnce(Pool<B>) -> Result<P, PtmError>,
    create: impl FnOnce(Pool<B>) -> Result<P, PtmError>,
) -> Result<P, PtmError> {
    if is_formatted(&pool, kind)? {
        open(pool)
    } else {
        create(pool)
    }
}

/// Formats `pool` with `threads` threads: replica 0 formatted, `init`
/// applied to it (CX-PUC's object), written back, `cur_comb` naming it,
/// and the header written last, so a crash before that leaves a pool that
/// opens as not formatted. Returns the geometry.
pub(crate) fn create<B: Backend>(
    pool: &Pool<B>,
    kind: &Kind,
    threads: usize,
    flavour_word: u64,
    init: impl FnOnce(&Pool<B>, u64, u64) -> Result<(), PtmError>,
) -> Result<Geometry, PtmError> {
    let header = pool.data_offset();
    let size = pool.size();
    let replicas = (kind.replicas)(threads) as u64;
    let too_small = || PtmError::PoolTooSmall {
        pool_size: size,
        threads,
        replicas: replicas as usize,
        min_replica: MIN_REPLICA,
        needed: header + REPLICAS + replicas * MIN_REPLICA,
    };
    let avail = size.checked_sub(header + REPLICAS).ok_or_else(too_small)?;
    let replica_len = avail / replicas / GRANULE * GRANULE;
    if replica_len < MIN_REPLICA {
        return Err(too_small());
    }
    let g = Geometry {
        header,
        threads,
        replica_len,
        replicas: replicas as usize,
    };
    // Invalidate any earlier header first, so that a crash below leaves
    // "not formatted" rather than an old PTM over a half-formatted area.
    pool.word(header)?.store(0, Ordering::Release);
    pool.pwb(header, 8);
    pool.pfence();
    replica::format(pool, g.replica(0), replica_len)?;
    init(pool, g.replica(0), replica_len)?;
    let used = replica::used_len(pool, g.replica(0), replica_len)?;
    pool.pwb(g.replica(0), used);
    pool.word(g.cur_comb())?
        .store(sti::pack(0, 0, 0), Ordering::Release);
    pool.pwb(g.cur_comb(), 8);
    pool.pfence();
    meta::write(
        pool,
        header,
        &[
            kind.magic,
            VERSION,
            threads as u64,
            replica_len,
            g.replicas_base(),
            size,
            flavour_word,
        ],
    )?;
    Ok(g)
}

/// Whether `pool` holds a header of `kind` (valid or not) or anything
/// else where its magic goes: only a 0 word there (a fresh pool, or a
/// `create` a crash cut off, as the header is written last) counts as not
/// formatted. A damaged magic is not a fresh pool: [`open_or_create`] must
/// open it (and report it), never format over what the pool holds.
pub(crate) fn is_formatted<B: Backend>(pool: &Pool<B>, kind: &Kind) -> Result<bool, PtmError> {
    Ok(!matches!(
        meta::read(pool, pool.data_offset(), kind.magic)?,
        meta::Verdict::NoMagic(0)
    ))
}

/// Validates the header and `cur_comb` of a pool formatted for `kind`
/// (flavour word `flavour_word`): the geometry and the persisted
/// `cur_comb`, after checking the allocator of the replica it designates.
pub(crate) fn open<B: Backend>(
    pool: &Pool<B>,
    kind: &Kind,
    flavour_word: u64,
) -> Result<(Geometry, u64), PtmError> {
    let header = pool.data_offset();
    let corrupt =
        |reason: String| PtmError::from(perdure_pm::PmError::corrupt(kind.name, header, reason));
    let w = match meta::read(pool, header, kind.magic)? {
        meta::Verdict::Valid(w) => w,
        meta::Verdict::NoMagic(found) => {
            return Err(meta::NotFormatted::new(kind.name, header, found).into())
        }
        meta::Verdict::BadChecksum(stored) => {
            return Err(corrupt(format!(
                "the header's checksum {stored:#x} does not match its fields"
            )))
        }
    };
    let [_, version, threads, replica_len, base, size, flavour] = w;
    if version != VERSION {
        return Err(PtmError::UnsupportedVersion {
            kind: kind.name,
            found: version,
            supported: VERSION,
        });
    }
    let n = match usize::try_from(threads) {
        Ok(n) if (1..sti::MAX_THREADS).contains(&n) => n,
        _ => return Err(corrupt(format!("the header records {threads} threads"))),
    };
    let g = Geometry {
        header,
        threads: n,
        replica_len,
        replicas: (kind.replicas)(n),
    };
    let fits = (g.replicas as u64)
        .checked_mul(replica_len)
        .and_then(|r| r.checked_add(g.replicas_base()))
        .is_some_and(|end| end <= pool.size());
    let problem = if replica_len < MIN_REPLICA || replica_len % GRANULE != 0 {
        Some(format!(
            "the replica length {replica_len} is not a multiple of {GRANULE} of at least {MIN_REPLICA}"
        ))
    } else if base != g.replicas_base() {
        Some(format!(
            "the replicas start at {base:#x}, expected {:#x}",
            g.replicas_base()
        ))
    } else if size != pool.size() {
        Some(format!(
            "the header was written for a pool of {size} bytes, this one has {}",
            pool.size()
        ))
    } else if !fits {
        Some(format!(
            "{} replicas of {replica_len} bytes do not fit the pool",
            g.replicas
        ))
    } else if flavour != flavour_word {
        Some(format!(
            "the pool holds an object of layout {flavour:#x}, this program expects {flavour_word:#x}"
        ))
    } else {
        None
    };
    if let Some(p) = problem {
        return Err(corrupt(p));
    }
    let cur = pool.word(g.cur_comb())?.load(Ordering::Acquire);
    if sti::idx(cur) >= g.replicas() || sti::tid(cur) >= sti::MAX_THREADS {
        return Err(corrupt(format!(
            "cur_comb {cur:#x} names replica {} of {}",
            sti::idx(cur),
            g.replicas()
        )));
    }
    replica::used_len(pool, g.replica(sti::idx(cur)), replica_len).map_err(|e| {
        corrupt(format!(
            "the replica cur_comb designates ({}) has a damaged allocator: {e}",
            sti::idx(cur)
        ))
    })?;
    Ok((g, cur))
}

const _: () = assert!(ALLOC_BASE < MIN_REPLICA);
