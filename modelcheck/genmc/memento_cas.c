/*
 * GenMC model of Memento's detectable CAS with helping: the annotated word (parity, tid, value),
 * the OWN timestamps, the HELP array indexed by parity, and the recovery's decision whether an
 * interrupted CAS took effect.
 *
 * Models:
 *   impl/perdure-memento/src/cas.rs: `DetectableCasAtomic::cas` (the first CAS loop with
 *     load_help on failure, the memento, `set_own`, `second_cas`; and its recovery branch L10-⑨,
 *     up to the decision), `second_cas`, `load_help` (L2-L21, with `patience::wait` of
 *     impl/perdure-memento/src/patience.rs cut to one look: the wait expires at once, which only
 *     makes helping sooner);
 *   impl/perdure-memento/src/runtime.rs: `Handle::load` (SeqCst), `Handle::store` (SeqCst),
 *     `Handle::cas` (SeqCst/SeqCst), `Runtime::own`/`set_own`/`local`/`set_local` (Relaxed);
 *   impl/perdure-memento/src/ts.rs: `Clock::raw`, the `Counter` clock (a SeqCst fetch_add);
 *     the default clock, rdtscp + lfence, is not a C11 operation: the model takes the counter.
 * Not modelled: persistence (every pwb, flush, pfence and deferred fence; a crash loses nothing
 * here, so the volatile OWN equals what a recovery rebuilds from the mementos), the Memento
 * composition and checkpoints around the CAS.
 *
 * Client (CI: 3 threads):
 *   owner   (tid 1) a = cas(0, 1) with memento m1, then b = cas(1, 2) with memento m2 (the other
 *           parity); a crash point before each step of the second CAS: it stops there when the
 *           crasher's flag says so (GenMC explores every point the flag can be seen at);
 *   rival   (tid 2) c = cas(0, 5) (helps an annotated word it meets, then fails or wins);
 *   crasher sets the crash flag (a ghost, SeqCst).
 * DEEP: a third CAS thread (tid 3) loads, helping.
 *
 * Invariants:
 *   - linearizability of the CASes: exactly one of a and c succeeds; if a did, b succeeds unless
 *     the owner crashed first; a failed CAS returns a stable value the word held (5 for the
 *     owner's, 1 or 2 for the rival's); after the joins the word is stable (no annotation left,
 *     a helper or the owner cleaned it) and holds the last successful CAS's value;
 *   - detectability: after the joins, the recovery branch of `cas` run for the owner's second
 *     CAS (the memento m2, the word, OWN, HELP[parity][owner]) decides "took effect" (its memento
 *     says so, the word still names it, or HELP says someone helped it after OWN) exactly when
 *     the owner's first CAS of that operation succeeded (a ghost flag set right after it).
 *
 * Mutants (each must be reported as a violation):
 *   MUTANT_NO_HELP_UPDATE   load_help cleans the word without first raising HELP (the Rust
 *                           mutant SkipHelpUpdate): a helped CAS that crashed before its memento
 *                           is judged not to have taken effect (every model).
 *   MUTANT_SAME_PARITY      every CAS uses parity 1 (no alternation): HELP of the first CAS
 *                           passes for help of the second (every model).
 *
 * Ordering mutants (tools/genmc-weaken.py, RC11): 0 of 5 caught. Every decision of the protocol
 * is taken by a read-modify-write (the CASes on the word and on HELP, the clock's fetch_add),
 * which reads the last value in modification order whatever its ordering, and a load only feeds
 * a CAS that re-checks it; one step of weakening keeps release/acquire between them. With the
 * real clock (rdtscp + lfence, no C11 operation) the order of a helper's timestamp after its
 * load of the annotated word is the lfence's, which this model cannot weaken.
 *
 * genmc-row: memento-cas
 * genmc-row: memento-cas-mutant-no-help-update -DMUTANT_NO_HELP_UPDATE violates=rc11,imm,tso
 * genmc-row: memento-cas-mutant-same-parity -DMUTANT_SAME_PARITY violates=rc11,imm,tso
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define SC memory_order_seq_cst
#define RLX memory_order_relaxed

#define CAS_VALUE_MASK ((1ULL << 54) - 1)
#define CAS_TID_SHIFT 54
#define CAS_PARITY_SHIFT 63
#define TS_MASK ((1ULL << 62) - 1)
#define MMT_FAIL_BIT (1ULL << 62)
#define MMT_PARITY_BIT (1ULL << 63)
#define THREADS 4   /* tids 1..3 */

/* word.rs: CasWord (parity, tid, value) and CasTs (parity, fail, ts), as functions of the word */
static inline uint64_t cw_make(bool parity, uint64_t tid, uint64_t value)
{
	return ((uint64_t)parity << CAS_PARITY_SHIFT) | (tid << CAS_TID_SHIFT) | (value & CAS_VALUE_MASK);
}
static inline bool cw_parity(uint64_t w) { return w >> CAS_PARITY_SHIFT != 0; }
static inline uint64_t cw_tid(uint64_t w) { return (w >> CAS_TID_SHIFT) & 0x1ff; }
static inline uint64_t cw_value(uint64_t w) { return w & CAS_VALUE_MASK; }
static inline uint64_t stable(uint64_t v) { return cw_make(false, 0, v); }

static inline uint64_t ts_make(bool parity, bool fail, uint64_t ts)
{
	return ((uint64_t)parity << 63) | ((uint64_t)fail << 62) | (ts & TS_MASK);
}
static inline bool ts_parity(uint64_t w) { return (w & MMT_PARITY_BIT) != 0; }
static inline bool ts_fail(uint64_t w) { return (w & MMT_FAIL_BIT) != 0; }
static inline uint64_t ts_ts(uint64_t w) { return w & TS_MASK; }

/* Persistent words (Handle::load/store/cas) and the runtime's volatile arrays. */
static atomic_ulong word;                  /* the DetectableCasAtomic */
static atomic_ulong help[THREADS][2];      /* HELP[tid][parity] (help_off) */
static atomic_ulong mmt[THREADS][2];       /* a thread's CasMmt of its first and second CAS */
static atomic_ulong own[THREADS], local[THREADS];
static atomic_ulong counter;               /* Clock (Counter) */

/* ---- runtime.rs, ts.rs ---- */

static uint64_t load(atomic_ulong *w) { return atomic_load_explicit(w, SC); /* rust: load load SeqCst */ }
static void store(atomic_ulong *w, uint64_t v) { atomic_store_explicit(w, v, SC); /* rust: store store SeqCst */ }
static bool cas(atomic_ulong *w, uint64_t current, uint64_t new, uint64_t *actual)
{
	uint64_t e = current;
	bool ok = atomic_compare_exchange_strong_explicit(w, &e, new, SC, SC); /* rust: cas compare_exchange SeqCst SeqCst */
	*actual = e;
	return ok;
}
static uint64_t get_own(int tid) { return atomic_load_explicit(&own[tid], RLX); /* rust: own load Relaxed */ }
static void set_own(int tid, uint64_t v) { atomic_store_explicit(&own[tid], v, RLX); /* rust: set_own store Relaxed */ }
static uint64_t get_local(int tid) { return atomic_load_explicit(&local[tid], RLX); /* rust: local load Relaxed */ }
static void set_local(int tid, uint64_t ts) { atomic_store_explicit(&local[tid], ts, RLX); /* rust: set_local store Relaxed */ }
static uint64_t now(void) { return atomic_fetch_add_explicit(&counter, 1, SC) + 1; /* rust: raw fetch_add SeqCst */ }

/* ---- the crash (a ghost): the owner stops at a crash point once it sees the flag ---- */

static atomic_bool crash;
static atomic_bool took_effect;   /* ghost: the owner's second CAS's first CAS succeeded */
static bool crashed;              /* the owner's, read after the join */
#define CRASH_POINT(tid) \
	do { if ((tid) == 1 && second && atomic_load_explicit(&crash, SC)) { crashed = true; return -1; } } while (0)

/* ---- cas.rs ---- */

static uint64_t load_help(uint64_t old)
{
	for (;;) {
		/* L2 */
		if (cw_tid(old) == 0)
			return cw_value(old); /* L3 */
		uint64_t t_cur = now(); /* L4 */
		/* patience::wait, one look: clean (L7), changed (L8), else expired (L9) */
		uint64_t cur = load(&word);
		if (cw_tid(cur) == 0)
			return cw_value(cur);
		if (cur != old) {
			old = cur;
			continue;
		}
		atomic_ulong *h = &help[cw_tid(old)][cw_parity(old)];
		uint64_t t_help = load(h); /* L10 */
		if (t_cur <= t_help) {
			old = load(&word); /* L11 */
			continue;
		}
#ifndef MUTANT_NO_HELP_UPDATE
		uint64_t got;
		if (!cas(h, t_help, t_cur, &got)) {
			old = load(&word); /* L13-L14 */
			continue;
		}
#endif
		uint64_t actual;
		if (cas(&word, old, stable(cw_value(old)), &actual)) /* L17 */
			return cw_value(old); /* L21 */
		old = actual; /* L19 */
	}
}

static void second_cas(uint64_t annotated, uint64_t new)
{
	uint64_t actual;
	cas(&word, annotated, stable(new), &actual);
}

/* DetectableCasAtomic::cas without the recovery branch: Ok -> 0 and *ret the new value, Err ->
 * 1 and *ret the current value; -1 if the owner crashed (the second CAS only). */
static int detectable_cas(int tid, bool second, uint64_t old, uint64_t new, uint64_t *ret)
{
	atomic_ulong *m = &mmt[tid][second];
	uint64_t ownv = get_own(tid);
#ifdef MUTANT_SAME_PARITY
	bool p_new = true;
#else
	bool p_new = !ts_parity(ownv);
#endif
	uint64_t old_w = stable(old);
	uint64_t new_w = cw_make(p_new, (uint64_t)tid, new);
	for (;;) {
		CRASH_POINT(tid);
		uint64_t cur;
		if (cas(&word, old_w, new_w, &cur)) {
			if (tid == 1 && second)
				atomic_store_explicit(&took_effect, true, SC);
			break;
		}
		cur = load_help(cur); /* L27 */
		if (cur == old)
			continue; /* L28 */
		CRASH_POINT(tid);
		uint64_t t_fail = now();
		store(m, ts_make(false, true, t_fail));
		CRASH_POINT(tid);
		set_local(tid, t_fail);
		*ret = cur;
		return 1;
	}
	CRASH_POINT(tid);
	uint64_t t_succ = now();
	uint64_t ts_succ = ts_make(p_new, false, t_succ);
	store(m, ts_succ);
	CRASH_POINT(tid);
	set_own(tid, ts_succ);
	CRASH_POINT(tid);
	second_cas(new_w, new);
	CRASH_POINT(tid);
	set_local(tid, t_succ);
	*ret = new;
	return 0;
}

/* The recovery branch of `cas` (L10-⑨) for the owner's second CAS, up to its decision:
 * 1 took effect (Ok, FlushLoc or Checkpoint), 0 failed (the memento says so), -1 to be run again. */
static int recovery_decision(int tid, uint64_t new)
{
	uint64_t ownv = get_own(tid);
	bool p_new = !ts_parity(ownv);
#ifdef MUTANT_SAME_PARITY
	p_new = true;
#endif
	uint64_t mm = load(&mmt[tid][1]); /* L10, L11 */
	uint64_t cur = load(&word);                       /* L12 */
	uint64_t t_local = get_local(tid);               /* L13 */
	if (ts_ts(mm) > t_local && (ts_ts(mm) != 0 || ts_fail(mm))) {
		if (ts_fail(mm))
			return 0;
		return 1;
	}
	if (cw_tid(cur) == (uint64_t)tid && cw_value(cur) == new && cw_parity(cur) == p_new)
		return 1; /* FlushLoc */
	uint64_t t_help = load(&help[tid][p_new]);
	if (ts_ts(ownv) < t_help)
		return 1; /* Checkpoint */
	return -1; /* ⑨: not taken effect, run again */
}

/* ---- the client ---- */

static int a, b, c, d;
static uint64_t ra, rb, rc, rd;

static void *owner(void *arg)
{
	a = detectable_cas(1, false, 0, 1, &ra);
	b = detectable_cas(1, true, 1, 2, &rb);
	return NULL;
}

static void *rival(void *arg)
{
	c = detectable_cas(2, false, 0, 5, &rc);
	return NULL;
}

static void *crasher(void *arg)
{
	atomic_store_explicit(&crash, true, SC);
	return NULL;
}

#ifdef DEEP
static void *loader(void *arg)
{
	rd = load_help(load(&word));   /* DetectableCasAtomic::load */
	return NULL;
}
#endif

int main(void)
{
	atomic_init(&word, stable(0));
	pthread_t o, r, k;
	pthread_create(&o, NULL, owner, NULL);
	pthread_create(&r, NULL, rival, NULL);
	pthread_create(&k, NULL, crasher, NULL);
#ifdef DEEP
	pthread_t l;
	pthread_create(&l, NULL, loader, NULL);
	pthread_join(l, NULL);
#endif
	pthread_join(o, NULL);
	pthread_join(r, NULL);
	pthread_join(k, NULL);
	assert((a == 0) != (c == 0) && "not exactly one of two CASes from 0 succeeded");
	uint64_t w = atomic_load_explicit(&word, RLX);
	if (!crashed)
		assert(cw_tid(w) == 0 && "an annotation left on the word");
	if (a == 0) {
		assert(ra == 1 && c == 1 && (rc == 1 || rc == 2));
		if (!crashed)
			assert(b == 0 && cw_value(w) == 2);
	} else {
		assert(ra == 5 && c == 0 && rc == 5 && cw_value(w) == 5);
		if (!crashed)
			assert(b == 1 && rb == 5);
	}
	if (crashed) {
		int dec = recovery_decision(1, 2);
		bool took = atomic_load_explicit(&took_effect, RLX);
		assert((dec == 1) == took && "the recovery misjudged whether the interrupted CAS took effect");
		if (!took)
			assert(cw_value(w) == (a == 0 ? 1 : 5));
	}
	return 0;
}
