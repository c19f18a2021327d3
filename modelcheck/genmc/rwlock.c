/*
 * GenMC model of the strong try reader-writer lock.
 *
 * Models: impl/perdure-ptm/src/rwlock.rs, `StrongTryRwLock` (the std build, i.e. not the loom one:
 * no reader fence, `shared_unlock` a Release store): shared_try_lock, shared_unlock, readers_empty,
 * abort_rollback, exclusive_try_lock, exclusive_unlock, downgrade, downgrade_unlock. Every
 * ordering below is the Rust code's; each atomic operation carries a `rust:` comment naming the
 * function it comes from.
 *
 * Client (CI bound, 3 threads, one read-indicator slot):
 *   writer      exclusive_try_lock; writes the data; exclusive_unlock
 *   downgrader  exclusive_try_lock; writes the data; downgrade; reads; downgrade_unlock
 *               (Redo-PTM's use: the replica stays read-only after the cur_comb CAS)
 *   reader      shared_try_lock; reads the data; shared_unlock
 * DEEP (DEPTH=deep): a second reader with its own slot (4 threads).
 *
 * Invariants:
 *   - mutual exclusion, counted on `occupancy` by read-modify-writes (whose modification order is
 *     total whatever the memory model): a writer enters only an empty lock; a reader never enters
 *     while a writer is inside;
 *   - the data are two plain (non-atomic) words a writer sets to the same value: a reader sees
 *     them equal, and GenMC reports any race on them, i.e. any writer access not ordered by
 *     happens-before with another thread's access (the lock must synchronise, not only exclude);
 *   - a lock whose every user has left ends NOLOCK or HLOCK, with every slot NOT_READING;
 *   - no spurious failure (the "strong" of strong trylock, as far as the client can tell): a
 *     reader fails only if a writer took the lock, both writers fail only if a reader took it;
 *   - the confirmation: a reader whose look saw a writer's WLOCK does not fail once that writer's
 *     departing scan is done (a ghost `scanned_seq`, SeqCst, not in the Rust code, records it):
 *     what keeps a reader from failing because of a writer that is already gone.
 *
 * Mutants (rows genmc:rwlock-mutant-*, each must be reported as a violation):
 *   MUTANT_NO_RESCAN        exclusive_try_lock skips its second scan of the read indicator after
 *                           announcing HLOCK: a reader that arrived between the writer's first
 *                           scan and its HLOCK enters beside the writer (every model, SC too).
 *   MUTANT_ARRIVAL_RELEASE  a reader's arrival is a Release store instead of a SeqCst swap: the
 *                           store-buffering shape of the Dekker handshake (the writer's scan
 *                           misses the arrival, the reader's look misses the HLOCK) comes back.
 *   MUTANT_CANCEL_FAILS     a reader that cancels a writer's HLOCK leaves and fails instead of
 *                           holding: a failure no writer caused (the strong-try assertions).
 *   MUTANT_UNLOCK_WEAK_SCAN the departing writer's fence AcqRel and its confirming scan Acquire
 *                           (its RLOCK swap stays SeqCst): the scan can miss a reader whose look
 *                           saw WLOCK, which then fails after the writer confirmed the arrivals
 *                           (RC11, IMM; under TSO the swap is a full fence and it passes).
 *
 * Ordering mutants (tools/genmc-weaken.py): 3 of 26 caught one at a time (the reader's arrival
 * swap, its look at the writer word, shared_unlock's Release). The writer's side is doubly
 * sequentially consistent (SeqCst CAS and scan loads, and a SeqCst fence between them), so each
 * single weakening survives; weakening both the fence and the scan loads is caught. The unlocks'
 * SeqCst protect the confirmation (1 -> 2) of a reader that arrived during WLOCK; each survives
 * alone (the swap, fence and scan are SeqCst three times over), the fence and the scan weakened
 * together are caught by the confirmation assertion (MUTANT_UNLOCK_WEAK_SCAN).
 *
 * genmc-row: rwlock
 * genmc-row: rwlock-mutant-no-rescan -DMUTANT_NO_RESCAN violates=rc11,imm,tso
 * genmc-row: rwlock-mutant-arrival-release -DMUTANT_ARRIVAL_RELEASE violates=rc11,imm,tso
 * genmc-row: rwlock-mutant-cancel-fails -DMUTANT_CANCEL_FAILS violates=rc11,imm,tso
 * genmc-row: rwlock-mutant-unlock-weak-scan -DMUTANT_UNLOCK_WEAK_SCAN violates=rc11,imm
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define SC memory_order_seq_cst
#define REL memory_order_release
#define RLX memory_order_relaxed

#define NOLOCK 0UL
#define HLOCK 1UL
#define RLOCK 2UL
#define WLOCK 3UL
#define NOT_READING 0UL
#define READING 1UL

#ifdef DEEP
#define READERS 2
#else
#define READERS 1
#endif

static inline uint64_t pack(uint64_t seq, uint64_t state) { return (seq << 2) | state; }
static inline uint64_t seq_of(uint64_t w) { return w >> 2; }
static inline uint64_t state_of(uint64_t w) { return w & 3; }

atomic_ulong wstate;             /* pack(0, NOLOCK) */
atomic_ulong readers[READERS];   /* NOT_READING */
/* Ghost (not in the Rust code): the seq of the last writer whose departing abort_rollback has
 * scanned the read indicator (writers hold WLOCK one after another, with increasing seqs). */
atomic_ulong scanned_seq;

/* ---- the lock (rwlock.rs) ---- */

bool shared_try_lock(int tid)
{
	if (state_of(atomic_load_explicit(&wstate, SC)) == WLOCK) /* rust: shared_try_lock load SeqCst */
		return false;
#ifdef MUTANT_ARRIVAL_RELEASE
	atomic_store_explicit(&readers[tid], READING, REL);
#else
	atomic_exchange_explicit(&readers[tid], READING, SC); /* rust: shared_try_lock swap SeqCst */
#endif
	uint64_t ws = atomic_load_explicit(&wstate, SC); /* rust: shared_try_lock load SeqCst */
	if (state_of(ws) == HLOCK) {
		uint64_t expect = ws;
		/* rust: shared_try_lock compare_exchange SeqCst SeqCst */
		if (atomic_compare_exchange_strong_explicit(&wstate, &expect, pack(seq_of(ws), NOLOCK), SC, SC)) {
#ifdef MUTANT_CANCEL_FAILS
			atomic_store_explicit(&readers[tid], NOT_READING, REL);
			return false;
#endif
			return true;
		}
		ws = expect;
	}
	if (state_of(ws) != WLOCK)
		return true;
	/* If the writer whose WLOCK the look saw has finished its confirming scan before this
	 * rollback, the scan saw this arrival (which came before that look): the reader must hold. */
	bool gone = atomic_load_explicit(&scanned_seq, SC) >= seq_of(ws);
	bool held = atomic_fetch_sub_explicit(&readers[tid], 1, SC) != READING; /* rust: shared_try_lock fetch_sub SeqCst */
	assert((!gone || held) && "a reader failed because of a writer that had confirmed the arrivals");
	return held;
}

void shared_unlock(int tid)
{
	atomic_store_explicit(&readers[tid], NOT_READING, REL); /* rust: shared_unlock store Release */
}

bool readers_empty(void)
{
	for (int i = 0; i < READERS; i++)
		if (atomic_load_explicit(&readers[i], SC) != NOT_READING) /* rust: readers_empty load SeqCst */
			return false;
	return true;
}

void abort_rollback(void)
{
	for (int i = 0; i < READERS; i++) {
#ifdef MUTANT_UNLOCK_WEAK_SCAN
		if (atomic_load_explicit(&readers[i], memory_order_acquire) == READING) {
#else
		if (atomic_load_explicit(&readers[i], SC) == READING) { /* rust: abort_rollback load SeqCst */
#endif
			uint64_t expect = READING;
			/* rust: abort_rollback compare_exchange SeqCst SeqCst */
			atomic_compare_exchange_strong_explicit(&readers[i], &expect, READING + 1, SC, SC);
		}
	}
}

bool exclusive_try_lock(void)
{
	uint64_t ws = atomic_load_explicit(&wstate, SC); /* rust: exclusive_try_lock load SeqCst */
	uint64_t st = state_of(ws);
	if (st == WLOCK || st == RLOCK)
		return false;
	if (!readers_empty())
		return false;
	uint64_t next = pack(seq_of(ws) + 1, HLOCK);
	uint64_t expect = ws;
	/* rust: exclusive_try_lock compare_exchange SeqCst SeqCst */
	if (!atomic_compare_exchange_strong_explicit(&wstate, &expect, next, SC, SC))
		return false;
	atomic_thread_fence(SC); /* rust: exclusive_try_lock fence SeqCst */
#ifndef MUTANT_NO_RESCAN
	if (!readers_empty())
		return false;
#endif
	expect = next;
	/* rust: exclusive_try_lock compare_exchange SeqCst SeqCst */
	return atomic_compare_exchange_strong_explicit(&wstate, &expect, pack(seq_of(next), WLOCK), SC, SC);
}

void exclusive_unlock(void)
{
	uint64_t seq = seq_of(atomic_load_explicit(&wstate, SC)); /* rust: exclusive_unlock load SeqCst */
	atomic_exchange_explicit(&wstate, pack(seq, RLOCK), SC);  /* rust: exclusive_unlock swap SeqCst */
#ifdef MUTANT_UNLOCK_WEAK_SCAN
	atomic_thread_fence(memory_order_acq_rel);
#else
	atomic_thread_fence(SC);                                  /* rust: exclusive_unlock fence SeqCst */
#endif
	abort_rollback();
	atomic_store_explicit(&scanned_seq, seq, SC); /* ghost */
	atomic_exchange_explicit(&wstate, pack(seq, NOLOCK), SC); /* rust: exclusive_unlock swap SeqCst */
}

void downgrade(void)
{
	uint64_t seq = seq_of(atomic_load_explicit(&wstate, SC)); /* rust: downgrade load SeqCst */
	atomic_exchange_explicit(&wstate, pack(seq, RLOCK), SC);  /* rust: downgrade swap SeqCst */
#ifdef MUTANT_UNLOCK_WEAK_SCAN
	atomic_thread_fence(memory_order_acq_rel);
#else
	atomic_thread_fence(SC);                                  /* rust: downgrade fence SeqCst */
#endif
	abort_rollback();
	atomic_store_explicit(&scanned_seq, seq, SC); /* ghost */
}

void downgrade_unlock(void)
{
	uint64_t ws = atomic_load_explicit(&wstate, SC); /* rust: downgrade_unlock load SeqCst */
	assert(state_of(ws) == RLOCK);
	atomic_exchange_explicit(&wstate, pack(seq_of(ws), NOLOCK), SC); /* rust: downgrade_unlock swap SeqCst */
}

/* ---- the client ---- */

#define WRITER 0x100UL          /* one writer inside; the low bits count readers */
atomic_ulong occupancy;
int data_a, data_b;             /* plain words: GenMC reports races on them */
bool writer_got, downgrader_got, reader_got[READERS];   /* each written by its thread, read after join */

static void writer_enter(void)
{
	uint64_t before = atomic_fetch_add_explicit(&occupancy, WRITER, RLX);
	assert(before == 0 && "a writer entered a lock someone holds");
}

static void writer_leave(void) { atomic_fetch_sub_explicit(&occupancy, WRITER, RLX); }

static void reader_enter(void)
{
	uint64_t before = atomic_fetch_add_explicit(&occupancy, 1, RLX);
	assert((before & WRITER) == 0 && "a reader entered beside a writer");
}

static void reader_leave(void) { atomic_fetch_sub_explicit(&occupancy, 1, RLX); }

static void read_data(void)
{
	int a = data_a, b = data_b;
	assert(a == b && "a reader saw a half-written update");
}

void *writer(void *arg)
{
	if ((writer_got = exclusive_try_lock())) {
		writer_enter();
		data_a = 1;
		data_b = 1;
		writer_leave();
		exclusive_unlock();
	}
	return NULL;
}

void *downgrader(void *arg)
{
	if ((downgrader_got = exclusive_try_lock())) {
		writer_enter();
		data_a = 2;
		data_b = 2;
		/* WLOCK -> RLOCK: stays inside as a reader of its own update */
		atomic_fetch_add_explicit(&occupancy, 1 - WRITER, RLX);
		downgrade();
		read_data();
		reader_leave();
		downgrade_unlock();
	}
	return NULL;
}

void *reader(void *arg)
{
	int tid = (int)(intptr_t)arg;
	if ((reader_got[tid] = shared_try_lock(tid))) {
		reader_enter();
		read_data();
		reader_leave();
		shared_unlock(tid);
	}
	return NULL;
}

int main(void)
{
	pthread_t w, d, r[READERS];
	pthread_create(&w, NULL, writer, NULL);
	pthread_create(&d, NULL, downgrader, NULL);
	for (int i = 0; i < READERS; i++)
		pthread_create(&r[i], NULL, reader, (void *)(intptr_t)i);
	pthread_join(w, NULL);
	pthread_join(d, NULL);
	for (int i = 0; i < READERS; i++)
		pthread_join(r[i], NULL);
	/* Everyone left: the lock is free (a writer that gave up may leave HLOCK) and no slot reads. */
	uint64_t st = state_of(atomic_load_explicit(&wstate, SC));
	assert((st == NOLOCK || st == HLOCK) && "the lock is held after every user left");
	for (int i = 0; i < READERS; i++)
		assert(atomic_load_explicit(&readers[i], SC) == NOT_READING && "a slot still reads");
	assert(atomic_load_explicit(&occupancy, RLX) == 0);
	/* Strong tries: a reader fails only because a writer held the lock; both writers fail only
	 * because a reader was inside (it cancelled an HLOCK or was in the indicator), since without
	 * readers the last writer to renew HLOCK takes the lock. */
	bool some_reader = false;
	for (int i = 0; i < READERS; i++) {
		assert((reader_got[i] || writer_got || downgrader_got) && "a reader failed spuriously");
		some_reader |= reader_got[i];
	}
	assert((writer_got || downgrader_got || some_reader) && "both writers failed spuriously");
	return 0;
}
