/*
 * GenMC model of Redo-PTM's circular log arena read by a replaying thread (a seqlock on the
 * arena's write position).
 *
 * Models:
 *   impl/perdure-ptm/src/redo/state.rs, `LogArena::write` (the position raised with a Relaxed
 *     store, then fence(Release), then the entry's three words with Relaxed stores),
 *     `LogArena::read` (three Relaxed loads) and `LogArena::still_holds` (fence(Acquire), then
 *     the position with a Relaxed load, compared with start + capacity);
 *   impl/perdure-ptm/src/redo/update.rs, `attempt_update`'s publication of the log before the
 *     cur_comb CAS (`log_len` stored Release) and `replay` (`log_len` loaded Acquire, the entries
 *     read, then `still_holds`; a log that no longer holds makes replay fail and the replica is
 *     copied instead).
 *
 * Client (2 threads, an arena of capacity 1):
 *   owner     writes entry E1 at position 0 and publishes a log [0, 1) (log_len = 1); then its
 *             next transaction, in another State of the same thread, writes E2 at position 1,
 *             which laps position 0's slot;
 *   replayer  reads log_len; if the log is published, reads position 0 and checks still_holds.
 * DEEP (DEPTH=deep): capacity 2 and a log of two entries, lapped by two more.
 *
 * Invariant: when still_holds says the log is intact, every word the replayer read is E1's
 * (never E2's, never the slot's initial zeros).
 *
 * Mutants (violation where `violates=` says, pass elsewhere):
 *   MUTANT_NO_ACQUIRE_FENCE   still_holds without its fence: the position load may miss the lap
 *                             whose words the entry loads saw (RC11, IMM; TSO keeps loads in order).
 *   MUTANT_POSITION_AFTER_ENTRY  write raises the position after storing the entry: a replayer
 *                             can read a half-lapped entry before the position says so (every model).
 *   MUTANT_LOG_LEN_RELAXED    the log published with a Relaxed store: the replayer may read the
 *                             slot's words from before E1 (RC11, IMM).
 *
 * genmc-row: redo-log-arena
 * genmc-row: redo-log-arena-mutant-no-acquire-fence -DMUTANT_NO_ACQUIRE_FENCE violates=rc11,imm
 * genmc-row: redo-log-arena-mutant-position-after-entry -DMUTANT_POSITION_AFTER_ENTRY violates=rc11,imm,tso
 * genmc-row: redo-log-arena-mutant-log-len-relaxed -DMUTANT_LOG_LEN_RELAXED violates=rc11,imm
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define ACQ memory_order_acquire
#define REL memory_order_release
#define RLX memory_order_relaxed

#ifdef DEEP
#define CAP 2
#else
#define CAP 1
#endif
#define LOG_LEN CAP   /* the published log fills the arena; the next transaction laps all of it */

atomic_ulong entries[CAP][3];   /* [offset, old, new] */
atomic_ulong written;           /* the position after the last entry written */
atomic_ulong log_len;           /* State::log_len of the published log (log_start is 0) */

/* state.rs: LogArena::write */
void arena_write(uint64_t pos, uint64_t off, uint64_t old, uint64_t new)
{
#ifndef MUTANT_POSITION_AFTER_ENTRY
	atomic_store_explicit(&written, pos + 1, RLX); /* rust: write store Relaxed */
	atomic_thread_fence(REL);                      /* rust: write fence Release */
#endif
	atomic_ulong *s = entries[pos % CAP];
	atomic_store_explicit(&s[0], off, RLX); /* rust: write store Relaxed */
	atomic_store_explicit(&s[1], old, RLX); /* rust: write store Relaxed */
	atomic_store_explicit(&s[2], new, RLX); /* rust: write store Relaxed */
#ifdef MUTANT_POSITION_AFTER_ENTRY
	atomic_store_explicit(&written, pos + 1, RLX);
	atomic_thread_fence(REL);
#endif
}

/* state.rs: LogArena::still_holds */
bool still_holds(uint64_t start, uint64_t len)
{
#ifndef MUTANT_NO_ACQUIRE_FENCE
	atomic_thread_fence(ACQ); /* rust: still_holds fence Acquire */
#endif
	uint64_t w = atomic_load_explicit(&written, RLX); /* rust: still_holds load Relaxed */
	return len <= CAP && w <= start + CAP;
}

/* The entry written at position p by the first transaction (E1) and by the lapping one (E2). */
static uint64_t e1(uint64_t p, int w) { return 100 + 10 * p + w; }
static uint64_t e2(uint64_t p, int w) { return 200 + 10 * p + w; }

void *owner(void *arg)
{
	for (uint64_t p = 0; p < LOG_LEN; p++)
		arena_write(p, e1(p, 0), e1(p, 1), e1(p, 2));
#ifdef MUTANT_LOG_LEN_RELAXED
	atomic_store_explicit(&log_len, LOG_LEN, RLX);
#else
	atomic_store_explicit(&log_len, LOG_LEN, REL); /* rust: attempt_update store Release */
#endif
	for (uint64_t p = LOG_LEN; p < 2 * LOG_LEN; p++)
		arena_write(p, e2(p - LOG_LEN, 0), e2(p - LOG_LEN, 1), e2(p - LOG_LEN, 2));
	return NULL;
}

void *replayer(void *arg)
{
	uint64_t len = atomic_load_explicit(&log_len, ACQ); /* rust: replay load Acquire */
	if (len == 0)
		return NULL; /* not published yet */
	uint64_t got[LOG_LEN][3];
	for (uint64_t p = 0; p < len; p++)
		for (int w = 0; w < 3; w++)
			got[p][w] = atomic_load_explicit(&entries[p % CAP][w], RLX); /* rust: read load Relaxed */
	if (!still_holds(0, len))
		return NULL; /* lapped: replay fails, the replica is copied */
	for (uint64_t p = 0; p < len; p++)
		for (int w = 0; w < 3; w++)
			assert(got[p][w] == e1(p, w) && "replay applied a word the published log never held");
	return NULL;
}

int main(void)
{
	pthread_t o, r;
	pthread_create(&o, NULL, owner, NULL);
	pthread_create(&r, NULL, replayer, NULL);
	pthread_join(o, NULL);
	pthread_join(r, NULL);
	return 0;
}
