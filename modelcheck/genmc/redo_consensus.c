/*
 * GenMC model of Redo-PTM's combining consensus (Algorithm 3 of the seed, `applyUpdate`):
 * announce, the State ring, the `cur_comb` CAS, replay or copy of a replica, and apply-once of
 * each announced operation.
 *
 * Models (every atomic operation with the Rust code's ordering):
 *   impl/perdure-ptm/src/redo/update.rs: `publish` (the request swapped into `req[tid]`, then the
 *     announcement; no older request to retire in this client), `apply_update` (the std build:
 *     the loom-only fence is left out), `attempt_update` {2}-{9} and L32-L42, `bring_up_to_date`,
 *     `replay`, `copy_designated`, `simulate` (with its hazard pointer on the request),
 *     `execute` (no panics), `collect`;
 *   impl/perdure-ptm/src/redo/state.rs: `State::copy_from`, `LogArena::position`, `write`,
 *     `read`, `still_holds`;
 *   impl/perdure-ptm/src/redo/tx.rs: the update transaction's `try_store` and `try_load`, and
 *     `Writer::log` / `undo_to` (the plain variant: no merging of entries);
 *   impl/perdure-ptm/src/redo/variant.rs: `copy_words` (the plain variant's loop).
 * Not modelled: persistence (`flush_dirty`, `fence_before_cas`, `pwb`/`psync`,
 * `ensure_durable`/`note_durable`, which only add write-backs and a watermark), statistics and
 * traces, the timed variant's `lock_combined` (this is `lock_any`), panicking closures. The
 * strong try reader-writer lock of each `Combined` is abstracted to one SeqCst word (state and
 * reader count, changed by read-modify-writes): rwlock.c checks the lock itself. Offsets are in
 * words; `sti::pack` keeps its field order with narrower fields. A freed request is a plain
 * FREED store into its `job`; `execute` reads it.
 *
 * Client (N = 2 threads, 2 States per thread, a ring of 4, N + 1 = 3 replicas of 3 words, log
 * arenas of 4 entries): thread t runs apply_update of closures that add 1 to word 0 (the
 * counter) and to word 1 + t (its own count), and return the counter's old value. CI: one
 * update per thread. DEEP: thread 0 runs two, so that its second reuses the initial tail State
 * (the seqlock case of redo_state_copy.c, inside the whole protocol), replaces and reclaims its
 * first request under the hazard pointers, and thread 1 may replay its logs.
 * Retry loops are cut after ROUNDS passes (an assume, a blocked execution).
 *
 * Invariants:
 *   - apply-once and results: the results are 0..TOTAL-1, each once, each thread's increasing;
 *     after the joins the replica `cur_comb` designates holds counter TOTAL and each thread's own
 *     count its number of updates, its head is `cur_comb`'s sequence, and its State records the
 *     last sequence number and result of each thread;
 *   - `cur_comb` moves by one sequence at a time (each CAS from `cur` installs seq(cur) + 1), and
 *     a replica is designated only holding what its State says: at the CAS, the counter equals
 *     the sum of the sequence numbers the new State records as applied, and each thread's own
 *     count its applied sequence number;
 *   - no race on a request's (plain) fields, written before its announcement and read by
 *     helpers; no request used after `reclaim` freed it (DEEP).
 *
 * Mutants (rows genmc:redo-consensus-mutant-*, each must be reported as a violation):
 *   MUTANT_NO_APPLIED_CHECK   simulate runs every announced request, applied or not: an operation
 *                             applied twice (every model).
 *   MUTANT_NO_UNDO            a lost CAS leaves the replica unrolled (the Rust mutant
 *                             RedoNoUndoOnFailedCas): a replica claims `tail`'s state while it
 *                             holds the lost attempt's writes (every model).
 *   MUTANT_NO_VALIDATION_FENCE  attempt_update without the Acquire fence of its validation (the
 *                             bug loom found): no row (the CI client never reuses a State); see
 *                             the README for its DEEP run.
 *
 * Ordering mutants (tools/genmc-weaken.py, RC11, CI bound): 0 of 45 caught. The CI client is too
 * small to need them, for reasons that hold of every survivor:
 *   - no State is reused and no log arena lapped (one update per thread), so the seqlock
 *     orderings (copy_from's ticket store and Release fence, attempt_update's and collect's
 *     Acquire fences, the log arena's fences, replay's Acquire loads, log_len's Release store)
 *     decide nothing here; redo_state_copy.c and redo_log_arena.c catch their weakenings in
 *     isolation;
 *   - the abstract lock orders every holder of a replica after the previous one (SeqCst
 *     read-modify-writes on one word), which covers the replica words and `head`;
 *   - `cur_comb`, the ring and the request words are read-modify-written or read for a value,
 *     and a one-step weakening keeps release/acquire; the Dekker pair the module docs name
 *     (the announcement store, then `cur_comb` load, against a committer's load of `cur_comb`,
 *     then of the announcement) is for the "two transitions since the announcement" exit, which
 *     this client never reaches.
 *
 * Orderings (tools/genmc-orderings.py): functions transcribed in part (their other branches are
 * the opt variant's, the merging log's, or statistics):
 * genmc-partial: copy_words undo_to
 *
 * genmc-row: redo-consensus
 * genmc-row: redo-consensus-mutant-no-applied-check -DMUTANT_NO_APPLIED_CHECK violates=rc11,imm,tso
 * genmc-row: redo-consensus-mutant-no-undo -DMUTANT_NO_UNDO violates=rc11,imm,tso
 */
#include <assert.h>
#include <genmc.h> /* __VERIFIER_assume */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define SC memory_order_seq_cst
#define ACQ memory_order_acquire
#define REL memory_order_release
#define RLX memory_order_relaxed

#define N 2
#define RING 4     /* (N * S).next_power_of_two() */
#define S 2        /* states_per_thread */
#define COMBS (N + 1)
#define CAP 4      /* log_entries_per_thread */
#define RLEN 3     /* replica words */
#define ROUNDS 4

#define INVALID UINT64_MAX
#define LOG_OVERFLOW UINT64_MAX
#define PANICKED (1ULL << 63)
#define SEQ_MASK ((1ULL << 44) - 1)
#define HALF (1ULL << 43)

/* sti.rs, with 8-bit tid and idx fields */
static inline uint64_t pack(uint64_t seq, uint64_t tid, uint64_t idx) { return ((seq & SEQ_MASK) << 16) | (tid << 8) | idx; }
static inline uint64_t seq_of(uint64_t w) { return w >> 16; }
static inline uint64_t tid_of(uint64_t w) { return (w >> 8) & 0xff; }
static inline uint64_t idx_of(uint64_t w) { return w & 0xff; }
static inline uint64_t seq_add(uint64_t s, uint64_t d) { return (s + d) & SEQ_MASK; }
static inline uint64_t seq_dist(uint64_t a, uint64_t b) { return (a - b) & SEQ_MASK; }
static inline bool seq_after(uint64_t a, uint64_t b) { uint64_t d = seq_dist(a, b); return d != 0 && d < HALF; }

struct state {
	atomic_ulong ticket;
	atomic_ulong applied[N];
	atomic_ulong results[N];
	atomic_ulong log_start, log_len;
};

struct arena {
	atomic_ulong entries[CAP][3];
	atomic_ulong written;
};

struct request {
	uint64_t seq;   /* plain: written before the request is published */
	int job;        /* plain: the closure (1: the counter update) */
};

/* The abstract lock: bits 0-1 the writer state, the rest 4 x the readers. */
#define NOLOCK 0UL
#define WLOCK 1UL
#define RLOCK 2UL
#define READER 4UL

struct comb {
	atomic_ulong head;
	atomic_ulong lock;
};

static atomic_ulong cur_comb;
static struct comb combs[COMBS];
static atomic_ulong replica[COMBS][RLEN];   /* PmWord: Relaxed loads and stores */
static struct state states[N][S];
static struct arena arenas[N];
static atomic_ulong ring[RING];
static atomic_ulong announce[N];
static _Atomic(struct request *) req[N];
static _Atomic(struct request *) hp[N];
#define MAXOPS 2
static struct request requests[N][MAXOPS];
/* A thread's Slot: its retired requests (freed by reclaim when no hazard pointer names them). */
static struct request *retired_req[N][MAXOPS];
static int nretired[N];
static int last_idx[N];

/* ---- the abstract strong try reader-writer lock (rwlock.c checks the real one) ---- */

static bool exclusive_try_lock(struct comb *c)
{
	unsigned long e = NOLOCK;
	return atomic_compare_exchange_strong_explicit(&c->lock, &e, WLOCK, SC, SC);
}
static void exclusive_unlock(struct comb *c) { atomic_fetch_and_explicit(&c->lock, ~3UL, SC); }
static void downgrade(struct comb *c) { atomic_fetch_add_explicit(&c->lock, RLOCK - WLOCK, SC); }
static void downgrade_unlock(struct comb *c) { atomic_fetch_sub_explicit(&c->lock, RLOCK, SC); }
static bool shared_try_lock(struct comb *c, int *rounds)
{
	unsigned long v = atomic_load_explicit(&c->lock, SC);
	for (;;) {
		__VERIFIER_assume(++*rounds <= 4 * ROUNDS);
		if ((v & 3) == WLOCK)
			return false;
		if (atomic_compare_exchange_strong_explicit(&c->lock, &v, v + READER, SC, SC))
			return true;
	}
}
static void shared_unlock(struct comb *c) { atomic_fetch_sub_explicit(&c->lock, READER, SC); }

/* ---- state.rs ---- */

static uint64_t position(struct arena *self)
{
	return atomic_load_explicit(&self->written, RLX); /* rust: position load Relaxed */
}

static void write(struct arena *self, uint64_t pos, uint64_t e0, uint64_t e1, uint64_t e2)
{
	atomic_store_explicit(&self->written, pos + 1, RLX); /* rust: write store Relaxed */
	atomic_thread_fence(REL);                             /* rust: write fence Release */
	atomic_ulong *s = self->entries[pos % CAP];
	uint64_t e[3] = {e0, e1, e2};
	for (int i = 0; i < 3; i++)
		atomic_store_explicit(&s[i], e[i], RLX); /* rust: write store Relaxed */
}

static void read(struct arena *self, uint64_t pos, uint64_t out[3])
{
	atomic_ulong *s = self->entries[pos % CAP];
	out[0] = atomic_load_explicit(&s[0], RLX); /* rust: read load Relaxed */
	out[1] = atomic_load_explicit(&s[1], RLX); /* rust: read load Relaxed */
	out[2] = atomic_load_explicit(&s[2], RLX); /* rust: read load Relaxed */
}

static bool still_holds(struct arena *self, uint64_t start, uint64_t len)
{
	atomic_thread_fence(ACQ);                                  /* rust: still_holds fence Acquire */
	uint64_t w = atomic_load_explicit(&self->written, RLX); /* rust: still_holds load Relaxed */
	return len <= CAP && w <= start + CAP;
}

static void copy_from(struct state *self, uint64_t ticket, struct state *from, uint64_t log_start)
{
	atomic_store_explicit(&self->ticket, ticket, SC); /* rust: copy_from store SeqCst */
	atomic_thread_fence(REL);                         /* rust: copy_from fence Release */
	for (int i = 0; i < N; i++) {
		uint64_t a = atomic_load_explicit(&from->applied[i], RLX); /* rust: copy_from load Relaxed */
		atomic_store_explicit(&self->applied[i], a, RLX);          /* rust: copy_from store Relaxed */
	}
	for (int i = 0; i < N; i++) {
		uint64_t r = atomic_load_explicit(&from->results[i], RLX); /* rust: copy_from load Relaxed */
		atomic_store_explicit(&self->results[i], r, RLX);          /* rust: copy_from store Relaxed */
	}
	atomic_store_explicit(&self->log_start, log_start, RLX); /* rust: copy_from store Relaxed */
	atomic_store_explicit(&self->log_len, 0, RLX);           /* rust: copy_from store Relaxed */
}

static struct state *state_of(uint64_t ticket)
{
	uint64_t t = tid_of(ticket), i = idx_of(ticket);
	return t < N && i < S ? &states[t][i] : NULL;
}

static atomic_ulong *ring_slot(uint64_t seq) { return &ring[seq & (RING - 1)]; }

/* ---- tx.rs: the Writer (no merging) and the update transaction ---- */

struct writer {
	struct arena *arena;
	uint64_t start, len;
	bool overflow;
};

static void log_entry(struct writer *w, uint64_t off, uint64_t old, uint64_t new)   /* Writer::log */
{
	if (w->overflow)
		return;
	uint64_t n = w->len;
	if (n == CAP) {
		w->overflow = true;
		return;
	}
	write(w->arena, w->start + n, off, old, new);
	w->len = n + 1;
}

static uint64_t published_len(struct writer *w) { return w->overflow ? LOG_OVERFLOW : w->len; }

static bool undo_to(struct writer *w, int base, uint64_t mark)
{
	if (w->overflow)
		return false;
	for (uint64_t i = w->len; i-- > mark;) {
		uint64_t e[3];
		read(w->arena, w->start + i, e);
		atomic_store_explicit(&replica[base][e[0]], e[1], RLX); /* rust: undo_to store Relaxed */
	}
	w->len = mark;
	return true;
}

static uint64_t try_load(int base, uint64_t off)
{
	return atomic_load_explicit(&replica[base][off], RLX); /* rust: try_load load Relaxed */
}

static void try_store(struct writer *w, int base, uint64_t off, uint64_t val)
{
	uint64_t old = atomic_load_explicit(&replica[base][off], RLX); /* rust: try_store load Relaxed */
	log_entry(w, off, old, val);
	atomic_store_explicit(&replica[base][off], val, RLX); /* rust: try_store store Relaxed */
}

/* ---- variant.rs ---- */

static void copy_words(int src, int dst)
{
	for (int off = 0; off < RLEN; off++) {
		uint64_t v = atomic_load_explicit(&replica[src][off], RLX); /* rust: copy_words load Relaxed */
		atomic_store_explicit(&replica[dst][off], v, RLX);          /* rust: copy_words store Relaxed */
	}
}

/* ---- update.rs ---- */

#define FREED_JOB (-1)

static void reclaim(int tid)
{
	int kept = 0;
	for (int k = 0; k < nretired[tid]; k++) {
		struct request *r = retired_req[tid][k];
		bool named = false;
		for (int i = 0; i < N && !named; i++)
			named = atomic_load_explicit(&hp[i], SC) == r; /* rust: reclaim load SeqCst */
		if (named) {
			retired_req[tid][kept++] = r;
			continue;
		}
		r->job = FREED_JOB;   /* drop(Box::from_raw(r)) */
	}
	nretired[tid] = kept;
}

static uint64_t publish(int tid)
{
	uint64_t seq = atomic_load_explicit(&announce[tid], RLX) + 1; /* rust: publish load Relaxed */
	struct request *p = &requests[tid][seq - 1];   /* Box::new(Request { seq, job }) */
	p->seq = seq;
	p->job = 1;
	struct request *old = atomic_exchange_explicit(&req[tid], p, SC); /* rust: publish swap SeqCst */
	if (old != NULL)
		retired_req[tid][nretired[tid]++] = old;
	/* The announcement: SeqCst (its Ordering is a variable, `mutant!(RedoAnnounceRelease)`'s
	 * choice, which the orderings check cannot read). */
	atomic_store_explicit(&announce[tid], seq, SC);
	reclaim(tid);
	return seq;
}

/* L23: the closure, on the replica at `base` */
static uint64_t execute(struct request *r, int base, struct writer *w, int owner)
{
	assert(r->job == 1 && "a request used after it was freed");
	uint64_t c = try_load(base, 0);
	try_store(w, base, 0, c + 1);
	uint64_t mine = try_load(base, 1 + owner);
	try_store(w, base, 1 + owner, mine + 1);
	return c;
}

static bool simulate(int tid, int base, struct state *new_st, struct writer *w, uint64_t cur)
{
	for (int i = 0; i < N; i++) {
		uint64_t applied = atomic_load_explicit(&new_st->applied[i], RLX) & ~PANICKED; /* rust: simulate load Relaxed */
#ifndef MUTANT_NO_APPLIED_CHECK
		if (atomic_load_explicit(&announce[i], SC) <= applied) /* rust: simulate load SeqCst */
			continue;
#else
		if (atomic_load_explicit(&announce[i], SC) == 0)
			continue;
#endif
		struct request *p = atomic_load_explicit(&req[i], SC); /* rust: simulate load SeqCst */
		if (p == NULL)
			return false;
		atomic_store_explicit(&hp[tid], p, SC); /* rust: simulate store SeqCst */
		if (atomic_load_explicit(&req[i], SC) != p                /* rust: simulate load SeqCst */
		    || cur != atomic_load_explicit(&cur_comb, SC)) {      /* rust: simulate load SeqCst */
			atomic_store_explicit(&hp[tid], NULL, REL); /* rust: simulate store Release */
			return false;
		}
#ifndef MUTANT_NO_APPLIED_CHECK
		if (p->seq > applied) {
#else
		{
#endif
			uint64_t res = execute(p, base, w, i);
			atomic_store_explicit(&new_st->results[i], res, RLX);    /* rust: simulate store Relaxed */
			atomic_store_explicit(&new_st->applied[i], p->seq, RLX); /* rust: simulate store Relaxed */
		}
		atomic_store_explicit(&hp[tid], NULL, REL); /* rust: simulate store Release */
	}
	return true;
}

static bool replay(int h, uint64_t head, uint64_t tail)
{
	uint64_t n = seq_dist(seq_of(tail), seq_of(head));
	if (n > RING)
		return false;
	for (uint64_t k = 1; k <= n; k++) {
		uint64_t s = seq_add(seq_of(head), k);
		uint64_t t = atomic_load_explicit(ring_slot(s), SC); /* rust: replay load SeqCst */
		if (t == INVALID || seq_of(t) != s)
			return false;
		struct state *st = state_of(t);
		if (st == NULL)
			return false;
		if (atomic_load_explicit(&st->ticket, SC) != t) /* rust: replay load SeqCst */
			return false;
		uint64_t len = atomic_load_explicit(&st->log_len, ACQ);     /* rust: replay load Acquire */
		uint64_t start = atomic_load_explicit(&st->log_start, ACQ); /* rust: replay load Acquire */
		struct arena *arena = &arenas[tid_of(t)];
		if (len == LOG_OVERFLOW || len > CAP)
			return false;
		for (uint64_t p = start; p < start + len; p++) {
			uint64_t e[3];
			read(arena, p, e);
			if (e[0] >= RLEN)
				return false; /* a lapped slot: garbage */
			atomic_store_explicit(&replica[h][e[0]], e[2], RLX); /* rust: replay store Relaxed */
		}
		if (!still_holds(arena, start, len) || atomic_load_explicit(&st->ticket, RLX) != t) /* rust: replay load Relaxed */
			return false;
	}
	return true;
}

static bool copy_designated(int h, uint64_t cur, uint64_t tail, int tid, int *rounds)
{
	struct comb *src = &combs[idx_of(cur)];
	if (!shared_try_lock(src, rounds))
		return false;
	bool ok = cur == atomic_load_explicit(&cur_comb, SC)      /* rust: copy_designated load SeqCst */
		  && atomic_load_explicit(&src->head, SC) == tail; /* rust: copy_designated load SeqCst */
	if (ok)
		copy_words(idx_of(cur), h);
	shared_unlock(src);
	return ok;
}

static bool bring_up_to_date(int h, uint64_t cur, uint64_t tail, int tid, int *rounds)
{
	struct comb *c = &combs[h];
	uint64_t head = atomic_load_explicit(&c->head, SC); /* rust: bring_up_to_date load SeqCst */
	if (head == tail)
		return true;
	bool behind;
	if (head == INVALID)
		behind = false;
	else if (seq_after(seq_of(head), seq_of(tail)))
		return false;
	else
		behind = seq_after(seq_of(tail), seq_of(head));
	atomic_store_explicit(&c->head, INVALID, SC); /* rust: bring_up_to_date store SeqCst */
	if (behind && replay(h, head, tail)) {
		atomic_store_explicit(&c->head, tail, SC); /* rust: bring_up_to_date store SeqCst */
		return true;
	}
	if (copy_designated(h, cur, tail, tid, rounds)) {
		atomic_store_explicit(&c->head, tail, SC); /* rust: bring_up_to_date store SeqCst */
		return true;
	}
	return false;
}

static int lock_any(uint64_t cur)
{
	for (int i = 0; i < COMBS; i++)
		if (i != (int)idx_of(cur) && exclusive_try_lock(&combs[i]))
			return i;
	return -1;
}

enum outcome { GAVE_UP, COMMITTED, APPLIED };

static enum outcome attempt_update(int tid, uint64_t my_seq, uint64_t init, int new_idx, uint64_t *res, int *rounds)
{
	struct state *new_st = &states[tid][new_idx];
	int held = -1;
	enum outcome outcome = GAVE_UP;
	for (int attempt = 0; attempt < 2; attempt++) {
		/* {2} */
		uint64_t cur = atomic_load_explicit(&cur_comb, SC); /* rust: attempt_update load SeqCst */
		if (seq_dist(seq_of(cur), seq_of(init)) >= 2)
			break; /* two transitions since the announcement: applied */
		struct comb *comb = &combs[idx_of(cur)];
		uint64_t tail = atomic_load_explicit(&comb->head, SC); /* rust: attempt_update load SeqCst */
		if (tail == INVALID || seq_of(tail) != seq_of(cur))
			continue;
		struct state *tail_st = state_of(tail);
		if (tail_st == NULL)
			continue;
		uint64_t tkt = pack(seq_add(seq_of(cur), 1), tid, new_idx);
		/* {3} */
		copy_from(new_st, tkt, tail_st, position(&arenas[tid]));
#ifndef MUTANT_NO_VALIDATION_FENCE
		atomic_thread_fence(ACQ); /* rust: attempt_update fence Acquire */
#endif
		if (atomic_load_explicit(&tail_st->ticket, RLX) != tail /* rust: attempt_update load Relaxed */
		    || cur != atomic_load_explicit(&cur_comb, SC))      /* rust: attempt_update load SeqCst */
			continue;
		uint64_t mine = atomic_load_explicit(&new_st->applied[tid], RLX); /* rust: attempt_update load Relaxed */
		if ((mine & ~PANICKED) >= my_seq) {
			*res = atomic_load_explicit(&new_st->results[tid], RLX); /* rust: attempt_update load Relaxed */
			outcome = APPLIED;
			break;
		}
		/* {4} */
		atomic_ulong *ring_s = ring_slot(seq_of(tail));
		uint64_t rt = atomic_load_explicit(ring_s, SC); /* rust: attempt_update load SeqCst */
		if (rt != tail) {
			if (rt != INVALID && seq_after(seq_of(rt), seq_of(tail)))
				continue;
			atomic_compare_exchange_strong_explicit(ring_s, &rt, tail, SC, SC); /* rust: attempt_update compare_exchange SeqCst SeqCst */
		}
		/* {5} */
		if (held < 0)
			held = lock_any(cur);
		if (held < 0)
			break;
		struct comb *c = &combs[held];
		/* {6} */
		if (!bring_up_to_date(held, cur, tail, tid, rounds))
			continue;
		/* {7} */
		atomic_store_explicit(&c->head, INVALID, SC); /* rust: attempt_update store SeqCst */
		struct writer writer = {&arenas[tid], position(&arenas[tid]), 0, false};   /* Writer::new */
		bool complete = simulate(tid, held, new_st, &writer, cur);
		if (complete && cur == atomic_load_explicit(&cur_comb, SC)) { /* rust: attempt_update load SeqCst */
			atomic_store_explicit(&new_st->log_len, published_len(&writer), REL); /* rust: attempt_update store Release */
			atomic_store_explicit(&c->head, tkt, SC); /* rust: attempt_update store SeqCst */
			downgrade(c); /* {8} */
			uint64_t next = pack(seq_of(tkt), tid, held);
			/* What this CAS installs: a replica holding what its State records. */
			uint64_t count = 0;
			for (int i = 0; i < N; i++) {
				uint64_t a = atomic_load_explicit(&new_st->applied[i], RLX);
				count += a;
				assert(atomic_load_explicit(&replica[held][1 + i], RLX) == a && "a replica that does not hold its State");
			}
			assert(atomic_load_explicit(&replica[held][0], RLX) == count && "a replica that does not hold its State");
			uint64_t expected = cur;
			/* {9} */
			if (atomic_compare_exchange_strong_explicit(&cur_comb, &expected, next, SC, SC)) { /* rust: attempt_update compare_exchange SeqCst SeqCst */
				assert(seq_of(next) == seq_of(cur) + 1);
				downgrade_unlock(comb); /* L31 */
				/* L32-L35 */
				atomic_ulong *ring_t = ring_slot(seq_of(tkt));
				uint64_t rt2 = atomic_load_explicit(ring_t, SC); /* rust: attempt_update load SeqCst */
				if (rt2 == INVALID || seq_after(seq_of(tkt), seq_of(rt2)))
					atomic_compare_exchange_strong_explicit(ring_t, &rt2, tkt, SC, SC); /* rust: attempt_update compare_exchange SeqCst SeqCst */
				uint64_t m = atomic_load_explicit(&new_st->applied[tid], RLX); /* rust: attempt_update load Relaxed */
				*res = atomic_load_explicit(&new_st->results[tid], RLX);       /* rust: attempt_update load Relaxed */
				assert((m & ~PANICKED) == my_seq);
				return COMMITTED;
			}
		}
		/* L38-L39: roll the replica back to `tail` */
#ifdef MUTANT_NO_UNDO
		bool undone = true;
#else
		bool undone = undo_to(&writer, held, 0);
#endif
		atomic_store_explicit(&c->head, undone ? tail : INVALID, SC); /* rust: attempt_update store SeqCst */
	}
	/* L41-L42 */
	if (held >= 0)
		exclusive_unlock(&combs[held]);
	return outcome;
}

/* L43-L50 */
static bool collect(int tid, uint64_t my_seq, uint64_t *res)
{
	uint64_t cur = atomic_load_explicit(&cur_comb, SC); /* rust: collect load SeqCst */
	uint64_t t = atomic_load_explicit(&combs[idx_of(cur)].head, SC); /* rust: collect load SeqCst */
	if (t == INVALID || seq_of(t) != seq_of(cur))
		t = atomic_load_explicit(ring_slot(seq_of(cur)), SC); /* rust: collect load SeqCst */
	if (t == INVALID || seq_dist(seq_of(t), seq_of(cur)) >= HALF)
		return false;
	struct state *st = state_of(t);
	if (st == NULL)
		return false;
	if (atomic_load_explicit(&st->ticket, SC) != t) /* rust: collect load SeqCst */
		return false;
	uint64_t applied = atomic_load_explicit(&st->applied[tid], RLX); /* rust: collect load Relaxed */
	uint64_t result = atomic_load_explicit(&st->results[tid], RLX);  /* rust: collect load Relaxed */
	atomic_thread_fence(ACQ);                                          /* rust: collect fence Acquire */
	if (atomic_load_explicit(&st->ticket, RLX) != t || (applied & ~PANICKED) < my_seq) /* rust: collect load Relaxed */
		return false;
	*res = result;
	return true;
}

static uint64_t apply_update(int tid)
{
	uint64_t my_seq = publish(tid);
	uint64_t init = atomic_load_explicit(&cur_comb, SC); /* rust: apply_update load SeqCst */
	int new_idx = last_idx[tid];
	int rounds = 0;
	uint64_t res;
	for (;;) {
		__VERIFIER_assume(++rounds <= ROUNDS);
		enum outcome o = attempt_update(tid, my_seq, init, new_idx, &res, &rounds);
		if (o == COMMITTED) {
			last_idx[tid] = (new_idx + 1) % S;
			return res;
		}
		if (o == APPLIED)
			return res;
		if (collect(tid, my_seq, &res))
			return res;
	}
}

/* ---- the client ---- */

#ifdef DEEP
static const int ops[N] = {2, 1};   /* thread 0's second update reuses the initial tail State */
#define TOTAL 3
#else
static const int ops[N] = {1, 1};
#define TOTAL 2
#endif
static uint64_t result[N][MAXOPS];

static void *updater(void *arg)
{
	int t = (int)(intptr_t)arg;
	for (int k = 0; k < ops[t]; k++)
		result[t][k] = apply_update(t);
	return NULL;
}

int main(void)
{
	uint64_t ticket0 = pack(0, 0, 0);
	for (int t = 0; t < N; t++)
		for (int i = 0; i < S; i++)
			atomic_init(&states[t][i].ticket, INVALID);
	atomic_init(&states[0][0].ticket, ticket0);   /* reset(ticket0) */
	for (int c = 0; c < COMBS; c++)
		atomic_init(&combs[c].head, INVALID);
	atomic_init(&combs[0].head, ticket0);
	atomic_init(&combs[0].lock, RLOCK);           /* set_read_lock */
	for (int i = 0; i < RING; i++)
		atomic_init(&ring[i], INVALID);
	atomic_init(&ring[0], ticket0);
	atomic_init(&cur_comb, pack(0, 0, 0));
	last_idx[0] = 1;   /* usize::from(t == 0): states[0][0] holds ticket0 */
	pthread_t th[N];
	for (int t = 0; t < N; t++)
		pthread_create(&th[t], NULL, updater, (void *)(intptr_t)t);
	for (int t = 0; t < N; t++)
		pthread_join(th[t], NULL);
	/* Each operation applied once: the results are 0..TOTAL-1, each once, a thread's in order. */
	bool got[TOTAL] = {false};
	for (int t = 0; t < N; t++)
		for (int k = 0; k < ops[t]; k++) {
			uint64_t r = result[t][k];
			assert(r < TOTAL && !got[r] && "results not 0..TOTAL-1: an operation applied twice or lost");
			got[r] = true;
			assert((k == 0 || result[t][k - 1] < r) && "a thread's operations out of order");
		}
	uint64_t cur = atomic_load_explicit(&cur_comb, RLX);
	int d = (int)idx_of(cur);
	assert(atomic_load_explicit(&replica[d][0], RLX) == TOTAL && "the designated replica's counter is not the number of operations");
	for (int t = 0; t < N; t++)
		assert(atomic_load_explicit(&replica[d][1 + t], RLX) == (uint64_t)ops[t] && "an operation applied twice or lost");
	uint64_t head = atomic_load_explicit(&combs[d].head, RLX);
	assert(seq_of(head) == seq_of(cur) && "the designated head is not cur_comb's");
	struct state *st = state_of(head);
	assert(st != NULL && atomic_load_explicit(&st->ticket, RLX) == head);
	for (int t = 0; t < N; t++) {
		assert(atomic_load_explicit(&st->applied[t], RLX) == (uint64_t)ops[t]);
		assert(atomic_load_explicit(&st->results[t], RLX) == result[t][ops[t] - 1]);
	}
	return 0;
}
